// SPDX-License-Identifier: GPL-2.0
/*
 * The event sink: the lifecycle's state changes and refusals, and the
 * ledger's mappings, go to whatever main.c set (netlink).  Set before the
 * first event can happen and cleared after the last (module init and
 * exit), so a plain pointer does.  The same for the one signal inside the
 * module: the GPU table's "no forced GPU left", which the lifecycle's
 * work item takes (the residual set's end, docs/lifecycle.md).
 */
#include <linux/compiler.h>
#include <linux/workqueue.h>

#include "events.h"

static const struct p2ps_sink *sink;
static struct work_struct *forced_gone;

void p2ps_sink_set(const struct p2ps_sink *s)
{
	WRITE_ONCE(sink, s);
}

void p2ps_emit(enum p2ps_event ev, const struct p2ps_status_snapshot *snap, const char *reason)
{
	const struct p2ps_sink *s = READ_ONCE(sink);

	if (s && s->state)
		s->state(ev, snap, reason);
}

void p2ps_emit_mapping(enum p2ps_event ev, const struct p2ps_mapping_event *m)
{
	const struct p2ps_sink *s = READ_ONCE(sink);

	if (s && s->mapping)
		s->mapping(ev, m);
}

void p2ps_forced_gone_listen(struct work_struct *work)
{
	WRITE_ONCE(forced_gone, work);
}

void p2ps_emit_forced_gone(void)
{
	struct work_struct *w = READ_ONCE(forced_gone);

	if (w)
		schedule_work(w);
}
