// SPDX-License-Identifier: GPL-2.0
/* p2pctl config */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <p2p-shim/bdf.h>
#include <p2p-shim/profile.h>

#include "p2pctl.h"

#define CONF_PATH "/etc/modprobe.d/p2p-shim.conf"

static const char help[] =
	"Usage: p2pctl config [--write [--force]] [--root DIR] [--gpus LIST]\n"
	"                     [--registry [--driver-version VERSION]]\n"
	"       p2pctl config --remove [--force] [--root DIR]\n\n"
	"Print the modprobe.d configuration p2p-shim wants: load p2p-shim before\n"
	"nvidia (softdep, so that no GPU initialises before the hooks are armed),\n"
	"arm it as soon as nvidia loads (options p2p-shim enable=1) and let nvidia\n"
	"resize BAR1 (NVreg_EnableResizableBar=1).  Its first line holds cksum(1)'s\n"
	"sum of the lines below: a file edited since is left alone by --write,\n"
	"--remove, make uninstall and the package's removal.\n\n"
	"  -w, --write      write it to " CONF_PATH " instead\n"
	"  -x, --remove     remove " CONF_PATH " (before removing\n"
	"                   p2p-shim: its softdep and, with --registry, the keys in\n"
	"                   nvidia's options would outlive it); then rebuild an\n"
	"                   initramfs that holds it\n"
	"  -f, --force      with --write or --remove: also overwrite or remove a\n"
	"                   file p2pctl wrote that was edited since, or that an\n"
	"                   older p2pctl wrote (no sum); never one without p2pctl's\n"
	"                   first line\n"
	"  -r, --root DIR   with --write or --remove: under DIR (default /)\n"
	"  -g, --gpus LIST  only these GPUs get p2p-shim's registry keys (PCI\n"
	"                   addresses DDDD:BB:DD.0, comma-separated: options\n"
	"                   p2p-shim registry_gpus=LIST); for a host that also has\n"
	"                   GPUs that must keep the stock keys (PCIe-only Hopper).\n"
	"                   The keys go with p2p-shim: without it, none is set\n"
	"  -R, --registry   also set, for every GPU, the registry keys the shim\n"
	"                   otherwise supplies at run time: its profile's for the\n"
	"                   driver version (NVreg_RegistryDwords).  They stay in\n"
	"                   the driver's options when p2p-shim is not loaded, and\n"
	"                   the stock driver then offers GeForce pairs a mailbox\n"
	"                   path they lack: prefer --gpus\n"
	"  -d, --driver-version VERSION\n"
	"                   with --registry: the driver version to write them for\n"
	"                   (default: the loaded nvidia's, /sys/module/nvidia/version)\n"
	"  -h, --help       this help\n\n"
	P2PCTL_EXIT_CODES_HELP;

/* "ForceP2P=0x211;RMForceP2PType=2": the profile's keys, as nv-reg.h parses them. */
static void registry_dwords(const struct p2ps_profile *p, char *buf, size_t len)
{
	const struct p2ps_registry_default *r;
	size_t n = 0;

	buf[0] = '\0';
	for (r = p->registry; r->key && n < len; r++)
		n += snprintf(buf + n, len - n, "%s%s=0x%x", n ? ";" : "", r->key, r->value);
}

/*
 * Whether @list is what registry_gpus= takes (kmod/bar1.c): PCI addresses
 * of function 0, DDDD:BB:DD.0 or BB:DD.0, comma-separated, at most 32.
 */
static bool gpu_list_ok(const char *list)
{
	unsigned int n = 0;
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");
		uint64_t dbd;

		/* the module's parser (rules/bdf.c) and its limit (NR_SCOPED, kmod/bar1.c) */
		if (!len || ++n > 32 || p2ps_parse_bdf(p, len, &dbd))
			return false;
		p += len;
		if (*p == ',' && *++p == '\0')
			return false;
	}
	return n > 0;
}

/*
 * The file's first line: what wrote it and cksum(1)'s sum of the lines below
 * ("CRC LENGTH"), dpkg-conffile style, so that each remover (--remove,
 * --write over it, make uninstall and the package's postrm, which runs
 * debian/p2p-shim-dkms.postrm's `tail -n +2 | cksum`) can tell the file as
 * written from one edited since.  An older p2pctl wrote CONF_HEADER alone.
 */
#define CONF_HEADER "# Written by p2pctl config"

/* One byte into POSIX cksum's CRC: polynomial 0x04c11db7, most significant bit first. */
static uint32_t cksum_byte(uint32_t crc, unsigned char b)
{
	int i;

	crc ^= (uint32_t)b << 24;
	for (i = 0; i < 8; i++)
		crc = crc & 0x80000000 ? crc << 1 ^ 0x04c11db7 : crc << 1;
	return crc;
}

/* POSIX cksum: the CRC of the bytes, then of their count (low byte first, no zero bytes above it), inverted. */
static uint32_t cksum(const char *p, size_t len)
{
	uint32_t crc = 0;
	size_t n;

	for (n = 0; n < len; n++)
		crc = cksum_byte(crc, p[n]);
	for (n = len; n; n >>= 8)
		crc = cksum_byte(crc, n & 0xff);
	return ~crc;
}

/* The first line for @body, up to the sums and the space after them: what an intact file starts with. */
static void conf_header(char *buf, size_t len, const char *body, size_t body_len)
{
	snprintf(buf, len, CONF_HEADER " (cksum %" PRIu32 " %zu ", cksum(body, body_len), body_len);
}

/*
 * REGISTRY: the profile whose keys to add, or NULL for none.  GPUS: the
 * registry_gpus= list, or NULL.  Returns the length of the whole text, as
 * snprintf: at least @len means it did not fit (and nothing may be written).
 */
static int config_text(char *buf, size_t len, const struct p2ps_profile *registry,
		       const char *gpus)
{
	/* the comments, and a --gpus list at its longest: 32 of "DDDDDDDD:BB:DD.0," */
	char keys[256] = "", body[1024 + 32 * 17], head[96];
	int n;

	if (registry)
		registry_dwords(registry, keys, sizeof(keys));
	n = snprintf(body, sizeof(body),
		"# p2p-shim (PCIe BAR1 P2P on the stock open driver).  Once this file is\n"
		"# edited, p2pctl config --write and --remove (without --force), make\n"
		"# uninstall and removing the p2p-shim-dkms package leave it alone.\n"
		"# Load p2p-shim before nvidia, so that no GPU initialises before arming.\n"
		"softdep nvidia pre: p2p-shim\n"
		"# Arm as soon as nvidia loads%s.\n"
		"options p2p-shim enable=1%s%s\n"
		"# Let nvidia resize BAR1 to cover VRAM (Resizable BAR must be on in firmware).\n"
		"options nvidia NVreg_EnableResizableBar=1\n"
		"%s%s%s%s%s",
		gpus ? "; its registry keys for the GPUs named only" : "",
		gpus ? " registry_gpus=" : "", gpus ? gpus : "",
		registry ? "# Registry keys for BAR1 P2P, profile " : "",
		registry ? registry->name : "",
		registry ? " (the shim supplies them when unset).\n"
			   "options nvidia NVreg_RegistryDwords=\"" : "",
		keys, registry ? "\"\n" : "");
	if (n < 0 || n >= (int)sizeof(body))
		return INT_MAX;
	conf_header(head, sizeof(head), body, n);
	return snprintf(buf, len, "%sof the lines below).\n%s", head, body);
}

/* What is at a CONF_PATH: whether p2pctl may replace or remove it. */
enum conf_state {
	CONF_ABSENT,
	CONF_INTACT,	/* as p2pctl wrote it: the sums match */
	CONF_EDITED,	/* p2pctl's first line, with sums the rest no longer has */
	CONF_OLD,	/* CONF_HEADER without sums: an older p2pctl's, edited or not */
	CONF_FOREIGN,	/* no CONF_HEADER: not p2pctl's */
};

/* The state of the file at @path, or a negative errno where it cannot be read. */
static int conf_state(const char *path)
{
	/* far more than p2pctl writes: a longer file is not as written */
	char buf[4096], head[96];
	const char *nl, *body;
	size_t n;
	FILE *f = fopen(path, "r");
	int err;

	if (!f)
		return errno == ENOENT ? CONF_ABSENT : -errno;
	n = fread(buf, 1, sizeof(buf), f);
	err = ferror(f) ? (errno ? -errno : -EIO) : 0;
	fclose(f);
	if (err)
		return err;
	if (n < strlen(CONF_HEADER) || memcmp(buf, CONF_HEADER, strlen(CONF_HEADER)))
		return CONF_FOREIGN;
	nl = memchr(buf, '\n', n);
	body = nl ? nl + 1 : buf + n;
	conf_header(head, sizeof(head), body, buf + n - body);
	if (n < sizeof(buf) && n >= strlen(head) && !memcmp(buf, head, strlen(head)))
		return CONF_INTACT;
	if (n >= strlen(CONF_HEADER " (cksum ") &&
	    !memcmp(buf, CONF_HEADER " (cksum ", strlen(CONF_HEADER " (cksum ")))
		return CONF_EDITED;
	return CONF_OLD;
}

/*
 * May p2pctl @verb ("overwrite", "remove"; @done: "overwritten", "removed")
 * the file at @path, in @state?  An intact one is p2pctl's own; one edited
 * since, or an older p2pctl's (which may have been), only with --force, lest
 * an administrator's edits go unseen; one p2pctl did not write never.  Says
 * why not; returns the exit status.
 */
static int conf_may(const char *path, int state, bool force, const char *verb, const char *done)
{
	if (state < 0) {
		p2pctl_error("config", "%s: %s", path, p2ps_strerror(state));
		return p2pctl_exit_for(state);
	}
	if (state == CONF_FOREIGN) {
		p2pctl_error("config", "%s: not written by p2pctl config (its first line is not "
			     "\"" CONF_HEADER " ...\"): not %s, even with --force; it is the "
			     "administrator's: move it away by hand", path, done);
		return P2PCTL_EXIT_NOT_MET;
	}
	if (force || state == CONF_ABSENT || state == CONF_INTACT)
		return 0;
	p2pctl_error("config", "%s: %s: not %s; read it (nvidia's options in it may hold "
		     "registry keys), then add --force to %s it", path,
		     state == CONF_EDITED ?
		     "edited since p2pctl config wrote it (the sum on its first line no longer matches)" :
		     "written by an older p2pctl config, which kept no sum, so whether it was edited is unknown",
		     done, verb);
	return P2PCTL_EXIT_NOT_MET;
}

/* The profile for --registry: that of VERSION, or of the loaded driver. */
static int registry_profile(const char *version, const struct p2ps_profile **out)
{
	char ver[64] = "", vers[128];
	FILE *f;

	if (!version) {
		f = fopen("/sys/module/nvidia/version", "r");
		if (!f || !fgets(ver, sizeof(ver), f)) {
			if (f)
				fclose(f);
			return p2pctl_usage("config",
				"--registry: nvidia is not loaded; give its version with --driver-version VERSION");
		}
		fclose(f);
		ver[strcspn(ver, "\n")] = '\0';
		version = ver;
	}
	*out = p2ps_profile_for_version(version);
	if (*out)
		return 0;
	p2ps_supported_versions(vers, sizeof(vers));
	p2pctl_error("config", "--registry: driver %s has no profile (supported: %s)",
		     version, vers);
	return p2pctl_exit_for(-ENOTSUP);
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

/* config --remove: ROOT's CONF_PATH gone, or never there; an edited one only with --force. */
static int remove_conf(const char *path, bool force)
{
	int state = conf_state(path), err = conf_may(path, state, force, "remove", "removed");

	if (err)
		return err;
	if (state == CONF_ABSENT) {
		fprintf(p2pctl_out, "%s: not there, nothing to remove\n", path);
		return 0;
	}
	if (unlink(path)) {
		err = -errno;
		p2pctl_error("config", "%s: %s", path, p2ps_strerror(err));
		return p2pctl_exit_for(err);
	}
	fprintf(p2pctl_out, "removed %s\n"
		"(an initramfs that holds it keeps it until rebuilt: update-initramfs -u, "
		"dracut -f or mkinitcpio -P)\n", path);
	return 0;
}

/* config --write: @text to ROOT's CONF_PATH, over an edited one only with --force. */
static int write_conf(const char *path, const char *text, bool force)
{
	int err = conf_may(path, conf_state(path), force, "overwrite", "overwritten"), fd;
	char tmp[PATH_MAX + 8];
	FILE *f;

	if (err)
		return err;
	/*
	 * Written beside it and renamed over it: a write that fails (a full
	 * disk) leaves the old file whole, not a truncated one that would
	 * read as edited.
	 */
	err = mkdirs(path);
	if (!err && snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		err = -ENAMETOOLONG;
	fd = err ? -1 : mkstemp(tmp);
	if (fd < 0) {
		err = err ? err : -errno;
		p2pctl_error("config", "%s: %s", path, p2ps_strerror(err));
		return p2pctl_exit_for(err);
	}
	f = fdopen(fd, "w");
	if (!f || fputs(text, f) == EOF || fflush(f) || fchmod(fd, 0644) || fsync(fd))
		err = -(errno ? errno : EIO);
	if (f ? fclose(f) : close(fd))
		err = err ? err : -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		p2pctl_error("config", "%s: %s", path, p2ps_strerror(err));
		return p2pctl_exit_for(err);
	}
	fprintf(p2pctl_out, "wrote %s\n", path);
	return 0;
}

int cmd_config(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "write", no_argument, NULL, 'w' },
		{ "remove", no_argument, NULL, 'x' },
		{ "force", no_argument, NULL, 'f' },
		{ "root", required_argument, NULL, 'r' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "registry", no_argument, NULL, 'R' },
		{ "driver-version", required_argument, NULL, 'd' },
		/* internal: --driver-version's old name, kept for scripts */
		{ "driver", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool write = false, registry = false, remove = false, force = false;
	const struct p2ps_profile *profile = NULL;
	const char *root = "", *driver = NULL, *gpus = NULL;
	/* the body (config_text()) and its first line */
	char text[1024 + 32 * 17 + 128], path[PATH_MAX];
	int c, err;

	p2pctl_getopt_reset();
	while ((c = getopt_long(argc, argv, "+wxfr:g:Rd:h", opts, NULL)) != -1) {
		switch (c) {
		case 'w': write = true; break;
		case 'x': remove = true; break;
		case 'f': force = true; break;
		case 'r': root = optarg; break;
		case 'g': gpus = optarg; break;
		case 'R': registry = true; break;
		case 'd': driver = optarg; break;
		case 'h': fputs(help, p2pctl_out); return 0;
		default: return p2pctl_usage("config", "invalid option");
		}
	}
	if (optind < argc)
		return p2pctl_usage("config", "unexpected argument '%s'", argv[optind]);
	if (remove && (write || gpus || registry || driver))
		return p2pctl_usage("config", "--remove takes only --force and --root");
	if (*root && !write && !remove)
		return p2pctl_usage("config", "--root needs --write or --remove");
	if (force && !write && !remove)
		return p2pctl_usage("config", "--force needs --write or --remove");
	if (driver && !registry)
		return p2pctl_usage("config", "--driver-version needs --registry");
	if (gpus && !gpu_list_ok(gpus))
		return p2pctl_usage("config", "--gpus: '%s' is not a list of PCI addresses "
				    "(DDDD:BB:DD.0 or BB:DD.0, comma-separated)", gpus);
	if (gpus && registry)
		return p2pctl_usage("config", "--gpus and --registry: choose one (--gpus scopes the "
				    "keys p2p-shim supplies; --registry writes them for every GPU)");
	if (registry) {
		err = registry_profile(driver, &profile);
		if (err)
			return err;
	}
	if (!strcmp(root, "/"))
		root = "";
	snprintf(path, sizeof(path), "%s%s", root, CONF_PATH);
	if (remove)
		return remove_conf(path, force);
	if (config_text(text, sizeof(text), profile, gpus) >= (int)sizeof(text)) {
		/* gpu_list_ok() bounds the list: a text this long is a bug here */
		p2pctl_error("config", "internal error: configuration text too long");
		return P2PCTL_EXIT_NOT_MET;
	}
	if (!write) {
		fputs(text, p2pctl_out);
		return 0;
	}
	return write_conf(path, text, force);
}
