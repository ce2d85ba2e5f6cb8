/* SPDX-License-Identifier: GPL-2.0 */
/* Shared helpers for tests/unit/test_cuda_*.c (header-only; include after
 * <cmocka.h>): the fake's environment, running a command, its JSON. */
#ifndef P2P_FAKECUDA_HARNESS_H
#define P2P_FAKECUDA_HARNESS_H

#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

static const char *const fake_vars[] = {
	"FAKECUDA_INIT_ERROR", "FAKECUDA_DEVICES", "FAKECUDA_PEER", "FAKECUDA_ENABLE_ERROR",
	"FAKECUDA_JIT_ERROR", "FAKECUDA_COPY_ERROR", "FAKECUDA_CORRUPT_OFFSET",
	"FAKECUDA_CORRUPT_KIND", "FAKECUDA_OVERRUN", "FAKECUDA_BW_GBPS", "FAKECUDA_NOPEER_GBPS",
	"FAKECUDA_LOCAL_GBPS", "FAKECUDA_SM_GBPS", "FAKECUDA_LAT_US", "FAKECUDA_NOPEER_LAT_US", "FAKECUDA_JITTER",
	"FAKECUDA_MANAGED", "FAKECUDA_CONCURRENT_MANAGED", "FAKECUDA_FREE_BYTES", "FAKECUDA_FREE_OVERSTATE",
	"FAKECUDA_UM_BUG",
	"FAKECUDA_FAULT", "FAKECUDA_HANG_KIND", "FAKECUDA_WRONG_ABOVE", "FAKECUDA_UNDERRUN",
	"FAKECUDA_DROP_TAIL", "FAKENCCL_WRONG", "FAKENCCL_HANG_INIT", "FAKECUDA_FLAKY", "FAKECUDA_ENABLE_FROM",
	"FAKECUDA_BAR1_BYTES", "FAKENCCL_TRANSPORT", "NCCL_P2P_LEVEL", "NCCL_DEBUG",
	"FAKENCCL_COUNT_FILE", "FAKECUDA_STICKY", "FAKECUDA_FAULT_DIR", "FAKECUDA_CEDROP_FROM",
	"FAKECUDA_BAD_VRAM",
};

/* Point the loader at fakecuda/libcuda.so.1 beside the test binary (a
 * dlopen() under ASan may not honour the binary's RUNPATH), unless
 * LD_LIBRARY_PATH already finds a fake. fake_setup_variant("old/") picks
 * the build without the managed-memory entry points. */
static inline void fake_setup_variant(const char *sub)
{
	char exe[PATH_MAX], path[PATH_MAX + 64], *dir;
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (l <= 0)
		return;
	exe[l] = '\0';
	dir = dirname(exe);
	snprintf(path, sizeof(path), "%s/fakecuda/%slibcuda.so.1", dir, sub);
	setenv("P2PCTL_LIBCUDA", path, 1);
	snprintf(path, sizeof(path), "%s/fakecuda/nccl/libnccl.so.2", dir);
	setenv("P2PCTL_LIBNCCL", path, 1);
	/* No host's sysfs or NVML: the line rate is what a test sets up. */
	setenv("P2PCTL_SYSFS", "/nonexistent/p2pctl-test-sysfs", 1);
	setenv("P2PCTL_PROC", "/nonexistent/p2pctl-test-proc", 1);
	setenv("P2PCTL_LIBNVML", "/nonexistent/libnvidia-ml.so.1", 1);
	/* verify's ipc test: the second process */
	snprintf(path, sizeof(path), "%s/obj/cuda_verify_child", dir);
	setenv("P2PCTL_SELF", path, 1);
}

static inline void fake_setup(void)
{
	fake_setup_variant("");
}

static inline void fake_reset(void)
{
	for (size_t i = 0; i < sizeof(fake_vars) / sizeof(fake_vars[0]); i++)
		unsetenv(fake_vars[i]);
}

/* cmocka setup and teardown: the fake beside the binary, no fault set. */
static inline int fake_test_setup(void **st)
{
	(void)st;
	fake_setup();
	fake_reset();
	return 0;
}

static inline int fake_test_teardown(void **st)
{
	(void)st;
	fake_reset();
	return 0;
}

/* Run fn(argc, argv, out, err); return its status, out/err as malloc'd text. */
typedef int (*cmd_fn)(int, char **, FILE *, FILE *);

static inline char *slurp(FILE *f)
{
	long n;
	char *s;

	fflush(f);
	n = ftell(f);
	rewind(f);
	s = calloc(1, n + 1);
	if (s && n > 0 && fread(s, 1, n, f) != (size_t)n)
		s[0] = '\0';
	fclose(f);
	return s;
}

static inline int run_cmd(cmd_fn fn, char **out, char **err, int argc, char **argv)
{
	FILE *o = tmpfile(), *e = tmpfile();
	int rc = fn(argc, argv, o, e);

	*out = slurp(o);
	*err = slurp(e);
	return rc;
}

#define RUN(fn, out, err, ...) ({                                         \
	char *argv_[] = { __VA_ARGS__, NULL };                             \
	run_cmd(fn, out, err, (int)(sizeof(argv_) / sizeof(argv_[0])) - 1, argv_); \
})

/* Run fn; assert that it returned rc, showing its output where it did not. */
static inline int run_rc(int rc, cmd_fn fn, char **out, char **err, int argc, char **argv)
{
	int got = run_cmd(fn, out, err, argc, argv);

	if (got != rc)
		fprintf(stderr, "%s returned %d, not %d; stdout:\n%s\nstderr:\n%s\n", argv[0], got, rc,
			*out, *err);
	return got;
}

#define RUN_RC(rc, fn, out, err, ...) ({                                   \
	char *argv_[] = { __VA_ARGS__, NULL };                             \
	assert_int_equal(run_rc(rc, fn, out, err,                          \
				(int)(sizeof(argv_) / sizeof(argv_[0])) - 1, argv_), rc); \
})

/* Run fn with --json among its arguments; assert rc; its parsed output. */
static inline json_object *run_json(int rc, cmd_fn fn, int argc, char **argv)
{
	char *out, *err;
	json_object *o;

	assert_int_equal(run_rc(rc, fn, &out, &err, argc, argv), rc);
	o = json_tokener_parse(out);
	if (!o)
		fprintf(stderr, "not JSON:\n%s\n", out);
	assert_non_null(o);
	free(out);
	free(err);
	return o;
}

#define RUN_JSON(rc, fn, ...) ({                                           \
	char *argv_[] = { __VA_ARGS__, NULL };                             \
	run_json(rc, fn, (int)(sizeof(argv_) / sizeof(argv_[0])) - 1, argv_); \
})

/* o's member at a dotted path ("matrices.uni_p2p_on.median.0.1": array
 * elements by index), or NULL. */
static inline json_object *jget(json_object *o, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok_r(buf, ".", &save); t && o; t = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array))
			o = json_object_array_get_idx(o, atoi(t));
		else if (!json_object_object_get_ex(o, t, &o))
			return NULL;
	}
	return o;
}

static inline double jnum(json_object *o, const char *path)
{
	json_object *v = jget(o, path);

	assert_non_null(v);
	return json_object_get_double(v);
}

static inline const char *jstr(json_object *o, const char *path)
{
	json_object *v = jget(o, path);

	assert_non_null(v);
	return json_object_get_string(v);
}

static inline double harness_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Run $P2PCTL_SELF with args (NULL-terminated: "bench" or "verify", then its
 * options) in a process of its own, stdout and stderr into one pipe. Once
 * the output holds trigger (NULL: never), send it sig. SIGKILL it when it
 * has not ended limit s after the start (*killed set): a command that blocks
 * fails its test instead of hanging it. Returns the output; *status is
 * waitpid's. No timing is asserted: limit is a bound, not a measure.
 */
static inline char *child_run(const char *const *args, int sig, const char *trigger, double limit,
			      int *status, int *killed)
{
	const char *self = getenv("P2PCTL_SELF");
	size_t len = 0, cap = 1 << 18;
	char *buf = calloc(1, cap);
	int fd[2], sent = 0, eof = 0;
	double end = harness_now() + limit;
	pid_t pid;

	*killed = 0;
	if (!self || !buf || pipe(fd))
		abort();
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		char *argv[32];
		int n = 0;

		argv[n++] = (char *)self;
		for (; args[n - 1] && n < 31; n++)
			argv[n] = (char *)args[n - 1];
		argv[n] = NULL;
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execv(self, argv);
		_exit(127);
	}
	close(fd[1]);
	while (!eof && harness_now() < end) {
		struct pollfd p = { .fd = fd[0], .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 100) <= 0 || !(p.revents & (POLLIN | POLLHUP)))
			continue;
		r = read(fd[0], buf + len, cap - 1 - len);
		if (r <= 0) {
			eof = 1;
			break;
		}
		len += (size_t)r;
		buf[len] = '\0';
		if (trigger && !sent && strstr(buf, trigger)) {
			kill(pid, sig);
			sent = 1;
		}
	}
	if (!eof) {
		kill(pid, SIGKILL);
		*killed = 1;
	}
	close(fd[0]);
	waitpid(pid, status, 0);
	if (*killed)
		fprintf(stderr, "%s %s did not end within %.0f s and was killed; output:\n%s\n", self,
			args[0], limit, buf);
	return buf;
}

#endif
