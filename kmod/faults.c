// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection for the test VM's fault build of p2p-shim (built with
 * P2PS_FAULTS=1 into faults/p2p-shim.ko; never part of the module users
 * get).  Debian's kernels have no failslab or error injection, and the
 * paths that handle an arming that fails part-way, or a removal that
 * cannot allocate, must still be driven by a test.
 */
#include <linux/moduleparam.h>

#include "faults.h"

static int fault_install = -1;
module_param(fault_install, int, 0644);
MODULE_PARM_DESC(fault_install, "Test build: fail installing the hook at this index of the next hook set (-1: none)");

static bool fault_remove_nomem;
module_param(fault_remove_nomem, bool, 0644);
MODULE_PARM_DESC(fault_remove_nomem, "Test build: hook removal cannot allocate its batch");

static bool fault_ledger_nomem;
module_param(fault_ledger_nomem, bool, 0644);
MODULE_PARM_DESC(fault_ledger_nomem, "Test build: the ledger cannot allocate its entries");

static bool fault_cpu_no_reads;
module_param(fault_cpu_no_reads, bool, 0644);
MODULE_PARM_DESC(fault_cpu_no_reads, "Test build: the CPU is one the driver's host rule gives no peer reads");

static bool fault_any_switch;
module_param(fault_any_switch, bool, 0644);
MODULE_PARM_DESC(fault_any_switch, "Test build: any PCIe switch counts as one the driver knows (QEMU has none it knows)");

static bool fault_unbound_wrapper;
module_param(fault_unbound_wrapper, bool, 0644);
MODULE_PARM_DESC(fault_unbound_wrapper, "Test build: the policies' wrappers are left unbound at arming (a bug of ours)");

/* At load only: the check at init (policy.c) must see it, and hook.c trusts that check. */
static int fault_unowned_action = -1;
module_param(fault_unowned_action, int, 0444);
MODULE_PARM_DESC(fault_unowned_action, "Test build: no policy owns this action (enum p2ps_action; -1: none)");

static unsigned int fault_pci_id[8];
module_param_array(fault_pci_id, uint, NULL, 0644);
MODULE_PARM_DESC(fault_pci_id, "Test build: GPU instance N's PCI vendor << 16 | device (0: the one read at its PCI address)");

/* The PCI ID GPU @instance is said to have, 0 if not faked. */
u32 p2ps_fault_pci_id(unsigned int instance)
{
	return instance < ARRAY_SIZE(fault_pci_id) ? READ_ONCE(fault_pci_id[instance]) : 0;
}

bool p2ps_fault(enum p2ps_fault f, unsigned int index)
{
	switch (f) {
	case P2PS_FAULT_ANY_SWITCH:
		return READ_ONCE(fault_any_switch);
	case P2PS_FAULT_CPU_NO_READS:
		return READ_ONCE(fault_cpu_no_reads);
	case P2PS_FAULT_LEDGER_NOMEM:
		return READ_ONCE(fault_ledger_nomem);
	case P2PS_FAULT_INSTALL:
		return READ_ONCE(fault_install) == (int)index;
	case P2PS_FAULT_REMOVE_NOMEM:
		return READ_ONCE(fault_remove_nomem);
	case P2PS_FAULT_UNBOUND_WRAPPER:
		return READ_ONCE(fault_unbound_wrapper);
	case P2PS_FAULT_UNOWNED_ACTION:
		return fault_unowned_action == (int)index;
	}
	return false;
}
