// SPDX-License-Identifier: GPL-2.0
/*
 * The PCI functions p2p-shim may be asked about, by address, and what the
 * caps guard needs of the one at a GPU's address: its vendor and device
 * ID, the Intel I/O hub and the PCIe switch above it (static_bar1.c keeps
 * them in the GPU's record at its attach).
 *
 * The attach (gpus.c settle(), with gpus_lock held, interrupts off) may
 * not look a function up in the kernel's lists: pci_get_*() take and drop
 * references, and the drop may be the last one.  Before, a work item did
 * the lookup after the attach, and until it ran the GPU had no PCI ID: a
 * caps query in that window (a CUDA process starting as the GPUs
 * initialise, which keeps the answer for its life) got the stock "no P2P"
 * (issue 41).  But the function exists before the attach: nvidia's PCI
 * probe, which precedes it, needs it.  So the functions are gathered in
 * process context: at load, every function 0 (the attach names a slot),
 * each held by a reference; then a bus notifier adds those that arrive
 * and drops those that leave, before they go.  The attach only reads the
 * table and the referenced pci_dev and its upstream bridges (each pci_dev
 * holds its bus, each bus its bridge), under this file's lock.
 *
 * The IDs are read at the lookup, not copied at load: the test VM's
 * stand-in gives QEMU's functions its GPUs' IDs after load.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/list.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include <p2p-shim/readrule.h>
#include <p2p-shim/sb1rule.h>

#include "faults.h"
#include "nmi.h"
#include "pcifns.h"

struct pcifn {
	struct list_head node;
	u64 dbd;		/* as GPUATTACHARG names it: domain 63:32, bus 15:8, slot 7:0 */
	struct pci_dev *pdev;	/* a reference, dropped when it leaves the table */
};

static LIST_HEAD(pcifns);	/* newest first */
static DEFINE_SPINLOCK(pcifns_lock);	/* the list; taken inside gpus_lock */

static u64 dbd_of(struct pci_dev *pdev)
{
	return (u64)pci_domain_nr(pdev->bus) << 32 | pdev->bus->number << 8 |
	       PCI_SLOT(pdev->devfn);
}

/* @pdev's entry, or NULL; pcifns_lock held. */
static struct pcifn *find(struct pci_dev *pdev)
{
	struct pcifn *f;

	list_for_each_entry(f, &pcifns, node)
		if (f->pdev == pdev)
			return f;
	return NULL;
}

static void add(struct pci_dev *pdev)
{
	unsigned long flags;
	struct pcifn *f;

	/* a GPU is function 0; nvidia attaches no virtual function on the host */
	if (PCI_FUNC(pdev->devfn) || pdev->is_virtfn)
		return;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f) {
		pr_warn("out of memory: PCI function %s unknown to p2p-shim, so a GPU there gets no P2P\n",
			pci_name(pdev));
		return;
	}
	f->dbd = dbd_of(pdev);
	f->pdev = pci_dev_get(pdev);
	p2ps_lock(&pcifns_lock, flags);
	if (find(pdev)) {
		spin_unlock_irqrestore(&pcifns_lock, flags);
		pci_dev_put(f->pdev);
		kfree(f);
		return;
	}
	/* First: a function that replaced one at this address is found before it. */
	list_add(&f->node, &pcifns);
	spin_unlock_irqrestore(&pcifns_lock, flags);
}

static void del(struct pci_dev *pdev)
{
	unsigned long flags;
	struct pcifn *f;

	p2ps_lock(&pcifns_lock, flags);
	f = find(pdev);
	if (f)
		list_del(&f->node);
	spin_unlock_irqrestore(&pcifns_lock, flags);
	if (f) {
		pci_dev_put(f->pdev);
		kfree(f);
	}
}

static int pcifns_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);

	if (action == BUS_NOTIFY_ADD_DEVICE)
		add(pdev);
	else if (action == BUS_NOTIFY_DEL_DEVICE)
		del(pdev);
	return NOTIFY_DONE;
}

static struct notifier_block pcifns_nb = {
	.notifier_call = pcifns_notify,
};

/*
 * Module load: the functions there now, and from now on those that come
 * and go.  The rescan lock (which hotplug and sysfs rescan and remove
 * take) keeps physical functions from coming or going between the
 * notifier and the walk; virtual functions, added and removed without it
 * on most kernels, are not kept (add()).
 */
int p2ps_pcifns_start(void)
{
	struct pci_dev *pdev = NULL;
	int ret;

	pci_lock_rescan_remove();
	ret = bus_register_notifier(&pci_bus_type, &pcifns_nb);
	if (!ret)
		for_each_pci_dev(pdev)
			add(pdev);
	pci_unlock_rescan_remove();
	return ret;
}

/* Module exit, with no hook left: the notifier goes before the table. */
void p2ps_pcifns_stop(void)
{
	struct pcifn *f, *next;

	bus_unregister_notifier(&pci_bus_type, &pcifns_nb);
	list_for_each_entry_safe(f, next, &pcifns, node) {
		list_del(&f->node);
		pci_dev_put(f->pdev);
		kfree(f);
	}
}

/*
 * The Intel I/O hub above @pdev (sb1rule.c's p2ps_intel_ioh_root_port()):
 * its root port's bus, plus one; 0 if none.
 */
static u64 ioh_of(struct pci_dev *pdev)
{
	struct pci_dev *rp;

	for (rp = pci_upstream_bridge(pdev); rp; rp = pci_upstream_bridge(rp))
		if (pci_is_pcie(rp) && pci_pcie_type(rp) == PCI_EXP_TYPE_ROOT_PORT)
			break;
	if (rp && rp->vendor == PCI_VENDOR_ID_INTEL && p2ps_intel_ioh_root_port(rp->device))
		return ((u64)pci_domain_nr(rp->bus) << 8 | rp->bus->number) + 1;
	return 0;
}

/*
 * The PCIe switch right above @pdev, as the driver's read rule asks for a
 * common one: the upstream port above the GPU's nearest switch downstream
 * port, plus one; 0 if none, or one the driver does not know
 * (readrule.c).  Nested switches: only the nearest counts (the driver
 * looks further up; such GPUs are refused here, which is safe).
 */
static u64 switch_of(struct pci_dev *pdev)
{
	struct pci_dev *br, *up;

	for (br = pci_upstream_bridge(pdev); br; br = pci_upstream_bridge(br)) {
		if (!pci_is_pcie(br) || pci_pcie_type(br) == PCI_EXP_TYPE_ROOT_PORT)
			break;
		if (pci_pcie_type(br) != PCI_EXP_TYPE_DOWNSTREAM)
			continue;
		up = pci_upstream_bridge(br);
		if (up && pci_is_pcie(up) && pci_pcie_type(up) == PCI_EXP_TYPE_UPSTREAM &&
		    (p2ps_pcie_switch_known(up->vendor, up->device) ||
		     p2ps_fault(P2PS_FAULT_ANY_SWITCH, 0)))
			return ((u64)pci_domain_nr(up->bus) << 16 | up->bus->number << 8 | up->devfn) + 1;
		break;
	}
	return 0;
}

/*
 * What the caps guard needs of the function at @dbd (function 0), into
 * @out; false, @out zeroed, if there is none.  Only loads, under a
 * spinlock: callable from the attach with gpus_lock held.
 */
bool p2ps_pcifn_facts(u64 dbd, struct p2ps_pcifn_facts *out)
{
	unsigned long flags;
	struct pcifn *f;
	bool found = false;

	*out = (struct p2ps_pcifn_facts){};
	p2ps_lock(&pcifns_lock, flags);
	list_for_each_entry(f, &pcifns, node) {
		if (f->dbd != dbd)
			continue;
		out->pci_id = (u32)f->pdev->vendor << 16 | f->pdev->device;
		out->ioh = ioh_of(f->pdev);
		out->sw = switch_of(f->pdev);
		found = true;
		break;
	}
	spin_unlock_irqrestore(&pcifns_lock, flags);
	return found;
}
