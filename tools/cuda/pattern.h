/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The data pattern of verify and bench: what a copy must deliver, different
 * for every seed, and where a delivered copy differs from it.
 */
#ifndef P2P_CUDA_PATTERN_H
#define P2P_CUDA_PATTERN_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Byte k of the pattern for seed: little-endian bytes of
 * splitmix64(seed + k / 8). */
void pattern_fill(uint8_t *buf, size_t n, uint64_t seed);

/*
 * Compare got[0..n) with want[0..n). 0 if equal; else 1 with the first
 * differing offset, its expected and actual bytes, and how many bytes differ.
 */
int pattern_compare(const uint8_t *got, const uint8_t *want, size_t n, uint64_t *offset,
		    uint8_t *expected, uint8_t *actual, uint64_t *nbad);

#endif
