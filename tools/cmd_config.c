// SPDX-License-Identifier: GPL-2.0
/* p2pctl config */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "p2pctl.h"

#define CONF_PATH "/etc/modprobe.d/p2p-shim.conf"

static const char help[] =
	"Usage: p2pctl config [--write] [--root DIR] [--registry]\n\n"
	"Print the modprobe.d configuration p2p-shim wants: load p2p-shim before\n"
	"nvidia (softdep, so that no GPU initialises before the hooks are armed) and\n"
	"let nvidia resize BAR1 (NVreg_EnableResizableBar=1).\n\n"
	"  -w, --write      write it to " CONF_PATH " instead\n"
	"  -r, --root DIR   with --write: under DIR (default /)\n"
	"  -R, --registry   also set the registry keys the shim otherwise supplies\n"
	"                   at run time (NVreg_RegistryDwords ForceP2P, RMPcieP2PType)\n"
	"  -h, --help       this help\n\n"
	P2PCTL_EXIT_CODES_HELP;

int p2pctl_config_text(char *buf, size_t len, bool registry);

int p2pctl_config_text(char *buf, size_t len, bool registry)
{
	return snprintf(buf, len,
		"# Written by p2pctl config: p2p-shim (PCIe BAR1 P2P on the stock open driver).\n"
		"# Load p2p-shim before nvidia, so that no GPU initialises before arming.\n"
		"softdep nvidia pre: p2p-shim\n"
		"# Arm as soon as nvidia loads.\n"
		"options p2p-shim enable=1\n"
		"# Let nvidia resize BAR1 to cover VRAM (Resizable BAR must be on in firmware).\n"
		"options nvidia NVreg_EnableResizableBar=1\n"
		"%s",
		registry ?
		"# Registry keys for BAR1 P2P (the shim supplies them when unset).\n"
		"options nvidia NVreg_RegistryDwords=\"ForceP2P=0x211;RMPcieP2PType=1\"\n" : "");
}

static int mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

int cmd_config(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "write", no_argument, NULL, 'w' },
		{ "root", required_argument, NULL, 'r' },
		{ "registry", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool write = false, registry = false;
	const char *root = "";
	char text[1024], path[PATH_MAX];
	FILE *f;
	int c, err;

	p2pctl_getopt_reset();
	while ((c = getopt_long(argc, argv, "+wr:Rh", opts, NULL)) != -1) {
		switch (c) {
		case 'w': write = true; break;
		case 'r': root = optarg; break;
		case 'R': registry = true; break;
		case 'h': fputs(help, p2pctl_out); return 0;
		default: return p2pctl_usage("config", "invalid option");
		}
	}
	if (optind < argc)
		return p2pctl_usage("config", "unexpected argument '%s'", argv[optind]);
	if (*root && !write)
		return p2pctl_usage("config", "--root needs --write");
	p2pctl_config_text(text, sizeof(text), registry);
	if (!write) {
		fputs(text, p2pctl_out);
		return 0;
	}
	if (!strcmp(root, "/"))
		root = "";
	snprintf(path, sizeof(path), "%s%s", root, CONF_PATH);
	err = mkdirs(path);
	f = err ? NULL : fopen(path, "w");
	if (!f) {
		err = err ? err : -errno;
		p2pctl_error("config", "%s: %s", path, p2ps_strerror(err));
		return p2pctl_exit_for(err);
	}
	fputs(text, f);
	if (fclose(f)) {
		err = -errno;
		p2pctl_error("config", "%s: %s", path, p2ps_strerror(err));
		return p2pctl_exit_for(err);
	}
	fprintf(p2pctl_out, "wrote %s\n", path);
	return 0;
}
