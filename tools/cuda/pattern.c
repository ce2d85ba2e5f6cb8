// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl: the data pattern verify and bench write, and the byte comparison
 * that finds where a copy went wrong.
 */
#include <string.h>

#include "pattern.h"

void pattern_fill(uint8_t *buf, size_t n, uint64_t seed)
{
	size_t w = n / 8;

	for (size_t k = 0; k < w; k++) {
		uint64_t v = splitmix64(seed + k);

		for (int b = 0; b < 8; b++)
			buf[8 * k + b] = (uint8_t)(v >> (8 * b));
	}
	if (n % 8) {
		uint64_t v = splitmix64(seed + w);

		for (size_t b = 0; b < n % 8; b++)
			buf[8 * w + b] = (uint8_t)(v >> (8 * b));
	}
}

int pattern_compare(const uint8_t *got, const uint8_t *want, size_t n, uint64_t *offset,
		    uint8_t *expected, uint8_t *actual, uint64_t *nbad)
{
	const size_t blk = 4096;
	int found = 0;

	*nbad = 0;
	for (size_t o = 0; o < n; o += blk) {
		size_t l = n - o < blk ? n - o : blk;

		if (!memcmp(got + o, want + o, l))
			continue;
		for (size_t k = o; k < o + l; k++) {
			if (got[k] == want[k])
				continue;
			if (!found) {
				found = 1;
				*offset = k;
				*expected = want[k];
				*actual = got[k];
			}
			(*nbad)++;
		}
	}
	return found;
}
