/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sizes and roundings the static-BAR1 rules are written in: for
 * rules/sb1rule.c (the module's and the doctor's) and rules/sb1predict.c
 * (the doctor's predictions) only.
 */
#ifndef _P2P_SHIM_SB1UNITS_H
#define _P2P_SHIM_SB1UNITS_H

#include <p2p-shim/uapi.h>

#define SZ2M		(2 * P2PS_MiB)
#define SZ512M		(512 * P2PS_MiB)
#define DOWN(x, a)	((x) / (a) * (a))
#define UP(x, a)	(((x) + (a) - 1) / (a) * (a))
#define MB(x)		((unsigned long long)((x) / P2PS_MiB))
/* 512 bytes x channels: not fixed by the source */
#define USERD_MAX	(64 * P2PS_MiB)

#endif /* _P2P_SHIM_SB1UNITS_H */
