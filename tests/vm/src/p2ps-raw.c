// SPDX-License-Identifier: GPL-2.0
/*
 * Raw ioctls on /dev/p2p-shim, for VM cases that test the module's
 * argument checking below what libp2pshim would ever send.
 *
 *   p2ps-raw [-u UID] version|status|disable
 *   p2ps-raw -u UID exec CMD [ARG...]    run CMD as UID (no other change)
 *   p2ps-raw [-u UID] enable [FLAGS]
 *   p2ps-raw badsize version|status|enable|disable
 *   p2ps-raw badflags | badpad | badcmd | nullarg
 *
 * Prints "rc=<0 or errno name>" and the returned fields as key=value.
 * Exit status 0 if the ioctl succeeded, 1 if it failed, 2 on usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <p2p-shim/uapi.h>

static int report(int ret)
{
	if (ret == 0) {
		printf("rc=0\n");
		return 0;
	}
	printf("rc=%s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
	return 1;
}

static unsigned long cmd_of(const char *name)
{
	if (!strcmp(name, "version"))
		return P2PS_IOC_VERSION;
	if (!strcmp(name, "status"))
		return P2PS_IOC_STATUS;
	if (!strcmp(name, "enable"))
		return P2PS_IOC_ENABLE;
	if (!strcmp(name, "disable"))
		return P2PS_IOC_DISABLE;
	return 0;
}

int main(int argc, char **argv)
{
	int fd, ret, argi = 1;

	if (argc > 2 && !strcmp(argv[1], "-u")) {
		if (setgid(atoi(argv[2])) || setuid(atoi(argv[2]))) {
			perror("setuid");
			return 2;
		}
		argi = 3;
	}
	if (argi >= argc)
		return 2;
	if (!strcmp(argv[argi], "exec") && argi + 1 < argc) {
		execvp(argv[argi + 1], argv + argi + 1);
		perror("exec");
		return 2;
	}
	fd = open("/dev/" P2PS_DEVICE_NAME, O_RDONLY);
	if (fd < 0) {
		perror("open /dev/" P2PS_DEVICE_NAME);
		return 1;
	}
	const char *what = argv[argi];

	if (!strcmp(what, "version")) {
		struct p2ps_version v = { .size = sizeof(v) };

		ret = report(ioctl(fd, P2PS_IOC_VERSION, &v));
		if (!ret)
			printf("abi=%u module=%s\n", v.abi, v.module);
	} else if (!strcmp(what, "status")) {
		struct p2ps_status s = { .size = sizeof(s) };

		ret = report(ioctl(fd, P2PS_IOC_STATUS, &s));
		if (!ret)
			printf("state=%u flags=%u hooks=%u live=%u stale=0x%x hits=%llu driver=%s profile=%s\n",
			       s.state, s.flags, s.hooks, s.live_mappings, s.stale_gpus,
			       (unsigned long long)s.hits, s.driver_version, s.profile);
	} else if (!strcmp(what, "enable")) {
		struct p2ps_enable e = { .size = sizeof(e) };

		if (argi + 1 < argc)
			e.flags = strtoul(argv[argi + 1], NULL, 0);
		ret = report(ioctl(fd, P2PS_IOC_ENABLE, &e));
		printf("state=%u target=%s reason=%s\n", e.state, e.target, e.reason);
	} else if (!strcmp(what, "disable")) {
		struct p2ps_disable d = { .size = sizeof(d) };

		ret = report(ioctl(fd, P2PS_IOC_DISABLE, &d));
		printf("reason=%s\n", d.reason);
	} else if (!strcmp(what, "badsize") && argi + 1 < argc) {
		unsigned char buf[1024] = { 0 };
		unsigned int size = 7;

		memcpy(buf, &size, sizeof(size));
		ret = report(ioctl(fd, cmd_of(argv[argi + 1]), buf));
	} else if (!strcmp(what, "badflags")) {
		struct p2ps_enable e = { .size = sizeof(e), .flags = 0x80 };

		ret = report(ioctl(fd, P2PS_IOC_ENABLE, &e));
	} else if (!strcmp(what, "badpad")) {
		struct p2ps_enable e = { .size = sizeof(e), .pad = 1 };

		ret = report(ioctl(fd, P2PS_IOC_ENABLE, &e));
	} else if (!strcmp(what, "badcmd")) {
		ret = report(ioctl(fd, _IOWR(P2PS_IOC_MAGIC, 0x7f, struct p2ps_status), NULL));
	} else if (!strcmp(what, "nullarg")) {
		ret = report(ioctl(fd, P2PS_IOC_STATUS, NULL));
	} else {
		fprintf(stderr, "p2ps-raw: unknown request '%s'\n", what);
		ret = 2;
	}
	close(fd);
	return ret;
}
