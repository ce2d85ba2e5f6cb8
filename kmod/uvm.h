/* SPDX-License-Identifier: GPL-2.0 */
/* uvm.c: gen A's UVM external mapping fix (565-575). */
#ifndef _P2PS_UVM_H
#define _P2PS_UVM_H

void p2ps_uvm_reset(void);

#endif /* _P2PS_UVM_H */
