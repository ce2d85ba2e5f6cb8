// SPDX-License-Identifier: GPL-2.0
/*
 * The lifecycle: p2p-shim's state and the events that move it, one
 * function per event (life_*), as docs/lifecycle.md tables them.
 *
 * Enabling arms the profile for the running nvidia module, or waits for
 * nvidia to load and arms then.  Arming resolves and checks every target
 * before installing anything, and installs all hooks or none.  When nvidia
 * unloads the hooks go with it; when it comes back they are armed again.
 * Disabling is refused while a policy says so (live BAR1 mappings, a
 * static BAR1 decision in flight).
 *
 * It walks the policies' tables (policy.c) to bind, unbind and reset
 * them and to ask what refuses a disable; it names only the GPU table and
 * the ledger (shared state), the caps guard's residual mode, and the UVM
 * peer set (armed with nvidia-uvm).  Events leave through the sink
 * (events.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include <p2p-shim/uapi.h>

#include "caps.h"
#include "driver.h"
#include "events.h"
#include "gate.h"
#include "gpus.h"
#include "hook.h"
#include "ledger.h"
#include "lifecycle.h"
#include "policy.h"
#include "uvm_peer.h"

static struct {
	struct mutex lock;		/* serialises everything below */
	enum p2ps_state state;
	u32 flags;			/* P2PS_ENABLE_* asked for */
	const struct p2ps_profile *profile;
	struct p2ps_hook *hooks;	/* installed, or of the last failed arming */
	unsigned int nr_hooks;
	unsigned int set;		/* the newest hook set's number (hook.c) */
	char driver_version[P2PS_NAME_LEN];
} shim = {
	.lock = __MUTEX_INITIALIZER(shim.lock),
};

static u32 caller_uid(void)
{
	return from_kuid(&init_user_ns, current_uid());
}

static void free_hooks(void)
{
	kfree(shim.hooks);
	shim.hooks = NULL;
	shim.nr_hooks = 0;
	shim.profile = NULL;
}

/*
 * Install the profile for @mod as a new hook set; all or nothing.  From
 * the residual state the new set goes in beside the residual one and takes
 * over in one step (hook.c: sets); if it cannot, the residual set stays as
 * it was.  Called with the lock held.
 */
static int arm(struct module *mod, struct p2ps_arm_error *err)
{
	bool dry = shim.flags & P2PS_ENABLE_DRY_RUN;
	bool handover = shim.state == P2PS_STATE_RESIDUAL;
	const struct p2ps_profile *profile;
	struct p2ps_hook *hooks;
	char supported[64];
	unsigned int i, n;
	int ret;

	if (!handover)
		free_hooks();	/* a failed arming's, kept for the status dump */
	strscpy(shim.driver_version, mod->version ?: "", sizeof(shim.driver_version));
	if (!mod->version) {
		p2ps_fail(err, "", "the nvidia module carries no version");
		return -EOPNOTSUPP;
	}
	profile = p2ps_profile_for_version(mod->version);
	if (!profile && (shim.flags & P2PS_ENABLE_FORCE))
		profile = p2ps_profile_newest();
	if (!profile) {
		const char *why = p2ps_unsupported_reason(mod->version);

		p2ps_supported_versions(supported, sizeof(supported));
		p2ps_fail(err, "", "nvidia %s has no profile (supported: %s)%s%s", mod->version,
			  supported, why ? ": " : "; force to try the newest", why ?: "");
		return -EOPNOTSUPP;
	}

	n = profile->nr_hooks;
	hooks = kcalloc(n, sizeof(*hooks), GFP_KERNEL);
	if (!hooks) {
		p2ps_fail(err, "", "out of memory");
		return -ENOMEM;
	}
	if (!++shim.set)
		++shim.set;	/* 0 is the set that always acts */
	for (i = 0; i < n; i++) {
		hooks[i].desc = &profile->hooks[i];
		hooks[i].set = shim.set;
		strscpy(hooks[i].symbol, profile->hooks[i].target, sizeof(hooks[i].symbol));
	}

	ret = p2ps_resolve(mod, profile, hooks, err);
	if (ret)
		goto failed;
	/* What the hooks of an earlier set taught (gen A's scopes, native pairs). */
	p2ps_policies_reset();
	/* The residual set kept the GPU table up to date: keep it then. */
	if (!handover)
		p2ps_gpus_reset();
	ret = p2ps_policies_bind(mod, profile, hooks, n, err);
	if (ret)
		goto failed;	/* unbound what it had bound */
	ret = p2ps_hooks_install(hooks, n, dry, err);
	if (ret) {
		p2ps_policies_unbind();
		goto failed;
	}
	p2ps_hooks_activate(shim.set);
	p2ps_caps_guard_only(false);
	if (handover) {
		for (i = 0; i < shim.nr_hooks; i++)
			shim.hooks[i].keep = false;
		p2ps_hooks_remove(shim.hooks, shim.nr_hooks);
		free_hooks();
	}
	shim.hooks = hooks;
	shim.nr_hooks = n;
	shim.profile = profile;
	shim.state = dry ? P2PS_STATE_DRY_RUN : P2PS_STATE_ARMED;
	return 0;

failed:
	if (handover) {
		/* The residual set stays, and is what status shows. */
		kfree(hooks);
		return ret;
	}
	/* Keep the hooks of the failed arming: the status dump names the culprit. */
	shim.hooks = hooks;
	shim.nr_hooks = n;
	shim.profile = profile;
	for (i = 0; i < n; i++) {
		struct p2ps_hook *h = &hooks[i];

		/* The target itself, or a function it leads to that we call. */
		if (!strcmp(h->symbol, err->target) || !strcmp(h->desc->target, err->target) ||
		    (h->desc->dest && !strcmp(h->desc->dest, err->target))) {
			h->state = P2PS_HOOK_FAILED;
			strscpy(h->last_error, err->reason, sizeof(h->last_error));
		}
	}
	return ret;
}

/* Remove every hook, kept ones too, and forget what they taught us. */
static void disarm(void)
{
	unsigned int i;

	p2ps_uvm_peer_stop();
	for (i = 0; i < shim.nr_hooks; i++)
		shim.hooks[i].keep = false;
	p2ps_hooks_remove(shim.hooks, shim.nr_hooks);
	p2ps_policies_unbind();
	p2ps_caps_guard_only(false);
	p2ps_policies_reset();
	p2ps_gpus_reset();
}

/*
 * Armed, disabled with GPUs forced: keep the residual set.  GPUs that
 * attached with our ForceP2P keep it until they re-initialise; with the
 * caps guard gone, a pair of them would be offered the mailbox path
 * GeForce chips lack (on 575+ as PCIE_PROPRIETARY read/write OK).  So every
 * hook goes but the guard and those that see GPUs come and go (their ops
 * say .residual).  Each such GPU holds a reference on this module (gpus.c),
 * so rmmod is refused until the last of them has detached; then a work
 * item removes the rest.
 */
static void enter_residual(void)
{
	unsigned int i;

	p2ps_uvm_peer_stop();
	/* Before the routing goes: from now on no pair is offered BAR1 P2P. */
	p2ps_caps_guard_only(true);
	for (i = 0; i < shim.nr_hooks; i++)
		shim.hooks[i].keep = shim.hooks[i].desc->ops->residual;
	p2ps_hooks_remove(shim.hooks, shim.nr_hooks);
	p2ps_policies_unbind();
	p2ps_policies_reset();
	shim.state = P2PS_STATE_RESIDUAL;
}

static void snapshot_locked(struct p2ps_status_snapshot *snap)
{
	snap->state = shim.state;
	snap->flags = shim.flags;
	snap->stale_gpus = shim.state == P2PS_STATE_DISABLED ? 0 : p2ps_gpus_stale();
	strscpy(snap->driver_version, shim.driver_version, sizeof(snap->driver_version));
	strscpy(snap->profile, shim.profile ? shim.profile->name : "", sizeof(snap->profile));
}

/*
 * @late: nvidia was running already, so GPUs it initialised before now
 * read the registry without us; which ones, we learn only when the driver
 * names them (we never ask it), so say it generally here.
 */
static void announce_armed(const char *why, bool late)
{
	struct p2ps_status_snapshot snap;

	snapshot_locked(&snap);
	pr_info("%s profile %s for nvidia %s (%u hooks) %s\n",
		shim.state == P2PS_STATE_DRY_RUN ? "dry run of" : "armed",
		snap.profile, snap.driver_version, shim.nr_hooks, why);
	if (late && shim.state == P2PS_STATE_ARMED)
		pr_info("GPUs initialised before arming keep the stock P2P settings until re-initialised\n");
	p2ps_emit(P2PS_EV_ARMED, &snap, NULL);
}

static void announce_refusal(const struct p2ps_arm_error *err, int ret, const char *who)
{
	char reason[P2PS_REASON_LEN + P2PS_NAME_LEN];

	snprintf(reason, sizeof(reason), "%s%s%s", err->target,
		 err->target[0] ? ": " : "", err->reason);
	pr_warn("enable refused %s: %s (error %d)\n", who, reason, ret);
	p2ps_emit(P2PS_EV_REFUSED, NULL, reason);
}

static void announce_disabled(const char *why)
{
	struct p2ps_status_snapshot snap;

	snapshot_locked(&snap);
	p2ps_emit(P2PS_EV_DISARMED, &snap, why);
}

/*
 * The lifecycle.  docs/lifecycle.md has the table of states and events;
 * each event below is one function, a switch over the state, called with
 * the lock held, and nothing else changes the state.  Hook handlers never
 * do: when the last GPU carrying our ForceP2P detaches, gpus.c queues
 * residual_work, which calls life_forced_gone().
 */

/* enable, enable --dry-run (@flags) */
static int life_enable(u32 flags, struct p2ps_arm_error *err, const char *who)
{
	struct module *mod;
	u32 old_flags = shim.flags;
	int ret;

	switch (shim.state) {
	case P2PS_STATE_ARMED:
	case P2PS_STATE_DRY_RUN:
		if ((shim.flags & P2PS_ENABLE_DRY_RUN) == (flags & P2PS_ENABLE_DRY_RUN))
			return 0;
		p2ps_fail(err, "", "already %s; disable first",
			  shim.state == P2PS_STATE_ARMED ? "armed" : "armed for a dry run");
		return -EALREADY;
	case P2PS_STATE_RESIDUAL:
		if (flags & P2PS_ENABLE_DRY_RUN) {
			p2ps_fail(err, "", "GPUs 0x%x carry a ForceP2P that forces P2P (p2p-shim's or the user's): a dry run would leave "
				  "them without the caps guard; re-initialise them first",
				  p2ps_gpus_forced());
			return -EBUSY;
		}
		break;
	case P2PS_STATE_DISABLED:
	case P2PS_STATE_WAITING:
		break;
	}

	mod = p2ps_driver_find();
	if (!mod && shim.state == P2PS_STATE_RESIDUAL) {
		/* Between nvidia's exit and its GOING notification. */
		p2ps_fail(err, "", "nvidia is being unloaded; try again");
		return -EAGAIN;
	}
	shim.flags = flags;
	if (!mod) {
		shim.state = P2PS_STATE_WAITING;
		pr_info("enabled %s: waiting for nvidia to load\n", who);
		return 0;
	}
	ret = arm(mod, err);
	if (ret) {
		module_put(mod);
		if (shim.state == P2PS_STATE_RESIDUAL) {
			shim.flags = old_flags;
			pr_info("the caps guard stays for GPUs 0x%x\n", p2ps_gpus_forced());
		} else {
			shim.state = P2PS_STATE_DISABLED;
			shim.flags = 0;
		}
		announce_refusal(err, ret, who);
		return ret;
	}
	announce_armed(who, true);
	p2ps_uvm_peer_start(mod, flags & P2PS_ENABLE_DRY_RUN);
	module_put(mod);
	return 0;
}

/* disable; @busy gets what refused it */
static int life_disable(char *busy, size_t len, u32 uid)
{
	char reason[P2PS_REASON_LEN];
	u32 forced;

	switch (shim.state) {
	case P2PS_STATE_DISABLED:
		return 0;
	case P2PS_STATE_RESIDUAL:
		pr_info("disable by uid %u: already disabled; the caps guard stays for GPUs 0x%x until they re-initialise\n",
			uid, p2ps_gpus_forced());
		return 0;
	case P2PS_STATE_WAITING:
	case P2PS_STATE_DRY_RUN:
		disarm();
		break;
	case P2PS_STATE_ARMED:
		/*
		 * Hold still while we decide: no new mapping, no GPU newly
		 * given our ForceP2P, no new forced static BAR1 decision
		 * (gate.c).  Those in flight finish first.
		 */
		p2ps_gate_close();
		/* Live mappings (ledger.c), a static BAR1 decision in flight (static_bar1.c). */
		if (p2ps_policies_busy(busy, len)) {
			snprintf(reason, sizeof(reason), "disable: %s", busy);
		} else {
			forced = p2ps_gpus_forced();
			if (forced) {
				enter_residual();
				pr_info("disabled by uid %u; the caps guard stays for GPUs 0x%x (they carry a ForceP2P that forces P2P, p2p-shim's or the user's) until they re-initialise (last client closed with persistence mode off, or a reset) or nvidia unloads; p2p-shim cannot be unloaded until then\n",
					uid, forced);
				shim.flags = 0;
				announce_disabled("disabled");
				return 0;
			}
			disarm();
			break;
		}
		p2ps_gate_reopen();
		pr_info("disable refused for uid %u: %s\n", uid, reason + strlen("disable: "));
		p2ps_emit(P2PS_EV_REFUSED, NULL, reason);
		return -EBUSY;
	}
	free_hooks();
	shim.state = P2PS_STATE_DISABLED;
	shim.flags = 0;
	pr_info("disabled by uid %u\n", uid);
	announce_disabled("disabled");
	return 0;
}

/* nvidia arrives (MODULE_STATE_COMING): its init has not run yet. */
static void life_driver_coming(struct module *mod)
{
	struct p2ps_status_snapshot snap;
	struct p2ps_arm_error err = {};
	int ret;

	strscpy(shim.driver_version, mod->version ?: "", sizeof(shim.driver_version));
	snapshot_locked(&snap);
	pr_info("nvidia %s arrived\n", shim.driver_version);
	p2ps_emit(P2PS_EV_DRIVER_ARRIVED, &snap, NULL);
	switch (shim.state) {
	case P2PS_STATE_WAITING:
		/* Arming calls nothing in nvidia, so before its init is fine. */
		ret = arm(mod, &err);
		if (ret) {
			shim.state = P2PS_STATE_DISABLED;
			shim.flags = 0;
			announce_refusal(&err, ret, "on nvidia's arrival");
			break;
		}
		announce_armed("on nvidia's arrival", false);
		p2ps_uvm_peer_start(mod, shim.flags & P2PS_ENABLE_DRY_RUN);
		break;
	default:
		/* Disabled; armed, dry run and residual need nvidia: not here. */
		break;
	}
}

/* nvidia leaves (MODULE_STATE_GOING): its GPUs and their settings are gone. */
static void life_driver_going(void)
{
	struct p2ps_status_snapshot snap;
	unsigned int live;

	switch (shim.state) {
	case P2PS_STATE_ARMED:
	case P2PS_STATE_DRY_RUN:
		live = p2ps_ledger_live();
		disarm();
		if (live)
			pr_warn("nvidia left with %u BAR1 mappings in the ledger\n", live);
		p2ps_ledger_drop_all();
		shim.state = P2PS_STATE_WAITING;
		pr_info("nvidia left: disarmed, waiting for it to return\n");
		break;
	case P2PS_STATE_RESIDUAL:
		disarm();
		free_hooks();
		shim.state = P2PS_STATE_DISABLED;
		shim.flags = 0;
		pr_info("nvidia left: the caps guard is no longer needed, removed\n");
		break;
	case P2PS_STATE_DISABLED:
	case P2PS_STATE_WAITING:
		break;
	}
	shim.driver_version[0] = '\0';
	snapshot_locked(&snap);
	p2ps_emit(P2PS_EV_DRIVER_LEFT, &snap, NULL);
}

/* nvidia-uvm arrives or leaves: the UVM peer set follows, if armed. */
static void life_uvm(struct module *mod, unsigned long action)
{
	switch (shim.state) {
	case P2PS_STATE_ARMED:
	case P2PS_STATE_DRY_RUN:
		p2ps_uvm_peer_module(mod, action);
		break;
	default:
		break;
	}
}

/* The last GPU carrying our ForceP2P has detached. */
static void life_forced_gone(void)
{
	switch (shim.state) {
	case P2PS_STATE_RESIDUAL:
		if (p2ps_gpus_forced())
			break;
		disarm();
		free_hooks();
		shim.state = P2PS_STATE_DISABLED;
		pr_info("the GPUs that carried a ForceP2P have re-initialised: caps guard removed\n");
		announce_disabled("the last GPU carrying a ForceP2P re-initialised");
		break;
	default:
		/* Armed: forced GPUs come and go.  Others: nothing is kept. */
		break;
	}
}

static void residual_work_fn(struct work_struct *work)
{
	mutex_lock(&shim.lock);
	life_forced_gone();
	mutex_unlock(&shim.lock);
}

static DECLARE_WORK(residual_work, residual_work_fn);

/* From gpus.c, possibly in a probe handler: the last forced GPU is gone. */
void p2ps_residual_done(void)
{
	schedule_work(&residual_work);
}

int p2ps_enable(u32 flags, struct p2ps_arm_error *err)
{
	char who[32];
	int ret;

	snprintf(who, sizeof(who), "by uid %u", caller_uid());
	mutex_lock(&shim.lock);
	ret = life_enable(flags, err, who);
	mutex_unlock(&shim.lock);
	return ret;
}

int p2ps_disable(char *busy, size_t len)
{
	u32 uid = caller_uid();
	int ret;

	mutex_lock(&shim.lock);
	ret = life_disable(busy, len, uid);
	mutex_unlock(&shim.lock);
	return ret;
}

void p2ps_snapshot(struct p2ps_status_snapshot *snap, u32 *hooks, u64 *hits)
{
	unsigned int i;

	mutex_lock(&shim.lock);
	snapshot_locked(snap);
	*hooks = 0;
	*hits = 0;
	for (i = 0; i < shim.nr_hooks; i++) {
		if (shim.hooks[i].state == P2PS_HOOK_INSTALLED)
			(*hooks)++;
		*hits += atomic64_read(&shim.hooks[i].hits);
	}
	p2ps_uvm_peer_count(hooks, hits);
	mutex_unlock(&shim.lock);
}

int p2ps_for_each_hook(int (*fn)(const struct p2ps_hook *h, void *arg), void *arg,
		       unsigned int skip)
{
	unsigned int i;
	int ret = 0;

	mutex_lock(&shim.lock);
	for (i = skip; i < shim.nr_hooks && !ret; i++)
		ret = fn(&shim.hooks[i], arg);
	/* Then the UVM peer set's, while it has any. */
	if (!ret)
		ret = p2ps_uvm_peer_for_each(fn, arg, skip > shim.nr_hooks ? skip - shim.nr_hooks : 0);
	mutex_unlock(&shim.lock);
	return ret;
}

/* nvidia and nvidia-uvm arriving and leaving. */
static int driver_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;
	bool uvm = !strcmp(mod->name, "nvidia_uvm");

	if (!uvm && strcmp(mod->name, "nvidia"))
		return NOTIFY_DONE;
	mutex_lock(&shim.lock);
	if (uvm)
		life_uvm(mod, action);
	else if (action == MODULE_STATE_COMING)
		life_driver_coming(mod);
	else if (action == MODULE_STATE_GOING)
		life_driver_going();
	mutex_unlock(&shim.lock);
	return NOTIFY_DONE;
}

static struct notifier_block driver_nb = {
	.notifier_call = driver_notify,
};

/* Module load: from now on nvidia's and nvidia-uvm's comings and goings are events. */
int p2ps_life_start(void)
{
	return register_module_notifier(&driver_nb);
}

void p2ps_life_stop(void)
{
	unregister_module_notifier(&driver_nb);
}

/*
 * rmmod, after p2ps_life_stop().  Nothing holds the module: no GPU
 * carries our ForceP2P and no mapping of ours is live (each holds a
 * reference), so no residual set either.
 */
void p2ps_life_rmmod(void)
{
	mutex_lock(&shim.lock);
	switch (shim.state) {
	case P2PS_STATE_ARMED:
	case P2PS_STATE_DRY_RUN:
	case P2PS_STATE_RESIDUAL:
		/*
		 * No new mapping from here on (the wrappers also refuse once
		 * rmmod has begun: gate.c, p2ps_gate_may_make()).
		 */
		p2ps_gate_close();
		disarm();
		break;
	case P2PS_STATE_DISABLED:
	case P2PS_STATE_WAITING:
		break;
	}
	free_hooks();
	/* A status asked between here and the netlink family's removal. */
	shim.state = P2PS_STATE_DISABLED;
	shim.flags = 0;
	mutex_unlock(&shim.lock);
	/* Only now: the disarm above was the last thing that could queue it. */
	cancel_work_sync(&residual_work);
}
