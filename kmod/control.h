/* SPDX-License-Identifier: GPL-2.0 */
/* control.c: /dev/p2p-shim. */
#ifndef _P2PS_CONTROL_H
#define _P2PS_CONTROL_H

int p2ps_control_init(void);
void p2ps_control_exit(void);

#endif /* _P2PS_CONTROL_H */
