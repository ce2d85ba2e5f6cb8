// SPDX-License-Identifier: GPL-2.0
/*
 * Gen A (565-575): UVM external mappings of a BAR1 peer's memory.
 *
 * These drivers build a peer PTE with the PEER aperture, which GeForce
 * chips cannot use for BAR1 peers.  For a PTE build whose mapping GPU and
 * memory owner are a BAR1 pair in the ledger (and for nothing else: local
 * memory, system memory, NVLink peers are untouched), three hooks at
 * function boundaries give the PTE what 580+ give it natively:
 *
 *   nvGpuOpsBuildExternalAllocPtes   entry opens a scope for this task,
 *                                    return closes it
 *   nvGpuOpsGetExternalAllocAperture in scope: PEER becomes SYS_NONCOH, so
 *                                    the PTE carries that aperture, no peer
 *                                    index, and the sysmem address field
 *   kgmmuEncodePhysAddrs_IMPL        in scope, for that SYS_NONCOH: encoded
 *                                    as PEER with the owner's BAR1 DMA base
 *                                    as base, so each address becomes base
 *                                    + offset into the owner's VRAM
 *
 * The memory owner is the first field of MEMORY_DESCRIPTOR (pGpu) in every
 * tag from 550 to 595; it is only ever compared with the ledger's pointers,
 * never dereferenced, so a wrong reading can only leave the PTE as stock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>

#include "p2p-shim.h"

/* One PTE build in progress, per task. */
struct uvm_scope {
	struct task_struct *task;
	u64 base;		/* the owner's BAR1 as the mapping GPU reaches it */
	bool aperture_changed;	/* PEER was turned into SYS_NONCOH */
};

#define NR_SCOPES 16		/* concurrent builds; beyond that, stock PTEs */
static struct uvm_scope scopes[NR_SCOPES];
static DEFINE_SPINLOCK(scopes_lock);

static struct uvm_scope *scope_of(struct task_struct *task)
{
	int i;

	lockdep_assert_held(&scopes_lock);
	for (i = 0; i < NR_SCOPES; i++)
		if (scopes[i].task == task)
			return &scopes[i];
	return NULL;
}

/* Saved by the scope's entry handler for its return handler. */
struct scope_call {
	bool opened;
};
static_assert(sizeof(struct scope_call) <= P2PS_RET_DATA_SIZE);

void p2ps_uvm_scope_entry(void *data, struct pt_regs *regs)
{
	struct OBJGPU *mapper = (struct OBJGPU *)regs_get_kernel_argument(regs, 1);
	void *memdesc = (void *)regs_get_kernel_argument(regs, 2);
	struct scope_call *c = data;
	struct OBJGPU *owner;
	struct uvm_scope *sc;
	unsigned long flags;
	u64 base;

	c->opened = false;
	if (!memdesc || copy_from_kernel_nofault(&owner, memdesc, sizeof(owner)))
		return;
	if (!owner || owner == mapper || !p2ps_ledger_bar1_base(mapper, owner, &base))
		return;
	spin_lock_irqsave(&scopes_lock, flags);
	sc = scope_of(current) ?: scope_of(NULL);
	if (sc) {
		sc->task = current;
		sc->base = base;
		sc->aperture_changed = false;
		c->opened = true;
	}
	spin_unlock_irqrestore(&scopes_lock, flags);
}

void p2ps_uvm_scope_return(void *data, struct pt_regs *regs)
{
	struct scope_call *c = data;
	struct uvm_scope *sc;
	unsigned long flags;

	if (!c->opened)
		return;
	spin_lock_irqsave(&scopes_lock, flags);
	sc = scope_of(current);
	if (sc)
		sc->task = NULL;
	spin_unlock_irqrestore(&scopes_lock, flags);
}

void p2ps_uvm_aperture_return(void *data, struct pt_regs *regs)
{
	struct uvm_scope *sc;
	unsigned long flags;

	if (regs_return_value(regs) != GMMU_APERTURE_PEER)
		return;
	spin_lock_irqsave(&scopes_lock, flags);
	sc = scope_of(current);
	if (sc) {
		regs_set_return_value(regs, GMMU_APERTURE_SYS_NONCOH);
		sc->aperture_changed = true;
	}
	spin_unlock_irqrestore(&scopes_lock, flags);
}

/*
 * kgmmuEncodePhysAddrs_IMPL(pKernelGmmu, aperture, pAddresses,
 * fabricBaseAddress, count): the PEER path adds the fabric base to every
 * address, which is exactly base + offset.
 */
void p2ps_uvm_encode(struct pt_regs *regs)
{
	struct uvm_scope *sc;
	unsigned long flags;

	if (regs_get_kernel_argument(regs, 1) != GMMU_APERTURE_SYS_NONCOH)
		return;
	spin_lock_irqsave(&scopes_lock, flags);
	sc = scope_of(current);
	if (sc && sc->aperture_changed) {
		regs->si = GMMU_APERTURE_PEER;	/* 2nd argument */
		regs->cx = sc->base;		/* 4th argument */
	}
	spin_unlock_irqrestore(&scopes_lock, flags);
}

/* At arming and disarming: no scope outlives the hooks. */
void p2ps_uvm_reset(void)
{
	unsigned long flags;

	spin_lock_irqsave(&scopes_lock, flags);
	memset(scopes, 0, sizeof(scopes));
	spin_unlock_irqrestore(&scopes_lock, flags);
}
