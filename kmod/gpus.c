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
 * outlives its GPU.
 *
 * A GPU the driver asks about (a P2P caps query names it) that we never saw
 * attach was initialised before arming: it read the registry without us.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/sched.h>
#include <linux/spinlock.h>

#include "p2p-shim.h"

struct p2ps_gpu {
	struct OBJGPU *gpu;	/* while attached under our hooks, else NULL */
	struct task_struct *attaching;	/* the thread inside gpumgrAttachGpu */
	bool forced;		/* its ForceP2P came from us */
	bool stale;		/* asked about, but attached before arming */
};

static struct p2ps_gpu gpus[NV_MAX_DEVICES];
static DEFINE_SPINLOCK(gpus_lock);

static unsigned int nr_forced;	/* GPUs with forced set */

/*
 * Called with gpus_lock held.  A GPU carrying our ForceP2P holds a
 * reference on this module until it detaches (or nvidia leaves): without
 * the caps guard its pairs would be offered the mailbox path, so rmmod is
 * refused meanwhile (docs/lifecycle.md).  Returns false if the reference
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
		p2ps_residual_done();
	module_put(THIS_MODULE);
	return true;
}

static void forget(struct p2ps_gpu *g)
{
	set_forced(g, false);
	memset(g, 0, sizeof(*g));
	p2ps_sb1_forget(g - gpus);
}

/* At arming and disarming: without the hooks, the table would go stale. */
void p2ps_gpus_reset(void)
{
	unsigned long flags;
	int i;

	p2ps_sb1_flush();
	spin_lock_irqsave(&gpus_lock, flags);
	for (i = 0; i < NV_MAX_DEVICES; i++)
		forget(&gpus[i]);
	spin_unlock_irqrestore(&gpus_lock, flags);
}

/* gpumgrAttachGpu(NvU32 gpuInstance, GPUATTACHARG *pAttachArg) */
struct attach_call {
	u32 instance;
};
static_assert(sizeof(struct attach_call) <= P2PS_RET_DATA_SIZE);

static void p2ps_gpu_attach_entry(void *data, struct pt_regs *regs)
{
	struct attach_call *c = data;
	unsigned long flags;
	int i;

	c->instance = regs_get_kernel_argument(regs, 0);
	if (c->instance >= NV_MAX_DEVICES)
		return;
	spin_lock_irqsave(&gpus_lock, flags);
	/* A slot still naming this thread lost its return (a hand-over). */
	for (i = 0; i < NV_MAX_DEVICES; i++)
		if (gpus[i].attaching == current)
			gpus[i].attaching = NULL;
	forget(&gpus[c->instance]);
	gpus[c->instance].attaching = current;
	spin_unlock_irqrestore(&gpus_lock, flags);
	p2ps_sb1_attach(c->instance, (const void *)regs_get_kernel_argument(regs, 1));
}

/* The instance this thread is attaching, or U32_MAX. */
u32 p2ps_gpu_attaching(void)
{
	unsigned long flags;
	u32 instance = U32_MAX;
	int i;

	spin_lock_irqsave(&gpus_lock, flags);
	for (i = 0; i < NV_MAX_DEVICES; i++)
		if (gpus[i].attaching == current)
			instance = i;
	spin_unlock_irqrestore(&gpus_lock, flags);
	return instance;
}

static const char *p2ps_gpu_attach_return(void *data, struct pt_regs *regs)
{
	struct attach_call *c = data;
	struct p2ps_gpu *g;
	unsigned long flags;

	if (c->instance >= NV_MAX_DEVICES)
		return NULL;
	spin_lock_irqsave(&gpus_lock, flags);
	g = &gpus[c->instance];
	g->attaching = NULL;
	/*
	 * A failed attach keeps its ForceP2P mark (and the module reference):
	 * one late error return of gpumgrAttachGpu leaves the GPU attached
	 * with our ForceP2P and never detached, so forgetting it could let
	 * its pairs past the guard, which works by instance.  But the others
	 * (gpumgrAttach_error_and_exit) free the OBJGPU without a detach: its
	 * pointer must not stay here for another GPU to be mistaken for it.
	 * The next attach of this instance, or nvidia's exit, clears the rest.
	 */
	if ((u32)regs_return_value(regs) != NV_OK)
		g->gpu = NULL;
	spin_unlock_irqrestore(&gpus_lock, flags);
	return NULL;
}

/*
 * gpumgrDetachGpu(NvU32 gpuInstance), at entry.  The OBJGPU is freed next
 * and the next attach may get the same address: nothing keyed by this
 * pointer may survive (ledger, UVM peer tags).
 */
static void p2ps_gpu_detach(struct pt_regs *regs)
{
	u32 instance = regs_get_kernel_argument(regs, 0);
	struct OBJGPU *gpu;
	unsigned long flags;

	if (instance >= NV_MAX_DEVICES)
		return;
	spin_lock_irqsave(&gpus_lock, flags);
	gpu = gpus[instance].gpu;
	forget(&gpus[instance]);
	spin_unlock_irqrestore(&gpus_lock, flags);
	p2ps_ledger_forget_gpu(gpu);
	p2ps_uvm_peer_forget_gpu(gpu);
}

/*
 * A GPU reads ForceP2P: if its thread is inside an attach, @gpu is that
 * GPU's new OBJGPU.  Returns false for a read we cannot place: the caller
 * must not supply ForceP2P then, since the caps guard could not find the
 * GPU again.
 */
bool p2ps_gpu_bind(struct OBJGPU *gpu)
{
	unsigned long flags;
	bool bound = false;
	int i;

	spin_lock_irqsave(&gpus_lock, flags);
	for (i = 0; gpu && i < NV_MAX_DEVICES; i++) {
		if (gpus[i].attaching == current) {
			gpus[i].gpu = gpu;
			bound = true;
			break;
		}
	}
	spin_unlock_irqrestore(&gpus_lock, flags);
	return bound;
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

	spin_lock_irqsave(&gpus_lock, flags);
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

	spin_lock_irqsave(&gpus_lock, flags);
	for_each_set_bit(i, &bits, NV_MAX_DEVICES)
		if (!gpus[i].gpu && !gpus[i].attaching)
			gpus[i].stale = true;
	spin_unlock_irqrestore(&gpus_lock, flags);
}

/* For the caps guard: whether any GPU of @mask carries our ForceP2P. */
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

	spin_lock_irqsave(&gpus_lock, flags);
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

	spin_lock_irqsave(&gpus_lock, flags);
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

/* Attached GPUs that carry our ForceP2P. */
u32 p2ps_gpus_forced(void)
{
	return mask_of(is_forced);
}

const struct p2ps_hook_ops p2ps_gpu_attach_ops = {
	.entry = p2ps_gpu_attach_entry, .ret = p2ps_gpu_attach_return, .residual = true,
};
const struct p2ps_hook_ops p2ps_gpu_detach_ops = { .arg = p2ps_gpu_detach, .residual = true };
