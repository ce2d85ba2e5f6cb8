// SPDX-License-Identifier: GPL-2.0
/*
 * The in-flight gate: the one place that knows which calls of ours are
 * under way in the driver's paths, and that stops new ones while a disable
 * decides.
 *
 * A wrapper, a registry default being supplied, or a static BAR1 decision
 * being forced each count themselves in (p2ps_gate_enter) and out
 * (p2ps_gate_exit).  A disable closes the gate (p2ps_gate_close): nothing
 * new starts (a wrapper that would create a mapping answers as the stub
 * would, NOT_SUPPORTED; no GPU newly gets our registry settings or a
 * forced static BAR1), and those under way finish, so that what the
 * ledger and the GPU table say stays true until the hooks are gone.
 */
#include <linux/atomic.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/wait.h>

#include "gate.h"

/*
 * Calls still running.  A task redirected into a wrapper may be preempted
 * before it counts itself; synchronize_rcu_tasks() waits for such tasks,
 * after which the count covers them all.
 */
static atomic_t inflight = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(inflight_wq);

/* While a disable decides: nothing new starts. */
static bool closing;

bool p2ps_gate_enter(void)
{
	atomic_inc(&inflight);
	/* Pairs with the barrier in p2ps_gate_close(): see closing, or be seen. */
	smp_mb__after_atomic();
	return !READ_ONCE(closing);
}

void p2ps_gate_exit(void)
{
	if (atomic_dec_and_test(&inflight))
		wake_up_all(&inflight_wq);
}

/*
 * Whether a call inside the gate may make something new: not while a
 * disable decides, and not once rmmod is under way.  On true it holds a
 * module reference until p2ps_gate_made(), so that rmmod cannot start
 * mid-call and remove the hooks that would tear the new thing down.
 */
bool p2ps_gate_may_make(void)
{
	return !READ_ONCE(closing) && try_module_get(THIS_MODULE);
}

void p2ps_gate_made(bool held)
{
	if (held)
		module_put(THIS_MODULE);
}

/*
 * Before a disable looks at the ledger: stop new things and let those
 * being made finish.  p2ps_gate_reopen() undoes it if disable is refused.
 * A call counts itself before it looks at closing, and we set closing
 * before we look at the count: each side sees the other (no grace period
 * needed here; the task not yet counted will see closing).
 */
void p2ps_gate_close(void)
{
	WRITE_ONCE(closing, true);
	/* Pairs with the barrier in p2ps_gate_enter(). */
	smp_mb();
	wait_event(inflight_wq, !atomic_read(&inflight));
}

void p2ps_gate_reopen(void)
{
	WRITE_ONCE(closing, false);
}

/*
 * After the hooks are gone: wait until no task runs a wrapper (or is about
 * to, or is still on its way out of one): the count first, then a grace
 * period of RCU tasks, which a task redirected but not yet counted, or
 * counted out but still in the wrapper's last instructions, has not
 * passed.  Then the gate opens for the next arming.
 */
void p2ps_gate_drain(void)
{
	wait_event(inflight_wq, !atomic_read(&inflight));
	synchronize_rcu_tasks();
	wait_event(inflight_wq, !atomic_read(&inflight));
	WRITE_ONCE(closing, false);
}
