// SPDX-License-Identifier: GPL-2.0
/* p2pctl: helpers shared by the commands. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "p2pctl.h"

FILE *p2pctl_out;
FILE *p2pctl_err;

void p2pctl_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(p2pctl_err, "p2pctl: %s%s", cmd ? cmd : "", cmd ? ": " : "");
	va_start(ap, fmt);
	vfprintf(p2pctl_err, fmt, ap);
	va_end(ap);
	fputc('\n', p2pctl_err);
}

int p2pctl_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(p2pctl_err, "p2pctl: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(p2pctl_err, fmt, ap);
	va_end(ap);
	fprintf(p2pctl_err, "\nTry 'p2pctl %s --help'.\n", cmd);
	return P2PCTL_EXIT_USAGE;
}

int p2pctl_exit_for(int err)
{
	if (err == -P2PS_E_NOT_LOADED)
		return P2PCTL_EXIT_NOT_LOADED;
	if (err == -EPERM || err == -EACCES)
		return P2PCTL_EXIT_PERM;
	return err ? P2PCTL_EXIT_NOT_MET : P2PCTL_EXIT_OK;
}

int p2pctl_open(const char *cmd, struct p2ps_handle **h)
{
	int err = p2ps_open(h, getenv("P2PCTL_DEVICE"));

	if (err) {
		p2pctl_error(cmd, "%s%s", p2ps_strerror(err),
			     err == -P2PS_E_NOT_LOADED ? "; load it with `modprobe p2p-shim`" :
			     err == -EACCES || err == -EPERM ? "; run as root" : "");
		return p2pctl_exit_for(err);
	}
	return 0;
}

void p2pctl_getopt_reset(void)
{
	optind = 0;	/* GNU: full reinitialisation */
	opterr = 1;
}

void p2pctl_json_print(json_object *o)
{
	fprintf(p2pctl_out, "%s\n", json_object_to_json_string_ext(o,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

json_object *p2pctl_json_str(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

/* ---------------------------------------------------------------- tables */

void p2pctl_table_init(struct p2pctl_table *t, unsigned int ncols)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
}

void p2pctl_table_row(struct p2pctl_table *t, ...)
{
	va_list ap;
	unsigned int i;

	if (t->nrows == t->cap) {
		unsigned int c = t->cap ? t->cap * 2 : 16;
		char **n = realloc(t->cells, (size_t)c * t->ncols * sizeof(*n));

		if (!n)
			return;
		t->cells = n;
		t->cap = c;
	}
	va_start(ap, t);
	for (i = 0; i < t->ncols; i++) {
		const char *s = va_arg(ap, const char *);

		t->cells[t->nrows * t->ncols + i] = strdup(s ? s : "");
	}
	va_end(ap);
	t->nrows++;
}

void p2pctl_table_print(struct p2pctl_table *t, FILE *f, const char *indent)
{
	size_t w[16] = { 0 };
	unsigned int r, c;

	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols && c < 16; c++) {
			const char *s = t->cells[r * t->ncols + c];
			size_t l = s ? strlen(s) : 0;

			if (l > w[c])
				w[c] = l;
		}
	for (r = 0; r < t->nrows; r++) {
		size_t len = 0;
		char line[2048];

		line[0] = '\0';
		for (c = 0; c < t->ncols && c < 16; c++) {
			const char *s = t->cells[r * t->ncols + c];
			int n;

			if (!s)
				s = "";
			if (c + 1 < t->ncols)
				n = snprintf(line + len, sizeof(line) - len, "%-*s  ", (int)w[c], s);
			else
				n = snprintf(line + len, sizeof(line) - len, "%s", s);
			if (n < 0 || (size_t)n >= sizeof(line) - len)
				break;
			len += (size_t)n;
		}
		while (len && line[len - 1] == ' ')
			line[--len] = '\0';
		fprintf(f, "%s%s\n", indent ? indent : "", line);
	}
}

void p2pctl_table_free(struct p2pctl_table *t)
{
	unsigned int i;

	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}
