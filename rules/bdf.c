// SPDX-License-Identifier: GPL-2.0
/*
 * The PCI address syntax of include/p2p-shim/bdf.h: no libc, no kernel-only
 * calls (sscanf differs between the two: libc's %x takes "0x", signs and
 * spaces).
 */
#include <p2p-shim/bdf.h>

/* Up to @max hex digits at *@p, ending before @end, into @v; advances *@p. */
static int hex(const char **p, const char *end, unsigned int max, uint64_t *v)
{
	unsigned int n = 0;
	int d;

	*v = 0;
	for (; *p < end && n < max; (*p)++, n++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		*v = *v << 4 | d;
	}
	return n ? 0 : -1;
}

static int expect(const char **p, const char *end, char c)
{
	if (*p == end || **p != c)
		return -1;
	(*p)++;
	return 0;
}

int p2ps_parse_bdf(const char *s, size_t len, uint64_t *dbd)
{
	const char *p = s, *end = s + len;
	uint64_t dom = 0, bus, dev, fn;
	unsigned int colons = 0;
	size_t i;

	for (i = 0; i < len; i++)
		colons += s[i] == ':';
	if (colons == 2 && (hex(&p, end, 8, &dom) || expect(&p, end, ':')))
		return -1;
	if (colons < 1 || colons > 2)
		return -1;
	if (hex(&p, end, 2, &bus) || expect(&p, end, ':') || hex(&p, end, 2, &dev) ||
	    expect(&p, end, '.') || hex(&p, end, 1, &fn) || p != end)
		return -1;
	if (dev > 0x1f || fn != 0)
		return -1;
	*dbd = dom << 32 | bus << 8 | dev;
	return 0;
}
