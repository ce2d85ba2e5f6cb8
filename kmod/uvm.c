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
 *                                    index, and the sysmem address field;
 *                                    a default caching request becomes
 *                                    uncached (see below)
 *   kgmmuEncodePhysAddrs_IMPL        in scope, for that SYS_NONCOH: encoded
 *                                    as PEER with the owner's BAR1 DMA base
 *                                    as base, so each address becomes base
 *                                    + offset into the owner's VRAM
 *
 * The memory owner is the first field of MEMORY_DESCRIPTOR (pGpu) in every
 * tag from 550 to 595; it is only ever compared with the ledger's pointers,
 * never dereferenced, so a wrong reading can only leave the PTE as stock.
 *
 * Caching: the driver decides the PTE's volatile bit after the aperture,
 * from the peer cache attribute (uncached by default) for PEER but from
 * the memory's own (cached, for vidmem) for anything else, so SYS_NONCOH
 * would let the mapping GPU cache its peer's memory in L2: stale reads,
 * hung cross-GPU flag polling.  580+ use the peer attribute for BAR1 peers
 * natively.  In scope, a default caching request (cachingType, the first
 * field of UvmGpuExternalMappingInfo in every tag from 550 to 595) becomes
 * ForceUncached, which is what the peer attribute says unless an
 * allocation asked for cached peer access (a cost in speed, never in
 * correctness); it is put back when the scope closes.  Only when PEER
 * actually became SYS_NONCOH: a peer's system memory also opens a scope
 * (its owner is a peer) but keeps its aperture and caching.
 *
 * BAR1 pairs: those our wrappers created (the chips whose BAR1 P2P slots
 * are stubs) and those the driver created itself with its own _GH100
 * slots (GB20x from 570.86.15, GB10x, Hopper; g_kern_bus_nvoc.c) while one
 * of their GPUs carries our ForceP2P: without it, such a pair would not
 * have BAR1 P2P (GeForce) or would not be BAR1 (RMForceP2PType).  Return
 * probes on kbus{Create,Remove}P2PMappingForBar1P2P_GH100 see those; a
 * call that comes from our wrappers (its return address is in this
 * module) is the wrappers' to record.  580+ give Blackwell BAR1 peers
 * SYS_COH (platform atomics); these drivers report no BAR1 atomics, and
 * SYS_NONCOH carries reads and writes, so one aperture serves every chip.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>

#include "gpus.h"
#include "hook.h"
#include "ledger.h"
#include "nv.h"
#include "policy.h"
#include "scopes.h"

/*
 * One PTE build in progress, per task (a per-task scope, scopes.c).  Its
 * entry handler (NMI context) claims a slot and fills it; from then on
 * only that task touches the slot, until the build's return handler frees
 * it: the aperture's return handler (process context) looks the pair up
 * in the ledger, the encoder's pre-handler (NMI context) reads the slot.
 * No lock.
 */
struct uvm_scope {
	struct OBJGPU *mapper, *owner;
	u64 base;		/* the owner's BAR1 as the mapping GPU reaches it */
	u32 *caching;		/* the build's cachingType */
	bool aperture_seen;	/* the aperture hook ran in this scope */
	bool aperture_changed;	/* PEER was turned into SYS_NONCOH */
	bool caching_forced;	/* *caching was Default, is ForceUncached */
};

#define NR_SCOPES 16		/* concurrent builds; beyond that, stock PTEs */
P2PS_SCOPES(builds, NR_SCOPES);
static struct uvm_scope scopes[NR_SCOPES];

/* This task's scope, or NULL. */
static struct uvm_scope *my_scope(void)
{
	int i = p2ps_scope_find(&builds);

	return i < 0 ? NULL : &scopes[i];
}

/* UvmGpuCachingType (nv_uvm_types.h) */
#define UVM_CACHING_DEFAULT		0
#define UVM_CACHING_FORCE_UNCACHED	1

/* Saved by the scope's entry handler for its return handler. */
struct scope_call {
	int slot;		/* the slot claimed, or -1 */
	bool no_slot;		/* a peer build found every scope taken */
	struct OBJGPU *mapper, *owner;	/* ...for its return to judge */
};
static_assert(sizeof(struct scope_call) <= P2PS_RET_DATA_SIZE);

/*
 * nvGpuOpsBuildExternalAllocPtes(pVAS, pMappingGpu, pMemDesc, pMemory,
 * offset, size, isIndirectPeerSupported, isPeerSupported, peerId,
 * pGpuExternalMappingInfo): 565-575.  The 10th argument is the 4th on the
 * stack, above the return address.
 */
static u32 *caching_of(struct pt_regs *regs)
{
	return (u32 *)regs_get_kernel_stack_nth(regs, 4);
}

/* In scope, PEER became SYS_NONCOH: a default caching request becomes uncached. */
static void force_uncached(struct uvm_scope *sc)
{
	u32 now;

	if (!sc->caching || copy_from_kernel_nofault(&now, sc->caching, sizeof(now)))
		return;
	if (now != UVM_CACHING_DEFAULT)
		return;
	WRITE_ONCE(*sc->caching, UVM_CACHING_FORCE_UNCACHED);
	sc->caching_forced = true;
}

/* NMI context: claims and fills a slot for a build of a peer's memory. */
static void p2ps_uvm_scope_entry(void *data, struct pt_regs *regs)
{
	struct OBJGPU *mapper = (struct OBJGPU *)regs_get_kernel_argument(regs, 1);
	void *memdesc = (void *)regs_get_kernel_argument(regs, 2);
	struct scope_call *c = data;
	struct uvm_scope *sc;
	struct OBJGPU *owner;

	c->slot = -1;
	c->no_slot = false;
	if (!memdesc || copy_from_kernel_nofault(&owner, memdesc, sizeof(owner)))
		return;
	if (!owner || owner == mapper)
		return;
	c->mapper = mapper;
	c->owner = owner;
	c->slot = p2ps_scope_claim(&builds);
	if (c->slot < 0) {
		c->no_slot = true;
		return;
	}
	sc = &scopes[c->slot];
	sc->mapper = mapper;
	sc->owner = owner;
	sc->base = 0;
	sc->caching = caching_of(regs);
	sc->aperture_seen = false;
	sc->aperture_changed = false;
	sc->caching_forced = false;
}

/*
 * Returns why a successful build of a BAR1 pair's PTEs kept the stock PEER
 * aperture, or NULL: the scope found no free slot (more concurrent builds
 * than NR_SCOPES), or the build never went through the aperture hook (the
 * compiler inlined that static function at this call site).  The caller
 * counts it where status shows it.
 */
static const char *p2ps_uvm_scope_return(void *data, struct pt_regs *regs)
{
	struct scope_call *c = data;
	struct uvm_scope *sc = c->slot < 0 ? NULL : &scopes[c->slot];
	bool ok = (u32)regs_return_value(regs) == NV_OK;
	bool missed;
	u64 base;

	if (c->no_slot) {
		if (!ok || !p2ps_ledger_bar1_base(c->mapper, c->owner, &base))
			return NULL;
		pr_warn_ratelimited("%d concurrent UVM PTE builds for BAR1 pairs: one got the stock PEER PTEs\n",
				    NR_SCOPES + 1);
		return "more concurrent builds than scopes";
	}
	if (!sc)
		return NULL;
	if (sc->caching_forced)
		WRITE_ONCE(*sc->caching, UVM_CACHING_DEFAULT);
	/* A BAR1 pair's build that never reached the aperture hook. */
	missed = ok && !sc->aperture_seen && p2ps_ledger_bar1_base(sc->mapper, sc->owner, &base);
	p2ps_scope_release(&builds, c->slot);
	if (!missed)
		return NULL;
	pr_warn_ratelimited("a UVM PTE build for a BAR1 pair bypassed nvGpuOpsGetExternalAllocAperture (inlined?): its PTEs are the stock PEER ones\n");
	return "bypassed the aperture hook (inlined?)";
}

/* In scope, process context: for a BAR1 pair of the ledger, PEER becomes SYS_NONCOH. */
static const char *p2ps_uvm_aperture_return(void *data, struct pt_regs *regs)
{
	struct uvm_scope *sc = my_scope();
	u64 base;

	if (!sc)
		return NULL;
	sc->aperture_seen = true;
	if ((u32)regs_return_value(regs) != GMMU_APERTURE_PEER ||
	    !p2ps_ledger_bar1_base(sc->mapper, sc->owner, &base))
		return NULL;
	regs_set_return_value(regs, GMMU_APERTURE_SYS_NONCOH);
	sc->base = base;
	/* Seen by this task's encoder pre-handler, after this store. */
	WRITE_ONCE(sc->aperture_changed, true);
	force_uncached(sc);
	return NULL;
}

/*
 * kgmmuEncodePhysAddrs_IMPL(pKernelGmmu, aperture, pAddresses,
 * fabricBaseAddress, count): the PEER path adds the fabric base to every
 * address, which is exactly base + offset.  NMI context: reads this task's
 * slot only.
 */
static void p2ps_uvm_encode(struct pt_regs *regs)
{
	struct uvm_scope *sc;

	if (regs_get_kernel_argument(regs, 1) != GMMU_APERTURE_SYS_NONCOH)
		return;
	sc = my_scope();
	if (sc && READ_ONCE(sc->aperture_changed)) {
		regs->si = GMMU_APERTURE_PEER;	/* 2nd argument */
		regs->cx = sc->base;		/* 4th argument */
	}
}

/*
 * kbus{Create,Remove}P2PMappingForBar1P2P_GH100(pGpu0, pKernelBus0, pGpu1,
 * pKernelBus1, attributes), 550 to 595.
 */
struct native_call {
	struct OBJGPU *g0, *g1;
	struct KernelBus *b0, *b1;
	bool ours;		/* called by our wrapper */
};
static_assert(sizeof(struct native_call) <= P2PS_RET_DATA_SIZE);

static void p2ps_uvm_native_entry(void *data, struct pt_regs *regs)
{
	struct native_call *c = data;

	c->g0 = (struct OBJGPU *)regs_get_kernel_argument(regs, 0);
	c->b0 = (struct KernelBus *)regs_get_kernel_argument(regs, 1);
	c->g1 = (struct OBJGPU *)regs_get_kernel_argument(regs, 2);
	c->b1 = (struct KernelBus *)regs_get_kernel_argument(regs, 3);
	/* At the entry the return address is still the caller's own. */
	c->ours = within_module(regs_get_kernel_stack_nth(regs, 0), THIS_MODULE);
}

/* Whether @gpu attached under our hooks and carries a forcing ForceP2P (ours or the user's). */
static bool forced(struct OBJGPU *gpu)
{
	u32 instance = p2ps_gpu_instance(gpu);

	return instance < NV_MAX_DEVICES && (p2ps_gpus_forced() & BIT(instance));
}

static void p2ps_uvm_native_return(void *data, struct pt_regs *regs, bool create)
{
	struct native_call *c = data;

	if (c->ours || (u32)regs_return_value(regs) != NV_OK || !c->g0 || !c->g1)
		return;
	if (!create) {
		p2ps_ledger_native_put(c->g0, c->g1);
	} else if (forced(c->g0) || forced(c->g1)) {
		p2ps_ledger_native_get(c->g0, c->b0, c->g1, c->b1);
	}
}

/*
 * At arming and disarming: no scope outlives the hooks, nor a native pair
 * whose teardown they would no longer see.
 */
static void uvm_reset(void)
{
	/* No hook of ours runs now. */
	p2ps_scope_reset(&builds);
	memset(scopes, 0, sizeof(scopes));
	p2ps_ledger_native_reset();
}

static const char *native_create_return(void *data, struct pt_regs *regs)
{
	p2ps_uvm_native_return(data, regs, true);
	return NULL;
}

static const char *native_remove_return(void *data, struct pt_regs *regs)
{
	p2ps_uvm_native_return(data, regs, false);
	return NULL;
}

static const struct p2ps_hook_ops uvm_scope_ops = {
	.entry = p2ps_uvm_scope_entry, .ret = p2ps_uvm_scope_return,
};
static const struct p2ps_hook_ops uvm_aperture_ops = { .ret = p2ps_uvm_aperture_return };
static const struct p2ps_hook_ops uvm_encode_ops = { .arg = p2ps_uvm_encode };
static const struct p2ps_hook_ops uvm_native_create_ops = {
	.entry = p2ps_uvm_native_entry, .ret = native_create_return,
};
static const struct p2ps_hook_ops uvm_native_remove_ops = {
	.entry = p2ps_uvm_native_entry, .ret = native_remove_return,
};

/* The profile's actions whose hooks are this file's (policy.c: p2ps_policies_ops()). */
static const struct p2ps_action_ops uvm_actions[] = {
	{ P2PS_ACT_UVM_SCOPE, &uvm_scope_ops },
	{ P2PS_ACT_UVM_APERTURE, &uvm_aperture_ops },
	{ P2PS_ACT_UVM_ENCODE, &uvm_encode_ops },
	{ P2PS_ACT_NATIVE_CREATE, &uvm_native_create_ops },
	{ P2PS_ACT_NATIVE_REMOVE, &uvm_native_remove_ops },
	{ P2PS_ACT_NONE, NULL },
};

const struct p2ps_policy p2ps_uvm_policy = {
	.name = "UVM external mappings",
	.actions = uvm_actions,
	.reset = uvm_reset,
};
