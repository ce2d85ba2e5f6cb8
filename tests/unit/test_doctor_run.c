// SPDX-License-Identifier: GPL-2.0
/*
 * Programs that doctor and report run: under a deadline, their output
 * capped (p2ps_run()); `p2pctl doctor` with an nvidia-smi that never ends.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "p2pctl.h"
#include "internal.h"

#include "p2pctl_run.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_run(void **state)
{
	char *sleeper[] = { "sh", "-c", "sleep 100", NULL };
	char *exit3[] = { "sh", "-c", "echo hi; echo err >&2; exit 3", NULL };
	char *merged[] = { "sh", "-c", "echo hi; echo err >&2", NULL };
	char *yes[] = { "yes", NULL };
	char *bg[] = { "sh", "-c", "sleep 100 & echo x", NULL };
	char *none[] = { "/nonexistent/p2ps-no-such-program", NULL };
	char *out = NULL, why[96];
	double t;
	int rc;

	(void)state;
	t = now_s();
	rc = p2ps_run(sleeper, 300, 1024, false, &out);
	assert_int_equal(rc, -ETIMEDOUT);
	assert_true(now_s() - t < 3);
	p2ps_run_describe(rc, 300, why, sizeof(why));
	assert_string_equal(why, "timed out after 0.3 s (killed)");
	free(out);
	assert_int_equal(p2ps_run(exit3, 5000, 1024, false, &out), 3);
	assert_string_equal(out, "hi\n");
	free(out);
	assert_int_equal(p2ps_run(merged, 5000, 1024, true, &out), 0);
	assert_string_equal(out, "hi\nerr\n");
	free(out);
	/* endless output: kept to the cap, killed at the deadline */
	assert_int_equal(p2ps_run(yes, 300, 1000, false, &out), -ETIMEDOUT);
	assert_int_equal(strlen(out), 1000);
	free(out);
	/* a child left behind holding the pipe does not hold us */
	t = now_s();
	assert_int_equal(p2ps_run(bg, 5000, 1024, false, &out), 0);
	assert_string_equal(out, "x\n");
	assert_true(now_s() - t < 3);
	free(out);
	assert_int_equal(p2ps_run(none, 1000, 1024, false, &out), -ENOENT);
	assert_null(out);
}

/* `p2pctl doctor` (live) with an nvidia-smi that never returns */
static int doctor_smi_hangs(void)
{
	int rc = run("doctor", NULL);

	if (!strstr(out_text, "nvidia-smi topo -m: timed out after 1 s (killed)"))
		return 10;
	if (!strstr(out_text, "look for Xid in dmesg"))
		return 11;
	return rc == 0 || rc == 1 ? 0 : 12;
}

/* `p2pctl report --no-cuda` (live) with the same nvidia-smi */
static int report_smi_hangs(void)
{
	int rc = run("report", "--no-cuda", NULL);

	if (!strstr(out_text, "== gpus: nvidia-smi -L\n(timed out after 1 s (killed); its output"))
		return 20;
	if (!strstr(out_text, "- topology: timed out after 1 s (killed)"))
		return 21;
	if (!strstr(out_text, "nvidia-smi topo -m: timed out after 1 s (killed)"))
		return 22;	/* doctor's, inside the report */
	return rc;
}

static int (*smi_hangs_fn)(void);

static void smi_hangs(void)
{
	char tmpl[] = "/tmp/p2ps-smi-XXXXXX", path[512], newpath[4096];
	const char *dir = mkdtemp(tmpl), *old = getenv("PATH");
	pid_t pid;
	int st = 0;
	FILE *f;

	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/nvidia-smi", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\nexec sleep 60\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
	snprintf(newpath, sizeof(newpath), "%s:%s", dir, old ? old : "/usr/bin:/bin");
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		setenv("PATH", newpath, 1);
		setenv("P2PCTL_CMD_TIMEOUT", "1", 1);
		setenv("P2PCTL_DEVICE", "/nonexistent", 1);
		alarm(30);
		_exit(smi_hangs_fn());
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		fail_msg("killed by signal %d (SIGALRM: hung on nvidia-smi)", WTERMSIG(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

static void test_doctor_smi_hangs(void **state)
{
	(void)state;
	smi_hangs_fn = doctor_smi_hangs;
	smi_hangs();
}

static void test_report_smi_hangs(void **state)
{
	(void)state;
	smi_hangs_fn = report_smi_hangs;
	smi_hangs();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_doctor_smi_hangs),
		cmocka_unit_test(test_report_smi_hangs),
	};

	return cmocka_run_group_tests_name("doctor_run", tests, NULL, NULL);
}
