// SPDX-License-Identifier: GPL-2.0
/* p2pctl verify, p2pctl bench: tools/cuda/, with p2pctl's output streams. */
#include <sys/types.h>

#include "p2pctl.h"
#include "cuda/cuda_cmds.h"

/*
 * With --json, whether the command printed its own JSON (a result, even
 * of a failed run) decides whether p2pctl_main() adds an error object: the
 * commands print with fprintf, so their stdout is counted on the way.
 */
struct counted {
	FILE *f;
	size_t n;
};

static ssize_t counted_write(void *cookie, const char *buf, size_t len)
{
	struct counted *c = cookie;
	size_t w = fwrite(buf, 1, len, c->f);

	c->n += w;
	return w == len ? (ssize_t)len : -1;
}

static int run_counted(int (*fn)(int, char **, FILE *, FILE *), int argc, char **argv)
{
	static const cookie_io_functions_t io = { .write = counted_write };
	struct counted c = { p2pctl_out, 0 };
	FILE *o = p2pctl_json_wanted ? fopencookie(&c, "w", io) : NULL;
	int rc;

	if (!o) {
		p2pctl_json_printed = p2pctl_json_wanted;	/* can't tell: add nothing */
		return fn(argc, argv, p2pctl_out, p2pctl_err);
	}
	setvbuf(o, NULL, _IOLBF, 0);	/* progress lines as they come */
	rc = fn(argc, argv, o, p2pctl_err);
	if (fclose(o) && !rc)
		rc = P2PCTL_EXIT_NOT_MET;
	p2pctl_json_printed = c.n > 0;
	return rc;
}

int cmd_verify(int argc, char **argv)
{
	return run_counted(verify_main, argc, argv);
}

int cmd_bench(int argc, char **argv)
{
	return run_counted(bench_main, argc, argv);
}
