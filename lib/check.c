// SPDX-License-Identifier: GPL-2.0
/*
 * libp2pshim: offline driver check.  Runs the module's own resolver
 * (rules/resolve.c, over the profiles of rules/profile.c) on an nvidia.ko
 * file or on a kallsyms dump, and nvidia-uvm's part of the UVM peer set on
 * its kallsyms lines or an nvidia-uvm.ko file.
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
#include <p2p-shim/resolve.h>
#include "internal.h"

/*
 * A symbol source for the shared resolver (rules/resolve.c): a module
 * file's function symbols with their code, or a kallsyms dump's names.
 * A module file is relocatable: each section gets an address of its own
 * (bases[]), and its code is read with the relocations between its own
 * symbols applied, as the loaded module has them (a call's target).
 */
struct sym {
	const char *name;
	unsigned long long addr;	/* ELF: section base + value; kallsyms: as given */
	unsigned long long size;
	bool sealed;			/* in .ibt_endbr_seal */
};

struct symset {
	struct sym *v;
	size_t n, cap;
	Elf *e;				/* module file, or NULL: names only */
	size_t nsec;
	unsigned long long *bases;	/* per section; 0: not loaded */
	Elf_Scn *symscn;
};

static int symset_add(struct symset *s, const char *name, unsigned long long addr,
		      unsigned long long size)
{
	if (s->n == s->cap) {
		size_t c = s->cap ? s->cap * 2 : 1024;
		struct sym *n = realloc(s->v, c * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->v = n;
		s->cap = c;
	}
	s->v[s->n] = (struct sym){ .name = name, .addr = addr, .size = size };
	s->n++;
	return 0;
}

static void symset_walk(const struct p2ps_symsrc *src,
			bool (*fn)(const struct p2ps_sym *sym, void *arg), void *arg)
{
	const struct symset *s = src->priv;
	size_t i;

	for (i = 0; i < s->n; i++) {
		struct p2ps_sym sy = { s->v[i].name, s->v[i].addr, s->v[i].size };

		if (fn(&sy, arg))
			return;
	}
}

/* The section of a module file at @addr, or 0. */
static size_t section_at(const struct symset *s, unsigned long long addr, GElf_Shdr *sh)
{
	size_t i;

	for (i = 1; i < s->nsec; i++) {
		Elf_Scn *scn = elf_getscn(s->e, i);

		if (s->bases[i] && addr >= s->bases[i] && scn && gelf_getshdr(scn, sh) &&
		    addr - s->bases[i] < sh->sh_size)
			return i;
	}
	return 0;
}

/* Apply @rela's PC-relative relocations against defined symbols to @buf (at @at). */
static void relocate(const struct symset *s, Elf_Scn *rela, unsigned long long at,
		     unsigned char *buf, size_t len)
{
	Elf_Data *rd = elf_getdata(rela, NULL), *sd = elf_getdata(s->symscn, NULL);
	GElf_Shdr rsh;
	size_t i, n;

	if (!rd || !sd || !gelf_getshdr(rela, &rsh) || !rsh.sh_entsize)
		return;
	n = rsh.sh_size / rsh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		unsigned long long place, val;
		unsigned int type;

		if (!gelf_getrela(rd, (int)i, &r))
			continue;
		type = (unsigned int)GELF_R_TYPE(r.r_info);
		if (type != R_X86_64_PC32 && type != R_X86_64_PLT32)
			continue;
		place = s->bases[rsh.sh_info] + r.r_offset;
		if (place < at || place + 4 > at + len)
			continue;
		if (!gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym) ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= s->nsec || !s->bases[sym.st_shndx])
			continue;	/* the kernel's: not ours to place */
		val = s->bases[sym.st_shndx] + sym.st_value + (unsigned long long)r.r_addend - place;
		buf[place - at] = (unsigned char)val;
		buf[place - at + 1] = (unsigned char)(val >> 8);
		buf[place - at + 2] = (unsigned char)(val >> 16);
		buf[place - at + 3] = (unsigned char)(val >> 24);
	}
}

static long symset_read(const struct p2ps_symsrc *src, unsigned long long addr, void *buf,
			size_t len)
{
	const struct symset *s = src->priv;
	Elf_Scn *scn, *rela = NULL;
	Elf_Data *d;
	GElf_Shdr sh, rsh;
	size_t ndx, off;

	if (!s->e)
		return -ENODATA;
	ndx = section_at(s, addr, &sh);
	if (!ndx)
		return -EFAULT;
	if (sh.sh_type == SHT_NOBITS)
		return -ENODATA;
	scn = elf_getscn(s->e, ndx);
	d = scn ? elf_getdata(scn, NULL) : NULL;
	off = addr - s->bases[ndx];
	if (!d || !d->d_buf || off >= d->d_size)
		return -EFAULT;
	if (len > d->d_size - off)
		len = d->d_size - off;
	memcpy(buf, (const unsigned char *)d->d_buf + off, len);
	while ((rela = elf_nextscn(s->e, rela)))
		if (gelf_getshdr(rela, &rsh) && rsh.sh_type == SHT_RELA && rsh.sh_info == ndx)
			relocate(s, rela, addr, buf, len);
	return (long)len;
}

static bool symset_sealed(const struct p2ps_symsrc *src, unsigned long long addr)
{
	const struct symset *s = src->priv;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].addr == addr && s->v[i].sealed)
			return true;
	return false;
}

/*
 * Offline, a function the module calls must start with endbr64 (some
 * kernel that loads it has IBT), and a module file's call targets are its
 * own symbols (no call-depth thunks).
 */
static void symsrc_init(struct p2ps_symsrc *src, struct symset *s, const char *module)
{
	*src = (struct p2ps_symsrc){
		.module = module, .walk = symset_walk, .read = symset_read,
		.sealed = symset_sealed, .ibt = true, .priv = s,
	};
}

static void item_from(struct p2ps_check_item *it, const char *target, const char *dest,
		      const struct p2ps_target *t)
{
	memset(it, 0, sizeof(*it));
	p2ps_strlcpy(it->target, target, sizeof(it->target));
	if (dest)
		p2ps_strlcpy(it->dest, dest, sizeof(it->dest));
	p2ps_strlcpy(it->symbol, t->symbol, sizeof(it->symbol));
	it->ok = !t->err;
	it->fingerprint_checked = t->fingerprint_checked;
	p2ps_strlcpy(it->status, t->err ? t->why : "ok", sizeof(it->status));
}

/* Resolve @n hooks @d into @items with the module's rules; whether all are ok. */
static bool resolve_hooks(const struct p2ps_symsrc *src, const struct p2ps_hook_desc *d,
			  size_t n, struct p2ps_check_item *items)
{
	struct p2ps_target *t = calloc(n ? n : 1, sizeof(*t));
	bool all;
	size_t i;

	if (!t)
		return false;
	all = p2ps_resolve_hooks(src, d, (unsigned int)n, t) < 0;
	for (i = 0; i < n; i++)
		item_from(&items[i], d[i].target, d[i].dest, &t[i]);
	free(t);
	return all;
}

/* Resolve @p's nvidia object; returns true if every hook and call resolved. */
static bool resolve(const struct p2ps_symsrc *src, const struct p2ps_profile *p,
		    struct p2ps_check_report *r)
{
	const struct p2ps_object *nv = p2ps_profile_nvidia(p);
	struct p2ps_target t;
	bool all;
	size_t i, nc = 0;

	free(r->hooks);
	free(r->calls);
	r->hooks = calloc(nv->nr_hooks ? nv->nr_hooks : 1, sizeof(*r->hooks));
	while (nv->calls && nv->calls[nc])
		nc++;
	r->calls = calloc(nc ? nc : 1, sizeof(*r->calls));
	r->nr_hooks = r->nr_calls = 0;
	if (!r->hooks || !r->calls)
		return false;
	all = resolve_hooks(src, nv->hooks, nv->nr_hooks, r->hooks);
	r->nr_hooks = nv->nr_hooks;
	for (i = 0; i < nc; i++) {
		all &= !p2ps_resolve_call(src, nv->calls[i], &t);
		item_from(&r->calls[i], nv->calls[i], NULL, &t);
	}
	r->nr_calls = nc;
	return all;
}

/*
 * nvidia-uvm's object for @version, in whichever profile lists one for its
 * major (profile.h; the module asks its own profile, lifecycle.c).
 */
const struct p2ps_object *p2ps_uvm_set_for_version(const char *version)
{
	const struct p2ps_object *o;
	unsigned int i;

	for (i = 0; i < p2ps_nr_profiles; i++) {
		o = p2ps_profile_object(&p2ps_profiles[i], version, "nvidia_uvm");
		if (o)
			return o;
	}
	return NULL;
}

/*
 * The UVM peer set of @version, as kmod/uvm_peer.c arms it (the shared
 * p2ps_resolve_uvm_set()): hooks[0] in nvidia (@nv), the rest in
 * nvidia-uvm (@uvm, NULL when its symbols are not in the input).
 */
static int check_uvm(const struct p2ps_symsrc *nv, const struct p2ps_symsrc *uvm,
		     const char *version, struct p2ps_check_report *r)
{
	const struct p2ps_object *set = p2ps_uvm_set_for_version(version);
	struct p2ps_target *t;
	size_t i, n;

	if (!set || !set->nr_hooks)
		return 0;
	n = set->nr_hooks;
	r->uvm_hooks = calloc(n, sizeof(*r->uvm_hooks));
	t = calloc(n, sizeof(*t));
	if (!r->uvm_hooks || !t) {
		free(t);
		return -ENOMEM;
	}
	r->nr_uvm_hooks = n;
	p2ps_strlcpy(r->uvm_set, set->name, sizeof(r->uvm_set));
	r->uvm_checked = n == 1 || uvm;
	if (r->uvm_checked)
		p2ps_resolve_uvm_set(nv, uvm, set, t);
	else
		p2ps_resolve_hooks(nv, set->hooks, 1, t);
	for (i = 0; i < n; i++) {
		item_from(&r->uvm_hooks[i], set->hooks[i].target, set->hooks[i].dest, &t[i]);
		if (i && !r->uvm_checked) {
			/* not ok: the set's reason then says why it is not */
			r->uvm_hooks[i].ok = false;
			p2ps_strlcpy(r->uvm_hooks[i].status,
				     "not checked: no nvidia-uvm symbols in the input",
				     sizeof(r->uvm_hooks[i].status));
		}
	}
	free(t);
	for (i = 0; i < n && r->uvm_hooks[i].ok; i++)
		;
	r->uvm_ok = i == n && r->uvm_checked;
	if (i < n)
		snprintf(r->uvm_reason, sizeof(r->uvm_reason), "%.100s: %.150s",
			 r->uvm_hooks[i].target, r->uvm_hooks[i].status);
	return 0;
}

static int run_check(struct symset *s, struct symset *u, const char *version,
		     const char *vsource, unsigned int flags, struct p2ps_check_report **out)
{
	struct p2ps_check_report *r;
	const struct p2ps_profile *p = NULL;
	struct p2ps_symsrc nv, uvm;
	bool all;

	symsrc_init(&nv, s, "nvidia");
	symsrc_init(&uvm, u, "nvidia_uvm");
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fingerprints = s->e != NULL;
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
		if (newest && resolve(&nv, newest, r)) {
			p = newest;
		} else {
			for (i = 0; i < p2ps_nr_profiles && !p; i++)
				if (&p2ps_profiles[i] != newest && resolve(&nv, &p2ps_profiles[i], r))
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
	all = resolve(&nv, p, r);
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
	if (*r->driver_version && check_uvm(&nv, u->n ? &uvm : NULL, r->driver_version, r)) {
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
static void mark_sealed(Elf_Scn *rela, struct symset *s)
{
	Elf_Data *rd = elf_getdata(rela, NULL), *sd = elf_getdata(s->symscn, NULL);
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
		    !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &target) ||
		    target.st_shndx >= s->nsec || !s->bases[target.st_shndx])
			continue;
		where = s->bases[target.st_shndx] + target.st_value + (unsigned long long)r.r_addend;
		for (j = 0; j < s->n; j++)
			if (s->v[j].addr == where)
				s->v[j].sealed = true;
	}
}

/* A module file, read and decompressed: its ELF, symbols and version. */
struct modfile {
	unsigned char *img;
	struct symset s;
	char version[P2PS_NAME_LEN];
};

static void modfile_free(struct modfile *m)
{
	free(m->s.v);
	free(m->s.bases);
	if (m->s.e)
		elf_end(m->s.e);
	free(m->img);
}

static int modfile_open(const char *path, struct modfile *m)
{
	unsigned char *raw;
	size_t rawlen, imglen, shstrndx, i, n;
	struct symset *s = &m->s;
	Elf_Scn *scn = NULL, *sealscn = NULL;
	unsigned long long next = 0x1000;
	Elf_Data *d;
	GElf_Shdr sh;
	GElf_Ehdr eh;
	int err;

	memset(m, 0, sizeof(*m));
	raw = (unsigned char *)p2ps_read_file(path, &rawlen, false);
	if (!raw)
		return -errno ? -errno : -EIO;
	err = p2ps_decompress(raw, rawlen, &m->img, &imglen);
	free(raw);
	if (err)
		return err;
	elf_version(EV_CURRENT);
	s->e = elf_memory((char *)m->img, imglen);
	if (!s->e || elf_kind(s->e) != ELF_K_ELF)
		return -P2PS_E_FORMAT;
	/* Cut short (a partial copy or download): say so, not "stripped". */
	if (!gelf_getehdr(s->e, &eh) || eh.e_shoff > imglen ||
	    (size_t)eh.e_shnum * eh.e_shentsize > imglen - eh.e_shoff)
		return -P2PS_E_TRUNCATED;
	if (elf_getshdrstrndx(s->e, &shstrndx) || elf_getshdrnum(s->e, &s->nsec))
		return -P2PS_E_FORMAT;
	s->bases = calloc(s->nsec ? s->nsec : 1, sizeof(*s->bases));
	if (!s->bases)
		return -ENOMEM;
	while ((scn = elf_nextscn(s->e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_NOBITS && (sh.sh_offset > imglen || sh.sh_size > imglen - sh.sh_offset))
			return -P2PS_E_TRUNCATED;
		name = elf_strptr(s->e, shstrndx, sh.sh_name);
		/* A place of its own for each loaded section. */
		if (sh.sh_flags & SHF_ALLOC) {
			unsigned long long a = sh.sh_addralign > 1 ? sh.sh_addralign : 1;

			next = (next + a - 1) / a * a;
			s->bases[elf_ndxscn(scn)] = next;
			next += sh.sh_size ? sh.sh_size : 1;
		}
		if (sh.sh_type == SHT_SYMTAB && !s->symscn)
			s->symscn = scn;
		if (sh.sh_type == SHT_RELA && name && !strcmp(name, ".rela.ibt_endbr_seal"))
			sealscn = scn;
		if (name && !strcmp(name, ".modinfo")) {
			d = elf_getdata(scn, NULL);
			if (d && d->d_buf)
				modinfo_version(d->d_buf, d->d_size, m->version, sizeof(m->version));
		}
	}
	if (!s->symscn)
		return -P2PS_E_NO_SYMTAB;
	d = elf_getdata(s->symscn, NULL);
	if (!d || !gelf_getshdr(s->symscn, &sh) || !sh.sh_entsize)
		return -P2PS_E_FORMAT;
	n = sh.sh_size / sh.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= s->nsec || !s->bases[sym.st_shndx])
			continue;	/* undefined: not in this module */
		name = elf_strptr(s->e, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		err = symset_add(s, name, s->bases[sym.st_shndx] + sym.st_value, sym.st_size);
		if (err)
			return err;
	}
	if (sealscn)
		mark_sealed(sealscn, s);
	return 0;
}

/* --------------------------------------------------------------- kallsyms */

/* A kallsyms dump: nvidia's text symbols into @s, nvidia-uvm's into @u. */
static int kallsyms_open(const char *path, char **buf, struct symset *s, struct symset *u)
{
	char *line, *save = NULL;
	bool tagged, uvm;
	int err = 0;

	*buf = p2ps_read_file(path, NULL, true);
	if (!*buf)
		return errno ? -errno : -EIO;
	tagged = strstr(*buf, "\t[") || strstr(*buf, " [");
	for (line = strtok_r(*buf, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save)) {
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
		err = symset_add(uvm ? u : s, f[2], strtoull(f[0], NULL, 16), 0);
	}
	if (!err && s->n == 0)
		err = -P2PS_E_FORMAT;
	return err;
}

/* ------------------------------------------------------------------ check */

int p2ps_check(const struct p2ps_check_input *in, struct p2ps_check_report **out)
{
	struct modfile nv = { 0 }, uvm = { 0 };
	struct symset ks = { 0 }, ku = { 0 }, *s, *u = &ku;
	const char *version = in->version, *vsource = "given";
	char *text = NULL;
	int err, uvm_err = 0;

	*out = NULL;
	if (!in->module == !in->kallsyms)
		return -EINVAL;
	if (in->module) {
		err = modfile_open(in->module, &nv);
		s = &nv.s;
		if (!version || !*version) {
			version = nv.version;
			vsource = "modinfo";
		}
	} else {
		err = kallsyms_open(in->kallsyms, &text, &ks, &ku);
		s = &ks;
	}
	/*
	 * An nvidia-uvm file that cannot be read leaves the UVM peer set
	 * unchecked, saying why; it does not decide the verdict (p2pctl(8)).
	 */
	if (!err && in->uvm_module) {
		uvm_err = modfile_open(in->uvm_module, &uvm);
		if (!uvm_err)
			u = &uvm.s;
	}
	if (!err)
		err = run_check(s, u, version, vsource, in->flags, out);
	if (!err && uvm_err && (*out)->nr_uvm_hooks && !(*out)->uvm_checked)
		snprintf((*out)->uvm_reason, sizeof((*out)->uvm_reason), "%.150s: %.100s",
			 in->uvm_module, p2ps_strerror(uvm_err));
	modfile_free(&nv);
	modfile_free(&uvm);
	free(ks.v);
	free(ku.v);
	free(text);
	return err;
}

int p2ps_check_module(const char *path, const char *version, unsigned int flags,
		      struct p2ps_check_report **out)
{
	struct p2ps_check_input in = { .module = path, .version = version, .flags = flags };

	return p2ps_check(&in, out);
}

int p2ps_check_kallsyms(const char *path, const char *version, unsigned int flags,
			struct p2ps_check_report **out)
{
	struct p2ps_check_input in = { .kallsyms = path, .version = version, .flags = flags };

	return p2ps_check(&in, out);
}
