# SPDX-License-Identifier: GPL-2.0
# p2pctl's own sources (main.c aside: the unit tests bring their own main),
# the one list tools/Makefile and the unit tests (tests/unit/Makefile) build
# from; its CUDA commands are in cuda/sources.mk.
P2PCTL_SRC_NAMES := p2pctl.c common.c cmd_enable.c cmd_disable.c cmd_status.c cmd_monitor.c \
	cmd_doctor.c cmd_check.c cmd_config.c cmd_version.c cmd_report.c capture.c redact.c cmd_cuda.c
