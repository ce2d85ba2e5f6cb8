// SPDX-License-Identifier: GPL-2.0
/*
 * Static BAR1, per GPU: what the driver decided, and where its automatic
 * rule says no although the GPU's memory fits, turning that "no" into "yes"
 * (570 and later).  docs/cards.md has the driver's rules per version.
 *
 * BAR1 P2P needs static BAR1 (all of the GPU's memory mapped through BAR1
 * once) on both GPUs.  kbusInitBar1_GM107 decides it per GPU with
 * kbusIsStaticBar1Supported_TU102(pGpu, pKernelBus, gfid, consoleSize,
 * mailboxSize) and then calls kbusEnableStaticBar1Mapping_TU102, which maps
 * memmgrGetClientFbAddrSpaceSize() bytes of video memory (570-575: at the
 * lowest free 2 MiB-aligned BAR1 address, i.e. after the console and the
 * mailbox; 580+: at ALIGN_UP(console + mailbox, 512 MiB)).  The automatic
 * rule counts the whole FB address space plus reserves: an RTX 5090
 * (BAR1 32768 MiB, client FB 32607 MiB, FB 32768 MiB) fails it by a few
 * MiB although its client FB fits with 160 MiB to spare.
 *
 * Everything is learnt from hooked calls, never by calling the driver or
 * reading its objects:
 *   - BAR1's bus address and size: gpumgrAttachGpu's GPUATTACHARG
 *     (fbPhysAddr, fbLength: osinit.c fills them with nv->fb), a plain
 *     struct whose first fields are the same in every tag from 550 to 595;
 *     checked for sense (a naturally aligned power of two) before use;
 *   - the console and mailbox sizes: the decision's own arguments;
 *   - the client FB: memmgrGetClientFbAddrSpaceSize_IMPL's return value,
 *     which only the static BAR1 code calls (kern_bus_tu102.c).
 *
 * Forcing: where the decision returns NV_ERR_NOT_SUPPORTED for a GPU that
 * attached under our hooks and whose user did not set RMForceStaticBar1
 * (nor RMBar1ApertureSizeMB below the PCI BAR: the driver's rules then use
 * that smaller aperture, which the sizes here do not see), whose P2P type is BAR1 (no mailbox reserved: RMForceP2PType=2 up to 570,
 * RMPcieP2PType=1 from 575, p2p-shim's defaults), and where the placement
 * can work (570-575: no console below static BAR1, since the 2 MiB-aligned
 * placement after it fails BAR1 P2P's 512 MiB alignment check in
 * _kbusCreateStaticBar1IOMMUMapping; 580+: any, at 512 MiB after a
 * console), the return becomes NV_OK.  In the enable that follows on the same thread,
 * the client FB size is checked against BAR1: static BAR1 at its offset
 * plus 64 MiB for dynamic BAR1 mappings (USERD, doorbells) must fit.  If it
 * does not, the size read returns BAR1's size plus 2 MiB, so the enable's
 * one BAR1 allocation fails as it does when BAR1 is too small (its error
 * path undoes everything: kern_bus_tu102.c cleanup_mem), and the enable's
 * failure becomes NV_OK: the GPU initialises without static BAR1, as if
 * the rule had said no.  Any other failure of a forced enable is turned
 * into "no static BAR1" the same way, so a forced static BAR1 never fails
 * GPU initialisation.  The driver logs its own "Failed to create the
 * static bar1 mapping" line then.
 *
 * 565 decides before the console and mailbox exist (NvBool, 3 arguments):
 * observed only.
 *
 * A forced decision counts itself in the in-flight gate (gate.c) as the
 * wrappers do: one closing gate then stops new forcing and new BAR1
 * mappings alike while a disable decides, and the disable sees a forcing
 * in flight (sb1_busy()).  The rules themselves are sb1rule.c's.
 *
 * Gen 0's variant (550, 560: static BAR1 set up by the hooks themselves)
 * is static_bar1_gen0.c; it asks this file to hold its decision in flight
 * (p2ps_sb1_capable_begin()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <p2p-shim/sb1rule.h>
#include <p2p-shim/uapi.h>

#include "faults.h"
#include "gate.h"
#include "gpus.h"
#include "hook.h"
#include "nmi.h"
#include "nv.h"
#include "pcifns.h"
#include "policy.h"
#include "registry.h"
#include "static_bar1.h"

static bool force_static_bar1 = true;
module_param_named(static_bar1, force_static_bar1, bool, 0644);
MODULE_PARM_DESC(static_bar1,
		 "Turn static BAR1 on where the driver's rule says no but the GPU's memory fits (570+; default: yes)");

#define NV_ERR_INVALID_ARGUMENT	0x0000001F

/* GPUATTACHARG (g_gpu_mgr_nvoc.h, 550-595): fbPhysAddr, fbLength. */
#define GPUATTACHARG_FB_PHYS_ADDR	32
#define GPUATTACHARG_FB_LENGTH		72

struct sb1_gpu {
	bool seen;			/* attached under our hooks */
	bool decided;			/* the decision ran while we watched */
	bool gated;			/* a forced enable found BAR1 too small */
	bool not_size;			/* ... or so large that the "no" was not about size */
	u64 bar1_addr, bar1_size;	/* 0: unknown */
	u64 console, mailbox;
	u64 client_fb;
	u64 offset;
	struct task_struct *forcing;	/* between a forced decision and its enable */
	struct task_struct *inflight;	/* a decision in flight, holding the module: inflight_begin() */
	u64 ioh;			/* 0: not below an Intel IOH root port; else its root bus + 1 */
	u64 sw;				/* 0: below no PCIe switch; else its upstream port + 1 */
	u32 pci_id;			/* vendor << 16 | device; 0: unknown (gpurule.h) */
	u32 state;			/* enum p2ps_sb1_state */
	char reason[P2PS_REASON_LEN];
};

static struct sb1_gpu sb1[NV_MAX_DEVICES];
static DEFINE_SPINLOCK(sb1_lock);
static unsigned int sb1_major;	/* the bound driver's major version */
static bool sb1_native_uvm;	/* gen A's UVM fix also covers native-slot pairs */

/*
 * At arming: the driver's major version, and whether the profile feeds gen
 * A's UVM fix from BAR1 pairs the driver creates through its own _GH100
 * slots (GB20x from 570.86.16; issue 13).  Without that, 570-575 would
 * report a forced GB20x pair as BAR1 P2P while CUDA's peer mappings of it
 * keep the PEER aperture: so no forcing there.
 */
static int sb1_bind(struct module *mod, const struct p2ps_profile *profile,
		    struct p2ps_hook *hooks, unsigned int n, struct p2ps_arm_error *err)
{
	unsigned int major = p2ps_driver_major(mod->version), i;
	bool native_uvm = false;

	for (i = 0; i < n; i++)
		if (!strcmp(hooks[i].desc->target, "kbusCreateP2PMappingForBar1P2P_GH100"))
			native_uvm = true;
	WRITE_ONCE(sb1_major, major);
	WRITE_ONCE(sb1_native_uvm, native_uvm);
	return 0;
}

__printf(2, 3)
static void why(struct sb1_gpu *g, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->reason, sizeof(g->reason), fmt, ap);
	va_end(ap);
}

static u64 mib(u64 v)
{
	return v >> 20;
}

/*
 * A static BAR1 decision in flight: from the answer that leads to an
 * enable (570+: a "no" forced into "yes"; gen 0: the wrapped "BAR1 P2P
 * capable: yes") to the return of that enable.  Removing the hooks in
 * between fails the GPU's initialisation (570+: the forced enable's
 * failure is no longer turned into "no static BAR1"; gen 0: the enable's
 * redirect is gone and the stub says NOT_SUPPORTED).  So it holds a module
 * reference (rmmod is refused) and a disable is refused meanwhile
 * (sb1_busy()).  This is the one place that decides what a
 * decision in flight is.  With sb1_lock held; false if rmmod is under way.
 */
static bool inflight_begin(struct sb1_gpu *g)
{
	if (g->inflight == current)
		return true;
	if (g->inflight || !try_module_get(THIS_MODULE))
		return false;
	g->inflight = current;
	return true;
}

static void inflight_end(struct sb1_gpu *g)
{
	if (!g->inflight)
		return;
	g->inflight = NULL;
	module_put(THIS_MODULE);
}

/* A record starts afresh (attach, detach, reset): a decision in flight is over. */
static void record_reset(struct sb1_gpu *g)
{
	inflight_end(g);
	memset(g, 0, sizeof(*g));
}

/* With gpus_lock held (gpus.c): the GPU's record goes. */
static void sb1_forget(unsigned int instance)
{
	unsigned long flags;

	if (instance >= NV_MAX_DEVICES)
		return;
	p2ps_lock(&sb1_lock, flags);
	record_reset(&sb1[instance]);
	spin_unlock_irqrestore(&sb1_lock, flags);
}

/*
 * Gen 0: the wrapped kbusIsBar1P2PCapable said yes for @gpu, so its static
 * BAR1 enable follows (kbusInitBar1): in flight until that returns.  False
 * if it cannot be held (rmmod under way): the GPU then gets no static BAR1.
 */
bool p2ps_sb1_capable_begin(struct OBJGPU *gpu)
{
	u32 instance = p2ps_gpu_instance(gpu);
	unsigned long flags;
	bool held;

	if (instance >= NV_MAX_DEVICES)
		return false;
	p2ps_lock(&sb1_lock, flags);
	held = inflight_begin(&sb1[instance]);
	spin_unlock_irqrestore(&sb1_lock, flags);
	return held;
}

/*
 * For the caps guard: the records of @mask's GPUs, read under the lock
 * into @set for sb1rule.c's p2ps_caps_verdict().  This table is the one
 * record of static BAR1 (the GPU table keeps none).
 */
void p2ps_sb1_gather(u32 mask, struct p2ps_caps_set *set)
{
	unsigned long flags, bits = mask;
	int i;

	p2ps_lock(&sb1_lock, flags);
	for_each_set_bit(i, &bits, NV_MAX_DEVICES)
		p2ps_caps_add(set, sb1[i].state, sb1[i].offset, sb1[i].ioh, sb1[i].sw,
			      sb1[i].pci_id);
	spin_unlock_irqrestore(&sb1_lock, flags);
}

/*
 * gpumgrAttachGpu(gpuInstance, pAttachArg), as it begins (gpus.c settle(),
 * with gpus_lock held): BAR1 from the argument; the PCI facts of the
 * function at @dbd, the address the argument names (U64_MAX: none), from
 * the table gathered before (pcifns.c), so a caps query right after the
 * attach has them.  A GPU with none has no PCI ID: its pairs fail closed.
 */
static void sb1_attach(unsigned int instance, const void *arg, u64 dbd)
{
	struct p2ps_pcifn_facts pci = {};
	u64 addr = 0, size = 0;
	unsigned long flags;
	struct sb1_gpu *g;

	if (instance >= NV_MAX_DEVICES)
		return;
	if (dbd != U64_MAX)
		p2ps_pcifn_facts(dbd, &pci);
	/* The test build's stand-in for another board (faults.c). */
	if (dbd != U64_MAX && p2ps_fault_pci_id(instance))
		pci.pci_id = p2ps_fault_pci_id(instance);
	if (!arg ||
	    copy_from_kernel_nofault(&addr, arg + GPUATTACHARG_FB_PHYS_ADDR, sizeof(addr)) ||
	    copy_from_kernel_nofault(&size, arg + GPUATTACHARG_FB_LENGTH, sizeof(size)))
		addr = size = 0;
	/* A BAR is a power of two, naturally aligned; anything else: a wrong layout. */
	if (size < SZ_16M || !is_power_of_2(size) || (addr & (size - 1)))
		addr = size = 0;
	p2ps_lock(&sb1_lock, flags);
	g = &sb1[instance];
	record_reset(g);
	g->seen = true;
	g->bar1_addr = addr;
	g->bar1_size = size;
	g->ioh = pci.ioh;
	g->sw = pci.sw;
	g->pci_id = pci.pci_id;
	why(g, size ? "no decision seen yet" : "BAR1 size unknown (attach argument not recognised)");
	spin_unlock_irqrestore(&sb1_lock, flags);
}

/* kbusIsStaticBar1Supported_TU102(pGpu, pKernelBus, gfid, consoleSize, mailboxSize) */
struct decide_call {
	struct OBJGPU *gpu;
	u32 gfid;
	u64 console, mailbox;
};
static_assert(sizeof(struct decide_call) <= P2PS_RET_DATA_SIZE);

static void p2ps_sb1_decide_entry(void *data, struct pt_regs *regs)
{
	struct decide_call *c = data;

	c->gpu = (struct OBJGPU *)regs_get_kernel_argument(regs, 0);
	c->gfid = regs_get_kernel_argument(regs, 2);
	c->console = regs_get_kernel_argument(regs, 3);
	c->mailbox = regs_get_kernel_argument(regs, 4);
}

/*
 * Why static BAR1 cannot be forced on @g, or NULL; sets g->offset
 * (sb1rule.c's rule).  @f: what the GPU table has of its attach.
 */
static const char *no_force(struct sb1_gpu *g, const struct p2ps_gpu_facts *f,
			    unsigned int major)
{
	struct p2ps_sb1_force_in in = {
		.major = major,
		.enabled = READ_ONCE(force_static_bar1),
		.user_key = f->user_static_bar1,
		.native_uvm = READ_ONCE(sb1_native_uvm),
		.bar1_size = g->bar1_size,
		.aperture = f->aperture,
		.console = g->console,
		.mailbox = g->mailbox,
	};
	unsigned int no;
	u64 offset;

	/* A GPU registry_gpus= leaves out is not p2p-shim's (review F6). */
	if (!p2ps_registry_scoped(f->dbd))
		return "not among registry_gpus=";
	no = p2ps_sb1_no_force(&in, &offset);
	if (!(no & ~P2PS_NF_NO_ROOM))
		g->offset = offset;
	return p2ps_sb1_no_force_text(no);
}

static const char *p2ps_sb1_decide_return(void *data, struct pt_regs *regs)
{
	struct decide_call *c = data;
	u32 instance = p2ps_gpu_instance(c->gpu);
	unsigned int major = READ_ONCE(sb1_major);
	u32 ret = regs_return_value(regs);
	struct p2ps_gpu_facts facts;
	unsigned long flags;
	struct sb1_gpu *g;
	const char *no;
	bool open;

	if (instance >= NV_MAX_DEVICES)
		return NULL;
	/* Before sb1_lock: gpus.c takes it under its own (sb1_forget()). */
	p2ps_gpu_facts(instance, &facts);
	/* Inside the in-flight gate: a disable deciding sees this forcing (gate.c). */
	open = p2ps_gate_enter();
	p2ps_lock(&sb1_lock, flags);
	g = &sb1[instance];
	g->decided = true;
	g->forcing = NULL;
	g->gated = false;
	g->not_size = false;
	if (major < 570) {
		/* 565: NvBool, decided before the console and mailbox; placed at 0. */
		g->offset = p2ps_sb1_offset(major, 0, 0);
		g->state = (ret & 0xff) ? P2PS_SB1_ON : P2PS_SB1_OFF;
		why(g, "%s", (ret & 0xff) ? "the driver's rule" : p2ps_sb1_no_force_text(P2PS_NF_OLD));
		goto out;
	}
	if (c->gfid)
		goto out;
	g->console = c->console;
	g->mailbox = c->mailbox;
	if (ret == NV_OK) {
		g->state = P2PS_SB1_ON;
		g->offset = p2ps_sb1_offset(major, g->console, g->mailbox);
		why(g, "the driver's rule");
		goto out;
	}
	g->state = P2PS_SB1_OFF;
	if (ret != NV_ERR_NOT_SUPPORTED) {
		why(g, "the driver's rule failed (0x%x): BAR1 initialisation fails", ret);
		goto out;
	}
	no = open ? no_force(g, &facts, major) :
		    "the driver's rule says no; not forced: p2p-shim is being disabled";
	if (no) {
		why(g, "%s", no);
		goto out;
	}
	if (!inflight_begin(g)) {
		why(g, "the driver's rule says no; not forced: p2p-shim is being unloaded");
		goto out;
	}
	g->forcing = current;
	why(g, "forcing: BAR1 %llu MiB, static BAR1 at %llu MiB; until its enable returns (or the GPU detaches) p2p-shim is held",
	    mib(g->bar1_size), mib(g->offset));
	regs_set_return_value(regs, NV_OK);
out:
	spin_unlock_irqrestore(&sb1_lock, flags);
	p2ps_gate_exit();
	return NULL;
}

/* memmgrGetClientFbAddrSpaceSize_IMPL(pGpu, pMemoryManager) */
struct client_fb_call {
	struct OBJGPU *gpu;
};
static_assert(sizeof(struct client_fb_call) <= P2PS_RET_DATA_SIZE);

static void p2ps_sb1_client_fb_entry(void *data, struct pt_regs *regs)
{
	struct client_fb_call *c = data;

	c->gpu = (struct OBJGPU *)regs_get_kernel_argument(regs, 0);
}

static const char *p2ps_sb1_client_fb_return(void *data, struct pt_regs *regs)
{
	struct client_fb_call *c = data;
	u32 instance = p2ps_gpu_instance(c->gpu);
	unsigned int major = READ_ONCE(sb1_major);
	u64 size = regs_return_value(regs);
	enum p2ps_sb1_gate gate;
	unsigned long flags;
	struct sb1_gpu *g;

	if (instance >= NV_MAX_DEVICES)
		return NULL;
	p2ps_lock(&sb1_lock, flags);
	g = &sb1[instance];
	g->client_fb = size;
	if (g->forcing == current) {
		gate = p2ps_sb1_gate(major, g->offset, size, g->bar1_size);
		g->not_size = gate == P2PS_GATE_NOT_SIZE;
		if (gate != P2PS_GATE_FITS) {
			/*
			 * Make the enable fail where the driver's own mapping
			 * fails when BAR1 is too small: a size larger than
			 * BAR1's VA heap, which the BAR1 allocation refuses.
			 * (Not 0: only 580.142's memdescCreate refuses that.)
			 */
			g->gated = true;
			if (size < g->bar1_size + SZ_2M)
				regs_set_return_value(regs, g->bar1_size + SZ_2M);
		}
	}
	spin_unlock_irqrestore(&sb1_lock, flags);
	return NULL;
}

/* kbusEnableStaticBar1Mapping_TU102(pGpu, pKernelBus, gfid[, bar1Offset]) */
struct enable_call {
	struct OBJGPU *gpu;
	u64 offset;
};
static_assert(sizeof(struct enable_call) <= P2PS_RET_DATA_SIZE);

/*
 * Why a driver's "no" may not be about size, where BAR1 has room to spare
 * (kern_bus_tu102.c's kbusIsStaticBar1Supported_TU102): 575's default
 * RMForceStaticBar1 is DISABLE; 580.82.07 and later refuse on a vGPU host,
 * 580 and later in confidential computing.
 */
static const char *not_size_cause(unsigned int major)
{
	if (major >= 580)
		return " (vGPU host or confidential computing?)";
	if (major >= 575)
		return ": 575 leaves static BAR1 off unless RMForceStaticBar1 is set "
		       "(registry_defaults=0: p2pctl config --registry sets it per device)";
	return "";
}

static void p2ps_sb1_enable_entry(void *data, struct pt_regs *regs)
{
	struct enable_call *c = data;

	c->gpu = (struct OBJGPU *)regs_get_kernel_argument(regs, 0);
	c->offset = regs_get_kernel_argument(regs, 3);
}

static const char *p2ps_sb1_enable_return(void *data, struct pt_regs *regs)
{
	struct enable_call *c = data;
	u32 instance = p2ps_gpu_instance(c->gpu);
	unsigned int major = READ_ONCE(sb1_major);
	u32 st = regs_return_value(regs), failed = st;
	unsigned long flags;
	struct sb1_gpu *g;
	bool forcing;

	if (instance < NV_MAX_DEVICES) {
		p2ps_lock(&sb1_lock, flags);
		g = &sb1[instance];
		forcing = g->forcing == current;
		g->forcing = NULL;
		if (g->inflight == current)
			inflight_end(g);
		if (st == NV_OK) {
			if (major >= 580)
				g->offset = c->offset;
			if (forcing) {
				g->state = P2PS_SB1_FORCED;
				why(g, "forced by p2p-shim: the driver's rule says no, but BAR1 %llu MiB "
				    "holds the client FB %llu MiB at %llu MiB",
				    mib(g->bar1_size), mib(g->client_fb), mib(g->offset));
			} else if (g->state != P2PS_SB1_ON) {
				g->state = P2PS_SB1_ON;
				why(g, "the driver's rule");
			}
		} else if (forcing) {
			/* Its error path undid everything: as if the rule had said no. */
			regs_set_return_value(regs, NV_OK);
			st = NV_ERR_NOT_SUPPORTED;
			g->state = P2PS_SB1_OFF;
			if (g->gated && g->not_size)
				why(g, "the driver's rule says no%s; BAR1 %llu MiB holds the client FB "
				    "%llu MiB with room to spare: not forced", not_size_cause(major),
				    mib(g->bar1_size), mib(g->client_fb));
			else if (g->gated)
				why(g, "the driver's rule says no; BAR1 %llu MiB cannot hold the client FB "
				    "%llu MiB at %llu MiB plus %u MiB: not forced",
				    mib(g->bar1_size), mib(g->client_fb), mib(g->offset),
				    (unsigned int)(P2PS_SB1_DYNAMIC_RESERVE >> 20));
			else
				why(g, "the driver's rule says no; forcing it failed to map (0x%x): left off",
				    failed);
		} else {
			g->state = P2PS_SB1_FAILED;
			why(g, "the driver's static BAR1 mapping failed (0x%x): BAR1 initialisation fails",
			    st);
		}
		g->gated = false;
		g->not_size = false;
		spin_unlock_irqrestore(&sb1_lock, flags);
	}
	return NULL;
}

/* kbusDisableStaticBar1Mapping_TU102(pGpu, pKernelBus, gfid): its return. */
struct disable_call {
	struct OBJGPU *gpu;
};
static_assert(sizeof(struct disable_call) <= P2PS_RET_DATA_SIZE);

static void p2ps_sb1_disable_entry(void *data, struct pt_regs *regs)
{
	struct disable_call *c = data;

	c->gpu = (struct OBJGPU *)regs_get_kernel_argument(regs, 0);
}

static const char *p2ps_sb1_disable_return(void *data, struct pt_regs *regs)
{
	struct disable_call *c = data;

	p2ps_sb1_torn_down(c->gpu);
	return NULL;
}

/* @gpu's static BAR1 goes (the GPU is being shut down). */
void p2ps_sb1_torn_down(struct OBJGPU *gpu)
{
	u32 instance = p2ps_gpu_instance(gpu);
	unsigned long flags;

	if (instance >= NV_MAX_DEVICES)
		return;
	p2ps_lock(&sb1_lock, flags);
	if (p2ps_sb1_mapped(sb1[instance].state)) {
		sb1[instance].state = P2PS_SB1_OFF;
		why(&sb1[instance], "torn down (the GPU is being shut down)");
	}
	spin_unlock_irqrestore(&sb1_lock, flags);
}

/*
 * The GPUs with a static BAR1 decision in flight (inflight_begin()): a
 * disable is refused (lifecycle.c).  Read after p2ps_gate_close(): no new
 * decision starts then.
 */
static u32 sb1_forcing(void)
{
	unsigned long flags;
	u32 found = 0;
	int i;

	p2ps_lock(&sb1_lock, flags);
	for (i = 0; i < NV_MAX_DEVICES; i++)
		if (sb1[i].inflight)
			found |= BIT(i);
	spin_unlock_irqrestore(&sb1_lock, flags);
	return found;
}

/* The record of GPU @instance for the status dump; false if none. */
bool p2ps_sb1_report(unsigned int instance, struct p2ps_gpu_report *r)
{
	unsigned long flags;
	struct sb1_gpu *g;
	bool seen;

	if (instance >= NV_MAX_DEVICES)
		return false;
	p2ps_lock(&sb1_lock, flags);
	g = &sb1[instance];
	seen = g->seen;
	if (seen) {
		memset(r, 0, sizeof(*r));
		r->instance = instance;
		r->state = g->state;
		r->bar1_addr = g->bar1_addr;
		r->bar1_size = g->bar1_size;
		r->console = g->console;
		r->mailbox = g->mailbox;
		r->client_fb = g->client_fb;
		r->offset = g->offset;
		r->p2p_usable = p2ps_sb1_mapped(g->state) && p2ps_sb1_p2p_usable(g->offset);
		strscpy(r->reason, g->reason, sizeof(r->reason));
		if (g->state == P2PS_SB1_ON && !r->p2p_usable)
			snprintf(r->reason, sizeof(r->reason),
				 "the driver's rule; at BAR1 offset %llu KiB, not 512 MiB aligned: "
				 "BAR1 P2P mappings would fail (the caps guard refuses its pairs)",
				 g->offset >> 10);
	}
	spin_unlock_irqrestore(&sb1_lock, flags);
	return seen;
}

static const struct p2ps_hook_ops static_bar1_decide_ops = {
	.entry = p2ps_sb1_decide_entry, .ret = p2ps_sb1_decide_return,
};
static const struct p2ps_hook_ops static_bar1_client_fb_ops = {
	.entry = p2ps_sb1_client_fb_entry, .ret = p2ps_sb1_client_fb_return,
};
/* Kept in the residual state: the status and the caps guard read them. */
static const struct p2ps_hook_ops static_bar1_enabled_ops = {
	.entry = p2ps_sb1_enable_entry, .ret = p2ps_sb1_enable_return, .residual = true,
};
static const struct p2ps_hook_ops static_bar1_disabled_ops = {
	.entry = p2ps_sb1_disable_entry, .ret = p2ps_sb1_disable_return, .residual = true,
};

/* The profile's actions whose hooks are this file's (policy.c: p2ps_policies_ops()). */
static const struct p2ps_action_ops static_bar1_actions[] = {
	{ P2PS_ACT_STATIC_DECIDE, &static_bar1_decide_ops },
	{ P2PS_ACT_CLIENT_FB, &static_bar1_client_fb_ops },
	{ P2PS_ACT_STATIC_BAR1, &static_bar1_enabled_ops },
	{ P2PS_ACT_STATIC_BAR1_OFF, &static_bar1_disabled_ops },
	{ P2PS_ACT_NONE, NULL },
};

/* A disable is refused while a static BAR1 decision is in flight. */
static bool sb1_busy(char *why, size_t len)
{
	u32 initialising = sb1_forcing();

	if (!initialising)
		return false;
	snprintf(why, len, "GPUs 0x%x are initialising (a static BAR1 decision in "
		 "flight); try again in a moment, or, if the driver never enables it "
		 "(its initialisation failed first), once the GPU detaches", initialising);
	return true;
}

const struct p2ps_policy p2ps_sb1_policy = {
	.name = "static BAR1",
	.actions = static_bar1_actions,
	.bind = sb1_bind,
	.busy = sb1_busy,
	.gpu_attach = sb1_attach,
	.gpu_forget = sb1_forget,
};
