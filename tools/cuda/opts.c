// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "opts.h"

int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v, mult = 1;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end) {
		int shift = 0, dec = 0;

		switch (toupper((unsigned char)*end)) {
		case 'K': shift = 10; dec = 3; break;
		case 'M': shift = 20; dec = 6; break;
		case 'G': shift = 30; dec = 9; break;
		case 'T': shift = 40; dec = 12; break;
		case 'B': if (end[1]) return -1; shift = 0; break;
		default: return -1;
		}
		end++;
		if (!strcasecmp(end, "") || !strcasecmp(end, "i") || !strcasecmp(end, "iB")) {
			mult = 1ULL << shift;
		} else if (!strcasecmp(end, "B") && shift) {
			mult = 1;
			while (dec--)
				mult *= 10;
		} else if (shift || *end) {
			return -1;
		}
	}
	if (v == 0 || v > UINT64_MAX / mult)
		return -1;
	*out = v * mult;
	return 0;
}

int parse_pairs(const char *s, int sel[P2P_MAX_GPUS][P2P_MAX_GPUS], char *msg, size_t msglen)
{
	const char *p = s;

	memset(sel, 0, sizeof(int) * P2P_MAX_GPUS * P2P_MAX_GPUS);
	if (!s || !strcmp(s, "all")) {
		for (int i = 0; i < P2P_MAX_GPUS; i++)
			for (int j = 0; j < P2P_MAX_GPUS; j++)
				sel[i][j] = i != j;
		return 0;
	}
	while (*p) {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*p))
			goto bad;
		a = strtol(p, &end, 10);
		if (*end != '-' || !isdigit((unsigned char)end[1]))
			goto bad;
		b = strtol(end + 1, &end, 10);
		if (a < 0 || b < 0 || a >= P2P_MAX_GPUS || b >= P2P_MAX_GPUS || a == b) {
			snprintf(msg, msglen, "bad pair %ld-%ld in '%s' (two distinct GPUs, 0-%d)",
				 a, b, s, P2P_MAX_GPUS - 1);
			return -1;
		}
		sel[a][b] = sel[b][a] = 1;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	return 0;
bad:
	snprintf(msg, msglen, "bad --pairs list '%s' (expected e.g. 0-1,0-2)", s);
	return -1;
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
