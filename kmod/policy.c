// SPDX-License-Identifier: GPL-2.0
/*
 * The policies, in the order their tables are walked.  Binding goes in
 * this order, so the first refusal of an arming is the one users have
 * always seen (the caps guard and the registry defaults never refuse;
 * the mapping wrappers, gen 0's static BAR1 set, then the ledger's BAR1
 * DMA function may).  A disable asks static BAR1 for a decision in
 * flight before the ledger for live mappings (a gen 0 decision ends in a
 * ledger entry: read the other way round, one could slip between), and
 * live mappings are the reason it names.  A detached GPU is forgotten by
 * the ledger before the UVM peer set, whose tags the ledger's pairs back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/printk.h>
#include <linux/string.h>

#include "faults.h"
#include "policy.h"

static const struct p2ps_policy *const policies[] = {
	&p2ps_caps_policy,
	&p2ps_registry_policy,
	&p2ps_sb1_policy,
	&p2ps_bar1_policy,
	&p2ps_gen0_policy,
	&p2ps_ledger_policy,
	&p2ps_uvm_policy,
	&p2ps_uvm_peer_policy,
	/* The GPU table's own hooks: actions only, it walks the others. */
	&p2ps_gpus_policy,
};

#define for_each_policy(p, i) \
	for ((i) = 0; (i) < ARRAY_SIZE(policies) && ((p) = policies[i]); (i)++)

/* A policy's actions table ends at {P2PS_ACT_NONE}. */
#define for_each_action(a, p) \
	for ((a) = (p)->actions; (a) && (a)->action != P2PS_ACT_NONE; (a)++)

/* The ops of the policy that owns @action, or NULL: none does. */
const struct p2ps_hook_ops *p2ps_policies_ops(enum p2ps_action action)
{
	const struct p2ps_action_ops *a;
	const struct p2ps_policy *p;
	unsigned int i;

	if (action == P2PS_ACT_NONE)
		return &p2ps_hook_none_ops;
	if (p2ps_fault(P2PS_FAULT_UNOWNED_ACTION, action))
		return NULL;
	for_each_policy(p, i)
		for_each_action(a, p)
			if (a->action == action)
				return a->ops;
	return NULL;
}

/* The policy tables: each action's ops, one owner per action, objects with callbacks. */
static int check_policies(void)
{
	const struct p2ps_action_ops *a, *b;
	const struct p2ps_policy *p, *q;
	unsigned int i, j;

	for_each_policy(p, i) {
		if (!p->object != !p->object_cb) {
			pr_err("policy table '%s': an object without callbacks, or callbacks without one\n",
			       p->name);
			return -EINVAL;
		}
		for_each_action(a, p) {
			if (!a->ops) {
				pr_err("policy table '%s': action %d has no ops\n", p->name, a->action);
				return -EINVAL;
			}
			for (j = 0; j < i && (q = policies[j]); j++)
				for_each_action(b, q)
					if (b->action == a->action) {
						pr_err("policy tables '%s' and '%s' both own action %d\n",
						       q->name, p->name, a->action);
						return -EINVAL;
					}
		}
	}
	return 0;
}

/*
 * @h's ops (@ops) have the handler its kind calls: ARG an arg, RETURN an
 * entry or a return handler, and a REDIRECT a wrapper exactly where the
 * rules say the module calls the destination (profile.c:
 * p2ps_action_calls_dest(): the resolver checks only those destinations
 * for an IBT landing pad).
 */
static bool ops_fit(const struct p2ps_hook_desc *h, const struct p2ps_hook_ops *ops)
{
	switch (h->kind) {
	case P2PS_HOOK_ARG:
		return ops->arg;
	case P2PS_HOOK_RETURN:
		return ops->entry || ops->ret;
	case P2PS_HOOK_REDIRECT:
		return !ops->wrapper == !p2ps_action_calls_dest(h->action);
	default:
		return false;
	}
}

/*
 * Every hook of every profile has the ops of its action's owner, fitting
 * its kind, and every object but nvidia's (the lifecycle's) an owner.
 */
static int check_profiles(void)
{
	const struct p2ps_hook_ops *ops;
	const struct p2ps_object *o;
	const struct p2ps_hook_desc *h;
	unsigned int i;

	for (i = 0; i < p2ps_nr_profiles; i++) {
		const struct p2ps_profile *prof = &p2ps_profiles[i];

		for (o = prof->objects; o->module; o++) {
			if (o != p2ps_profile_nvidia(prof) && !p2ps_policies_object_cb(o->module)) {
				pr_err("profile %s: no policy owns object %s (%s)\n",
				       prof->name, o->name ?: o->module, o->module);
				return -EINVAL;
			}
			for (h = o->hooks; h < o->hooks + o->nr_hooks; h++) {
				ops = p2ps_policies_ops(h->action);
				if (!ops || !ops_fit(h, ops)) {
					/* nvidia's object has no name of its own */
					pr_err("profile %s, object %s: hook %s (action %d) %s\n",
					       prof->name, o->name ?: o->module, h->target, h->action,
					       ops ? "has ops that do not fit its kind" :
					       "has no policy");
					return -EINVAL;
				}
			}
		}
	}
	return 0;
}

/*
 * At load, before anything can arm: a broken table fails the load, naming
 * the table and the entry, instead of an arming much later.  hook.c calls
 * a hook's ops without checking them.
 */
int p2ps_policies_check(void)
{
	return check_policies() ?: check_profiles();
}

/* The callbacks of @module's object, from the policy that owns it, or NULL. */
const struct p2ps_object_cb *p2ps_policies_object_cb(const char *module)
{
	const struct p2ps_policy *p;
	unsigned int i;

	for_each_policy(p, i)
		if (p->object && !strcmp(p->object, module))
			return p->object_cb;
	return NULL;
}

int p2ps_policies_bind(struct module *mod, const struct p2ps_profile *profile,
		       struct p2ps_hook *hooks, unsigned int n, struct p2ps_arm_error *err)
{
	const struct p2ps_policy *p;
	unsigned int i;
	int ret;

	for_each_policy(p, i) {
		ret = p->bind ? p->bind(mod, profile, hooks, n, err) : 0;
		if (ret)
			goto unwind;
	}
	return 0;

unwind:
	/* Only those bound, last first: a bind that fails undoes its own part. */
	while (i--)
		if (policies[i]->unbind)
			policies[i]->unbind();
	return ret;
}

void p2ps_policies_unbind(void)
{
	const struct p2ps_policy *p;
	unsigned int i;

	for_each_policy(p, i)
		if (p->unbind)
			p->unbind();
}

void p2ps_policies_reset(void)
{
	const struct p2ps_policy *p;
	unsigned int i;

	for_each_policy(p, i)
		if (p->reset)
			p->reset();
}

/*
 * Every policy is asked, in table order, each reading its own state once;
 * the last to refuse names the reason (it overwrites @why).
 */
bool p2ps_policies_busy(char *why, size_t len)
{
	const struct p2ps_policy *p;
	bool busy = false;
	unsigned int i;

	for_each_policy(p, i)
		if (p->busy && p->busy(why, len))
			busy = true;
	return busy;
}

void p2ps_policies_residual(bool on)
{
	const struct p2ps_policy *p;
	unsigned int i;

	for_each_policy(p, i)
		if (p->residual)
			p->residual(on);
}

void p2ps_policies_gpu_attach(unsigned int instance, const void *arg, u64 dbd)
{
	const struct p2ps_policy *p;
	unsigned int i;

	for_each_policy(p, i)
		if (p->gpu_attach)
			p->gpu_attach(instance, arg, dbd);
}

void p2ps_policies_gpu_forget(unsigned int instance)
{
	const struct p2ps_policy *p;
	unsigned int i;

	for_each_policy(p, i)
		if (p->gpu_forget)
			p->gpu_forget(instance);
}

void p2ps_policies_forget_gpu(struct OBJGPU *gpu)
{
	const struct p2ps_policy *p;
	unsigned int i;

	for_each_policy(p, i)
		if (p->forget_gpu)
			p->forget_gpu(gpu);
}

void p2ps_policies_pair_created(struct OBJGPU *g0, struct OBJGPU *g1, bool native)
{
	const struct p2ps_policy *p;
	unsigned int i;

	for_each_policy(p, i)
		if (p->pair_created)
			p->pair_created(g0, g1, native);
}
