# SPDX-License-Identifier: GPL-2.0
# libp2pshim's sources, the one list lib/Makefile and the unit tests
# (tests/unit/Makefile) build from: its own files, then the rules shared
# with the module (../rules/sources.mk).
LIB_SRC_NAMES := core.c netlink.c util.c files.c run.c check.c \
	doctor.c doctor_kernel.c doctor_driver.c doctor_gpus.c doctor_iommu.c doctor_static_bar1.c \
	doctor_registry.c doctor_topo.c doctor_module.c doctor_platform.c doctor_host.c \
	doctor_software.c doctor_vllm.c doctor_read.c doctor_util.c doctor_initramfs.c findings.c
# Rules of ../rules/ built into the library only: the doctor's static-BAR1
# predictions, which the module never makes, and the window rules, until
# the module takes them (docs/windows.md: the window hooks are not written yet).
LIB_RULES_SRC_NAMES := winrule.c sb1predict.c
