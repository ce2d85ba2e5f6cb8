// SPDX-License-Identifier: GPL-2.0
/*
 * The caps guard: p2pGetCapsStatus's return hook, which keeps or puts back
 * the stock driver's answer for a pair of GPUs where ForceP2P would
 * otherwise offer P2P that cannot work.
 *
 * Its inputs: which GPUs carry a forcing ForceP2P (gpus.c), the set's
 * static BAR1 records and topology (static_bar1.c, p2ps_sb1_gather()), and
 * this host's CPU for NVIDIA's read rule (readrule.c).  The verdict is
 * sb1rule.c's p2ps_caps_verdict(); this file only collects and applies it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/processor.h>
#include <linux/bitops.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include <p2p-shim/readrule.h>
#include <p2p-shim/sb1rule.h>

#include "faults.h"
#include "gpus.h"
#include "hook.h"
#include "nv.h"
#include "policy.h"
#include "static_bar1.h"

/*
 * NVIDIA's host rule gives BAR1 P2P only where peer reads work: a common
 * PCIe switch, an AMD CPU or a Sapphire Rapids Xeon (readrule.c).  Any ForceP2P skips
 * that check, so the caps guard applies it, unless the user has proven reads on this rig.
 */
static bool allow_peer_reads;
module_param_named(peer_reads, allow_peer_reads, bool, 0644);
MODULE_PARM_DESC(peer_reads,
		 "Offer BAR1 P2P also where NVIDIA's host rule gives no peer reads (no common PCIe switch, a CPU other than AMD or Sapphire Rapids): only after p2pctl verify has shown reads right on this rig (default: no)");

/* The bound driver's major version (the read rule differs before 570). */
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
 * it (570-575: after a console or mailbox, not 512 MiB aligned; static_bar1.c),
 * whatever the generations of the two GPUs.
 */
struct caps_call {
	NvU32 mask;
	u8 *write, *read, *atomics;
	u32 *connectivity;
};

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
 * The residual state (lifecycle.c): the BAR1 routing is gone, so no BAR1 peer
 * mapping can be made through it any more.  On 550-570 ForceP2P still
 * reports PCIE_BAR1 for a forced pair with static BAR1 on both GPUs; CUDA
 * would see "can access peer" and then fail to enable it.  Every forced
 * pair gets the stock answer then.
 */
static bool guard_only;

static void caps_residual(bool on)
{
	WRITE_ONCE(guard_only, on);
}

/*
 * Why a GPU of @mask has no generation p2p-shim can name: most often it
 * was initialised before arming (gpus.c's stale GPUs, as `p2pctl status`
 * and `enable` name them), so no attach of it was seen.
 */
static void unknown_why(u32 mask)
{
	u32 stale = p2ps_gpus_stale() & mask;

	if (stale)
		pr_info_ratelimited("GPUs 0x%x: GPU%u initialised before p2p-shim armed; re-initialise it: its generation unknown, no P2P\n",
				    mask, (unsigned int)__ffs(stale));
	else
		pr_info_ratelimited("GPUs 0x%x: one has no NVIDIA PCI ID p2p-shim could read (no address in its attach, or no PCI function there), or they are two devices newer than p2p-shim's table: generation unknown, no P2P\n",
				    mask);
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
	/* The rule is sb1rule.c's; the records are static_bar1.c's. */
	p2ps_sb1_gather(c->mask, &in.set);
	switch (p2ps_caps_verdict(&in)) {
	case P2PS_CAPS_STOCK_IOH:
		/* The IOH check ForceP2P skipped (static_bar1.c). */
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
		unknown_why(c->mask);
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

/*
 * At arming: the driver's major version, and whether the profile watches
 * static BAR1 (gen 0 and gen-a1, whose caps code applies the override
 * before the BAR1 HAL check).
 */
static int caps_bind(struct module *mod, const struct p2ps_profile *profile,
		     struct p2ps_hook *hooks, unsigned int n, struct p2ps_arm_error *err)
{
	unsigned int major = p2ps_driver_major(mod->version), i;
	bool watch = false;

	WRITE_ONCE(bound_major, major);
	for (i = 0; i < n; i++)
		if ((hooks[i].desc->action == P2PS_ACT_STATIC_BAR1 ||
		     hooks[i].desc->action == P2PS_ACT_STATIC_ENABLE) &&
		    profile->force_before_bar1_check)
			watch = true;
	WRITE_ONCE(watch_static_bar1, watch);
	return 0;
}

/* The guard stays in the residual state (lifecycle.c). */
static const struct p2ps_hook_ops caps_guard_ops = {
	.entry = p2ps_caps_entry, .ret = p2ps_caps_return, .residual = true,
};
static const struct p2ps_hook_ops caps_guard_v1_ops = {
	.entry = p2ps_caps_entry_v1, .ret = p2ps_caps_return, .residual = true,
};

/* The profile's actions whose hooks are this file's (policy.c: p2ps_policies_ops()). */
static const struct p2ps_action_ops caps_actions[] = {
	{ P2PS_ACT_CAPS_GUARD, &caps_guard_ops },
	{ P2PS_ACT_CAPS_GUARD_V1, &caps_guard_v1_ops },
	{ P2PS_ACT_NONE, NULL },
};

const struct p2ps_policy p2ps_caps_policy = {
	.name = "caps guard",
	.actions = caps_actions,
	.bind = caps_bind,
	.residual = caps_residual,
};
