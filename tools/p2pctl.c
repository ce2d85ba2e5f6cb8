// SPDX-License-Identifier: GPL-2.0
/* p2pctl: command dispatch. */
#include <errno.h>
#include <string.h>

#include "p2pctl.h"

static const struct p2pctl_cmd cmds[] = {
	{ "enable", cmd_enable, "arm p2p-shim (install the profile's hooks)", false },
	{ "disable", cmd_disable, "disarm p2p-shim (remove the hooks)", false },
	{ "status", cmd_status, "show state, hooks and live BAR1 mappings", false },
	{ "monitor", cmd_monitor, "print the module's events as they happen", true },
	{ "doctor", cmd_doctor, "check this host (or a captured root tree) for blockers", false },
	{ "check", cmd_check, "check a driver file or kallsyms dump against the profiles, offline", false },
	{ "config", cmd_config, "print or write the modprobe.d configuration", false },
	{ "version", cmd_version, "print library and module versions", false },
	{ "report", cmd_report, "gather versions, doctor, status, topology and logs for a bug report", false },
	/* tools/cuda/: the CUDA driver API, loaded at run time */
	{ "verify", cmd_verify, "verify P2P copies and managed memory between GPUs with CUDA", false },
	{ "bench", cmd_bench, "measure P2P bandwidth and latency with CUDA", false },
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

/* Whether ARGV asks for JSON: --json, or -j, before any "--". */
static bool wants_json(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			return true;
	return false;
}

static const struct p2pctl_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(name, cmds[i].name))
			return &cmds[i];
	return NULL;
}

/*
 * After a command: a failure asked for in JSON that printed none gets an
 * error object on stdout (scripts read stdout; the words stay on stderr),
 * and output that did not reach stdout (a full disk, a closed pipe) is a
 * failure, never a silent success.
 */
static int finish_as(const struct p2pctl_cmd *c, const char *cmd, bool json, int rc)
{

	if (rc && json && !p2pctl_json_printed) {
		json_object *o = json_object_new_object(), *e = json_object_new_object();
		const char *msg = p2pctl_last_error();

		json_object_object_add(e, "command", json_object_new_string(cmd));
		json_object_object_add(e, "message", json_object_new_string(*msg ? msg :
			"failed; see standard error"));
		json_object_object_add(e, "exit_status", json_object_new_int(rc));
		json_object_object_add(o, "error", e);
		if (c && c->json_lines) {
			fprintf(p2pctl_out, "%s\n", json_object_to_json_string_ext(o,
				JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(o);
		} else {
			p2pctl_json_print(o);
		}
	}
	if (fflush(p2pctl_out) || ferror(p2pctl_out)) {
		int err = errno;

		p2pctl_error(cmd, "cannot write to standard output: %s",
			     strerror(err ? err : EIO));
		clearerr(p2pctl_out);
		return rc ? rc : P2PCTL_EXIT_NOT_MET;
	}
	return rc;
}

static int finish(const struct p2pctl_cmd *c, bool json, int rc)
{
	return finish_as(c, c ? c->name : NULL, json, rc);
}

int p2pctl_main(int argc, char **argv)
{
	size_t i;

	if (!p2pctl_out)
		p2pctl_out = stdout;
	if (!p2pctl_err)
		p2pctl_err = stderr;
	p2pctl_run_reset();	/* a tool that hung is skipped within one command only */
	if (argc < 2) {
		usage(p2pctl_err);
		return P2PCTL_EXIT_USAGE;
	}
	p2pctl_json_printed = p2pctl_json_wanted = false;
	p2pctl_error_reset();
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(p2pctl_out);
		return finish(NULL, false, 0);
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			usage(p2pctl_out);
			return finish(NULL, false, 0);
		}
		for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (!strcmp(argv[2], cmds[i].name)) {
				char *hv[] = { argv[2], (char *)"--help", NULL };

				return finish(&cmds[i], false, cmds[i].handler(2, hv));
			}
		p2pctl_error(NULL, "unknown command '%s'", argv[2]);
		return P2PCTL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version"))
		return finish(find_cmd("version"), false, cmd_version(1, argv + 1));
	p2pctl_json_wanted = wants_json(argc - 1, argv + 1);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return finish(&cmds[i], p2pctl_json_wanted, cmds[i].handler(argc - 1, argv + 1));
	p2pctl_error(NULL, "unknown command '%s'; see 'p2pctl --help'", argv[1]);
	/* a script that asked for JSON gets its error object here too */
	return finish_as(NULL, argv[1], p2pctl_json_wanted, P2PCTL_EXIT_USAGE);
}
