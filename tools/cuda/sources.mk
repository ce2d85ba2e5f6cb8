# SPDX-License-Identifier: GPL-2.0
#
# The sources of p2pctl's CUDA commands (verify, bench), the one list that
# tools/cuda/cuda.mk and the unit tests (tests/unit/Makefile, cuda.mk) build
# from. verify is verify_args.c (command line), verify.c (the run) plus a file per test
# family (verify_<family>.c), verify_common.c, verify_child.c (its second
# processes) and verify_report.c; bench is bench.c and ncclbench.c;
# pattern.c is the data both check, deadline.c the one rule of their waits.
CUDA_SRC_NAMES := cu.c kernels.c stats.c opts.c report.c rig.c engine.c pattern.c \
	linkrate.c deadline.c ncclx.c bench.c ncclbench.c \
	verify.c verify_args.c verify_common.c verify_report.c verify_path.c verify_copy.c verify_vram.c verify_flags.c \
	verify_graph.c verify_ipc.c verify_vmm.c verify_car.c verify_procs.c verify_child.c verify_nccl.c verify_nccl_procs.c \
	verify_um.c verify_conc.c
