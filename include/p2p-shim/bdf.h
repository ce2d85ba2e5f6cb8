/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A GPU's PCI address as the user writes it (registry_gpus=, `p2pctl config
 * --gpus`): one parser, rules/bdf.c, compiled into the module and
 * libp2pshim, so that what p2pctl accepts the module accepts.
 */
#ifndef _P2P_SHIM_BDF_H
#define _P2P_SHIM_BDF_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stddef.h>
#include <stdint.h>
#endif

/*
 * Parse the @len characters at @s, "DDDD:BB:DD.0" or "BB:DD.0" (hex; a
 * domain of up to 8 digits, as VMD's 10000 and above; function 0, the
 * GPU), into @dbd as the driver's attach argument has it: domain 63:32,
 * bus 15:8, device 7:0.  0, or -1 for anything else.
 */
int p2ps_parse_bdf(const char *s, size_t len, uint64_t *dbd);

#endif
