// SPDX-License-Identifier: GPL-2.0
/* p2pctl disable */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "p2pctl.h"

static const char help[] =
	"Usage: p2pctl disable\n\n"
	"Disarm p2p-shim: remove every hook.  Refused (busy) while BAR1 peer\n"
	"mappings are live (the busy GPU pairs are printed), or while a GPU is\n"
	"initialising with a static BAR1 decision in flight.  GPUs that read a\n"
	"ForceP2P forcing P2P (p2p-shim's, or the user's while armed) keep it\n"
	"until they re-initialise: the caps guard then\n"
	"stays (state residual) and p2p-shim cannot be unloaded until they have\n"
	"(last client closed with persistence mode off, a GPU reset, or nvidia\n"
	"unloaded).  Needs CAP_SYS_ADMIN.\n\n"
	"  -h, --help     this help\n\n"
	P2PCTL_EXIT_CODES_HELP;

int cmd_disable(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct p2ps_status_info *st = NULL;
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
	if (err == -EBUSY) {
		p2ps_close(h);
		p2pctl_error("disable", "busy: %s", *busy ? busy : "(no reason given)");
		if (strstr(busy, "mappings"))
			fprintf(p2pctl_err, "  stop the processes using P2P between these GPUs and retry\n");
		return P2PCTL_EXIT_NOT_MET;
	}
	if (err) {
		p2ps_close(h);
		p2pctl_error("disable", "%s", p2ps_strerror(err));
		return p2pctl_exit_for(err);
	}
	if (!p2ps_status(h, &st) && st->state == P2PS_STATE_RESIDUAL)
		fprintf(p2pctl_out, "p2p-shim: disabled; GPUs initialised while it was armed keep its "
			"ForceP2P, so the caps guard stays (state residual) and p2p-shim cannot be "
			"unloaded until they re-initialise (last client closed with persistence mode "
			"off, a GPU reset, or nvidia unloaded)\n");
	else
		fprintf(p2pctl_out, "p2p-shim: disabled\n");
	p2ps_status_free(st);
	p2ps_close(h);
	return 0;
}
