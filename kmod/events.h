/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events.c: where events leave the module.  The lifecycle and the ledger
 * emit; main.c points the sink at netlink (p2ps_netlink_sink).  And one
 * signal inside it: the GPU table (gpus.c) tells the lifecycle
 * (lifecycle.c) that the last GPU carrying a forcing ForceP2P is gone,
 * without either naming the other.
 */
#ifndef _P2PS_EVENTS_H
#define _P2PS_EVENTS_H

#include <linux/types.h>
#include <linux/workqueue.h>

#include <p2p-shim/uapi.h>

struct p2ps_status_snapshot;

/* A mapping the ledger counts, as its events carry it. */
struct p2ps_mapping_event {
	u32 gpu0, gpu1, count;
	enum p2ps_conn_type conn;
	u64 dma_base, dma_size;
};

struct p2ps_sink {
	void (*state)(enum p2ps_event ev, const struct p2ps_status_snapshot *snap,
		      const char *reason);
	void (*mapping)(enum p2ps_event ev, const struct p2ps_mapping_event *m);
};

/* NULL: events go nowhere. */
void p2ps_sink_set(const struct p2ps_sink *sink);
void p2ps_emit(enum p2ps_event ev, const struct p2ps_status_snapshot *snap, const char *reason);
void p2ps_emit_mapping(enum p2ps_event ev, const struct p2ps_mapping_event *m);

/*
 * The last GPU carrying a forcing ForceP2P has detached: queues @work, set
 * by the lifecycle at load (NULL: nobody listens).  Any context but NMI.
 */
void p2ps_forced_gone_listen(struct work_struct *work);
void p2ps_emit_forced_gone(void);

#endif /* _P2PS_EVENTS_H */
