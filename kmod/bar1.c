// SPDX-License-Identifier: GPL-2.0
/*
 * What the hooks do for BAR1 P2P.
 *
 * Wrappers: a redirect whose profile entry has an action lands here, in a
 * function with exactly the target's signature, which calls the driver's
 * own implementation and records what it did (ledger, GPU table).
 *
 * Return overrides: registry defaults for osReadRegistryDword, and the caps
 * guard on p2pGetCapsStatus.  Which GPU carries which setting is kept in
 * gpus.c.
 *
 * Every driver function called from here is a HAL body the driver itself
 * reaches through its NVOC tables, so it keeps its ENDBR on IBT kernels;
 * p2ps_resolve() checks that before arming.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/wait.h>

#include "p2p-shim.h"

/*
 * The registry defaults apply to every GPU initialised while armed: the
 * registry is read before anything tells a GeForce chip from a Hopper one.
 * On a host that also has PCIe-only Hopper or datacenter Blackwell GPUs,
 * turn them off and give the GeForce GPUs the keys per device instead
 * (p2pctl config --registry writes NVreg_RegistryDwordsPerDevice).
 */
static bool use_registry_defaults = true;
module_param_named(registry_defaults, use_registry_defaults, bool, 0644);
MODULE_PARM_DESC(registry_defaults,
		 "Supply ForceP2P and RMPcieP2PType where the user set neither (default: yes)");

/* The driver's functions the wrappers call, bound at arming. */
static struct {
	NV_STATUS (*create)(struct OBJGPU *g0, struct KernelBus *b0,
			    struct OBJGPU *g1, struct KernelBus *b1, NvU32 attributes);
	NV_STATUS (*remove)(struct OBJGPU *g0, struct KernelBus *b0,
			    struct OBJGPU *g1, struct KernelBus *b1, NvU32 attributes);
	NV_STATUS (*dma_info)(struct OBJGPU *src, struct OBJGPU *peer,
			      struct KernelBus *peer_bus, NvU64 *addr, NvU64 *size);
	NV_STATUS (*dma_map)(struct OBJGPU *gpu, struct VirtMemAllocator *dma,
			     struct DMA_BAR1P2P_MAPPING_PRARAMS *params);
	void (*dma_unmap)(struct VirtMemAllocator *dma, struct CLI_DMA_MAPPING_INFO *info);
} nv;

/*
 * Wrappers still running.  A task redirected into a wrapper may be
 * preempted before it counts itself; synchronize_rcu_tasks() waits for
 * such tasks, after which the count covers them all.
 */
static atomic_t inflight = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(inflight_wq);

/*
 * While a disable decides, no new BAR1 mapping may appear: the wrappers
 * that create one answer as the stub would (NOT_SUPPORTED) meanwhile.
 */
static bool closing;

static void wrapper_enter(void)
{
	atomic_inc(&inflight);
	/* Pairs with the barrier in p2ps_bar1_close(): see closing, or be seen. */
	smp_mb__after_atomic();
}

static void wrapper_exit(void)
{
	if (atomic_dec_and_test(&inflight))
		wake_up_all(&inflight_wq);
}

/* Wrappers: each has the signature of the stub it replaces. */

static NV_STATUS wrap_create(struct OBJGPU *g0, struct KernelBus *b0,
			     struct OBJGPU *g1, struct KernelBus *b1, NvU32 attributes)
{
	NV_STATUS st;

	wrapper_enter();
	if (READ_ONCE(closing))
		st = NV_ERR_NOT_SUPPORTED;
	else
		st = nv.create(g0, b0, g1, b1, attributes);
	if (st == NV_OK)
		p2ps_ledger_pair_get(g0, b0, g1, b1);
	wrapper_exit();
	return st;
}

static NV_STATUS wrap_remove(struct OBJGPU *g0, struct KernelBus *b0,
			     struct OBJGPU *g1, struct KernelBus *b1, NvU32 attributes)
{
	NV_STATUS st;

	wrapper_enter();
	st = nv.remove(g0, b0, g1, b1, attributes);
	if (st == NV_OK)
		p2ps_ledger_pair_put(g0, g1);
	wrapper_exit();
	return st;
}

static NV_STATUS wrap_dma_map(struct OBJGPU *gpu, struct VirtMemAllocator *dma,
			      struct DMA_BAR1P2P_MAPPING_PRARAMS *params)
{
	NV_STATUS st;

	wrapper_enter();
	st = READ_ONCE(closing) ? NV_ERR_NOT_SUPPORTED : nv.dma_map(gpu, dma, params);
	if (st == NV_OK && params)
		p2ps_ledger_dma_get(params->pDmaMappingInfo, gpu, params->pPeerGpu);
	wrapper_exit();
	return st;
}

static void wrap_dma_unmap(struct VirtMemAllocator *dma, struct CLI_DMA_MAPPING_INFO *info)
{
	wrapper_enter();
	nv.dma_unmap(dma, info);
	p2ps_ledger_dma_put(info);
	wrapper_exit();
}

/* PCIE_BAR1 create/remove calls go to _GH100; every other type stays. */
bool p2ps_route_bar1(struct pt_regs *regs)
{
	/* attributes is the 7th argument: above the return address. */
	unsigned long attributes = regs_get_kernel_stack_nth(regs, 1);

	return (attributes & NV_P2PAPI_CONNECTION_TYPE_MASK) ==
	       NV_P2PAPI_CONNECTION_TYPE_PCIE_BAR1;
}

/* The profile whose registry defaults apply, bound at arming. */
static const struct p2ps_profile *bound_profile;

struct registry_call {
	struct OBJGPU *gpu;
	const char *key;
	NvU32 *data;
};

void p2ps_registry_return(void *data, struct pt_regs *regs)
{
	struct registry_call *c = data;
	const struct p2ps_registry_default *d = NULL, *r;
	bool force_p2p, supply;

	if (!c->gpu || !c->key || !c->data)
		return;
	for (r = bound_profile ? bound_profile->registry : NULL; r && r->key; r++)
		if (!strcmp(c->key, r->key))
			d = r;
	if (!d)
		return;
	/*
	 * ForceP2P only for a GPU whose attach we see: the caps guard must be
	 * able to tell which GPUs carry it.
	 */
	force_p2p = !strcmp(d->key, "ForceP2P");
	supply = regs_return_value(regs) != NV_OK && READ_ONCE(use_registry_defaults);
	if (force_p2p && !p2ps_gpu_bind(c->gpu))
		return;
	if (supply) {
		/* The user has not set it: supply ours. */
		*c->data = d->value;
		regs_set_return_value(regs, NV_OK);
	}
	if (force_p2p)
		p2ps_gpu_set_forced(c->gpu, supply);
}

/*
 * The caps guard.  With ForceP2P forced, a pair whose BAR1 route is not
 * available (no static BAR1: small BAR, or BAR1 smaller than VRAM) would
 * come back as PCIE_PROPRIETARY with reads and writes OK, and the driver
 * would then use mailbox P2P, which GeForce chips since Ampere no longer
 * have.  For such pairs, put back what the stock driver says: no P2P.  It
 * takes one forced GPU: the first GPU of a pair decides the override, and
 * its partner may be one initialised before arming (a display GPU, say).
 * On 565-570 the same override also reports PCIE_BAR1 for a pair without
 * static BAR1 on both GPUs (it is applied before the BAR1 HAL check); such
 * a pair fails to map later, so it gets the stock answer too.
 */
struct caps_call {
	NvU32 mask;
	u8 *write, *read, *atomics;
	u32 *connectivity;
};

static_assert(sizeof(struct registry_call) <= P2PS_RET_DATA_SIZE);
static_assert(sizeof(struct caps_call) <= P2PS_RET_DATA_SIZE);

/* The stock answer: no P2P. */
static void refuse(struct caps_call *c)
{
	*c->write = NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED;
	*c->read = NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED;
	if (c->atomics)
		*c->atomics = NV0000_P2P_CAPS_STATUS_NOT_SUPPORTED;
	*c->connectivity = P2P_CONNECTIVITY_UNKNOWN;
}

/*
 * Whether the bound profile watches static BAR1 (gen-a1, whose caps code
 * applies the override before the BAR1 HAL check).
 */
static bool watch_static_bar1;

void p2ps_caps_return(void *data, struct pt_regs *regs)
{
	struct caps_call *c = data;

	if (regs_return_value(regs) != NV_OK || !c->connectivity || !c->read || !c->write)
		return;
	switch (*c->connectivity) {
	case P2P_CONNECTIVITY_PCIE_PROPRIETARY:
		if (p2ps_gpus_forced_in(c->mask))
			refuse(c);
		break;
	case P2P_CONNECTIVITY_PCIE_BAR1:
		if (READ_ONCE(watch_static_bar1) && p2ps_gpus_forced_in(c->mask) &&
		    !p2ps_gpus_static_bar1(c->mask))
			refuse(c);
		break;
	}
}

void p2ps_registry_entry(void *data, struct pt_regs *regs)
{
	struct registry_call *c = data;

	c->gpu = (struct OBJGPU *)regs_get_kernel_argument(regs, 0);
	c->key = (const char *)regs_get_kernel_argument(regs, 1);
	c->data = (NvU32 *)regs_get_kernel_argument(regs, 2);
}

void p2ps_caps_entry(void *data, struct pt_regs *regs)
{
	struct caps_call *c = data;

	c->mask = regs_get_kernel_argument(regs, 0);
	p2ps_gpus_asked(c->mask);
	c->write = (u8 *)regs_get_kernel_argument(regs, 1);
	c->read = (u8 *)regs_get_kernel_argument(regs, 2);
	c->atomics = (u8 *)regs_get_kernel_argument(regs, 3);
	c->connectivity = (u32 *)regs_get_kernel_argument(regs, 4);
}

/* The driver's own BAR1 DMA info, for the ledger and the UVM fix. */
NV_STATUS p2ps_bar1_dma_info(struct OBJGPU *src, struct OBJGPU *peer,
			     struct KernelBus *peer_bus, NvU64 *base, NvU64 *size)
{
	return nv.dma_info ? nv.dma_info(src, peer, peer_bus, base, size) : NV_ERR_NOT_SUPPORTED;
}

/* Point the wrappers at the driver's functions and the hooks at the wrappers. */
int p2ps_bar1_bind(struct module *mod, const struct p2ps_profile *profile,
		   struct p2ps_hook *hooks, unsigned int n, struct p2ps_arm_error *err)
{
	static const struct {
		enum p2ps_action action;
		void *wrapper;
		void **fn;
	} wrappers[] = {
		{ P2PS_ACT_LEDGER_CREATE, wrap_create, (void **)&nv.create },
		{ P2PS_ACT_LEDGER_REMOVE, wrap_remove, (void **)&nv.remove },
		{ P2PS_ACT_LEDGER_DMA_MAP, wrap_dma_map, (void **)&nv.dma_map },
		{ P2PS_ACT_LEDGER_DMA_UNMAP, wrap_dma_unmap, (void **)&nv.dma_unmap },
	};
	unsigned int i, j;

	memset(&nv, 0, sizeof(nv));
	bound_profile = profile;
	WRITE_ONCE(watch_static_bar1, false);
	for (i = 0; i < n; i++) {
		if (hooks[i].desc->action == P2PS_ACT_STATIC_BAR1)
			WRITE_ONCE(watch_static_bar1, true);
		for (j = 0; j < ARRAY_SIZE(wrappers); j++)
			if (hooks[i].desc->action == wrappers[j].action) {
				hooks[i].via = (unsigned long)wrappers[j].wrapper;
				*wrappers[j].fn = (void *)hooks[i].dest;
			}
	}
	nv.dma_info = (void *)p2ps_driver_lookup(mod, "kbusGetBar1P2PDmaInfo_GH100");
	if (!nv.create || !nv.remove || !nv.dma_map || !nv.dma_unmap || !nv.dma_info) {
		p2ps_fail(err, "", "profile does not provide every function the wrappers need");
		return -ENOENT;
	}
	return 0;
}

/* Wait until no task runs a wrapper (or is about to). */
static void wait_for_wrappers(void)
{
	synchronize_rcu_tasks();
	wait_event(inflight_wq, !atomic_read(&inflight));
}

/* After the hooks are gone. */
void p2ps_bar1_unbind(void)
{
	wait_for_wrappers();
	WRITE_ONCE(closing, false);
}

/*
 * Before a disable looks at the ledger: stop new BAR1 mappings and let
 * those being made finish, so that what the ledger says stays true until
 * the hooks are gone.  p2ps_bar1_reopen() undoes it if disable is refused.
 * A wrapper counts itself before it looks at closing, and we set closing
 * before we look at the count: each side sees the other (no grace period
 * needed here; the task not yet counted will see closing).
 */
void p2ps_bar1_close(void)
{
	WRITE_ONCE(closing, true);
	smp_mb();
	wait_event(inflight_wq, !atomic_read(&inflight));
}

void p2ps_bar1_reopen(void)
{
	WRITE_ONCE(closing, false);
}
