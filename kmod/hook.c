// SPDX-License-Identifier: GPL-2.0
/*
 * The hook engine.  It registers probes, lets the live set's handlers act,
 * and removes them; what a hook does is its policy's business: the hook's
 * ops (struct p2ps_hook_ops, given at arming), which the engine calls and never
 * names.  Three plain kinds on kprobes:
 *
 *  - redirect: a kprobe at the target's entry sets the instruction pointer
 *    to another function with the same signature and skips the target.
 *    Nothing has run yet, so the arguments are still in their registers
 *    and on the stack, and the return address is the caller's: the
 *    destination runs as a tail call of the target.  The probe has a
 *    post_handler so that it is never jump-optimised (an optimised probe
 *    ignores a changed instruction pointer).  Where the target's entry is
 *    an ftrace site the kprobe sits on ftrace, which allows the same.
 *  - argument rewrite: a kprobe at the target's entry that may change
 *    argument registers before the target runs (no optimisation either).
 *  - return override: a kretprobe whose handlers look at the arguments on
 *    entry and may change the return value (and out-parameters) on return.
 *  - count: a kprobe that only counts, for dry runs.
 *
 * No probe of ours is ever jump-optimised.  Besides the redirects' need,
 * an optimised probe is unoptimised and removed later, by a worker; if
 * nvidia unloads in between, the kernel (seen on 6.12 and 7.2, IBT, where
 * the probe sits after ENDBR and gets optimised) keeps a dead probe at that
 * address, and every later registration there warns and fails with -EINVAL
 * for the rest of the boot (docs/kernels.md).  A kprobe with a post_handler
 * is never optimised, and neither is a probe that shares its address with
 * one: register_kretprobe() clears the kretprobe's own post_handler, so a
 * return hook first puts a companion kprobe ("guard") with an empty
 * post_handler at the address, and the kretprobe joins it.  Removal goes
 * the other way: the kretprobes first, then the guards and the rest.
 *
 * Installation is all or nothing: the first failure removes every hook
 * installed before it.
 *
 * Sets.  Hooks are installed as a set with a number; only the live set's
 * handlers act, those of any other set let the call through untouched.
 * So a new set can be installed beside an old one on the same targets
 * (re-enabling from the residual state: lifecycle.c) and take over in one
 * store, with no moment where neither acts.  Both do act for a while, each
 * for its own calls: a return hook decides at entry, so a call the old set
 * took still gets the old set's return handler after the switch, while
 * new calls get the new set's; the old set's removal waits until the
 * calls it took have returned (drain(), below), however long that is.
 * Set 0 (the UVM peer set's) always acts.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/version.h>

#include <p2p-shim/uapi.h>

#include "faults.h"
#include "hook.h"

static struct p2ps_hook *kp_hook(struct kprobe *kp)
{
	return container_of(kp, struct p2ps_hook, kp);
}

static unsigned int live_set;

/*
 * From now on, only the hooks of @set (and of set 0) act.  Calls the old
 * set took still get its return handlers: its removal waits for them.
 */
void p2ps_hooks_activate(unsigned int set)
{
	WRITE_ONCE(live_set, set);
}

static bool acts(const struct p2ps_hook *h)
{
	return !READ_ONCE(h->retiring) && (!h->set || h->set == READ_ONCE(live_set));
}

const struct p2ps_hook_ops p2ps_hook_none_ops;

/* Every hook has its ops (checked at load: policy.c, p2ps_policies_check()). */
static const struct p2ps_hook_ops *ops_of(const struct p2ps_hook *h)
{
	return h->ops;
}

static int redirect_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct p2ps_hook *h = kp_hook(kp);
	const struct p2ps_hook_ops *ops = ops_of(h);

	if (!acts(h))
		return 0;
	atomic64_inc(&h->hits);
	if (ops->route && !ops->route(regs))
		return 0;	/* not ours: the target runs as usual */
	instruction_pointer_set(regs, h->via ? h->via : h->dest);
	return 1;
}

/* Its presence keeps the probe from being optimised; see above. */
static void no_opt_post(struct kprobe *kp, struct pt_regs *regs, unsigned long flags)
{
}

static int arg_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct p2ps_hook *h = kp_hook(kp);
	const struct p2ps_hook_ops *ops = ops_of(h);

	if (!acts(h))
		return 0;
	atomic64_inc(&h->hits);
	if (ops->arg)
		ops->arg(regs);
	return 0;
}

/* get_kretprobe() came with 5.11; before it, the instance points at it. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0)
#define get_kretprobe(ri) ((ri)->rp)
#endif

static struct p2ps_hook *krp_hook(struct kretprobe_instance *ri)
{
	return container_of(get_kretprobe(ri), struct p2ps_hook, krp);
}

static int ret_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct p2ps_hook *h = krp_hook(ri);
	const struct p2ps_hook_ops *ops = ops_of(h);

	/* Non-zero: no return handler for this call. */
	if (!acts(h))
		return 1;
	atomic_inc(&h->calls);
	atomic64_inc(&h->hits);
	if (ops->entry)
		ops->entry(ri->data, regs);
	return 0;
}

static int ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct p2ps_hook *h = krp_hook(ri);
	const struct p2ps_hook_ops *ops = ops_of(h);
	const char *why = ops->ret ? ops->ret(ri->data, regs) : NULL;

	if (why)
		snprintf(h->last_error, sizeof(h->last_error), "%lld call(s) left stock; the last: %s",
			 atomic64_inc_return(&h->bypassed), why);
	atomic_dec(&h->calls);
	return 0;
}

static int count_pre(struct kprobe *kp, struct pt_regs *regs)
{
	atomic64_inc(&kp_hook(kp)->hits);
	return 0;
}

static int install_one(struct p2ps_hook *h, bool dry_run)
{
	int ret;

	h->retiring = false;
	atomic_set(&h->calls, 0);
	h->kind = dry_run ? P2PS_HOOK_COUNT : h->desc->kind;
	switch (h->kind) {
	case P2PS_HOOK_REDIRECT:
		h->kp.addr = (kprobe_opcode_t *)h->addr;
		h->kp.pre_handler = redirect_pre;
		h->kp.post_handler = no_opt_post;
		ret = register_kprobe(&h->kp);
		break;
	case P2PS_HOOK_ARG:
		h->kp.addr = (kprobe_opcode_t *)h->addr;
		h->kp.pre_handler = arg_pre;
		h->kp.post_handler = no_opt_post;
		ret = register_kprobe(&h->kp);
		break;
	case P2PS_HOOK_RETURN:
		memset(&h->guard, 0, sizeof(h->guard));
		h->guard.addr = (kprobe_opcode_t *)h->addr;
		h->guard.post_handler = no_opt_post;
		ret = register_kprobe(&h->guard);
		if (ret)
			break;
		h->krp.kp.addr = (kprobe_opcode_t *)h->addr;
		h->krp.entry_handler = ret_entry;
		h->krp.handler = ret_handler;
		h->krp.data_size = P2PS_RET_DATA_SIZE;
		/* A missed instance would skip a registry default: be generous. */
		/* Enough for every CPU in a handler at once: a miss is a lost fix. */
		h->krp.maxactive = max_t(int, 64, 2 * num_possible_cpus());
		ret = register_kretprobe(&h->krp);
		if (ret)
			unregister_kprobe(&h->guard);
		break;
	case P2PS_HOOK_COUNT:
		h->kp.addr = (kprobe_opcode_t *)h->addr;
		h->kp.pre_handler = count_pre;
		h->kp.post_handler = no_opt_post;
		ret = register_kprobe(&h->kp);
		break;
	default:
		ret = -EINVAL;
	}
	return ret;
}

static void remove_one(struct p2ps_hook *h)
{
	if (h->state != P2PS_HOOK_INSTALLED)
		return;
	if (h->kind == P2PS_HOOK_RETURN) {
		unregister_kretprobe(&h->krp);
		unregister_kprobe(&h->guard);
		if (h->krp.nmissed)
			snprintf(h->last_error, sizeof(h->last_error),
				 "%d calls missed", h->krp.nmissed);
	} else {
		unregister_kprobe(&h->kp);
	}
	h->state = P2PS_HOOK_IDLE;
}

/* Why arming failed: the target it failed at ("" for none) and the reason. */
void p2ps_fail(struct p2ps_arm_error *err, const char *target, const char *fmt, ...)
{
	va_list ap;

	strscpy(err->target, target, sizeof(err->target));
	va_start(ap, fmt);
	vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
	va_end(ap);
}

/*
 * At arming, for the policy that owns the wrapper of @ops: the hooks whose
 * descriptor names @ops redirect through ops->wrapper, which calls the
 * destination itself.  Returns that destination (the driver's function
 * the wrapper calls), 0 if the profile has no such hook.
 */
unsigned long p2ps_hooks_bind_wrapper(struct p2ps_hook *hooks, unsigned int n,
				      const struct p2ps_hook_ops *ops)
{
	unsigned long dest = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (hooks[i].ops == ops) {
			if (!p2ps_fault(P2PS_FAULT_UNBOUND_WRAPPER, i))
				hooks[i].via = (unsigned long)ops->wrapper;
			dest = hooks[i].dest;
		}
	return dest;
}

int p2ps_hooks_install(struct p2ps_hook *hooks, unsigned int n, bool dry_run,
		       struct p2ps_arm_error *err)
{
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		struct p2ps_hook *h = &hooks[i];

		/*
		 * A wrapper its policy did not bind would leave the redirect
		 * to go straight to the driver's body: no ledger entry, no
		 * gate, no module reference.  A bug of ours: refused, not armed.
		 */
		if (!dry_run && h->desc->kind == P2PS_HOOK_REDIRECT && h->ops &&
		    h->ops->wrapper && !h->via) {
			p2ps_fail(err, h->symbol, "its wrapper was not bound at arming (a p2p-shim bug)");
			p2ps_hooks_remove(hooks, i);
			return -EINVAL;
		}
		ret = p2ps_fault(P2PS_FAULT_INSTALL, i) ? -ENOMEM : install_one(h, dry_run);
		if (ret) {
			h->state = P2PS_HOOK_FAILED;
			snprintf(h->last_error, sizeof(h->last_error),
				 "kprobe registration failed (%d)", ret);
			p2ps_fail(err, h->symbol, "cannot install the probe: error %d", ret);
			p2ps_hooks_remove(hooks, i);
			return ret;
		}
		h->state = P2PS_HOOK_INSTALLED;
		h->last_error[0] = '\0';
	}
	return 0;
}

/*
 * Drain the hooks about to go: they take no new call, and the calls a
 * return hook has taken get their return handler first.  Unregistering a
 * kretprobe drops the return handler of calls still inside the function
 * (every kernel from 5.10), and those handlers carry the caps guard and
 * the GPU table's attach and detach bookkeeping: a caps query that entered
 * under the old set of a hand-over would leave unguarded.  So no timer:
 * the removal waits as long as the driver keeps such a call (a slow GSP
 * call, an attach), and says so every DRAIN_NOTE.  The caller holds the
 * lifecycle's lock meanwhile; no return handler takes it.  The wait is
 * killable: a call that never returns (its task died inside the driver,
 * which frees the kretprobe instance without the handler) would otherwise
 * hold the lock, and every later status, enable, disable and rmmod,
 * until a reboot.  Killing the waiting rmmod or p2pctl gives the calls up,
 * loudly: only then does a return handler get lost.
 */
#define DRAIN_NOTE	(10 * HZ)

static void drain(struct p2ps_hook *hooks, unsigned int n)
{
	unsigned long note;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (hooks[i].state == P2PS_HOOK_INSTALLED && !hooks[i].keep)
			WRITE_ONCE(hooks[i].retiring, true);
	/* Entry handlers that saw a hook still taking calls have counted. */
	synchronize_rcu();
	for (i = 0; i < n; i++) {
		struct p2ps_hook *h = &hooks[i];

		if (h->state != P2PS_HOOK_INSTALLED || h->keep || h->kind != P2PS_HOOK_RETURN)
			continue;
		note = jiffies + DRAIN_NOTE;
		while (atomic_read(&h->calls)) {
			if (fatal_signal_pending(current)) {
				pr_warn("%s: %d call(s) still inside the driver lose their return handler: the waiting task was killed\n",
					h->symbol, atomic_read(&h->calls));
				break;
			}
			if (time_after_eq(jiffies, note)) {
				pr_info("%s: waiting for %d call(s) still inside the driver: their return handlers must run before the hook goes (kill the waiting task to give them up)\n",
					h->symbol, atomic_read(&h->calls));
				note = jiffies + DRAIN_NOTE;
			}
			schedule_timeout_killable(msecs_to_jiffies(10));
		}
	}
}

/*
 * Remove every installed hook, after draining them.  In batches: each
 * batch waits for one RCU grace period instead of one per probe.  The
 * kretprobes go first: a guard removed before its kretprobe would let the
 * kernel optimise the kretprobe's probe again (see the top of this file).
 */
void p2ps_hooks_remove(struct p2ps_hook *hooks, unsigned int n)
{
	bool nomem = p2ps_fault(P2PS_FAULT_REMOVE_NOMEM, 0);
	struct kretprobe **rps = nomem ? NULL : kcalloc(n, sizeof(*rps), GFP_KERNEL);
	/* Every hook's kprobe, or a return hook's guard. */
	struct kprobe **kps = nomem ? NULL : kcalloc(n, sizeof(*kps), GFP_KERNEL);
	unsigned int i, nk = 0, nr = 0;

	drain(hooks, n);
	if (!kps || !rps) {
		/* One at a time, then; what is kept stays. */
		for (i = n; i--; )
			if (!hooks[i].keep)
				remove_one(&hooks[i]);
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct p2ps_hook *h = &hooks[i];

		if (h->state != P2PS_HOOK_INSTALLED || h->keep)
			continue;
		if (h->kind == P2PS_HOOK_RETURN) {
			rps[nr++] = &h->krp;
			kps[nk++] = &h->guard;
		} else {
			kps[nk++] = &h->kp;
		}
		h->state = P2PS_HOOK_IDLE;
	}
	unregister_kretprobes(rps, nr);
	unregister_kprobes(kps, nk);
	for (i = 0; i < n; i++)
		if (hooks[i].kind == P2PS_HOOK_RETURN && hooks[i].krp.nmissed)
			snprintf(hooks[i].last_error, sizeof(hooks[i].last_error),
				 "%d calls missed", hooks[i].krp.nmissed);
out:
	kfree(kps);
	kfree(rps);
}
