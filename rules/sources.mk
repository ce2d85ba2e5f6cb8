# SPDX-License-Identifier: GPL-2.0
# The rules compiled unchanged into the module (kmod/Kbuild) and into
# libp2pshim (lib/Makefile; the unit tests through lib/sources.mk): the one
# list of them.
RULES_SRC_NAMES := profile.c resolve.c sb1rule.c readrule.c gpurule.c bdf.c
