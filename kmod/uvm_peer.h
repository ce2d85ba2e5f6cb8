/* SPDX-License-Identifier: GPL-2.0 */
/* uvm_peer.c: the UVM peer set (nvidia-uvm's own peer PTEs). */
#ifndef _P2PS_UVM_PEER_H
#define _P2PS_UVM_PEER_H

#include <linux/types.h>

#include "nv.h"

struct module;
struct p2ps_hook;

void p2ps_uvm_peer_start(struct module *nv, bool dry_run);
void p2ps_uvm_peer_stop(void);
void p2ps_uvm_peer_module(struct module *uvm, unsigned long action);
int p2ps_uvm_peer_for_each(int (*fn)(const struct p2ps_hook *h, void *arg), void *arg,
			   unsigned int skip);
void p2ps_uvm_peer_count(u32 *installed, u64 *hits);

#endif /* _P2PS_UVM_PEER_H */
