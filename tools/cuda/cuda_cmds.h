/* SPDX-License-Identifier: GPL-2.0 */
/*
 * p2pctl subcommands that drive the GPUs through the CUDA driver API
 * (loaded at run time; see docs/p2pctl-cuda.md). argv[0] is the subcommand
 * name. Exit codes: 0 OK, 1 failure, 2 usage, 3 no driver / no (or too few)
 * GPUs.
 */
#ifndef P2P_CUDA_CMDS_H
#define P2P_CUDA_CMDS_H

#include <stdio.h>

/* argv[0] is the command's name; output goes to @out, messages to @err. */
int verify_main(int argc, char **argv, FILE *out, FILE *err);
int bench_main(int argc, char **argv, FILE *out, FILE *err);

#endif
