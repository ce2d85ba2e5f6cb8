/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scopes.c: per-task scopes.  A table of slots, one per task inside some
 * call of the driver's; the user keeps what the scope carries in its own
 * array, indexed by the slot.  Claiming and looking up are single loads
 * and one cmpxchg: safe in NMI context (kprobe pre-handlers, kretprobe
 * entry handlers).  Only the owning task touches its slot's data, but for
 * a user that says otherwise (uvm_peer.c's notes of a new pair are
 * released and reused by other tasks, under its created_lock).
 */
#ifndef _P2PS_SCOPES_H
#define _P2PS_SCOPES_H

#include <linux/types.h>

struct task_struct;

struct p2ps_scopes {
	unsigned int nr;
	struct task_struct **task;	/* compared, never dereferenced; NULL: free */
};

#define P2PS_SCOPES(name, n)						\
	static struct task_struct *name##_task[n];			\
	static struct p2ps_scopes name = { .nr = (n), .task = name##_task }

/* This task's slot, or -1. */
int p2ps_scope_find(const struct p2ps_scopes *s);
/* A free slot, now this task's, or -1 if every slot is taken. */
int p2ps_scope_claim(struct p2ps_scopes *s);
/* Slot @i becomes this task's whoever had it (the caller serialises). */
void p2ps_scope_take(struct p2ps_scopes *s, int i);
/* The owner is done: after its last store to the slot's data. */
void p2ps_scope_release(struct p2ps_scopes *s, int i);
/* Every slot free: only where no hook can run. */
void p2ps_scope_reset(struct p2ps_scopes *s);

#endif /* _P2PS_SCOPES_H */
