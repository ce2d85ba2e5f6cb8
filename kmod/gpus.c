// SPDX-License-Identifier: GPL-2.0
/*
 * What p2p-shim knows of each GPU, learnt only from the driver's own calls
 * into hooked functions: never by calling the driver.
 *
 * The driver's GPU manager (gpumgrGetGpu, gpumgrGetGpuAttachInfo) is off
 * limits: it dereferences g_pSys, which is NULL until nvidia's init has
 * run (so not at MODULE_STATE_COMING), and those functions are only ever
 * called directly inside nvidia, so on kernels with IBT objtool seals their
 * ENDBR and an indirect call from here would fault (#CP).
 *
 * Instead: gpumgrAttachGpu(gpuInstance, ...) constructs a GPU's OBJGPU, and
 * its engines read the registry on the same thread; the ForceP2P read
 * (kbifConstructEngine) carries the new OBJGPU.  An attach scope per thread
 * ties the two together, so the table below is indexed by instance and
 * holds the OBJGPU of the GPU's current attachment.  gpumgrDetachGpu ends
 * it: the next attach builds a new OBJGPU, so nothing keyed by pointer
 * outlives its GPU.  Inside the detach, osDpcDetachGpu(pGpu) names the
 * OBJGPU that goes, also for a GPU attached before arming, whose OBJGPU
 * we never learnt otherwise: what is keyed by it goes too.
 *
 * A GPU the driver asks about (a P2P caps query names it) that we never saw
 * attach was initialised before arming: it read the registry without us.
 *
 * Context: the attach and detach entries and osDpcDetachGpu's hook are a
 * kretprobe entry handler and a kprobe pre-handler, which run in NMI
 * context on x86 (int3 enters through irqentry_nmi_enter).  They only
 * publish, with single stores, which thread is attaching or detaching
 * which instance (and its OBJGPU); everything that takes a lock, frees or
 * drops a reference happens in process context: in the return handlers,
 * or when the attaching thread's first registry read asks (settle()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "events.h"
#include "gpus.h"
#include "hook.h"
#include "nmi.h"
#include "nv.h"
#include "policy.h"

struct p2ps_gpu {
	struct OBJGPU *gpu;	/* while attached under our hooks, else NULL */
	/* Stored by the NMI-context handlers (single stores), read under the lock: */
	struct task_struct *attaching;	/* the thread inside gpumgrAttachGpu */
	const void *attach_arg;	/* ...its GPUATTACHARG, for settle() */
	bool fresh;		/* ...entered, the old attachment not yet forgotten */
	struct task_struct *detaching;	/* the thread inside gpumgrDetachGpu */
	struct OBJGPU *leaving;	/* ...the OBJGPU osDpcDetachGpu named in it */
	bool attach_freed;	/* osDpcDetachGpu ran inside its attach: the error path freed it */
	/* Under the lock only: */
	bool forced;		/* it carries a ForceP2P that forces P2P */
	bool stale;		/* asked about, but attached before arming */
	bool seen;		/* attached under our hooks: facts hold */
	struct p2ps_gpu_facts facts;	/* from its attach (p2ps_gpu_facts()) */
};

static struct p2ps_gpu gpus[NV_MAX_DEVICES];
static DEFINE_SPINLOCK(gpus_lock);

static unsigned int nr_forced;	/* GPUs with forced set */

/*
 * The GPUs each thread's last P2P caps query named, for uvm_peer.c: RM
 * answers nvidia-uvm's caps query through p2pGetCapsStatus on the asking
 * thread, and nothing in nvidia-uvm's own arguments names the pair as we
 * know it.  Under gpus_lock; a full table reuses the oldest slot.
 */
#define NR_ASKERS	16
static struct {
	struct task_struct *task;	/* compared, never dereferenced */
	u32 mask;
} askers[NR_ASKERS];
static unsigned int askers_next;

/*
 * Called with gpus_lock held.  A GPU carrying a ForceP2P that forces P2P
 * (ours or the user's, registry.c) holds a reference on this module until it
 * detaches (or nvidia leaves): without the caps guard its pairs would be
 * offered the mailbox path, so rmmod is refused meanwhile
 * (docs/lifecycle.md).  This is the one owner of "which GPUs need the
 * guard" and of their module references.  Returns false if the reference
 * cannot be had (rmmod is under way): the GPU must not be forced then.
 */
static bool set_forced(struct p2ps_gpu *g, bool forced)
{
	if (g->forced == forced)
		return true;
	if (forced && !try_module_get(THIS_MODULE))
		return false;
	g->forced = forced;
	if (forced) {
		nr_forced++;
		return true;
	}
	if (--nr_forced == 0)
		p2ps_emit_forced_gone();
	module_put(THIS_MODULE);
	return true;
}

static void forget(struct p2ps_gpu *g)
{
	p2ps_assert_not_nmi();
	set_forced(g, false);
	g->gpu = NULL;
	g->attach_arg = NULL;
	g->fresh = false;
	g->leaving = NULL;
	g->attach_freed = false;
	g->forced = false;
	g->stale = false;
	g->seen = false;
	g->facts = (struct p2ps_gpu_facts){ .dbd = U64_MAX };
	WRITE_ONCE(g->attaching, NULL);
	WRITE_ONCE(g->detaching, NULL);
	p2ps_policies_gpu_forget(g - gpus);
}

/* At arming and disarming: without the hooks, the table would go stale. */
void p2ps_gpus_reset(void)
{
	unsigned long flags;
	int i;

	p2ps_lock(&gpus_lock, flags);
	for (i = 0; i < NV_MAX_DEVICES; i++)
		forget(&gpus[i]);
	memset(askers, 0, sizeof(askers));
	spin_unlock_irqrestore(&gpus_lock, flags);
}

/* GPUATTACHARG (g_gpu_mgr_nvoc.h, 550-595): nvDomainBusDeviceFunc. */
#define GPUATTACHARG_DOMAIN_BUS_DEVICE	56

/*
 * Whether @dbd is a PCI address as GPUATTACHARG's nvDomainBusDeviceFunc
 * gives it (domain 63:32, bus 15:8, slot 7:3, function 2:0): bits 31:16
 * and the slot's top 3 bits are 0 in a sane value.  U64_MAX (unknown) is
 * not.
 */
static bool dbd_valid(u64 dbd)
{
	return !(dbd & 0xffff00e0ULL);
}

/* The PCI address @arg (a GPUATTACHARG) names, or U64_MAX. */
static u64 dbd_of(const void *arg)
{
	u64 dbd;

	if (!arg || copy_from_kernel_nofault(&dbd, arg + GPUATTACHARG_DOMAIN_BUS_DEVICE, sizeof(dbd)) ||
	    !dbd_valid(dbd))
		return U64_MAX;
	return dbd;
}

/* gpumgrAttachGpu(NvU32 gpuInstance, GPUATTACHARG *pAttachArg) */
struct attach_call {
	u32 instance;
};
static_assert(sizeof(struct attach_call) <= P2PS_RET_DATA_SIZE);

/* NMI context: single stores only (see the top of this file). */
static void p2ps_gpu_attach_entry(void *data, struct pt_regs *regs)
{
	struct attach_call *c = data;
	struct p2ps_gpu *g;
	int i;

	c->instance = regs_get_kernel_argument(regs, 0);
	if (c->instance >= NV_MAX_DEVICES)
		return;
	/* A slot still naming this thread lost its return (a missed kretprobe instance). */
	for (i = 0; i < NV_MAX_DEVICES; i++)
		cmpxchg(&gpus[i].attaching, current, NULL);
	g = &gpus[c->instance];
	WRITE_ONCE(g->attach_freed, false);
	WRITE_ONCE(g->attach_arg, (const void *)regs_get_kernel_argument(regs, 1));
	WRITE_ONCE(g->fresh, true);
	/* The thread itself reads these later, in program order. */
	WRITE_ONCE(g->attaching, current);
}

/*
 * With gpus_lock held, in process context: the attach this thread entered
 * on @g begins here: the old attachment is forgotten, the new one's BAR1
 * recorded (static_bar1.c, through policy.c).  Done by the first hook that asks during the attach
 * (the registry reads), or at its return.
 */
static void settle(struct p2ps_gpu *g)
{
	const void *arg;

	if (READ_ONCE(g->attaching) != current || !READ_ONCE(g->fresh))
		return;
	arg = READ_ONCE(g->attach_arg);
	forget(g);
	WRITE_ONCE(g->attaching, current);
	g->seen = true;
	g->facts.dbd = dbd_of(arg);
	p2ps_policies_gpu_attach(g - gpus, arg, g->facts.dbd);
}

/* The slot of the GPU this thread is attaching (settled), or NULL; gpus_lock held. */
static struct p2ps_gpu *attaching_slot(void)
{
	int i;

	for (i = 0; i < NV_MAX_DEVICES; i++)
		if (READ_ONCE(gpus[i].attaching) == current) {
			settle(&gpus[i]);
			return &gpus[i];
		}
	return NULL;
}

/* The instance this thread is attaching, or U32_MAX. */
u32 p2ps_gpu_attaching(void)
{
	struct p2ps_gpu *g;
	unsigned long flags;
	u32 instance = U32_MAX;

	p2ps_lock(&gpus_lock, flags);
	g = attaching_slot();
	if (g)
		instance = g - gpus;
	spin_unlock_irqrestore(&gpus_lock, flags);
	return instance;
}

void p2ps_gpu_facts(u32 instance, struct p2ps_gpu_facts *f)
{
	unsigned long flags;

	*f = (struct p2ps_gpu_facts){ .dbd = U64_MAX };
	if (instance >= NV_MAX_DEVICES)
		return;
	p2ps_lock(&gpus_lock, flags);
	if (gpus[instance].seen)
		*f = gpus[instance].facts;
	spin_unlock_irqrestore(&gpus_lock, flags);
}

u64 p2ps_gpu_dbd(u32 instance)
{
	struct p2ps_gpu_facts f;

	p2ps_gpu_facts(instance, &f);
	return f.dbd;
}

/* osReadRegistryDword found RMForceStaticBar1 set, during an attach. */
void p2ps_gpu_user_static_bar1(void)
{
	struct p2ps_gpu *g;
	unsigned long flags;

	p2ps_lock(&gpus_lock, flags);
	g = attaching_slot();
	if (g && g->seen)
		g->facts.user_static_bar1 = true;
	spin_unlock_irqrestore(&gpus_lock, flags);
}

/*
 * osReadRegistryDword found RMBar1ApertureSizeMB = @mb for @gpu.  The read
 * is in the state pre-init (kbusStatePreInitLocked_GM107), after the attach
 * and before the decision in the state load (kbusStatePostLoad_GM107 ->
 * kbusInitBar1), once per attach: so the GPU is known by its OBJGPU here,
 * not by the attaching thread.
 */
void p2ps_gpu_user_aperture(struct OBJGPU *gpu, u32 mb)
{
	unsigned long flags;
	int i;

	p2ps_lock(&gpus_lock, flags);
	for (i = 0; gpu && i < NV_MAX_DEVICES; i++)
		if (gpus[i].gpu == gpu && gpus[i].seen) {
			gpus[i].facts.aperture = (u64)mb << 20;
			break;
		}
	spin_unlock_irqrestore(&gpus_lock, flags);
}

static const char *p2ps_gpu_attach_return(void *data, struct pt_regs *regs)
{
	struct attach_call *c = data;
	struct p2ps_gpu *g;
	unsigned long flags;

	if (c->instance >= NV_MAX_DEVICES)
		return NULL;
	p2ps_lock(&gpus_lock, flags);
	g = &gpus[c->instance];
	settle(g);
	WRITE_ONCE(g->attaching, NULL);
	/*
	 * A failed attach that went through gpumgrAttach_error_and_exit
	 * (osDpcDetachGpu named it) freed the OBJGPU and left nothing
	 * attached: forget it all, its module reference too.  Any other
	 * failed attach keeps its ForceP2P mark (and the reference): one late
	 * error return of gpumgrAttachGpu leaves the GPU attached with a
	 * ForceP2P and never detached, so forgetting it could let its pairs
	 * past the guard, which works by instance; but its pointer must not
	 * stay here for another GPU to be mistaken for it.  The next attach of
	 * this instance, or nvidia's exit, clears the rest.
	 */
	if ((u32)regs_return_value(regs) != NV_OK) {
		if (READ_ONCE(g->attach_freed))
			forget(g);
		else
			g->gpu = NULL;
	}
	spin_unlock_irqrestore(&gpus_lock, flags);
	return NULL;
}

/* gpumgrDetachGpu(NvU32 gpuInstance) */
struct detach_call {
	u32 instance;
};
static_assert(sizeof(struct detach_call) <= P2PS_RET_DATA_SIZE);

/* NMI context: single stores only. */
static void p2ps_gpu_detach_entry(void *data, struct pt_regs *regs)
{
	struct detach_call *c = data;
	int i;

	c->instance = regs_get_kernel_argument(regs, 0);
	if (c->instance >= NV_MAX_DEVICES)
		return;
	/* A slot still naming this thread lost its return (a missed kretprobe instance). */
	for (i = 0; i < NV_MAX_DEVICES; i++)
		cmpxchg(&gpus[i].detaching, current, NULL);
	WRITE_ONCE(gpus[c->instance].leaving, NULL);
	WRITE_ONCE(gpus[c->instance].detaching, current);
}

/*
 * osDpcDetachGpu(OBJGPU *pGpu), at entry: gpumgrDetachGpu calls it, on the
 * detaching thread, with the OBJGPU it is about to free (every tag from
 * 550 to 595).  Its other caller, gpumgrAttach's error path, frees a GPU
 * that is still attaching: the attach's return forgets it
 * (attach_freed).  NMI context: single stores only.
 */
static void p2ps_gpu_leaving(struct pt_regs *regs)
{
	struct OBJGPU *gpu = (struct OBJGPU *)regs_get_kernel_argument(regs, 0);
	int i;

	for (i = 0; i < NV_MAX_DEVICES; i++) {
		if (gpu && READ_ONCE(gpus[i].detaching) == current)
			WRITE_ONCE(gpus[i].leaving, gpu);
		/* gpumgrAttach_error_and_exit: the OBJGPU is freed, no detach follows. */
		if (READ_ONCE(gpus[i].attaching) == current)
			WRITE_ONCE(gpus[i].attach_freed, true);
	}
}

/*
 * gpumgrDetachGpu's return: the OBJGPU has been freed and the next attach
 * may get the same address, so nothing keyed by its pointer may survive
 * (ledger, UVM peer tags).  Its pointer is the one the detach named, or
 * the one we bound at its attach.  Still under the driver's API lock, so
 * no attach has reused it yet.
 */
static const char *p2ps_gpu_detach_return(void *data, struct pt_regs *regs)
{
	struct detach_call *c = data;
	struct OBJGPU *gpu;
	struct p2ps_gpu *g;
	unsigned long flags;

	if (c->instance >= NV_MAX_DEVICES)
		return NULL;
	p2ps_lock(&gpus_lock, flags);
	g = &gpus[c->instance];
	gpu = READ_ONCE(g->leaving) ?: g->gpu;
	forget(g);
	spin_unlock_irqrestore(&gpus_lock, flags);
	p2ps_policies_forget_gpu(gpu);
	return NULL;
}

/*
 * A GPU reads ForceP2P: if its thread is inside an attach, @gpu is that
 * GPU's new OBJGPU.  Returns false for a read we cannot place: the caller
 * must not supply ForceP2P then, since the caps guard could not find the
 * GPU again.
 */
bool p2ps_gpu_bind(struct OBJGPU *gpu)
{
	struct p2ps_gpu *g = NULL;
	unsigned long flags;
	int i;

	p2ps_lock(&gpus_lock, flags);
	if (gpu)
		g = attaching_slot();
	/*
	 * Another slot naming this OBJGPU lost its detach's return (the
	 * purge is there): that GPU was freed and this one has its memory.
	 * Its record and reference go, so that what follows is this slot's.
	 */
	for (i = 0; g && i < NV_MAX_DEVICES; i++)
		if (&gpus[i] != g && gpus[i].gpu == gpu)
			forget(&gpus[i]);
	if (g)
		g->gpu = gpu;
	spin_unlock_irqrestore(&gpus_lock, flags);
	return g != NULL;
}

/*
 * Whether @gpu's ForceP2P comes from us (after p2ps_gpu_bind()); false if
 * it cannot (the module is going away, or the GPU is unknown).
 */
bool p2ps_gpu_set_forced(struct OBJGPU *gpu, bool forced)
{
	unsigned long flags;
	bool done = false;
	int i;

	p2ps_lock(&gpus_lock, flags);
	for (i = 0; gpu && i < NV_MAX_DEVICES; i++)
		if (gpus[i].gpu == gpu) {
			done = set_forced(&gpus[i], forced);
			break;
		}
	spin_unlock_irqrestore(&gpus_lock, flags);
	return done;
}

/* The driver asks about the GPUs of @mask: note those we never saw attach. */
void p2ps_gpus_asked(u32 mask)
{
	unsigned long flags, bits = mask;
	int i;

	p2ps_lock(&gpus_lock, flags);
	for_each_set_bit(i, &bits, NV_MAX_DEVICES)
		if (!gpus[i].gpu && !READ_ONCE(gpus[i].attaching))
			gpus[i].stale = true;
	for (i = 0; i < NR_ASKERS && askers[i].task != current; i++)
		;
	if (i == NR_ASKERS) {
		i = askers_next;
		askers_next = (askers_next + 1) % NR_ASKERS;
	}
	askers[i].task = current;
	askers[i].mask = mask;
	spin_unlock_irqrestore(&gpus_lock, flags);
}

/* The GPUs this thread's last caps query named (0: none since), taken. */
u32 p2ps_gpus_take_asked(void)
{
	unsigned long flags;
	u32 mask = 0;
	int i;

	p2ps_lock(&gpus_lock, flags);
	for (i = 0; i < NR_ASKERS; i++)
		if (askers[i].task == current) {
			mask = askers[i].mask;
			askers[i].task = NULL;
			askers[i].mask = 0;
		}
	spin_unlock_irqrestore(&gpus_lock, flags);
	return mask;
}

/* For the caps guard: whether any GPU of @mask carries a forcing ForceP2P. */
bool p2ps_gpus_forced_in(u32 mask)
{
	return p2ps_gpus_forced() & mask;
}

/* The instance of @gpu, if it attached under our hooks; else U32_MAX. */
u32 p2ps_gpu_instance(struct OBJGPU *gpu)
{
	unsigned long flags;
	u32 instance = U32_MAX;
	int i;

	p2ps_lock(&gpus_lock, flags);
	for (i = 0; gpu && i < NV_MAX_DEVICES && instance == U32_MAX; i++)
		if (gpus[i].gpu == gpu)
			instance = i;
	spin_unlock_irqrestore(&gpus_lock, flags);
	return instance;
}

static u32 mask_of(bool (*test)(const struct p2ps_gpu *g))
{
	unsigned long flags;
	u32 mask = 0;
	int i;

	p2ps_lock(&gpus_lock, flags);
	for (i = 0; i < NV_MAX_DEVICES; i++)
		if (test(&gpus[i]))
			mask |= BIT(i);
	spin_unlock_irqrestore(&gpus_lock, flags);
	return mask;
}

static bool is_stale(const struct p2ps_gpu *g)
{
	return g->stale;
}

static bool is_forced(const struct p2ps_gpu *g)
{
	return g->forced;
}

/* GPUs the driver asked about that were initialised before arming. */
u32 p2ps_gpus_stale(void)
{
	return mask_of(is_stale);
}

/* Attached GPUs that carry a ForceP2P that forces P2P. */
u32 p2ps_gpus_forced(void)
{
	return mask_of(is_forced);
}

static const struct p2ps_hook_ops gpus_attach_ops = {
	.entry = p2ps_gpu_attach_entry, .ret = p2ps_gpu_attach_return, .residual = true,
};
static const struct p2ps_hook_ops gpus_detach_ops = {
	.entry = p2ps_gpu_detach_entry, .ret = p2ps_gpu_detach_return, .residual = true,
};
static const struct p2ps_hook_ops gpus_leaving_ops = { .arg = p2ps_gpu_leaving, .residual = true };

/* The profile's actions whose hooks are this file's (policy.c: p2ps_policies_ops()). */
static const struct p2ps_action_ops gpus_actions[] = {
	{ P2PS_ACT_GPU_ATTACH, &gpus_attach_ops },
	{ P2PS_ACT_GPU_DETACH, &gpus_detach_ops },
	{ P2PS_ACT_GPU_LEAVING, &gpus_leaving_ops },
	{ P2PS_ACT_NONE, NULL },
};

/* Not a policy: a table of actions only, for the GPU table's own hooks. */
const struct p2ps_policy p2ps_gpus_policy = {
	.name = "GPU table",
	.actions = gpus_actions,
};
