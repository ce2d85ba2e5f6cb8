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
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
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
	char parent[48], **env;
	posix_spawn_file_actions_t fa;
	size_t n = 0;
	int p[2], st;

	c->fd = -1;
	c->got = 0;
	c->buf[0] = '\0';
	c->killed = 0;
	c->status = 0;
	argv[0] = (char *)(self && *self ? self : "/proc/self/exe");
	/* environ, with P2PCTL_VERIFY_PARENT for vchild_init() in the child */
	while (environ[n])
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env || pipe(p)) {
		free(env);
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "cannot start the second process: %s", strerror(errno));
		return -1;
	}
	snprintf(parent, sizeof(parent), "P2PCTL_VERIFY_PARENT=%ld", (long)getpid());
	for (size_t i = 0, k = 0; i < n; i++)
		if (strncmp(environ[i], "P2PCTL_VERIFY_PARENT=", 21))
			env[k++] = environ[i];
	for (n = 0; env[n]; n++)
		;
	env[n] = parent;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	posix_spawn_file_actions_addclose(&fa, p[0]);
	st = posix_spawn(&c->pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
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

/*
 * c has ended (or is made to): close its pipe, wait for it, keep its status.
 * The wait is bounded: a process whose pipe closed, or that got SIGKILL, can
 * still sit in the driver's teardown (a process exiting while another maps
 * a peer's memory is the devicesLock inversion of 580.65.06 to 610.57.03), and
 * verify must not sit there with it. Such a child is named on stderr and
 * left; it ends when the driver lets it (its parent is then init).
 */
static void vchild_reap(struct vchild *c)
{
	double end = now_s() + VCHILD_REAP_S;

	close(c->fd);
	c->fd = -1;
	while (waitpid(c->pid, &c->status, WNOHANG) == 0) {
		struct timespec ts = { 0, 10000000 };

		if (now_s() > end) {
			kill(c->pid, SIGKILL);
			fprintf(stderr, "verify: second process %ld has not exited %d s after its output "
				"ended (or SIGKILL): stuck in the driver's teardown (on " V_UVM_LOCK_DRIVERS " "
				"likely nvidia-uvm's devicesLock, docs/support.md); verify goes on without it\n",
				(long)c->pid, VCHILD_REAP_S);
			c->status = W_EXITCODE(0, SIGKILL);
			return;
		}
		nanosleep(&ts, NULL);
	}
}

/*
 * One read of c's output into c->buf, kept NUL-terminated. At the output's
 * end (EOF or a read error) c is reaped. What read() returned.
 */
ssize_t vchild_take(struct vchild *c)
{
	ssize_t k;

	/* full: keep the newer half, so a chatty child is still read (and its
	 * line still found) under the deadline, not waited for unread */
	if (c->got >= sizeof(c->buf) - 1) {
		memmove(c->buf, c->buf + sizeof(c->buf) / 2, c->got - sizeof(c->buf) / 2);
		c->got -= sizeof(c->buf) / 2;
	}
	k = read(c->fd, c->buf + c->got, sizeof(c->buf) - 1 - c->got);

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
 * Past 4 KiB of output c->buf keeps the newer half.
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
		if (vchild_take(c) <= 0)
			return until && !strstr(c->buf, until) ? 1 : 0;
	}
}

/*
 * The one reading of a child's lines ("ipc-child: ERROR why\n"): where key
 * first appears in buf, the text after it (NULL if it does not), and *len
 * that text's length to the end of its line.
 */
const char *vchild_line(const char *buf, const char *key, int *len)
{
	const char *s = strstr(buf, key), *e;

	if (!s)
		return NULL;
	s += strlen(key);
	e = strchr(s, '\n');
	*len = (int)(e ? e - s : (long)strlen(s));
	return s;
}

/*
 * In a second process, first thing: end with verify. A rank stuck in NCCL's
 * bootstrap or a child spinning on a GPU would otherwise outlive a verify
 * ended by a second SIGTERM or by SIGKILL, holding its GPU's memory and SMs.
 * P2PCTL_VERIFY_PARENT (from vchild_start) covers verify ending before the
 * prctl. Children are started from verify's main thread, the one whose end
 * PR_SET_PDEATHSIG watches.
 */
void vchild_init(void)
{
	const char *pp = getenv("P2PCTL_VERIFY_PARENT");

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (pp && strtol(pp, NULL, 10) != (long)getppid())
		_exit(P2P_EXIT_FAIL);
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
