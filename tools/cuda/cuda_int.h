/* SPDX-License-Identifier: GPL-2.0 */
/* Internal entry points of tools/cuda, for the unit tests. */
#ifndef P2P_CUDA_INT_H
#define P2P_CUDA_INT_H

#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

#include "pattern.h"
#include "rig.h"

int bench_main(int argc, char **argv, FILE *out, FILE *err);
int verify_main(int argc, char **argv, FILE *out, FILE *err);
/* bench --nccl (bench_main hands over when --nccl is given) */
int bench_nccl_main(int argc, char **argv, FILE *out, FILE *err);
/* 1 (default): after an NCCL hang bench --nccl reports it and _exit()s. */
extern int bench_nccl_exit_on_hang;
/* 1 (default): after a hang verify reports it and _exit()s; the tests set 0. */
extern int verify_exit_on_hang;

#endif
