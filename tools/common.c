// SPDX-License-Identifier: GPL-2.0
/* p2pctl: helpers shared by the commands. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "p2pctl.h"

FILE *p2pctl_out;
FILE *p2pctl_err;
bool p2pctl_json_printed, p2pctl_json_wanted;
static char last_error[512];

const char *p2pctl_last_error(void)
{
	return last_error;
}

void p2pctl_error_reset(void)
{
	last_error[0] = '\0';
}

/* Print "p2pctl: [CMD: ]MSG" on stderr, and keep MSG for a JSON error object. */
static void say(const char *cmd, const char *fmt, va_list ap)
{
	va_list copy;

	va_copy(copy, ap);
	vsnprintf(last_error, sizeof(last_error), fmt, copy);
	va_end(copy);
	fprintf(p2pctl_err, "p2pctl: %s%s", cmd ? cmd : "", cmd ? ": " : "");
	vfprintf(p2pctl_err, fmt, ap);
}

#define MAX_HUNG 16
static char *hung[MAX_HUNG];
static size_t nr_hung;

void p2pctl_run_reset(void)
{
	while (nr_hung)
		free(hung[--nr_hung]);
}

int p2pctl_run(char *const argv[], int timeout_ms, size_t max_out, bool merge_stderr, char **out,
	       bool progress)
{
	size_t i;
	int rc;

	*out = NULL;
	for (i = 0; i < nr_hung; i++)
		if (!strcmp(hung[i], argv[0]))
			return -ETIMEDOUT;
	if (progress) {
		fprintf(p2pctl_err, "p2pctl: running");
		for (i = 0; i < 8 && argv[i]; i++)
			fprintf(p2pctl_err, " %s", argv[i]);
		fprintf(p2pctl_err, " (up to %g s)\n", timeout_ms / 1000.0);
		fflush(p2pctl_err);
	}
	rc = p2ps_run((char **)argv, timeout_ms, max_out, merge_stderr, out);
	if (rc == -ETIMEDOUT && nr_hung < MAX_HUNG) {
		hung[nr_hung] = strdup(argv[0]);
		if (hung[nr_hung])
			nr_hung++;
		if (progress)
			fprintf(p2pctl_err, "p2pctl: %s timed out: not called again in this run\n", argv[0]);
	}
	return rc;
}

void p2pctl_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(cmd, fmt, ap);
	va_end(ap);
	fputc('\n', p2pctl_err);
}

int p2pctl_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(cmd, fmt, ap);
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
			     err == -EACCES || err == -EPERM ? "; run as root" :
			     /* after an upgrade: the old module is still the one loaded */
			     err == -P2PS_E_ABI ? " than this p2pctl (after an upgrade the old module "
			     "stays loaded; `p2pctl disable` cannot reach it either): `rmmod p2p-shim; "
			     "modprobe p2p-shim` (rmmod disarms it; refused while GPUs hold it: then "
			     "reboot); `p2pctl version` shows both, `dkms status p2p-shim` the builds" : "");
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
	p2pctl_json_printed = true;
	fprintf(p2pctl_out, "%s\n", json_object_to_json_string_ext(o,
		JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

json_object *p2pctl_json_str(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

void p2pctl_gpu_str(char *buf, size_t len, uint32_t instance)
{
	if (instance == P2PS_GPU_UNKNOWN)
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%" PRIu32, instance);
}

json_object *p2pctl_json_gpu(uint32_t instance)
{
	return instance == P2PS_GPU_UNKNOWN ? NULL : json_object_new_int64(instance);
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

/* Columns of @s (UTF-8: a character is one column), of its first @n bytes. */
static size_t cols(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n && s[i]; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

/* Bytes of @s that fill at most @w columns (never half a character). */
static size_t bytes_for(const char *s, size_t w)
{
	size_t i = 0, c = 0;

	while (s[i]) {
		size_t j = i + 1;

		while (((unsigned char)s[j] & 0xc0) == 0x80)
			j++;
		if (++c > w)
			break;
		i = j;
	}
	return i;
}

size_t p2pctl_wrap_next(const char *s, size_t w, size_t *skip)
{
	size_t n = bytes_for(s, w), i;

	*skip = 0;
	if (!s[n])
		return n;
	/* at the last space that fits */
	for (i = n; i > 0; i--)
		if (s[i] == ' ') {
			size_t end = i;

			while (end > 0 && s[end - 1] == ' ')
				end--;
			if (!end)
				break;
			while (s[i] == ' ')
				i++;
			*skip = i - end;
			return end;
		}
	/* one word too long: after a '/', ',', ';', '_' or '=' in it, else where the width ends */
	for (i = n; i > 1; i--)
		if (strchr("/,;_=", s[i - 1]))
			return i;
	return n ? n : bytes_for(s, 1);
}

void p2pctl_wrap(FILE *f, const char *first, const char *text, size_t indent, size_t width)
{
	size_t w0 = cols(first, strlen(first)), skip, n;
	const char *s = text;
	bool head = true;

	while (head || *s) {
		size_t avail = (head ? width - w0 : width - indent);

		n = p2pctl_wrap_next(s, avail, &skip);
		if (head)
			fprintf(f, "%s%.*s\n", first, (int)n, s);
		else
			fprintf(f, "%*s%.*s\n", (int)indent, "", (int)n, s);
		s += n + skip;
		head = false;
	}
}

void p2pctl_table_print_wrapped(struct p2pctl_table *t, FILE *f, const char *indent, size_t width,
				const size_t *maxw)
{
	size_t w[16] = { 0 }, used = indent ? cols(indent, strlen(indent)) : 0;
	unsigned int r, c, nc = t->ncols < 16 ? t->ncols : 16;

	if (!nc)
		return;
	for (r = 0; r < t->nrows; r++)
		for (c = 0; c + 1 < nc; c++) {
			const char *s = t->cells[r * t->ncols + c];
			size_t l = s ? cols(s, strlen(s)) : 0;

			if (l > w[c])
				w[c] = l;
		}
	for (c = 0; c + 1 < nc; c++) {
		if (maxw && maxw[c] && w[c] > maxw[c])
			w[c] = maxw[c];
		used += w[c] + 2;
	}
	w[nc - 1] = width > used + 10 ? width - used : 10;
	for (r = 0; r < t->nrows; r++) {
		const char *pos[16];
		bool more = true;

		for (c = 0; c < nc; c++)
			pos[c] = t->cells[r * t->ncols + c] ? t->cells[r * t->ncols + c] : "";
		while (more) {
			char line[4096];
			size_t len = 0, keep = 0;

			more = false;
			for (c = 0; c < nc; c++) {
				size_t skip, n = p2pctl_wrap_next(pos[c], w[c], &skip);
				size_t pad = c + 1 < nc ? w[c] + 2 - cols(pos[c], n) : 0;
				int k;

				k = snprintf(line + len, sizeof(line) - len, "%.*s%*s", (int)n, pos[c],
					     (int)pad, "");
				if (k < 0 || (size_t)k >= sizeof(line) - len)
					break;
				len += (size_t)k;
				if (n)
					keep = len - pad;	/* no trailing blanks */
				pos[c] += n + skip;
				if (*pos[c])
					more = true;
			}
			line[keep] = '\0';
			fprintf(f, "%s%s\n", indent ? indent : "", line);
		}
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
