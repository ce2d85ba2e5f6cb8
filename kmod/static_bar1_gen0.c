// SPDX-License-Identifier: GPL-2.0
/*
 * Static BAR1 on gen 0 (550, 560): those drivers have the static BAR1 code
 * for Hopper only, so the hooks set it up themselves.  kbusIsBar1P2PCapable
 * decides at BAR1 initialisation whether a GPU gets static BAR1; its
 * wrapper lets the _GH100 answer through for p2p-shim's GPUs, and the
 * enable and disable wrappers record the result in the ledger (a static
 * BAR1 the hooks set up is a ledger entry: disable is refused while one
 * lives).
 *
 * The view: a task inside one of the BAR1 P2P wrappers (the
 * mapping-supported check here, the BAR1 window map and unmap in
 * bar1_map.c) sees a GPU's static BAR1; every other caller of
 * kbusIsStaticBar1Enabled does not, for the GPUs whose static BAR1 came
 * from our hooks.  Views are per-task scopes (scopes.c).
 *
 * A "capable: yes" is a static BAR1 decision in flight until its enable
 * returns: static_bar1.c owns that (p2ps_sb1_capable_begin()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "gate.h"
#include "gpus.h"
#include "hook.h"
#include "ledger.h"
#include "nv.h"
#include "policy.h"
#include "registry.h"
#include "scopes.h"
#include "static_bar1.h"
#include "static_bar1_gen0.h"

/* The driver's functions the wrappers call, bound at arming. */
static struct {
	NvBool (*is_supported)(struct OBJGPU *g0, struct KernelBus *b0,
			       struct OBJGPU *g1, struct KernelBus *b1);
	NvBool (*bar1_capable)(struct OBJGPU *gpu, struct KernelBus *bus, NvU32 gfid);
	NV_STATUS (*static_enable)(struct OBJGPU *gpu, struct KernelBus *bus, NvU32 gfid);
	void (*static_disable)(struct OBJGPU *gpu, struct KernelBus *bus, NvU32 gfid);
} nv;

/* Whether the bound profile sets static BAR1 up itself (gen 0). */
static bool static_hooks;

#define NR_VIEWS 32
P2PS_SCOPES(views, NR_VIEWS);
static unsigned int view_depth[NR_VIEWS];	/* nested calls; the owner's alone */

/* Whether the BAR1 window wrappers must enter a view: the bound profile is gen 0. */
bool p2ps_gen0_view_needed(void)
{
	return READ_ONCE(static_hooks);
}

/* Enter the view for this task (nested calls count); false if no slot. */
bool p2ps_gen0_view_enter(void)
{
	int i = p2ps_scope_find(&views);

	if (i < 0)
		i = p2ps_scope_claim(&views);
	if (i < 0)
		return false;
	view_depth[i]++;
	return true;
}

void p2ps_gen0_view_exit(void)
{
	int i = p2ps_scope_find(&views);

	if (i >= 0 && !--view_depth[i])
		p2ps_scope_release(&views, i);
}

static bool in_view(void)
{
	return p2ps_scope_find(&views) >= 0;
}

/* The BAR1 P2P code asks whether both GPUs have static BAR1. */
static NvBool wrap_is_supported(struct OBJGPU *g0, struct KernelBus *b0,
				struct OBJGPU *g1, struct KernelBus *b1)
{
	NvBool ret = NV_FALSE;		/* as the stub says, without a view */

	p2ps_gate_enter();
	if (p2ps_gen0_view_enter()) {
		ret = nv.is_supported(g0, b0, g1, b1);
		p2ps_gen0_view_exit();
	}
	p2ps_gate_exit();
	return ret;
}

/*
 * kbusIsBar1P2PCapable decides at BAR1 initialisation whether a GPU
 * gets static BAR1.  The stub's answer (no) while a disable decides, and
 * for a GPU whose attach we did not see: its static BAR1 could not be told
 * apart from Hopper's, and everything else on it would then see it.  Also
 * for a GPU registry_gpus= leaves out (the user's own RMForceP2PType=2
 * would otherwise get it static BAR1 through us).
 */
static NvBool wrap_bar1_capable(struct OBJGPU *gpu, struct KernelBus *bus, NvU32 gfid)
{
	u32 instance = p2ps_gpu_instance(gpu);
	NvBool ret = NV_FALSE;
	bool held;

	p2ps_gate_enter();
	held = p2ps_gate_may_make();
	/* Static BAR1 only for p2p-shim's GPUs (registry_gpus=), as on 570+. */
	if (held && instance != U32_MAX && p2ps_registry_scoped(p2ps_gpu_dbd(instance)))
		ret = nv.bar1_capable(gpu, bus, gfid);
	/* The enable follows: in flight until it returns (static_bar1.c). */
	if (ret && !p2ps_sb1_capable_begin(gpu))
		ret = NV_FALSE;
	p2ps_gate_made(held);
	p2ps_gate_exit();
	return ret;
}

/*
 * The in-flight reference of the capable "yes" (static_bar1.c) ends in the
 * return probe on the _GH100 body, inside this call: the wrapper holds its
 * own until the ledger's is taken, so that no rmmod starts in between.
 */
static NV_STATUS wrap_static_enable(struct OBJGPU *gpu, struct KernelBus *bus, NvU32 gfid)
{
	bool held = try_module_get(THIS_MODULE);
	NV_STATUS st;

	p2ps_gate_enter();
	st = nv.static_enable(gpu, bus, gfid);
	if (st == NV_OK)
		p2ps_ledger_static_get(gpu);	/* the observer on _GH100 marks the GPU */
	p2ps_gate_exit();
	if (held)
		module_put(THIS_MODULE);
	return st;
}

static void wrap_static_disable(struct OBJGPU *gpu, struct KernelBus *bus, NvU32 gfid)
{
	p2ps_gate_enter();
	nv.static_disable(gpu, bus, gfid);
	p2ps_sb1_torn_down(gpu);
	p2ps_ledger_static_put(gpu);
	p2ps_gate_exit();
}

/* kbusIsStaticBar1Enabled_IMPL(pGpu, pKernelBus) */
struct static_view_call {
	struct OBJGPU *gpu;
};
static_assert(sizeof(struct static_view_call) <= P2PS_RET_DATA_SIZE);

static void p2ps_static_view_entry(void *data, struct pt_regs *regs)
{
	struct static_view_call *c = data;

	c->gpu = (struct OBJGPU *)regs_get_kernel_argument(regs, 0);
}

static const char *p2ps_static_view_return(void *data, struct pt_regs *regs)
{
	struct static_view_call *c = data;

	if (!(regs_return_value(regs) & 0xff) || !p2ps_ledger_has_static(c->gpu) || in_view())
		return NULL;
	regs_set_return_value(regs, NV_FALSE);
	return NULL;
}

static const struct p2ps_hook_ops static_bar1_gen0_is_supported_ops = { .wrapper = wrap_is_supported };
static const struct p2ps_hook_ops static_bar1_gen0_capable_ops = { .wrapper = wrap_bar1_capable };
static const struct p2ps_hook_ops static_bar1_gen0_enable_ops = { .wrapper = wrap_static_enable };
static const struct p2ps_hook_ops static_bar1_gen0_disable_ops = { .wrapper = wrap_static_disable };
static const struct p2ps_hook_ops static_bar1_gen0_view_ops = {
	.entry = p2ps_static_view_entry, .ret = p2ps_static_view_return,
};

/* The profile's actions whose hooks are this file's (policy.c: p2ps_policies_ops()). */
static const struct p2ps_action_ops static_bar1_gen0_actions[] = {
	{ P2PS_ACT_VIEW_IS_SUPPORTED, &static_bar1_gen0_is_supported_ops },
	{ P2PS_ACT_BAR1_CAPABLE, &static_bar1_gen0_capable_ops },
	{ P2PS_ACT_STATIC_ENABLE, &static_bar1_gen0_enable_ops },
	{ P2PS_ACT_STATIC_DISABLE, &static_bar1_gen0_disable_ops },
	{ P2PS_ACT_STATIC_VIEW, &static_bar1_gen0_view_ops },
	{ P2PS_ACT_NONE, NULL },
};

/* At arming: gen 0's wrappers, which come as a set, or none. */
static int gen0_bind(struct module *mod, const struct p2ps_profile *profile,
		     struct p2ps_hook *hooks, unsigned int n, struct p2ps_arm_error *err)
{
	bool any;

	nv.is_supported = (void *)p2ps_hooks_bind_wrapper(hooks, n, &static_bar1_gen0_is_supported_ops);
	nv.bar1_capable = (void *)p2ps_hooks_bind_wrapper(hooks, n, &static_bar1_gen0_capable_ops);
	nv.static_enable = (void *)p2ps_hooks_bind_wrapper(hooks, n, &static_bar1_gen0_enable_ops);
	nv.static_disable = (void *)p2ps_hooks_bind_wrapper(hooks, n, &static_bar1_gen0_disable_ops);
	any = nv.bar1_capable || nv.static_enable || nv.static_disable || nv.is_supported;
	WRITE_ONCE(static_hooks, any);
	if (any && (!nv.bar1_capable || !nv.static_enable || !nv.static_disable ||
		    !nv.is_supported)) {
		p2ps_fail(err, "", "profile has only some of the static BAR1 hooks");
		return -ENOENT;
	}
	/* No hook of this set runs yet: no view is open. */
	p2ps_scope_reset(&views);
	memset(view_depth, 0, sizeof(view_depth));
	return 0;
}

const struct p2ps_policy p2ps_gen0_policy = {
	.name = "static BAR1, gen 0",
	.actions = static_bar1_gen0_actions,
	.bind = gen0_bind,
};
