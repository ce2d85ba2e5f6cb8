/* SPDX-License-Identifier: GPL-2.0 */
/* static_bar1.c: static BAR1 per GPU (565+), and where each GPU sits for it. */
#ifndef _P2PS_STATIC_BAR1_H
#define _P2PS_STATIC_BAR1_H

#include <p2p-shim/uapi.h>

#include "nv.h"

struct p2ps_caps_set;

/* A GPU's record, for the status dump. */
struct p2ps_gpu_report {
	u32 instance, state;
	bool p2p_usable;
	u64 bar1_addr, bar1_size, console, mailbox, client_fb, offset;
	char reason[P2PS_REASON_LEN];
};

void p2ps_sb1_torn_down(struct OBJGPU *gpu);
void p2ps_sb1_gather(u32 mask, struct p2ps_caps_set *set);
bool p2ps_sb1_capable_begin(struct OBJGPU *gpu);
bool p2ps_sb1_report(unsigned int instance, struct p2ps_gpu_report *r);

#endif /* _P2PS_STATIC_BAR1_H */
