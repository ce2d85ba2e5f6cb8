// SPDX-License-Identifier: GPL-2.0
/*
 * Standalone driver for the p2pctl verify/bench subcommands (tools/cuda),
 * linking only those sources, libc, libdl, libm and json-c: a binary that can
 * be carried to a GPU machine. "p2pbench ptx" prints the embedded PTX.
 */
#include <stdio.h>
#include <string.h>

#include "../tools/cuda/cuda_cmds.h"
#include "../tools/cuda/kernels.h"

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "verify"))
		return verify_main(argc - 1, argv + 1, stdout, stderr);
	if (argc >= 2 && !strcmp(argv[1], "bench"))
		return bench_main(argc - 1, argv + 1, stdout, stderr);
	if (argc >= 2 && !strcmp(argv[1], "ptx")) {
		fputs(kernels_ptx(), stdout);
		return 0;
	}
	fprintf(stderr, "usage: %s verify|bench [options] (--help for each), or %s ptx\n",
		argv[0], argv[0]);
	return 2;
}
