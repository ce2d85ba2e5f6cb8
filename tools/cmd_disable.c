// SPDX-License-Identifier: GPL-2.0
/* p2pctl disable */
#include <errno.h>
#include <getopt.h>

#include "p2pctl.h"

static const char help[] =
	"Usage: p2pctl disable\n\n"
	"Disarm p2p-shim: remove every hook.  Refused (busy) while BAR1 peer\n"
	"mappings are live; the busy GPU pairs are printed.  Needs CAP_SYS_ADMIN.\n\n"
	"  -h, --help     this help\n\n"
	P2PCTL_EXIT_CODES_HELP;

int cmd_disable(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct p2ps_handle *h;
	char busy[P2PS_REASON_LEN];
	int c, err, rc;

	p2pctl_getopt_reset();
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(help, p2pctl_out);
			return 0;
		}
		return p2pctl_usage("disable", "invalid option");
	}
	if (optind < argc)
		return p2pctl_usage("disable", "unexpected argument '%s'", argv[optind]);
	rc = p2pctl_open("disable", &h);
	if (rc)
		return rc;
	err = p2ps_disable(h, busy, sizeof(busy));
	p2ps_close(h);
	if (err == -EBUSY) {
		p2pctl_error("disable", "busy: live BAR1 peer mappings: %s", *busy ? busy : "(unknown)");
		fprintf(p2pctl_err, "  stop the processes using P2P between these GPUs and retry\n");
		return P2PCTL_EXIT_NOT_MET;
	}
	if (err) {
		p2pctl_error("disable", "%s", p2ps_strerror(err));
		return p2pctl_exit_for(err);
	}
	fprintf(p2pctl_out, "p2p-shim: disabled\n");
	return 0;
}
