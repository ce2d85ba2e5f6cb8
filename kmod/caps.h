/* SPDX-License-Identifier: GPL-2.0 */
/* caps.c: the caps guard. */
#ifndef _P2PS_CAPS_H
#define _P2PS_CAPS_H

#include <linux/types.h>

/* The residual state: every forced pair gets the stock answer. */
void p2ps_caps_guard_only(bool on);

#endif /* _P2PS_CAPS_H */
