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
 * Other policies it calls, because the path runs through here: sbar1.c,
 * whose records the caps guard judges (p2ps_sb1_gather), and which learns
 * the user's RMForceStaticBar1 from the registry hook and gen 0's static
 * BAR1 teardown from its wrapper; uvm_peer.c, told of each new pair by the
 * create wrapper (nvidia-uvm asks the pair's caps right after creating it).
 *
 * Every driver function called from here is a HAL body the driver itself
 * reaches through its NVOC tables, so it keeps its ENDBR on IBT kernels;
 * p2ps_resolve() checks that before arming.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/processor.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/wait.h>

#include <p2p-shim/bdf.h>

#include "p2p-shim.h"

/*
 * The registry defaults apply to every GPU initialised while armed: the
 * registry is read before anything tells a GeForce chip from a Hopper one.
 * On a host that also has PCIe-only Hopper or datacenter Blackwell GPUs,
 * name the GeForce GPUs in registry_gpus=: the defaults then apply to
 * those alone, and go with p2p-shim (keys written into the driver's own
 * options would stay, and force the stock driver's mailbox offer, when
 * p2p-shim is not loaded).
 */
static bool use_registry_defaults = true;
module_param_named(registry_defaults, use_registry_defaults, bool, 0644);
MODULE_PARM_DESC(registry_defaults,
		 "Supply the profile's registry keys the user did not set: ForceP2P, and RMForceP2PType (550-570) or RMPcieP2PType and RMForceStaticBar1 (575) or RMPcieP2PType (580+); read as each GPU initialises (default: yes)");

/*
 * NVIDIA's host rule gives BAR1 P2P only where peer reads work: a common
 * PCIe switch, an AMD CPU or a Sapphire Rapids Xeon (readrule.c).  Any ForceP2P skips that check, so the caps guard
 * applies it, unless the user has proven reads on this rig.
 */
static bool allow_peer_reads;
module_param_named(peer_reads, allow_peer_reads, bool, 0644);
MODULE_PARM_DESC(peer_reads,
		 "Offer BAR1 P2P also where NVIDIA's host rule gives no peer reads (no common PCIe switch, a CPU other than AMD or Sapphire Rapids): only after p2pctl verify has shown reads right on this rig (default: no)");

/* The bound driver's major version (the rule differs before 570). */
static unsigned int bound_major;

/* Whether this host's CPU gets peer reads by the driver's rule. */
static bool cpu_reads_ok(void)
{
	enum p2ps_cpu_vendor v = P2PS_CPU_OTHER;

	if (p2ps_fault(P2PS_FAULT_CPU_NO_READS, 0))
		return false;
	if (boot_cpu_data.x86_vendor == X86_VENDOR_AMD)
		v = P2PS_CPU_AMD;
	else if (boot_cpu_data.x86_vendor == X86_VENDOR_INTEL)
		v = P2PS_CPU_INTEL;
	/* The switch is the verdict's to judge, per pair (sb1rule.c). */
	return p2ps_bar1_reads_allowed(READ_ONCE(bound_major), v, boot_cpu_data.x86,
				       boot_cpu_data.x86_model, false);
}

/* registry_gpus=: PCI functions, "DDDD:BB:DD.F" or "BB:DD.F", comma-separated. */
#define NR_SCOPED	NV_MAX_DEVICES
static struct {
	unsigned int nr;
	u64 dbd[NR_SCOPED];	/* as GPUATTACHARG's: domain 63:32, bus 15:8, device 7:0 */
} scoped;
/* Taken last: its holders take no other lock (sbar1.c takes it under sb1_lock). */
static DEFINE_SPINLOCK(scoped_lock);

static int registry_gpus_set(const char *val, const struct kernel_param *kp)
{
	char *buf, *cur, *tok;
	unsigned long flags;
	u64 dbd[NR_SCOPED];
	unsigned int n = 0;
	int ret = 0;

	buf = kstrdup(val, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	cur = strim(buf);
	while ((tok = strsep(&cur, ",")) != NULL) {
		tok = strim(tok);
		if (!*tok)
			continue;
		if (n == NR_SCOPED) {
			pr_err("registry_gpus: more than %u GPUs\n", NR_SCOPED);
			ret = -EINVAL;
			break;
		}
		if (p2ps_parse_bdf(tok, strlen(tok), &dbd[n])) {
			pr_err("registry_gpus: '%s' is not a PCI address (DDDD:BB:DD.0 or BB:DD.0)\n", tok);
			ret = -EINVAL;
			break;
		}
		n++;
	}
	kfree(buf);
	if (ret)
		return ret;
	p2ps_lock(&scoped_lock, flags);
	memcpy(scoped.dbd, dbd, n * sizeof(dbd[0]));
	WRITE_ONCE(scoped.nr, n);
	spin_unlock_irqrestore(&scoped_lock, flags);
	return 0;
}

static int registry_gpus_get(char *buf, const struct kernel_param *kp)
{
	unsigned long flags;
	unsigned int i;
	int n = 0;

	p2ps_lock(&scoped_lock, flags);
	for (i = 0; i < scoped.nr; i++)
		n += scnprintf(buf + n, PAGE_SIZE - n, "%s%04llx:%02llx:%02llx.0", i ? "," : "",
			       scoped.dbd[i] >> 32, (scoped.dbd[i] >> 8) & 0xff, scoped.dbd[i] & 0xff);
	spin_unlock_irqrestore(&scoped_lock, flags);
	return n + scnprintf(buf + n, PAGE_SIZE - n, "\n");
}

static const struct kernel_param_ops registry_gpus_ops = {
	.set = registry_gpus_set,
	.get = registry_gpus_get,
};
module_param_cb(registry_gpus, &registry_gpus_ops, NULL, 0644);
MODULE_PARM_DESC(registry_gpus,
		 "The GPUs (DDDD:BB:DD.0, comma-separated) the registry defaults and static BAR1 forcing apply to (default: every GPU)");

/*
 * Whether the GPU this thread is attaching is one of p2p-shim's: every GPU,
 * or those registry_gpus= names.  Only those get the registry defaults,
 * and only their own ForceP2P (the user's) is p2p-shim's to guard: on a
 * host that names its GeForce GPUs, the others (a pro or datacenter card
 * whose mailbox P2P works) keep the stock driver's answer.
 */
static bool in_scope(void)
{
	/* The common case, every GPU: no lookup. */
	if (!READ_ONCE(scoped.nr))
		return true;
	return p2ps_registry_scoped(p2ps_sb1_dbd(p2ps_gpu_attaching()));
}

/*
 * Whether the GPU at @dbd (U64_MAX: unknown) is one of p2p-shim's: every
 * GPU, or one registry_gpus= names.  Static BAR1 is forced only on those
 * too (sbar1.c).
 */
bool p2ps_registry_scoped(u64 dbd)
{
	unsigned long flags;
	bool in = false;
	unsigned int i;

	if (!READ_ONCE(scoped.nr))
		return true;
	p2ps_lock(&scoped_lock, flags);
	if (!scoped.nr)
		in = true;
	for (i = 0; i < scoped.nr && !in; i++)
		in = scoped.dbd[i] == dbd;
	spin_unlock_irqrestore(&scoped_lock, flags);
	return in;
}

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
	/* gen 0 */
	NvBool (*is_supported)(struct OBJGPU *g0, struct KernelBus *b0,
			       struct OBJGPU *g1, struct KernelBus *b1);
	NvBool (*bar1_capable)(struct OBJGPU *gpu, struct KernelBus *bus, NvU32 gfid);
	NV_STATUS (*static_enable)(struct OBJGPU *gpu, struct KernelBus *bus, NvU32 gfid);
	void (*static_disable)(struct OBJGPU *gpu, struct KernelBus *bus, NvU32 gfid);
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

/*
 * For a policy elsewhere that must not start something new while a
 * disable decides (sbar1.c: forcing static BAR1): counted as a wrapper is;
 * returns false while closing.  Pair with p2ps_bar1_exit().
 */
bool p2ps_bar1_enter(void)
{
	wrapper_enter();
	return !READ_ONCE(closing);
}

void p2ps_bar1_exit(void)
{
	wrapper_exit();
}

/*
 * Whether a wrapper may make a new mapping: not while a disable decides,
 * and not once rmmod is under way.  On true it holds a module reference
 * until create_done(), so that rmmod cannot start mid-call and remove the
 * hooks that would tear the new mapping down.
 */
static bool may_create(void)
{
	return !READ_ONCE(closing) && try_module_get(THIS_MODULE);
}

static void create_done(bool held)
{
	if (held)
		module_put(THIS_MODULE);
}

/*
 * Gen 0: where static BAR1 is visible.  A task inside one of the BAR1 P2P
 * wrappers (the mapping-supported check, the BAR1 window map and unmap)
 * sees a GPU's static BAR1; every other caller of kbusIsStaticBar1Enabled
 * does not, for the GPUs whose static BAR1 came from our hooks (those
 * drivers have the rest of the static-BAR1 code for Hopper only).
 */
#define NR_VIEWS 32

static struct {
	struct task_struct *task;
	unsigned int depth;
} views[NR_VIEWS];
static DEFINE_SPINLOCK(views_lock);

/* Whether the bound profile sets static BAR1 up itself (gen 0). */
static bool static_hooks;

/* The slot of @task; views_lock held. */
static int view_of(struct task_struct *task)
{
	int i;

	lockdep_assert_held(&views_lock);
	for (i = 0; i < NR_VIEWS; i++)
		if (views[i].task == task)
			return i;
	return -1;
}

/* Enter the view for this task (nested calls count); false if no slot. */
static bool view_enter(void)
{
	unsigned long flags;
	int i;

	p2ps_lock(&views_lock, flags);
	i = view_of(current);
	if (i < 0) {
		i = view_of(NULL);
		if (i >= 0)
			views[i].task = current;
	}
	if (i >= 0)
		views[i].depth++;
	spin_unlock_irqrestore(&views_lock, flags);
	return i >= 0;
}

static void view_exit(void)
{
	unsigned long flags;
	int i;

	p2ps_lock(&views_lock, flags);
	i = view_of(current);
	if (i >= 0 && !--views[i].depth)
		views[i].task = NULL;
	spin_unlock_irqrestore(&views_lock, flags);
}

static bool in_view(void)
{
	unsigned long flags;
	bool in;

	p2ps_lock(&views_lock, flags);
	in = view_of(current) >= 0;
	spin_unlock_irqrestore(&views_lock, flags);
	return in;
}

/* Wrappers: each has the signature of the stub it replaces. */

static NV_STATUS wrap_create(struct OBJGPU *g0, struct KernelBus *b0,
			     struct OBJGPU *g1, struct KernelBus *b1, NvU32 attributes)
{
	NV_STATUS st = NV_ERR_NOT_SUPPORTED;
	bool held;

	wrapper_enter();
	held = may_create();
	if (held)
		st = nv.create(g0, b0, g1, b1, attributes);
	if (st == NV_OK) {
		p2ps_ledger_pair_get(g0, b0, g1, b1);
		p2ps_uvm_peer_created(g0, g1);
	}
	create_done(held);
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
	NV_STATUS st = NV_ERR_NOT_SUPPORTED;
	bool held;

	wrapper_enter();
	held = may_create();
	if (held && (!static_hooks || view_enter())) {
		st = nv.dma_map(gpu, dma, params);
		if (static_hooks)
			view_exit();
	}
	if (st == NV_OK && params)
		p2ps_ledger_dma_get(params->pDmaMappingInfo, gpu, params->pPeerGpu);
	create_done(held);
	wrapper_exit();
	return st;
}

static void wrap_dma_unmap(struct VirtMemAllocator *dma, struct CLI_DMA_MAPPING_INFO *info)
{
	bool view = false;

	wrapper_enter();
	if (static_hooks) {
		view = view_enter();
		if (!view)
			pr_warn_ratelimited("no view slot for a BAR1 window unmap: its BAR1 range may leak\n");
	}
	nv.dma_unmap(dma, info);
	if (view)
		view_exit();
	p2ps_ledger_dma_put(info);
	wrapper_exit();
}

/* Gen 0: the BAR1 P2P code asks whether both GPUs have static BAR1. */
static NvBool wrap_is_supported(struct OBJGPU *g0, struct KernelBus *b0,
				struct OBJGPU *g1, struct KernelBus *b1)
{
	NvBool ret = NV_FALSE;		/* as the stub says, without a view */

	wrapper_enter();
	if (view_enter()) {
		ret = nv.is_supported(g0, b0, g1, b1);
		view_exit();
	}
	wrapper_exit();
	return ret;
}

/*
 * Gen 0: kbusIsBar1P2PCapable decides at BAR1 initialisation whether a GPU
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

	wrapper_enter();
	held = may_create();
	/* Static BAR1 only for p2p-shim's GPUs (registry_gpus=), as on 570+. */
	if (held && instance != U32_MAX && p2ps_registry_scoped(p2ps_sb1_dbd(instance)))
		ret = nv.bar1_capable(gpu, bus, gfid);
	/* The enable follows: in flight until it returns (sbar1.c). */
	if (ret && !p2ps_sb1_capable_begin(gpu))
		ret = NV_FALSE;
	create_done(held);
	wrapper_exit();
	return ret;
}

/*
 * The in-flight reference of the capable "yes" (sbar1.c) ends in the
 * return probe on the _GH100 body, inside this call: the wrapper holds its
 * own until the ledger's is taken, so that no rmmod starts in between.
 */
static NV_STATUS wrap_static_enable(struct OBJGPU *gpu, struct KernelBus *bus, NvU32 gfid)
{
	bool held = try_module_get(THIS_MODULE);
	NV_STATUS st;

	wrapper_enter();
	st = nv.static_enable(gpu, bus, gfid);
	if (st == NV_OK)
		p2ps_ledger_static_get(gpu);	/* the observer on _GH100 marks the GPU */
	wrapper_exit();
	if (held)
		module_put(THIS_MODULE);
	return st;
}

static void wrap_static_disable(struct OBJGPU *gpu, struct KernelBus *bus, NvU32 gfid)
{
	wrapper_enter();
	nv.static_disable(gpu, bus, gfid);
	p2ps_sb1_torn_down(gpu);
	p2ps_ledger_static_put(gpu);
	wrapper_exit();
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

/* PCIE_BAR1 create/remove calls go to _GH100; every other type stays. */
static bool p2ps_route_bar1(struct pt_regs *regs)
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

static const char *p2ps_registry_return(void *data, struct pt_regs *regs)
{
	struct registry_call *c = data;
	const struct p2ps_registry_default *d = NULL, *r;
	/* NV_STATUS is 32 bits: the register's upper half is undefined. */
	u32 st = regs_return_value(regs);
	bool forcing, supply, ours;

	if (!c->gpu || !c->key || !c->data)
		return NULL;
	/* The user's RMForceStaticBar1 is theirs: sbar1.c then never forces. */
	if (st == NV_OK && !strcmp(c->key, "RMForceStaticBar1"))
		p2ps_sb1_user_key();
	/* Nor where their RMBar1ApertureSizeMB makes BAR1 smaller than we see it. */
	if (st == NV_OK && !strcmp(c->key, "RMBar1ApertureSizeMB"))
		p2ps_sb1_aperture_key(c->gpu, *c->data);
	for (r = bound_profile ? bound_profile->registry : NULL; r && r->key; r++)
		if (!strcmp(c->key, r->key))
			d = r;
	if (!d)
		return NULL;
	/*
	 * Counted like a wrapper: while a disable decides (p2ps_bar1_close),
	 * no GPU newly gets our settings, so the set of forced GPUs it acts
	 * on stays true until its hooks are gone.
	 */
	wrapper_enter();
	ours = in_scope();
	/*
	 * Only to a GPU whose attach we track, every key alike (review F5):
	 * on 565/570 RMForceP2PType=2 without the ForceP2P that goes with it
	 * turns that GPU's NVLink P2P off and gives it nothing in return.
	 */
	supply = st != NV_OK && READ_ONCE(use_registry_defaults) && !READ_ONCE(closing) && ours &&
		 p2ps_gpu_attaching() < NV_MAX_DEVICES;
	/*
	 * ForceP2P only for a GPU whose attach we see: the caps guard must be
	 * able to tell which GPUs carry it.  Whoever set it, a ForceP2P that
	 * forces P2P puts the GPU under the guard and makes it hold this
	 * module (gpus.c): the user's own key offers the mailbox path just as
	 * ours would.  If rmmod is already under way the GPU gets the stock
	 * value (ours), or keeps the user's unguarded (the module is going).
	 */
	if (!strcmp(d->key, "ForceP2P")) {
		forcing = st == NV_OK ? ours && p2ps_force_p2p_forces(*c->data) :
					supply && p2ps_force_p2p_forces(d->value);
		if (!p2ps_gpu_bind(c->gpu) || !p2ps_gpu_set_forced(c->gpu, forcing))
			supply = false;
	}
	if (supply) {
		/* The user has not set it: supply ours. */
		*c->data = d->value;
		regs_set_return_value(regs, NV_OK);
	}
	wrapper_exit();
	return NULL;
}

/*
 * The caps guard.  With ForceP2P forced, a pair whose BAR1 route is not
 * available (no static BAR1: small BAR, or BAR1 smaller than VRAM) would
 * come back as PCIE_PROPRIETARY with reads and writes OK, and the driver
 * would then use mailbox P2P, which GeForce chips since Ampere no longer
 * have.  For such pairs, put back what the stock driver says: no P2P.  It
 * takes one forced GPU: the first GPU of a pair decides the override, and
 * its partner may be one initialised before arming (a display GPU, say).
 * On 550-570 the same override also reports PCIE_BAR1 for a pair without
 * static BAR1 on both GPUs (it is applied before the BAR1 HAL check); such
 * a pair fails to map later, so it gets the stock answer too.  So does a
 * pair with a GPU whose static BAR1 sits where BAR1 P2P's mapping refuses
 * it (570-575: after a console or mailbox, not 512 MiB aligned; sbar1.c),
 * whatever the generations of the two GPUs.
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
 * Whether the bound profile watches static BAR1 (gen 0 and gen-a1, whose
 * caps code applies the override before the BAR1 HAL check).
 */
static bool watch_static_bar1;

/*
 * The residual state (main.c): the BAR1 routing is gone, so no BAR1 peer
 * mapping can be made through it any more.  On 550-570 ForceP2P still
 * reports PCIE_BAR1 for a forced pair with static BAR1 on both GPUs; CUDA
 * would see "can access peer" and then fail to enable it.  Every forced
 * pair gets the stock answer then.
 */
static bool guard_only;

void p2ps_bar1_guard_only(bool on)
{
	WRITE_ONCE(guard_only, on);
}

static const char *p2ps_caps_return(void *data, struct pt_regs *regs)
{
	struct caps_call *c = data;
	struct p2ps_caps_in in = { .forced = true };

	p2ps_gpus_asked(c->mask);
	if ((u32)regs_return_value(regs) != NV_OK || !c->connectivity || !c->read || !c->write)
		return NULL;
	/* Only an answer the guard may change needs the set's records. */
	if (!p2ps_caps_guarded(*c->connectivity, p2ps_gpus_forced_in(c->mask)))
		return NULL;
	in.connectivity = *c->connectivity;
	in.guard_only = READ_ONCE(guard_only);
	in.watch_static_bar1 = READ_ONCE(watch_static_bar1);
	in.reads_refused = !READ_ONCE(allow_peer_reads) && !cpu_reads_ok();
	/* The rule is sb1rule.c's; the records are sbar1.c's. */
	p2ps_sb1_gather(c->mask, &in.set);
	switch (p2ps_caps_verdict(&in)) {
	case P2PS_CAPS_STOCK_IOH:
		/* The IOH check ForceP2P skipped (sbar1.c). */
		pr_info_ratelimited("GPUs 0x%x: below two Intel I/O hubs, no P2P (as the driver's own check)\n",
				    c->mask);
		refuse(c);
		break;
	case P2PS_CAPS_STOCK_READS:
		pr_info_ratelimited("GPUs 0x%x: no common PCIe switch and a CPU that NVIDIA's rule gives no BAR1 peer reads: no P2P (peer_reads=1 allows it once p2pctl verify has shown reads right)\n",
				    c->mask);
		refuse(c);
		break;
	case P2PS_CAPS_STOCK_MIXED:
		pr_info_ratelimited("GPUs 0x%x: of different generations, no P2P (the driver's BAR1 atomics and coherence follow the memory owner's; libcuda refuses such pairs too)\n",
				    c->mask);
		refuse(c);
		break;
	case P2PS_CAPS_STOCK_UNKNOWN:
		pr_info_ratelimited("GPUs 0x%x: one was initialised before arming (or is still being looked up): its generation unknown, no P2P until it re-initialises\n",
				    c->mask);
		refuse(c);
		break;
	case P2PS_CAPS_STOCK:
		refuse(c);
		break;
	case P2PS_CAPS_KEEP:
		break;
	}
	return NULL;
}

static void p2ps_registry_entry(void *data, struct pt_regs *regs)
{
	struct registry_call *c = data;

	c->gpu = (struct OBJGPU *)regs_get_kernel_argument(regs, 0);
	c->key = (const char *)regs_get_kernel_argument(regs, 1);
	c->data = (NvU32 *)regs_get_kernel_argument(regs, 2);
}

/* Entry handlers (NMI context) only save the arguments. */

/* 550-560: p2pGetCapsStatus(gpuMask, pWrite, pRead, pConnectivity) */
static void p2ps_caps_entry_v1(void *data, struct pt_regs *regs)
{
	struct caps_call *c = data;

	c->mask = regs_get_kernel_argument(regs, 0);
	c->write = (u8 *)regs_get_kernel_argument(regs, 1);
	c->read = (u8 *)regs_get_kernel_argument(regs, 2);
	c->atomics = NULL;
	c->connectivity = (u32 *)regs_get_kernel_argument(regs, 3);
}

static void p2ps_caps_entry(void *data, struct pt_regs *regs)
{
	struct caps_call *c = data;

	c->mask = regs_get_kernel_argument(regs, 0);
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
	const struct p2ps_hook_ops *ops;
	bool native_uvm = false;
	unsigned long flags;
	unsigned int i;

	memset(&nv, 0, sizeof(nv));
	bound_profile = profile;
	{
		unsigned int major = 0, minor, patch;

		if (!mod->version || p2ps_parse_version(mod->version, &major, &minor, &patch))
			major = 0;
		WRITE_ONCE(bound_major, major);
	}
	WRITE_ONCE(watch_static_bar1, false);
	for (i = 0; i < n; i++) {
		/* gen A's UVM fix learns native-slot pairs (issue 13): sbar1.c */
		if (!strcmp(hooks[i].desc->target, "kbusCreateP2PMappingForBar1P2P_GH100"))
			native_uvm = true;
		if ((hooks[i].desc->action == P2PS_ACT_STATIC_BAR1 ||
		     hooks[i].desc->action == P2PS_ACT_STATIC_ENABLE) &&
		    profile->force_before_bar1_check)
			WRITE_ONCE(watch_static_bar1, true);
		ops = hooks[i].desc->ops;
		if (ops && ops->wrapper) {
			hooks[i].via = (unsigned long)ops->wrapper;
			*ops->dest_fn = (void *)hooks[i].dest;
		}
	}
	p2ps_sb1_bind(mod->version, native_uvm);
	nv.dma_info = (void *)p2ps_driver_lookup(mod, "kbusGetBar1P2PDmaInfo_GH100");
	if (!nv.create || !nv.remove || !nv.dma_map || !nv.dma_unmap || !nv.dma_info) {
		p2ps_fail(err, "", "profile does not provide every function the wrappers need");
		return -ENOENT;
	}
	/* Gen 0's static BAR1 hooks come as a set. */
	static_hooks = nv.bar1_capable || nv.static_enable || nv.static_disable || nv.is_supported;
	if (static_hooks && (!nv.bar1_capable || !nv.static_enable || !nv.static_disable ||
			     !nv.is_supported)) {
		p2ps_fail(err, "", "profile has only some of the static BAR1 hooks");
		return -ENOENT;
	}
	p2ps_lock(&views_lock, flags);
	memset(views, 0, sizeof(views));
	spin_unlock_irqrestore(&views_lock, flags);
	return 0;
}

/*
 * Wait until no task runs a wrapper (or is about to, or is still on its
 * way out of one): the count first, then a grace period of RCU tasks,
 * which a task redirected but not yet counted, or counted out but still
 * in the wrapper's last instructions, has not passed.
 */
static void wait_for_wrappers(void)
{
	wait_event(inflight_wq, !atomic_read(&inflight));
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

/* The policies of this file, as the profile's descriptors name them. */
const struct p2ps_hook_ops p2ps_route_bar1_ops = { .route = p2ps_route_bar1 };
#define WRAPPER(w, fn)	.wrapper = (w), .dest_fn = (void **)&nv.fn
const struct p2ps_hook_ops p2ps_ledger_create_ops = { WRAPPER(wrap_create, create) };
const struct p2ps_hook_ops p2ps_ledger_remove_ops = { WRAPPER(wrap_remove, remove) };
const struct p2ps_hook_ops p2ps_ledger_dma_map_ops = { WRAPPER(wrap_dma_map, dma_map) };
const struct p2ps_hook_ops p2ps_ledger_dma_unmap_ops = { WRAPPER(wrap_dma_unmap, dma_unmap) };
const struct p2ps_hook_ops p2ps_view_is_supported_ops = {
	WRAPPER(wrap_is_supported, is_supported),
};
const struct p2ps_hook_ops p2ps_bar1_capable_ops = { WRAPPER(wrap_bar1_capable, bar1_capable) };
const struct p2ps_hook_ops p2ps_static_enable_ops = { WRAPPER(wrap_static_enable, static_enable) };
const struct p2ps_hook_ops p2ps_static_disable_ops = {
	WRAPPER(wrap_static_disable, static_disable),
};
const struct p2ps_hook_ops p2ps_static_view_ops = {
	.entry = p2ps_static_view_entry, .ret = p2ps_static_view_return,
};
const struct p2ps_hook_ops p2ps_registry_defaults_ops = {
	.entry = p2ps_registry_entry, .ret = p2ps_registry_return,
};
/* The guard stays in the residual state (main.c). */
const struct p2ps_hook_ops p2ps_caps_guard_ops = {
	.entry = p2ps_caps_entry, .ret = p2ps_caps_return, .residual = true,
};
const struct p2ps_hook_ops p2ps_caps_guard_v1_ops = {
	.entry = p2ps_caps_entry_v1, .ret = p2ps_caps_return, .residual = true,
};
