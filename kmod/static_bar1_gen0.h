/* SPDX-License-Identifier: GPL-2.0 */
/* static_bar1_gen0.c: gen 0's static BAR1 (550, 560) and its view. */
#ifndef _P2PS_STATIC_BAR1_GEN0_H
#define _P2PS_STATIC_BAR1_GEN0_H

#include <linux/types.h>

bool p2ps_gen0_view_needed(void);
bool p2ps_gen0_view_enter(void);
void p2ps_gen0_view_exit(void);

#endif /* _P2PS_STATIC_BAR1_GEN0_H */
