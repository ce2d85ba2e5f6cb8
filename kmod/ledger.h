/* SPDX-License-Identifier: GPL-2.0 */
/* ledger.c: the BAR1 peer mappings created through the hooks. */
#ifndef _P2PS_LEDGER_H
#define _P2PS_LEDGER_H

#include <linux/types.h>

#include "nv.h"

struct p2ps_mapping_event;

void p2ps_ledger_pair_get(struct OBJGPU *g0, struct KernelBus *b0,
			  struct OBJGPU *g1, struct KernelBus *b1);
bool p2ps_ledger_bar1_base(struct OBJGPU *mapper, struct OBJGPU *owner, u64 *base);
void p2ps_ledger_pair_put(struct OBJGPU *g0, struct OBJGPU *g1);
void p2ps_ledger_native_get(struct OBJGPU *g0, struct KernelBus *b0,
			    struct OBJGPU *g1, struct KernelBus *b1);
void p2ps_ledger_native_put(struct OBJGPU *g0, struct OBJGPU *g1);
void p2ps_ledger_native_hold(struct OBJGPU *g0, struct OBJGPU *g1);
void p2ps_ledger_native_reset(void);
void p2ps_ledger_dma_get(struct CLI_DMA_MAPPING_INFO *info, struct OBJGPU *gpu,
			 struct OBJGPU *peer);
void p2ps_ledger_dma_put(struct CLI_DMA_MAPPING_INFO *info);
void p2ps_ledger_static_get(struct OBJGPU *gpu);
void p2ps_ledger_static_put(struct OBJGPU *gpu);
bool p2ps_ledger_has_static(struct OBJGPU *gpu);
unsigned int p2ps_ledger_live(void);
void p2ps_ledger_describe(char *buf, size_t len);
void p2ps_ledger_drop_all(void);
bool p2ps_ledger_entry(unsigned int index, struct p2ps_mapping_event *m);

#endif /* _P2PS_LEDGER_H */
