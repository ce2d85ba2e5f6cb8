// SPDX-License-Identifier: GPL-2.0
/* p2pctl verify against the fake libcuda: results, mismatch reports, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cuda_int.h"
#include "harness.h"
#include "fakesysfs.h"

/* A fixed seed (SEED below), a short concurrent test, a short deadline. */
#define VOPTS "--seed", "0x70327063746c0000", "--seconds", "0.01", "--timeout", "0.5"
/* Seed of the k-th round (0-based) of a verify run with VOPTS: ce, sm-read
 * and sm-write take 2 rounds per direction, flags and flags-poll 8, the
 * managed tests 1. */
#define SEED(k) (0x70327063746c0000ULL + ((uint64_t)(k) << 32))

/*
 * The fake, no fault set, with 20 MiB of VRAM per GPU (the tests' own
 * buffers and a short vram sweep; 64 GiB would take the sweep minutes).
 */
static int vsetup(void **st)
{
	fake_test_setup(st);
	setenv("FAKECUDA_FREE_BYTES", "20971520", 1);
	return 0;
}

static void all_ok(void **st)
{
	char *out, *err;

	(void)st;
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "1M");
	assert_non_null(strstr(out, "seed 0x70327063746c0000 (--seed to repeat), timeout 0.5 s\n"));
	assert_non_null(strstr(out, "  vram        0->1  OK    37748646 bytes, ce, sm-read and sm-write over free "
				    "memory in 1049088-byte buffers: 6 of 12 MiB free on GPU 0 (6 buffers), 6 of "
				    "12 MiB on GPU 1 (6); path: SM loads and stores through the peer mappings of "
				    "every buffer tested\n"));
	assert_non_null(strstr(out, "pair 0-1: can-access-peer 0->1 yes, 1->0 yes"));
	/* two rounds: 1 MiB, then 5 bytes less (the byte tail) */
	assert_non_null(strstr(out, "  ce          0->1  OK    2097147 bytes, copy engine on GPU 0, 84.0 GB/s; "
				    "path: peer copy measured (path test): 95.4 GB/s with peer access on against "
				    "18.7 GB/s staged with it off, and GPU 0 maps GPU 1's buffer read-write\n"));
	assert_non_null(strstr(out, "  path        0->1  OK    GPU 0 -> GPU 1: 95.4 GB/s with peer access on "
				    "(line rate unknown: no 0000:10:00.0 in sysfs), 18.7 GB/s off (5.1x); latency "
				    "2.0 us on, 14.0 us off\n"));
	assert_non_null(strstr(out, "verdict:\n  0<->1: P2P verified, 95.4 GB/s (line rate unknown), 2.0 us\n"));
	assert_non_null(strstr(out, "  sm-read     1->0  OK    2097147 bytes, kernel on GPU 0, 84.0 GB/s; "
				    "path: SM loads by GPU 0 through its peer mapping of GPU 1's memory"));
	assert_non_null(strstr(out, "  sm-write    0->1  OK    2097147 bytes, kernel on GPU 0, 84.0 GB/s; "
				    "path: SM stores by GPU 0"));
	assert_non_null(strstr(out, "  flags       0->1  OK    8388608 bytes, 8 rounds, GPU 0 stores payload + "
				    "flag, GPU 1 polls; path: GPU 0 stored payload and flag into GPU 1's "
				    "memory with SM peer stores\n"));
	assert_non_null(strstr(out, "  flags-poll  1->0  OK    8388608 bytes, 8 rounds, GPU 0 polls GPU 1's "
				    "flag through peer loads; path: GPU 0 polled GPU 1's flag"));
	assert_non_null(strstr(out, "  graph       0->1  OK    8388608 bytes, 8 replays of ce + sm-write "
				    "(GPU 0) and sm-read (GPU 1) graphs; path: graph nodes: GPU 0's copy "
				    "engine and SM stores, GPU 1's SM loads, through the peer mappings\n"));
	assert_non_null(strstr(out, "  ipc         1->0  OK    3145728 bytes, ce, sm-read and sm-write by a "
				    "second process on GPU 0; path: a second process opened GPU 1's buffers "
				    "with cuIpcOpenMemHandle"));
	assert_non_null(strstr(out, "  um-read     0->1  OK    1048576 bytes, kernel on GPU 1 through its "
				    "mapping of GPU 0's pages, 84.0 GB/s; path not proven: GPU 1 maps GPU 0's "
				    "memory; preferred location GPU 0, accessed by GPU 1 and last prefetch to "
				    "GPU 0 held before and after, but CUDA reports no per-page residency"));
	assert_non_null(strstr(out, "  um-write    1->0  OK    1048576 bytes, kernel on GPU 1 through its "
				    "mapping of GPU 0's pages, 84.0 GB/s; path not proven: GPU 1 maps GPU 0's memory"));
	/* what cannot be proven says so */
	assert_non_null(strstr(out, "  um-prefetch 0->1  OK    1048576 bytes, cuMemPrefetchAsync GPU 0 -> "
				    "GPU 1, 84.0 GB/s; path not proven: UVM chooses how it migrates"));
	assert_non_null(strstr(out, "  um-fault    1->0  OK    1048576 bytes, kernel on GPU 1 faulting on "
				    "GPU 0's pages, 42.0 GB/s; path not proven: "));
	assert_non_null(strstr(out, "  managed memory 0-1: OK (8 OK, 0 FAIL, 0 not run; cuMemAllocManaged, "
				    "1048576 bytes)\n"));
	assert_non_null(strstr(out, "concurrent: every directed pair at once, 0.01 s\n"));
	/* 1048560 bytes a round (three 349520-byte slices); how many rounds fit
	 * in 0.01 s depends on the machine's load */
	assert_non_null(strstr(out, "  concurrent  1->0  OK    "));
	assert_non_null(strstr(out, "0 bytes, "));
	assert_non_null(strstr(out, "verify: OK (36 OK, 0 FAIL); 10 OK without a proven path\n"));
	assert_null(strstr(out, "FAIL  "));
	assert_string_equal(err, "");
	free(out);
	free(err);
}

static void odd_sizes(void **st)
{
	static const char *const sizes[] = { "1", "15", "17", "4095", "1000003" };
	char *out, *err;

	(void)st;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", (char *)sizes[i]);
		/* below 48 bytes the concurrent test has no room */
		assert_non_null(strstr(out, i == 0 ? "(32 OK, 0 FAIL, 4 skipped)" :
					    i < 3 ? "(34 OK, 0 FAIL, 2 skipped)" : "(36 OK, 0 FAIL)"));
		free(out);
		free(err);
	}
}

static void pattern_and_compare(void **st)
{
	uint8_t a[64], b[64], e, g;
	uint64_t off, nbad;

	(void)st;
	pattern_fill(a, sizeof(a), 1);
	pattern_fill(b, sizeof(b), 1);
	assert_memory_equal(a, b, sizeof(a));
	assert_int_equal(pattern_compare(a, b, sizeof(a), &off, &e, &g, &nbad), 0);
	assert_true(nbad == 0);
	pattern_fill(b, 13, 1);	/* a prefix of the same pattern */
	assert_memory_equal(a, b, 13);
	pattern_fill(b, sizeof(b), 2);
	assert_memory_not_equal(a, b, sizeof(a));
	pattern_fill(b, sizeof(b), 1);
	b[37] ^= 0x10;
	b[50] ^= 0x01;
	assert_int_equal(pattern_compare(b, a, sizeof(a), &off, &e, &g, &nbad), 1);
	assert_true(off == 37 && e == a[37] && g == (uint8_t)(a[37] ^ 0x10) && nbad == 2);
	/* a difference in a later 4 KiB block */
	{
		uint8_t *x = malloc(10000), *y = malloc(10000);

		pattern_fill(x, 10000, 9);
		memcpy(y, x, 10000);
		y[9999] = (uint8_t)~y[9999];
		assert_int_equal(pattern_compare(y, x, 10000, &off, &e, &g, &nbad), 1);
		assert_true(off == 9999 && nbad == 1 && (uint8_t)(g ^ e) == 0xff);
		free(x);
		free(y);
	}
}

static void corruption_reported(void **st)
{
	char *out, *err, line[256];
	uint8_t pat[8192];

	(void)st;
	setenv("FAKECUDA_CORRUPT_OFFSET", "4097", 1);
	setenv("FAKECUDA_CORRUPT_KIND", "sm", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "8192", "--no-managed");
	assert_non_null(strstr(out, "  ce          0->1  OK"));
	assert_non_null(strstr(out, "  ce          1->0  OK"));
	/* sm-read 0->1's first round comes after ce's four. */
	pattern_fill(pat, sizeof(pat), SEED(4));
	snprintf(line, sizeof(line),
		 "  sm-read     0->1  FAIL  first mismatch at offset 4097 (0x1001): expected 0x%02x, got 0x%02x"
		 " (1 of 8192 bytes differ)\n              usually: SM peer loads are broken", pat[4097],
		 (uint8_t)~pat[4097]);
	assert_non_null(strstr(out, line));
	assert_non_null(strstr(out, "  sm-write    1->0  FAIL  first mismatch at offset 4097"));
	assert_non_null(strstr(out, "  flags-poll  0->1  FAIL  round 0, payload seen after the flag: first "
				    "mismatch at offset 4097"));
	assert_non_null(strstr(out, "  ipc         0->1  FAIL  second process on GPU 1, sm-read of GPU 0's buffer: "
				    "first mismatch at offset 4097"));
	assert_null(strstr(out, "um-read"));
	assert_non_null(strstr(out, "  managed memory 0-1: SKIPPED: --no-managed\n"));
	assert_non_null(strstr(out, "verify: FAIL (14 OK, 14 FAIL)"));
	free(out);
	free(err);
}

static void corruption_json(void **st)
{
	char *out, *err;
	json_object *o, *pairs, *t, *v, *m;

	(void)st;
	setenv("FAKECUDA_CORRUPT_OFFSET", "0", 1);
	setenv("FAKECUDA_CORRUPT_KIND", "ce", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "100", "--json");
	o = json_tokener_parse(out);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "result", &v));
	assert_string_equal(json_object_get_string(v), "FAIL");
	assert_true(json_object_object_get_ex(o, "failures", &v));
	/* path (both ways), ce, graph (its ce node), ipc, vram, vmm, procs, concurrent */
	assert_int_equal(json_object_get_int(v), 16);
	assert_true(json_object_object_get_ex(o, "pairs", &pairs));
	assert_int_equal(json_object_array_length(pairs), 1);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(pairs, 0), "tests", &t));
	assert_int_equal(json_object_array_length(t), 32);
	v = json_object_array_get_idx(t, 2);
	assert_true(json_object_object_get_ex(v, "method", &m));
	assert_string_equal(json_object_get_string(m), "ce");
	assert_true(json_object_object_get_ex(v, "status", &m));
	assert_string_equal(json_object_get_string(m), "FAIL");
	assert_true(json_object_object_get_ex(v, "first_mismatch", &m));
	assert_true(json_object_object_get_ex(m, "offset", &v));
	assert_int_equal(json_object_get_int(v), 0);
	assert_true(json_object_object_get_ex(m, "expected", &v));
	assert_true(json_object_object_get_ex(m, "got", &v));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(t, 0), "hint", &m));
	assert_non_null(strstr(json_object_get_string(m), "p2pctl doctor"));
	v = json_object_array_get_idx(t, 4);	/* sm-read: untouched */
	assert_true(json_object_object_get_ex(v, "status", &m));
	assert_string_equal(json_object_get_string(m), "OK");
	assert_true(json_object_object_get_ex(v, "gbps", &m));
	assert_true(json_object_object_get_ex(v, "path_proven", &m));
	assert_true(json_object_get_boolean(m));
	assert_true(json_object_object_get_ex(o, "seed", &v));
	assert_string_equal(json_object_get_string(v), "0x70327063746c0000");
	/* the run-wide tests: concurrent both ways, then nccl over 0,1 */
	assert_true(json_object_object_get_ex(o, "concurrent", &v));
	assert_int_equal(json_object_array_length(v), 4);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(v, 2), "gpus", &m));
	assert_string_equal(json_object_get_string(m), "0,1");
	json_object_put(o);
	free(out);
	free(err);
}

static void overrun_detected(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_OVERRUN", "1", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1000");
	/* the source's tail is initialised (0x5a), the guard poisoned (0xa5) */
	assert_non_null(strstr(out, "sm-read     0->1  FAIL  wrote past the end: offset 1000 (0x3e8): "
				    "expected 0xa5, got 0x5a\n"));
	assert_non_null(strstr(out, "  ce          0->1  OK"));
	/* Managed: the kernels' overrun shows in both the destination's guard
	 * (um-read) and the managed buffer's (um-write, um-fault); it is not a
	 * peer-path failure, so it does not stop the other managed tests. */
	assert_non_null(strstr(out, "  um-read     0->1  FAIL  wrote past the end: offset 1000 (0x3e8): "
				    "expected 0xa5, got 0x5a"));
	assert_non_null(strstr(out, "  um-write    1->0  FAIL  wrote past the end: offset 1000 (0x3e8): "
				    "expected 0xa5, got 0x5a"));
	assert_non_null(strstr(out, "  um-fault    0->1  FAIL  wrote past the end"));
	assert_non_null(strstr(out, "  um-prefetch 0->1  OK"));
	assert_non_null(strstr(out, "  managed memory 0-1: FAIL (2 OK, 6 FAIL, 0 not run;"));
	free(out);
	free(err);
	/* and before the start */
	fake_reset();
	setenv("FAKECUDA_UNDERRUN", "1", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1000", "--tests", "sm");
	assert_non_null(strstr(out, "  sm-write    0->1  FAIL  wrote before the start: 4 bytes before offset 0: "
				    "expected 0xa5, got 0x5a\n"));
	assert_non_null(strstr(out, "verify: FAIL (0 OK, 4 FAIL)\n"));
	free(out);
	free(err);
}

static void copy_error(void **st)
{
	char *out, *err;

	(void)st;
	/* ce brings path: 2 x 2 x (4 + 100) copies, ce 0->1's two rounds, then
	 * the 419th copy: ce 1->0's first round */
	setenv("FAKECUDA_COPY_ERROR", "419", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--tests", "ce");
	assert_non_null(strstr(out, "  ce          1->0  FAIL  cuMemcpyPeerAsync on GPU 1: CUDA_ERROR_LAUNCH_FAILED"));
	assert_non_null(strstr(out, "(3 OK, 1 FAIL)"));
	free(out);
	free(err);
}

static void no_peer(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_PEER", "0", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "can-access-peer 0->1 no, 1->0 no"));
	assert_non_null(strstr(out, "FAIL  peer access not supported"));
	assert_non_null(strstr(out, "  managed memory 0-1: SKIPPED: peer access is not enabled\n"));
	free(out);
	free(err);
}

static void enable_fails(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_ENABLE_ERROR", "217", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "cuCtxEnablePeerAccess 0->1 (GPU 0 mapping GPU 1's memory): "
				    "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"));
	assert_non_null(strstr(out, "; 1->0 failed too\n"));
	free(out);
	free(err);
}

static void jit_fails(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_JIT_ERROR", "1", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "  ce          0->1  OK"));
	assert_non_null(strstr(out, "sm-write    0->1  FAIL  kernels not loaded on GPU 0: ptxas fatal   : fake JIT failure"));
	assert_non_null(strstr(out, "um-read     1->0  FAIL  kernels not loaded on GPU 0"));
	assert_non_null(strstr(out, "um-write    0->1  SKIP  not run: um-read failed\n"));
	free(out);
	free(err);
}

static void three_gpus_pairs(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_DEVICES", "3", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "pair 0-1"));
	assert_non_null(strstr(out, "pair 0-2"));
	assert_non_null(strstr(out, "pair 1-2"));
	assert_non_null(strstr(out, "(110 OK, 0 FAIL); 32 OK without a proven path"));
	assert_non_null(strstr(out, "  concurrent  2->1  OK"));
	assert_non_null(strstr(out, "  managed memory 1-2: OK (8 OK"));
	free(out);
	free(err);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--pairs", "2-1");
	assert_null(strstr(out, "pair 0-1"));
	assert_non_null(strstr(out, "pair 1-2"));
	assert_null(strstr(out, "GPU 0:"));
	free(out);
	free(err);
	RUN_RC(3, verify_main, &out, &err, "verify", VOPTS, "--pairs", "0-3");
	assert_non_null(strstr(err, "no GPU 3 (3 found)"));
	free(out);
	free(err);
}

static void no_driver(void **st)
{
	char *out, *err;

	(void)st;
	setenv("P2PCTL_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
	RUN_RC(3, verify_main, &out, &err, "verify", VOPTS);
	assert_non_null(strstr(err, "verify: no CUDA driver: cannot load /nonexistent/libcuda.so.1"));
	assert_string_equal(out, "");
	free(out);
	free(err);
	fake_setup();
}

static void init_fails(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_INIT_ERROR", "100", 1);
	RUN_RC(3, verify_main, &out, &err, "verify", VOPTS);
	assert_non_null(strstr(err, "cuInit failed: CUDA_ERROR_NO_DEVICE"));
	assert_non_null(strstr(err, "no NVIDIA GPU visible"));
	free(out);
	free(err);
}

static void one_gpu(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_DEVICES", "1", 1);
	RUN_RC(3, verify_main, &out, &err, "verify", VOPTS);
	assert_non_null(strstr(err, "needs at least two GPUs (1 found)"));
	free(out);
	free(err);
	setenv("FAKECUDA_DEVICES", "0", 1);
	RUN_RC(3, verify_main, &out, &err, "verify", VOPTS);
	assert_non_null(strstr(err, "no CUDA GPU found"));
	free(out);
	free(err);
}

static void usage_errors(void **st)
{
	char *out, *err;

	(void)st;
	RUN_RC(2, verify_main, &out, &err, "verify", VOPTS, "--size", "0");
	assert_non_null(strstr(err, "bad --size '0'"));
	free(out);
	free(err);
	RUN_RC(2, verify_main, &out, &err, "verify", VOPTS, "--pairs", "1-1");
	free(out);
	free(err);
	RUN_RC(2, verify_main, &out, &err, "verify", VOPTS, "--bogus");
	assert_non_null(strstr(err, "Usage: p2pctl verify"));
	free(out);
	free(err);
	RUN_RC(2, verify_main, &out, &err, "verify", VOPTS, "extra");
	free(out);
	free(err);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--help");
	assert_non_null(strstr(out, "Usage: p2pctl verify"));
	assert_non_null(strstr(out, "--no-managed"));
	assert_non_null(strstr(out, "um-prefetch"));
	free(out);
	free(err);
}


/*
 * nvidia-uvm's wrong peer PTE of a BAR1 pair (565-580): a GPU using the
 * other's managed pages through its mapping reaches its own memory. um-read
 * sees it; writes and migrations are then not run.
 */
static void um_wrong_mapping(void **st)
{
	char *out, *err, line[256];
	uint8_t pat[8192];
	uint64_t differ = 0;

	(void)st;
	setenv("FAKECUDA_UM_BUG", "map", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "8192");
	assert_non_null(strstr(out, "  sm-write    1->0  OK"));
	/* um-read 0->1 is round 64 (after 2 x (2 + 2 + 2 + 8 + 8 + 8 + 2));
	 * GPU 1 reads its own (zeroed) memory. */
	pattern_fill(pat, sizeof(pat), SEED(64));
	for (size_t k = 0; k < sizeof(pat); k++)
		differ += pat[k] != 0;
	snprintf(line, sizeof(line),
		 "  um-read     0->1  FAIL  first mismatch at offset 0 (0x0): expected 0x%02x, got 0x00"
		 " (%llu of 8192 bytes differ)\n", pat[0], (unsigned long long)differ);
	assert_true(pat[0] != 0);
	assert_non_null(strstr(out, line));
	assert_non_null(strstr(out, "  um-read     1->0  FAIL  first mismatch at offset 0"));
	assert_non_null(strstr(out, "  um-write    0->1  SKIP  not run: um-read failed\n"));
	assert_non_null(strstr(out, "  um-prefetch 1->0  SKIP  not run: um-read failed\n"));
	assert_non_null(strstr(out, "  um-fault    1->0  SKIP  not run: um-read failed\n"));
	assert_non_null(strstr(out, "  managed memory 0-1: FAIL (0 OK, 2 FAIL, 6 not run; cuMemAllocManaged, "
				    "8192 bytes): um-read failed, so the other managed tests were not run"));
	assert_non_null(strstr(out, "verify: FAIL (28 OK, 2 FAIL, 6 skipped); 2 OK without a proven path\n"));
	free(out);
	free(err);
	/* Without peer access enabled UVM migrates instead of mapping: the
	 * wrong PTE is never used, and verify says peer access failed. */
	setenv("FAKECUDA_ENABLE_ERROR", "217", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "8192");
	assert_null(strstr(out, "  um-read     0->1"));
	free(out);
	free(err);
}

static void um_wrong_mapping_json(void **st)
{
	char *out, *err;
	json_object *o, *p, *t, *v, *m;

	(void)st;
	setenv("FAKECUDA_UM_BUG", "map", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--json");
	o = json_tokener_parse(out);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "skipped_tests", &v));
	assert_int_equal(json_object_get_int(v), 6);
	assert_true(json_object_object_get_ex(o, "failures", &v));
	assert_int_equal(json_object_get_int(v), 2);
	assert_true(json_object_object_get_ex(o, "pairs", &p));
	p = json_object_array_get_idx(p, 0);
	assert_true(json_object_object_get_ex(p, "status", &v));
	assert_string_equal(json_object_get_string(v), "FAIL");
	assert_true(json_object_object_get_ex(p, "managed", &m));
	assert_true(json_object_object_get_ex(m, "status", &v));
	assert_string_equal(json_object_get_string(v), "FAIL");
	assert_true(json_object_object_get_ex(m, "failed_tests", &v));
	assert_int_equal(json_object_get_int(v), 2);
	assert_true(json_object_object_get_ex(m, "skipped_tests", &v));
	assert_int_equal(json_object_get_int(v), 6);
	assert_true(json_object_object_get_ex(m, "reason", &v));
	assert_non_null(strstr(json_object_get_string(v), "um-read failed"));
	assert_true(json_object_object_get_ex(p, "tests", &t));
	assert_int_equal(json_object_array_length(t), 32);
	v = json_object_array_get_idx(t, 24);
	assert_true(json_object_object_get_ex(v, "method", &m));
	assert_string_equal(json_object_get_string(m), "um-read");
	assert_true(json_object_object_get_ex(v, "status", &m));
	assert_string_equal(json_object_get_string(m), "FAIL");
	assert_true(json_object_object_get_ex(v, "engine_gpu", &m));
	assert_int_equal(json_object_get_int(m), 1);
	assert_true(json_object_object_get_ex(v, "first_mismatch", &m));
	assert_true(json_object_object_get_ex(m, "where", &v));
	assert_string_equal(json_object_get_string(v), "data");
	v = json_object_array_get_idx(t, 31);
	assert_true(json_object_object_get_ex(v, "method", &m));
	assert_string_equal(json_object_get_string(m), "um-fault");
	assert_true(json_object_object_get_ex(v, "status", &m));
	assert_string_equal(json_object_get_string(m), "SKIPPED");
	assert_true(json_object_object_get_ex(v, "reason", &m));
	assert_string_equal(json_object_get_string(m), "not run: um-read failed");
	assert_false(json_object_object_get_ex(v, "gbps", &m));
	json_object_put(o);
	free(out);
	free(err);
}

/* A migration between the GPUs that corrupts (CE peer copies gone wrong). */
static void um_bad_migration(void **st)
{
	char *out, *err, line[256];
	uint8_t pat[1000];

	(void)st;
	setenv("FAKECUDA_UM_BUG", "copy", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1000");
	assert_non_null(strstr(out, "  um-read     0->1  OK"));
	assert_non_null(strstr(out, "  um-write    1->0  OK"));
	pattern_fill(pat, sizeof(pat), SEED(68));	/* um-prefetch 0->1 */
	snprintf(line, sizeof(line),
		 "  um-prefetch 0->1  FAIL  first mismatch at offset 0 (0x0): expected 0x%02x, got 0x%02x"
		 " (1 of 1000 bytes differ)\n", pat[0], (uint8_t)~pat[0]);
	assert_non_null(strstr(out, line));
	/* um-fault: GPU 0 faults GPU 1's pages over (flipped, then
	 * overwritten), GPU 1 faults them back (flipped). */
	pattern_fill(pat, sizeof(pat), SEED(70));
	snprintf(line, sizeof(line),
		 "  um-fault    0->1  FAIL  first mismatch at offset 0 (0x0): expected 0x%02x, got 0x%02x",
		 pat[0], (uint8_t)~pat[0]);
	assert_non_null(strstr(out, line));
	assert_non_null(strstr(out, "  managed memory 0-1: FAIL (4 OK, 4 FAIL, 0 not run;"));
	assert_non_null(strstr(out, "verify: FAIL (32 OK, 4 FAIL); 6 OK without a proven path\n"));
	free(out);
	free(err);
}

/* No concurrent managed access (or no managed memory): skipped, not failed. */
static void um_not_supported(void **st)
{
	char *out, *err;
	json_object *o, *p, *m, *v;

	(void)st;
	setenv("FAKECUDA_CONCURRENT_MANAGED", "0", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "  managed memory 0-1: SKIPPED: GPU 0 cannot share managed memory with "
				    "another processor (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 0)\n"));
	assert_null(strstr(out, "  um-read     0->1"));
	assert_non_null(strstr(out, "  um-read      SKIP  SKIP\n"));
	assert_non_null(strstr(out, "verify: OK (28 OK, 0 FAIL, 8 skipped); 2 OK without a proven path\n"));
	free(out);
	free(err);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--json");
	o = json_tokener_parse(out);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "result", &v));
	assert_string_equal(json_object_get_string(v), "OK");
	assert_true(json_object_object_get_ex(o, "pairs", &p));
	p = json_object_array_get_idx(p, 0);
	assert_true(json_object_object_get_ex(p, "status", &v));
	assert_string_equal(json_object_get_string(v), "OK");
	assert_true(json_object_object_get_ex(p, "managed", &m));
	assert_true(json_object_object_get_ex(m, "status", &v));
	assert_string_equal(json_object_get_string(v), "SKIPPED");
	assert_true(json_object_object_get_ex(m, "reason", &v));
	assert_non_null(strstr(json_object_get_string(v), "CONCURRENT_MANAGED_ACCESS = 0"));
	assert_true(json_object_object_get_ex(m, "concurrent_managed_access", &v));
	assert_int_equal(json_object_get_int(json_object_array_get_idx(v, 1)), 0);
	json_object_put(o);
	free(out);
	free(err);
	fake_reset();
	setenv("FAKECUDA_MANAGED", "0", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "SKIPPED: GPU 0 has no managed memory "
				    "(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 0)\n"));
	free(out);
	free(err);
}

/* A driver without the managed-memory entry points still runs the rest. */
static void um_old_driver(void **st)
{
	char *out, *err;

	(void)st;
	fake_setup_variant("old/");
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "  sm-write    1->0  OK"));
	assert_non_null(strstr(out, "  managed memory 0-1: SKIPPED: the CUDA driver lacks cuMemAllocManaged\n"));
	/* nor cuMemGetInfo_v2: the vram test cannot place its buffers */
	assert_non_null(strstr(out, "  vram        0->1  SKIP  the driver lacks cuMemGetInfo_v2\n"));
	assert_non_null(strstr(out, "verify: OK (26 OK, 0 FAIL, 10 skipped); 2 OK without a proven path\n"));
	free(out);
	free(err);
	fake_setup();
}

/* Never more managed memory than half of what a GPU has free. */
static void um_too_big(void **st)
{
	char *out, *err;

	(void)st;
	/* 40 MiB of VRAM: 8 MiB buffers take 32 MiB (three of 10 MiB, 2 MiB
	 * granules, and the flags' 2 MiB), leaving 8 MiB free */
	setenv("FAKECUDA_FREE_BYTES", "41943040", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "8M");
	assert_non_null(strstr(out, "  managed memory 0-1: SKIPPED: 8389120 bytes of managed memory is more "
				    "than half of the 8388608 bytes free on GPU 0; use a smaller --size\n"));
	free(out);
	free(err);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4M");
	assert_non_null(strstr(out, "  managed memory 0-1: OK (8 OK"));
	free(out);
	free(err);
}

/*
 * The fault knobs of issue 26: each makes the tests that use the broken
 * path fail and leaves the others passing; all_ok is the same run without.
 */
static void fault_stale_read(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "stale", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	/* the second round's pattern reads as the first's */
	assert_non_null(strstr(out, "  sm-read     0->1  FAIL  first mismatch at offset 0"));
	assert_non_null(strstr(out, "  sm-read     1->0  FAIL  first mismatch at offset 0"));
	assert_non_null(strstr(out, "  flags-poll  0->1  FAIL  peer read returned an old value: round 0, "
				    "GPU 1 still read 0x"));
	assert_non_null(strstr(out, "(stale peer read)\n              usually: peer reads return old values"));
	assert_non_null(strstr(out, "  concurrent  1->0  FAIL  SM-load slice: first mismatch"));
	assert_non_null(strstr(out, "  ce          0->1  OK"));
	assert_non_null(strstr(out, "  sm-write    1->0  OK"));
	assert_non_null(strstr(out, "  flags       1->0  OK"));
	assert_non_null(strstr(out, "  graph       0->1  FAIL  replay 0: first mismatch at offset 2720 (0xaa0)"));
	assert_non_null(strstr(out, "(the SM-load node)\n"));
	assert_non_null(strstr(out, "verify: FAIL (22 OK, 14 FAIL); 10 OK without a proven path\n"));
	free(out);
	free(err);
}

static void fault_lost_store(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "lost", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "  sm-write    0->1  FAIL  first mismatch at offset 0 (0x0): expected 0x"));
	assert_non_null(strstr(out, "got 0xa5, the poison: the write never landed (4082 of 4096 bytes differ)"));
	assert_non_null(strstr(out, "  flags       1->0  FAIL  flag never arrived: round 0, GPU 0 still saw "));
	assert_non_null(strstr(out, "(SM stores into the peer lost or not visible)"));
	/* um-write's check: stores through the mapping into the peer's pages */
	assert_non_null(strstr(out, "  um-write    0->1  FAIL  first mismatch at offset 0"));
	assert_non_null(strstr(out, "  ipc         0->1  FAIL  second process on GPU 1, sm-write into GPU 0's "
				    "buffer: first mismatch at offset 0"));
	assert_non_null(strstr(out, "  concurrent  0->1  FAIL  SM-store slice: first mismatch"));
	assert_non_null(strstr(out, "  ce          1->0  OK"));
	assert_non_null(strstr(out, "  sm-read     0->1  OK"));
	assert_non_null(strstr(out, "  flags-poll  0->1  OK"));
	assert_non_null(strstr(out, "  um-read     0->1  OK"));
	assert_non_null(strstr(out, "verify: FAIL (16 OK, 20 FAIL); 8 OK without a proven path\n"));
	free(out);
	free(err);
}

/* Peer access "enabled" without a mapping: right bytes through host staging
 * (ce) or migration (um-*) no longer pass. */
static void fault_no_mapping(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "nomap", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "  ce          0->1  FAIL  no peer mapping: GPU 0 has no access to GPU 1's "
				    "memory (CU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 0) although peer access was "
				    "enabled; cuMemcpyPeerAsync stages such a copy through host memory"));
	assert_non_null(strstr(out, "  sm-read     0->1  FAIL  no peer mapping: GPU 1 has no access"));
	assert_non_null(strstr(out, "  flags-poll  1->0  FAIL  no peer mapping"));
	assert_non_null(strstr(out, "  um-read     0->1  FAIL  no peer mapping: GPU 1 has no access to GPU 0's "
				    "memory (CU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 0), so UVM can only migrate or "
				    "stage the pages\n"));
	assert_non_null(strstr(out, "  um-write    0->1  SKIP  not run: um-read failed\n"));
	assert_non_null(strstr(out, "  concurrent  0->1  FAIL"));
	/* a second process's fault: explained, and this process's contexts live on */
	assert_non_null(strstr(out, "  ipc         0->1  FAIL  second process on GPU 1, sm-read of GPU 0's "
				    "buffer: sm-read: CUDA_ERROR_ILLEGAL_ADDRESS (fake error text); this likely "
				    "means GPU 1 faulted on GPU 0's memory"));
	/* the concurrent test's fault killed GPU 0's context: nccl's in-process
	 * run does not use it */
	assert_non_null(strstr(out, "  nccl        0,1   SKIP  not run: GPU 0's context was lost to concurrent "
				    "0->1's fault (CUDA errors are sticky)\n"));
	assert_non_null(strstr(out, "verify: FAIL (3 OK, 26 FAIL, 7 skipped); 1 OK without a proven path\n"));
	free(out);
	free(err);
	/* The ce check alone, without the knob: proven by the path test it brings. */
	fake_reset();
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "ce");
	assert_non_null(strstr(out, "verify: OK (4 OK, 0 FAIL)\n"));
	free(out);
	free(err);
}

static void fault_wrong_gpu(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "wrong", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--no-managed");
	assert_non_null(strstr(out, "  sm-read     0->1  FAIL  first mismatch at offset 0"));
	assert_non_null(strstr(out, "  flags-poll  0->1  FAIL  round 0: GPU 1 read 0x"));
	assert_non_null(strstr(out, "from the flag, a value nobody wrote (want 0x"));
	assert_non_null(strstr(out, "its peer loads reached the wrong memory"));
	assert_non_null(strstr(out, "  concurrent  0->1  FAIL  SM-load slice"));
	assert_non_null(strstr(out, "  sm-write    0->1  OK"));
	assert_non_null(strstr(out, "verify: FAIL (10 OK, 18 FAIL); 2 OK without a proven path\n"));
	free(out);
	free(err);
}

/* A wrong base that shows only high in VRAM: the default --offset pad puts
 * the buffers there; without it (--offset 0) the test misses it. */
static void fault_high_offset(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FREE_BYTES", "68719476736", 1);
	setenv("FAKECUDA_FAULT", "wrong", 1);
	setenv("FAKECUDA_WRONG_ABOVE", "1073741824", 1);
	/* the default: the tests' buffers at the bottom, the vram test above */
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "sm-read");
	assert_non_null(strstr(out, "; test buffers not offset\n"));
	assert_non_null(strstr(out, "  sm-read     0->1  OK"));
	free(out);
	free(err);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "vram", "--quick");
	assert_non_null(strstr(out, "  vram        0->1  FAIL  middle of free memory (buffers above pads of "
				    "32634 MiB on GPU 0 and 32634 MiB on GPU 1): sm-read: first mismatch"));
	free(out);
	free(err);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "sm-read",
	       "--offset", "auto");
	assert_non_null(strstr(out, "buffers above a 32638 MiB allocation on each GPU"));
	assert_non_null(strstr(out, "  sm-read     0->1  FAIL"));
	free(out);
	free(err);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "sm-read",
	       "--offset", "2G");
	assert_non_null(strstr(out, "buffers above a 2048 MiB allocation on each GPU"));
	free(out);
	free(err);
}

/* A path that never completes: reported with its pair and test, in bounded
 * time, never a blocking wait (the fake aborts on one). */
static void fault_hang(void **st)
{
	static const char *const kinds[] = { "ce", "sm", "flag" };
	static const char *const first[] = { "path 0->1 hung: the copy with peer access off did not finish within 0.5 s on GPU 0",
		"sm-read 0->1 hung: the copy did not finish within 0.5 s on GPU 1",
		"flags 0->1 hung: the flag store did not finish within 0.5 s on GPU 0" };
	char *out, *err;
	json_object *o;

	(void)st;
	setenv("FAKECUDA_FAULT", "hang", 1);
	for (size_t k = 0; k < 3; k++) {
		setenv("FAKECUDA_HANG_KIND", kinds[k], 1);
		RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
		assert_non_null(strstr(err, first[k]));
		assert_non_null(strstr(out, "the path hangs (the GPU context is stuck; verify stops here)\n"));
		assert_non_null(strstr(out, "verify: HUNG ("));
		assert_null(strstr(out, "managed memory"));
		free(out);
		free(err);
	}
	o = RUN_JSON(1, verify_main, "verify", VOPTS, "--size", "4k", "--json");
	assert_string_equal(jstr(o, "result"), "HUNG");
	assert_non_null(strstr(jstr(o, "hung"), "flags 0->1 hung"));
	json_object_put(o);
}

/*
 * SIGINT or SIGTERM while verify waits on a hung copy (--timeout 1000): the
 * wait ends at once, the test is "not finished: interrupted", the partial
 * verdict is printed and verify exits 128 + the signal. In a process of its
 * own, SIGKILLed after 60 s, so a wait that ignores the signal fails here.
 */
static void signal_in_hang(void **st)
{
	static const char *const args[] = { "verify", "--seed", "1", "--size", "4k", "--timeout", "1000",
					    NULL };
	static const int sigs[] = { SIGINT, SIGTERM };
	char *out;
	int status, killed;

	(void)st;
	setenv("FAKECUDA_FAULT", "hang", 1);
	setenv("FAKECUDA_HANG_KIND", "sm", 1);
	for (int k = 0; k < 2; k++) {
		out = child_run(args, sigs[k], "fakecuda: an operation on GPU", 60, &status, &killed);
		assert_false(killed);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 128 + sigs[k]);
		assert_non_null(strstr(out, "not finished: interrupted ("));
		assert_non_null(strstr(out, k ? "verify: INTERRUPTED by SIGTERM, a partial verdict" :
					  "verify: INTERRUPTED by SIGINT, a partial verdict"));
		free(out);
	}
}

/*
 * Issue 42, class 3: the procs test's processes each store their own slice.
 * FAKECUDA_FAULT=ipcfirst: only the first process to open a handle maps it,
 * the others' stores are lost; when all four stored the same bytes, the
 * first one's hid the losses.
 */
static void procs_own_slices(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "ipcfirst", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--tests", "procs");
	assert_non_null(strstr(out, "  procs       0->1  FAIL  round 1, 4 processes on GPU 1 storing into GPU 0's "
				    "buffer (a slice each, first in process "));
	/* three slices of four lost (less the pattern's bytes that equal the
	 * poison); which process opened first is the scheduler's choice */
	assert_non_null(strstr(out, "the poison: the write never landed (4"));
	assert_non_null(strstr(out, " of 65536 bytes differ)\n"));
	free(out);
	free(err);
	/* the knob off: every slice lands */
	unsetenv("FAKECUDA_FAULT");
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--tests", "procs");
	assert_non_null(strstr(out, "  procs       0->1  OK  "));
	free(out);
	free(err);
}

/*
 * Issue 42, class 3: um-read and um-write were "proven" from CUDA's
 * attributes alone. FAKECUDA_UM_BUG=host serves the pages through the host
 * at a tenth of the SM rate while every attribute holds: the lines now say
 * the path is not proven.
 */
static void um_mapping_not_proven(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_UM_BUG", "host", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--tests", "um-read,um-write");
	assert_non_null(strstr(out, "  um-read     0->1  OK "));
	assert_non_null(strstr(out, "path not proven: GPU 1 maps GPU 0's memory; preferred location GPU 0, "
				    "accessed by GPU 1 and last prefetch to GPU 0 held before and after, but CUDA "
				    "reports no per-page residency, so pages served through the host are not "
				    "excluded"));
	assert_non_null(strstr(out, "; 4 OK without a proven path\n"));
	free(out);
	free(err);
}

/* A graph replay that drops a node (the last: GPU a's SM stores, and GPU
 * b's only node, its SM loads) fails the graph test, nothing else. */
static void fault_graph_drop(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "graphdrop", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "  graph       0->1  FAIL  replay 1: first mismatch at offset 1360 (0x550): "
				    "expected 0x"));
	assert_non_null(strstr(out, "got 0xa5, the poison: the write never landed (2725 of 4096 bytes differ) (the SM-store node)\n"
				    "              usually: copies replayed from a CUDA graph are lost"));
	assert_non_null(strstr(out, "  graph       1->0  FAIL  replay 1:"));
	assert_non_null(strstr(out, "verify: FAIL (32 OK, 4 FAIL); 10 OK without a proven path\n"));
	free(out);
	free(err);
}

/* A peer mapping the driver reports but the GPU's page tables lack: kernels
 * fault. The message names the direction, the faulting GPU and what the
 * bare CUDA_ERROR_ILLEGAL_ADDRESS most likely means. */
static void fault_pte_illegal_address(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "ptefault", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--no-managed");
	assert_non_null(strstr(out, "  ce          0->1  OK"));
	assert_non_null(strstr(out, "  sm-read     0->1  FAIL  the copy on GPU 1: CUDA_ERROR_ILLEGAL_ADDRESS "
				    "(fake error text); this likely means GPU 1 faulted on GPU 0's memory: its "
				    "peer mapping of that memory is missing or wrong, although peer access is on "
				    "and the driver reports the mapping; GPU 1's context is lost (CUDA errors are "
				    "sticky): later tests on GPU 1 are not run\n"));
	/* CUDA_ERROR_ILLEGAL_ADDRESS is sticky: nothing more runs on GPU 1 */
	assert_non_null(strstr(out, "  sm-write    1->0  SKIP  not run: GPU 1's context was lost to sm-read "
				    "0->1's fault (CUDA errors are sticky)\n"));
	assert_non_null(strstr(out, "  concurrent  0->1  SKIP  not run: GPU 1's context was lost"));
	assert_non_null(strstr(out, "verify: FAIL (5 OK, 1 FAIL, 22 skipped); 1 OK without a proven path\n"));
	free(out);
	free(err);
}

/*
 * --quick: the old sample. A BAR1 window that covers only the lower 32 GiB
 * of a 48 GiB card: peer accesses above it land elsewhere. Only buffers at
 * the top of VRAM see it; the sample puts them at the bottom, the middle and
 * the top.
 */
static void vram_quick(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FREE_BYTES", "51539607552", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--no-managed", "--quick");
	assert_non_null(strstr(out, "  vram        0->1  OK    73683 bytes, --quick: ce, sm-read and sm-write at the "
				    "bottom, middle and top of free memory (pads of 0, 24442 and 48886 MiB on GPU 0, "
				    "0, 24442 and 48886 MiB on GPU 1); path: SM loads and stores through the peer "
				    "mappings at each place (a sample: the memory between the places and the top 256 "
				    "MiB not tested)\n"));
	free(out);
	free(err);
	setenv("FAKECUDA_BAR1_BYTES", "34359738368", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--no-managed", "--quick");
	assert_non_null(strstr(out, "  ce          0->1  OK"));
	assert_non_null(strstr(out, "  vram        0->1  FAIL  top of free memory (buffers above pads of 48886 "
				    "MiB on GPU 0 and 48886 MiB on GPU 1): ce: first mismatch at offset 0 (0x0): "
				    "expected 0x"));
	assert_non_null(strstr(out, ", the poison: the write never landed"));
	assert_non_null(strstr(out, "              usually: peer accesses to part of VRAM go wrong"));
	assert_non_null(strstr(out, "  vram         FAIL  FAIL\n"));
	assert_non_null(strstr(out, "0<->1: P2P FAILED (2 tests: vram)"));
	free(out);
	free(err);
}

/*
 * A verify run in its own process (the ipc test's driver of verify_main),
 * sent sig once a line starting with trigger has come through the pipe: the
 * line must come while the run goes on (output flushed per line), and the
 * run must end with a partial verdict and exit status 128 + sig. Returns
 * the output; *status is waitpid's.
 */
static char *signalled_run(int sig, const char *trigger, const char *size, int *status)
{
	const char *self = getenv("P2PCTL_SELF");
	size_t len = 0, cap = 1 << 16;
	char *buf = calloc(1, cap);
	int fd[2], sent = 0;
	/* a bound for a loaded machine, not a measure: the pair tests before
	 * the trigger include two vram sweeps of up to 30 s each */
	double end = now_s() + 150;
	pid_t pid;

	assert_non_null(self);
	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl(self, self, "verify", VOPTS, "--size", size, "--seconds", "30", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	for (;;) {
		struct pollfd p = { .fd = fd[0], .events = POLLIN };
		ssize_t r;

		if (now_s() > end || poll(&p, 1, 100) < 0)
			break;
		if (!(p.revents & (POLLIN | POLLHUP)))
			continue;
		r = read(fd[0], buf + len, cap - 1 - len);
		if (r <= 0)
			break;
		len += (size_t)r;
		buf[len] = '\0';
		if (!sent && strstr(buf, trigger) && strchr(strstr(buf, trigger), '\n')) {
			kill(pid, sig);
			sent = 1;
		}
	}
	close(fd[0]);
	if (!sent || now_s() > end)
		kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, status, 0), pid);
	if (!sent)
		fprintf(stderr, "no '%s' line within 150 s; output:\n%s\n", trigger, buf);
	assert_true(sent);
	return buf;
}

static void interrupted_run(void **st)
{
	char *out;
	int status;

	(void)st;
	/* room for the 32 MiB buffers below and a short vram sweep */
	setenv("FAKECUDA_FREE_BYTES", "167772160", 1);
	/* SIGINT in the concurrent test (30 s): it stops at the end of a round. */
	out = signalled_run(SIGINT, "concurrent: every directed pair at once", "4k", &status);
	if (!WIFEXITED(status))
		fprintf(stderr, "status 0x%x; output:\n%s\n", status, out);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGINT);
	assert_non_null(strstr(out, "  concurrent  0->1  OK    "));
	assert_non_null(strstr(out, " rounds of all pairs at once (cut short by the signal); path: "));
	assert_non_null(strstr(out, "grid (test x direction: OK, OK* path not proven, PART not all tested, FAIL, HUNG, SKIP, - not "
				    "run):\n  0-1          0->1  1->0\n  path         OK    OK\n"));
	assert_non_null(strstr(out, "  concurrent   OK    OK\n"));
	/* nccl did not run; every pair test did: no "partial" on the pair */
	assert_null(strstr(out, "nccl: all-reduce"));
	assert_non_null(strstr(out, "verdict:\n  0<->1: P2P verified, 95.4 GB/s (line rate unknown), 2.0 us\n"));
	assert_non_null(strstr(out, "  nccl: not run (interrupted by Interrupt)\n"
				    "verify: INTERRUPTED by SIGINT, a partial verdict (34 OK, 0 FAIL); 8 OK "
				    "without a proven path\n"));
	free(out);
	/* SIGTERM after the first ce line: the rest of the pair is not run
	 * (32 MiB: ce 1->0 takes long enough for the signal to land in it). */
	out = signalled_run(SIGTERM, "  ce          0->1", "32M", &status);
	if (!WIFEXITED(status))
		fprintf(stderr, "status 0x%x; output:\n%s\n", status, out);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGTERM);
	assert_non_null(strstr(out, "  ce           OK    "));
	assert_non_null(strstr(out, "  sm-write     -     -\n"));
	assert_non_null(strstr(out, "  concurrent   -     -\n"));
	assert_null(strstr(out, "concurrent: every directed pair"));
	/* sm-read and the rest did not run: the verdict says so (review 33, 10) */
	assert_non_null(strstr(out, "  0<->1: P2P verified for copy-engine copies only (sm-read, sm-write, "
				    "flags, flags-poll, car not run), 99.4 GB/s (line rate unknown), 2.0 us; "
				    "partial: "));
	assert_non_null(strstr(out, " of the grid's tests not run (interrupted by Terminated)\n"));
	assert_non_null(strstr(out, "verify: INTERRUPTED by SIGTERM, a partial verdict ("));
	free(out);
}

/* A cuMem (VMM) peer mapping whose SM loads return stale data: the vmm
 * test fails on its second sm-read round, naming the copy; the peer
 * mappings of cuCtxEnablePeerAccess (every other test) are fine. */
static void fault_vmm_stale(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "vmmstale", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "  vmm         0->1  FAIL  sm-read on GPU 1, GPU 0's cuMem buffer into "
				    "GPU 1's: first mismatch at offset "));
	assert_non_null(strstr(out, "              usually: peer accesses through cuMem (VMM) mappings are "
				    "wrong"));
	assert_non_null(strstr(out, "  vmm         1->0  FAIL  sm-read on GPU 0"));
	assert_non_null(strstr(out, "verify: FAIL (34 OK, 2 FAIL); 10 OK without a proven path\n"));
	free(out);
	free(err);
}

/* Only cuMemSetAccess makes a cuMem mapping: with peer access "enabled"
 * but no mapping behind it (nomap), vmm still passes. */
static void vmm_ok_without_ctx_mapping(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "nomap", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "vmm,car");
	assert_non_null(strstr(out, "  vmm         0->1  OK    24561 bytes, ce (GPU 0), sm-write (GPU 0) and "
				    "sm-read (GPU 1) between cuMemCreate buffers mapped with cuMemMap + "
				    "cuMemSetAccess; path: SM stores of GPU 0 and SM loads of GPU 1 through the "
				    "cuMemSetAccess mappings"));
	assert_non_null(strstr(out, "  car         0->1  FAIL  "));
	free(out);
	free(err);
}

/* The custom all-reduce's flag store into the peer is lost: each rank's
 * flag wait ends at its deadline and the test fails, naming the flag. */
static void fault_car_flag_lost(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "flaglost", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "car");
	assert_non_null(strstr(out, "  car         0->1  FAIL  rank 0 (this process, GPU 0): round 1: GPU 1's "
				    "flag never arrived in GPU 0's memory within 0.5 s (it holds "));
	assert_non_null(strstr(out, "GPU 1's flag store into the peer was lost or never became visible"));
	assert_non_null(strstr(out, "              usually: a custom all-reduce across processes (vLLM, "
				    "SGLang) would return wrong or stale data or hang"));
	assert_non_null(strstr(out, "verify: FAIL (0 OK, 2 FAIL)"));
	free(out);
	free(err);
}

/* Stale peer reads: the all-reduce's sum misses the peer's payload of
 * the round, and the message says a stale read after the flag. */
static void fault_car_stale(void **st)
{
	char *out, *err, line[2048];
	const char *l, *nl;

	(void)st;
	setenv("FAKECUDA_FAULT", "stale", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "car");
	/*
	 * One rank reads a stale payload in round 2. Which one is a race in the
	 * fake (a rank that ran ahead was snapshotted with the next round's
	 * payload, passes round 2 and then waits for the failed peer's flag in
	 * round 3), so the 0->1 line names the stale read in rank 0's part or
	 * in rank 1's.
	 */
	l = strstr(out, "  car         0->1  FAIL  rank 0 (this process, GPU 0): round ");
	assert_non_null(l);
	nl = strchr(l, '\n');
	snprintf(line, sizeof(line), "%.*s", (int)(nl ? nl - l : (long)strlen(l)), l);
	assert_non_null(strstr(line, "round 2: element 0 is 0x"));
	assert_non_null(strstr(line, "payload of this round was, after its flag: a stale peer read"));
	/* where rank 1 failed too, its GPU is named: the line once read
	 * "rank 1 (GPU round 2: ..." */
	for (const char *r1 = strstr(out, "; rank 1 (GPU "); r1; r1 = strstr(r1 + 1, "; rank 1 (GPU "))
		assert_true(r1[14] >= '0' && r1[14] <= '9' && r1[15] == ')');
	free(out);
	free(err);
}

/* A graph replay that drops its node: the car test's graph phase fails
 * on its first replay after the launched rounds passed. */
static void fault_car_graph(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "graphdrop", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "car");
	assert_non_null(strstr(out, "  car         0->1  FAIL  rank 0 (this process, GPU 0): round 10 "
				    "(graph replay): "));
	free(out);
	free(err);
}

/* Processes that map the peer's memory while others start and exit
 * deadlock (the fake's openhang: a second process opening while another
 * opens blocks for good): each round's processes have a deadline, the late
 * ones are killed and named, and the single-process ipc test still passes. */
static void fault_procs_hang(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "openhang", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "ipc,procs",
	       "--pairs", "0-1");
	assert_non_null(strstr(out, "  ipc         0->1  OK    "));
	assert_non_null(strstr(out, " of 4 processes started at once on GPU 1 (each opening GPU 0's "
				    "buffers, copying, exiting) did not finish within 6 s and were killed: "
				    "processes mapping a peer's memory while others exit hang (on "
				    "580.65.06 to 610.57.03 nvidia-uvm's devicesLock inversion, docs/support.md; "
				    "fixed in 610.57.04)\n"));
	assert_non_null(strstr(out, "  procs       0->1  FAIL  round 1: "));
	assert_non_null(strstr(out, "verify: FAIL (2 OK, 2 FAIL)"));
	free(out);
	free(err);
}

/* A copy that never completes inside the second processes: each prints its
 * hung line, flushes it and ends without tearing its stuck context down;
 * ipc names the part and the GPUs, procs the round and the process. */
static void fault_hang_in_child(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "hang", 1);
	setenv("FAKECUDA_HANG_KIND", "ce", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "ipc,procs",
	       "--pairs", "0-1");
	assert_non_null(strstr(out, "  ipc         0->1  FAIL  second process on GPU 1, ce of GPU 0's buffer: "
				    "did not finish within 0.5 s (hung)\n"));
	assert_non_null(strstr(out, "  procs       0->1  FAIL  round 1, process 1 of 4 on GPU 1: ce FAIL did "
				    "not finish within 0.5 s (hung)\n"));
	free(out);
	free(err);
}

/*
 * A second process that writes more than verify keeps of its output (4 KiB)
 * and then hangs: still read under the deadline, killed at it, not waited
 * for unread (verify once sat in waitpid until the child chose to end).
 */
static void chatty_child_hangs(void **st)
{
	char *out, *err, dir[] = "/tmp/p2ps-chatty-XXXXXX", script[64], *self = getenv("P2PCTL_SELF");
	FILE *f;
	double t0;

	(void)st;
	assert_non_null(mkdtemp(dir));
	snprintf(script, sizeof(script), "%s/child", dir);
	f = fopen(script, "w");
	assert_non_null(f);
	/* 8 KiB to stderr, then 60 s of nothing: a child stuck after a noisy start */
	fprintf(f, "#!/bin/sh\nhead -c 8192 /dev/zero | tr '\\0' x >&2\nexec sleep 60\n");
	fclose(f);
	assert_int_equal(chmod(script, 0755), 0);
	setenv("P2PCTL_SELF", script, 1);
	t0 = now_s();
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "ipc", "--pairs", "0-1");
	/* the deadline is 3 x 0.5 + 10 s per direction: well under the child's 60 s */
	assert_true(now_s() - t0 < 45);
	assert_non_null(strstr(out, "  ipc         0->1  FAIL  the second process did not finish within 11.5 s "
				    "and was killed: the IPC path hangs"));
	free(out);
	free(err);
	setenv("P2PCTL_SELF", self, 1);
	unlink(script);
	rmdir(dir);
}

/* The second process's cuIpcOpenMemHandle maps the wrong memory: ipc fails
 * at its first check, nothing else does. */
static void fault_ipc_wrong(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "ipcwrong", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "  ipc         0->1  FAIL  second process on GPU 1, ce of GPU 0's buffer: "
				    "first mismatch at offset 0 (0x0): expected 0x"));
	assert_non_null(strstr(out, "              usually: buffers shared between processes"));
	assert_non_null(strstr(out, "  ipc         1->0  FAIL  second process on GPU 0, ce of GPU 1's buffer"));
	assert_non_null(strstr(out, "verify: FAIL (30 OK, 6 FAIL); 10 OK without a proven path\n"));
	free(out);
	free(err);
	/* no second process to run: a clear failure, no hang */
	fake_reset();
	setenv("P2PCTL_SELF", "/nonexistent/p2pctl", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "ipc");
	assert_non_null(strstr(out, "  ipc         0->1  FAIL  cannot start the second process /nonexistent/p2pctl: "
				    "No such file or directory\n"));
	free(out);
	free(err);
	fake_setup();
}

/* NCCL (a fake libnccl.so.2 here): every element of every size checked; a
 * wrong element fails, a library that does not load is a skip with why. */
static void nccl_allreduce(void **st)
{
	char *out, *err;

	(void)st;
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--tests", "nccl");
	assert_non_null(strstr(out, "libnccl.so.2\n  nccl        0,1   OK    524280 "
				    "bytes, int32 sum all-reduce over 2 GPUs, 34 calls on one communicator (from 8 "
				    "bytes, in place and out of place); path not proven: NCCL reports P2P/CUMEM on "
				    "all 4 channel connections"));
	free(out);
	free(err);
	setenv("FAKENCCL_WRONG", "1", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--tests", "nccl");
	assert_non_null(strstr(out, "  nccl        0,1   FAIL  8 bytes: GPU 0's result: element 1 is "));
	assert_non_null(strstr(out, "              usually: NCCL's all-reduce over these GPUs returns wrong data"));
	free(out);
	free(err);
	unsetenv("FAKENCCL_WRONG");
	setenv("FAKECUDA_DEVICES", "3", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	assert_non_null(strstr(out, "  nccl        1,2   OK"));
	assert_non_null(strstr(out, "  nccl        0,1,2  OK    20472 bytes, int32 sum all-reduce over 3 GPUs, 22 calls"));
	free(out);
	free(err);
	setenv("P2PCTL_LIBNCCL", "/nonexistent/libnccl.so.2", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	assert_non_null(strstr(out, "  nccl        -     SKIP  cannot load /nonexistent/libnccl.so.2"));
	assert_non_null(strstr(out, "verify: NO TEST RAN (0 OK, 0 FAIL, 1 skipped)\n"));
	free(out);
	free(err);
	fake_setup();
}

/*
 * The transport NCCL picked, from its own debug output (NCCL_DEBUG=INFO
 * into a file verify reads): recorded when it is P2P; a FAIL naming
 * NCCL_P2P_LEVEL when peer access works but NCCL stayed on shared memory
 * (the field's N7: GPUs under different host bridges).
 */
static void nccl_transport(void **st)
{
	char *out, *err;

	(void)st;
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	assert_non_null(strstr(out, "  nccl        0,1   OK    20472 bytes, int32 sum all-reduce over 2 GPUs, "
				    "22 calls on one communicator (from 8 bytes, in place and out of place); path "
				    "not proven: NCCL reports P2P/CUMEM on all 4 channel connections "
				    "(NCCL_DEBUG=INFO); p2pctl does not measure NCCL's path\n"));
	free(out);
	free(err);
	setenv("FAKENCCL_TRANSPORT", "SHM/direct/direct", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	assert_non_null(strstr(out, "  nccl        0,1   FAIL  NCCL moved data via SHM/direct/direct on 4 of "
				    "4 channel connections between GPUs with peer access (0->1 first), not "
				    "P2P: its topology check put them further apart than NCCL_P2P_LEVEL allows "
				    "(NCCL_P2P_LEVEL=SYS lets it use P2P)\n"));
	assert_non_null(strstr(out, "  nccl 0,1: FAIL: NCCL moved data via SHM/direct/direct"));
	/* no test of the pair ran: no grid */
	assert_null(strstr(out, "grid ("));
	free(out);
	free(err);
	/* three GPUs: each set's rows read that set's lines of NCCL's one debug
	 * file (opened once, written at its own offset), not the ranks' logs */
	setenv("FAKECUDA_DEVICES", "3", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	assert_non_null(strstr(out, "  nccl        0,1   FAIL  NCCL moved data via SHM/direct/direct on 4 of 4 "));
	assert_non_null(strstr(out, "  nccl        0,2   FAIL  NCCL moved data via SHM/direct/direct on 4 of 4 "));
	assert_non_null(strstr(out, "  nccl        1,2   FAIL  NCCL moved data via SHM/direct/direct on 4 of 4 "));
	assert_non_null(strstr(out, "  nccl        0,1,2  FAIL  NCCL moved data via SHM/direct/direct on 6 of 6 "));
	assert_non_null(strstr(out, "  nccl        0,2/procs  FAIL  NCCL moved data via SHM/direct/direct on 4 of 4 "));
	free(out);
	free(err);
	unsetenv("FAKECUDA_DEVICES");
	/* the user's own NCCL_P2P_LEVEL is named */
	setenv("NCCL_P2P_LEVEL", "PHB", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	assert_non_null(strstr(out, "further apart than NCCL_P2P_LEVEL=PHB (set here) allows"));
	free(out);
	free(err);
	unsetenv("NCCL_P2P_LEVEL");
	unsetenv("FAKENCCL_TRANSPORT");
	/* the user's own NCCL_DEBUG does not hide the transport (issue 42.5;
	 * test_cuda_nccl.c's verify_transport_always has the failing side) */
	setenv("NCCL_DEBUG", "WARN", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	assert_non_null(strstr(out, "NCCL reports P2P/CUMEM on all 4 channel connections (NCCL_DEBUG=INFO)"));
	assert_string_equal(getenv("NCCL_DEBUG"), "WARN");
	free(out);
	free(err);
}

/* The byte tail (size % 16) is always exercised: the second round is 5
 * bytes shorter than a multiple-of-16 --size. */
static void byte_tail(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_DROP_TAIL", "1", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--tests", "sm");
	assert_non_null(strstr(out, "  sm-read     0->1  FAIL  first mismatch at offset 65520 (0xfff0): "
				    "expected 0x"));
	assert_non_null(strstr(out, "got 0xa5, the poison: the write never landed (11 of 65531 bytes differ)"));
	free(out);
	free(err);
}

/* Runs differ: a random seed each run, printed; --seed repeats one. */
static void seeds(void **st)
{
	char *out, *err, *a, *b;

	(void)st;
	RUN_RC(0, verify_main, &out, &err, "verify", "--size", "1k", "--tests", "ce",
	       "--seconds", "0.01");
	a = strstr(out, "seed 0x");
	assert_non_null(a);
	a = strndup(a, 23);	/* "seed 0x" and 16 digits */
	free(out);
	free(err);
	RUN_RC(0, verify_main, &out, &err, "verify", "--size", "1k", "--tests", "ce",
	       "--seconds", "0.01");
	b = strstr(out, "seed 0x");
	assert_non_null(b);
	assert_memory_not_equal(a, b, 23);
	free(out);
	free(err);
	RUN_RC(0, verify_main, &out, &err, "verify", "--size", "1k", "--tests", "ce", "--seed",
	       a + 5);
	assert_non_null(strstr(out, a));
	free(out);
	free(err);
	free(a);
}

/* One GPU: --loopback runs the device tests against itself, says it proves
 * no P2P path, and does not hang. */
static void loopback(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_DEVICES", "1", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--loopback");
	assert_non_null(strstr(out, "GPU 0 loopback (no P2P: a check of the tool and the GPU)\n"));
	assert_non_null(strstr(out, "  flags       0->0  OK    524288 bytes, 8 rounds"));
	assert_non_null(strstr(out, "path not proven: loopback within GPU 0: no peer path was used\n"));
	assert_non_null(strstr(out, "verify: OK (11 OK, 0 FAIL); 11 OK without a proven path\n"));
	free(out);
	free(err);
}

/* --loopback with a test that needs two GPUs: a usage error naming it,
 * never "verify: OK (0 OK, 0 FAIL)" for a run that ran nothing. */
static void loopback_two_gpu_tests(void **st)
{
	static const char *const lists[] = { "vram", "path", "um-read", "concurrent,um", "flags,vram" };
	static const char *const named[] = { "vram", "path", "um-read", "um-read, um-write, um-prefetch, um-fault, concurrent", "vram" };
	char *out, *err, want[160];

	(void)st;
	setenv("FAKECUDA_DEVICES", "1", 1);
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		RUN_RC(2, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--loopback",
		       "--tests", (char *)lists[i]);
		snprintf(want, sizeof(want), "verify: --loopback does not run %s: %s two GPUs\n",
			 named[i], strchr(named[i], ',') ? "they need" : "it needs");
		assert_non_null(strstr(err, want));
		assert_null(strstr(out, "verify: OK"));
		free(out);
		free(err);
	}
	/* "all" (or no --tests) is the loopback set, as before */
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--loopback",
	       "--tests", "all");
	assert_non_null(strstr(out, "verify: OK (11 OK, 0 FAIL)"));
	free(out);
	free(err);
}

/* Every test skipped: no test ran, and that is not OK, in text or JSON. */
static void nothing_ran(void **st)
{
	char *out, *err;

	(void)st;
	setenv("P2PCTL_LIBNCCL", "/nonexistent/libnccl.so.2", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	assert_null(strstr(out, "verify: OK"));
	assert_non_null(strstr(out, "verify: NO TEST RAN (0 OK, 0 FAIL, 1 skipped)\n"));
	free(out);
	free(err);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl",
	       "--json");
	assert_non_null(strstr(out, "\"result\":\"NO TEST RAN\""));
	free(out);
	free(err);
	unsetenv("P2PCTL_LIBNCCL");
}

static void tests_option(void **st)
{
	char *out, *err;

	(void)st;
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "flags");
	assert_non_null(strstr(out, "  flags       0->1  OK"));
	assert_non_null(strstr(out, "  flags-poll  1->0  OK"));
	assert_null(strstr(out, "  ce "));
	assert_null(strstr(out, "concurrent"));
	assert_non_null(strstr(out, "verify: OK (4 OK, 0 FAIL)\n"));
	free(out);
	free(err);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests",
	       "concurrent,um-read");
	assert_non_null(strstr(out, "  um-read     1->0  OK"));
	assert_null(strstr(out, "um-write"));
	assert_non_null(strstr(out, "  managed memory 0-1: OK (2 OK, 0 FAIL"));
	assert_non_null(strstr(out, "  concurrent  0->1  OK"));
	free(out);
	free(err);
	RUN_RC(2, verify_main, &out, &err, "verify", "--tests", "bogus");
	assert_non_null(strstr(err, "unknown test 'bogus' in --tests"));
	free(out);
	free(err);
	RUN_RC(2, verify_main, &out, &err, "verify", "--timeout", "0");
	free(out);
	free(err);
	RUN_RC(2, verify_main, &out, &err, "verify", "--seed", "x1");
	free(out);
	free(err);
	RUN_RC(2, verify_main, &out, &err, "verify", "--offset", "junk");
	free(out);
	free(err);
}

/* Copies staged through host memory behind a lying attribute: the
 * measurement shows staging speed, and the ce test alone proves nothing. */
static void path_staged(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "staged", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1M");
	assert_non_null(strstr(out, "  path        0->1  FAIL  P2P works at staging speed: GPU 0 -> GPU 1 "
				    "copies 18.7 GB/s with peer access on, 18.7 GB/s with it off"));
	assert_non_null(strstr(out, "  path        1->0  FAIL  P2P works at staging speed: GPU 1 -> GPU 0 "));
	assert_non_null(strstr(out, "0<->1: P2P works at staging speed"));
	assert_non_null(strstr(out, "  ce          0->1  OK    2097147 bytes, copy engine on GPU 0, 15.8"));
	assert_non_null(strstr(out, "path not proven: the driver reports a peer mapping"));
	free(out);
	free(err);
	/* --tests ce alone (issue 42): its copies are still judged, by the path
	 * test it brings: copies at staging speed never end in exit 0 */
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "ce");
	assert_non_null(strstr(out, "  path        0->1  FAIL  P2P works at staging speed: "));
	assert_non_null(strstr(out, "0<->1: P2P works at staging speed"));
	assert_null(strstr(out, "verify: OK"));
	free(out);
	free(err);
}

/*
 * Issue 42, class 2: peer copies 1.15x the staged ones' bandwidth, with the
 * staged path's latency (2 us both): staging behind a reported mapping.
 * Bandwidth alone proved the path before; only latency tells it now.
 */
static void path_staged_fast_host(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_BW_GBPS", "23", 1);
	setenv("FAKECUDA_NOPEER_GBPS", "20", 1);
	setenv("FAKECUDA_NOPEER_LAT_US", "2", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "path");
	assert_non_null(strstr(out, "  path        0->1  FAIL  P2P works at staging speed: GPU 0 -> GPU 1 "));
	assert_non_null(strstr(out, "latency 2.0 us on, 2.0 us off (1.00x, a direct path is below 0.5x): the "
				    "copies take no direct path\n"));
	assert_null(strstr(out, "P2P verified"));
	free(out);
	free(err);
}

/*
 * Issue 42, class 2: with the line rate unknown (no sysfs, no NVML, as in
 * the lent VMs) a copy at 2000 GB/s, beyond any peer link, passed. Now it
 * fails against the ceiling (NVLink5 x18 where NVML did not answer).
 */
static void path_faster_than_any_link(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_BW_GBPS", "2000", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "path");
	assert_non_null(strstr(out, "  path        0->1  FAIL  faster than any link: GPU 0 -> GPU 1 copied "));
	assert_non_null(strstr(out, "with the line rate unknown, above NVLink5 x18, the fastest peer link (NVML "
				    "did not say whether they have NVLink) (900.0 GB/s): the data did not cross "
				    "a link"));
	free(out);
	free(err);
}

/*
 * Issue 42, class 2: every timed copy's destination is checked, not one
 * read-back after all of them. FAKECUDA_CEDROP_FROM=2: the warm-up copy
 * lands, every later copy between the GPUs writes nothing; the warm-up's
 * bytes passed the single check before.
 */
static void path_checks_every_copy(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_CEDROP_FROM", "2", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "path");
	assert_non_null(strstr(out, "  path        0->1  FAIL  GPU 0 -> GPU 1, peer access off, timed copy 1: "
				    "first mismatch at offset 0: expected 0x"));
	assert_non_null(strstr(out, "the poison: the write never landed"));
	free(out);
	free(err);
}

/* All peer traffic at 3 GB/s (an ACS/IOMMU detour), below staging's 20. */
static void path_slow_peer(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_BW_GBPS", "3", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1M");
	/* the staged copies' latency (14 us against 2) shows the direct path */
	assert_non_null(strstr(out, "  path        0->1  FAIL  P2P slower than staging: GPU 0 -> GPU 1 "
				    "copies 3.0 GB/s with peer access on, 18.7 GB/s with it off"));
	assert_non_null(strstr(out, "0<->1: P2P FAILED (2 tests: path)"));
	assert_non_null(strstr(out, "verify: FAIL ("));
	free(out);
	free(err);
}

/* 100 GB/s over a PCIe Gen3 x4 path (3.9 GB/s): the copy did not cross it. */
static void path_faster_than_link(void **st)
{
	char *out, *err;

	(void)st;
	fake_sysfs("8.0 GT/s PCIe", "16", "4");
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1M");
	fake_sysfs_rm();
	assert_non_null(strstr(out, "  path        0->1  FAIL  faster than the link: GPU 0 -> GPU 1 copied "));
	assert_non_null(strstr(out, "GB/s over PCIe Gen3 x4 (3.9 GB/s): the data did not cross it"));
	assert_non_null(strstr(out, "0<->1: P2P FAILED"));
	/* its own hint, not the staging one (finding 13) */
	assert_non_null(strstr(out, "the data did not cross it (it stayed in one GPU's memory, or the "
				    "link is misreported)\n              usually: the line rate may be misread"));
	free(out);
	free(err);
}

/*
 * Idle GPUs train their links down to 2.5 GT/s (review 33, finding 1): the
 * bound is what the links can carry (max_link_speed), not their speed
 * before the first copy.
 */
static void path_idle_link(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_BW_GBPS", "25", 1);
	fake_sysfs_idle();
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "path");
	fake_sysfs_rm();
	assert_non_null(strstr(out, "  path        0->1  OK    GPU 0 -> GPU 1: 24.7 GB/s with peer access "
				    "on (78% of PCIe Gen4 x16, 31.5 GB/s)"));
	assert_non_null(strstr(out, "  link: PCIe Gen4 x16, 31.5 GB/s per direction (sysfs: max_link_speed x "
				    "current_link_width, slowest hop 0000:00:01.0 to the root ports)"));
	/* still trained down after the copies: said, not judged */
	assert_non_null(strstr(out, "  link after the tests: PCIe Gen1 x16 (current_link_speed; idle GPUs "
				    "train down"));
	free(out);
	free(err);
}

/*
 * Both GPUs behind one switch with a slower uplink (finding 2): P2P turns
 * in the switch, the uplink does not count; the narrowest hop below it is
 * named.
 */
static void path_switch_uplink(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_BW_GBPS", "25", 1);
	fake_sysfs_switch("4", "16");
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "path");
	fake_sysfs_rm();
	assert_non_null(strstr(out, "  path        0->1  OK    GPU 0 -> GPU 1: 24.7 GB/s with peer access "
				    "on (78% of PCIe Gen4 x16, 31.5 GB/s)"));
	assert_non_null(strstr(out, "slowest hop 0000:0f:00.0 below the GPUs' common switch 0000:0e:00.0)"));
	free(out);
	free(err);
	/* a narrow link below the switch still limits it, and is named */
	setenv("FAKECUDA_BW_GBPS", "100", 1);
	fake_sysfs_switch("16", "4");
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "path");
	fake_sysfs_rm();
	assert_non_null(strstr(out, "  link: PCIe Gen4 x4, 7.9 GB/s per direction (sysfs: max_link_speed x "
				    "current_link_width, slowest hop 0000:0f:01.0 below the GPUs' common "
				    "switch 0000:0e:00.0)"));
	assert_non_null(strstr(out, "  path        0->1  FAIL  faster than the link: "));
	free(out);
	free(err);
}

/* In a VM the bridges' links are emulated (Gen1 x1): no verdict from them. */
static void path_vm_link(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_BW_GBPS", "25", 1);
	fake_sysfs_vm();
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "path");
	fake_sysfs_rm();
	assert_non_null(strstr(out, "  link: line rate unknown: in a VM (CPU flag 'hypervisor'), the "
				    "bridges' links are emulated: read the host's; NVLink: "));
	assert_non_null(strstr(out, "  path        0->1  OK    GPU 0 -> GPU 1: 24.7 GB/s with peer access "
				    "on (line rate unknown: in a VM (CPU flag 'hypervisor'), "));
	assert_null(strstr(out, "link after the tests"));
	free(out);
	free(err);
}

/* The one-line verdict, with the share of the line rate. */
static void path_verified(void **st)
{
	char *out, *err;
	json_object *o;

	(void)st;
	setenv("FAKECUDA_BW_GBPS", "25", 1);
	fake_sysfs("16.0 GT/s PCIe", "16", "16");
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "1M");
	assert_non_null(strstr(out, "  path        0->1  OK    GPU 0 -> GPU 1: 24.7 GB/s with peer access "
				    "on (78% of PCIe Gen4 x16, 31.5 GB/s), 18.7 GB/s off (1.3x); "
				    "latency 2.0 us on, 14.0 us off"));
	assert_non_null(strstr(out, "0<->1: P2P verified, 24.7 GB/s (78% of PCIe Gen4 x16), 2.0 us\n"));
	assert_non_null(strstr(out, "  link: PCIe Gen4 x16, 31.5 GB/s per direction (sysfs: max_link_speed x "
				    "current_link_width, slowest hop 0000:00:01.0 to the root ports); NVLink: "
				    "NVML not loaded"));
	assert_null(strstr(out, "link after the tests"));
	assert_non_null(strstr(out, "path: peer copy measured"));
	free(out);
	free(err);
	o = RUN_JSON(0, verify_main, "verify", VOPTS, "--size", "1M", "--json");
	fake_sysfs_rm();
	assert_string_equal(jstr(o, "pairs.0.verdict"),
			    "0<->1: P2P verified, 24.7 GB/s (78% of PCIe Gen4 x16), 2.0 us");
	assert_true(json_object_get_boolean(jget(o, "pairs.0.path_proven")));
	json_object_put(o);
}

/* A failed test never says its path was proven. */
static void failed_not_proven_json(void **st)
{
	json_object *o;

	(void)st;
	setenv("FAKECUDA_CORRUPT_OFFSET", "0", 1);
	setenv("FAKECUDA_CORRUPT_KIND", "sm", 1);
	o = RUN_JSON(1, verify_main, "verify", VOPTS, "--size", "4k", "--tests", "sm-read", "--json");
	assert_string_equal(jstr(o, "pairs.0.tests.0.status"), "FAIL");
	assert_non_null(jget(o, "pairs.0.tests.0.path_proven"));
	assert_false(json_object_get_boolean(jget(o, "pairs.0.tests.0.path_proven")));
	json_object_put(o);
}

/* libnccl.so.2 only in a pip wheel (~/.local/.../nvidia/nccl/lib): found and run. */
static void nccl_pip_wheel(void **st)
{
	char home[64], dir[256], cmd[768], *out, *err;
	const char *fake = getenv("P2PCTL_LIBNCCL");
	const char *oldhome = getenv("HOME");
	char *saved = oldhome ? strdup(oldhome) : NULL;

	(void)st;
	/* the wheel wins over a libnccl.so.2 on this host's linker path */
	unsetenv("VIRTUAL_ENV");
	unsetenv("CONDA_PREFIX");
	assert_non_null(fake);
	snprintf(home, sizeof(home), "/tmp/p2pctl-home-XXXXXX");
	assert_non_null(mkdtemp(home));
	snprintf(dir, sizeof(dir), "%s/.local/lib/python3.11/site-packages/nvidia/nccl/lib", home);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp %s %s/libnccl.so.2", dir, fake, dir);
	assert_int_equal(system(cmd), 0);
	unsetenv("P2PCTL_LIBNCCL");
	setenv("HOME", home, 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	if (saved)
		setenv("HOME", saved, 1);
	free(saved);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", home);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "nccl: all-reduce with %s/libnccl.so.2", dir);
	assert_non_null(strstr(out, cmd));
	assert_non_null(strstr(out, "  nccl        0,1   OK"));
	free(out);
	free(err);
	fake_setup();
}

/*
 * NCCL as PyTorch and vLLM run it: one process per GPU (ncclGetUniqueId in
 * rank 0, ncclCommInitRank in each), every rank's result checked, each
 * rank's own NCCL debug output read; a rank whose init hangs, whose process
 * dies or whose result is wrong is named, with its GPU and stage.
 */
static void nccl_procs(void **st)
{
	char *out, *err, tmp[] = "/tmp/p2ps-tmpdir-XXXXXX";
	DIR *d;
	struct dirent *e;
	int left = 0;

	(void)st;
	/* NCCL's debug files go to a directory of verify's own under TMPDIR,
	 * and nothing of it is left after the run */
	assert_non_null(mkdtemp(tmp));
	setenv("TMPDIR", tmp, 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--tests", "nccl");
	unsetenv("TMPDIR");
	d = opendir(tmp);
	assert_non_null(d);
	while ((e = readdir(d)))
		left += e->d_name[0] != '.';
	closedir(d);
	assert_int_equal(left, 0);
	rmdir(tmp);
	/* 2 channels of each rank's own log: both ranks' files were read */
	assert_non_null(strstr(out, "  nccl        0,1/procs  OK    524280 bytes, int32 sum all-reduce "
				    "over 2 GPUs in one process each (ncclCommInitRank), 34 calls on one "
				    "communicator (from 8 bytes, in place and out of place); "
				    "path not proven: NCCL reports P2P/CUMEM on all 4 channel connections"));
	free(out);
	free(err);
	setenv("FAKENCCL_RANK", "1", 1);
	setenv("FAKENCCL_RANK_FAULT", "hang-init", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	assert_non_null(strstr(out, "  nccl        0,1   OK"));
	/* the ranks wait for each other: every one still running is named, with its stage */
	assert_non_null(strstr(out, "  nccl        0,1/procs  FAIL  rank 0 (GPU 0) in all-reduce of 8 bytes, "
				    "rank 1 (GPU 1) in ncclCommInitRank were still running after 0.5 s (a process "
				    "per rank) and were killed: NCCL's init hangs"));
	free(out);
	free(err);
	setenv("FAKENCCL_RANK_FAULT", "die", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	assert_non_null(strstr(out, "  nccl        0,1/procs  FAIL  rank 1 (GPU 1)'s process exited with "
				    "status 3 in all-reduce of 8 bytes, without a result\n"));
	free(out);
	free(err);
	setenv("FAKENCCL_RANK_FAULT", "wrong", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	assert_non_null(strstr(out, "  nccl        0,1/procs  FAIL  rank 1 (GPU 1): 8 bytes: GPU 1's result: "
				    "element 1 is "));
	free(out);
	free(err);
	/* a rank that writes a lot to stderr is read past, not cut off */
	setenv("FAKENCCL_RANK_FAULT", "chatty", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	assert_non_null(strstr(out, "  nccl        0,1/procs  OK"));
	free(out);
	free(err);
	setenv("FAKENCCL_RANK_FAULT", "wrong", 1);
	/* rank 0's: the same, named as rank 0 */
	setenv("FAKENCCL_RANK", "0", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	assert_non_null(strstr(out, "  nccl        0,1/procs  FAIL  rank 0 (GPU 0): 8 bytes: GPU 0's result: "
				    "element 1 is "));
	free(out);
	free(err);
	unsetenv("FAKENCCL_RANK");
	unsetenv("FAKENCCL_RANK_FAULT");
}

/* /proc/PID/stat's state and parent; 0, or -1 when pid is gone. */
static int proc_stat(long pid, char *state, long *ppid)
{
	char path[64], line[512], *rp;
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	/* pid (comm) state ppid: comm may hold spaces, read past its last ')' */
	if (fgets(line, sizeof(line), f) && (rp = strrchr(line, ')')))
		n = sscanf(rp + 1, " %c %ld", state, ppid);
	fclose(f);
	return n == 2 ? 0 : -1;
}

/* The pids whose parent is ppid and that have not ended (zombies count as ended). */
static int children_of(pid_t ppid, pid_t *kids, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) && n < max) {
		char *rp, state;
		long pid = strtol(e->d_name, &rp, 10), pp;

		if (!*rp && pid > 0 && !proc_stat(pid, &state, &pp) && pp == ppid && state != 'Z')
			kids[n++] = (pid_t)pid;
	}
	closedir(d);
	return n;
}

static int alive(pid_t pid)
{
	char state;
	long pp;

	return !proc_stat(pid, &state, &pp) && state != 'Z';
}

/*
 * verify killed outright (SIGKILL, or a second SIGTERM) while NCCL's ranks
 * run: the ranks end with it, they do not hold their GPUs on as orphans.
 */
static void children_die_with_verify(void **st)
{
	char *argv[] = { getenv("P2PCTL_SELF"), "verify", VOPTS, "--timeout", "30", "--size", "4k",
			 "--tests", "nccl", NULL };
	pid_t pid, kids[8];
	int n = 0, status, left = 1;
	double end;

	(void)st;
	setenv("FAKENCCL_RANK", "1", 1);
	setenv("FAKENCCL_RANK_FAULT", "hang-init", 1);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	/* both ranks started (rank 1 hangs in init, rank 0 waits for it) */
	for (end = now_s() + 20; now_s() < end && (n = children_of(pid, kids, 8)) < 2;)
		usleep(20000);
	assert_int_equal(n, 2);
	usleep(200000);		/* past the ranks' start-up */
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	for (end = now_s() + 5; now_s() < end && left;) {
		left = 0;
		for (int k = 0; k < n; k++)
			left += alive(kids[k]);
		usleep(20000);
	}
	for (int k = 0; k < n; k++)
		if (alive(kids[k]))
			kill(kids[k], SIGKILL);	/* do not leave them to the next test */
	assert_int_equal(left, 0);
	unsetenv("FAKENCCL_RANK");
	unsetenv("FAKENCCL_RANK_FAULT");
}

/* NCCL's init never returns: a deadline, HUNG, the pair named. */
static void nccl_init_hang(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKENCCL_HANG_INIT", "1", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "nccl");
	/* one init for all the calls: no size named */
	assert_non_null(strstr(out, "  nccl        0,1   FAIL  ncclCommInitAll over 2 GPUs did not "
				    "return within 0.5 s: NCCL's init hangs"));
	assert_non_null(strstr(out, "verify: HUNG ("));
	assert_non_null(strstr(err, "nccl 0,1 hung: ncclCommInitAll over 2 GPUs"));
	free(out);
	free(err);
}

/* A skipped nccl test is in the final verdict, not hidden behind OK. */
static void nccl_skip_in_verdict(void **st)
{
	char *out, *err;

	(void)st;
	setenv("P2PCTL_LIBNCCL", "/nonexistent/libnccl.so.2", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "path,nccl");
	assert_non_null(strstr(out, "verdict:\n  0<->1: P2P verified for copy-engine copies only (sm-read, "
				    "sm-write, flags, flags-poll, car not run), 95.4 GB/s (line rate unknown), "
				    "2.0 us\n  nccl -: SKIPPED: cannot load /nonexistent/libnccl.so.2"));
	free(out);
	free(err);
	fake_setup();
}

/* One lost batch of SM stores in round 2 of the concurrent test: a later
 * round must not repair it (every round has its own seed and poison). */
static void concurrent_transient_loss(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FLAKY", "3", 1);	/* round 2, 0->1's SM stores */
	/* a long --seconds: the test ends at the bad round, however slow the host */
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "64k", "--tests", "concurrent",
	       "--seconds", "30");
	assert_non_null(strstr(out, "  concurrent  0->1  FAIL  SM-store slice: first mismatch at offset "));
	assert_non_null(strstr(out, "got 0xa5, the poison: the write never landed"));
	assert_non_null(strstr(out, "in round 2 of all pairs at once"));
	assert_non_null(strstr(out, "  concurrent  1->0  OK"));
	free(out);
	free(err);
}

/* Peer access that fails one way only: the direction is named. */
static void one_way_enable(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_ENABLE_ERROR", "217", 1);
	setenv("FAKECUDA_ENABLE_FROM", "1", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "  FAIL  cuCtxEnablePeerAccess 1->0 (GPU 1 mapping GPU 0's memory): "
				    "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"));
	assert_non_null(strstr(out, "; 0->1 was enabled: the tests that need only it run\n        libcuda "
				    "itself refuses the pair"));
	assert_non_null(strstr(out, "0<->1: P2P not available (1->0: peer access could not be enabled)"));
	free(out);
	free(err);
}

/* A hung graph replay names the GPU, not "GPU a". */
static void graph_hang_names_gpu(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "hang", 1);
	setenv("FAKECUDA_HANG_KIND", "ce", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "graph");
	assert_non_null(strstr(err, "graph 0->1 hung: the replay of GPU 0's graph did not finish within 0.5 s"));
	assert_null(strstr(out, "GPU a's"));
	free(out);
	free(err);
}

/* How many times needle occurs in hay. */
static int count_of(const char *hay, const char *needle)
{
	int k = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		k++;
	return k;
}

/*
 * FIELD F4 ("writes fine, reads not"), with CUDA's sticky errors: SM loads
 * of the peer fault and kill the loading GPU's context. The tests after the
 * fault do not run in the dead context: they say why and show SKIP, not a
 * FAIL blamed on the peer mapping; the run still FAILs.
 */
static void sticky_fault_not_run(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "readfault", 1);
	setenv("FAKECUDA_STICKY", "1", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "  ce          1->0  OK"));
	assert_non_null(strstr(out, "  sm-read     0->1  FAIL  the copy on GPU 1: CUDA_ERROR_ILLEGAL_ADDRESS "
				    "(fake error text); this likely means GPU 1 faulted on GPU 0's memory: its "
				    "peer mapping of that memory is missing or wrong, although peer access is on "
				    "and the driver reports the mapping; GPU 1's context is lost (CUDA errors are "
				    "sticky): later tests on GPU 1 are not run\n"));
	assert_non_null(strstr(out, "  sm-write    0->1  SKIP  not run: GPU 1's context was lost to sm-read "
				    "0->1's fault (CUDA errors are sticky)\n"));
	assert_non_null(strstr(out, "  car         1->0  SKIP  not run: GPU 1's context was lost"));
	assert_non_null(strstr(out, "  managed memory 0-1: SKIPPED: not run: GPU 1's context was lost"));
	assert_non_null(strstr(out, "  concurrent  1->0  SKIP  not run: GPU 1's context was lost"));
	assert_non_null(strstr(out, "  nccl        0,1   SKIP  not run: GPU 1's context was lost"));
	/* the mapping is blamed once, for the fault itself */
	assert_int_equal(count_of(out, "this likely means"), 1);
	assert_non_null(strstr(out, "  sm-read      FAIL  SKIP\n  sm-write     SKIP  SKIP\n"));
	assert_non_null(strstr(out, "  um-read      SKIP  SKIP\n"));
	assert_non_null(strstr(out, "  0<->1: P2P FAILED (1 test: sm-read)\n"));
	assert_non_null(strstr(out, "  GPU 1: its context was lost to sm-read 0->1's fault (CUDA errors are "
				    "sticky): the later tests that use GPU 1 were not run\n"));
	assert_non_null(strstr(out, "verify: FAIL (5 OK, 1 FAIL, "));
	free(out);
	free(err);
}

/*
 * A driver call that blocks in the kernel (FIELD N10's devicesLock): the
 * fake's cuCtxEnablePeerAccess never returns and no signal ends it. verify
 * runs in its own process (the watchdog _exit()s); the test gives it 20 s
 * and SIGKILLs it after, so that a verify without a watchdog fails the test
 * instead of hanging it.
 */
static void hang_in_driver(void **st)
{
	const char *self = getenv("P2PCTL_SELF");
	size_t len = 0, cap = 1 << 16;
	char *buf = calloc(1, cap);
	int fd[2], status = 0, done = 0;
	double t0 = now_s(), end = t0 + 40;
	pid_t pid;

	(void)st;
	assert_non_null(self);
	setenv("FAKECUDA_FAULT", "enablehang", 1);
	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execl(self, self, "verify", "--seed", "1", "--size", "4k", "--timeout", "1", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	while (now_s() < end) {
		struct pollfd p = { .fd = fd[0], .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 100) < 0)
			break;
		if (!(p.revents & (POLLIN | POLLHUP)))
			continue;
		r = read(fd[0], buf + len, cap - 1 - len);
		if (r <= 0) {
			done = 1;
			break;
		}
		len += (size_t)r;
		buf[len] = '\0';
	}
	close(fd[0]);
	if (!done)
		kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!done || !WIFEXITED(status) || WEXITSTATUS(status) != 1)
		fprintf(stderr, "verify did not end in 40 s or not with status 1 (0x%x); output:\n%s\n",
			status, buf);
	/* done: the pipe reached EOF (stdout let go) although the fake's call
	 * never returns; the watchdog's bound is --timeout, at least 10 s */
	assert_true(done);
	assert_true(now_s() - t0 < 35);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	assert_non_null(strstr(buf, "  GPU 0: cuCtxEnablePeerAccess 0->1 has not returned for "));
	assert_non_null(strstr(buf, " s: blocked in the driver (on 580.65.06 to 610.57.03 likely nvidia-uvm's "
				    "devicesLock; see docs/support.md)\n"));
	assert_non_null(strstr(buf, "verdict:\n  0<->1: not finished: blocked in the driver\n"
				    "verify: HUNG in the driver, a partial verdict (0 OK, 0 FAIL before it)\n"));
	assert_non_null(strstr(buf, "verify: GPU 0: cuCtxEnablePeerAccess 0->1 has not returned"));
	free(buf);
}

/*
 * Peer access enables one way only (1->0 fails with 205, as FIELD F5's
 * misaligned static BAR1 gives): the tests that need only 0->1's mapping
 * run (ce, sm-write and flags by GPU 0, sm-read by GPU 0 of GPU 1's
 * memory); the others say why they did not, and the error's cause is named.
 */
static void one_way_tests_run(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_ENABLE_ERROR", "205", 1);
	setenv("FAKECUDA_ENABLE_FROM", "1", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k");
	assert_non_null(strstr(out, "  FAIL  cuCtxEnablePeerAccess 1->0 (GPU 1 mapping GPU 0's memory): "
				    "CUDA_ERROR_MAP_FAILED (fake error text); 0->1 was enabled: the tests that "
				    "need only it run\n        the driver could not map the peer's BAR1: static "
				    "BAR1 missing or misaligned on one GPU"));
	assert_non_null(strstr(out, "  ce          0->1  OK    "));
	assert_non_null(strstr(out, "  sm-read     1->0  OK    8187 bytes, kernel on GPU 0"));
	assert_non_null(strstr(out, "  sm-write    0->1  OK    "));
	assert_non_null(strstr(out, "  flags       0->1  OK    "));
	assert_non_null(strstr(out, "  sm-write    1->0  SKIP  not available (1->0 could not be enabled)\n"));
	assert_non_null(strstr(out, "  path        0->1  SKIP  not available (1->0 could not be enabled)\n"));
	assert_non_null(strstr(out, "  managed memory 0-1: SKIPPED: peer access is enabled one way only\n"));
	assert_non_null(strstr(out, "  ce           OK*   SKIP\n  sm-read      SKIP  OK\n"
				    "  sm-write     OK    SKIP\n  flags        OK    SKIP\n"));
	assert_non_null(strstr(out, "  0<->1: P2P not available (1->0: peer access could not be enabled)\n"));
	assert_non_null(strstr(out, "verify: FAIL (4 OK, 1 FAIL, 28 skipped)"));
	free(out);
	free(err);
	/* a fault of the enabled direction shows in its own column */
	fake_reset();
	setenv("FAKECUDA_ENABLE_ERROR", "205", 1);
	setenv("FAKECUDA_ENABLE_FROM", "1", 1);
	setenv("FAKECUDA_FAULT", "lost", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "ce,sm");
	assert_non_null(strstr(out, "  sm-write    0->1  FAIL  first mismatch at offset 0"));
	assert_non_null(strstr(out, "  sm-read      SKIP  OK\n  sm-write     FAIL  SKIP\n"));
	free(out);
	free(err);
}

/* A fault of one direction only (FAKECUDA_FAULT_DIR: GPU 1's stores into
 * GPU 0's memory are lost, FIELD F5's one-way store loss): its FAILs land in
 * the 1->0 column, and 0->1 stays OK. */
static void fault_one_direction(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "lost", 1);
	setenv("FAKECUDA_FAULT_DIR", "1>0", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "ce,sm,flags");
	assert_non_null(strstr(out, "  sm-write    0->1  OK    "));
	assert_non_null(strstr(out, "  sm-write    1->0  FAIL  first mismatch at offset 0 (0x0): expected "));
	assert_non_null(strstr(out, "  path         OK    OK\n  ce           OK    OK\n  sm-read      OK    OK\n  sm-write     OK    FAIL\n"
				    "  flags        OK    FAIL\n  flags-poll   OK    OK\n"));
	free(out);
	free(err);
}

/*
 * Review 33, finding 3: peer copies barely above staging's bandwidth (24.7
 * against 22.9 GB/s, 1.08x: a PCIe pair's staged copies can come close) but
 * at 2 us against staging's 15: a direct path. A WARN naming both numbers,
 * not "P2P works at staging speed"; the verdict stays verified, exit 0.
 */
static void path_direct_near_staging(void **st)
{
	char *out, *err;
	json_object *o;

	(void)st;
	setenv("FAKECUDA_BW_GBPS", "25", 1);
	setenv("FAKECUDA_NOPEER_GBPS", "25", 1);	/* 22.9 with 15 us per copy */
	setenv("FAKECUDA_NOPEER_LAT_US", "15", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "1M");
	assert_null(strstr(out, "staging speed"));
	assert_non_null(strstr(out, "  path        0->1  WARN  GPU 0 -> GPU 1: 24.7 GB/s with peer access on "
				    "(line rate unknown: no 0000:10:00.0 in sysfs), 22.9 GB/s off (1.1x); "
				    "latency 2.0 us on, 15.0 us off; a direct path (latency 0.13x the staged "
				    "copies'), but only 1.08x the staged bandwidth: the link is the limit, or "
				    "it is shared\n"));
	assert_non_null(strstr(out, "  path        1->0  WARN  "));
	assert_non_null(strstr(out, "  path         OK    OK\n"));
	assert_non_null(strstr(out, "0<->1: P2P verified, 24.7 GB/s (line rate unknown), 2.0 us; WARN: peer "
				    "copies only 1.08x the staged ones, though their latency shows a direct "
				    "path\n"));
	assert_non_null(strstr(out, "verify: OK ("));
	free(out);
	free(err);
	o = RUN_JSON(0, verify_main, "verify", VOPTS, "--size", "1M", "--tests", "path", "--json");
	assert_string_equal(jstr(o, "pairs.0.tests.0.status"), "OK");
	assert_non_null(strstr(jstr(o, "pairs.0.tests.0.warning"), "but only 1.08x the staged bandwidth"));
	json_object_put(o);
}

/* Staged behind a peer mapping the driver reports, at staging's bandwidth
 * and latency (15 us both ways): both measures agree, a FAIL. */
static void path_staged_latency(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FAULT", "staged", 1);
	setenv("FAKECUDA_NOPEER_LAT_US", "15", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "path");
	assert_non_null(strstr(out, "  path        0->1  FAIL  P2P works at staging speed: GPU 0 -> GPU 1 "
				    "copies 18.7 GB/s with peer access on, 18.7 GB/s with it off (line rate "
				    "unknown: no 0000:10:00.0 in sysfs); latency 15.0 us on, 15.0 us off (1.00x, "
				    "a direct path is below 0.5x): the copies take no direct path\n"));
	assert_non_null(strstr(out, "0<->1: P2P works at staging speed (FAIL: path)"));
	free(out);
	free(err);
	/* the review's 1.09x case with no latency gap (2 us both): still staging */
	unsetenv("FAKECUDA_FAULT");
	setenv("FAKECUDA_NOPEER_LAT_US", "2", 1);
	setenv("FAKECUDA_BW_GBPS", "25", 1);
	setenv("FAKECUDA_NOPEER_GBPS", "23", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "path");
	assert_non_null(strstr(out, "0<->1: P2P works at staging speed (FAIL: path)"));
	free(out);
	free(err);
}

/* A direct path (2 us against 15) at 3 GB/s against staging's 20: P2P
 * slows copies down (an ACS or IOMMU detour): FAIL, named as such. */
static void path_direct_slower(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_BW_GBPS", "3", 1);
	setenv("FAKECUDA_NOPEER_LAT_US", "15", 1);
	RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "path");
	assert_non_null(strstr(out, "  path        0->1  FAIL  P2P slower than staging: GPU 0 -> GPU 1 copies "
				    "3.0 GB/s with peer access on, 18.7 GB/s with it off"));
	assert_non_null(strstr(out, "latency 2.0 us on, 15.0 us off: a direct path, but slower than copies "
				    "staged through host memory (an ACS or IOMMU detour, or a narrow link)\n"));
	assert_non_null(strstr(out, "0<->1: P2P FAILED (2 tests: path)"));
	free(out);
	free(err);
	/* just under staging's bandwidth (0.95x) with a direct path's latency:
	 * within the noise of the measure, a WARN, not a FAIL */
	setenv("FAKECUDA_BW_GBPS", "22", 1);
	setenv("FAKECUDA_NOPEER_GBPS", "25", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "path");
	assert_null(strstr(out, "slower than staging"));
	assert_non_null(strstr(out, "  path        0->1  WARN  "));
	free(out);
	free(err);
}

/*
 * Review 33, finding 10: --tests path moves data with the copy engine only,
 * so lost SM stores and stale SM loads (FIELD F2, F4, F5) pass it. The
 * verdict says what it rests on, and JSON lists the key tests not run.
 */
static void verdict_names_tests_not_run(void **st)
{
	char *out, *err;
	json_object *o, *a;

	(void)st;
	setenv("FAKECUDA_FAULT", "lost,stale", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "path");
	assert_non_null(strstr(out, "0<->1: P2P verified for copy-engine copies only (sm-read, sm-write, "
				    "flags, flags-poll, car not run), 95.4 GB/s (line rate unknown), 2.0 us\n"));
	free(out);
	free(err);
	o = RUN_JSON(0, verify_main, "verify", VOPTS, "--size", "1M", "--tests", "path,ce", "--json");
	assert_non_null(strstr(jstr(o, "pairs.0.verdict"), "P2P verified for copy-engine copies only ("));
	a = jget(o, "pairs.0.tests_not_run");
	assert_non_null(a);
	assert_int_equal(json_object_array_length(a), 5);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(a, 0)), "sm-read");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(a, 4)), "car");
	json_object_put(o);
	/* SM tests, no car: the verdict names car */
	unsetenv("FAKECUDA_FAULT");
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "path,sm,flags");
	assert_non_null(strstr(out, "0<->1: P2P verified for the tests run (car not run), "));
	free(out);
	free(err);
	/* all of them: plain, and an empty list */
	o = RUN_JSON(0, verify_main, "verify", VOPTS, "--size", "4k", "--tests", "path,sm,flags,car",
		     "--json");
	assert_non_null(strstr(jstr(o, "pairs.0.verdict"), "0<->1: P2P verified, "));
	assert_int_equal(json_object_array_length(jget(o, "pairs.0.tests_not_run")), 0);
	json_object_put(o);
}

/*
 * Issue 42, class 3: a bad region of VRAM (peer accesses to it corrupt)
 * between the old three samples (bottom, middle, top), or in the top
 * 256 MiB that they left free. Free memory is 300 MiB: the samples sat at
 * 8, 24 and 42 MiB; the sweep covers it all in --size buffers.
 */
static void vram_bad_region(void **st)
{
	static const char *const bad[] = { "12582912:1048576", "-4194304:1048576" };
	static const char *const where[] = { "buffer 3 of 146 on GPU 0", "buffer 145 of 146 on GPU 0" };
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FREE_BYTES", "314572800", 1);
	for (int i = 0; i < 2; i++) {
		setenv("FAKECUDA_BAD_VRAM", bad[i], 1);
		RUN_RC(1, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "vram",
		       "--vram-budget", "3600");
		assert_non_null(strstr(out, "  vram        0->1  FAIL  free memory, "));
		assert_non_null(strstr(out, where[i]));
		assert_non_null(strstr(out, "(1049088 bytes each, allocated until none was left): ce: "
					    "first mismatch at offset "));
		assert_non_null(strstr(out, "0<->1: P2P FAILED (2 tests: vram)"));
		free(out);
		free(err);
	}
}

/*
 * The sweep's time budget ends before all free memory was tested: the test
 * says how much it covered, WARN and PART, and the run PARTIAL, never OK.
 */
static void vram_budget(void **st)
{
	char *out, *err;

	(void)st;
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "vram",
	       "--vram-budget", "0.000001");
	assert_non_null(strstr(out, "  vram        0->1  WARN  6291441 bytes, ce, sm-read and sm-write over "
				    "free memory in 1049088-byte buffers: 1 of 12 MiB free on GPU 0 (6 buffers)"));
	assert_non_null(strstr(out, "the time budget (--vram-budget) ended: 1 of 12 MiB on GPU 0 and 1 of 12 "
				    "MiB on GPU 1 tested, the rest NOT tested\n"));
	assert_non_null(strstr(out, "  vram         PART  PART\n"));
	assert_non_null(strstr(out, "; WARN: vram tested only part of free memory (the rest NOT tested)\n"));
	assert_non_null(strstr(out, "verify: PARTIAL (2 OK, 0 FAIL); 2 vram tests covered only part of free "
				    "memory\n"));
	assert_null(strstr(out, "verify: OK"));
	free(out);
	free(err);
	/* JSON says it too: a script reads "result", not the text */
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "1M", "--tests", "vram",
	       "--vram-budget", "0.000001", "--json");
	assert_non_null(strstr(out, "\"result\":\"PARTIAL\""));
	free(out);
	free(err);
	RUN_RC(2, verify_main, &out, &err, "verify", "--vram-budget", "0");
	free(out);
	free(err);
}

/*
 * Review 33, finding 12: free memory shrinks between cuMemGetInfo and the
 * vram test's top pad (a display GPU's desktop). 300 MiB: the pad 512 MiB
 * smaller fits, OK. 1 GiB: it does not either, PARTIAL (WARN, PART) with the reason, not
 * "P2P FAILED (vram)".
 */
static void vram_free_overstated(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_FREE_BYTES", "51539607552", 1);
	setenv("FAKECUDA_FREE_OVERSTATE", "314572800", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "vram", "--quick");
	assert_non_null(strstr(out, "  vram        0->1  OK    73683 bytes, --quick: ce, sm-read and sm-write at the "
				    "bottom, middle and top of free memory (pads of 0, 24592 and 48674 MiB on GPU 0, "
				    "0, 24592 and 48674 MiB on GPU 1)"));
	free(out);
	free(err);
	setenv("FAKECUDA_FREE_OVERSTATE", "1073741824", 1);
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "vram", "--quick");
	assert_non_null(strstr(out, "  vram        0->1  WARN  "));
	assert_non_null(strstr(out, "top of free memory not tested: GPU 0 ran out of memory for a pad of "));
	assert_non_null(strstr(out, "the bottom and middle were OK\n"));
	assert_non_null(strstr(out, "  vram         PART  PART\n"));
	assert_non_null(strstr(out, "verify: PARTIAL (2 OK, 0 FAIL)"));
	assert_null(strstr(out, "FAILED"));
	free(out);
	free(err);
}

/* Review 33, finding 17: managed tests the user turned off (--no-managed)
 * are not counted as skipped, as those --tests leaves out are not. */
static void no_managed_not_skipped(void **st)
{
	char *out, *err;

	(void)st;
	RUN_RC(0, verify_main, &out, &err, "verify", VOPTS, "--size", "4k", "--tests", "path",
	       "--no-managed");
	assert_non_null(strstr(out, "  managed memory 0-1: SKIPPED: --no-managed\n"));
	assert_non_null(strstr(out, "verify: OK (2 OK, 0 FAIL)\n"));
	free(out);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: before any test has loaded the fake libnccl.so.2 */
		cmocka_unit_test_setup_teardown(nccl_pip_wheel, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(all_ok, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(path_staged, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(path_slow_peer, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(path_faster_than_link, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(path_verified, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(path_idle_link, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(path_switch_uplink, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(path_vm_link, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(failed_not_proven_json, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(odd_sizes, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(pattern_and_compare, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(corruption_reported, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(corruption_json, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(overrun_detected, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(copy_error, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(no_peer, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(enable_fails, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(one_way_enable, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(graph_hang_names_gpu, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(jit_fails, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(three_gpus_pairs, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(no_driver, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(init_fails, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(one_gpu, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(usage_errors, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(um_wrong_mapping, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(um_wrong_mapping_json, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(um_bad_migration, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(um_not_supported, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(um_old_driver, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(um_too_big, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_stale_read, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_lost_store, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_no_mapping, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_wrong_gpu, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_high_offset, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_hang, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(signal_in_hang, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(um_mapping_not_proven, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(procs_own_slices, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(path_checks_every_copy, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(path_faster_than_any_link, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(path_staged_fast_host, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_graph_drop, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_ipc_wrong, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_vmm_stale, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(vmm_ok_without_ctx_mapping, fake_test_setup,
						fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_car_flag_lost, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_car_stale, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_car_graph, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_procs_hang, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_hang_in_child, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(chatty_child_hangs, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_pte_illegal_address, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(interrupted_run, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(vram_quick, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(nccl_allreduce, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(nccl_skip_in_verdict, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(nccl_transport, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(nccl_procs, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(path_direct_near_staging, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(path_staged_latency, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(path_direct_slower, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(verdict_names_tests_not_run, fake_test_setup,
						fake_test_teardown),
		cmocka_unit_test_setup_teardown(vram_free_overstated, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(vram_bad_region, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(vram_budget, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(no_managed_not_skipped, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(children_die_with_verify, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(byte_tail, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(seeds, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(loopback, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(loopback_two_gpu_tests, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(nothing_ran, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(tests_option, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(concurrent_transient_loss, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(sticky_fault_not_run, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(hang_in_driver, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(one_way_tests_run, vsetup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(fault_one_direction, vsetup, fake_test_teardown),
		/* last: a hung NCCL init leaves its thread and the library behind */
		cmocka_unit_test_setup_teardown(nccl_init_hang, vsetup, fake_test_teardown),
	};

	verify_exit_on_hang = 0;
	/* CMOCKA_FILTER=name*: run only those tests (while working on them) */
	if (getenv("CMOCKA_FILTER"))
		cmocka_set_test_filter(getenv("CMOCKA_FILTER"));

	return cmocka_run_group_tests(tests, NULL, NULL);
}
