// SPDX-License-Identifier: GPL-2.0
/* p2pctl version */
#include <getopt.h>
#include <stdlib.h>

#include "p2pctl.h"

static const char help[] =
	"Usage: p2pctl version\n\n"
	"Print the versions of p2pctl/libp2pshim and, if loaded, of the p2p-shim\n"
	"module and its ABI.  A module that is not loaded is reported, not an error.\n\n"
	"  -h, --help     this help\n\n"
	P2PCTL_EXIT_CODES_HELP;

int cmd_version(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct p2ps_handle *h;
	char mod[P2PS_NAME_LEN];
	unsigned int abi;
	int c, err;

	p2pctl_getopt_reset();
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(help, p2pctl_out);
			return 0;
		}
		return p2pctl_usage("version", "invalid option");
	}
	if (optind < argc)
		return p2pctl_usage("version", "unexpected argument '%s'", argv[optind]);
	fprintf(p2pctl_out, "p2pctl %s (libp2pshim %s, ABI %d)\n", P2PS_VERSION,
		p2ps_lib_version(), P2PS_ABI_VERSION);
	err = p2ps_open(&h, getenv("P2PCTL_DEVICE"));
	if (!err) {
		err = p2ps_module_version(h, &abi, mod, sizeof(mod));
		p2ps_close(h);
	}
	if (err)
		fprintf(p2pctl_out, "p2p-shim module: %s\n", err == -P2PS_E_NOT_LOADED ? "not loaded" :
			p2ps_strerror(err));
	else
		fprintf(p2pctl_out, "p2p-shim module: %s (ABI %u)\n", mod, abi);
	return 0;
}
