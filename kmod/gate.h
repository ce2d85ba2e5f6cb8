/* SPDX-License-Identifier: GPL-2.0 */
/* gate.c: the in-flight gate (calls of ours under way; closed while a disable decides). */
#ifndef _P2PS_GATE_H
#define _P2PS_GATE_H

#include <linux/types.h>

/* Count a call in; returns false while the gate is closed.  Pair with p2ps_gate_exit(). */
bool p2ps_gate_enter(void);
void p2ps_gate_exit(void);
/* Inside the gate, before making a mapping: pair with p2ps_gate_made(). */
bool p2ps_gate_may_make(void);
void p2ps_gate_made(bool held);
/* A disable deciding (lifecycle.c). */
void p2ps_gate_close(void);
void p2ps_gate_reopen(void);
/* After the hooks are gone. */
void p2ps_gate_drain(void);

#endif /* _P2PS_GATE_H */
