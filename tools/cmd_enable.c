// SPDX-License-Identifier: GPL-2.0
/* p2pctl enable */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "p2pctl.h"

static const char help[] =
	"Usage: p2pctl enable [--dry-run] [--force] [--wait SECONDS]\n\n"
	"Arm p2p-shim: resolve and check every target of the profile for the loaded\n"
	"nvidia driver, then install the hooks.  If nvidia is not loaded yet, the\n"
	"module waits and arms when it arrives.  Needs CAP_SYS_ADMIN.\n\n"
	"  -n, --dry-run  install counting probes only; change nothing\n"
	"  -f, --force    use the newest profile for an unknown driver version\n"
	"  -W, --wait SECONDS\n"
	"                 then wait until no GPU is stale (initialised before\n"
	"                 arming, so without BAR1 P2P until it re-initialises);\n"
	"                 exit status 1 if some still are after SECONDS\n"
	"  -h, --help     this help\n\n"
	"On failure the module's failing target and reason are printed.  Armed,\n"
	"it names the stale GPUs the module knows of (a GPU is known stale once\n"
	"the driver asks about its P2P after arming).\n\n"
	P2PCTL_EXIT_CODES_HELP;

/* The module's stale GPUs now (P2PS_IOC_STATUS), or -errno. */
static int stale_now(struct p2ps_handle *h, uint32_t *mask)
{
	struct p2ps_status_info *st;
	int err = p2ps_status(h, &st);

	if (err)
		return err;
	*mask = st->stale_gpus;
	p2ps_status_free(st);
	return 0;
}

static void print_mask(FILE *f, uint32_t mask)
{
	for (unsigned int i = 0, n = 0; i < 32; i++)
		if (mask & (1u << i))
			fprintf(f, "%sGPU%u", n++ ? ", " : "", i);
}

/*
 * Armed: say which GPUs will not have BAR1 P2P yet (they initialised
 * before arming), and with @wait (seconds, or < 0) wait for them to
 * re-initialise.  Exit status 1 if some are still stale after it.
 */
static int stale_gpus(struct p2ps_handle *h, double wait)
{
	struct timespec t0, now, nap = { 0, 200 * 1000 * 1000 };
	uint32_t mask = 0;
	int err = stale_now(h, &mask);

	if (err) {
		p2pctl_error("enable", "armed, but its state cannot be read: %s", p2ps_strerror(err));
		return p2pctl_exit_for(err);
	}
	if (mask) {
		fprintf(p2pctl_out, "stale GPUs: ");
		print_mask(p2pctl_out, mask);
		fprintf(p2pctl_out, ": initialised before arming; no BAR1 P2P until they "
			"re-initialise (stop their users and nvidia-persistenced, or reload nvidia)\n");
	}
	if (wait < 0)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (!mask) {
			fprintf(p2pctl_out, "stale GPUs: none\n");
			return 0;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 >= wait)
			break;
		nanosleep(&nap, NULL);
		err = stale_now(h, &mask);
		if (err) {
			p2pctl_error("enable", "--wait: %s", p2ps_strerror(err));
			return p2pctl_exit_for(err);
		}
	}
	fprintf(p2pctl_err, "p2pctl: enable: --wait: still stale after %g s: ", wait);
	print_mask(p2pctl_err, mask);
	fputc('\n', p2pctl_err);
	return P2PCTL_EXIT_NOT_MET;
}

int cmd_enable(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "force", no_argument, NULL, 'f' },
		{ "wait", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct p2ps_enable_result res;
	struct p2ps_handle *h;
	uint32_t flags = 0;
	double wait = -1;
	char *end;
	int c, err, rc;

	p2pctl_getopt_reset();
	while ((c = getopt_long(argc, argv, "+nfW:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': flags |= P2PS_ENABLE_DRY_RUN; break;
		case 'f': flags |= P2PS_ENABLE_FORCE; break;
		case 'W':
			wait = strtod(optarg, &end);
			if (!*optarg || *end || !(wait >= 0) || wait > 86400)
				return p2pctl_usage("enable", "--wait '%s': seconds, 0 to 86400", optarg);
			break;
		case 'h': fputs(help, p2pctl_out); return 0;
		default: return p2pctl_usage("enable", "invalid option");
		}
	}
	if (optind < argc)
		return p2pctl_usage("enable", "unexpected argument '%s'", argv[optind]);
	if (wait >= 0 && (flags & P2PS_ENABLE_DRY_RUN))
		return p2pctl_usage("enable", "--wait and --dry-run: a dry run changes no GPU");
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
	rc = 0;
	if (res.state == P2PS_STATE_ARMED && !(flags & P2PS_ENABLE_DRY_RUN))
		rc = stale_gpus(h, wait);
	else if (wait >= 0)
		fprintf(p2pctl_out, "--wait: nothing to wait for (not armed: no GPU can be stale)\n");
	p2ps_close(h);
	return rc;
}
