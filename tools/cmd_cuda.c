// SPDX-License-Identifier: GPL-2.0
/* p2pctl verify, p2pctl bench: tools/cuda/, with p2pctl's output streams. */
#include "p2pctl.h"
#include "cuda/cuda_cmds.h"

int cmd_verify(int argc, char **argv)
{
	return verify_main(argc, argv, p2pctl_out, p2pctl_err);
}

int cmd_bench(int argc, char **argv)
{
	return bench_main(argc, argv, p2pctl_out, p2pctl_err);
}
