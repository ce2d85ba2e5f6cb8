/* SPDX-License-Identifier: GPL-2.0 */
/*
 * p2ps_catf(), the one string appender of libp2pshim and p2pctl (userspace
 * only; the module does not include it).
 *
 * Defined here, static inline, rather than in a .c file both build: p2pctl
 * links libp2pshim.a and the unit tests link the library's and p2pctl's
 * objects together, so one external function compiled into both would be
 * defined twice; and p2pctl reaches the library only through its public
 * header (tests/check-layering, rule "tools"), where a string helper has no
 * place.  Each object that calls it holds its own copy (gcc does not inline
 * a function with variable arguments): a few hundred bytes.
 */
#ifndef _P2P_SHIM_CATF_H
#define _P2P_SHIM_CATF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Append @sep (unless *@off is 0: the first item) and @fmt's text to the
 * string @buf of @size bytes at *@off.  *@off moves past them only if all
 * of it fits; if not, @buf is left as it was (no piece of the item) and
 * the answer is false.
 */
static inline __attribute__((format(printf, 5, 6)))
bool p2ps_catf(char *buf, size_t size, size_t *off, const char *sep, const char *fmt, ...)
{
	size_t room = *off < size ? size - *off : 0;
	va_list ap;
	int k, t;

	if (!room)
		return false;
	k = snprintf(buf + *off, room, "%s", *off ? sep : "");
	if (k < 0 || (size_t)k >= room)
		goto undo;
	va_start(ap, fmt);
	t = vsnprintf(buf + *off + k, room - k, fmt, ap);
	va_end(ap);
	if (t < 0 || (size_t)t >= room - k)
		goto undo;
	*off += k + t;
	return true;
undo:
	buf[*off] = '\0';	/* the string as it was, not a piece of what did not fit */
	return false;
}

#endif
