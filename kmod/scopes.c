// SPDX-License-Identifier: GPL-2.0
/*
 * Per-task scopes: which task is inside which call of the driver's, for
 * the hooks that must tie a later call on the same thread to an earlier
 * one (gen 0's static BAR1 view, gen A's PTE build, the UVM peer set's
 * "this thread just created a pair").  One table type for all of them;
 * what each scope carries stays with its user.
 */
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "scopes.h"

int p2ps_scope_find(const struct p2ps_scopes *s)
{
	unsigned int i;

	for (i = 0; i < s->nr; i++)
		if (READ_ONCE(s->task[i]) == current)
			return i;
	return -1;
}

int p2ps_scope_claim(struct p2ps_scopes *s)
{
	unsigned int i;

	for (i = 0; i < s->nr; i++)
		if (!cmpxchg(&s->task[i], NULL, current))
			return i;
	return -1;
}

void p2ps_scope_take(struct p2ps_scopes *s, int i)
{
	WRITE_ONCE(s->task[i], current);
}

void p2ps_scope_release(struct p2ps_scopes *s, int i)
{
	smp_store_release(&s->task[i], NULL);
}

void p2ps_scope_reset(struct p2ps_scopes *s)
{
	memset(s->task, 0, s->nr * sizeof(s->task[0]));
}
