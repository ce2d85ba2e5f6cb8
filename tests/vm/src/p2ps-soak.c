// SPDX-License-Identifier: GPL-2.0
/*
 * The moving parts of the soak and fault cases.
 *
 *   p2ps-soak [-d SECS] [-p FILE] cycle N [FLAGS]
 *                               N enable/disable cycles, or as many as fit
 *                               in SECS seconds (-d), whichever is fewer
 *                               (the count done is printed: cycles=; and
 *                               disable_own_s=, the disables' time without
 *                               the EBUSY waits); with -p, FILE exists
 *                               while a disable is refused, so that the
 *                               churn can hold off; a disable refused
 *                               with EBUSY (live mappings) is retried and
 *                               counted; enable may only fail with EALREADY
 *                               (never here) or, with -r, with the errors of
 *                               a driver that is coming or going
 *   p2ps-soak poll-ioctl        P2PS_IOC_STATUS in a loop
 *   p2ps-soak poll-nl           GET_STATUS and both dumps in a loop
 *   p2ps-soak events            follow the events group
 *   p2ps-soak asuser UID CMD... run CMD as UID (setgid, setgroups(0), setuid)
 *
 * The pollers run until SIGTERM or SIGINT, then print their counts; they
 * sleep 5 ms between rounds (a monitor, not a spinner: the VM has one CPU).
 * Every answer is checked for sanity (state in range, dumps that end in
 * NLMSG_DONE, events that carry P2PS_A_EVENT); exit 1 on any failure.
 * -r: a racing driver; enable may also return EOPNOTSUPP/ENOENT/EILSEQ, or
 * EAGAIN (residual, between nvidia's exit and its GOING notification), and
 * disable is not required to find the module armed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <grp.h>
#include <unistd.h>

#include "p2ps-nl.h"
#include "testutil.h"

static volatile sig_atomic_t stop;
static unsigned int interval_us = 5000;	/* between polls: a monitor, not a spinner */

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int open_dev(void)
{
	int fd = open("/dev/" P2PS_DEVICE_NAME, O_RDONLY);

	if (fd < 0) {
		perror("open /dev/" P2PS_DEVICE_NAME);
		exit(2);
	}
	return fd;
}

static int status(int fd, struct p2ps_status *s)
{
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	return ioctl(fd, P2PS_IOC_STATUS, s) ? -errno : 0;
}

static const char *pause_file;

/* While a disable waits out EBUSY, PAUSE_FILE exists (churners hold off). */
static void set_pause(int on)
{
	if (!pause_file)
		return;
	if (on)
		close(open(pause_file, O_WRONLY | O_CREAT, 0644));
	else
		unlink(pause_file);
}

static int cycle(unsigned long n, unsigned int flags, int racing, double deadline)
{
	unsigned long i, busy = 0, enable_err[200] = { 0 }, armed = 0, waiting = 0;
	double t0 = now(), worst = 0, t_en = 0, t_dis = 0, t_own = 0;
	int fd = open_dev(), e;

	for (i = 0; i < n && !(deadline > 0 && now() - t0 >= deadline); i++) {
		struct p2ps_enable en = { .size = sizeof(en), .flags = flags };
		struct p2ps_disable d = { .size = sizeof(d) };
		double c0 = now(), dt;
		int ret;

		ret = ioctl(fd, P2PS_IOC_ENABLE, &en) ? errno : 0;
		t_en += now() - c0;
		enable_err[ret < 200 ? ret : 199]++;
		if (ret && !(racing && (ret == EOPNOTSUPP || ret == ENOENT || ret == EILSEQ || ret == EAGAIN)))
			FAILF("cycle %lu: enable %s: %s %s\n", i, strerrorname_np(ret), en.target,
			      en.reason);
		if (!ret && (en.state == P2PS_STATE_ARMED || en.state == P2PS_STATE_DRY_RUN))
			armed++;
		else if (!ret && en.state == P2PS_STATE_WAITING)
			waiting++;
		else if (!ret && !racing)
			FAILF("cycle %lu: enabled in state %u\n", i, en.state);
		dt = now();
		for (;;) {
			double d0 = now();

			ret = ioctl(fd, P2PS_IOC_DISABLE, &d) ? errno : 0;
			if (ret != EBUSY) {
				/* The disable's own cost, without waiting out EBUSY. */
				t_own += now() - d0;
				break;
			}
			busy++;
			set_pause(1);
			if (now() - c0 > 20) {
				FAILF("cycle %lu: disable busy for 20 s: %s\n", i, d.reason);
				break;
			}
			usleep(10000);	/* each refusal is logged: do not flood */
		}
		set_pause(0);
		if (ret)
			FAILF("cycle %lu: disable %s\n", i, strerrorname_np(ret));
		t_dis += now() - dt;
		dt = now() - c0;
		if (dt > worst)
			worst = dt;
	}
	printf("cycles=%lu armed=%lu waiting=%lu disable_ebusy=%lu seconds=%.2f worst_cycle=%.3f "
	       "enable_s=%.2f disable_s=%.2f disable_own_s=%.2f\n", i, armed, waiting, busy,
	       now() - t0, worst, t_en, t_dis, t_own);
	printf("enable results:");
	for (e = 0; e < 200; e++)
		if (enable_err[e])
			printf(" %s=%lu", e ? strerrorname_np(e) ?: "?" : "ok", enable_err[e]);
	printf("\nfailures=%lu\n", failures);
	return failures ? 1 : 0;
}

static int poll_ioctl(void)
{
	unsigned long n = 0, by_state[P2PS_STATE_RESIDUAL + 1] = { 0 };
	int fd = open_dev();
	struct p2ps_status s;
	int ret;

	while (!stop) {
		ret = status(fd, &s);
		if (ret)
			FAILF("status: %s\n", strerrorname_np(-ret));
		else if (s.state > P2PS_STATE_RESIDUAL)
			FAILF("status: state %u\n", s.state);
		else
			by_state[s.state]++;
		n++;
		usleep(interval_us);
	}
	printf("poll-ioctl: calls=%lu disabled=%lu waiting=%lu armed=%lu dry=%lu residual=%lu failures=%lu\n",
	       n, by_state[0], by_state[1], by_state[2], by_state[3], by_state[4], failures);
	return failures ? 1 : 0;
}

static int poll_nl(void)
{
	unsigned long n = 0, hooks = 0, maps = 0;
	struct pnl nl;
	int ret = pnl_open(&nl), h, m;

	if (ret) {
		fprintf(stderr, "resolve: %s\n", strerror(-ret));
		return 2;
	}
	while (!stop) {
		if (!pnl_status_ok(&nl))
			FAILF("GET_STATUS round %lu\n", n);
		h = pnl_dump(&nl, P2PS_CMD_GET_HOOKS);
		m = pnl_dump(&nl, P2PS_CMD_GET_MAPPINGS);
		if (h < 0 || m < 0)
			FAILF("dump round %lu: hooks %d mappings %d\n", n, h, m);
		hooks += h > 0 ? (unsigned long)h : 0;
		maps += m > 0 ? (unsigned long)m : 0;
		n++;
		usleep(interval_us);
	}
	printf("poll-nl: rounds=%lu (status + 2 dumps each) hook_msgs=%lu mapping_msgs=%lu failures=%lu\n",
	       n, hooks, maps, failures);
	return failures ? 1 : 0;
}

static int events(void)
{
	static unsigned char buf[65536];
	static const char *const ev[] = { "?", "armed", "disarmed", "driver_arrived",
					  "driver_left", "mapping_created", "mapping_removed",
					  "refused" };
	unsigned long count[8] = { 0 }, total = 0, overruns = 0;
	struct pnl nl;
	int ret = pnl_open(&nl), grp, i;

	if (ret) {
		fprintf(stderr, "resolve: %s\n", strerror(-ret));
		return 2;
	}
	grp = (int)nl.events_group;
	if (setsockopt(nl.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp)))
		return perror("join events"), 2;
	while (!stop) {
		struct pollfd p = { .fd = nl.fd, .events = POLLIN };
		ssize_t r;
		size_t left;
		unsigned char *q;

		if (poll(&p, 1, 200) <= 0)
			continue;
		r = recv(nl.fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r < 0) {
			if (errno == ENOBUFS)
				overruns++;	/* multicast overran the socket: allowed, counted */
			else if (errno != EAGAIN && errno != EINTR)
				FAILF("recv: %s\n", strerror(errno));
			continue;
		}
		for (q = buf, left = (size_t)r; left >= NLMSG_HDRLEN;) {
			struct nlmsghdr *h = (struct nlmsghdr *)q;
			int evt = -1;

			if (h->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN || h->nlmsg_len > left) {
				FAILF("malformed event message\n");
				break;
			}
			PNL_FOR_ATTR(q + NLMSG_HDRLEN + GENL_HDRLEN,
				     h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, {
				if (type == P2PS_A_EVENT && plen == 4)
					memcpy(&evt, pl, 4);
			});
			if (h->nlmsg_type != nl.family || evt < 1 || evt > 7)
				FAILF("event without a valid P2PS_A_EVENT (%d)\n", evt);
			else
				count[evt]++;
			total++;
			if (NLMSG_ALIGN(h->nlmsg_len) >= left)
				break;
			q += NLMSG_ALIGN(h->nlmsg_len);
			left -= NLMSG_ALIGN(h->nlmsg_len);
		}
	}
	printf("events: total=%lu", total);
	for (i = 1; i < 8; i++)
		printf(" %s=%lu", ev[i], count[i]);
	printf(" overruns=%lu failures=%lu\n", overruns, failures);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int racing = 0, argi = 1;
	double deadline = 0;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (;;) {
		if (argi < argc && !strcmp(argv[argi], "-r")) {
			racing = 1;
			argi++;
		} else if (argi + 1 < argc && !strcmp(argv[argi], "-p")) {
			pause_file = argv[argi + 1];
			argi += 2;
		} else if (argi + 1 < argc && !strcmp(argv[argi], "-d")) {
			deadline = strtod(argv[argi + 1], NULL);
			argi += 2;
		} else {
			break;
		}
	}
	if (argi >= argc)
		goto usage;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[argi], "cycle") && argi + 1 < argc)
		return cycle(strtoul(argv[argi + 1], NULL, 0),
			     argi + 2 < argc ? (unsigned int)strtoul(argv[argi + 2], NULL, 0) : 0,
			     racing, deadline);
	if (!strcmp(argv[argi], "poll-ioctl"))
		return poll_ioctl();
	if (!strcmp(argv[argi], "poll-nl"))
		return poll_nl();
	if (!strcmp(argv[argi], "events"))
		return events();
	if (!strcmp(argv[argi], "asuser") && argi + 2 < argc) {
		uid_t uid = (uid_t)strtoul(argv[argi + 1], NULL, 0);

		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			return perror("asuser"), 2;
		execvp(argv[argi + 2], argv + argi + 2);
		perror(argv[argi + 2]);
		return 127;
	}
usage:
	fprintf(stderr, "usage: p2ps-soak [-r] [-d SECS] [-p FILE] cycle N [FLAGS] | poll-ioctl | poll-nl | events | asuser UID CMD...\n");
	return 2;
}
