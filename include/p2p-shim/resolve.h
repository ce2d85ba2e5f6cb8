/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Target resolution: finding a profile's hooks in the driver and deciding
 * whether the module may hook them.  rules/resolve.c is compiled into the
 * module (kmod/driver.c gives it nvidia's kallsyms) and into libp2pshim
 * (lib/check.c gives it an nvidia.ko file or a kallsyms dump), so that
 * `p2pctl check` applies the module's rules.  The symbol sources differ
 * at the edges: the module's walk takes text symbols of type t/T only, a
 * kallsyms dump also w/W, an ELF file every STT_FUNC (none of the built
 * drivers 550-595 has a weak or init-section target, so no verdict differs).
 */
#ifndef _P2P_SHIM_RESOLVE_H
#define _P2P_SHIM_RESOLVE_H

#include <p2p-shim/profile.h>

/* One text symbol of a source. */
struct p2ps_sym {
	const char *name;
	unsigned long long addr;	/* 0: not known (an unprivileged kallsyms) */
	unsigned long long size;	/* 0: not known */
};

/*
 * A symbol source: one module's text symbols (nvidia or nvidia-uvm) and,
 * where the source has them, their bytes.
 */
struct p2ps_symsrc {
	const char *module;		/* "nvidia", "nvidia_uvm": for messages */
	/* Calls @fn on every text symbol until it returns true. */
	void (*walk)(const struct p2ps_symsrc *src,
		     bool (*fn)(const struct p2ps_sym *sym, void *arg), void *arg);
	/*
	 * Copies up to @len bytes of code at @addr into @buf, as the loaded
	 * module has them (relocations applied).  Returns how many, -ENODATA
	 * where the source has names only, or another -errno.
	 */
	long (*read)(const struct p2ps_symsrc *src, unsigned long long addr, void *buf,
		     size_t len);
	/* Whether objtool sealed the ENDBR at @addr (.ibt_endbr_seal); may be NULL. */
	bool (*sealed)(const struct p2ps_symsrc *src, unsigned long long addr);
	bool ibt;			/* a function we call must start with endbr64 */
	bool thunks;			/* calls may go through call-depth thunks */
	void *priv;
};

/* What became of one target (a hook, a called function). */
struct p2ps_target {
	int err;			/* 0, or why not: -ENOENT, -ENOTUNIQ, -EILSEQ, ... */
	bool folded;			/* err is identical-code folding with another target */
	bool fingerprint_checked;	/* the stub's bytes were compared */
	char symbol[P2PS_NAME_LEN];	/* the symbol it resolved to, or "" */
	unsigned long long addr;	/* its address (0: not known) */
	unsigned long long dest;	/* REDIRECT: the destination's address */
	char culprit[P2PS_NAME_LEN];	/* on failure: what failed (target, destination, ...) */
	char why[P2PS_REASON_LEN];	/* on failure: why */
	char note[P2PS_REASON_LEN];	/* accepted, with a warning for the log, or "" */
};

/*
 * Resolve @n hooks @d in @src into @t: each target (its exact name, or a
 * stub "<name>_<6 hex>"), unique, with no compiler clone beside it, a
 * stub's body as the profile expects, its destination present and, where
 * the module calls it, callable; then no two targets folded into one
 * function.  Every hook is tried.  Returns the index of the failure to
 * report (a resolution failure before a folding one), or -1.
 */
int p2ps_resolve_hooks(const struct p2ps_symsrc *src, const struct p2ps_hook_desc *d,
		       unsigned int n, struct p2ps_target *t);

/* A function the module calls: present once, and callable. 0 or -errno. */
int p2ps_resolve_call(const struct p2ps_symsrc *src, const char *name, struct p2ps_target *t);

/*
 * The UVM peer set @set: hooks[0] in @nv, the others in @uvm, into @t
 * (set->nr_hooks entries); then, where the set hooks nvidia-uvm's
 * physical address function but not its copy-address function
 * (set->copy_fn), that the copy-address function calls it.  Without bytes
 * (a names-only @uvm) that call is not checked.  Returns as
 * p2ps_resolve_hooks().
 */
int p2ps_resolve_uvm_set(const struct p2ps_symsrc *nv, const struct p2ps_symsrc *uvm,
			 const struct p2ps_object *set, struct p2ps_target *t);

/* The one text symbol named @name in @src: 1, or how many there are (0, 2, ...). */
unsigned int p2ps_find_symbol(const struct p2ps_symsrc *src, const char *name,
			      struct p2ps_sym *found);

#endif /* _P2P_SHIM_RESOLVE_H */
