// SPDX-License-Identifier: GPL-2.0
/*
 * The second process of verify's ipc test in the unit tests: what p2pctl
 * is in real use ("p2pctl verify --ipc-child SPEC"). The tests point
 * $P2PCTL_SELF here (tests/unit/obj/cuda_verify_child). "bench ..." runs
 * bench, for the tests that need it in a process of its own (a hang, a
 * signal).
 */
#include <stdio.h>
#include <string.h>

#include "cuda_int.h"

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "bench"))
		return bench_main(argc - 1, argv + 1, stdout, stderr);
	if (argc < 2 || strcmp(argv[1], "verify"))
		return 2;
	return verify_main(argc - 1, argv + 1, stdout, stderr);
}
