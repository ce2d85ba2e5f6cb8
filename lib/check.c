// SPDX-License-Identifier: GPL-2.0
/*
 * libp2pshim: offline driver check.  Runs the module's profile resolution
 * and fingerprint rules (rules/profile.c) on an nvidia.ko file or on a
 * kallsyms dump.
 *
 * IBT, statically: a function the module calls must start with endbr64 in
 * the file, and must not be listed in .ibt_endbr_seal, where objtool puts
 * (for kernels with CONFIG_X86_KERNEL_IBT) the functions only ever called
 * directly, whose ENDBR the kernel overwrites at load.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include <p2p-shim/profile.h>
#include "internal.h"

struct sym {
	const char *name;
	const unsigned char *code;	/* NULL: names only */
	size_t len;
	size_t shndx;			/* module file: section and offset */
	unsigned long long value;	/* (kallsyms: shndx 0, the address; 0 if hidden) */
	bool sealed;			/* in .ibt_endbr_seal */
};

struct symset {
	struct sym *v;
	size_t n, cap;
	char *strings;			/* kallsyms: owned copy of names */
};

static int symset_add(struct symset *s, const char *name, const unsigned char *code, size_t len)
{
	if (s->n == s->cap) {
		size_t c = s->cap ? s->cap * 2 : 1024;
		struct sym *n = realloc(s->v, c * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->v = n;
		s->cap = c;
	}
	memset(&s->v[s->n], 0, sizeof(s->v[s->n]));
	s->v[s->n].name = name;
	s->v[s->n].code = code;
	s->v[s->n].len = len;
	s->n++;
	return 0;
}

/* Why @sy cannot be called from the module on an IBT kernel, or NULL. */
static const char *not_callable(const struct sym *sy)
{
	if (sy->code && sy->len >= 4 && !p2ps_has_endbr(sy->code))
		return "does not start with endbr64";
	if (sy->sealed)
		return "is in .ibt_endbr_seal (only called directly: its ENDBR is sealed on IBT kernels)";
	return NULL;
}

static int sym_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sym *)a)->name, ((const struct sym *)b)->name);
}

/* Index of the first symbol >= @name. */
static size_t lower_bound(const struct symset *s, const char *name)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(s->v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t count_exact(const struct symset *s, const char *name, const struct sym **first)
{
	size_t i = lower_bound(s, name), n = 0;

	*first = NULL;
	for (; i < s->n && !strcmp(s->v[i].name, name); i++) {
		if (!n)
			*first = &s->v[i];
		n++;
	}
	return n;
}

/* Stubs "<base>_<6hex>": the number of distinct names, the first match. */
static size_t find_stubs(const struct symset *s, const char *base, const struct sym **first,
			 const char **second)
{
	char prefix[160];
	size_t i, n = 0;
	const char *last = NULL;

	snprintf(prefix, sizeof(prefix), "%s_", base);
	*first = NULL;
	*second = NULL;
	for (i = lower_bound(s, prefix); i < s->n && !strncmp(s->v[i].name, prefix, strlen(prefix)); i++) {
		if (!p2ps_is_stub_of(s->v[i].name, base))
			continue;
		if (last && !strcmp(last, s->v[i].name))
			continue;
		if (!n)
			*first = &s->v[i];
		else if (n == 1)
			*second = s->v[i].name;
		last = s->v[i].name;
		n++;
	}
	return n;
}

/* Resolve one hook into @it; returns the target's symbol where it is ok, else NULL. */
static const struct sym *resolve_hook(const struct symset *s, const struct p2ps_hook_desc *d,
				      bool fp, struct p2ps_check_item *it)
{
	const struct sym *sy = NULL;
	size_t n;

	memset(it, 0, sizeof(*it));
	p2ps_strlcpy(it->target, d->target, sizeof(it->target));
	if (d->dest)
		p2ps_strlcpy(it->dest, d->dest, sizeof(it->dest));
	if (d->flags & P2PS_T_STUB) {
		const char *second;

		n = find_stubs(s, d->target, &sy, &second);
		if (n == 0) {
			snprintf(it->status, sizeof(it->status),
				 "missing symbol: no stub %s_<6 hex>", d->target);
			return NULL;
		}
		if (n > 1) {
			snprintf(it->status, sizeof(it->status),
				 "ambiguous: %zu stubs (%s, %s)", n, sy->name, second);
			return NULL;
		}
	} else {
		char dotted[160];
		size_t i;

		n = count_exact(s, d->target, &sy);
		if (n == 0) {
			snprintf(it->status, sizeof(it->status), "missing symbol %s", d->target);
			return NULL;
		}
		/* A compiler clone "<target>.isra.0": its callers bypass the hook. */
		snprintf(dotted, sizeof(dotted), "%s.", d->target);
		for (i = lower_bound(s, dotted);
		     i < s->n && !strncmp(s->v[i].name, dotted, strlen(dotted)); i++) {
			if (!p2ps_is_clone_suffix(s->v[i].name + strlen(d->target)))
				continue;
			snprintf(it->status, sizeof(it->status),
				 "compiler clone %s exists: its callers would bypass the hook",
				 s->v[i].name);
			return NULL;
		}
		if (n > 1) {
			snprintf(it->status, sizeof(it->status),
				 "ambiguous: %zu symbols named %s", n, d->target);
			return NULL;
		}
	}
	p2ps_strlcpy(it->symbol, sy->name, sizeof(it->symbol));
	if ((d->flags & P2PS_T_STUB) && d->expect && fp && sy->code) {
		char why[200] = "";

		it->fingerprint_checked = true;
		if (p2ps_match_code(sy->code, sy->len, d->expect, why, sizeof(why))) {
			snprintf(it->status, sizeof(it->status), "changed stub %s: %s", sy->name, why);
			return NULL;
		}
	}
	if (d->dest) {
		const struct sym *ds;
		const char *why;

		n = count_exact(s, d->dest, &ds);
		if (n == 0) {
			snprintf(it->status, sizeof(it->status), "missing destination %s", d->dest);
			return NULL;
		}
		if (n > 1) {
			snprintf(it->status, sizeof(it->status),
				 "ambiguous destination: %zu symbols named %s", n, d->dest);
			return NULL;
		}
		why = p2ps_action_calls_dest(d->action) ? not_callable(ds) : NULL;
		if (why) {
			snprintf(it->status, sizeof(it->status), "destination %s %s", d->dest, why);
			return NULL;
		}
	}
	it->ok = true;
	p2ps_strlcpy(it->status, "ok", sizeof(it->status));
	return sy;
}

/* One function: the same place in the file, or the same (known) address. */
static bool same_place(const struct sym *a, const struct sym *b)
{
	return a->shndx == b->shndx && a->value == b->value && (a->shndx || a->value);
}

/*
 * Resolve @n hooks @d into @items (the module's p2ps_resolve, hook by
 * hook); returns true if all resolved.  Then identical-code folding, as
 * the module refuses it (kmod/driver.c check_folded): two targets at one
 * address, a hook on it acting on both.
 */
static bool resolve_hooks(const struct symset *s, const struct p2ps_hook_desc *d, size_t n,
			  bool fp, struct p2ps_check_item *items)
{
	const struct sym **at = calloc(n ? n : 1, sizeof(*at));
	bool all = true;
	size_t i, j;

	if (!at)
		return false;
	for (i = 0; i < n; i++) {
		at[i] = resolve_hook(s, &d[i], fp, &items[i]);
		all &= items[i].ok;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < i && at[i]; j++) {
			if (!at[j] || !same_place(at[i], at[j]) || !strcmp(d[i].target, d[j].target))
				continue;
			items[i].ok = false;
			snprintf(items[i].status, sizeof(items[i].status),
				 "%s and %s are one function (identical code folded): a hook on it "
				 "would act on both", at[j]->name, at[i]->name);
			all = false;
			break;
		}
	}
	free(at);
	return all;
}

/* Resolve @p; returns true if every hook and call resolved. */
static bool resolve(const struct symset *s, const struct p2ps_profile *p, bool fp,
		    struct p2ps_check_report *r)
{
	bool all;
	size_t i, nc = 0;

	free(r->hooks);
	free(r->calls);
	r->hooks = calloc(p->nr_hooks ? p->nr_hooks : 1, sizeof(*r->hooks));
	while (p->calls && p->calls[nc])
		nc++;
	r->calls = calloc(nc ? nc : 1, sizeof(*r->calls));
	r->nr_hooks = r->nr_calls = 0;
	if (!r->hooks || !r->calls)
		return false;
	all = resolve_hooks(s, p->hooks, p->nr_hooks, fp, r->hooks);
	r->nr_hooks = p->nr_hooks;
	for (i = 0; i < nc; i++) {
		struct p2ps_check_item *it = &r->calls[i];
		const struct sym *sy;
		size_t n = count_exact(s, p->calls[i], &sy);

		p2ps_strlcpy(it->target, p->calls[i], sizeof(it->target));
		if (n == 1 && not_callable(sy)) {
			p2ps_strlcpy(it->symbol, p->calls[i], sizeof(it->symbol));
			snprintf(it->status, sizeof(it->status), "%s %s", p->calls[i],
				 not_callable(sy));
			all = false;
		} else if (n == 1) {
			it->ok = true;
			p2ps_strlcpy(it->symbol, p->calls[i], sizeof(it->symbol));
			p2ps_strlcpy(it->status, "ok", sizeof(it->status));
		} else {
			if (n)
				snprintf(it->status, sizeof(it->status),
					 "ambiguous: %zu symbols named %s", n, p->calls[i]);
			else
				snprintf(it->status, sizeof(it->status), "missing symbol %s",
					 p->calls[i]);
			all = false;
		}
	}
	r->nr_calls = nc;
	return all;
}

/*
 * The UVM peer set of @version, as kmod/uvm_peer.c arm_set() resolves it:
 * hooks[0] in nvidia (@s), the rest in nvidia-uvm (@u, NULL or empty when
 * its symbols are not in the input).
 */
static int check_uvm(const struct symset *s, const struct symset *u, const char *version,
		     bool fp, struct p2ps_check_report *r)
{
	const struct p2ps_uvm_set *set = p2ps_uvm_set_for_version(version);
	size_t i, n;
	bool ok;

	if (!set || !set->nr_hooks)
		return 0;
	n = set->nr_hooks;
	r->uvm_hooks = calloc(n, sizeof(*r->uvm_hooks));
	if (!r->uvm_hooks)
		return -ENOMEM;
	r->nr_uvm_hooks = n;
	p2ps_strlcpy(r->uvm_set, set->name, sizeof(r->uvm_set));
	ok = resolve_hooks(s, set->hooks, 1, fp, r->uvm_hooks);
	r->uvm_checked = n == 1 || (u && u->n);
	if (n > 1 && r->uvm_checked) {
		ok &= resolve_hooks(u, set->hooks + 1, n - 1, fp, r->uvm_hooks + 1);
	} else {
		for (i = 1; i < n; i++) {
			p2ps_strlcpy(r->uvm_hooks[i].target, set->hooks[i].target,
				     sizeof(r->uvm_hooks[i].target));
			p2ps_strlcpy(r->uvm_hooks[i].status,
				     "not checked: no nvidia-uvm symbols in the input",
				     sizeof(r->uvm_hooks[i].status));
		}
	}
	r->uvm_ok = ok && r->uvm_checked;
	for (i = 0; i < n && r->uvm_hooks[i].ok; i++)
		;
	if (i < n)
		snprintf(r->uvm_reason, sizeof(r->uvm_reason), "%.100s: %.150s",
			 r->uvm_hooks[i].target, r->uvm_hooks[i].status);
	return 0;
}

static int run_check(struct symset *s, struct symset *u, const char *version,
		     const char *vsource, unsigned int flags, bool fp,
		     struct p2ps_check_report **out)
{
	struct p2ps_check_report *r;
	const struct p2ps_profile *p = NULL;
	bool all;

	qsort(s->v, s->n, sizeof(*s->v), sym_cmp);
	if (u && u->n)
		qsort(u->v, u->n, sizeof(*u->v), sym_cmp);
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fingerprints = fp;
	r->nr_symbols = s->n;
	if (version && *version) {
		unsigned int a, b, c;

		p2ps_strlcpy(r->driver_version, version, sizeof(r->driver_version));
		p2ps_strlcpy(r->version_source, vsource, sizeof(r->version_source));
		if (p2ps_parse_version(version, &a, &b, &c)) {
			p2ps_check_free(r);
			return -EINVAL;
		}
		p = p2ps_profile_for_version(version);
		if (!p && (flags & P2PS_CHECK_FORCE)) {
			p = p2ps_profile_newest();
			r->forced = true;
		}
		if (!p) {
			const char *why = p2ps_unsupported_reason(version);
			char vers[128];

			/* The module's refusal says the same (kmod/main.c, arm()). */
			p2ps_supported_versions(vers, sizeof(vers));
			snprintf(r->reason, sizeof(r->reason),
				 "no profile for driver %.40s (supported: %s)%s%s", version, vers,
				 why ? ": " : "", why ? why : "");
			*out = r;
			return 0;
		}
	} else {
		/* No version: the first profile, newest first, that resolves. */
		unsigned int i;
		const struct p2ps_profile *newest = p2ps_profile_newest();

		r->profile_guessed = true;
		if (newest && resolve(s, newest, fp, r)) {
			p = newest;
		} else {
			for (i = 0; i < p2ps_nr_profiles && !p; i++)
				if (&p2ps_profiles[i] != newest && resolve(s, &p2ps_profiles[i], fp, r))
					p = &p2ps_profiles[i];
		}
		if (!p)
			p = newest;
	}
	if (!p) {
		p2ps_strlcpy(r->reason, "no profiles", sizeof(r->reason));
		*out = r;
		return 0;
	}
	p2ps_strlcpy(r->profile, p->name, sizeof(r->profile));
	all = resolve(s, p, fp, r);
	if (!r->hooks || !r->calls) {
		p2ps_check_free(r);
		return -ENOMEM;
	}
	r->supported = all;
	if (!all) {
		size_t i;

		for (i = 0; i < r->nr_hooks && r->hooks[i].ok; i++)
			;
		if (i < r->nr_hooks) {
			snprintf(r->reason, sizeof(r->reason), "%.100s: %.150s", r->hooks[i].target,
				 r->hooks[i].status);
		} else {
			for (i = 0; i < r->nr_calls && r->calls[i].ok; i++)
				;
			if (i < r->nr_calls)
				snprintf(r->reason, sizeof(r->reason), "%.100s: %.150s",
					 r->calls[i].target, r->calls[i].status);
		}
	} else if (r->profile_guessed) {
		p2ps_strlcpy(r->reason, "driver version unknown: profile chosen by its symbols",
			     sizeof(r->reason));
	}
	/* The set goes by the driver's own version (kmod/uvm_peer.c), as here. */
	if (*r->driver_version && check_uvm(s, u, r->driver_version, fp, r)) {
		p2ps_check_free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

void p2ps_check_free(struct p2ps_check_report *r)
{
	if (!r)
		return;
	free(r->hooks);
	free(r->calls);
	free(r->uvm_hooks);
	free(r);
}

/* ---------------------------------------------------------------- ELF */

static void modinfo_version(const char *data, size_t len, char *out, size_t outlen)
{
	size_t i = 0;

	while (i < len) {
		const char *s = data + i;
		size_t n = strnlen(s, len - i);

		if (n > 8 && !strncmp(s, "version=", 8) && n - 8 < outlen) {
			memcpy(out, s + 8, n - 8);
			out[n - 8] = '\0';
			return;
		}
		i += n + 1;
	}
}

/*
 * .ibt_endbr_seal holds one 32-bit place-relative pointer per sealed
 * function; in a module file each is a relocation against a symbol (the
 * function's section, usually) plus an addend.  Mark the function symbols
 * at those places.
 */
static void mark_sealed(Elf_Scn *rela, Elf_Scn *symscn, struct symset *s)
{
	Elf_Data *rd = elf_getdata(rela, NULL), *sd = elf_getdata(symscn, NULL);
	GElf_Shdr rsh;
	size_t i, j, n;

	if (!rd || !sd || !gelf_getshdr(rela, &rsh) || !rsh.sh_entsize)
		return;
	n = rsh.sh_size / rsh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym target;
		unsigned long long where;

		if (!gelf_getrela(rd, (int)i, &r) ||
		    !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &target))
			continue;
		where = target.st_value + (unsigned long long)r.r_addend;
		for (j = 0; j < s->n; j++)
			if (s->v[j].shndx == target.st_shndx && s->v[j].value == where)
				s->v[j].sealed = true;
	}
}

int p2ps_check_module(const char *path, const char *version, unsigned int flags,
		      struct p2ps_check_report **out)
{
	unsigned char *raw = NULL, *img = NULL;
	size_t rawlen, imglen;
	struct symset s = { 0 };
	char modver[P2PS_NAME_LEN] = "";
	Elf *e = NULL;
	Elf_Scn *scn = NULL, *symscn = NULL, *sealscn = NULL;
	GElf_Shdr sh;
	size_t shstrndx, nsec;
	int err;

	*out = NULL;
	raw = (unsigned char *)p2ps_read_file(path, &rawlen, false);
	if (!raw)
		return -errno ? -errno : -EIO;
	err = p2ps_decompress(raw, rawlen, &img, &imglen);
	free(raw);
	if (err)
		return err;
	elf_version(EV_CURRENT);
	e = elf_memory((char *)img, imglen);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx) ||
	    elf_getshdrnum(e, &nsec)) {
		err = -P2PS_E_FORMAT;
		goto out;
	}
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB && !symscn)
			symscn = scn;
		if (sh.sh_type == SHT_RELA && name && !strcmp(name, ".rela.ibt_endbr_seal"))
			sealscn = scn;
		if (name && !strcmp(name, ".modinfo")) {
			Elf_Data *d = elf_getdata(scn, NULL);

			if (d && d->d_buf)
				modinfo_version(d->d_buf, d->d_size, modver, sizeof(modver));
		}
	}
	if (!symscn) {
		err = -P2PS_E_NO_SYMTAB;
		goto out;
	}
	{
		Elf_Data *d = elf_getdata(symscn, NULL);
		GElf_Shdr ssh;
		size_t i, n;

		if (!d || !gelf_getshdr(symscn, &ssh) || !ssh.sh_entsize) {
			err = -P2PS_E_FORMAT;
			goto out;
		}
		n = ssh.sh_size / ssh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			const unsigned char *code = NULL;
			size_t len = 0;

			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			name = elf_strptr(e, ssh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			if (sym.st_shndx != SHN_UNDEF && sym.st_shndx < nsec) {
				Elf_Scn *ts = elf_getscn(e, sym.st_shndx);
				Elf_Data *td = ts ? elf_getdata(ts, NULL) : NULL;

				if (td && td->d_buf && sym.st_value < td->d_size) {
					size_t room = td->d_size - sym.st_value;

					code = (const unsigned char *)td->d_buf + sym.st_value;
					len = sym.st_size ? sym.st_size : 64;
					if (len > room)
						len = room;
				}
			} else {
				continue;	/* undefined: not in this module */
			}
			err = symset_add(&s, name, code, len);
			if (err)
				goto out;
			s.v[s.n - 1].shndx = sym.st_shndx;
			s.v[s.n - 1].value = sym.st_value;
		}
	}
	if (sealscn)
		mark_sealed(sealscn, symscn, &s);
	if (version && *version)
		err = run_check(&s, NULL, version, "given", flags, true, out);
	else
		err = run_check(&s, NULL, modver, "modinfo", flags, true, out);
out:
	free(s.v);
	if (e)
		elf_end(e);
	free(img);
	return err;
}

/* ---------------------------------------------------------------- kallsyms */

int p2ps_check_kallsyms(const char *path, const char *version, unsigned int flags,
			struct p2ps_check_report **out)
{
	struct symset s = { 0 }, u = { 0 };
	bool tagged, uvm;
	char *buf, *line, *save = NULL;
	int err = 0;

	*out = NULL;
	buf = p2ps_read_file(path, NULL, true);
	if (!buf)
		return errno ? -errno : -EIO;
	tagged = strstr(buf, "\t[") || strstr(buf, " [");
	for (line = strtok_r(buf, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
		char *f[4] = { 0 }, *p = line, *sp;
		int nf = 0;

		while (nf < 4 && (f[nf] = strtok_r(p, " \t", &sp))) {
			p = NULL;
			nf++;
		}
		if (nf < 3 || strlen(f[1]) != 1)
			continue;
		uvm = tagged && nf == 4 && !strcmp(f[3], "[nvidia_uvm]");
		if (tagged && !uvm && (nf < 4 || strcmp(f[3], "[nvidia]")))
			continue;
		if (f[1][0] != 't' && f[1][0] != 'T' && f[1][0] != 'w' && f[1][0] != 'W')
			continue;
		err = symset_add(uvm ? &u : &s, f[2], NULL, 0);
		if (!err)
			(uvm ? &u : &s)->v[(uvm ? &u : &s)->n - 1].value = strtoull(f[0], NULL, 16);
	}
	if (!err && s.n == 0)
		err = -P2PS_E_FORMAT;
	if (!err)
		err = run_check(&s, &u, version, "given", flags, false, out);
	free(s.v);
	free(u.v);
	free(buf);
	return err;
}
