/* SPDX-License-Identifier: GPL-2.0 */
/* bar1_map.c: PCIE_BAR1 routing and the BAR1 mapping wrappers. */
#ifndef _P2PS_BAR1_MAP_H
#define _P2PS_BAR1_MAP_H

#include "hook.h"
#include "nv.h"

p2ps_bind_fn p2ps_bar1_bind;
/* After the hooks are gone: waits until no wrapper runs. */
void p2ps_bar1_unbind(void);
/* The driver's own BAR1 DMA info (kbusGetBar1P2PDmaInfo_GH100). */
NV_STATUS p2ps_bar1_dma_info(struct OBJGPU *src, struct OBJGPU *peer,
			     struct KernelBus *peer_bus, NvU64 *base, NvU64 *size);

#endif /* _P2PS_BAR1_MAP_H */
