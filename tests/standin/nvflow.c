// SPDX-License-Identifier: GPL-2.0
/*
 * nvflow: drive the stand-in nvidia.ko's flows from userspace.
 *
 * Each command is written to /sys/kernel/debug/nvidia-standin/ctl and the
 * driver's key=value answer is printed as is.  Exit status: 0 success,
 * 1 the driver returned an error status (status=0x... line not 0x0),
 * 2 usage error or a request the driver could not parse.
 *
 * Hold points (docs/standin.md, "Locking and hold points") go to
 * /sys/kernel/debug/nvidia-standin/hold instead: hold, release, held,
 * wait-held.  A flow to run while another is parked is simply started in
 * the background (`nvflow create 0 1 &`).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CTL_PATH	"/sys/kernel/debug/nvidia-standin/ctl"
#define STUBS_PATH	"/sys/kernel/debug/nvidia-standin/stubs"
#define HOLD_PATH	"/sys/kernel/debug/nvidia-standin/hold"

static const char usage_text[] =
	"usage: nvflow caps A B\n"
	"       nvflow create A B [--type pcie|pcie_bar1|nvlink|nvlink_indirect|c2c]\n"
	"       nvflow map OBJ OFFSET PAGESIZE rm|uvm\n"
	"       nvflow unmap MAP\n"
	"       nvflow destroy OBJ\n"
	"       nvflow reinit GPU\n"
	"       nvflow reinit-unseen GPU   (its P2P objects torn down where no hook sees it)\n"
	"       nvflow local GPU OFFSET PAGESIZE\n"
	"       nvflow sysmem GPU ADDR PAGESIZE\n"
	"       nvflow bar1map GPU OFFSET SIZE contig|noncontig\n"
	"       nvflow bar1unmap GPU BAR1OFFSET SIZE\n"
	"       nvflow alloc GPU SIZE plain|compressed\n"
	"       nvflow window A B OFFSET LENGTH PAGESIZE\n"
	"                                (a BAR1 P2P window of B's vidmem for A)\n"
	"       nvflow winfree WINDOW    (the driver's own free of it)\n"
	"       nvflow winsoak A B LENGTH PAGESIZE N\n"
	"       nvflow state\n"
	"       nvflow stubs\n"
	"       nvflow bench A B N\n"
	"       nvflow hold POINT        (attach, caps, create, pte, sb1)\n"
	"       nvflow release POINT|all\n"
	"       nvflow held [POINT]      (the hold file, or POINT's line)\n"
	"       nvflow wait-held POINT [N [SECONDS]]\n"
	"                                (until N calls (1) are parked at POINT;\n"
	"                                 exit 1 after SECONDS (10))\n";

static int usage(void)
{
	fputs(usage_text, stderr);
	return 2;
}

static int is_number(const char *s)
{
	char *end;

	if (!*s || *s == '-')
		return 0;
	errno = 0;
	(void)strtoull(s, &end, 0);
	return !errno && !*end;
}

/* Which arguments after the command must be numbers, by command. */
static int check_args(int argc, char **argv)
{
	static const struct {
		const char *cmd;
		int nargs;
		int nnum;	/* leading numeric arguments */
	} cmds[] = {
		{ "caps", 2, 2 }, { "create", 2, 2 }, { "map", 4, 3 },
		{ "unmap", 1, 1 }, { "destroy", 1, 1 }, { "reinit", 1, 1 }, { "reinit-unseen", 1, 1 },
		{ "local", 3, 3 }, { "sysmem", 3, 3 }, { "state", 0, 0 },
		{ "bench", 3, 3 }, { "bar1map", 4, 3 }, { "bar1unmap", 3, 3 },
		{ "alloc", 3, 2 }, { "window", 5, 5 }, { "winfree", 1, 1 },
		{ "winsoak", 5, 5 },
	};
	size_t i;
	int j;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(argv[0], cmds[i].cmd))
			continue;
		if (!strcmp(argv[0], "create") && argc == 5 &&
		    !strcmp(argv[3], "--type"))
			argc = 3;
		if (argc - 1 != cmds[i].nargs)
			return -1;
		for (j = 1; j <= cmds[i].nnum; j++)
			if (!is_number(argv[j]))
				return -1;
		if (!strcmp(argv[0], "map") && strcmp(argv[4], "rm") &&
		    strcmp(argv[4], "uvm"))
			return -1;
		if (!strcmp(argv[0], "bar1map") && strcmp(argv[4], "contig") &&
		    strcmp(argv[4], "noncontig"))
			return -1;
		if (!strcmp(argv[0], "alloc") && strcmp(argv[3], "plain") &&
		    strcmp(argv[3], "compressed"))
			return -1;
		return 0;
	}
	return -1;
}

static int cat_file(const char *path)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		fprintf(stderr, "nvflow: %s: %s\n", path, strerror(errno));
		return 2;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, n, stdout);
	close(fd);
	return 0;
}

/* POINT's line of the hold file into @line, or -1. */
static int hold_line(const char *point, char *line, size_t size)
{
	char buf[2048], *l, *save;
	size_t plen = strlen(point);
	ssize_t n;
	int fd = open(HOLD_PATH, O_RDONLY);

	if (fd < 0) {
		fprintf(stderr, "nvflow: %s: %s (is the stand-in loaded?)\n", HOLD_PATH,
			strerror(errno));
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	for (l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(l, point, plen) && l[plen] == ' ') {
			snprintf(line, size, "%s", l);
			return 0;
		}
	}
	fprintf(stderr, "nvflow: no hold point '%s'\n", point);
	return -1;
}

static long parked_of(const char *line)
{
	const char *p = strstr(line, " parked=");

	return p ? strtol(p + 8, NULL, 10) : -1;
}

static int hold_cmd(int argc, char **argv)
{
	char line[256];
	int fd;

	if (!strcmp(argv[1], "held")) {
		if (argc == 2)
			return cat_file(HOLD_PATH);
		if (argc != 3 || hold_line(argv[2], line, sizeof(line)))
			return 2;
		puts(line);
		return 0;
	}
	if (!strcmp(argv[1], "wait-held")) {
		long want = 1, secs = 10, i;

		if (argc < 3 || argc > 5 || (argc > 3 && !is_number(argv[3])) ||
		    (argc > 4 && !is_number(argv[4])))
			return usage();
		if (argc > 3)
			want = strtol(argv[3], NULL, 0);
		if (argc > 4)
			secs = strtol(argv[4], NULL, 0);
		for (i = 0; i <= secs * 20; i++) {
			struct timespec ts = { 0, 50 * 1000 * 1000 };

			if (hold_line(argv[2], line, sizeof(line)))
				return 2;
			if (parked_of(line) >= want) {
				puts(line);
				return 0;
			}
			nanosleep(&ts, NULL);
		}
		fprintf(stderr, "nvflow: fewer than %ld calls parked at %s after %ld s: %s\n",
			want, argv[2], secs, line);
		return 1;
	}
	/* hold POINT, release POINT */
	if (argc != 3)
		return usage();
	snprintf(line, sizeof(line), "%s %s\n", argv[1], argv[2]);
	fd = open(HOLD_PATH, O_WRONLY);
	if (fd < 0 || write(fd, line, strlen(line)) < 0) {
		fprintf(stderr, "nvflow: %s %s: %s\n", argv[1], argv[2], strerror(errno));
		if (fd >= 0)
			close(fd);
		return 2;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	char cmd[256], resp[8192];
	size_t len = 0;
	ssize_t n;
	int fd, i, rc = 0;
	char *line;

	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "stubs") && argc == 2)
		return cat_file(STUBS_PATH);
	if (!strcmp(argv[1], "hold") || !strcmp(argv[1], "release") ||
	    !strcmp(argv[1], "held") || !strcmp(argv[1], "wait-held"))
		return hold_cmd(argc, argv);
	if (check_args(argc - 1, argv + 1))
		return usage();

	cmd[0] = '\0';
	for (i = 1; i < argc; i++) {
		if (strlen(cmd) + strlen(argv[i]) + 2 > sizeof(cmd))
			return usage();
		strcat(cmd, argv[i]);
		strcat(cmd, i + 1 < argc ? " " : "\n");
	}

	fd = open(CTL_PATH, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "nvflow: %s: %s (is the stand-in loaded?)\n",
			CTL_PATH, strerror(errno));
		return 2;
	}
	if (write(fd, cmd, strlen(cmd)) < 0) {
		fprintf(stderr, "nvflow: %s", errno == ENOENT ?
			"no such object or mapping\n" : errno == ENODEV ?
			"no such GPU\n" : "");
		if (errno != ENOENT && errno != ENODEV)
			fprintf(stderr, "%s\n", strerror(errno));
		printf("error=%s\n", strerror(errno));
		close(fd);
		return 2;
	}
	while (len < sizeof(resp) - 1 &&
	       (n = read(fd, resp + len, sizeof(resp) - 1 - len)) > 0)
		len += n;
	close(fd);
	resp[len] = '\0';
	fputs(resp, stdout);

	/* Exit 1 when the driver's status is not NV_OK. */
	for (line = strtok(resp, "\n"); line; line = strtok(NULL, "\n"))
		if (!strncmp(line, "status=", 7) && strcmp(line, "status=0x0"))
			rc = 1;
	return rc;
}
