/* SPDX-License-Identifier: GPL-2.0 */
/* netlink.c: the p2p_shim generic netlink family and its events. */
#ifndef _P2PS_NETLINK_H
#define _P2PS_NETLINK_H

#include <linux/types.h>

#include <p2p-shim/uapi.h>

struct p2ps_status_snapshot;

int p2ps_netlink_init(void);
void p2ps_netlink_exit(void);
void p2ps_event(enum p2ps_event ev, const struct p2ps_status_snapshot *snap, const char *reason);
struct p2ps_mapping_event {
	u32 gpu0, gpu1, count;
	enum p2ps_conn_type conn;
	u64 dma_base, dma_size;
};
void p2ps_event_mapping(enum p2ps_event ev, const struct p2ps_mapping_event *m);

#endif /* _P2PS_NETLINK_H */
