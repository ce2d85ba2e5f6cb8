/* SPDX-License-Identifier: GPL-2.0 */
/* registry.c: registry defaults and registry_gpus=. */
#ifndef _P2PS_REGISTRY_H
#define _P2PS_REGISTRY_H

#include <linux/types.h>

/* Whether the GPU at @dbd (U64_MAX: unknown) is one registry_gpus= names. */
bool p2ps_registry_scoped(u64 dbd);

#endif /* _P2PS_REGISTRY_H */
