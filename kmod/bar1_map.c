// SPDX-License-Identifier: GPL-2.0
/*
 * BAR1 peer mappings: PCIE_BAR1 routing and the wrappers that make and
 * unmake them.
 *
 * kbusCreateP2PMapping / kbusRemoveP2PMapping go to their _GH100 bodies
 * for a PCIE_BAR1 connection (bar1_map_route_ops).  The BAR1 P2P stub slots are
 * redirected to wrappers here, each with exactly the stub's signature,
 * which call the driver's own _GH100 body and record what it did in the
 * ledger (ledger.c), which tells the policies of a new pair.  The
 * wrappers run inside the in-flight gate (gate.c).
 * Gen 0's BAR1 window map and unmap run inside its static BAR1 view
 * (static_bar1_gen0.c).
 *
 * Every driver function called from here is a HAL body the driver itself
 * reaches through its NVOC tables, so it keeps its ENDBR on IBT kernels;
 * p2ps_resolve_object() checks that before arming.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/string.h>

#include "driver.h"
#include "gate.h"
#include "hook.h"
#include "ledger.h"
#include "nv.h"
#include "policy.h"
#include "static_bar1_gen0.h"

/* The driver's functions the wrappers call, bound at arming. */
static struct {
	NV_STATUS (*create)(struct OBJGPU *g0, struct KernelBus *b0,
			    struct OBJGPU *g1, struct KernelBus *b1, NvU32 attributes);
	NV_STATUS (*remove)(struct OBJGPU *g0, struct KernelBus *b0,
			    struct OBJGPU *g1, struct KernelBus *b1, NvU32 attributes);
	NV_STATUS (*dma_map)(struct OBJGPU *gpu, struct VirtMemAllocator *dma,
			     struct DMA_BAR1P2P_MAPPING_PRARAMS *params);
	void (*dma_unmap)(struct VirtMemAllocator *dma, struct CLI_DMA_MAPPING_INFO *info);
} nv;

/* Wrappers: each has the signature of the stub it replaces. */

static NV_STATUS wrap_create(struct OBJGPU *g0, struct KernelBus *b0,
			     struct OBJGPU *g1, struct KernelBus *b1, NvU32 attributes)
{
	NV_STATUS st = NV_ERR_NOT_SUPPORTED;
	bool held;

	p2ps_gate_enter();
	held = p2ps_gate_may_make();
	if (held)
		st = nv.create(g0, b0, g1, b1, attributes);
	if (st == NV_OK)
		p2ps_ledger_pair_get(g0, b0, g1, b1);
	p2ps_gate_made(held);
	p2ps_gate_exit();
	return st;
}

static NV_STATUS wrap_remove(struct OBJGPU *g0, struct KernelBus *b0,
			     struct OBJGPU *g1, struct KernelBus *b1, NvU32 attributes)
{
	NV_STATUS st;

	p2ps_gate_enter();
	st = nv.remove(g0, b0, g1, b1, attributes);
	if (st == NV_OK)
		p2ps_ledger_pair_put(g0, g1);
	p2ps_gate_exit();
	return st;
}

static NV_STATUS wrap_dma_map(struct OBJGPU *gpu, struct VirtMemAllocator *dma,
			      struct DMA_BAR1P2P_MAPPING_PRARAMS *params)
{
	NV_STATUS st = NV_ERR_NOT_SUPPORTED;
	bool held, view;

	p2ps_gate_enter();
	held = p2ps_gate_may_make();
	view = p2ps_gen0_view_needed();
	if (held && (!view || p2ps_gen0_view_enter())) {
		st = nv.dma_map(gpu, dma, params);
		if (view)
			p2ps_gen0_view_exit();
	}
	if (st == NV_OK && params)
		p2ps_ledger_dma_get(params->pDmaMappingInfo, gpu, params->pPeerGpu);
	p2ps_gate_made(held);
	p2ps_gate_exit();
	return st;
}

static void wrap_dma_unmap(struct VirtMemAllocator *dma, struct CLI_DMA_MAPPING_INFO *info)
{
	bool view = false;

	p2ps_gate_enter();
	if (p2ps_gen0_view_needed()) {
		view = p2ps_gen0_view_enter();
		if (!view)
			pr_warn_ratelimited("no view slot for a BAR1 window unmap: its BAR1 range may leak\n");
	}
	nv.dma_unmap(dma, info);
	if (view)
		p2ps_gen0_view_exit();
	p2ps_ledger_dma_put(info);
	p2ps_gate_exit();
}

/* PCIE_BAR1 create/remove calls go to _GH100; every other type stays. */
static bool p2ps_route_bar1(struct pt_regs *regs)
{
	/* attributes is the 7th argument: above the return address. */
	unsigned long attributes = regs_get_kernel_stack_nth(regs, 1);

	return (attributes & NV_P2PAPI_CONNECTION_TYPE_MASK) ==
	       NV_P2PAPI_CONNECTION_TYPE_PCIE_BAR1;
}

static const struct p2ps_hook_ops bar1_map_route_ops = { .route = p2ps_route_bar1 };
static const struct p2ps_hook_ops bar1_map_create_ops = { .wrapper = wrap_create };
static const struct p2ps_hook_ops bar1_map_remove_ops = { .wrapper = wrap_remove };
static const struct p2ps_hook_ops bar1_map_dma_map_ops = { .wrapper = wrap_dma_map };
static const struct p2ps_hook_ops bar1_map_dma_unmap_ops = { .wrapper = wrap_dma_unmap };

/* The profile's actions whose hooks are this file's (policy.c: p2ps_policies_ops()). */
static const struct p2ps_action_ops bar1_map_actions[] = {
	{ P2PS_ACT_ROUTE_BAR1, &bar1_map_route_ops },
	{ P2PS_ACT_LEDGER_CREATE, &bar1_map_create_ops },
	{ P2PS_ACT_LEDGER_REMOVE, &bar1_map_remove_ops },
	{ P2PS_ACT_LEDGER_DMA_MAP, &bar1_map_dma_map_ops },
	{ P2PS_ACT_LEDGER_DMA_UNMAP, &bar1_map_dma_unmap_ops },
	{ P2PS_ACT_NONE, NULL },
};

/* At arming: point the wrappers at the driver's functions. */
static int bar1_bind(struct module *mod, const struct p2ps_profile *profile,
		     struct p2ps_hook *hooks, unsigned int n, struct p2ps_arm_error *err)
{
	nv.create = (void *)p2ps_hooks_bind_wrapper(hooks, n, &bar1_map_create_ops);
	nv.remove = (void *)p2ps_hooks_bind_wrapper(hooks, n, &bar1_map_remove_ops);
	nv.dma_map = (void *)p2ps_hooks_bind_wrapper(hooks, n, &bar1_map_dma_map_ops);
	nv.dma_unmap = (void *)p2ps_hooks_bind_wrapper(hooks, n, &bar1_map_dma_unmap_ops);
	if (!nv.create || !nv.remove || !nv.dma_map || !nv.dma_unmap) {
		p2ps_fail(err, "", "profile does not provide every function the wrappers need");
		return -ENOENT;
	}
	return 0;
}

/* After the hooks are gone: no wrapper runs any more. */
static void bar1_unbind(void)
{
	p2ps_gate_drain();
}

const struct p2ps_policy p2ps_bar1_policy = {
	.name = "BAR1 mappings",
	.actions = bar1_map_actions,
	.bind = bar1_bind,
	.unbind = bar1_unbind,
};
