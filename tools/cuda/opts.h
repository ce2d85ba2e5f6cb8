/* SPDX-License-Identifier: GPL-2.0 */
#ifndef P2P_CUDA_OPTS_H
#define P2P_CUDA_OPTS_H

#include <stddef.h>
#include <stdint.h>

#define P2P_MAX_GPUS 16

/*
 * "160000000", "64M", "64MiB", "1G", "4k" (K/M/G/T are binary multiples,
 * an optional "i"/"iB"/"B" suffix is accepted; "MB" etc. are decimal).
 * 0 on success, -1 on junk, zero or overflow.
 */
int parse_size(const char *s, uint64_t *out);

/* "0-1,2-3": unordered pairs of distinct GPUs; "all" or NULL selects all.
 * Fills sel[i][j] = sel[j][i] = 1. -1 (with msg) on a bad list. */
int parse_pairs(const char *s, int sel[P2P_MAX_GPUS][P2P_MAX_GPUS], char *msg, size_t msglen);

/* Seconds on CLOCK_MONOTONIC. */
double now_s(void);

#endif
