// SPDX-License-Identifier: GPL-2.0
/*
 * The facts the documentation states about the profiles, taken from
 * rules/profile.c itself (compiled in, as lib/ does for `p2pctl check`).
 *
 *   facts            one line per fact, for tests/check-docs/run:
 *                      profile NAME MAJORS NR_HOOKS
 *                      registry NAME KEY=0xVALUE...
 *                      uvm NAME MAJORS NR_HOOKS
 *   facts --table    the Markdown table of profiles, as README and
 *                    docs/hooks.md carry it between their markers
 */
#include <stdio.h>
#include <string.h>

#include <p2p-shim/profile.h>

/* Driver majors probed for UVM sets: their table is private to profile.c. */
#define MAJOR_MIN 500
#define MAJOR_MAX 999

static void majors(const unsigned int *m, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (; *m && n < len; m++)
		n += snprintf(buf + n, len - n, "%s%u", n ? "," : "", *m);
}

/* nvidia-uvm's object for @major, in whichever profile lists one (as lib/check.c). */
static const struct p2ps_object *uvm_for_major(unsigned int major)
{
	const struct p2ps_object *o;
	unsigned int i;
	char v[16];

	snprintf(v, sizeof(v), "%u.0", major);
	for (i = 0; i < p2ps_nr_profiles; i++) {
		o = p2ps_profile_object(&p2ps_profiles[i], v, "nvidia_uvm");
		if (o)
			return o;
	}
	return NULL;
}

/* The UVM sets in order of their first major, each once. */
static unsigned int uvm_sets(const struct p2ps_object **out, unsigned int max)
{
	unsigned int n = 0, major, i;

	for (major = MAJOR_MIN; major <= MAJOR_MAX; major++) {
		const struct p2ps_object *s = uvm_for_major(major);

		if (!s)
			continue;
		for (i = 0; i < n && out[i] != s; i++)
			;
		if (i == n && n < max)
			out[n++] = s;
	}
	return n;
}

static void registry(const struct p2ps_profile *p, const char *sep, const char *fmt,
		     char *buf, size_t len)
{
	const struct p2ps_registry_default *r;
	size_t n = 0;

	buf[0] = '\0';
	for (r = p->registry; r->key && n < len; r++) {
		n += snprintf(buf + n, len - n, "%s", n ? sep : "");
		n += snprintf(buf + n, len - n, fmt, r->key, r->value);
	}
}

static void lines(void)
{
	const struct p2ps_object *sets[8];
	unsigned int i, n;
	char m[128], reg[256];

	for (i = 0; i < p2ps_nr_profiles; i++) {
		const struct p2ps_profile *p = &p2ps_profiles[i];

		majors(p->majors, m, sizeof(m));
		registry(p, " ", "%s=0x%x", reg, sizeof(reg));
		printf("profile %s %s %u\n", p->name, m, p2ps_profile_nvidia(p)->nr_hooks);
		printf("registry %s %s\n", p->name, reg);
	}
	n = uvm_sets(sets, 8);
	for (i = 0; i < n; i++) {
		majors(sets[i]->majors, m, sizeof(m));
		printf("uvm %s %s %u\n", sets[i]->name, m, sets[i]->nr_hooks);
	}
}

/* One row per driver major range that shares profile and UVM set, newest first. */
static void table(void)
{
	int i;

	puts("| driver | profile | hooks | registry defaults | UVM peer set (hooks) |");
	puts("| --- | --- | --- | --- | --- |");
	for (i = (int)p2ps_nr_profiles - 1; i >= 0; i--) {
		const struct p2ps_profile *p = &p2ps_profiles[i];
		const unsigned int *m = p->majors, *e;
		char reg[256];

		registry(p, ", ", "`%s=0x%x`", reg, sizeof(reg));
		for (e = m; *e; e++)
			;
		/* Newest major first; group neighbours with the same UVM set. */
		while (e > m) {
			const unsigned int *s = e - 1;
			const struct p2ps_object *u = uvm_for_major(*s);
			const unsigned int *k;

			while (s > m && uvm_for_major(s[-1]) == u)
				s--;
			printf("| ");
			for (k = e - 1; k >= s; k--)
				printf("%u.x%s", *k, k > s ? ", " : "");
			printf(" | %s | %u | %s | ", p->name,
			       p2ps_profile_nvidia(p)->nr_hooks, reg);
			if (u)
				printf("%s (%u) |\n", u->name, u->nr_hooks);
			else
				printf("none |\n");
			e = s;
		}
	}
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--table"))
		table();
	else if (argc == 1)
		lines();
	else {
		fprintf(stderr, "usage: facts [--table]\n");
		return 2;
	}
	return 0;
}
