// SPDX-License-Identifier: GPL-2.0
/*
 * Registry defaults: osReadRegistryDword's return hook supplies the
 * profile's keys (ForceP2P, the P2P type, ...) that the user did not set,
 * as each GPU initialises, and marks which GPUs carry a forcing ForceP2P
 * (gpus.c).  registry_gpus= names the GPUs that are p2p-shim's: only
 * those get the defaults, and only those get static BAR1 forced
 * (p2ps_registry_scoped(), asked by static_bar1.c and
 * static_bar1_gen0.c).
 *
 * It also records the user's own RMForceStaticBar1 and
 * RMBar1ApertureSizeMB in the GPU table (gpus.c), which this hook is the
 * one to see; static_bar1.c reads them there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include <p2p-shim/bdf.h>
#include <p2p-shim/sb1rule.h>

#include "gate.h"
#include "gpus.h"
#include "hook.h"
#include "nmi.h"
#include "nv.h"
#include "policy.h"
#include "registry.h"

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

/* registry_gpus=: PCI functions, "DDDD:BB:DD.F" or "BB:DD.F", comma-separated. */
#define NR_SCOPED	NV_MAX_DEVICES
static struct {
	unsigned int nr;
	u64 dbd[NR_SCOPED];	/* as GPUATTACHARG's: domain 63:32, bus 15:8, device 7:0 */
} scoped;
/* Taken last: its holders take no other lock (static_bar1.c takes it under sb1_lock). */
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
 * or those registry_gpus= names; @unknown where its PCI address cannot be
 * read.  Only those get the registry defaults (an unknown one does not),
 * and only their own ForceP2P (the user's) is p2p-shim's to guard (an
 * unknown one's is: fail closed): on a host that names its GeForce GPUs,
 * the others (a pro or datacenter card whose mailbox P2P works) keep the
 * stock driver's answer.
 */
static bool in_scope(bool unknown)
{
	u64 dbd;

	/* The common case, every GPU: no lookup. */
	if (!READ_ONCE(scoped.nr))
		return true;
	dbd = p2ps_gpu_dbd(p2ps_gpu_attaching());
	return dbd == U64_MAX ? unknown : p2ps_registry_scoped(dbd);
}

/*
 * Whether the GPU at @dbd (U64_MAX: unknown) is one of p2p-shim's: every
 * GPU, or one registry_gpus= names.  Static BAR1 is forced only on those
 * too (static_bar1.c, static_bar1_gen0.c).
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
	bool forcing, supply, ours, guarded, open;

	if (!c->gpu || !c->key || !c->data)
		return NULL;
	/* The user's RMForceStaticBar1 is theirs: static_bar1.c then never forces. */
	if (st == NV_OK && !strcmp(c->key, "RMForceStaticBar1"))
		p2ps_gpu_user_static_bar1();
	/* Nor where their RMBar1ApertureSizeMB makes BAR1 smaller than we see it. */
	if (st == NV_OK && !strcmp(c->key, "RMBar1ApertureSizeMB"))
		p2ps_gpu_user_aperture(c->gpu, *c->data);
	for (r = bound_profile ? bound_profile->registry : NULL; r && r->key; r++)
		if (!strcmp(c->key, r->key))
			d = r;
	if (!d)
		return NULL;
	/*
	 * Inside the gate (gate.c): while a disable decides, no GPU newly
	 * gets our settings, so the set of forced GPUs it acts on stays true
	 * until its hooks are gone.
	 */
	open = p2ps_gate_enter();
	ours = in_scope(false);
	guarded = in_scope(true);
	/*
	 * Only to a GPU whose attach we track, every key alike (review F5):
	 * on 565/570 RMForceP2PType=2 without the ForceP2P that goes with it
	 * turns that GPU's NVLink P2P off and gives it nothing in return.
	 */
	supply = st != NV_OK && READ_ONCE(use_registry_defaults) && open && ours &&
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
		forcing = st == NV_OK ? guarded && p2ps_force_p2p_forces(*c->data) :
					supply && p2ps_force_p2p_forces(d->value);
		if (!p2ps_gpu_bind(c->gpu) || !p2ps_gpu_set_forced(c->gpu, forcing))
			supply = false;
	}
	if (supply) {
		/* The user has not set it: supply ours. */
		*c->data = d->value;
		regs_set_return_value(regs, NV_OK);
	}
	p2ps_gate_exit();
	return NULL;
}

static_assert(sizeof(struct registry_call) <= P2PS_RET_DATA_SIZE);

static void p2ps_registry_entry(void *data, struct pt_regs *regs)
{
	struct registry_call *c = data;

	c->gpu = (struct OBJGPU *)regs_get_kernel_argument(regs, 0);
	c->key = (const char *)regs_get_kernel_argument(regs, 1);
	c->data = (NvU32 *)regs_get_kernel_argument(regs, 2);
}

/* At arming: the profile whose defaults apply. */
static int registry_bind(struct module *mod, const struct p2ps_profile *profile,
			 struct p2ps_hook *hooks, unsigned int n, struct p2ps_arm_error *err)
{
	bound_profile = profile;
	return 0;
}

static const struct p2ps_hook_ops registry_defaults_ops = {
	.entry = p2ps_registry_entry, .ret = p2ps_registry_return,
};

/* The profile's actions whose hooks are this file's (policy.c: p2ps_policies_ops()). */
static const struct p2ps_action_ops registry_actions[] = {
	{ P2PS_ACT_REGISTRY_DEFAULTS, &registry_defaults_ops },
	{ P2PS_ACT_NONE, NULL },
};

const struct p2ps_policy p2ps_registry_policy = {
	.name = "registry defaults",
	.actions = registry_actions,
	.bind = registry_bind,
};
