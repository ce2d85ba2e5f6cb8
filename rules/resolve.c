// SPDX-License-Identifier: GPL-2.0
/*
 * Target resolution over a symbol source: the one set of rules by which
 * the module accepts or refuses a driver's targets (kmod/driver.c, over
 * nvidia's kallsyms) and by which `p2pctl check` judges a driver offline
 * (lib/check.c, over an nvidia.ko file or a kallsyms dump).  Compiled
 * unchanged into both: no kernel-only calls here.
 */
#include <p2p-shim/ruleenv.h>

#include <p2p-shim/resolve.h>

/* The bytes of a stub compared, at most (a prefix and a few instructions). */
#define BODY_BYTES	32
/* The copy-address function read for its call, at most. */
#define COPY_FN_BYTES	4096

static void name_copy(char *dst, const char *src, size_t len)
{
	snprintf(dst, len, "%s", src);
}

static __attribute__((format(printf, 3, 4)))
int fail(struct p2ps_target *t, const char *culprit, const char *fmt, ...)
{
	va_list ap;

	name_copy(t->culprit, culprit, sizeof(t->culprit));
	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
	return t->err;
}

/* "f3 0f 1e fa", as the kernel's %*ph prints it. */
static void hex_bytes(char *buf, size_t len, const unsigned char *p, size_t n)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < n && o < len; i++)
		o += snprintf(buf + o, len - o, "%s%02x", i ? " " : "", p[i]);
}

/* What one walk over the source gathers for a target. */
struct scan {
	const struct p2ps_hook_desc *d;
	unsigned int n;			/* matches of the target */
	struct p2ps_sym first;
	char name[P2PS_NAME_LEN];	/* the first match's name */
	char second[P2PS_NAME_LEN];	/* the second one's (ambiguity) */
	char clone[P2PS_NAME_LEN];	/* a compiler clone of the target, or "" */
	unsigned int ndest;		/* matches of the destination */
	struct p2ps_sym dest;
};

static bool scan_one(const struct p2ps_sym *s, void *arg)
{
	struct scan *sc = arg;
	const struct p2ps_hook_desc *d = sc->d;
	bool stub = d->flags & P2PS_T_STUB;
	size_t n = strlen(d->target);

	if (stub ? p2ps_is_stub_of(s->name, d->target) : !strcmp(s->name, d->target)) {
		if (!sc->n++) {
			sc->first = *s;
			name_copy(sc->name, s->name, sizeof(sc->name));
		} else if (sc->n == 2) {
			name_copy(sc->second, s->name, sizeof(sc->second));
		}
	} else if (!stub && !sc->clone[0] && !strncmp(s->name, d->target, n) &&
		   p2ps_is_clone_suffix(s->name + n)) {
		/* "<name>.isra.0": its callers never reach the symbol we probe */
		name_copy(sc->clone, s->name, sizeof(sc->clone));
	}
	if (d->dest && !strcmp(s->name, d->dest) && !sc->ndest++)
		sc->dest = *s;
	return false;
}

/* Whether the module may call the function @name at @addr. */
static int check_callable(const struct p2ps_symsrc *src, const char *name,
			  unsigned long long addr, struct p2ps_target *t)
{
	unsigned char text[4];
	char hex[16];
	long got = src->read(src, addr, text, sizeof(text));

	if (got == -ENODATA)
		return 0;		/* names only: nothing to judge */
	if (got < (long)sizeof(text)) {
		t->err = -EFAULT;
		return fail(t, name, "cannot read its code");
	}
	if (!p2ps_has_endbr(text)) {
		hex_bytes(hex, sizeof(hex), text, sizeof(text));
		/*
		 * On a kernel with IBT, objtool seals (and the kernel poisons,
		 * at load) the ENDBR of functions only ever called directly,
		 * and an indirect call to one faults (#CP).  Elsewhere a
		 * missing ENDBR is harmless: say so and go on.
		 */
		if (!src->ibt) {
			snprintf(t->note, sizeof(t->note), "%s does not start with endbr64 (%s): "
				 "harmless on this kernel (no IBT); an IBT kernel would refuse it",
				 name, hex);
			return 0;
		}
		t->err = -ENOEXEC;
		return fail(t, name, "%s does not start with endbr64 (%s): only called directly "
			    "inside %s, so it cannot be called from here on IBT kernels",
			    name, hex, src->module);
	}
	if (src->sealed && src->sealed(src, addr)) {
		t->err = -ENOEXEC;
		return fail(t, name, "%s is in .ibt_endbr_seal (only called directly: its ENDBR "
			    "is sealed on IBT kernels)", name);
	}
	return 0;
}

/* A stub's body against the profile's expectation. */
static int check_body(const struct p2ps_symsrc *src, const struct p2ps_hook_desc *d,
		      const struct p2ps_sym *s, struct p2ps_target *t)
{
	unsigned char text[BODY_BYTES];
	size_t len = s->size && s->size < sizeof(text) ? s->size : sizeof(text);
	long got = src->read(src, s->addr, text, len);

	if (got == -ENODATA)
		return 0;		/* names only: "not checked" */
	if (got <= 0) {
		t->err = -EFAULT;
		return fail(t, t->symbol, "cannot read its code");
	}
	t->fingerprint_checked = true;
	if (p2ps_match_code(text, (size_t)got, d->expect, t->why, sizeof(t->why))) {
		t->err = -EILSEQ;
		name_copy(t->culprit, t->symbol, sizeof(t->culprit));
		return t->err;
	}
	return 0;
}

static int resolve_one(const struct p2ps_symsrc *src, const struct p2ps_hook_desc *d,
		       struct p2ps_target *t)
{
	bool stub = d->flags & P2PS_T_STUB;
	struct scan sc;

	memset(t, 0, sizeof(*t));
	memset(&sc, 0, sizeof(sc));
	sc.d = d;
	src->walk(src, scan_one, &sc);
	if (sc.n == 0) {
		t->err = -ENOENT;
		return fail(t, d->target, "no %s%s in %s", d->target, stub ? "_<hash> stub" : "",
			    src->module);
	}
	if (sc.n > 1) {
		t->err = -ENOTUNIQ;
		return fail(t, d->target, "%u symbols match %s%s (%s, %s): ambiguous", sc.n,
			    d->target, stub ? "_<hash>" : "", sc.name, sc.second);
	}
	name_copy(t->symbol, sc.name, sizeof(t->symbol));
	t->addr = sc.first.addr;
	if (d->expect && check_body(src, d, &sc.first, t))
		return t->err;
	if (sc.clone[0]) {
		t->err = -ENOTUNIQ;
		return fail(t, d->target, "compiler clone %s exists: its callers would bypass "
			    "the hook", sc.clone);
	}
	if (!d->dest)
		return 0;
	if (sc.ndest > 1) {
		t->err = -ENOTUNIQ;
		return fail(t, d->target, "redirect destination %s: %u symbols: ambiguous",
			    d->dest, sc.ndest);
	}
	if (!sc.ndest) {
		t->err = -ENOENT;
		return fail(t, d->target, "redirect destination %s not found", d->dest);
	}
	t->dest = sc.dest.addr;
	if (p2ps_action_calls_dest(d->action))
		return check_callable(src, d->dest, t->dest, t);
	return 0;
}

/*
 * Identical-code folding (some builds merge functions with the same body,
 * as the BAR1 P2P stubs are): two targets at one address.  A probe there
 * would act on the calls of both, e.g. send a remove to the create
 * implementation.  Refused.  An address not known (0) is no evidence.
 */
static void check_folded(const struct p2ps_hook_desc *d, unsigned int n, struct p2ps_target *t)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i && !t[i].err; j++) {
			if (t[j].err || !t[i].addr || t[i].addr != t[j].addr ||
			    !strcmp(d[i].target, d[j].target))
				continue;
			t[i].err = -ENOTUNIQ;
			t[i].folded = true;
			fail(&t[i], t[i].symbol, "%s and %s are one function (identical code "
			     "folded): a hook on it would act on both", t[j].symbol, t[i].symbol);
		}
	}
}

/* The failure to report: the first that is not folding, else the first. */
static int first_failure(const struct p2ps_target *t, unsigned int n)
{
	unsigned int i;
	int folded = -1;

	for (i = 0; i < n; i++) {
		if (t[i].err && !t[i].folded)
			return (int)i;
		if (t[i].err && folded < 0)
			folded = (int)i;
	}
	return folded;
}

int p2ps_resolve_hooks(const struct p2ps_symsrc *src, const struct p2ps_hook_desc *d,
		       unsigned int n, struct p2ps_target *t)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		resolve_one(src, &d[i], &t[i]);
	check_folded(d, n, t);
	return first_failure(t, n);
}

struct find {
	const char *name;
	unsigned int n;
	struct p2ps_sym sym;
};

static bool find_one(const struct p2ps_sym *s, void *arg)
{
	struct find *f = arg;

	if (!strcmp(s->name, f->name) && !f->n++)
		f->sym = *s;
	return false;
}

unsigned int p2ps_find_symbol(const struct p2ps_symsrc *src, const char *name,
			      struct p2ps_sym *found)
{
	struct find f = { .name = name };

	src->walk(src, find_one, &f);
	*found = f.sym;
	found->name = NULL;	/* the source's string: not kept past the walk */
	return f.n;
}

int p2ps_resolve_call(const struct p2ps_symsrc *src, const char *name, struct p2ps_target *t)
{
	struct p2ps_sym s;
	unsigned int n = p2ps_find_symbol(src, name, &s);

	memset(t, 0, sizeof(*t));
	if (n > 1) {
		t->err = -ENOTUNIQ;
		return fail(t, name, "%u symbols match %s: ambiguous", n, name);
	}
	if (!n) {
		t->err = -ENOENT;
		return fail(t, name, "function %s not found", name);
	}
	name_copy(t->symbol, name, sizeof(t->symbol));
	t->addr = s.addr;
	return check_callable(src, name, s.addr, t);
}

/*
 * Hooking the phys-address function (hooks[1]) covers copies only if the
 * copy-address function calls it rather than having it inlined: a direct
 * call to it in the copy-address function's code.  A set that hooks the
 * copy-address function itself needs no such call.
 */
static int check_copy_calls(const struct p2ps_symsrc *uvm, const struct p2ps_object *set,
			    struct p2ps_target *phys)
{
	const char *fn = set->copy_fn;
	struct p2ps_sym s;
	unsigned char *text, probe;
	long got;
	int ret;

	if (p2ps_find_symbol(uvm, fn, &s) != 1) {
		phys->err = -ENOENT;
		return fail(phys, fn, "no %s in %s", fn, uvm->module);
	}
	if (!s.size) {
		if (uvm->read(uvm, s.addr, &probe, 1) == -ENODATA)
			return 0;	/* names only: not checked */
		phys->err = -ENOENT;
		return fail(phys, fn, "no %s in %s", fn, uvm->module);
	}
	if (s.size > COPY_FN_BYTES)
		s.size = COPY_FN_BYTES;
	text = rule_alloc(s.size);
	if (!text) {
		phys->err = -ENOMEM;
		return fail(phys, fn, "out of memory");
	}
	got = uvm->read(uvm, s.addr, text, s.size);
	if (got == -ENODATA) {
		ret = 0;		/* names only: not checked */
	} else if (got <= 0) {
		phys->err = -EFAULT;
		ret = fail(phys, fn, "cannot read its code");
	} else if (p2ps_calls_target(text, (size_t)got, s.addr, phys->addr, uvm->thunks)) {
		phys->fingerprint_checked = true;
		ret = 0;
	} else {
		phys->fingerprint_checked = true;
		phys->err = -ENOEXEC;
		ret = fail(phys, fn, "%s does not call %s (inlined?): physical-mode copies would "
			   "keep the stock aperture", fn, set->hooks[1].target);
	}
	rule_free(text);
	return ret;
}

static bool set_hooks_copy(const struct p2ps_object *set)
{
	unsigned int i;

	for (i = 0; i < set->nr_hooks; i++)
		if (set->hooks[i].action == P2PS_ACT_UVM_PEER_COPY)
			return true;
	return false;
}

int p2ps_resolve_uvm_set(const struct p2ps_symsrc *nv, const struct p2ps_symsrc *uvm,
			 const struct p2ps_object *set, struct p2ps_target *t)
{
	p2ps_resolve_hooks(nv, set->hooks, 1, t);
	if (set->nr_hooks > 1) {
		p2ps_resolve_hooks(uvm, set->hooks + 1, set->nr_hooks - 1, t + 1);
		if (set->copy_fn && !set_hooks_copy(set) && !t[1].err)
			check_copy_calls(uvm, set, &t[1]);
	}
	return first_failure(t, set->nr_hooks);
}
