/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a probe handler may do.  kprobe pre-handlers and kretprobe entry
 * handlers run in NMI context on x86-64 (a kernel int3 enters through
 * irqentry_nmi_enter): there, only loads and single stores (WRITE_ONCE,
 * cmpxchg).  Taking a lock, freeing, logging, sending, queueing work or
 * dropping a module reference belongs in return handlers and wrappers;
 * p2ps_lock() says so where it happens.
 */
#ifndef _P2PS_NMI_H
#define _P2PS_NMI_H

#include <linux/bug.h>
#include <linux/preempt.h>
#include <linux/spinlock.h>

/*
 * Probe handlers take spinlock_t, which sleeps on PREEMPT_RT, where a
 * kprobe handler must not: refused at build time (vermagic keeps a module
 * built for another kernel out of an RT one).
 */
#ifdef CONFIG_PREEMPT_RT
#error "p2p-shim does not support PREEMPT_RT kernels: its probe handlers take spinlock_t, which sleeps there"
#endif

/* The hooks know the x86-64 calling convention; so does the driver. */
#ifndef CONFIG_X86_64
#error "p2p-shim supports x86-64 only, like NVIDIA's open driver it hooks"
#endif

#define p2ps_assert_not_nmi()	WARN_ON_ONCE(in_nmi())
#define p2ps_lock(lock, flags) \
	do { p2ps_assert_not_nmi(); spin_lock_irqsave(lock, flags); } while (0)

#endif /* _P2PS_NMI_H */
