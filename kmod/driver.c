// SPDX-License-Identifier: GPL-2.0
/*
 * Finding the nvidia module and resolving symbols inside it, and only
 * inside it: every address p2p-shim ever hooks or calls comes from
 * nvidia's own symbol table, never from userspace or the rest of the
 * kernel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kallsyms.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <p2p-shim/resolve.h>
#include <p2p-shim/uapi.h>

#include "driver.h"
#include "hook.h"

#define DRIVER_NAME "nvidia"

/*
 * The nvidia module, with a reference held, or NULL if it is not loaded
 * (or is on its way out).  find_module() is not exported, but every module
 * has a kobject in the same kset as ours (/sys/module), and holding that
 * kobject keeps the module from being freed while we take a reference.
 */
struct module *p2ps_driver_find(void)
{
	return p2ps_module_find(DRIVER_NAME);
}

/* The same for another module of the driver (nvidia_uvm). */
struct module *p2ps_module_find(const char *name)
{
	struct kobject *kobj;
	struct module *mod;

	kobj = kset_find_obj(THIS_MODULE->mkobj.kobj.kset, name);
	if (!kobj)
		return NULL;
	mod = container_of(kobj, struct module_kobject, kobj)->mod;
	if (mod && !try_module_get(mod))
		mod = NULL;
	kobject_put(kobj);
	return mod;
}

/*
 * The symbol source of the shared resolver (rules/resolve.c): @mod's own
 * text symbols, and its code as loaded.
 */
static void kallsyms_walk(const struct p2ps_symsrc *src,
			  bool (*fn)(const struct p2ps_sym *sym, void *arg), void *arg)
{
	struct module *mod = src->priv;
	struct mod_kallsyms *ks;
	unsigned int i;

	preempt_disable();
	ks = rcu_dereference_sched(mod->kallsyms);
	for (i = 0; i < ks->num_symtab; i++) {
		const Elf_Sym *sym = &ks->symtab[i];
		struct p2ps_sym s = {
			.name = ks->strtab + sym->st_name,
			.addr = sym->st_value,
			.size = sym->st_size,
		};

		if (ks->typetab[i] != 't' && ks->typetab[i] != 'T')
			continue;
		if (fn(&s, arg))
			break;
	}
	preempt_enable();
}

static long kallsyms_read(const struct p2ps_symsrc *src, unsigned long long addr, void *buf,
			  size_t len)
{
	if (copy_from_kernel_nofault(buf, (void *)(unsigned long)addr, len))
		return -EFAULT;
	return len;
}

static void symsrc_init(struct p2ps_symsrc *src, struct module *mod)
{
	*src = (struct p2ps_symsrc){
		.module = mod->name,
		.walk = kallsyms_walk,
		.read = kallsyms_read,
		.ibt = IS_ENABLED(CONFIG_X86_KERNEL_IBT),
		/* 6.9 renamed it: CONFIG_CALL_DEPTH_TRACKING before */
		.thunks = IS_ENABLED(CONFIG_MITIGATION_CALL_DEPTH_TRACKING) ||
			  IS_ENABLED(CONFIG_CALL_DEPTH_TRACKING),
		.priv = mod,
	};
}

/* The one text symbol @name in @mod, or 0; its size to @size. */
unsigned long p2ps_driver_lookup_size(struct module *mod, const char *name, unsigned long *size)
{
	struct p2ps_symsrc src;
	struct p2ps_sym s;

	symsrc_init(&src, mod);
	if (p2ps_find_symbol(&src, name, &s) != 1)
		return 0;
	*size = s.size;
	return s.addr;
}

unsigned long p2ps_driver_lookup(struct module *mod, const char *name)
{
	unsigned long size;

	return p2ps_driver_lookup_size(mod, name, &size);
}

/* Take the resolver's verdict on @n targets into @hooks; the failure to @err. */
static int take(const struct p2ps_target *t, int failed, struct p2ps_hook *hooks, unsigned int n,
		struct p2ps_arm_error *err)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (t[i].symbol[0])
			strscpy(hooks[i].symbol, t[i].symbol, sizeof(hooks[i].symbol));
		hooks[i].addr = t[i].addr;
		hooks[i].dest = t[i].dest;
		if (t[i].note[0])
			pr_warn("%s\n", t[i].note);
	}
	if (failed < 0)
		return 0;
	p2ps_fail(err, t[failed].culprit, "%s", t[failed].why);
	return t[failed].err;
}

/*
 * Resolve every target, destination and called function of @obj with the
 * shared rules (rules/resolve.c: `p2pctl check` applies the same), into
 * @hooks.  nvidia's object: its hooks and calls in @nv.  Another object
 * (the UVM peer set): its first hook in @nv, the others in @mod, and the
 * copy-address function's call.  Nothing is installed here; any problem
 * fails the whole object.
 */
int p2ps_resolve_object(struct module *nv, struct module *mod, const struct p2ps_object *obj,
			struct p2ps_hook *hooks, struct p2ps_arm_error *err)
{
	const char *const *call;
	struct p2ps_symsrc nsrc, msrc;
	struct p2ps_target *t;
	int ret;

	t = kcalloc(obj->nr_hooks, sizeof(*t), GFP_KERNEL);
	if (!t) {
		p2ps_fail(err, "", "out of memory");
		return -ENOMEM;
	}
	symsrc_init(&nsrc, nv);
	if (mod != nv) {
		symsrc_init(&msrc, mod);
		ret = take(t, p2ps_resolve_uvm_set(&nsrc, &msrc, obj, t), hooks, obj->nr_hooks, err);
		kfree(t);
		return ret;
	}
	ret = take(t, p2ps_resolve_hooks(&nsrc, obj->hooks, obj->nr_hooks, t),
		   hooks, obj->nr_hooks, err);
	for (call = obj->calls; !ret && call && *call; call++) {
		ret = p2ps_resolve_call(&nsrc, *call, t);
		if (ret)
			p2ps_fail(err, t->culprit, "%s", t->why);
		else if (t->note[0])
			pr_warn("%s\n", t->note);
	}
	kfree(t);
	return ret;
}
