/* SPDX-License-Identifier: GPL-2.0 */
/*
 * policy.c: each policy's table, and the walks over them.  A policy calls
 * nothing of the lifecycle and nothing of another policy to learn of an
 * event: the lifecycle (lifecycle.c), the GPU table (gpus.c) and the
 * ledger (ledger.c) walk these tables instead.  Every member is optional.
 */
#ifndef _P2PS_POLICY_H
#define _P2PS_POLICY_H

#include <linux/types.h>

#include "hook.h"
#include "nv.h"

struct p2ps_policy {
	const char *name;
	/*
	 * The profile's actions it owns, with their ops; {P2PS_ACT_NONE}-
	 * terminated.  Checked at load (p2ps_policies_check()).
	 */
	const struct p2ps_action_ops *actions;
	/*
	 * The module whose object (struct p2ps_object, profile.h) it owns, if
	 * any, and that object's callbacks (nvidia's are the lifecycle's).
	 */
	const char *object;
	const struct p2ps_object_cb *object_cb;
	/*
	 * At arming, before the new set is installed: what the policy learns
	 * of the driver and the profile, its wrappers' destinations.  In
	 * table order; the first refusal ends the arming, and the policies
	 * bound before it are unbound (a bind that fails undoes its own part).
	 */
	p2ps_bind_fn *bind;
	/* After its hooks are gone (disarm, residual): its calls have ended. */
	void (*unbind)(void);
	/* No hook of ours runs (arming, disarming): forget what they taught. */
	void (*reset)(void);
	/*
	 * A disable deciding (the in-flight gate closed): whether this policy
	 * refuses it, and why (into @why).  All are asked, in table order;
	 * the last to refuse names the reason.
	 */
	bool (*busy)(char *why, size_t len);
	/*
	 * The residual state begins (@on: a disable keeps the hooks whose ops
	 * say .residual, docs/lifecycle.md) or ends: what a policy whose
	 * hooks stay does differently there.
	 */
	void (*residual)(bool on);
	/*
	 * gpus.c: a GPU's attach begins (@arg: its GPUATTACHARG, @dbd: the PCI
	 * address it names, U64_MAX if none); its record goes.
	 */
	void (*gpu_attach)(unsigned int instance, const void *arg, u64 dbd);
	void (*gpu_forget)(unsigned int instance);
	/* gpus.c: a GPU detached; nothing keyed by its OBJGPU may survive. */
	void (*forget_gpu)(struct OBJGPU *gpu);
	/* ledger.c: a BAR1 pair was created, by our wrapper or (@native) by the driver. */
	void (*pair_created)(struct OBJGPU *g0, struct OBJGPU *g1, bool native);
};

extern const struct p2ps_policy p2ps_caps_policy, p2ps_registry_policy, p2ps_sb1_policy,
	p2ps_bar1_policy, p2ps_gen0_policy, p2ps_ledger_policy, p2ps_uvm_policy,
	p2ps_uvm_peer_policy, p2ps_gpus_policy;

int p2ps_policies_check(void);
const struct p2ps_hook_ops *p2ps_policies_ops(enum p2ps_action action);
const struct p2ps_object_cb *p2ps_policies_object_cb(const char *module);

int p2ps_policies_bind(struct module *mod, const struct p2ps_profile *profile,
		       struct p2ps_hook *hooks, unsigned int n, struct p2ps_arm_error *err);
void p2ps_policies_unbind(void);
void p2ps_policies_reset(void);
bool p2ps_policies_busy(char *why, size_t len);
void p2ps_policies_residual(bool on);
void p2ps_policies_gpu_attach(unsigned int instance, const void *arg, u64 dbd);
void p2ps_policies_gpu_forget(unsigned int instance);
void p2ps_policies_forget_gpu(struct OBJGPU *gpu);
void p2ps_policies_pair_created(struct OBJGPU *g0, struct OBJGPU *g1, bool native);

#endif /* _P2PS_POLICY_H */
