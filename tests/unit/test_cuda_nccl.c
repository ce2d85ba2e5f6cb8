// SPDX-License-Identifier: GPL-2.0
/*
 * verify's nccl tests and bench --nccl against the fake NCCL's fault knobs
 * (fakecuda/fakenccl.c): hangs in the host calls, NCCL as frameworks call
 * it (one communicator, many calls, in place, odd counts), the transport
 * never taken on trust, three GPUs. A run that may hang goes into a process
 * of its own (tests/unit/obj/cuda_verify_child), killed after a bound far
 * above its deadline, so that a missing deadline fails the test instead of
 * hanging it.
 */
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cuda_int.h"
#include "harness.h"
#include "verify.h"
#include "ncclx.h"

#define VOPTS "--seed", "0x70327063746c0000", "--seconds", "0.01", "--timeout", "0.5"

/*
 * argv (argv[0] is "verify" or "bench") in a process of its own, stdout and
 * stderr into one pipe. sig (0: none) is sent delay s after a complete line
 * holding trigger has come; *after is then the seconds from the signal to
 * the end of the output. The process is SIGKILLed bound s after its start.
 * Returns the output; *status is waitpid's, *done whether the output ended
 * (EOF) before the bound.
 */
static char *nccl_child_run(char **argv, int sig, const char *trigger, double delay, double bound, int *status,
		       int *done, double *after)
{
	const char *self = getenv("P2PCTL_SELF");
	size_t len = 0, cap = 1 << 17;
	char *buf = calloc(1, cap), *args[32];
	int fd[2], sent = 0, n = 0;
	double t0 = now_s(), tsig = 0, seen = 0;
	pid_t pid;

	assert_non_null(self);
	args[n++] = (char *)self;
	while (*argv && n < 31)
		args[n++] = *argv++;
	args[n] = NULL;
	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execv(self, args);
		_exit(127);
	}
	close(fd[1]);
	*done = 0;
	while (now_s() < t0 + bound) {
		struct pollfd p = { .fd = fd[0], .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 50) < 0)
			break;
		if (sig && !sent && seen && now_s() > seen + delay) {
			kill(pid, sig);
			sent = 1;
			tsig = now_s();
		}
		if (!(p.revents & (POLLIN | POLLHUP)))
			continue;
		r = read(fd[0], buf + len, cap - 1 - len);
		if (r <= 0) {
			*done = 1;
			break;
		}
		len += (size_t)r;
		buf[len] = '\0';
		if (sig && !seen && strstr(buf, trigger) && strchr(strstr(buf, trigger), '\n'))
			seen = now_s();
	}
	close(fd[0]);
	if (!*done)
		kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, status, 0), pid);
	if (after)
		*after = sent ? now_s() - tsig : -1;
	if (!*done || (sig && !sent))
		fprintf(stderr, "%s %s within %.0f s (signal %s); output:\n%s\n", argv[0] ? argv[0] : "",
			*done ? "ended" : "did not end", bound, sent ? "sent" : "not sent", buf);
	return buf;
}

#define CHILD(sig, trigger, delay, bound, status, done, after, ...) ({  \
	char *argv_[] = { __VA_ARGS__, NULL };                           \
	nccl_child_run(argv_, sig, trigger, delay, bound, status, done, after); \
})

static void expect(const char *out, const char *want)
{
	if (!strstr(out, want))
		fprintf(stderr, "no '%s' in:\n%s\n", want, out);
	assert_non_null(strstr(out, want));
}

/*
 * Issue 42.1: ncclGroupEnd never returns. verify ends at its deadline (the
 * watchdog's, --timeout and at least 10 s), naming the call and the GPUs,
 * with the nccl header already out; before that, the process hung for good.
 */
static void verify_groupend_hang(void **st)
{
	int status, done;
	char *out;

	(void)st;
	setenv("FAKENCCL_FAULT", "groupend-hang", 1);
	out = CHILD(0, NULL, 0, 40, &status, &done, NULL, "verify", "--seed", "1", "--size", "4k", "--tests",
		    "nccl", "--timeout", "1");
	assert_true(done);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	expect(out, "nccl: all-reduce with ");
	expect(out, "nccl 0,1: ncclGroupEnd (all-reduce of 8 bytes over GPUs 0,1) has not returned for ");
	expect(out, "verify: HUNG in NCCL, a partial verdict");
	free(out);
	/* the same in ncclCommDestroy */
	setenv("FAKENCCL_FAULT", "destroy-hang", 1);
	out = CHILD(0, NULL, 0, 40, &status, &done, NULL, "verify", "--seed", "1", "--size", "4k", "--tests",
		    "nccl", "--timeout", "1");
	assert_true(done);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	expect(out, "nccl 0,1: ncclCommDestroy (GPUs 0,1) has not returned for ");
	free(out);
}

/*
 * SIGTERM while verify waits in a hung ncclGroupEnd (deadline 30 s): it ends
 * within a few seconds (the goal is one; the bound leaves a loaded machine
 * room) with status 143 and a partial verdict.
 */
static void verify_groupend_sigterm(void **st)
{
	int status, done;
	double after;
	char *out;

	(void)st;
	setenv("FAKENCCL_FAULT", "groupend-hang", 1);
	out = CHILD(SIGTERM, "nccl: all-reduce with ", 1, 40, &status, &done, &after, "verify", "--seed", "1",
		    "--size", "4k", "--tests", "nccl", "--timeout", "30");
	assert_true(done);
	assert_true(after >= 0 && after < 8);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGTERM);
	expect(out, "nccl 0,1: ncclGroupEnd (all-reduce of 8 bytes over GPUs 0,1) interrupted by SIGTERM");
	expect(out, "verify: INTERRUPTED by SIGTERM in NCCL, a partial verdict");
	free(out);
}

/*
 * SIGTERM while verify waits (vwait, dl_wait) for an all-reduce that never
 * finishes on its stream: the wait ends at once, the row says interrupted,
 * and the communicators are aborted, not destroyed: ncclCommDestroy waits
 * for the stuck work, and before, the watchdog ended the run in it
 * ("ncclCommDestroy ... interrupted by SIGTERM").
 */
static void verify_stream_sigterm(void **st)
{
	int status, done;
	double after;
	char *out;

	(void)st;
	setenv("FAKENCCL_FAULT", "stream-hang", 1);
	out = CHILD(SIGTERM, "nccl: all-reduce with ", 1, 40, &status, &done, &after, "verify", "--seed", "1",
		    "--size", "4k", "--tests", "nccl", "--timeout", "30");
	assert_true(done);
	assert_true(after >= 0 && after < 8);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGTERM);
	expect(out, "  nccl 0,1: SKIPPED: not finished: interrupted (Terminated)");
	expect(out, "verify: INTERRUPTED by SIGTERM");
	assert_null(strstr(out, "ncclCommDestroy"));
	free(out);
}

/*
 * SIGTERM while verify's per-process run waits for a rank stuck in
 * ncclCommInitRank (its deadline --timeout 30), sent 2 s after the
 * in-process row (the ranks start right after it): the ranks are killed and
 * verify ends within a few seconds, not at the stage's deadline.
 */
static void verify_procs_sigterm(void **st)
{
	int status, done;
	double after;
	char *out;

	(void)st;
	setenv("FAKENCCL_RANK", "1", 1);
	setenv("FAKENCCL_RANK_FAULT", "hang-init", 1);
	out = CHILD(SIGTERM, "  nccl        0,1   OK", 2, 60, &status, &done, &after, "verify", "--seed", "1",
		    "--size", "4k", "--tests", "nccl", "--timeout", "30");
	assert_true(done);
	assert_true(after >= 0 && after < 8);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGTERM);
	expect(out, "  nccl        0,1/procs  SKIP  interrupted by Terminated: rank 0 (GPU 0) in ");
	expect(out, "verify: INTERRUPTED by SIGTERM");
	free(out);
	unsetenv("FAKENCCL_RANK");
	unsetenv("FAKENCCL_RANK_FAULT");
}

/* bench --nccl: the same hang, its deadline (--timeout, at least 10 s) and SIGTERM. */
static void bench_groupend_hang(void **st)
{
	int status, done;
	double after;
	char *out;

	(void)st;
	setenv("FAKENCCL_FAULT", "groupend-hang", 1);
	out = CHILD(0, NULL, 0, 40, &status, &done, NULL, "bench", "--nccl", "--max-bytes", "1k", "--timeout", "1");
	assert_true(done);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	expect(out, "bench --nccl: HUNG: all_reduce warm-up: ncclGroupEnd (all-reduce of 8 bytes over GPUs 0,1) "
		    "has not returned for ");
	free(out);
	out = CHILD(SIGTERM, "# all_reduce", 1, 40, &status, &done, &after, "bench", "--nccl", "--max-bytes", "1k",
		    "--timeout", "60");
	assert_true(done);
	assert_true(after >= 0 && after < 8);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGTERM);
	expect(out, "bench --nccl: INTERRUPTED by SIGTERM: all_reduce warm-up: ncclGroupEnd (all-reduce of 8 "
		    "bytes over GPUs 0,1)");
	free(out);
}

/*
 * Issue 42.4: a fault from a communicator's second call on. The in-process
 * test made a communicator per size, so only the per-process run saw it.
 */
static void verify_second_call(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKENCCL_WRONG", "1", 1);
	setenv("FAKENCCL_FROM", "2", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--tests", "nccl");
	expect(out, "  nccl        0,1   FAIL  ");
	expect(out, "  nccl        0,1/procs  FAIL  ");
	free(out);
	free(err);
	unsetenv("FAKENCCL_WRONG");
	unsetenv("FAKENCCL_FROM");
}

/* In-place calls (PyTorch's all_reduce): wrong in place only. */
static void verify_inplace(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKENCCL_FAULT", "inplace", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--tests", "nccl");
	expect(out, "  nccl        0,1   FAIL  8 bytes in place: GPU 0's result: element 1 is ");
	expect(out, "  nccl        0,1/procs  FAIL  rank 0 (GPU 0): 8 bytes in place: GPU 0's result: element 1 is ");
	free(out);
	free(err);
	unsetenv("FAKENCCL_FAULT");
}

/* Counts that are not a power of two (a kernel's remainder path). */
static void verify_npot(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKENCCL_FAULT", "npot", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--tests", "nccl");
	expect(out, "  nccl        0,1   FAIL  12 bytes: GPU 0's result: element 2 is ");
	/* either rank may report first */
	expect(out, "  nccl        0,1/procs  FAIL  rank ");
	expect(out, "): 12 bytes: GPU ");
	free(out);
	free(err);
	unsetenv("FAKENCCL_FAULT");
}

/*
 * NCCL reading a stale copy of its input (right once, then unchanged): only
 * a caller that changes its inputs between checked calls on one
 * communicator sees it.
 */
static void verify_stale(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKENCCL_FAULT", "stale", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--tests", "nccl");
	expect(out, "  nccl        0,1   FAIL  ");
	free(out);
	free(err);
	unsetenv("FAKENCCL_FAULT");
}

/*
 * Issue 42.5: the transport is read whatever the user set (NCCL_DEBUG=WARN,
 * NCCL_DEBUG_SUBSYS=ENV), and no channel lines is a WARN, never OK.
 */
static void verify_transport_always(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKENCCL_TRANSPORT", "SHM/direct/direct", 1);
	setenv("NCCL_DEBUG", "WARN", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	expect(out, "  nccl        0,1   FAIL  NCCL moved data via SHM/direct/direct on 4 of 4 ");
	expect(out, "  nccl        0,1/procs  FAIL  NCCL moved data via SHM/direct/direct on 4 of 4 ");
	free(out);
	free(err);
	unsetenv("NCCL_DEBUG");
	setenv("NCCL_DEBUG_SUBSYS", "ENV", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	expect(out, "  nccl        0,1   FAIL  NCCL moved data via SHM/direct/direct on 4 of 4 ");
	expect(out, "  nccl        0,1/procs  FAIL  NCCL moved data via SHM/direct/direct on 4 of 4 ");
	free(out);
	free(err);
	/* the user's settings are theirs again after verify */
	assert_string_equal(getenv("NCCL_DEBUG_SUBSYS"), "ENV");
	assert_null(getenv("NCCL_DEBUG"));
	unsetenv("NCCL_DEBUG_SUBSYS");
	unsetenv("FAKENCCL_TRANSPORT");
	setenv("FAKENCCL_FAULT", "quiet", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	expect(out, "  nccl        0,1   WARN  ");
	expect(out, "NCCL's debug output (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT) named no channel "
		    "connection: the transport is not known");
	expect(out, "  nccl        0,1/procs  WARN  ");
	free(out);
	free(err);
	unsetenv("FAKENCCL_FAULT");
}

/* bench --nccl: in-place rows and inputs that change between checked calls. */
static void bench_inplace_stale(void **st)
{
	char *out, *err;

	(void)st;
	RUN_RC(0, bench_main, &out, &err, "bench", "--nccl", "--max-bytes", "64k", "--iters", "2",
	       "--warmup", "1", "--batches", "1");
	/* a row in place after each out of place */
	expect(out, "# all_reduce\n#      size(B)        count place   time(us)  algbw(GB/s)  busbw(GB/s)  check\n"
		    "             8            2   out ");
	expect(out, "  ok\n             8            2    in ");
	expect(out, "# all_gather\n");
	expect(out, "  ok\n         65536         8192    in ");
	free(out);
	free(err);
	setenv("FAKENCCL_FAULT", "inplace", 1);
	RUN_RC(1, bench_main, &out, &err, "bench", "--nccl", "--max-bytes", "1k", "--iters", "2",
	       "--warmup", "1", "--batches", "1");
	expect(out, "bench --nccl: FAIL: all_reduce 8 bytes in place: GPU 0's result: element 1 is ");
	free(out);
	free(err);
	setenv("FAKENCCL_FAULT", "stale", 1);
	RUN_RC(1, bench_main, &out, &err, "bench", "--nccl", "--max-bytes", "1k", "--iters", "2",
	       "--warmup", "1", "--batches", "1");
	expect(out, "bench --nccl: FAIL: all_reduce 8 bytes: GPU 0's result: element 0 is ");
	free(out);
	free(err);
	unsetenv("FAKENCCL_FAULT");
}

/* Three GPUs: all-gather's sizes are whole elements per rank (16 B: 1 each). */
static void bench_three_gpus(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_DEVICES", "3", 1);
	RUN_RC(0, bench_main, &out, &err, "bench", "--nccl", "--max-bytes", "1k", "--iters", "1",
	       "--warmup", "1", "--batches", "1");
	assert_null(strstr(out, "FAIL"));
	/* 1 KiB over 3 ranks: 85 elements each, 1020 bytes gathered */
	expect(out, "          1020           85 ");
	free(out);
	free(err);
	unsetenv("FAKECUDA_DEVICES");
}

/*
 * Issue 42.7: the fake NCCL runs a collective on its stream, as NCCL's
 * kernels run, not on the host in ncclGroupEnd: before anything waits for
 * the stream the result is not there, and an upload queued on the stream
 * after the collective lands after it.
 */
static void fake_runs_on_stream(void **st)
{
	struct rig *r = calloc(1, sizeof(*r));
	int use[P2P_MAX_GPUS] = { 1, 1 }, devs[2] = { 0, 1 };
	ncclComm_t comm[2] = { NULL };
	int32_t in[2][4] = { { 1, 2, 3, 4 }, { 10, 20, 30, 40 } }, later[4] = { 100, 100, 100, 100 }, got[4];
	CUdeviceptr buf[2];
	char emsg[512];

	(void)st;
	assert_non_null(r);
	assert_int_equal(cu_open(emsg, sizeof(emsg)), 0);
	assert_int_equal(ncclx_open(emsg, sizeof(emsg)), 0);
	assert_int_equal(rig_open(r, use, 0, 0, emsg, sizeof(emsg)), 0);
	assert_int_equal(ncclx_init_all(comm, 2, devs, 5, emsg, sizeof(emsg)), 0);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(rig_cur(r, k), CUDA_SUCCESS);
		assert_int_equal(cu.cuMemAlloc(&buf[k], sizeof(in[k])), CUDA_SUCCESS);
		assert_int_equal(cu.cuMemcpyHtoDAsync(buf[k], in[k], sizeof(in[k]), r->g[k].s[0]), CUDA_SUCCESS);
		assert_int_equal(cu.cuStreamSynchronize(r->g[k].s[0]), CUDA_SUCCESS);
	}
	/* in place, then a later upload on GPU 0's stream */
	assert_int_equal(nx.GroupStart(), 0);
	for (int k = 0; k < 2; k++)
		assert_int_equal(nx.AllReduce((void *)(uintptr_t)buf[k], (void *)(uintptr_t)buf[k], 4, NCCLX_INT32,
					      NCCLX_SUM, comm[k], r->g[k].s[0]), 0);
	assert_int_equal(nx.GroupEnd(), 0);
	assert_int_equal(rig_cur(r, 0), CUDA_SUCCESS);
	assert_int_equal(cu.cuMemcpyHtoDAsync(buf[0], later, sizeof(later), r->g[0].s[0]), CUDA_SUCCESS);
	/* nothing waited for GPU 1's stream yet: its buffer holds no result (the
	 * synchronous read-back drains only the legacy stream) */
	assert_int_equal(rig_cur(r, 1), CUDA_SUCCESS);
	assert_int_equal(cu.cuMemcpyDtoH(got, buf[1], sizeof(got)), CUDA_SUCCESS);
	assert_memory_equal(got, in[1], sizeof(got));
	for (int k = 0; k < 2; k++) {
		assert_int_equal(rig_cur(r, k), CUDA_SUCCESS);
		assert_int_equal(cu.cuStreamSynchronize(r->g[k].s[0]), CUDA_SUCCESS);
	}
	assert_int_equal(cu.cuMemcpyDtoH(got, buf[1], sizeof(got)), CUDA_SUCCESS);
	assert_int_equal(got[0], 11);
	assert_int_equal(got[3], 44);
	assert_int_equal(rig_cur(r, 0), CUDA_SUCCESS);
	assert_int_equal(cu.cuMemcpyDtoH(got, buf[0], sizeof(got)), CUDA_SUCCESS);
	assert_int_equal(got[0], 100);	/* the later upload, after the collective */
	for (int k = 0; k < 2; k++)
		assert_int_equal(nx.CommDestroy(comm[k]), 0);
	for (int k = 0; k < 2; k++) {
		rig_cur(r, k);
		cu.cuMemFree(buf[k]);
	}
	rig_close(r);
	free(r);
	ncclx_close();
	cu_close();
}

static int setup(void **st)
{
	fake_test_setup(st);
	unsetenv("FAKENCCL_FAULT");
	unsetenv("FAKENCCL_FROM");
	unsetenv("NCCL_DEBUG_SUBSYS");
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(fake_runs_on_stream, setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(verify_second_call, setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(verify_inplace, setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(verify_npot, setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(verify_stale, setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(verify_transport_always, setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(bench_inplace_stale, setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(bench_three_gpus, setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(verify_groupend_hang, setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(verify_groupend_sigterm, setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(verify_stream_sigterm, setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(verify_procs_sigterm, setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(bench_groupend_hang, setup, fake_test_teardown),
	};

	verify_exit_on_hang = 0;
	bench_nccl_exit_on_hang = 0;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
