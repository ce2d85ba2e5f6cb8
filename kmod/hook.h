/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hook.c: the hook engine.  An installed hook, the ops a policy gives it,
 * and why an arming failed.
 */
#ifndef _P2PS_HOOK_H
#define _P2PS_HOOK_H

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/types.h>

#include <p2p-shim/profile.h>

/* One installed hook. */
struct p2ps_hook {
	const struct p2ps_hook_desc *desc;
	const struct p2ps_hook_ops *ops;	/* its action's, from its policy (policy.c) */
	char symbol[P2PS_NAME_LEN];	/* the resolved target, e.g. with its stub suffix */
	unsigned long addr;		/* target, in nvidia */
	unsigned long dest;		/* REDIRECT: destination, in nvidia */
	unsigned long via;		/* REDIRECT: wrapper in p2p-shim, or 0 */
	enum p2ps_hook_kind kind;	/* as installed: COUNT in a dry run */
	enum p2ps_hook_state state;
	unsigned int set;		/* hook.c: only the live set's handlers act */
	bool retiring;			/* being removed: takes no new call */
	atomic_t calls;			/* RETURN: calls taken, return handler not yet run */
	bool keep;			/* left installed by a disable (lifecycle.c: residual) */
	atomic64_t hits;
	atomic64_t bypassed;		/* UVM_SCOPE: builds that missed the aperture hook */
	char last_error[P2PS_REASON_LEN];
	union {
		struct kprobe kp;
		struct kretprobe krp;
	};
	struct kprobe guard;		/* RETURN: keeps krp unoptimised (hook.c) */
};

/*
 * What a hook does on top of its kind: the handlers of the policy that owns
 * it.  The profile names an action per hook (profile.c: ACT()); each policy
 * lists the actions it owns with its ops (struct p2ps_action_ops), the
 * lifecycle gives each hook its ops at arming (policy.c:
 * p2ps_policies_ops()), and the engine calls them without knowing whose
 * they are.
 */
#define P2PS_RET_DATA_SIZE	48
struct p2ps_hook_ops {
	/* REDIRECT: whether this call goes to the destination (NULL: every call). */
	bool (*route)(struct pt_regs *regs);
	/*
	 * REDIRECT through a wrapper with the target's signature, which calls
	 * the destination itself (its policy binds it at arming:
	 * p2ps_hooks_bind_wrapper()).
	 */
	void *wrapper;
	/* ARG: at the target's entry; may rewrite argument registers. */
	void (*arg)(struct pt_regs *regs);
	/*
	 * RETURN: @entry saves what the call needs in @data (P2PS_RET_DATA_SIZE
	 * bytes), @ret may change the return value and out-parameters.  @ret
	 * returns why it left the call as the stock driver has it, when that
	 * is worth showing, or NULL; the engine counts it in status.
	 */
	void (*entry)(void *data, struct pt_regs *regs);
	const char *(*ret)(void *data, struct pt_regs *regs);
	/* Kept by a disable while GPUs carry our ForceP2P (lifecycle.c). */
	bool residual;
};

/* One action of the profile and the ops of the policy that owns it. */
struct p2ps_action_ops {
	enum p2ps_action action;
	const struct p2ps_hook_ops *ops;
};

/* A hook with nothing on top of its kind (a plain redirect: P2PS_ACT_NONE). */
extern const struct p2ps_hook_ops p2ps_hook_none_ops;

/* Why arming failed. */
struct p2ps_arm_error {
	char target[P2PS_NAME_LEN];
	char reason[P2PS_REASON_LEN];
};

__printf(3, 4)
void p2ps_fail(struct p2ps_arm_error *err, const char *target, const char *fmt, ...);

int p2ps_hooks_install(struct p2ps_hook *hooks, unsigned int n, bool dry_run,
		       struct p2ps_arm_error *err);
void p2ps_hooks_remove(struct p2ps_hook *hooks, unsigned int n);
void p2ps_hooks_activate(unsigned int set);
unsigned long p2ps_hooks_bind_wrapper(struct p2ps_hook *hooks, unsigned int n,
				      const struct p2ps_hook_ops *ops);

/*
 * A policy's bind (struct p2ps_policy, policy.h), at arming before its
 * hooks are installed: what it learns of the driver and the profile, and
 * its wrappers' destinations.
 */
typedef int p2ps_bind_fn(struct module *mod, const struct p2ps_profile *profile,
			 struct p2ps_hook *hooks, unsigned int n, struct p2ps_arm_error *err);

/*
 * One object's arming (struct p2ps_object, profile.h), as its callbacks
 * see it: the profile, nvidia, the object's module and its hooks.
 */
struct p2ps_arming {
	const struct p2ps_profile *profile;
	const struct p2ps_object *obj;
	struct module *nv;		/* nvidia */
	struct module *mod;		/* the object's module (nvidia for nvidia's) */
	struct p2ps_hook *hooks;
	unsigned int nr_hooks;
	bool dry_run;
};

/*
 * An object's callbacks (nvidia's are the lifecycle's, the others' their
 * policy's: policy.c, p2ps_policies_object_cb()), as livepatch's
 * klp_callbacks: around the arming and disarming of its hooks,
 * under the lifecycle's lock (lifecycle.c: object_arm(), object_disarm()).
 * Every member is optional.
 */
struct p2ps_object_cb {
	/*
	 * Every target resolved, nothing installed yet: may refuse, and
	 * then undoes its own part (post_disarm is not called).
	 */
	int (*pre_arm)(const struct p2ps_arming *a, struct p2ps_arm_error *err);
	/* Every hook installed. */
	void (*post_arm)(const struct p2ps_arming *a);
	/* The arming failed (what pre_arm set up, if it succeeded, undone). */
	void (*arm_failed)(const struct p2ps_arming *a, const struct p2ps_arm_error *err, int ret);
	/* Its hooks are about to go. */
	void (*pre_disarm)(const struct p2ps_object *obj);
	/* Its hooks are gone, or their installing after pre_arm failed. */
	void (*post_disarm)(const struct p2ps_object *obj);
	/* Its module left; its hooks are gone. */
	void (*left)(const struct p2ps_object *obj);
};

#endif /* _P2PS_HOOK_H */
