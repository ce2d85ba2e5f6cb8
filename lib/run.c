// SPDX-License-Identifier: GPL-2.0
/* libp2pshim: programs run under a deadline, their output capped (p2ps_run()). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <unistd.h>

#include <zlib.h>

#include "internal.h"

int p2ps_run_timeout_ms(void)
{
	const char *e = getenv("P2PCTL_CMD_TIMEOUT");
	char *end;
	double v;

	if (e && *e) {
		v = strtod(e, &end);
		if (!*end && v > 0 && v <= 3600)
			return (int)(v * 1000);
	}
	return P2PS_RUN_TIMEOUT_MS;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reap @pid within @ms; its wait status, or -1 if it is still there. */
static int reap(pid_t pid, int ms)
{
	long long end = now_ms() + ms;
	int st;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			return st;
		if (w < 0 && errno != EINTR)
			return -1;
		if (now_ms() >= end)
			return -1;
		usleep(10000);
	}
}

int p2ps_run(char *const argv[], int timeout_ms, size_t cap, bool merge_err, char **out)
{
	int pfd[2], efd[2], st = 0, child_errno = 0;
	long long end = now_ms() + timeout_ms;
	size_t len = 0;
	char *buf;
	bool timed_out = false;
	int reaped = -1;
	pid_t pid;

	*out = NULL;
	buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	if (pipe2(pfd, O_CLOEXEC)) {
		free(buf);
		return -errno;
	}
	if (pipe2(efd, O_CLOEXEC)) {
		close(pfd[0]);
		close(pfd[1]);
		free(buf);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(pfd[0]);
		close(pfd[1]);
		close(efd[0]);
		close(efd[1]);
		free(buf);
		return -e;
	}
	if (!pid) {
		int nul = open("/dev/null", O_RDWR);

		setpgid(0, 0);		/* its own group: a timeout kills its children too */
		if (nul >= 0)
			dup2(nul, 0);
		dup2(pfd[1], 1);
		if (merge_err)
			dup2(pfd[1], 2);
		else if (nul >= 0)
			dup2(nul, 2);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		child_errno = errno;
		if (write(efd[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(127);
		_exit(127);
	}
	setpgid(pid, pid);
	close(pfd[1]);
	close(efd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	fcntl(efd[0], F_SETFL, O_NONBLOCK);
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		long long left = end - now_ms();
		char chunk[4096];
		ssize_t n;
		int k;

		if (reaped < 0 && waitpid(pid, &st, WNOHANG) == pid)
			reaped = 1;	/* gone: take what is in the pipe, then stop */
		if (left <= 0 && reaped < 0) {
			timed_out = true;
			break;
		}
		k = reaped > 0 ? 1 : poll(&p, 1, (int)(left > 100 ? 100 : left));
		if (k < 0 && errno != EINTR)
			break;
		if (k <= 0)
			continue;
		n = read(pfd[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;		/* EOF, or nothing left after its exit */
		if (len < cap) {
			size_t take = (size_t)n < cap - len ? (size_t)n : cap - len;

			memcpy(buf + len, chunk, take);
			len += take;
		}
	}
	close(pfd[0]);
	if (read(efd[0], &child_errno, sizeof(child_errno)) != (ssize_t)sizeof(child_errno))
		child_errno = 0;
	close(efd[0]);
	buf[len] = '\0';
	if (!timed_out && reaped < 0) {
		long long left = end - now_ms();

		st = reap(pid, left > 0 ? (int)left : 0);
		if (st == -1)
			timed_out = true;
	}
	if (timed_out) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		/* One stuck in the kernel (a GPU off the bus) may never go: leave it. */
		reap(pid, 1000);
		*out = buf;
		return -ETIMEDOUT;
	}
	kill(-pid, SIGKILL);	/* what it left behind in its group */
	if (child_errno) {
		free(buf);
		return -child_errno;
	}
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void p2ps_run_describe(int rc, int timeout_ms, char *buf, size_t len)
{
	if (rc == -ETIMEDOUT)
		snprintf(buf, len, "timed out after %g s (killed)", timeout_ms / 1000.0);
	else if (rc == -ENOENT)
		snprintf(buf, len, "not found");
	else if (rc < 0)
		snprintf(buf, len, "could not run: %s", strerror(-rc));
	else if (rc >= 128)
		snprintf(buf, len, "killed by signal %d", rc - 128);
	else
		snprintf(buf, len, "exit status %d", rc);
}
