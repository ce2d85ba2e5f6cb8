// SPDX-License-Identifier: GPL-2.0
/*
 * The second process of verify's ipc test in the unit tests: what p2pctl
 * is in real use ("p2pctl verify --ipc-child SPEC"), and verify or bench
 * run in a process of their own by the tests that may hang. The tests point
 * $P2PCTL_SELF here (tests/unit/obj/cuda_verify_child).
 */
#include <stdio.h>
#include <string.h>

#include "cuda_int.h"

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "bench"))
		return bench_main(argc - 1, argv + 1, stdout, stderr);	/* bench --nccl's hang tests */
	if (argc < 2 || strcmp(argv[1], "verify"))
		return 2;
	return verify_main(argc - 1, argv + 1, stdout, stderr);
}
