/* SPDX-License-Identifier: GPL-2.0 */
/* Internal entry points of tools/cuda, for the unit tests. */
#ifndef P2P_CUDA_INT_H
#define P2P_CUDA_INT_H

#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

#include "rig.h"

int bench_main(int argc, char **argv, FILE *out, FILE *err);
int verify_main(int argc, char **argv, FILE *out, FILE *err);
/* bench --nccl (bench_main hands over when --nccl is given) */
int bench_nccl_main(int argc, char **argv, FILE *out, FILE *err);
/* 1 (default): after an NCCL hang bench --nccl reports it and _exit()s. */
extern int bench_nccl_exit_on_hang;
/* 1 (default): after a hang verify reports it and _exit()s; the tests set 0. */
extern int verify_exit_on_hang;

json_object *cuda_devices_json(const struct rig *r);
json_object *cuda_peer_json(const struct rig *r);

/* Byte k of the verify pattern for seed: little-endian bytes of
 * splitmix64(seed + k / 8). */
void verify_pattern(uint8_t *buf, size_t n, uint64_t seed);

/*
 * Compare got[0..n) with want[0..n). 0 if equal; else 1 with the first
 * differing offset, its expected and actual bytes, and how many bytes differ.
 */
int verify_compare(const uint8_t *got, const uint8_t *want, size_t n, uint64_t *offset,
		   uint8_t *expected, uint8_t *actual, uint64_t *nbad);

#endif
