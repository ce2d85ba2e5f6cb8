/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Run p2pctl's command handlers in-process with their output captured, for
 * the unit tests of the CLI.  Include after <cmocka.h> and "p2pctl.h".
 */
#ifndef P2PCTL_RUN_H
#define P2PCTL_RUN_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* What the last run() printed on stdout and stderr. */
static char *out_text, *err_text;

/* The whole of @f, from its start to where it is now, NUL-terminated. */
static char *slurp(FILE *f)
{
	long n = ftell(f);
	char *s = calloc(1, (size_t)n + 1);

	assert_non_null(s);
	rewind(f);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	return s;
}

/* Run p2pctl with the given arguments (NULL-terminated); its exit status. */
static int run(const char *first, ...)
{
	char *argv[32];
	int argc = 0, rc;
	va_list ap;
	FILE *o = tmpfile(), *e = tmpfile();

	assert_non_null(o);
	assert_non_null(e);
	argv[argc++] = (char *)"p2pctl";
	va_start(ap, first);
	for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	p2pctl_out = o;
	p2pctl_err = e;
	rc = p2pctl_main(argc, argv);
	free(out_text);
	free(err_text);
	out_text = slurp(o);
	err_text = slurp(e);
	fclose(o);
	fclose(e);
	return rc;
}

#endif
