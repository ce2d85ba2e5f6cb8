/* SPDX-License-Identifier: GPL-2.0 */
/* gpus.c: what p2p-shim knows of each GPU, learnt from hooked calls. */
#ifndef _P2PS_GPUS_H
#define _P2PS_GPUS_H

#include <linux/types.h>

#include "nv.h"

void p2ps_gpus_reset(void);
bool p2ps_gpu_bind(struct OBJGPU *gpu);
bool p2ps_gpu_set_forced(struct OBJGPU *gpu, bool forced);
void p2ps_gpus_asked(u32 mask);
/* The GPUs this thread's last P2P caps query named (0: none), taken. */
u32 p2ps_gpus_take_asked(void);
bool p2ps_gpus_forced_in(u32 mask);
u32 p2ps_gpu_instance(struct OBJGPU *gpu);
u32 p2ps_gpus_stale(void);
u32 p2ps_gpus_forced(void);
/* The instance this thread is attaching, or U32_MAX. */
u32 p2ps_gpu_attaching(void);

/*
 * What the driver told of GPU @instance while attaching it: its PCI
 * address (nvDomainBusDeviceFunc: domain 63:32, bus 15:8, slot 7:0;
 * U64_MAX if unknown or not a sane one) and the user's own static BAR1
 * registry keys as it read them (registry.c records them).
 */
struct p2ps_gpu_facts {
	u64 dbd;
	bool user_static_bar1;	/* RMForceStaticBar1 is set */
	u64 aperture;		/* RMBar1ApertureSizeMB, in bytes; 0: not set */
};
void p2ps_gpu_facts(u32 instance, struct p2ps_gpu_facts *f);
u64 p2ps_gpu_dbd(u32 instance);
/* registry.c: the attaching GPU read RMForceStaticBar1; @gpu read RMBar1ApertureSizeMB. */
void p2ps_gpu_user_static_bar1(void);
void p2ps_gpu_user_aperture(struct OBJGPU *gpu, u32 mb);

#endif /* _P2PS_GPUS_H */
