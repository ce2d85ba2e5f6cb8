// SPDX-License-Identifier: GPL-2.0
/* p2pctl enable */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "p2pctl.h"

static const char help[] =
	"Usage: p2pctl enable [--dry-run] [--force]\n\n"
	"Arm p2p-shim: resolve and check every target of the profile for the loaded\n"
	"nvidia driver, then install the hooks.  If nvidia is not loaded yet, the\n"
	"module waits and arms when it arrives.  Needs CAP_SYS_ADMIN.\n\n"
	"  -n, --dry-run  install counting probes only; change nothing\n"
	"  -f, --force    use the newest profile for an unknown driver version\n"
	"  -h, --help     this help\n\n"
	"On failure the module's failing target and reason are printed.\n\n"
	P2PCTL_EXIT_CODES_HELP;

int cmd_enable(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct p2ps_enable_result res;
	struct p2ps_handle *h;
	uint32_t flags = 0;
	int c, err, rc;

	p2pctl_getopt_reset();
	while ((c = getopt_long(argc, argv, "+nfh", opts, NULL)) != -1) {
		switch (c) {
		case 'n': flags |= P2PS_ENABLE_DRY_RUN; break;
		case 'f': flags |= P2PS_ENABLE_FORCE; break;
		case 'h': fputs(help, p2pctl_out); return 0;
		default: return p2pctl_usage("enable", "invalid option");
		}
	}
	if (optind < argc)
		return p2pctl_usage("enable", "unexpected argument '%s'", argv[optind]);
	rc = p2pctl_open("enable", &h);
	if (rc)
		return rc;
	err = p2ps_enable(h, flags, &res);
	if (err) {
		p2pctl_error("enable", "%s", p2ps_strerror(err));
		if (*res.target || *res.reason)
			fprintf(p2pctl_err, "  target: %s\n  reason: %s\n",
				*res.target ? res.target : "-", *res.reason ? res.reason : "-");
		if (err == -EPERM || err == -EACCES)
			fprintf(p2pctl_err, "  (needs CAP_SYS_ADMIN: run as root)\n");
		p2ps_close(h);
		return p2pctl_exit_for(err);
	}
	fprintf(p2pctl_out, "p2p-shim: %s%s\n", p2ps_state_name(res.state),
		res.state == P2PS_STATE_WAITING ? " (arms when nvidia loads)" : "");
	p2ps_close(h);
	return 0;
}
