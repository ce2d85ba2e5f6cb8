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
 * Walk nvidia's symbol table for text symbols named @name, or, for a HAL
 * stub, "<name>_<6 hex>".  Returns the number of matches; the first one's
 * address and size go to @addr and @size, its name to @found.
 */
static int lookup(struct module *mod, const char *name, bool stub,
		  unsigned long *addr, unsigned long *size, char *found, size_t len)
{
	struct mod_kallsyms *ks;
	unsigned int i;
	int n = 0;

	preempt_disable();
	ks = rcu_dereference_sched(mod->kallsyms);
	for (i = 0; i < ks->num_symtab; i++) {
		const Elf_Sym *sym = &ks->symtab[i];
		const char *s = ks->strtab + sym->st_name;
		char type = ks->typetab[i];

		if (type != 't' && type != 'T')
			continue;
		if (stub ? !p2ps_is_stub_of(s, name) : strcmp(s, name))
			continue;
		if (!n++) {
			*addr = sym->st_value;
			*size = sym->st_size;
			if (found)
				strscpy(found, s, len);
		}
	}
	preempt_enable();
	return n;
}

/*
 * A compiler clone of @name ("<name>.isra.0", ".constprop.N", ".part.N"):
 * callers of the clone never reach the symbol we probe.  Its name goes to
 * @clone; returns whether there is one.  "<name>.cold" is not a clone but
 * the function's own cold part, reached only from its body.
 */
static bool find_clone(struct module *mod, const char *name, char *clone, size_t len)
{
	size_t n = strlen(name);
	struct mod_kallsyms *ks;
	bool found = false;
	unsigned int i;

	preempt_disable();
	ks = rcu_dereference_sched(mod->kallsyms);
	for (i = 0; i < ks->num_symtab && !found; i++) {
		const char *s = ks->strtab + ks->symtab[i].st_name;

		if ((ks->typetab[i] == 't' || ks->typetab[i] == 'T') &&
		    !strncmp(s, name, n) && p2ps_is_clone_suffix(s + n)) {
			strscpy(clone, s, len);
			found = true;
		}
	}
	preempt_enable();
	return found;
}

unsigned long p2ps_driver_lookup(struct module *mod, const char *name)
{
	unsigned long addr = 0, size;

	return lookup(mod, name, false, &addr, &size, NULL, 0) == 1 ? addr : 0;
}

/* The same, with the function's size. */
unsigned long p2ps_driver_lookup_size(struct module *mod, const char *name, unsigned long *size)
{
	unsigned long addr = 0;

	return lookup(mod, name, false, &addr, size, NULL, 0) == 1 ? addr : 0;
}

/* Check a stub's machine code against the profile's expectation. */
static int check_body(struct p2ps_hook *h, unsigned long size, struct p2ps_arm_error *err)
{
	unsigned char text[32];
	char why[P2PS_REASON_LEN];
	size_t len = size && size < sizeof(text) ? size : sizeof(text);

	if (copy_from_kernel_nofault(text, (void *)h->addr, len)) {
		p2ps_fail(err, h->symbol, "cannot read its code");
		return -EFAULT;
	}
	if (p2ps_match_code(text, len, h->desc->expect, why, sizeof(why))) {
		p2ps_fail(err, h->symbol, "%s", why);
		return -EILSEQ;
	}
	return 0;
}

/*
 * A function the module will call must start with ENDBR on a kernel with
 * IBT: there objtool seals (and the kernel poisons, at load) the ENDBR of
 * functions that nvidia only ever calls directly, and our indirect call
 * would fault (#CP).  Elsewhere a missing ENDBR (a driver built without
 * -fcf-protection) is harmless: say so and go on.
 */
static int check_callable(const char *name, unsigned long addr, struct p2ps_arm_error *err)
{
	unsigned char text[4];

	if (copy_from_kernel_nofault(text, (void *)addr, sizeof(text))) {
		p2ps_fail(err, name, "cannot read its code");
		return -EFAULT;
	}
	if (p2ps_has_endbr(text))
		return 0;
	if (!IS_ENABLED(CONFIG_X86_KERNEL_IBT)) {
		pr_warn("%s does not start with endbr64 (%*ph): harmless on this kernel (no IBT); an IBT kernel would refuse it\n",
			name, (int)sizeof(text), text);
		return 0;
	}
	p2ps_fail(err, name, "%s does not start with endbr64 (%*ph): only called directly "
		  "inside %s, so it cannot be called from here on IBT kernels",
		  name, (int)sizeof(text), text, DRIVER_NAME);
	return -ENOEXEC;
}

/*
 * Identical-code folding (some builds merge functions with the same body,
 * as the BAR1 P2P stubs are): two targets at one address.  A probe there
 * would act on the calls of both, e.g. send a remove to the create
 * implementation.  Refused.
 */
static int check_folded(const struct p2ps_profile *profile, const struct p2ps_hook *hooks,
			struct p2ps_arm_error *err)
{
	unsigned int i, j;

	for (i = 0; i < profile->nr_hooks; i++)
		for (j = 0; j < i; j++)
			if (hooks[i].addr == hooks[j].addr &&
			    strcmp(profile->hooks[i].target, profile->hooks[j].target)) {
				p2ps_fail(err, hooks[i].symbol, "%s and %s are one function (identical "
					  "code folded): a hook on it would act on both", hooks[j].symbol,
					  hooks[i].symbol);
				return -ENOTUNIQ;
			}
	return 0;
}

/*
 * Resolve every target, destination and called function of @profile in
 * @mod and check every stub's body and every function we call.  Nothing
 * is installed here; the first problem fails the whole profile.
 */
int p2ps_resolve(struct module *mod, const struct p2ps_profile *profile,
		 struct p2ps_hook *hooks, struct p2ps_arm_error *err)
{
	const char *const *call;
	char clone[P2PS_NAME_LEN];
	unsigned int i;
	int n, ret;

	for (i = 0; i < profile->nr_hooks; i++) {
		const struct p2ps_hook_desc *d = &profile->hooks[i];
		struct p2ps_hook *h = &hooks[i];
		bool stub = d->flags & P2PS_T_STUB;
		unsigned long size = 0;

		h->desc = d;
		strscpy(h->symbol, d->target, sizeof(h->symbol));
		if (!d->ops) {
			p2ps_fail(err, d->target, "the profile gives %s no ops", d->target);
			return -EINVAL;
		}
		n = lookup(mod, d->target, stub, &h->addr, &size, h->symbol, sizeof(h->symbol));
		if (n == 0) {
			p2ps_fail(err, d->target, "no %s%s in %s", d->target,
				  stub ? "_<hash> stub" : "", mod->name);
			return -ENOENT;
		}
		if (n > 1) {
			p2ps_fail(err, d->target, "%d symbols match %s%s: ambiguous", n,
				  d->target, stub ? "_<hash>" : "");
			return -ENOTUNIQ;
		}
		if (d->expect) {
			ret = check_body(h, size, err);
			if (ret)
				return ret;
		}
		if (!stub && find_clone(mod, d->target, clone, sizeof(clone))) {
			p2ps_fail(err, d->target, "compiler clone %s exists: its callers would bypass "
				  "the hook", clone);
			return -ENOTUNIQ;
		}
		if (d->dest) {
			h->dest = p2ps_driver_lookup(mod, d->dest);
			if (!h->dest) {
				p2ps_fail(err, d->target, "redirect destination %s not found",
					  d->dest);
				return -ENOENT;
			}
			if (p2ps_action_calls_dest(d->action)) {
				ret = check_callable(d->dest, h->dest, err);
				if (ret)
					return ret;
			}
		}
	}
	ret = check_folded(profile, hooks, err);
	if (ret)
		return ret;
	for (call = profile->calls; call && *call; call++) {
		unsigned long addr = p2ps_driver_lookup(mod, *call);

		if (!addr) {
			p2ps_fail(err, *call, "function %s not found", *call);
			return -ENOENT;
		}
		ret = check_callable(*call, addr, err);
		if (ret)
			return ret;
	}
	return 0;
}
