/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the in-VM test programs: a seeded PRNG and bounded failure reports. */
#ifndef P2PS_TESTUTIL_H
#define P2PS_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>

/* xorshift64*: the same seed gives the same run; seed it non-zero. */
static uint64_t rng;

static inline uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

static inline uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* Count every failure, print the first 20. */
static unsigned long failures;

#define FAILF(...)							\
	do {								\
		if (failures++ < 20)					\
			fprintf(stderr, "FAIL " __VA_ARGS__);		\
	} while (0)

#endif /* P2PS_TESTUTIL_H */
