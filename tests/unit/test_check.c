// SPDX-License-Identifier: GPL-2.0
/*
 * p2ps_check_module() / p2ps_check_kallsyms(): the module's resolution and
 * fingerprint rules run offline.  Most ELF inputs are written here, from the
 * profile table itself: a relocatable x86-64 object with .text, .modinfo,
 * .symtab and .strtab, holding every target, stub, destination and called
 * function of the profile (or all but one, or one stub with other bytes).
 * Those agree with the table by construction; the real-bytes tests below
 * build the object from fixtures extracted from real driver builds
 * instead (tests/fixtures/real-symbols: the real names of the families the
 * profiles touch, with their real stub bodies and function heads), and
 * hold the results to what those builds are known to do.
 */
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <lzma.h>
#include <zstd.h>

#include <p2p-shim/profile.h>
#include <p2p-shim/resolve.h>
#include "internal.h"

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static size_t put(struct buf *b, const void *d, size_t n)
{
	size_t off = b->len;

	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
	return off;
}

static void align(struct buf *b, size_t a)
{
	static const unsigned char z[16];

	while (b->len % a)
		put(b, z, 1);
}

/*
 * One section of a written object: its header but for the name, offset and
 * size, and its bytes.  The section named ".shstrtab" gets the names
 * (finish_elf() writes it); a NOBITS one has no bytes, its sh_size its own.
 */
struct sect {
	const char *name;
	Elf64_Shdr sh;
	const void *data;
	size_t len;
};

#define MAX_SECT 8

/*
 * Write to @out a relocatable x86-64 object of the @n sections @s (s[i] is
 * section i + 1, 0 the null one): the ELF header, the sections' bytes in
 * order, each at its sh_addralign in the file, then the section header
 * table.  The writers below (gen_elf(), gen_elf_fixture(), gen_uvm_elf())
 * say only which sections they hold.
 */
static void finish_elf(struct buf *out, const struct sect *s, unsigned int n)
{
	struct buf shstr = { 0 };
	Elf64_Shdr sh[1 + MAX_SECT];
	Elf64_Ehdr eh;
	unsigned int i;

	assert_true(n <= MAX_SECT);
	memset(sh, 0, sizeof(sh));
	memset(&eh, 0, sizeof(eh));
	put(&shstr, "", 1);
	for (i = 0; i < n; i++) {
		sh[i + 1] = s[i].sh;
		sh[i + 1].sh_name = (Elf64_Word)put(&shstr, s[i].name, strlen(s[i].name) + 1);
		if (!strcmp(s[i].name, ".shstrtab"))
			eh.e_shstrndx = (Elf64_Half)(i + 1);
	}
	assert_true(eh.e_shstrndx);

	memset(out, 0, sizeof(*out));
	put(out, &eh, sizeof(eh));	/* a placeholder until e_shoff is known */
	for (i = 0; i < n; i++) {
		Elf64_Shdr *h = &sh[i + 1];
		bool names = i + 1 == eh.e_shstrndx;

		if (h->sh_type == SHT_NOBITS) {
			h->sh_offset = out->len;	/* takes no room in the file */
			continue;
		}
		if (h->sh_addralign > 1)
			align(out, h->sh_addralign);
		h->sh_size = names ? shstr.len : s[i].len;
		h->sh_offset = out->len;
		if (h->sh_size)
			put(out, names ? shstr.p : s[i].data, h->sh_size);
	}
	align(out, 8);

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_REL;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(Elf64_Ehdr);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (Elf64_Half)(n + 1);
	eh.e_shoff = put(out, sh, (n + 1) * sizeof(sh[0]));
	memcpy(out->p, &eh, sizeof(eh));
	free(shstr.p);
}

enum variant { V_OK, V_MISSING, V_CHANGED, V_NO_VERSION };

struct elfgen {
	struct buf text, str, sym;
	const char *drop;		/* symbol to leave out */
	const char *change;		/* stub base whose body to change */
	size_t sealed_sym;		/* symbol index of ibt_sealed, or 0 */
};

/*
 * For the IBT tests: a function that objtool listed in .ibt_endbr_seal, and
 * one whose body has no endbr64.  NULL for none.
 */
static const char *ibt_sealed, *ibt_noendbr;

/* One more function in the module, e.g. a compiler clone; NULL for none. */
static const char *extra_func;

/* Whether @name is in the symbol table already (a destination may also be a target). */
static bool have_func(const struct elfgen *g, const char *name)
{
	const Elf64_Sym *s = (const Elf64_Sym *)g->sym.p;
	size_t i;

	for (i = 0; i < g->sym.len / sizeof(*s); i++)
		if (s[i].st_name && !strcmp((const char *)g->str.p + s[i].st_name, name))
			return true;
	return false;
}

static void add_func(struct elfgen *g, const char *name, const unsigned char *code, size_t n)
{
	Elf64_Sym s;

	if ((g->drop && !strcmp(g->drop, name)) || have_func(g, name))
		return;
	memset(&s, 0, sizeof(s));
	align(&g->text, 16);
	s.st_value = put(&g->text, code, n);
	s.st_size = n;
	s.st_name = (Elf64_Word)put(&g->str, name, strlen(name) + 1);
	s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	s.st_shndx = 1;
	if (ibt_sealed && !strcmp(ibt_sealed, name))
		g->sealed_sym = g->sym.len / sizeof(s);
	put(&g->sym, &s, sizeof(s));
}

static void add_plain(struct elfgen *g, const char *name)
{
	/* endbr64; push %rbp; mov %rsp,%rbp; xor %eax,%eax; pop %rbp; ret */
	static const unsigned char body[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5,
					      0x31, 0xc0, 0x5d, 0xc3 };

	if (ibt_noendbr && !strcmp(ibt_noendbr, name))
		add_func(g, name, body + 4, sizeof(body) - 4);
	else
		add_func(g, name, body, sizeof(body));
}

static void add_stub(struct elfgen *g, const char *base, const struct p2ps_code *c)
{
	unsigned char code[4 + P2PS_CODE_MAX];
	char name[160];
	size_t n = 0;
	unsigned int i;

	memcpy(code, "\xf3\x0f\x1e\xfa", 4);	/* endbr64 */
	n = 4;
	for (i = 0; i < c->len; i++)
		code[n++] = c->op[i] == P2PS_CODE_RET ? 0xc3 : (unsigned char)c->op[i];
	if (g->change && !strcmp(g->change, base))
		code[4] ^= 0x01;	/* e.g. mov $0x56 -> another opcode */
	snprintf(name, sizeof(name), "%s_395e98", base);
	add_func(g, name, code, n);
}

/* Write the ELF image of @p's nvidia to @out (plain, or .xz/.zst compressed). */
static void gen_elf(const struct p2ps_profile *p, enum variant v, const char *drop,
		    const char *change, struct buf *out)
{
	const struct p2ps_object *nv = p2ps_profile_nvidia(p);
	struct elfgen g;
	static const char mod_ver[] = "license=Dual MIT/GPL\0version=580.159.04\0vermagic=6.1.0 SMP";
	static const char mod_nover[] = "license=Dual MIT/GPL";
	const char *modinfo = v == V_NO_VERSION ? mod_nover : mod_ver;
	size_t modlen = v == V_NO_VERSION ? sizeof(mod_nover) : sizeof(mod_ver);
	Elf64_Rela seal_rela;
	static const unsigned int seal_slot;
	size_t nseal;
	unsigned int i;

	memset(&g, 0, sizeof(g));
	g.drop = drop;
	g.change = change;
	put(&g.str, "", 1);
	{
		Elf64_Sym null;

		memset(&null, 0, sizeof(null));
		put(&g.sym, &null, sizeof(null));
	}
	for (i = 0; i < nv->nr_hooks; i++) {
		const struct p2ps_hook_desc *d = &nv->hooks[i];

		if (d->flags & P2PS_T_STUB)
			add_stub(&g, d->target, d->expect);
		else
			add_plain(&g, d->target);
		if (d->dest)
			add_plain(&g, d->dest);
	}
	if (extra_func)
		add_plain(&g, extra_func);
	for (i = 0; nv->calls && nv->calls[i]; i++) {
		size_t j;
		bool dup = false;

		/* A called function may also be a redirect destination. */
		for (j = 0; j < nv->nr_hooks; j++)
			dup |= nv->hooks[j].dest && !strcmp(nv->hooks[j].dest, nv->calls[i]);
		if (!dup)
			add_plain(&g, nv->calls[i]);
	}

	/* One place-relative slot per sealed function, relocated to it. */
	nseal = g.sealed_sym ? 1 : 0;
	seal_rela = (Elf64_Rela){ .r_offset = 0,
				  .r_info = ELF64_R_INFO(g.sealed_sym, R_X86_64_PC32) };
	{
		const struct sect sect[] = {
			{ ".text", { .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
				     .sh_addralign = 16 }, g.text.p, g.text.len },
			{ ".modinfo", { .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
					.sh_addralign = 1 }, modinfo, modlen },
			{ ".symtab", { .sh_type = SHT_SYMTAB, .sh_link = 4, .sh_info = 1,
				       .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) },
			  g.sym.p, g.sym.len },
			{ ".strtab", { .sh_type = SHT_STRTAB, .sh_addralign = 1 }, g.str.p, g.str.len },
			{ ".shstrtab", { .sh_type = SHT_STRTAB, .sh_addralign = 1 }, NULL, 0 },
			{ ".ibt_endbr_seal", { .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
					       .sh_addralign = 4 }, &seal_slot, nseal * sizeof(seal_slot) },
			{ ".rela.ibt_endbr_seal", { .sh_type = SHT_RELA, .sh_link = 3, .sh_info = 6,
						    .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Rela) },
			  &seal_rela, nseal * sizeof(seal_rela) },
		};

		finish_elf(out, sect, sizeof(sect) / sizeof(sect[0]));
	}
	free(g.text.p);
	free(g.str.p);
	free(g.sym.p);
}

static char *write_tmp(const void *d, size_t n, const char *suffix)
{
	char tmpl[] = "/tmp/p2ps-check-XXXXXX";
	char *path;
	int fd = mkstemp(tmpl);
	FILE *f;

	assert_true(fd >= 0);
	close(fd);
	unlink(tmpl);
	assert_true(asprintf(&path, "%s%s", tmpl, suffix) > 0);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, n, f), n);
	fclose(f);
	return path;
}

static const struct p2ps_profile *gen_b(void)
{
	const struct p2ps_profile *p = p2ps_profile_for_version("580.159.04");

	assert_non_null(p);
	return p;
}

/* gen B's nvidia object: the hooks and calls check_elf()'s image is made of. */
static const struct p2ps_object *gen_b_nv(void)
{
	return p2ps_profile_nvidia(gen_b());
}

static struct p2ps_check_report *check_elf(enum variant v, const char *drop, const char *change,
					   const char *version, int expect_err)
{
	struct p2ps_check_report *r = NULL;
	struct buf b;
	char *path;
	int err;

	gen_elf(gen_b(), v, drop, change, &b);
	path = write_tmp(b.p, b.len, ".ko");
	free(b.p);
	err = p2ps_check_module(path, version, 0, &r);
	unlink(path);
	free(path);
	assert_int_equal(err, expect_err);
	return r;
}

static const struct p2ps_check_item *item(const struct p2ps_check_report *r, const char *target)
{
	size_t i;

	for (i = 0; i < r->nr_hooks; i++)
		if (!strcmp(r->hooks[i].target, target))
			return &r->hooks[i];
	fail_msg("no hook %s in report", target);
	return NULL;
}

static const char *first_stub(void)
{
	const struct p2ps_object *nv = gen_b_nv();
	unsigned int i;

	for (i = 0; i < nv->nr_hooks; i++)
		if (nv->hooks[i].flags & P2PS_T_STUB)
			return nv->hooks[i].target;
	fail_msg("profile without stubs");
	return NULL;
}

static void test_elf_ok(void **state)
{
	struct p2ps_check_report *r = check_elf(V_OK, NULL, NULL, NULL, 0);
	size_t i;

	(void)state;
	assert_true(r->supported);
	assert_string_equal(r->driver_version, "580.159.04");
	assert_string_equal(r->version_source, "modinfo");
	assert_string_equal(r->profile, gen_b()->name);
	assert_true(r->fingerprints);
	assert_int_equal(r->nr_hooks, gen_b_nv()->nr_hooks);
	for (i = 0; i < r->nr_hooks; i++) {
		assert_string_equal(r->hooks[i].status, "ok");
		if (gen_b_nv()->hooks[i].flags & P2PS_T_STUB) {
			assert_true(r->hooks[i].fingerprint_checked);
			assert_true(p2ps_is_stub_of(r->hooks[i].symbol, r->hooks[i].target));
		}
	}
	p2ps_check_free(r);
}

/* Gen 0 (550.x): its own stubs and static BAR1 targets, the 4-argument caps. */
static struct p2ps_check_report *check_gen0(const char *drop)
{
	const struct p2ps_profile *p = p2ps_profile_for_version("550.163.01");
	struct p2ps_check_report *r = NULL;
	struct buf b;
	char *path;

	assert_non_null(p);
	assert_string_equal(p->name, "gen-0");
	gen_elf(p, V_OK, drop, NULL, &b);
	path = write_tmp(b.p, b.len, ".ko");
	free(b.p);
	assert_int_equal(p2ps_check_module(path, "550.163.01", 0, &r), 0);
	unlink(path);
	free(path);
	return r;
}

static void test_elf_gen0(void **state)
{
	const struct p2ps_object *nv = p2ps_profile_nvidia(p2ps_profile_for_version("550.163.01"));
	struct p2ps_check_report *r = check_gen0(NULL);
	const struct p2ps_check_item *it;
	size_t i, stubs = 0;

	(void)state;
	assert_true(r->supported);
	assert_string_equal(r->profile, "gen-0");
	assert_int_equal(r->nr_hooks, nv->nr_hooks);
	for (i = 0; i < r->nr_hooks; i++) {
		assert_string_equal(r->hooks[i].status, "ok");
		if (nv->hooks[i].flags & P2PS_T_STUB) {
			assert_true(r->hooks[i].fingerprint_checked);
			stubs++;
		}
	}
	/* the seven BAR1 P2P stubs and the four static BAR1 ones */
	assert_int_equal(stubs, 11);
	it = item(r, "kbusIsBar1P2PCapable");
	assert_true(p2ps_is_stub_of(it->symbol, "kbusIsBar1P2PCapable"));
	item(r, "kbusIsStaticBar1Enabled_IMPL");
	item(r, "kbusEnableStaticBar1Mapping_GH100");
	p2ps_check_free(r);

	/* without the function the view hooks, gen 0 is not supported */
	r = check_gen0("kbusIsStaticBar1Enabled_IMPL");
	assert_false(r->supported);
	assert_false(item(r, "kbusIsStaticBar1Enabled_IMPL")->ok);
	p2ps_check_free(r);
}

static void test_elf_missing_stub(void **state)
{
	char name[160];
	struct p2ps_check_report *r;
	const struct p2ps_check_item *it;

	(void)state;
	snprintf(name, sizeof(name), "%s_395e98", first_stub());
	r = check_elf(V_OK, name, NULL, NULL, 0);
	assert_false(r->supported);
	it = item(r, first_stub());
	assert_false(it->ok);
	assert_non_null(strstr(it->status, "_<hash> stub in nvidia"));
	assert_non_null(strstr(r->reason, first_stub()));
	p2ps_check_free(r);
}

static void test_elf_missing_dest(void **state)
{
	const struct p2ps_object *nv = gen_b_nv();
	struct p2ps_check_report *r;
	unsigned int i;

	(void)state;
	for (i = 0; i < nv->nr_hooks && !nv->hooks[i].dest; i++)
		;
	assert_true(i < nv->nr_hooks);
	r = check_elf(V_OK, nv->hooks[i].dest, NULL, NULL, 0);
	assert_false(r->supported);
	assert_non_null(strstr(item(r, nv->hooks[i].target)->status, "redirect destination"));
	p2ps_check_free(r);
}

static void test_elf_missing_call(void **state)
{
	const struct p2ps_object *nv = gen_b_nv();
	struct p2ps_check_report *r;

	(void)state;
	if (!nv->calls || !nv->calls[0])
		skip();
	r = check_elf(V_OK, nv->calls[0], NULL, NULL, 0);
	assert_false(r->supported);
	assert_int_equal(r->nr_calls > 0, 1);
	assert_false(r->calls[0].ok);
	p2ps_check_free(r);
}

static void test_elf_changed_stub(void **state)
{
	struct p2ps_check_report *r = check_elf(V_OK, NULL, first_stub(), NULL, 0);
	const struct p2ps_check_item *it;

	(void)state;
	assert_false(r->supported);
	it = item(r, first_stub());
	assert_false(it->ok);
	assert_true(it->fingerprint_checked);
	assert_non_null(strstr(it->status, "body is not"));
	p2ps_check_free(r);
}

/*
 * IBT, statically: a function the module calls must carry endbr64 and
 * must not be sealed; one it only redirects to, or never calls, may.
 */
static struct p2ps_check_report *ibt_check(const char *sealed, const char *noendbr)
{
	struct p2ps_check_report *r;

	ibt_sealed = sealed;
	ibt_noendbr = noendbr;
	r = check_elf(V_OK, NULL, NULL, NULL, 0);
	ibt_sealed = ibt_noendbr = NULL;
	return r;
}

static const struct p2ps_hook_desc *hook_with_action(enum p2ps_action a)
{
	const struct p2ps_object *nv = gen_b_nv();
	unsigned int i;

	for (i = 0; i < nv->nr_hooks; i++)
		if (nv->hooks[i].action == a)
			return &nv->hooks[i];
	fail_msg("no hook with action %d", a);
	return NULL;
}

static void test_elf_ibt_sealed_call(void **state)
{
	const char *call = gen_b_nv()->calls[0];
	struct p2ps_check_report *r = ibt_check(call, NULL);

	(void)state;
	assert_false(r->supported);
	assert_false(r->calls[0].ok);
	assert_non_null(strstr(r->calls[0].status, ".ibt_endbr_seal"));
	assert_non_null(strstr(r->reason, call));
	p2ps_check_free(r);
}

static void test_elf_ibt_called_dest_without_endbr(void **state)
{
	const struct p2ps_hook_desc *d = hook_with_action(P2PS_ACT_LEDGER_CREATE);
	struct p2ps_check_report *r = ibt_check(NULL, d->dest);

	(void)state;
	assert_false(r->supported);
	assert_non_null(strstr(item(r, d->target)->status, "does not start with endbr64"));
	p2ps_check_free(r);
}

static void test_elf_ibt_uncalled_may_be_sealed(void **state)
{
	/* Jumped to by a probe, never called: sealing it is harmless. */
	const struct p2ps_hook_desc *d = hook_with_action(P2PS_ACT_ROUTE_BAR1);
	struct p2ps_check_report *r = ibt_check(d->dest, NULL);

	(void)state;
	assert_true(r->supported);
	p2ps_check_free(r);
	/* And the GPU manager, which the module no longer calls. */
	r = ibt_check("gpumgrAttachGpu", NULL);
	assert_true(r->supported);
	p2ps_check_free(r);
}

/* A compiler clone of a probed target: its callers would bypass the hook. */
static void test_elf_clone(void **state)
{
	struct p2ps_check_report *r;

	(void)state;
	extra_func = "osReadRegistryDword.isra.0";
	r = check_elf(V_OK, NULL, NULL, NULL, 0);
	extra_func = NULL;
	assert_false(r->supported);
	assert_non_null(strstr(item(r, "osReadRegistryDword")->status,
			       "compiler clone osReadRegistryDword.isra.0"));
	p2ps_check_free(r);
	/* A cold part is the function's own: no clone. */
	extra_func = "osReadRegistryDword.cold";
	r = check_elf(V_OK, NULL, NULL, NULL, 0);
	extra_func = NULL;
	assert_true(r->supported);
	p2ps_check_free(r);
}

static void test_elf_version_override(void **state)
{
	struct p2ps_check_report *r = check_elf(V_OK, NULL, NULL, "545.29.06", 0);

	(void)state;
	assert_false(r->supported);
	assert_string_equal(r->driver_version, "545.29.06");
	assert_string_equal(r->version_source, "given");
	assert_string_equal(r->profile, "");
	assert_non_null(strstr(r->reason, "no profile"));
	p2ps_check_free(r);
}

static void test_elf_force(void **state)
{
	struct p2ps_check_report *r = NULL;
	struct buf b;
	char *path;

	(void)state;
	gen_elf(gen_b(), V_OK, NULL, NULL, &b);
	path = write_tmp(b.p, b.len, ".ko");
	free(b.p);
	assert_int_equal(p2ps_check_module(path, "999.1", P2PS_CHECK_FORCE, &r), 0);
	unlink(path);
	free(path);
	assert_true(r->forced);
	assert_true(r->supported);
	assert_string_equal(r->profile, p2ps_profile_newest()->name);
	p2ps_check_free(r);
}

static void test_elf_no_version(void **state)
{
	struct p2ps_check_report *r = check_elf(V_NO_VERSION, NULL, NULL, NULL, 0);

	(void)state;
	assert_true(r->profile_guessed);
	assert_true(r->supported);
	assert_string_equal(r->driver_version, "");
	p2ps_check_free(r);
}

static void test_elf_bad_version(void **state)
{
	(void)state;
	assert_null(check_elf(V_OK, NULL, NULL, "banana", -EINVAL));
}

static void test_elf_compressed(void **state)
{
	struct p2ps_check_report *r = NULL;
	struct buf b;
	unsigned char *xz, *zs;
	size_t xzlen = 0, zslen, cap;
	char *path;

	(void)state;
	gen_elf(gen_b(), V_OK, NULL, NULL, &b);
	cap = b.len + 4096;
	xz = malloc(cap);
	assert_int_equal(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC32, NULL, b.p, b.len, xz,
						 &xzlen, cap), LZMA_OK);
	path = write_tmp(xz, xzlen, ".ko.xz");
	assert_int_equal(p2ps_check_module(path, NULL, 0, &r), 0);
	assert_true(r->supported);
	assert_true(r->fingerprints);
	p2ps_check_free(r);
	unlink(path);
	free(path);
	free(xz);

	zs = malloc(ZSTD_compressBound(b.len));
	zslen = ZSTD_compress(zs, ZSTD_compressBound(b.len), b.p, b.len, 3);
	assert_false(ZSTD_isError(zslen));
	path = write_tmp(zs, zslen, ".ko.zst");
	assert_int_equal(p2ps_check_module(path, NULL, 0, &r), 0);
	assert_true(r->supported);
	p2ps_check_free(r);
	/* truncated zstd */
	unlink(path);
	free(path);
	path = write_tmp(zs, zslen / 2, ".ko.zst");
	assert_int_equal(p2ps_check_module(path, NULL, 0, &r), -P2PS_E_COMPRESSION);
	unlink(path);
	free(path);
	free(zs);
	free(b.p);
}

static void test_not_elf(void **state)
{
	struct p2ps_check_report *r = NULL;
	char *path = write_tmp("hello, world\n", 13, ".ko");

	(void)state;
	assert_int_equal(p2ps_check_module(path, NULL, 0, &r), -P2PS_E_FORMAT);
	assert_null(r);
	assert_int_equal(p2ps_check_module("/nonexistent/nvidia.ko", NULL, 0, &r), -ENOENT);
	unlink(path);
	free(path);
}

/* Leave the version out of .modinfo (a module whose version is unknown). */
static bool fixture_no_version;

/*
 * An ELF object from a real-symbols fixture (tests/fixtures/real-symbols,
 * written by its extract script): "# version=V" and one function a line,
 * "name<TAB>size<TAB>hex bytes", or "-" for bytes the source did not keep
 * (those go into a NOBITS section: names only, as in a kallsyms dump).
 */
static void gen_elf_fixture(const char *fixture, char *version, size_t vlen, struct buf *out)
{
	struct buf text = { 0 }, str = { 0 }, sym = { 0 }, mod = { 0 };
	Elf64_Sym null, s;
	size_t nobits = 0;
	char line[512];
	FILE *f = fopen(fixture, "r");

	assert_non_null(f);
	*version = '\0';
	put(&str, "", 1);
	memset(&null, 0, sizeof(null));
	put(&sym, &null, sizeof(null));
	while (fgets(line, sizeof(line), f)) {
		char *name = line, *size, *hex, *nl;
		unsigned char code[64];
		size_t n = 0;

		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		if (!strncmp(line, "# version=", 10)) {
			snprintf(version, vlen, "%.40s", line + 10);
			continue;
		}
		if (line[0] == '#' || !line[0])
			continue;
		size = strchr(name, '\t');
		assert_non_null(size);
		*size++ = '\0';
		hex = strchr(size, '\t');
		assert_non_null(hex);
		*hex++ = '\0';
		memset(&s, 0, sizeof(s));
		s.st_name = (Elf64_Word)put(&str, name, strlen(name) + 1);
		s.st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC);
		if (!strcmp(hex, "-")) {
			s.st_shndx = 2;
			s.st_value = nobits;
			s.st_size = 16;
			nobits += 16;
		} else {
			for (n = 0; hex[2 * n] && n < sizeof(code); n++) {
				unsigned int b;

				assert_int_equal(sscanf(hex + 2 * n, "%2x", &b), 1);
				code[n] = (unsigned char)b;
			}
			align(&text, 16);
			s.st_shndx = 1;
			s.st_value = put(&text, code, n);
			s.st_size = n;
		}
		put(&sym, &s, sizeof(s));
	}
	fclose(f);
	assert_true(*version);
	if (fixture_no_version) {
		put(&mod, "license=Dual MIT/GPL", 21);
	} else {
		put(&mod, "version=", 8);
		put(&mod, version, strlen(version) + 1);
	}

	{
		const struct sect sect[] = {
			{ ".text", { .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
				     .sh_addralign = 16 }, text.p, text.len },
			{ ".text.names", { .sh_type = SHT_NOBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
					   .sh_size = nobits, .sh_addralign = 16 }, NULL, 0 },
			{ ".modinfo", { .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
					.sh_addralign = 1 }, mod.p, mod.len },
			{ ".symtab", { .sh_type = SHT_SYMTAB, .sh_link = 5,
				       .sh_info = (Elf64_Word)(sym.len / sizeof(Elf64_Sym)),
				       .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) },
			  sym.p, sym.len },
			{ ".strtab", { .sh_type = SHT_STRTAB, .sh_addralign = 1 }, str.p, str.len },
			{ ".shstrtab", { .sh_type = SHT_STRTAB, .sh_addralign = 1 }, NULL, 0 },
		};

		finish_elf(out, sect, sizeof(sect) / sizeof(sect[0]));
	}
	free(text.p);
	free(str.p);
	free(sym.p);
	free(mod.p);
}

#define REAL_SYMBOLS FIXTURES "/real-symbols/"

/* Check the object built from a real fixture, as VERSION (NULL: its .modinfo). */
static struct p2ps_check_report *check_real(const char *fixture, const char *version,
					    unsigned int flags)
{
	struct p2ps_check_report *r = NULL;
	char fixver[64];
	struct buf b;
	char *path;

	gen_elf_fixture(fixture, fixver, sizeof(fixver), &b);
	path = write_tmp(b.p, b.len, ".ko");
	free(b.p);
	assert_int_equal(p2ps_check_module(path, version, flags, &r), 0);
	unlink(path);
	free(path);
	return r;
}

/* Every hook ok; the stubs' real bodies checked; returns how many stubs. */
static size_t assert_all_ok(const struct p2ps_check_report *r)
{
	size_t i, stubs = 0;

	for (i = 0; i < r->nr_hooks; i++) {
		if (strcmp(r->hooks[i].status, "ok"))
			fail_msg("%s: %s", r->hooks[i].target, r->hooks[i].status);
		stubs += r->hooks[i].fingerprint_checked;
	}
	for (i = 0; i < r->nr_calls; i++)
		if (strcmp(r->calls[i].status, "ok"))
			fail_msg("call %s: %s", r->calls[i].target, r->calls[i].status);
	return stubs;
}

/*
 * Debian's 550.163.01 (nvidia-open-kernel-source, nvidia.ko built for
 * Debian 12's 6.1): gen 0, every target ok, with the stub names of its
 * check run (docs/check-550.163.01.txt).  As a 555.x build it is refused,
 * and gen B forced onto it misses the static BAR1 targets 550 does not have.
 */
static void test_real_550(void **state)
{
	const char *fx = REAL_SYMBOLS "550.163.01.tsv";
	struct p2ps_check_report *r = check_real(fx, NULL, 0);

	(void)state;
	assert_string_equal(r->driver_version, "550.163.01");
	assert_true(r->supported);
	assert_string_equal(r->profile, "gen-0");
	assert_int_equal(r->nr_hooks, 25);
	/* the seven BAR1 P2P stubs and the four static BAR1 ones */
	assert_int_equal(assert_all_ok(r), 11);
	assert_string_equal(item(r, "kbusIsPcieBar1P2PMappingSupported")->symbol,
			    "kbusIsPcieBar1P2PMappingSupported_bf6dfa");
	assert_string_equal(item(r, "kbusIsBar1P2PCapable")->symbol, "kbusIsBar1P2PCapable_bf6dfa");
	assert_string_equal(item(r, "dmaAllocBar1P2PMapping")->symbol, "dmaAllocBar1P2PMapping_46f6a7");
	assert_string_equal(item(r, "kbusDisableStaticBar1Mapping")->symbol,
			    "kbusDisableStaticBar1Mapping_d44104");
	p2ps_check_free(r);

	/* no version: chosen by the symbols, and gen B's do not resolve */
	fixture_no_version = true;
	r = check_real(fx, NULL, 0);
	fixture_no_version = false;
	assert_true(r->profile_guessed);
	assert_true(r->supported);
	assert_string_equal(r->profile, "gen-0");
	p2ps_check_free(r);

	r = check_real(fx, "555.163.01", 0);
	assert_false(r->supported);
	assert_non_null(strstr(r->reason, "555.x is not verified"));
	p2ps_check_free(r);

	r = check_real(fx, "555.163.01", P2PS_CHECK_FORCE);
	assert_true(r->forced);
	assert_false(r->supported);
	assert_string_equal(r->profile, "gen-b");
	assert_string_equal(item(r, "kbusIsStaticBar1Supported_TU102")->status,
			    "no kbusIsStaticBar1Supported_TU102 in nvidia");
	p2ps_check_free(r);
}

/*
 * The real 580.159.04 (the H200 capture, tests/fixtures/h200-nvlink-580:
 * every name from its kallsyms, bytes where symbols.tsv kept them): gen B,
 * every target ok, its stubs' real bodies checked, the names of
 * docs/real-580.159.04/check.txt (the lent H100's module).
 */
static void test_real_580(void **state)
{
	struct p2ps_check_report *r = check_real(REAL_SYMBOLS "580.159.04.tsv", NULL, 0);

	(void)state;
	assert_string_equal(r->driver_version, "580.159.04");
	assert_true(r->supported);
	assert_string_equal(r->profile, "gen-b");
	assert_int_equal(r->nr_hooks, 20);
	/* the five kbus stubs: the capture kept no bytes of the two dma ones */
	assert_int_equal(assert_all_ok(r), 5);
	assert_string_equal(item(r, "kbusIsPcieBar1P2PMappingSupported")->symbol,
			    "kbusIsPcieBar1P2PMappingSupported_d69453");
	assert_string_equal(item(r, "kbusGetBar1P2PDmaInfo")->symbol, "kbusGetBar1P2PDmaInfo_395e98");
	assert_string_equal(item(r, "dmaFreeBar1P2PMapping")->symbol, "dmaFreeBar1P2PMapping_b3696a");
	p2ps_check_free(r);

	/* as 550: gen 0's own targets are not all there in 580 */
	r = check_real(REAL_SYMBOLS "580.159.04.tsv", "550.163.01", 0);
	assert_false(r->supported);
	assert_string_equal(r->profile, "gen-0");
	p2ps_check_free(r);
}

#define KALLSYMS FIXTURES "/h200-nvlink-580/driver/kallsyms-nvidia.txt.gz"

/* The UVM peer set per driver major (docs/uvm.md, section 5). */
static void test_uvm_sets(void **state)
{
	static const struct {
		const char *version;
		const char *set;	/* NULL: none */
		const char *phys;	/* hooks[1] */
		bool native;
	} cases[] = {
		{ "545.29.06", NULL, NULL, false },
		{ "550.163.01", "uvm-pmm", "uvm_pmm_gpu_peer_phys_address", false },
		{ "560.35.03", "uvm-pmm", "uvm_pmm_gpu_peer_phys_address", false },
		{ "565.57.01", "uvm-pmm", "uvm_pmm_gpu_peer_phys_address", false },
		{ "570.148.08", "uvm-gpu", "uvm_gpu_peer_phys_address", false },
		{ "575.64.05", "uvm-gpu", "uvm_gpu_peer_phys_address", false },
		{ "580.142", "uvm-gpu", "uvm_gpu_peer_phys_address", false },
		{ "590.44.01", "uvm-bar1", NULL, true },
		{ "595.45.04", "uvm-bar1", NULL, true },
		{ "600.1", NULL, NULL, true },
	};
	unsigned int i, j;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct p2ps_object *u = p2ps_uvm_set_for_version(cases[i].version);

		assert_int_equal(p2ps_uvm_native_bar1(cases[i].version), cases[i].native);
		if (!cases[i].set) {
			assert_null(u);
			continue;
		}
		assert_non_null(u);
		assert_string_equal(u->name, cases[i].set);
		assert_string_equal(u->hooks[0].target, "nvUvmInterfaceGetP2PCaps");
		assert_false(u->hooks[0].flags & P2PS_T_UVM);
		if (!cases[i].phys) {
			assert_int_equal(u->nr_hooks, 1);
			assert_null(u->copy_fn);
			continue;
		}
		assert_string_equal(u->hooks[1].target, cases[i].phys);
		for (j = 1; j < u->nr_hooks; j++)
			assert_true(u->hooks[j].flags & P2PS_T_UVM);
	}
	assert_null(p2ps_uvm_set_for_version(NULL));
	assert_null(p2ps_uvm_set_for_version("garbage"));
}

/*
 * Each profile's objects (profile.h): nvidia's first and only there, for
 * every major the profile serves (the module arms objects[0] with the
 * profile, and the library checks its hooks and calls); then nvidia-uvm's,
 * the one p2ps_uvm_set_for_version() gives for each major.
 */
static void test_profile_objects(void **state)
{
	char version[16];
	unsigned int i, j;
	const unsigned int *m;

	(void)state;
	for (i = 0; i < p2ps_nr_profiles; i++) {
		const struct p2ps_profile *p = &p2ps_profiles[i];
		const struct p2ps_object *nv = p2ps_profile_nvidia(p), *o;

		assert_string_equal(nv->module, "nvidia");
		assert_null(nv->name);
		assert_null(nv->majors);
		assert_true(nv->nr_hooks > 0);
		assert_non_null(nv->calls);
		for (j = 0; j < nv->nr_hooks; j++)
			assert_false(nv->hooks[j].flags & P2PS_T_UVM);
		for (o = p->objects + 1; o->module; o++)
			assert_string_equal(o->module, "nvidia_uvm");
		for (m = p->majors; *m; m++) {
			snprintf(version, sizeof(version), "%u.1", *m);
			assert_ptr_equal(p2ps_profile_object(p, version, "nvidia"), nv);
			o = p2ps_profile_object(p, version, "nvidia_uvm");
			assert_non_null(o);
			assert_string_equal(o->name, p2ps_uvm_set_for_version(version)->name);
			assert_ptr_equal(o->hooks, p2ps_uvm_set_for_version(version)->hooks);
		}
		assert_null(p2ps_profile_object(p, "545.29.06", "nvidia_uvm"));
	}
	assert_true(p2ps_is_object_module("nvidia"));
	assert_true(p2ps_is_object_module("nvidia_uvm"));
	assert_false(p2ps_is_object_module("nvidia_drm"));
}

static void test_kallsyms_fixture(void **state)
{
	struct p2ps_check_report *r = NULL;
	size_t i;

	(void)state;
	assert_int_equal(p2ps_check_kallsyms(KALLSYMS, "580.159.04", 0, &r), 0);
	assert_true(r->supported);
	assert_false(r->fingerprints);
	assert_false(r->profile_guessed);
	assert_int_equal(r->nr_symbols, 18090);
	for (i = 0; i < r->nr_hooks; i++) {
		assert_string_equal(r->hooks[i].status, "ok");
		assert_false(r->hooks[i].fingerprint_checked);
	}
	assert_string_equal(item(r, "kbusCreateP2PMappingForBar1P2P")->symbol,
			    "kbusCreateP2PMappingForBar1P2P_395e98");
	assert_string_equal(item(r, "kbusIsPcieBar1P2PMappingSupported")->symbol,
			    "kbusIsPcieBar1P2PMappingSupported_d69453");
	p2ps_check_free(r);

	/* without a version: chosen by the symbols */
	assert_int_equal(p2ps_check_kallsyms(KALLSYMS, NULL, 0, &r), 0);
	assert_true(r->profile_guessed);
	assert_true(r->supported);
	p2ps_check_free(r);

	/* an unsupported version */
	assert_int_equal(p2ps_check_kallsyms(KALLSYMS, "535.0", 0, &r), 0);
	assert_false(r->supported);
	assert_int_equal(r->nr_hooks, 0);
	p2ps_check_free(r);
}

/* An address of a kallsyms line changed: the line at @line gets @addr. */
struct addr_edit {
	const char *line;
	const char *addr;		/* 16 hex digits */
};

/*
 * The real 580.159.04 kallsyms (KALLSYMS) with the addresses of @edits
 * (up to a { NULL } one; NULL for none) changed and @extra lines
 * appended, checked as 580.159.04.
 */
static struct p2ps_check_report *check_kallsyms_edited(const struct addr_edit *edits,
						       const char *extra)
{
	struct p2ps_check_report *r = NULL;
	char *text = p2ps_read_file(KALLSYMS, NULL, true), *all, *at, *path;

	assert_non_null(text);
	for (; edits && edits->line; edits++) {
		at = strstr(text, edits->line);
		assert_non_null(at);
		assert_int_equal(strlen(edits->addr), 16);
		memcpy(at, edits->addr, 16);
	}
	assert_true(asprintf(&all, "%s%s", text, extra) > 0);
	path = write_tmp(all, strlen(all), ".txt");
	assert_int_equal(p2ps_check_kallsyms(path, "580.159.04", 0, &r), 0);
	unlink(path);
	free(path);
	free(all);
	free(text);
	return r;
}

/*
 * Identical-code folding: two targets at one address.  The module refuses
 * it (rules/resolve.c check_folded), and so does check.  The real 580.159.04
 * kallsyms, with kbusHasPcieBar1P2PMapping_d69453 moved onto
 * kbusIsPcieBar1P2PMappingSupported_d69453's address; then both at 0, as
 * an unprivileged reader sees every address: no evidence, no refusal.
 */
static void test_kallsyms_folded(void **state)
{
	static const char has[] = "ffffffffc0447f70 t kbusHasPcieBar1P2PMapping_d69453";
	static const char is[] = "ffffffffc044bde0 t kbusIsPcieBar1P2PMappingSupported_d69453";
	static const struct addr_edit folded[] = { { has, "ffffffffc044bde0" }, { NULL, NULL } };
	static const struct addr_edit hidden[] = {
		{ has, "0000000000000000" }, { is, "0000000000000000" }, { NULL, NULL },
	};
	struct p2ps_check_report *r;
	const struct p2ps_check_item *it;

	(void)state;
	r = check_kallsyms_edited(folded, "");
	assert_false(r->supported);
	it = item(r, "kbusHasPcieBar1P2PMapping");
	if (it->ok)
		it = item(r, "kbusIsPcieBar1P2PMappingSupported");
	assert_false(it->ok);
	assert_non_null(strstr(it->status, "are one function (identical code folded)"));
	p2ps_check_free(r);

	r = check_kallsyms_edited(hidden, "");
	assert_true(r->supported);
	p2ps_check_free(r);
}

/*
 * The UVM peer set (docs/uvm.md), as the module resolves it when
 * nvidia-uvm arrives: the real 580.159.04 kallsyms for nvidia, and
 * [nvidia_uvm] lines for uvm-gpu's three nvidia-uvm targets.  A clone or
 * two targets folded onto one address: the set would not arm, and the
 * profile's verdict does not change (the module arms without the set).
 */
static struct p2ps_check_report *check_with_uvm(const char *uvm_lines)
{
	struct p2ps_check_report *r = check_kallsyms_edited(NULL, uvm_lines);

	assert_true(r->supported);
	assert_string_equal(r->uvm_set, "uvm-gpu");
	return r;
}

static void test_kallsyms_uvm(void **state)
{
	struct p2ps_check_report *r;

	(void)state;
	r = check_with_uvm("");
	assert_false(r->uvm_checked);
	assert_false(r->uvm_ok);
	assert_true(r->uvm_hooks[0].ok);	/* nvUvmInterfaceGetP2PCaps, in nvidia */
	/* the unchecked hooks are not ok, and the set's reason says why */
	assert_false(r->uvm_hooks[1].ok);
	assert_non_null(strstr(r->uvm_reason, "not checked: no nvidia-uvm symbols"));
	p2ps_check_free(r);
	r = check_with_uvm("ffffffffc1000000 t uvm_gpu_peer_phys_address\t[nvidia_uvm]\n"
			   "ffffffffc1000100 t make_pte_turing\t[nvidia_uvm]\n"
			   "ffffffffc1000200 t make_pte_hopper\t[nvidia_uvm]\n"
			   "ffffffffc1000300 T uvm_gpu_peer_copy_address\t[nvidia_uvm]\n");
	assert_true(r->uvm_checked);
	assert_true(r->uvm_ok);
	assert_int_equal(r->nr_uvm_hooks, 4);
	/* names only: the copy-address function's call is the module's to check */
	assert_false(r->uvm_hooks[1].fingerprint_checked);
	p2ps_check_free(r);
	/* without the copy-address function the module refuses the set, so check does */
	r = check_with_uvm("ffffffffc1000000 t uvm_gpu_peer_phys_address\t[nvidia_uvm]\n"
			   "ffffffffc1000100 t make_pte_turing\t[nvidia_uvm]\n"
			   "ffffffffc1000200 t make_pte_hopper\t[nvidia_uvm]\n");
	assert_false(r->uvm_ok);
	assert_non_null(strstr(r->uvm_reason, "no uvm_gpu_peer_copy_address in nvidia_uvm"));
	p2ps_check_free(r);
	r = check_with_uvm("ffffffffc1000000 t uvm_gpu_peer_phys_address\t[nvidia_uvm]\n"
			   "ffffffffc1000100 t make_pte_turing\t[nvidia_uvm]\n"
			   "ffffffffc1000100 t make_pte_hopper\t[nvidia_uvm]\n"
			   "ffffffffc1000300 T uvm_gpu_peer_copy_address\t[nvidia_uvm]\n");
	assert_false(r->uvm_ok);
	assert_non_null(strstr(r->uvm_reason, "identical code folded"));
	p2ps_check_free(r);
	r = check_with_uvm("ffffffffc1000000 t uvm_gpu_peer_phys_address\t[nvidia_uvm]\n"
			   "ffffffffc1000080 t uvm_gpu_peer_phys_address.isra.0\t[nvidia_uvm]\n"
			   "ffffffffc1000100 t make_pte_turing\t[nvidia_uvm]\n"
			   "ffffffffc1000200 t make_pte_hopper\t[nvidia_uvm]\n"
			   "ffffffffc1000300 T uvm_gpu_peer_copy_address\t[nvidia_uvm]\n");
	assert_false(r->uvm_ok);
	assert_non_null(strstr(r->uvm_reason, "compiler clone uvm_gpu_peer_phys_address.isra.0"));
	p2ps_check_free(r);
}

/*
 * An nvidia-uvm.ko for the UVM peer set uvm-gpu (570-580): its three
 * targets and uvm_gpu_peer_copy_address, which calls
 * uvm_gpu_peer_phys_address through a PLT32 relocation, as gcc builds it
 * (docs/uvm.md, 3.5); or, @inlined, has its body inlined and calls
 * nothing; with @folded, make_pte_hopper at make_pte_turing's place.
 */
static void gen_uvm_elf(bool inlined, bool folded, struct buf *out)
{
	/* endbr64; xor %eax,%eax; ret */
	static const unsigned char plain[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x31, 0xc0, 0xc3 };
	/* endbr64; call <reloc>; ret, or endbr64; mov %rdi,%rax; nop; nop; ret */
	static const unsigned char calls[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xe8, 0, 0, 0, 0, 0xc3 };
	static const unsigned char inl[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x89, 0xf8, 0x90, 0x90, 0xc3 };
	static const char *const names[] = { "uvm_gpu_peer_phys_address", "make_pte_turing",
					     "make_pte_hopper", "uvm_gpu_peer_copy_address" };
	struct buf text = { 0 }, str = { 0 }, sym = { 0 };
	size_t at[4];
	Elf64_Sym s;
	Elf64_Rela rela;
	unsigned int i;

	put(&str, "", 1);
	memset(&s, 0, sizeof(s));
	put(&sym, &s, sizeof(s));
	for (i = 0; i < 4; i++) {
		align(&text, 16);
		if (i == 2 && folded)
			at[i] = at[1];
		else if (i == 3)
			at[i] = put(&text, inlined ? inl : calls, sizeof(calls));
		else
			at[i] = put(&text, plain, sizeof(plain));
		s.st_name = (Elf64_Word)put(&str, names[i], strlen(names[i]) + 1);
		s.st_info = ELF64_ST_INFO(i == 1 || i == 2 ? STB_LOCAL : STB_GLOBAL, STT_FUNC);
		s.st_shndx = 1;
		s.st_value = at[i];
		s.st_size = i == 3 ? sizeof(calls) : sizeof(plain);
		put(&sym, &s, sizeof(s));
	}
	/* the call's rel32, at copy_address + 5, to symbol 1 (phys_address) - 4 */
	rela = (Elf64_Rela){ .r_offset = at[3] + 5, .r_info = ELF64_R_INFO(1, R_X86_64_PLT32),
			     .r_addend = -4 };
	{
		const struct sect sect[] = {
			{ ".text", { .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
				     .sh_addralign = 16 }, text.p, text.len },
			{ ".rela.text", { .sh_type = SHT_RELA, .sh_link = 3, .sh_info = 1,
					  .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Rela) },
			  &rela, inlined ? 0 : sizeof(rela) },
			{ ".symtab", { .sh_type = SHT_SYMTAB, .sh_link = 4, .sh_info = 1,
				       .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) },
			  sym.p, sym.len },
			{ ".strtab", { .sh_type = SHT_STRTAB, .sh_addralign = 1 }, str.p, str.len },
			{ ".shstrtab", { .sh_type = SHT_STRTAB, .sh_addralign = 1 }, NULL, 0 },
		};

		finish_elf(out, sect, sizeof(sect) / sizeof(sect[0]));
	}
	free(text.p);
	free(str.p);
	free(sym.p);
}

/* The real 580.159.04 kallsyms for nvidia, nvidia-uvm from a generated file. */
static struct p2ps_check_report *check_uvm_module(bool inlined, bool folded)
{
	struct p2ps_check_input in = { .kallsyms = KALLSYMS, .version = "580.159.04" };
	struct p2ps_check_report *r = NULL;
	struct buf b;

	gen_uvm_elf(inlined, folded, &b);
	in.uvm_module = write_tmp(b.p, b.len, ".ko");
	free(b.p);
	assert_int_equal(p2ps_check(&in, &r), 0);
	unlink(in.uvm_module);
	free((char *)in.uvm_module);
	assert_true(r->supported);
	assert_true(r->uvm_checked);
	assert_string_equal(r->uvm_set, "uvm-gpu");
	return r;
}

/*
 * `p2pctl check --uvm-module`: the UVM peer set checked on an nvidia-uvm.ko
 * as the module checks it when nvidia-uvm arrives, the copy-address
 * function's call to the phys-address hook included (the module's refusal
 * "does not call ... (inlined?)", tests/vm/cases/uvm-peer.sh).
 */
static void test_uvm_module(void **state)
{
	struct p2ps_check_report *r;

	(void)state;
	r = check_uvm_module(false, false);
	assert_true(r->uvm_ok);
	assert_string_equal(r->uvm_hooks[1].status, "ok");
	assert_true(r->uvm_hooks[1].fingerprint_checked);
	p2ps_check_free(r);

	/* the copy-address function changed: its phys-address call inlined */
	r = check_uvm_module(true, false);
	assert_false(r->uvm_ok);
	assert_false(r->uvm_hooks[1].ok);
	assert_true(r->uvm_hooks[1].fingerprint_checked);
	assert_string_equal(r->uvm_reason, "uvm_gpu_peer_phys_address: uvm_gpu_peer_copy_address "
			    "does not call uvm_gpu_peer_phys_address (inlined?): physical-mode "
			    "copies would keep the stock aperture");
	p2ps_check_free(r);

	/* two targets folded into one function */
	r = check_uvm_module(false, true);
	assert_false(r->uvm_ok);
	assert_false(r->uvm_hooks[3].ok);
	assert_non_null(strstr(r->uvm_reason, "make_pte_turing and make_pte_hopper are one "
			       "function (identical code folded)"));
	p2ps_check_free(r);
}

/*
 * The resolver itself (rules/resolve.c), over a source shaped as the
 * module's (kmod/driver.c: loaded code, addresses, the kernel's IBT and
 * call-depth thunk settings): the module's own verdicts.
 */
struct fakesym {
	const char *name;
	unsigned long long addr;
	const unsigned char *code;
	size_t len;
};

static void fake_walk(const struct p2ps_symsrc *src,
		      bool (*fn)(const struct p2ps_sym *sym, void *arg), void *arg)
{
	const struct fakesym *f;

	for (f = src->priv; f->name; f++) {
		struct p2ps_sym s = { f->name, f->addr, f->len };

		if (fn(&s, arg))
			return;
	}
}

static long fake_read(const struct p2ps_symsrc *src, unsigned long long addr, void *buf, size_t len)
{
	const struct fakesym *f;

	for (f = src->priv; f->name; f++) {
		if (f->addr == addr) {
			len = len < f->len ? len : f->len;
			memcpy(buf, f->code, len);
			return (long)len;
		}
	}
	return -EFAULT;
}

static void test_resolver(void **state)
{
	/* endbr64; xor %eax,%eax; ret: the stub body of both */
	static const unsigned char ret_false[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x31, 0xc0, 0xc3 };
	static const unsigned char noendbr[] = { 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3 };
	/* a call to 0x2000 from 0x3000 (rel32 0xffffeffb), or to the thunk 16 bytes before */
	static const unsigned char call[] = { 0xe8, 0xfb, 0xef, 0xff, 0xff, 0xc3 };
	static const unsigned char call_thunk[] = { 0xe8, 0xeb, 0xef, 0xff, 0xff, 0xc3 };
	static const unsigned char inlined[] = { 0x48, 0x89, 0xf8, 0xc3 };
	struct fakesym nv[] = {
		{ "kbusIsPcieBar1P2PMappingSupported_d69453", 0x1000, ret_false, sizeof(ret_false) },
		{ "kbusHasPcieBar1P2PMapping_d69453", 0x1000, ret_false, sizeof(ret_false) },
		{ "kbusIsPcieBar1P2PMappingSupported_GH100", 0x1100, noendbr, sizeof(noendbr) },
		{ "kbusHasPcieBar1P2PMapping_GH100", 0x1200, noendbr, sizeof(noendbr) },
		{ "nvUvmInterfaceGetP2PCaps", 0x1300, ret_false, sizeof(ret_false) },
		{ NULL, 0, NULL, 0 },
	};
	struct fakesym uvm[] = {
		{ "uvm_gpu_peer_phys_address", 0x2000, ret_false, sizeof(ret_false) },
		{ "make_pte_turing", 0x2100, ret_false, sizeof(ret_false) },
		{ "make_pte_hopper", 0x2200, ret_false, sizeof(ret_false) },
		{ "uvm_gpu_peer_copy_address", 0x3000, call, sizeof(call) },
		{ NULL, 0, NULL, 0 },
	};
	struct p2ps_symsrc src = { .module = "nvidia", .walk = fake_walk, .read = fake_read,
				   .ibt = true, .priv = nv };
	struct p2ps_symsrc usrc = { .module = "nvidia_uvm", .walk = fake_walk, .read = fake_read,
				    .priv = uvm };
	const struct p2ps_hook_desc *hooks = gen_b_nv()->hooks;
	const struct p2ps_object *set = p2ps_uvm_set_for_version("580.142");
	struct p2ps_target t[4];

	(void)state;
	/* B1 and B2 (the first two hooks), folded: the second refused */
	assert_string_equal(hooks[0].target, "kbusIsPcieBar1P2PMappingSupported");
	assert_string_equal(hooks[1].target, "kbusHasPcieBar1P2PMapping");
	assert_int_equal(p2ps_resolve_hooks(&src, hooks, 2, t), 1);
	assert_int_equal(t[0].err, 0);
	assert_true(t[0].fingerprint_checked);
	assert_int_equal(t[1].err, -ENOTUNIQ);
	assert_true(t[1].folded);
	assert_string_equal(t[1].culprit, "kbusHasPcieBar1P2PMapping_d69453");
	assert_string_equal(t[1].why, "kbusIsPcieBar1P2PMappingSupported_d69453 and "
			    "kbusHasPcieBar1P2PMapping_d69453 are one function (identical code "
			    "folded): a hook on it would act on both");
	nv[1].addr = 0x1080;
	assert_int_equal(p2ps_resolve_hooks(&src, hooks, 2, t), -1);

	/* a called function without ENDBR: refused with IBT, a note without */
	assert_int_equal(p2ps_resolve_call(&src, "kbusHasPcieBar1P2PMapping_GH100", t), -ENOEXEC);
	assert_string_equal(t[0].culprit, "kbusHasPcieBar1P2PMapping_GH100");
	assert_non_null(strstr(t[0].why, "does not start with endbr64 (55 48 89 e5): only "
			       "called directly inside nvidia"));
	src.ibt = false;
	assert_int_equal(p2ps_resolve_call(&src, "kbusHasPcieBar1P2PMapping_GH100", t), 0);
	assert_non_null(strstr(t[0].note, "harmless on this kernel (no IBT)"));

	/* the UVM peer set: the copy-address function calls the hook ... */
	assert_non_null(set);
	assert_int_equal(set->nr_hooks, 4);
	assert_int_equal(p2ps_resolve_uvm_set(&src, &usrc, set, t), -1);
	assert_true(t[1].fingerprint_checked);
	/* ... through a call-depth thunk only where the kernel has them ... */
	uvm[3].code = call_thunk;
	assert_int_equal(p2ps_resolve_uvm_set(&src, &usrc, set, t), 1);
	usrc.thunks = true;
	assert_int_equal(p2ps_resolve_uvm_set(&src, &usrc, set, t), -1);
	/* ... and not at all once inlined: the set is refused, naming it */
	uvm[3].code = inlined;
	uvm[3].len = sizeof(inlined);
	assert_int_equal(p2ps_resolve_uvm_set(&src, &usrc, set, t), 1);
	assert_int_equal(t[1].err, -ENOEXEC);
	assert_string_equal(t[1].culprit, "uvm_gpu_peer_copy_address");
	assert_non_null(strstr(t[1].why, "does not call uvm_gpu_peer_phys_address (inlined?)"));
}

static void test_kallsyms_synthetic(void **state)
{
	static const char text[] =
		"ffffffffc0400000 t kbusIsPcieBar1P2PMappingSupported_d69453\t[nvidia]\n"
		"ffffffffc0400010 t kbusIsPcieBar1P2PMappingSupported_d69454\t[nvidia]\n"
		"ffffffffc0400020 t kbusHasPcieBar1P2PMapping_d69453\t[other]\n"
		"ffffffff81000000 T register_kprobe\n";
	struct p2ps_check_report *r = NULL;
	char *path = write_tmp(text, sizeof(text) - 1, ".txt");
	const struct p2ps_check_item *it;

	(void)state;
	assert_int_equal(p2ps_check_kallsyms(path, "580.1", 0, &r), 0);
	assert_false(r->supported);
	assert_int_equal(r->nr_symbols, 2);	/* only [nvidia] lines */
	it = item(r, "kbusIsPcieBar1P2PMappingSupported");
	assert_non_null(strstr(it->status, "ambiguous"));
	it = item(r, "kbusHasPcieBar1P2PMapping");
	assert_string_equal(it->status, "no kbusHasPcieBar1P2PMapping_<hash> stub in nvidia");
	p2ps_check_free(r);
	unlink(path);
	free(path);

	path = write_tmp("garbage\n", 8, ".txt");
	assert_int_equal(p2ps_check_kallsyms(path, NULL, 0, &r), -P2PS_E_FORMAT);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elf_ok),
		cmocka_unit_test(test_uvm_sets),
		cmocka_unit_test(test_profile_objects),
		cmocka_unit_test(test_kallsyms_folded),
		cmocka_unit_test(test_kallsyms_uvm),
		cmocka_unit_test(test_uvm_module),
		cmocka_unit_test(test_resolver),
		cmocka_unit_test(test_elf_missing_stub),
		cmocka_unit_test(test_elf_missing_dest),
		cmocka_unit_test(test_elf_missing_call),
		cmocka_unit_test(test_elf_changed_stub),
		cmocka_unit_test(test_elf_ibt_sealed_call),
		cmocka_unit_test(test_elf_ibt_called_dest_without_endbr),
		cmocka_unit_test(test_elf_ibt_uncalled_may_be_sealed),
		cmocka_unit_test(test_elf_clone),
		cmocka_unit_test(test_elf_version_override),
		cmocka_unit_test(test_elf_gen0),
		cmocka_unit_test(test_elf_force),
		cmocka_unit_test(test_elf_no_version),
		cmocka_unit_test(test_elf_bad_version),
		cmocka_unit_test(test_elf_compressed),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_kallsyms_fixture),
		cmocka_unit_test(test_kallsyms_synthetic),
		cmocka_unit_test(test_real_550),
		cmocka_unit_test(test_real_580),
	};

	return cmocka_run_group_tests_name("check", tests, NULL, NULL);
}
