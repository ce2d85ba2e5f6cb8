// SPDX-License-Identifier: GPL-2.0
/*
 * libp2pshim: doctor's findings store.  The check families add findings
 * (p2ps_dr_add()); p2ps_doctor_find() looks one up; the report's words
 * for its enums; and the report said once (p2ps_doctor_digest()).
 *
 * A host with eight GPUs has 28 pairs, and most per-pair checks say the
 * same of each: the text names such a finding once, with its GPUs ("0, 1",
 * "all 8 GPUs") or pairs ("0-1, 0-2", "all 28 pairs", "all 28 pairs but
 * 0-1, 2-3"), numbered as in the report's gpus[].  Blockers first, then
 * warnings, skips, oks; a remedy is a line per fix, and findings that share
 * a line of it get one remedy line.
 * The report itself keeps every finding (JSON prints them one by one).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

const char *p2ps_verdict_name(enum p2ps_verdict v)
{
	switch (v) {
	case P2PS_V_OK: return "ok";
	case P2PS_V_SKIP: return "skip";
	case P2PS_V_WARN: return "warn";
	case P2PS_V_FAIL: return "fail";
	}
	return "unknown";
}

const char *p2ps_static_bar1_name(enum p2ps_static_bar1 s)
{
	switch (s) {
	case P2PS_SB_YES: return "yes";
	case P2PS_SB_NO: return "no";
	case P2PS_SB_UNALIGNED: return "yes, unusable";
	case P2PS_SB_INIT_FAILS: return "init fails";
	default: return "unknown";
	}
}

const char *p2ps_p2p_name(enum p2ps_p2p p)
{
	switch (p) {
	case P2PS_P2P_BAR1: return "bar1";
	case P2PS_P2P_NATIVE: return "native";
	case P2PS_P2P_NONE: return "none";
	default: return "unknown";
	}
}

const char *p2ps_pcie_path_name(enum p2ps_pcie_path p)
{
	switch (p) {
	case P2PS_PATH_SWITCH: return "common switch";
	case P2PS_PATH_ROOT_COMPLEX: return "same root complex";
	case P2PS_PATH_HOST_BRIDGES: return "across host bridges";
	case P2PS_PATH_CROSS_SOCKET: return "across sockets";
	default: return "unknown";
	}
}

/*
 * A remedy is one line per fix ('\n' between them; include/p2pshim.h).
 * Each line is sanitized on its own.  A line after the first that does not
 * fit is left out whole, with those after it: a command cut in half is
 * worse than none (the first is cut as any text is).
 */
static void set_remedy(char *dst, size_t size, const char *remedy)
{
	const char *p = remedy;
	size_t off = 0;

	*dst = '\0';
	for (; *p; p += *p == '\n') {
		size_t n = strcspn(p, "\n");

		if (!n)
			continue;
		if (off && off + 1 + n >= size)
			break;
		if (off)
			dst[off++] = '\n';
		if (off + n >= size)
			n = size - off - 1;
		memcpy(dst + off, p, n);
		dst[off + n] = '\0';
		p2ps_sanitize(dst + off);
		off += n;
		p += strcspn(p, "\n");
	}
}

void p2ps_dr_add(struct dctx *c, const char *check, const char *subject, enum p2ps_verdict v,
		const char *source, const char *remedy, const char *fmt, ...)
{
	struct p2ps_doctor_report *r = c->r;
	struct p2ps_finding *f;
	va_list ap;

	if (c->err)
		return;
	if (r->nr_findings == c->cap_f) {
		size_t n = c->cap_f ? c->cap_f * 2 : 32;
		struct p2ps_finding *nf = realloc(r->findings, n * sizeof(*nf));

		if (!nf) {
			c->err = -ENOMEM;
			return;
		}
		r->findings = nf;
		c->cap_f = n;
	}
	f = &r->findings[r->nr_findings++];
	memset(f, 0, sizeof(*f));
	p2ps_strlcpy(f->check, check, sizeof(f->check));
	p2ps_strlcpy(f->subject, subject ? subject : "", sizeof(f->subject));
	f->verdict = v;
	p2ps_strlcpy(f->source, source ? source : "", sizeof(f->source));
	set_remedy(f->remedy, sizeof(f->remedy), v == P2PS_V_OK || !remedy ? "" : remedy);
	va_start(ap, fmt);
	vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
	va_end(ap);
	/* what files said reaches a terminal and JSON: no ESC, valid UTF-8 */
	p2ps_sanitize(f->subject);
	p2ps_sanitize(f->detail);
	p2ps_sanitize(f->source);
	if (v == P2PS_V_FAIL)
		r->nr_fail++;
	else if (v == P2PS_V_WARN)
		r->nr_warn++;
}

const struct p2ps_finding *p2ps_doctor_find(const struct p2ps_doctor_report *r,
					    const char *check, const char *subject)
{
	size_t i;

	for (i = 0; i < r->nr_findings; i++)
		if (!strcmp(r->findings[i].check, check) &&
		    (!subject || !strcmp(r->findings[i].subject, subject)))
			return &r->findings[i];
	return NULL;
}

/* ---------------------------------------------------------------- said once */

/* What a subject names: the host, a GPU, a pair, or something else. */
struct item {
	enum { IT_HOST, IT_GPU, IT_PAIR, IT_RAW } kind;
	unsigned int a, b;
	const char *raw;
};

static int gpu_index(const struct p2ps_doctor_report *r, const char *bdf, size_t len)
{
	size_t i;

	for (i = 0; i < r->nr_gpus; i++)
		if (strlen(r->gpus[i].bdf) == len && !strncmp(r->gpus[i].bdf, bdf, len))
			return (int)i;
	return -1;
}

static struct item parse_subject(const struct p2ps_doctor_report *r, const char *s)
{
	struct item it = { .kind = IT_RAW, .raw = s };
	const char *sp = strchr(s, ' ');
	int a, b;

	if (!*s) {
		it.kind = IT_HOST;
		return it;
	}
	if (!sp) {
		a = gpu_index(r, s, strlen(s));
		if (a >= 0) {
			it.kind = IT_GPU;
			it.a = (unsigned int)a;
		}
		return it;
	}
	a = gpu_index(r, s, (size_t)(sp - s));
	b = strchr(sp + 1, ' ') ? -1 : gpu_index(r, sp + 1, strlen(sp + 1));
	if (a >= 0 && b >= 0) {
		it.kind = IT_PAIR;
		it.a = (unsigned int)(a < b ? a : b);
		it.b = (unsigned int)(a < b ? b : a);
	}
	return it;
}

static bool item_eq(const struct item *x, const struct item *y)
{
	if (x->kind != y->kind)
		return false;
	switch (x->kind) {
	case IT_HOST: return true;
	case IT_GPU: return x->a == y->a;
	case IT_PAIR: return x->a == y->a && x->b == y->b;
	default: return !strcmp(x->raw, y->raw);
	}
}

/* A growing string; NULL once an allocation failed. */
struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

__attribute__((format(printf, 2, 3)))
static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if (b->len + (size_t)n + 1 > b->cap) {
		size_t cap = (b->len + (size_t)n + 1) * 2;
		char *s = realloc(b->s, cap);

		if (!s) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static char *sb_take(struct sbuf *b)
{
	if (b->oom) {
		free(b->s);
		return NULL;
	}
	return b->s ? b->s : strdup("");
}

static void item_print(struct sbuf *b, const struct item *it)
{
	switch (it->kind) {
	case IT_HOST: sb_add(b, "host"); break;
	case IT_GPU: sb_add(b, "%u", it->a); break;
	case IT_PAIR: sb_add(b, "%u-%u", it->a, it->b); break;
	default: sb_add(b, "%s", it->raw);
	}
}

/*
 * The subjects of @fs (@n findings) as one text: "" if they are the host's;
 * GPUs "0, 1" or "all 8 GPUs"; pairs "0-1, 0-2", "all 28 pairs", or, for
 * more than half of six or more pairs, "all 28 pairs but 0-1, 2-3".
 * Anything else as the subjects are, joined by ", ".  NULL: out of memory.
 */
char *p2ps_doctor_who(const struct p2ps_doctor_report *r, const struct p2ps_finding *const *fs,
		      size_t n)
{
	struct item *it = calloc(n ? n : 1, sizeof(*it));
	struct sbuf b = { 0 };
	size_t i, j, k = 0, gpus = 0, pairs = 0, hosts = 0;

	if (!it)
		return NULL;
	for (i = 0; i < n; i++) {
		struct item x = parse_subject(r, fs[i]->subject);

		for (j = 0; j < k && !item_eq(&it[j], &x); j++)
			;
		if (j < k)
			continue;	/* said already */
		it[k++] = x;
		gpus += x.kind == IT_GPU;
		pairs += x.kind == IT_PAIR;
		hosts += x.kind == IT_HOST;
	}
	if (hosts == k) {
		free(it);
		return strdup("");
	}
	if (gpus == k && k == r->nr_gpus && k >= 3) {
		sb_add(&b, "all %zu GPUs", k);
	} else if (pairs == k && k == r->nr_pairs && k >= 3) {
		sb_add(&b, "all %zu pairs", k);
	} else if (pairs == k && r->nr_pairs >= 6 && k > r->nr_pairs / 2) {
		const char *sep = "";

		sb_add(&b, "all %zu pairs but ", r->nr_pairs);
		for (i = 0; i < r->nr_pairs; i++) {
			struct item x = { .kind = IT_PAIR, .a = r->pairs[i].a, .b = r->pairs[i].b };

			if (x.a > x.b) {
				x.a = r->pairs[i].b;
				x.b = r->pairs[i].a;
			}
			for (j = 0; j < k && !item_eq(&it[j], &x); j++)
				;
			if (j < k)
				continue;
			sb_add(&b, "%s", sep);
			item_print(&b, &x);
			sep = ", ";
		}
	} else {
		for (i = 0; i < k; i++) {
			if (i)
				sb_add(&b, ", ");
			item_print(&b, &it[i]);
		}
	}
	free(it);
	return sb_take(&b);
}

/* Findings that differ only in their subject are one line. */
static bool same_line(const struct p2ps_finding *x, const struct p2ps_finding *y)
{
	return x->verdict == y->verdict && !strcmp(x->check, y->check) &&
	       !strcmp(x->detail, y->detail) && !strcmp(x->remedy, y->remedy);
}

static bool has_remedy(const struct p2ps_finding *f)
{
	return f->verdict >= P2PS_V_WARN && *f->remedy;
}

static int digest_lines(const struct p2ps_doctor_report *r, struct p2ps_doctor_digest *d,
			const struct p2ps_finding **fs)
{
	int v;

	d->lines = calloc(r->nr_findings ? r->nr_findings : 1, sizeof(*d->lines));
	if (!d->lines)
		return -ENOMEM;
	/* blockers first: by verdict, each in the order the checks ran */
	for (v = P2PS_V_FAIL; v >= P2PS_V_OK; v--) {
		size_t i, j;

		for (i = 0; i < r->nr_findings; i++) {
			const struct p2ps_finding *f = &r->findings[i];
			struct p2ps_digest_line *l;
			size_t n = 0;

			if ((int)f->verdict != v)
				continue;
			for (j = 0; j < i && !same_line(&r->findings[j], f); j++)
				;
			if (j < i)
				continue;	/* said with the first of its kind */
			for (j = i; j < r->nr_findings; j++)
				if (same_line(&r->findings[j], f))
					fs[n++] = &r->findings[j];
			l = &d->lines[d->nr_lines++];
			l->finding = f;
			l->nr = n;
			l->who = p2ps_doctor_who(r, fs, n);
			if (!l->who)
				return -ENOMEM;
			if (v == P2PS_V_FAIL)
				d->nr_fail++;
			else if (v == P2PS_V_WARN)
				d->nr_warn++;
		}
	}
	return 0;
}

/* Is @part one of the lines of @remedy? */
static bool has_line(const char *remedy, const char *part)
{
	size_t n = strlen(part);
	const char *p = remedy;

	for (; *p; p += *p == '\n') {
		size_t m = strcspn(p, "\n");

		if (m == n && !strncmp(p, part, n))
			return true;
		p += m;
	}
	return false;
}

/*
 * Who has remedy line @part, the first of them on line @i: "check WHO" for
 * each check, in the order of the lines ("lockdown; sig-enforce", "link 0, 1").
 */
static char *remedy_who(const struct p2ps_doctor_report *r, const struct p2ps_doctor_digest *d,
			size_t i, const char *part, const struct p2ps_finding **fs)
{
	struct sbuf b = { 0 };
	size_t j, k;

	for (j = i; j < d->nr_lines; j++) {
		const struct p2ps_finding *g = d->lines[j].finding;
		size_t n = 0;
		char *who;

		if (!has_remedy(g) || !has_line(g->remedy, part))
			continue;
		for (k = i; k < j; k++)
			if (has_remedy(d->lines[k].finding) && has_line(d->lines[k].finding->remedy, part) &&
			    !strcmp(d->lines[k].finding->check, g->check))
				break;
		if (k < j)
			continue;	/* this check is named already */
		for (k = 0; k < r->nr_findings; k++)
			if (has_remedy(&r->findings[k]) && !strcmp(r->findings[k].check, g->check) &&
			    has_line(r->findings[k].remedy, part))
				fs[n++] = &r->findings[k];
		who = p2ps_doctor_who(r, fs, n);
		if (!who) {
			free(b.s);
			return NULL;
		}
		sb_add(&b, "%s%s%s%s", b.len ? "; " : "", g->check, *who ? " " : "", who);
		free(who);
	}
	return sb_take(&b);
}

/*
 * One remedy line per remedy text, a finding's remedy being one line per
 * fix: in the order of the lines, each text once, naming who has it.
 */
static int digest_remedies(const struct p2ps_doctor_report *r, struct p2ps_doctor_digest *d,
			   const struct p2ps_finding **fs)
{
	size_t i, j, n = 0;
	const char *p;

	for (i = 0; i < d->nr_lines; i++)
		for (p = d->lines[i].finding->remedy; *p; p++)
			n += *p == '\n';
	d->remedies = calloc(d->nr_lines + n + 1, sizeof(*d->remedies));
	if (!d->remedies)
		return -ENOMEM;
	for (i = 0; i < d->nr_lines; i++) {
		const struct p2ps_finding *f = d->lines[i].finding;

		if (!has_remedy(f))
			continue;
		for (p = f->remedy; *p; p += *p == '\n') {
			size_t len = strcspn(p, "\n");
			struct p2ps_digest_remedy *m;
			char *part;

			if (!len)
				continue;
			part = strndup(p, len);
			p += len;
			if (!part)
				return -ENOMEM;
			for (j = 0; j < d->nr_remedies && strcmp(d->remedies[j].remedy, part); j++)
				;
			if (j < d->nr_remedies) {
				free(part);
				continue;	/* merged into the first line that has it */
			}
			m = &d->remedies[d->nr_remedies++];
			m->remedy = part;
			m->who = remedy_who(r, d, i, part, fs);
			if (!m->who)
				return -ENOMEM;
		}
	}
	return 0;
}

/* The pairs' answers, a line per answer and reason. */
static int digest_pairs(const struct p2ps_doctor_report *r, struct p2ps_doctor_digest *d)
{
	struct p2ps_finding *tmp;
	const struct p2ps_finding **fs;
	size_t i, j;
	int err = 0;

	if (!r->nr_pairs)
		return 0;
	d->pairs = calloc(r->nr_pairs, sizeof(*d->pairs));
	tmp = calloc(r->nr_pairs, sizeof(*tmp));
	fs = calloc(r->nr_pairs, sizeof(*fs));
	if (!d->pairs || !tmp || !fs) {
		err = -ENOMEM;
		goto out;
	}
	/* the pairs as subjects, for p2ps_doctor_who() */
	for (i = 0; i < r->nr_pairs; i++)
		snprintf(tmp[i].subject, sizeof(tmp[i].subject), "%s %s", r->gpus[r->pairs[i].a].bdf,
			 r->gpus[r->pairs[i].b].bdf);
	for (i = 0; i < r->nr_pairs; i++) {
		const struct p2ps_pair *p = &r->pairs[i];
		struct p2ps_digest_pair *l;
		size_t n = 0;

		for (j = 0; j < i && (r->pairs[j].p2p != p->p2p || strcmp(r->pairs[j].p2p_why, p->p2p_why));
		     j++)
			;
		if (j < i)
			continue;
		for (j = i; j < r->nr_pairs; j++)
			if (r->pairs[j].p2p == p->p2p && !strcmp(r->pairs[j].p2p_why, p->p2p_why))
				fs[n++] = &tmp[j];
		l = &d->pairs[d->nr_pairs++];
		l->p2p = p->p2p;
		l->why = p->p2p_why;
		l->nr = n;
		l->who = p2ps_doctor_who(r, fs, n);
		if (!l->who) {
			err = -ENOMEM;
			goto out;
		}
	}
out:
	free(tmp);
	free(fs);
	return err;
}

int p2ps_doctor_digest(const struct p2ps_doctor_report *r, struct p2ps_doctor_digest **out)
{
	struct p2ps_doctor_digest *d = calloc(1, sizeof(*d));
	const struct p2ps_finding **fs = calloc(r->nr_findings ? r->nr_findings : 1, sizeof(*fs));
	int err = -ENOMEM;

	*out = NULL;
	if (d && fs) {
		err = digest_lines(r, d, fs);
		if (!err)
			err = digest_remedies(r, d, fs);
		if (!err)
			err = digest_pairs(r, d);
	}
	free(fs);
	if (err) {
		p2ps_doctor_digest_free(d);
		return err;
	}
	*out = d;
	return 0;
}

void p2ps_doctor_digest_free(struct p2ps_doctor_digest *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nr_lines; i++)
		free(d->lines[i].who);
	for (i = 0; i < d->nr_remedies; i++) {
		free(d->remedies[i].who);
		free((char *)d->remedies[i].remedy);
	}
	for (i = 0; i < d->nr_pairs; i++)
		free(d->pairs[i].who);
	free(d->lines);
	free(d->remedies);
	free(d->pairs);
	free(d);
}
