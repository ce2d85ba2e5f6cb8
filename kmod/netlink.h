/* SPDX-License-Identifier: GPL-2.0 */
/* netlink.c: the p2p_shim generic netlink family, and the sink its events take. */
#ifndef _P2PS_NETLINK_H
#define _P2PS_NETLINK_H

#include "events.h"

int p2ps_netlink_init(void);
void p2ps_netlink_exit(void);
extern const struct p2ps_sink p2ps_netlink_sink;

#endif /* _P2PS_NETLINK_H */
