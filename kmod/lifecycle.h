/* SPDX-License-Identifier: GPL-2.0 */
/* lifecycle.c: the state and its events, for the module and the control plane. */
#ifndef _P2PS_LIFECYCLE_H
#define _P2PS_LIFECYCLE_H

#include <linux/types.h>

#include <p2p-shim/uapi.h>

struct p2ps_hook;
struct p2ps_arm_error;

struct p2ps_status_snapshot {
	enum p2ps_state state;
	u32 flags;
	u32 stale_gpus;
	char driver_version[P2PS_NAME_LEN];
	char profile[P2PS_NAME_LEN];
};

/* main.c: load and rmmod. */
int p2ps_life_start(void);
void p2ps_life_stop(void);
void p2ps_life_rmmod(void);

/* control.c, netlink.c: enable, disable, status. */
int p2ps_life_enable(u32 flags, struct p2ps_arm_error *err);
int p2ps_life_disable(char *busy, size_t len);
int p2ps_snapshot(struct p2ps_status_snapshot *snap, u32 *hooks, u64 *hits);
/* Calls @fn for each hook under the state lock; stops on non-zero. */
int p2ps_for_each_hook(int (*fn)(const struct p2ps_hook *h, void *arg), void *arg,
		       unsigned int skip);

#endif /* _P2PS_LIFECYCLE_H */
