// SPDX-License-Identifier: GPL-2.0
/* p2pctl: command dispatch. */
#include <string.h>

#include "p2pctl.h"

static const struct p2pctl_cmd cmds[] = {
	{ "enable", cmd_enable, "arm p2p-shim (install the profile's hooks)" },
	{ "disable", cmd_disable, "disarm p2p-shim (remove the hooks)" },
	{ "status", cmd_status, "show state, hooks and live BAR1 mappings" },
	{ "monitor", cmd_monitor, "print the module's events as they happen" },
	{ "doctor", cmd_doctor, "check this host (or a captured root tree) for blockers" },
	{ "check", cmd_check, "check a driver file or kallsyms dump against the profiles, offline" },
	{ "config", cmd_config, "print or write the modprobe.d configuration" },
	{ "version", cmd_version, "print library and module versions" },
	{ "report", cmd_report, "gather versions, doctor, status, topology and logs for a bug report" },
	/* tools/cuda/: the CUDA driver API, loaded at run time */
	{ "verify", cmd_verify, "verify P2P copies and managed memory between GPUs with CUDA" },
	{ "bench", cmd_bench, "measure P2P bandwidth and latency with CUDA" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: p2pctl COMMAND [OPTIONS]\n"
		"       p2pctl COMMAND --help      (or: p2pctl help COMMAND)\n"
		"       p2pctl -V | --version      (p2pctl version)\n\n"
		"Control p2p-shim: PCIe BAR1 peer-to-peer for NVIDIA GPUs on the stock open driver.\n\n"
		"Commands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\n" P2PCTL_EXIT_CODES_HELP);
}

int p2pctl_main(int argc, char **argv)
{
	size_t i;

	if (!p2pctl_out)
		p2pctl_out = stdout;
	if (!p2pctl_err)
		p2pctl_err = stderr;
	if (argc < 2) {
		usage(p2pctl_err);
		return P2PCTL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(p2pctl_out);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			usage(p2pctl_out);
			return 0;
		}
		for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (!strcmp(argv[2], cmds[i].name)) {
				char *hv[] = { argv[2], (char *)"--help", NULL };

				return cmds[i].handler(2, hv);
			}
		p2pctl_error(NULL, "unknown command '%s'", argv[2]);
		return P2PCTL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version"))
		return cmd_version(1, argv + 1);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].handler(argc - 1, argv + 1);
	p2pctl_error(NULL, "unknown command '%s'; see 'p2pctl --help'", argv[1]);
	return P2PCTL_EXIT_USAGE;
}
