// SPDX-License-Identifier: GPL-2.0
/*
 * The user's registry keys, as the driver reads them for one GPU.
 *
 * The driver takes keys from two module options, both shown in
 * /proc/driver/nvidia/params (citations: 580.142, the same in 550-595):
 *
 *  - RegistryDwords="Key=Value;...": rm_parse_option_string (osapi.c)
 *    writes each into the global registry;
 *  - RegistryDwordsPerDevice="pci=BDF;Key=Value;...;pci=BDF;...":
 *    nv_parse_per_device_option_string (os-registry.c) writes the keys
 *    after a pci= entry into that GPU's own registry; keys after a pci=
 *    that names no GPU, or before any pci=, are skipped.
 *
 * Both first remove every space, split at ";", and skip a token that is not
 * exactly "name=value" with both non-empty.  Values are strtoul base 0.  A
 * name written again updates the entry (RmWriteRegistryDword), so the last
 * one wins.  A read (RmReadRegistryDword, regFindRegistryEntry in
 * registry.c) looks in the GPU's registry first, then the global one, and
 * compares names without case.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "doctor.h"

/* @in without spaces and without the quotes /proc's params put around it. */
static char *unspaced(const char *in)
{
	char *out = malloc(strlen(in) + 1), *o = out;

	if (!out)
		return NULL;
	for (; *in; in++)
		if (!isspace((unsigned char)*in) && *in != '"')
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
 * pci_str_to_bdf (os-registry.c) does: "bus:slot", "domain:bus:slot" or
 * "domain:bus:slot.func", hexadecimal; function 0 where not given.
 */
static bool names_gpu(const char *v, const char *bdf)
{
	unsigned int gd, gb, gs, gf, n[3], func = 0, i = 0;
	const char *dot = strchr(v, '.');
	char *end;

	if (sscanf(bdf, "%x:%x:%x.%x", &gd, &gb, &gs, &gf) != 4)
		return false;
	if (dot) {
		if (dot[1] < '0' || dot[1] > '7' || dot[2])
			return false;
		func = dot[1] - '0';
	}
	for (;;) {
		if (!isxdigit((unsigned char)*v))
			return false;
		n[i++] = strtoul(v, &end, 16);
		v = end;
		if (i == 3 || *v != ':')
			break;
		v++;
	}
	if (i < 2 || (*v && v != dot))
		return false;
	if (i == 2)
		return gd == 0 && gb == n[0] && gs == n[1] && gf == func;
	return gd == n[0] && gb == n[1] && gs == n[2] && gf == func;
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
			v = (long)(unsigned int)strtoul(value, NULL, 0);
	}
	free(buf);
	return v;
}

long p2ps_dr_user_key(const char *dwords, const char *per_device, const char *bdf,
		      const char *key, const char **option)
{
	long v = bdf ? lookup(per_device, bdf, key) : -1;

	if (option)
		*option = "NVreg_RegistryDwordsPerDevice";
	if (v >= 0)
		return v;
	if (option)
		*option = "NVreg_RegistryDwords";
	return lookup(dwords, NULL, key);
}
