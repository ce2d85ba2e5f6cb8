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

#endif /* _P2PS_GPUS_H */
