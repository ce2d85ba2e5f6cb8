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
 * The profile lists objects (profile.h, as livepatch's klp_object): nvidia's
 * hooks, and nvidia-uvm's (the UVM peer set).  One path arms either
 * (object_arm()): nvidia's when the profile arms, nvidia-uvm's then if it
 * is loaded, or when it arrives; each object's callbacks are told around
 * it (nvidia's bind the policies, nvidia-uvm's are uvm_peer.c's).
 *
 * It walks the policies' tables (policy.c) to bind, unbind and reset
 * them, to ask what refuses a disable and to tell them of the residual
 * state (the caps guard's mode); it names no policy, only the GPU table
 * and the ledger (shared state).  Events leave through the sink (events.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include <p2p-shim/uapi.h>

#include "driver.h"
#include "events.h"
#include "gate.h"
#include "gpus.h"
#include "hook.h"
#include "ledger.h"
#include "lifecycle.h"
#include "policy.h"

/*
 * An object of the armed profile (struct p2ps_object, profile.h; livepatch's
 * klp_object): one module's hooks.  obj[0] is nvidia's, armed with the
 * profile; the others (nvidia-uvm's) arm when the profile arms with their
 * module loaded, or when it arrives, and disarm when it leaves.
 */
enum object_state {
	OBJ_OFF,		/* profile not armed, or no such object for this driver */
	OBJ_WAITING,		/* waiting for its module */
	OBJ_ARMED,
	OBJ_FAILED,		/* its module is there, the object could not arm */
};

struct object {
	const struct p2ps_object *desc;
	enum object_state state;
	struct p2ps_hook *hooks;	/* installed, or of the last failed arming */
	unsigned int nr_hooks;
};

#define NR_OBJECTS	2	/* nvidia's, nvidia-uvm's */

static struct {
	struct mutex lock;		/* serialises everything below */
	enum p2ps_state state;
	u32 flags;			/* P2PS_ENABLE_* asked for */
	const struct p2ps_profile *profile;
	struct object obj[NR_OBJECTS];
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
	kfree(shim.obj[0].hooks);
	shim.obj[0].hooks = NULL;
	shim.obj[0].nr_hooks = 0;
	shim.obj[0].desc = NULL;
	shim.obj[0].state = OBJ_OFF;
	shim.profile = NULL;
}

/* @obj's hooks, of hook set @set (hook.c), not yet resolved; NULL: no memory. */
static struct p2ps_hook *object_hooks(const struct p2ps_object *obj, unsigned int set)
{
	struct p2ps_hook *hooks;
	unsigned int i;

	hooks = kcalloc(obj->nr_hooks, sizeof(*hooks), GFP_KERNEL);
	if (!hooks)
		return NULL;
	for (i = 0; i < obj->nr_hooks; i++) {
		hooks[i].desc = &obj->hooks[i];
		hooks[i].ops = p2ps_policies_ops(obj->hooks[i].action);
		hooks[i].set = set;
		strscpy(hooks[i].symbol, obj->hooks[i].target, sizeof(hooks[i].symbol));
	}
	return hooks;
}

/* The rows a failed arming names: the culprit is kept for the status dump. */
static void mark_failed(const struct p2ps_arming *a, const struct p2ps_arm_error *err)
{
	const struct p2ps_object *obj = a->obj;
	unsigned int i;

	for (i = 0; i < a->nr_hooks; i++) {
		struct p2ps_hook *h = &a->hooks[i];

		/*
		 * The target itself, or a function it leads to that we call:
		 * its destination, or the copy-address function that must
		 * call the UVM peer set's phys-address hook (hooks[1]).  A
		 * UVM peer set's error without a target goes on its first
		 * row: nvidia's is the enable's refusal, the set has no other.
		 */
		if (!strcmp(h->symbol, err->target) || !strcmp(h->desc->target, err->target) ||
		    (h->desc->dest && !strcmp(h->desc->dest, err->target)) ||
		    (i == 1 && obj->copy_fn && !strcmp(obj->copy_fn, err->target)) ||
		    (!err->target[0] && i == 0 && a->mod != a->nv)) {
			h->state = P2PS_HOOK_FAILED;
			strscpy(h->last_error, err->reason, sizeof(h->last_error));
		}
	}
}

/*
 * Rows of an object other than nvidia's are shown as "<module>:<symbol>",
 * which also tells p2pctl the UVM peer set's rows.
 */
static void qualify_symbols(const struct p2ps_arming *a)
{
	char name[P2PS_NAME_LEN];
	unsigned int i;

	if (a->mod == a->nv)
		return;
	for (i = 0; i < a->nr_hooks; i++) {
		struct p2ps_hook *h = &a->hooks[i];

		snprintf(name, sizeof(name), "%s:%s",
			 h->desc->flags & P2PS_T_UVM ? a->obj->module : "nvidia", h->symbol);
		strscpy(h->symbol, name, sizeof(h->symbol));
	}
}

static const struct p2ps_object_cb nvidia_object_cb, no_object_cb;

/* @obj's callbacks: nvidia's are below, the others' their policy's. */
static const struct p2ps_object_cb *object_cb(const struct p2ps_object *obj)
{
	const struct p2ps_object_cb *cb;

	if (!strcmp(obj->module, "nvidia"))
		return &nvidia_object_cb;
	cb = p2ps_policies_object_cb(obj->module);
	return cb ?: &no_object_cb;
}

/*
 * The one arming path, for every object: resolve and check every target
 * (driver.c), let the object's owner prepare (pre_arm), install all hooks
 * or none (hook.c).  On failure the hooks that failed are marked for the
 * status dump and, if installing failed, what pre_arm set up is undone
 * (post_disarm); a pre_arm that refuses undoes its own part.  Called
 * with the lock held.
 */
static int object_arm(const struct p2ps_arming *a, struct p2ps_arm_error *err)
{
	const struct p2ps_object_cb *cb = object_cb(a->obj);
	int ret;

	ret = p2ps_resolve_object(a->nv, a->mod, a->obj, a->hooks, err);
	if (!ret) {
		/* A pre_arm that fails undoes its own part (as livepatch's). */
		ret = cb->pre_arm ? cb->pre_arm(a, err) : 0;
		if (!ret) {
			ret = p2ps_hooks_install(a->hooks, a->nr_hooks, a->dry_run, err);
			if (ret && cb->post_disarm)
				cb->post_disarm(a->obj);
		}
	}
	if (ret)
		mark_failed(a, err);
	qualify_symbols(a);
	if (ret) {
		if (cb->arm_failed)
			cb->arm_failed(a, err, ret);
		return ret;
	}
	if (cb->post_arm)
		cb->post_arm(a);
	return 0;
}

/* Remove an object's hooks (after nvidia's: see disarm() for nvidia's own). */
static void object_disarm(struct object *o)
{
	const struct p2ps_object_cb *cb = object_cb(o->desc);

	if (cb->pre_disarm)
		cb->pre_disarm(o->desc);
	if (o->hooks)
		p2ps_hooks_remove(o->hooks, o->nr_hooks);
	if (cb->post_disarm)
		cb->post_disarm(o->desc);
	kfree(o->hooks);
	o->hooks = NULL;
	o->nr_hooks = 0;
}

/*
 * Arm @o now that its module @mod is there and nvidia's object is armed;
 * @nv holds a reference.  Its hooks are of set 0, which always acts: a
 * residual handover never replaces them.
 */
static void object_try_arm(struct object *o, struct module *nv, struct module *mod)
{
	struct p2ps_arm_error err = {};
	struct p2ps_arming a;

	if (mod->state == MODULE_STATE_GOING)
		return;
	object_disarm(o);
	o->hooks = object_hooks(o->desc, 0);
	if (!o->hooks)
		return;
	o->nr_hooks = o->desc->nr_hooks;
	a = (struct p2ps_arming){
		.profile = shim.profile, .obj = o->desc, .nv = nv, .mod = mod,
		.hooks = o->hooks, .nr_hooks = o->nr_hooks,
		.dry_run = shim.state == P2PS_STATE_DRY_RUN,
	};
	o->state = object_arm(&a, &err) ? OBJ_FAILED : OBJ_ARMED;
}

/* nvidia's object is disarmed: so are the others. */
static void objects_stop(void)
{
	unsigned int i;

	for (i = 1; i < NR_OBJECTS; i++) {
		struct object *o = &shim.obj[i];

		if (o->desc)
			object_disarm(o);
		o->state = OBJ_OFF;
		o->desc = NULL;
	}
}

/*
 * nvidia's object is armed (or counting) for @nv: the profile's other
 * objects for this driver wait for their modules, and arm now where one
 * is loaded already.
 */
static void objects_start(struct module *nv)
{
	const struct p2ps_object *d;
	struct module *mod;
	unsigned int n = 1;

	objects_stop();
	for (d = shim.profile->objects + 1; d->module && n < NR_OBJECTS; d++) {
		struct object *o = &shim.obj[n];

		/* The profile's object for this module at this driver's major. */
		if (d != p2ps_profile_object(shim.profile, nv->version, d->module))
			continue;
		o->desc = d;
		o->state = OBJ_WAITING;
		n++;
		mod = p2ps_module_find(d->module);
		if (mod) {
			object_try_arm(o, nv, mod);
			module_put(mod);
		}
	}
	/* 590 and later need none before Blackwell's native BAR1 (docs/uvm.md). */
	if (!p2ps_profile_object(shim.profile, nv->version, "nvidia_uvm") &&
	    !p2ps_uvm_native_bar1(nv->version))
		pr_warn("no UVM peer set for nvidia %s: nvidia-uvm's own peer mappings of BAR1 pairs are not fixed\n",
			nv->version ?: "?");
}

/*
 * nvidia's object's callbacks: the policies learn of the driver and the
 * profile before its hooks go in (policy.c), and forget it if they do not.
 */
static int nvidia_pre_arm(const struct p2ps_arming *a, struct p2ps_arm_error *err)
{
	/* What the hooks of an earlier set taught (gen A's scopes, native pairs). */
	p2ps_policies_reset();
	/* The residual set kept the GPU table up to date: keep it then. */
	if (shim.state != P2PS_STATE_RESIDUAL)
		p2ps_gpus_reset();
	return p2ps_policies_bind(a->nv, a->profile, a->hooks, a->nr_hooks, err);
}

static void nvidia_post_disarm(const struct p2ps_object *obj)
{
	p2ps_policies_unbind();
}

static const struct p2ps_object_cb nvidia_object_cb = {
	.pre_arm = nvidia_pre_arm,
	.post_disarm = nvidia_post_disarm,
};

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
	const struct p2ps_object *obj;
	struct p2ps_arming arming;
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

	if (!++shim.set)
		++shim.set;	/* 0 is the set that always acts */
	obj = p2ps_profile_nvidia(profile);
	hooks = object_hooks(obj, shim.set);
	if (!hooks) {
		p2ps_fail(err, "", "out of memory");
		return -ENOMEM;
	}
	n = obj->nr_hooks;
	arming = (struct p2ps_arming){
		.profile = profile, .obj = obj, .nv = mod, .mod = mod,
		.hooks = hooks, .nr_hooks = n, .dry_run = dry,
	};
	ret = object_arm(&arming, err);
	if (ret)
		goto failed;
	p2ps_hooks_activate(shim.set);
	p2ps_policies_residual(false);
	if (handover) {
		for (i = 0; i < shim.obj[0].nr_hooks; i++)
			shim.obj[0].hooks[i].keep = false;
		p2ps_hooks_remove(shim.obj[0].hooks, shim.obj[0].nr_hooks);
		free_hooks();
	}
	shim.obj[0].hooks = hooks;
	shim.obj[0].nr_hooks = n;
	shim.obj[0].desc = arming.obj;
	shim.obj[0].state = OBJ_ARMED;
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
	shim.obj[0].hooks = hooks;
	shim.obj[0].nr_hooks = n;
	shim.obj[0].desc = arming.obj;
	shim.obj[0].state = OBJ_FAILED;
	shim.profile = profile;
	return ret;
}

/* Remove every hook, kept ones too, and forget what they taught us. */
static void disarm(void)
{
	unsigned int i;

	objects_stop();
	for (i = 0; i < shim.obj[0].nr_hooks; i++)
		shim.obj[0].hooks[i].keep = false;
	p2ps_hooks_remove(shim.obj[0].hooks, shim.obj[0].nr_hooks);
	p2ps_policies_unbind();
	p2ps_policies_residual(false);
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

	objects_stop();
	/* Before the routing goes: from now on no pair is offered BAR1 P2P. */
	p2ps_policies_residual(true);
	for (i = 0; i < shim.obj[0].nr_hooks; i++)
		shim.obj[0].hooks[i].keep = shim.obj[0].hooks[i].ops->residual;
	p2ps_hooks_remove(shim.obj[0].hooks, shim.obj[0].nr_hooks);
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
 * names them (we never ask it), so say it generally here.  @kept: GPUs
 * that attached under an earlier arming (the residual state's) and keep
 * the ForceP2P they read then.
 */
static void announce_armed(const char *why, bool late, u32 kept)
{
	struct p2ps_status_snapshot snap;

	snapshot_locked(&snap);
	pr_info("%s profile %s for nvidia %s (%u hooks) %s\n",
		shim.state == P2PS_STATE_DRY_RUN ? "dry run of" : "armed",
		snap.profile, snap.driver_version, shim.obj[0].nr_hooks, why);
	if (kept && shim.state == P2PS_STATE_ARMED)
		pr_info("GPUs 0x%x keep the ForceP2P they read while p2p-shim was armed before; other GPUs initialised before arming keep the stock P2P settings until re-initialised\n",
			kept);
	else if (late && shim.state == P2PS_STATE_ARMED)
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
 * do: when the last GPU carrying our ForceP2P detaches, gpus.c says so
 * (events.c: p2ps_emit_forced_gone()), which queues residual_work, which
 * calls life_forced_gone().
 */

/* enable, enable --dry-run (@flags) */
static int life_enable(u32 flags, struct p2ps_arm_error *err, const char *who)
{
	struct module *mod;
	u32 old_flags = shim.flags;
	u32 kept = 0;
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
	/* From the residual state: the GPUs forced then stay forced. */
	if (shim.state == P2PS_STATE_RESIDUAL)
		kept = p2ps_gpus_forced();
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
	announce_armed(who, true, kept);
	objects_start(mod);
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
		announce_armed("on nvidia's arrival", false, 0);
		objects_start(mod);
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

/* The module of another object arrives or leaves: the object follows, if armed. */
static void life_object(struct module *mod, unsigned long action)
{
	struct module *nv;
	unsigned int i;

	switch (shim.state) {
	case P2PS_STATE_ARMED:
	case P2PS_STATE_DRY_RUN:
		break;
	default:
		return;
	}
	for (i = 1; i < NR_OBJECTS; i++) {
		struct object *o = &shim.obj[i];

		if (!o->desc || strcmp(o->desc->module, mod->name))
			continue;
		if (action == MODULE_STATE_COMING && o->state != OBJ_ARMED) {
			nv = p2ps_driver_find();
			if (nv) {
				object_try_arm(o, nv, mod);
				module_put(nv);
			}
		} else if (action == MODULE_STATE_GOING) {
			object_disarm(o);
			o->state = OBJ_WAITING;
			if (object_cb(o->desc)->left)
				object_cb(o->desc)->left(o->desc);
		}
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

/* Queued by gpus.c through the sink (events.c): the last forced GPU is gone. */
static DECLARE_WORK(residual_work, residual_work_fn);

int p2ps_life_enable(u32 flags, struct p2ps_arm_error *err)
{
	char who[32];
	int ret;

	snprintf(who, sizeof(who), "by uid %u", caller_uid());
	mutex_lock(&shim.lock);
	ret = life_enable(flags, err, who);
	mutex_unlock(&shim.lock);
	return ret;
}

int p2ps_life_disable(char *busy, size_t len)
{
	u32 uid = caller_uid();
	int ret;

	mutex_lock(&shim.lock);
	ret = life_disable(busy, len, uid);
	mutex_unlock(&shim.lock);
	return ret;
}

/*
 * Readers wait for shim.lock killably: an enable or disable holds it while
 * it drains calls still inside the driver (hook.c), with no time bound.
 */
int p2ps_snapshot(struct p2ps_status_snapshot *snap, u32 *hooks, u64 *hits)
{
	struct object *o;
	unsigned int i;

	if (mutex_lock_killable(&shim.lock))
		return -EINTR;
	snapshot_locked(snap);
	*hooks = 0;
	*hits = 0;
	for (o = shim.obj; o < shim.obj + NR_OBJECTS; o++)
		for (i = 0; i < o->nr_hooks; i++) {
			if (o->hooks[i].state == P2PS_HOOK_INSTALLED)
				(*hooks)++;
			*hits += atomic64_read(&o->hooks[i].hits);
		}
	mutex_unlock(&shim.lock);
	return 0;
}

int p2ps_for_each_hook(int (*fn)(const struct p2ps_hook *h, void *arg), void *arg,
		       unsigned int skip)
{
	struct object *o;
	unsigned int i;
	int ret = 0;

	if (mutex_lock_killable(&shim.lock))
		return -EINTR;
	/* nvidia's object's hooks, then the others', while they have any. */
	for (o = shim.obj; o < shim.obj + NR_OBJECTS && !ret; o++) {
		for (i = skip; i < o->nr_hooks && !ret; i++)
			ret = fn(&o->hooks[i], arg);
		skip = skip > o->nr_hooks ? skip - o->nr_hooks : 0;
	}
	mutex_unlock(&shim.lock);
	return ret;
}

/* nvidia and nvidia-uvm arriving and leaving. */
static int driver_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;
	bool nvidia = !strcmp(mod->name, "nvidia");

	if (!nvidia && !p2ps_is_object_module(mod->name))
		return NOTIFY_DONE;
	mutex_lock(&shim.lock);
	if (!nvidia)
		life_object(mod, action);
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
	int ret = p2ps_policies_check();

	if (ret)
		return ret;
	p2ps_forced_gone_listen(&residual_work);
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
	p2ps_forced_gone_listen(NULL);
	cancel_work_sync(&residual_work);
}
