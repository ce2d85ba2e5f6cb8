/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the rule files (rules/) use of their environment: the kernel's
 * headers in the module, libc's in libp2pshim.  The one place that tells
 * the two apart, so that rules/ itself is the same code in both and names
 * nothing of either.
 */
#ifndef _P2P_SHIM_RULEENV_H
#define _P2P_SHIM_RULEENV_H

#ifdef __KERNEL__
#include <linux/ctype.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#define rule_alloc(n)	kmalloc(n, GFP_KERNEL)
#define rule_free(p)	kfree(p)
#else
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define rule_alloc(n)	malloc(n)
#define rule_free(p)	free(p)
#endif

#endif /* _P2P_SHIM_RULEENV_H */
