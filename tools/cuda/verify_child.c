// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's second processes, seen from verify: the ipc and procs
 * tests' (verify --ipc-child), the car test's rank 1 (--car-child) and the
 * nccl test's ranks (--nccl-child). Each is p2pctl itself (or $P2PCTL_SELF)
 * with its stdout and stderr on one pipe; verify reads that under a
 * deadline, and a child that misses it is killed with SIGKILL and reaped,
 * so no test waits on a child for good. What the user is told about a child
 * (its test, its GPU, the likely cause) is up to the test: these only say
 * how the child ended. Last, the child's own way out of a stuck context.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "verify.h"

extern char **environ;

/* The GPU handles a child's spec carries: n bytes as 2n hex digits. */
void vhex(char *out, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", ((const uint8_t *)p)[i]);
}

int vunhex(void *p, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned x;

		if (sscanf(s + 2 * i, "%2x", &x) != 1)
			return -1;
		((uint8_t *)p)[i] = (uint8_t)x;
	}
	return 0;
}

/*
 * Start PROGRAM verify OPT SPEC (p2pctl itself, or $P2PCTL_SELF) into c, its
 * stdout and stderr into c->fd. 0, or -1 with t failed (no child to reap).
 */
int vchild_start(struct vtest *t, const char *opt, const char *spec, struct vchild *c)
{
	const char *self = getenv("P2PCTL_SELF");
	char *argv[] = { NULL, "verify", (char *)opt, (char *)spec, NULL };
	posix_spawn_file_actions_t fa;
	int p[2], st;

	c->fd = -1;
	c->got = 0;
	c->buf[0] = '\0';
	c->killed = 0;
	c->status = 0;
	argv[0] = (char *)(self && *self ? self : "/proc/self/exe");
	if (pipe(p)) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	st = posix_spawn(&c->pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (st) {
		close(p[0]);
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "cannot start the second process %s: %s", argv[0],
			 strerror(st));
		return -1;
	}
	c->fd = p[0];
	return 0;
}

/* c has ended (or is made to): close its pipe, wait for it, keep its status. */
static void vchild_reap(struct vchild *c)
{
	close(c->fd);
	c->fd = -1;
	waitpid(c->pid, &c->status, 0);
}

/*
 * One read of c's output into c->buf, kept NUL-terminated. At the output's
 * end (EOF or a read error) c is reaped. What read() returned.
 */
ssize_t vchild_take(struct vchild *c)
{
	ssize_t k = read(c->fd, c->buf + c->got, sizeof(c->buf) - 1 - c->got);

	if (k > 0)
		c->got += (size_t)k;
	c->buf[c->got] = '\0';
	if (k <= 0)
		vchild_reap(c);
	return k;
}

/* A deadline passed: SIGKILL c and reap it (nothing if it has ended). */
void vchild_kill(struct vchild *c)
{
	if (c->fd < 0)
		return;
	kill(c->pid, SIGKILL);
	vchild_reap(c);
	c->killed = 1;
}

/*
 * Read c's output until until appears in it (NULL: until c ends; c is then
 * reaped, its status in c->status) or the deadline end (now_s()) passes.
 * A full buffer counts as the end: c is reaped as well.
 *   0   until appeared (c may still run), or, with until NULL, c ended
 *   1   c ended without until
 *  -1   the deadline passed (or poll failed, as on a signal): c was killed
 *       and reaped, c->killed set
 * Nothing is said to the user here: the caller names the child and the
 * likely cause.
 */
int vchild_read(struct vchild *c, const char *until, double end)
{
	for (;;) {
		struct pollfd p = { c->fd, POLLIN, 0 };
		int left = (int)((end - now_s()) * 1000);

		if (until && strstr(c->buf, until))
			return 0;
		if (c->fd < 0)
			return until ? 1 : 0;
		if (left <= 0 || poll(&p, 1, left) <= 0) {
			vchild_kill(c);
			return -1;
		}
		if (vchild_take(c) <= 0 || c->got >= sizeof(c->buf) - 1) {
			if (c->fd >= 0)
				vchild_reap(c);
			return until && !strstr(c->buf, until) ? 1 : 0;
		}
	}
}

/*
 * In a second process: a wait ran past its deadline, its line is in out.
 * End now, P2P_EXIT_FAIL, without tearing the stuck context down (that could
 * block for good) and without exit handlers; verify reads the line.
 */
_Noreturn void vchild_stuck(FILE *out)
{
	fflush(out);
	_exit(P2P_EXIT_FAIL);
}
