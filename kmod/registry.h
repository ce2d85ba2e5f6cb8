/* SPDX-License-Identifier: GPL-2.0 */
/* registry.c: registry defaults and registry_gpus=. */
#ifndef _P2PS_REGISTRY_H
#define _P2PS_REGISTRY_H

#include "hook.h"

p2ps_bind_fn p2ps_registry_bind;
/* Whether the GPU at @dbd (U64_MAX: unknown) is one registry_gpus= names. */
bool p2ps_registry_scoped(u64 dbd);

#endif /* _P2PS_REGISTRY_H */
