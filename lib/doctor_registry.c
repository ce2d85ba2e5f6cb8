// SPDX-License-Identifier: GPL-2.0
/*
 * The user's registry keys, as the driver reads them for one GPU.
 *
 * The driver takes keys from two module options, both shown in
 * /proc/driver/nvidia/params (citations: 580.142; the parsing is the same
 * in 550-595, the moment of the per-device one is not: see
 * p2ps_dr_per_device_bdf()):
 *
 *  - RegistryDwords="Key=Value;...": rm_parse_option_string (osapi.c)
 *    writes each into the global registry;
 *  - RegistryDwordsPerDevice="pci=BDF;Key=Value;...;pci=BDF;...":
 *    nv_parse_per_device_option_string (os-registry.c) writes the keys
 *    after a pci= entry into that GPU's own registry; keys after a pci=
 *    that names no GPU, or before any pci=, are skipped.
 *
 * Both first remove every space, split at ";", and skip a token that is not
 * exactly "name=value" with both non-empty.  Values are simple_strtoul()
 * base 0, kept to 32 bits.  A
 * name written again updates the entry (RmWriteRegistryDword), so the last
 * one wins.  A read (RmReadRegistryDword, regFindRegistryEntry in
 * registry.c) looks in the GPU's registry first, then the global one, and
 * compares names without case.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "doctor.h"

/*
 * The kernel's simple_strtoul() (lib/vsprintf.c), which the driver uses for
 * values (base 0) and pci= fields (base 16): no sign, "0x" taken for base
 * 16, the digits read until one is not, wrapping on overflow.  The driver
 * keeps the low 32 bits.
 */
static unsigned long long kernel_strtoul(const char *s, const char **end, unsigned int base)
{
	unsigned long long v = 0;

	if (!base)
		base = s[0] != '0' ? 10 : tolower((unsigned char)s[1]) == 'x' &&
		       isxdigit((unsigned char)s[2]) ? 16 : 8;
	if (base == 16 && s[0] == '0' && tolower((unsigned char)s[1]) == 'x')
		s += 2;
	for (;; s++) {
		unsigned int d = isdigit((unsigned char)*s) ? *s - '0' :
				 isxdigit((unsigned char)*s) ? tolower((unsigned char)*s) - 'a' + 10 : 16;

		if (d >= base)
			break;
		v = v * base + d;
	}
	if (end)
		*end = s;
	return v;
}

/*
 * @in as the driver sees it: without the quotes /proc's params put around
 * it (nv-procfs.c), and without spaces (rm_remove_spaces).
 */
static char *unspaced(const char *in)
{
	size_t n = strlen(in);
	char *out = malloc(n + 1), *o = out;

	if (!out)
		return NULL;
	if (n >= 2 && in[0] == '"' && in[n - 1] == '"') {
		in++;
		n -= 2;
	}
	for (; n--; in++)
		if (!isspace((unsigned char)*in))
			*o++ = *in;
	*o = '\0';
	return out;
}

/*
 * The next "name=value" token of *@s (advanced past it), split in place;
 * false at the end.  *@name is NULL for a token the driver skips.
 */
static bool next_pair(char **s, char **name, char **value)
{
	char *tok = strsep(s, ";"), *eq;

	if (!tok)
		return false;
	*name = NULL;
	eq = strchr(tok, '=');
	if (!eq || eq == tok || !eq[1] || strchr(eq + 1, '='))
		return true;
	*eq = '\0';
	*name = tok;
	*value = eq + 1;
	return true;
}

/*
 * Whether the pci= value @v names the GPU at @bdf ("DDDD:BB:DD.F"), read as
 * pci_str_to_bdf (os-registry.c) reads it: "bus:slot", "domain:bus:slot"
 * or either with ".func" (one digit 0-7; 0 where not given), hexadecimal,
 * nothing checked after the slot; find_pci() compares bus and slot as
 * 8-bit numbers.
 */
static bool names_gpu(const char *v, const char *bdf)
{
	unsigned int gd, gb, gs, gf, func = 0;
	unsigned long long dom, bus, slot;
	const char *dot = strchr(v, '.'), *p, *s;
	char head[64];

	if (sscanf(bdf, "%x:%x:%x.%x", &gd, &gb, &gs, &gf) != 4)
		return false;
	if (dot) {
		if (dot[1] < '0' || dot[1] > '7' || dot[2])
			return false;
		func = dot[1] - '0';
	}
	snprintf(head, sizeof(head), "%.*s", dot ? (int)(dot - v) : (int)strlen(v), v);
	dom = kernel_strtoul(head, &p, 16);
	if (*p != ':' || !p[1])
		return false;
	bus = kernel_strtoul(p + 1, &p, 16);
	if (*p) {
		s = p + 1;
		if (*p != ':' || !*s)
			return false;
		slot = kernel_strtoul(s, &p, 16);
		if (!slot && p == s)
			return false;
	} else {
		slot = bus;
		bus = dom;
		dom = 0;
	}
	return gd == (uint32_t)dom && gb == (uint8_t)bus && gs == (uint8_t)slot && gf == func;
}

/* The last value of @key in @opt, or -1; with @bdf, only the keys after a pci= naming it. */
static long lookup(const char *opt, const char *bdf, const char *key)
{
	char *buf = unspaced(opt), *s = buf, *name, *value;
	bool mine = !bdf;
	long v = -1;

	if (!buf)
		return -1;
	while (next_pair(&s, &name, &value)) {
		if (!name)
			continue;
		if (bdf && !strcmp(name, "pci"))
			mine = names_gpu(value, bdf);
		else if (mine && !strcasecmp(name, key))
			v = (uint32_t)kernel_strtoul(value, NULL, 0);
	}
	free(buf);
	return v;
}

long p2ps_dr_user_key(const char *dwords, const char *per_device, const char *bdf,
		      const char *key, const char **option)
{
	long v = bdf ? lookup(per_device, bdf, key) : -1, g = lookup(dwords, NULL, key);

	if (option)
		*option = v < 0 ? "NVreg_RegistryDwords" : g < 0 ? "NVreg_RegistryDwordsPerDevice" :
			  "NVreg_RegistryDwordsPerDevice and NVreg_RegistryDwords";
	return v >= 0 ? v : g;
}

/*
 * The address under which @g's own RegistryDwordsPerDevice entries reach
 * it, or NULL where they do not.  550-590 parse the option in each GPU's
 * probe after adding that GPU to the list pci= is looked up in (580.142
 * nv-pci.c L1604, L1620).  595 parses it before (595.45.04 nv-pci.c L2092,
 * L2157): a GPU gets its entries only in a later GPU's probe, so the last
 * one probed (the highest address: probes run in bus order) never does,
 * and with GpuInitOnProbe=1, which initialises each GPU in its own probe,
 * no GPU has them at its first initialisation.
 */
const char *p2ps_dr_per_device_bdf(const struct p2ps_dr_rules *r, const struct p2ps_gpu *g)
{
	if (!g)
		return NULL;
	if (r->per_device_late && (r->init_on_probe || !strcmp(g->bdf, r->last_bdf)))
		return NULL;
	return g->bdf;
}
