/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The string helpers of libp2pshim and p2pctl alike: p2ps_strlcpy(),
 * p2ps_trim(), p2ps_catf() (userspace only; the module does not include it).
 *
 * Defined here, static inline, rather than in a .c file both build: p2pctl
 * links libp2pshim.a and the unit tests link the library's and p2pctl's
 * objects together, so one external function compiled into both would be
 * defined twice; and p2pctl reaches the library only through its public
 * header (tests/check-layering, rule "tools"), where string helpers have no
 * place.  Each object that calls p2ps_catf() holds its own copy (gcc does
 * not inline a function with variable arguments): a few hundred bytes.
 */
#ifndef _P2P_SHIM_STRUTIL_H
#define _P2P_SHIM_STRUTIL_H

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/*
 * Copy the string @src into @dst of @len bytes, cut to fit, always
 * terminated (unless @len is 0: nothing written).  It reads at most
 * @len - 1 bytes of @src, so a fixed field without its NUL is cut, not read
 * past; and it answers nothing, unlike BSD's strlcpy() (the full length of
 * @src), as no caller tests for a cut.
 */
static inline void p2ps_strlcpy(char *dst, const char *src, size_t len)
{
	size_t n;

	if (!len)
		return;
	n = strnlen(src, len - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* @s past its leading white space; its trailing white space cut off in place. */
static inline char *p2ps_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

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
