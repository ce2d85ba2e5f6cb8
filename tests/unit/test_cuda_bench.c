// SPDX-License-Identifier: GPL-2.0
/* p2pctl bench against the fake libcuda: JSON shape, numbers, options, errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cuda_int.h"
#include "harness.h"
#include "fakesysfs.h"
#include "ncclx.h"


#define BENCH_JSON(rc, ...) RUN_JSON(rc, bench_main, "bench", "--size", "64k", "--json", __VA_ARGS__)

static void json_shape(void **st)
{
	static const char *const keys[] = { "uni_p2p_off", "uni_p2p_on", "bi_p2p_off", "bi_p2p_on",
		"lat_gpu_p2p_off", "lat_gpu_p2p_on", "lat_cpu_p2p_off", "lat_cpu_p2p_on",
		"uni_p2p_on_fastest" };
	json_object *o = BENCH_JSON(0, "--reps", "3");
	char path[128];

	(void)st;
	assert_string_equal(jstr(o, "command"), "bench");
	assert_true(json_object_get_boolean(jget(o, "ok")));
	assert_int_equal(json_object_array_length(jget(o, "devices")), 2);
	assert_string_equal(jstr(o, "devices.1.name"), "Fake GPU 1");
	assert_string_equal(jstr(o, "devices.0.compute_capability"), "9.0");
	assert_null(jget(o, "p2p_access.0.0"));
	assert_true(json_object_get_boolean(jget(o, "p2p_access.0.1")));
	assert_true(jnum(o, "params.size_bytes") == 65536);
	assert_true(jnum(o, "params.copies_per_run") == 5);
	assert_true(jnum(o, "params.reps") == 3);
	assert_true(jnum(o, "params.latency_copies") == 100);
	assert_string_equal(jstr(o, "params.method"), "auto");
	assert_true(jnum(o, "wall_s") > 0);
	assert_int_equal(json_object_object_length(jget(o, "matrices")), 9);
	for (size_t k = 0; k < 9; k++) {
		snprintf(path, sizeof(path), "matrices.%s.median", keys[k]);
		assert_int_equal(json_object_array_length(jget(o, path)), 2);
		snprintf(path, sizeof(path), "matrices.%s.median.1", keys[k]);
		assert_int_equal(json_object_array_length(jget(o, path)), 2);
		snprintf(path, sizeof(path), "matrices.%s.n.0.1", keys[k]);
		assert_true(jnum(o, path) == 3);
		snprintf(path, sizeof(path), "matrices.%s.method.1.0", keys[k]);
		assert_non_null(jget(o, path));
	}
	assert_string_equal(jstr(o, "matrices.uni_p2p_on.unit"), "GB/s");
	assert_string_equal(jstr(o, "matrices.lat_gpu_p2p_on.unit"), "us");
	json_object_put(o);
}

static void values_follow_fake(void **st)
{
	json_object *o;

	(void)st;
	setenv("FAKECUDA_BW_GBPS", "50", 1);
	setenv("FAKECUDA_NOPEER_GBPS", "20", 1);
	setenv("FAKECUDA_LOCAL_GBPS", "1000", 1);
	setenv("FAKECUDA_LAT_US", "0", 1);
	o = BENCH_JSON(0, "--reps", "2", "--off-method", "fastest");
	assert_true(fabs(jnum(o, "matrices.uni_p2p_on.median.0.1") - 50) < 0.1);
	assert_true(fabs(jnum(o, "matrices.uni_p2p_on.median.1.0") - 50) < 0.1);
	assert_true(fabs(jnum(o, "matrices.bi_p2p_on.median.0.1") - 50) < 0.1);	/* fake runs serially */
	assert_true(fabs(jnum(o, "matrices.uni_p2p_off.median.0.1") - 20) < 0.05);
	/* the diagonal counts read and write, as cuda-samples does */
	assert_true(fabs(jnum(o, "matrices.uni_p2p_on.median.0.0") - 2000) < 2);
	/* ce (push) ties with ce-pull etc.; the first candidate wins */
	assert_string_equal(jstr(o, "matrices.uni_p2p_on.method.0.1"), "ce");
	/* our staged copy is two host copies in a row in the fake: 10 GB/s */
	assert_true(fabs(jnum(o, "matrices.uni_p2p_off.calibration.0.1.staged") - 10) < 0.05);
	assert_true(fabs(jnum(o, "matrices.uni_p2p_on_fastest.calibration.0.1.sm-write") - 50) < 0.1);
	assert_string_equal(jstr(o, "params.p2p_off_method"), "fastest");
	assert_non_null(strstr(jstr(o, "matrices.uni_p2p_off.title"), "not the sample's method"));
	json_object_put(o);

	/* SM copies faster than CE: the sample-comparable matrix keeps the
	 * sample's method (ce), the fastest one is its own, labelled matrix. */
	setenv("FAKECUDA_SM_GBPS", "80", 1);
	o = BENCH_JSON(0, "--reps", "2", "--no-p2p-off");
	assert_string_equal(jstr(o, "matrices.uni_p2p_on.method.0.1"), "ce");
	assert_true(fabs(jnum(o, "matrices.uni_p2p_on.median.0.1") - 50) < 0.1);
	assert_null(jget(o, "matrices.uni_p2p_on.calibration.0.1.sm-write"));
	assert_string_equal(jstr(o, "matrices.uni_p2p_on_fastest.method.0.1"), "sm-write");
	assert_true(fabs(jnum(o, "matrices.uni_p2p_on_fastest.median.0.1") - 80) < 0.1);
	assert_true(fabs(jnum(o, "matrices.uni_p2p_on_fastest.calibration.0.1.ce") - 50) < 0.1);
	assert_non_null(strstr(jstr(o, "matrices.uni_p2p_on_fastest.title"), "not the sample's method"));
	assert_null(jget(o, "matrices.uni_p2p_off"));
	assert_false(json_object_get_boolean(jget(o, "params.p2p_off")));
	json_object_put(o);

	setenv("FAKECUDA_LAT_US", "3", 1);
	o = BENCH_JSON(0, "--reps", "2", "--no-p2p-off");
	assert_true(fabs(jnum(o, "matrices.lat_gpu_p2p_on.median.0.1") - 3.0) < 0.01);
	assert_true(jnum(o, "matrices.lat_cpu_p2p_on.median.0.1") >= 0);
	json_object_put(o);
}

static void spread(void **st)
{
	json_object *o;

	(void)st;
	setenv("FAKECUDA_JITTER", "0.2", 1);
	o = BENCH_JSON(0, "--reps", "5", "--method", "ce", "--no-p2p-off");
	assert_true(jnum(o, "matrices.uni_p2p_on.min.0.1") < jnum(o, "matrices.uni_p2p_on.max.0.1"));
	assert_true(jnum(o, "matrices.uni_p2p_on.q1.0.1") <= jnum(o, "matrices.uni_p2p_on.median.0.1"));
	assert_true(jnum(o, "matrices.uni_p2p_on.median.0.1") <= jnum(o, "matrices.uni_p2p_on.q3.0.1"));
	assert_string_equal(jstr(o, "params.method"), "ce");
	assert_null(jget(o, "matrices.uni_p2p_on.calibration.0.1"));	/* forced: no calibration */
	json_object_put(o);
}

static void pairs_subset(void **st)
{
	json_object *o;

	(void)st;
	setenv("FAKECUDA_DEVICES", "3", 1);
	o = BENCH_JSON(0, "--reps", "1", "--pairs", "0-2", "--no-p2p-off");
	assert_int_equal(json_object_array_length(jget(o, "matrices.uni_p2p_on.median")), 3);
	assert_non_null(jget(o, "matrices.uni_p2p_on.median.0.2"));
	assert_non_null(jget(o, "matrices.uni_p2p_on.median.2.2"));
	assert_null(jget(o, "matrices.uni_p2p_on.median.0.1"));
	assert_null(jget(o, "matrices.uni_p2p_on.median.1.1"));
	assert_false(json_object_get_boolean(jget(o, "devices.1.measured")));
	json_object_put(o);
	{
		char *out, *err;

		RUN_RC(3, bench_main, &out, &err, "bench", "--pairs", "0-5");
		assert_non_null(strstr(err, "no GPU 5 (3 found)"));
		free(out);
		free(err);
	}
}

static void text_output(void **st)
{
	char *out, *err;

	(void)st;
	RUN_RC(0, bench_main, &out, &err, "bench", "--size", "4k", "--reps", "2");
	assert_non_null(strstr(out, "Device: 0, Fake GPU 0, pciBusID: 0000:10:00.0"));
	assert_non_null(strstr(out, "P2P Connectivity Matrix"));
	assert_non_null(strstr(out, "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D        0        1\n"));
	assert_non_null(strstr(out, "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)"));
	assert_non_null(strstr(out, "P2P=Enabled Latency, CPU Matrix (us)"));
	assert_non_null(strstr(out, "spread (min..max over reps)"));
	assert_non_null(strstr(out, "wall time "));
	assert_string_equal(err, "");	/* no progress when stderr is not a terminal */
	free(out);
	free(err);
}

static void plot(void **st)
{
	char path[] = "/tmp/p2pctl-test-XXXXXX.svg", *out, *err, head[64] = "";
	int fd = mkstemps(path, 4);
	FILE *f;

	(void)st;
	assert_true(fd >= 0);
	close(fd);
	RUN_RC(0, bench_main, &out, &err, "bench", "--size", "4k", "--reps", "1",
	       "--no-p2p-off", "--plot", path, "--plot-matrix", "bi_p2p_on");
	free(out);
	free(err);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(head, sizeof(head), f));
	fclose(f);
	unlink(path);
	assert_string_equal(head, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	/* an unwritable --plot is a usage error, found before any GPU work */
	RUN_RC(2, bench_main, &out, &err, "bench", "--size", "4k", "--reps", "1",
	       "--no-p2p-off", "--plot", "/nonexistent-dir/x.svg");
	assert_non_null(strstr(err, "bench: --plot '/nonexistent-dir/x.svg': No such file or directory"));
	free(out);
	free(err);
	/* a directory (writable, so access() passes) is no file to write: up front too */
	RUN_RC(2, bench_main, &out, &err, "bench", "--size", "4k", "--reps", "1",
	       "--no-p2p-off", "--plot", "/tmp");
	assert_non_null(strstr(err, "bench: --plot '/tmp': Is a directory"));
	assert_null(strstr(out, "GB/s"));
	free(out);
	free(err);
}

/* The diagonal (copies within one GPU, 1000 GB/s here) must not wash out
 * the cells between GPUs (50 GB/s): the colour scale leaves it out. */
static void plot_leaves_out_diagonal(void **st)
{
	char path[] = "/tmp/p2pctl-test-XXXXXX.svg", *out, *err, *svg;
	int fd = mkstemps(path, 4);
	FILE *f;

	(void)st;
	assert_true(fd >= 0);
	close(fd);
	setenv("FAKECUDA_BW_GBPS", "50", 1);
	setenv("FAKECUDA_LOCAL_GBPS", "1000", 1);
	RUN_RC(0, bench_main, &out, &err, "bench", "--size", "1M", "--reps", "1",
	       "--no-p2p-off", "--method", "ce", "--plot", path);
	free(out);
	free(err);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	svg = slurp(f);	/* reads up to the position */
	unlink(path);
	/* 0->1, the fastest cell between GPUs: the darkest colour */
	assert_non_null(strstr(svg, "fill=\"#08306b\" stroke=\"#ffffff\"><title>0-&gt;1: "));
	assert_non_null(strstr(svg, "fill=\"#dddddd\" stroke=\"#ffffff\"><title>0-&gt;0: "));
	assert_non_null(strstr(svg, "colour: 0 to 4"));
	assert_non_null(strstr(svg, "the diagonal (copies within one GPU) is grey, off the scale"));
	free(svg);
}

/* A line per pair: P2P on against off and the share of the line rate. */
static void pair_summary(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_BW_GBPS", "25", 1);
	setenv("FAKECUDA_NOPEER_GBPS", "10", 1);
	setenv("FAKECUDA_LAT_US", "0", 1);
	fake_sysfs("16.0 GT/s PCIe", "16", "16");
	RUN_RC(0, bench_main, &out, &err, "bench", "--size", "1M", "--reps", "1",
	       "--method", "ce");
	assert_non_null(strstr(out, "summary (unidirectional, P2P=Enabled against P2P=Disabled, share of "
				    "the line rate):\n  0<->1: 0->1 25.00 GB/s on, 10.00 off (2.5x), 79% of "
				    "PCIe Gen4 x16 (31.5 GB/s); 1->0 25.00 on, 10.00 off (2.5x), 79%\n"));
	free(out);
	free(err);
	fake_sysfs_rm();
	/* faster than a Gen3 x4 link can carry: the copy did not cross it (review 33, 15) */
	fake_sysfs("8.0 GT/s PCIe", "4", "4");
	RUN_RC(0, bench_main, &out, &err, "bench", "--size", "1M", "--reps", "1",
	       "--method", "ce");
	assert_non_null(strstr(out, "  0<->1: 0->1 25.00 GB/s on, 10.00 off (2.5x), 635% of PCIe Gen3 x4 "
				    "(exceeds the link: did not cross it?) (3.9 GB/s); 1->0 25.00 on, 10.00 "
				    "off (2.5x), 635% (exceeds the link: did not cross it?)\n"));
	free(out);
	free(err);
	fake_sysfs_rm();
	/* an idle link trained down is judged by what it can carry (finding 1) */
	fake_sysfs_idle();
	RUN_RC(0, bench_main, &out, &err, "bench", "--size", "1M", "--reps", "1",
	       "--method", "ce");
	assert_non_null(strstr(out, "  0<->1: 0->1 25.00 GB/s on, 10.00 off (2.5x), 79% of "
				    "PCIe Gen4 x16 (31.5 GB/s); 1->0 25.00 on, 10.00 off (2.5x), 79%\n"));
	free(out);
	free(err);
	fake_sysfs_rm();
	setenv("P2PCTL_SYSFS", "/nonexistent/p2pctl-test-sysfs", 1);
	RUN_RC(0, bench_main, &out, &err, "bench", "--size", "1M", "--reps", "1",
	       "--method", "ce", "--no-p2p-off");
	assert_non_null(strstr(out, "  0<->1: 0->1 25.00 GB/s on, off not measured, line rate unknown ("));
	free(out);
	free(err);
}

static void copy_error(void **st)
{
	json_object *o;

	(void)st;
	setenv("FAKECUDA_COPY_ERROR", "7", 1);
	o = BENCH_JSON(1, "--reps", "2");
	assert_false(json_object_get_boolean(jget(o, "ok")));
	assert_non_null(strstr(jstr(o, "error"), "CUDA_ERROR_LAUNCH_FAILED"));
	json_object_put(o);
}

static void degraded(void **st)
{
	json_object *o;
	const char *notes;

	(void)st;
	setenv("FAKECUDA_PEER", "0", 1);
	setenv("FAKECUDA_JIT_ERROR", "1", 1);
	setenv("FAKECUDA_LAT_US", "0", 1);
	o = BENCH_JSON(0, "--reps", "1");
	notes = json_object_to_json_string(jget(o, "notes"));
	assert_non_null(strstr(notes, "SM copy kernels unavailable"));
	assert_non_null(strstr(notes, "no peer access 0->1"));
	/* P2P=Enabled falls back to the unmapped path, like the sample */
	assert_true(fabs(jnum(o, "matrices.uni_p2p_on.median.0.1") - 20) < 0.1);
	assert_null(jget(o, "matrices.uni_p2p_on.calibration.0.1.sm-write"));
	assert_false(json_object_get_boolean(jget(o, "p2p_access.1.0")));
	json_object_put(o);
}

static void one_gpu(void **st)
{
	json_object *o;

	(void)st;
	setenv("FAKECUDA_DEVICES", "1", 1);
	o = BENCH_JSON(0, "--reps", "1");
	assert_int_equal(json_object_array_length(jget(o, "matrices.uni_p2p_on.median")), 1);
	json_object_put(o);
}

static void errors(void **st)
{
	char *out, *err;

	(void)st;
	setenv("P2PCTL_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
	RUN_RC(3, bench_main, &out, &err, "bench");
	assert_non_null(strstr(err, "bench: no CUDA driver"));
	free(out);
	free(err);
	fake_setup();
	setenv("FAKECUDA_INIT_ERROR", "100", 1);
	RUN_RC(3, bench_main, &out, &err, "bench");
	free(out);
	free(err);
	unsetenv("FAKECUDA_INIT_ERROR");
	RUN_RC(2, bench_main, &out, &err, "bench", "--method", "warp");
	assert_non_null(strstr(err, "unknown --method 'warp'"));
	free(out);
	free(err);
	RUN_RC(2, bench_main, &out, &err, "bench", "--reps", "0");
	free(out);
	free(err);
	RUN_RC(2, bench_main, &out, &err, "bench", "--plot-matrix", "nope");
	free(out);
	free(err);
	RUN_RC(2, bench_main, &out, &err, "bench", "--size", "12Q");
	free(out);
	free(err);
	RUN_RC(0, bench_main, &out, &err, "bench", "--help");
	assert_non_null(strstr(out, "Usage: p2pctl bench"));
	free(out);
	free(err);
}

/* P2P=Disabled cells use the sample's method unless asked otherwise. */
static void off_method_sample(void **st)
{
	json_object *o;

	(void)st;
	o = BENCH_JSON(0, "--reps", "1");
	assert_string_equal(jstr(o, "params.p2p_off_method"), "sample");
	assert_string_equal(jstr(o, "matrices.uni_p2p_off.method.0.1"), "ce");
	assert_string_equal(jstr(o, "matrices.bi_p2p_off.method.1.0"), "ce");
	assert_null(jget(o, "matrices.uni_p2p_off.calibration.0.1"));
	assert_string_equal(jstr(o, "matrices.uni_p2p_off.title"), "Unidirectional P2P=Disabled Bandwidth");
	/* every cell's data was checked; no timeouts */
	assert_true(json_object_get_boolean(jget(o, "matrices.uni_p2p_on.data_checked.0.1")));
	assert_true(json_object_get_boolean(jget(o, "matrices.lat_gpu_p2p_off.data_checked.1.0")));
	assert_true(jnum(o, "matrices.uni_p2p_on.timeouts.0.1") == 0);
	assert_false(json_object_get_boolean(jget(o, "matrices.uni_p2p_on.staged.0.1")));
	json_object_put(o);
	{
		char *out, *err;

		RUN_RC(2, bench_main, &out, &err, "bench", "--off-method", "best");
		assert_non_null(strstr(err, "unknown --off-method 'best'"));
		free(out);
		free(err);
	}
}

/* "Fast but wrong" fails: each cell's copy is compared with its source. */
static void wrong_data_fails(void **st)
{
	json_object *o;

	(void)st;
	setenv("FAKECUDA_CORRUPT_OFFSET", "5", 1);
	setenv("FAKECUDA_CORRUPT_KIND", "sm", 1);
	o = BENCH_JSON(1, "--reps", "1", "--no-p2p-off", "--method", "sm-write");
	assert_false(json_object_get_boolean(jget(o, "ok")));
	assert_non_null(strstr(jstr(o, "error"), "with sm-write copied wrong data (fast but wrong): "
					      "first mismatch at offset 5"));
	json_object_put(o);
	/* the same without the fault */
	unsetenv("FAKECUDA_CORRUPT_OFFSET");
	o = BENCH_JSON(0, "--reps", "1", "--no-p2p-off", "--method", "sm-write");
	json_object_put(o);
}

/*
 * Copy-engine peer copies that write nothing: ce ties the other methods in
 * the calibration runs and is chosen, and the right bytes are in the
 * destination all the same, from the calibration runs of the methods that
 * work; only a destination poisoned before each cell's timed runs shows
 * that ce never wrote them. A BAR1 window that wraps at 12 MiB (the upper
 * half of an 8 MiB destination at 8 MiB lands low in the peer's VRAM) is
 * named the same way.
 */
static void poisoned_cells(void **st)
{
	json_object *o;

	(void)st;
	setenv("FAKECUDA_FAULT", "cedrop", 1);
	o = BENCH_JSON(1, "--size", "8M", "--reps", "2", "--no-p2p-off");
	assert_false(json_object_get_boolean(jget(o, "ok")));
	assert_non_null(strstr(jstr(o, "error"), "copy 0->1 with ce copied wrong data (fast but wrong): "
					      "first mismatch at offset 0: expected 0x"));
	assert_non_null(strstr(jstr(o, "error"), ", the poison: the copy never wrote it ("));
	json_object_put(o);
	unsetenv("FAKECUDA_FAULT");
	setenv("FAKECUDA_BAR1_BYTES", "12582912", 1);
	o = BENCH_JSON(1, "--size", "8M", "--reps", "2", "--method", "ce");
	assert_non_null(strstr(jstr(o, "error"), "copy 0->1 with ce copied wrong data (fast but wrong): "
					      "first mismatch at offset 4194304: expected 0x"));
	assert_non_null(strstr(jstr(o, "error"), ", the poison: the copy never wrote it"));
	json_object_put(o);
	unsetenv("FAKECUDA_BAR1_BYTES");
	o = BENCH_JSON(0, "--size", "8M", "--reps", "2", "--no-p2p-off");
	json_object_put(o);
}

/* A pair without peer access, or whose enable fails: the P2P=Enabled cells
 * say they are staged, and the run goes on. */
static void staged_cells_marked(void **st)
{
	json_object *o;
	char *out, *err;

	(void)st;
	setenv("FAKECUDA_ENABLE_ERROR", "217", 1);
	setenv("FAKECUDA_DEVICES", "3", 1);
	o = BENCH_JSON(0, "--reps", "1", "--no-p2p-off");
	assert_true(json_object_get_boolean(jget(o, "ok")));
	assert_true(json_object_get_boolean(jget(o, "matrices.uni_p2p_on.staged.0.1")));
	assert_true(json_object_get_boolean(jget(o, "matrices.lat_cpu_p2p_on.staged.2.1")));
	assert_false(json_object_get_boolean(jget(o, "matrices.uni_p2p_on.staged.1.1")));
	assert_non_null(strstr(json_object_to_json_string(jget(o, "notes")),
			       "cuCtxEnablePeerAccess 0->1 failed"));
	json_object_put(o);
	RUN_RC(0, bench_main, &out, &err, "bench", "--size", "4k", "--reps", "1", "--no-p2p-off");
	assert_non_null(strstr(out, "  * no peer access: the driver staged these copies through host memory "
				    "(not P2P)\n"));
	assert_non_null(strstr(out, "*"));
	free(out);
	free(err);
}

/*
 * As cuda-samples' p2pBandwidthLatencyTest: peer access enabled (both ways)
 * before each P2P=Enabled cell and disabled after it, not once for the run.
 * 2 GPUs: a probe per direction, 3 kinds x 2 cells x 2 directions, then once
 * per direction for the fastest-method matrix (disabled at the end).
 */
static void peer_access_per_cell(void **st)
{
	char path[] = "/tmp/p2pctl-peerlog-XXXXXX", line[64];
	int fd = mkstemp(path), en = 0, dis = 0;
	json_object *o;
	FILE *f;

	(void)st;
	assert_true(fd >= 0);
	close(fd);
	setenv("FAKECUDA_PEER_LOG", path, 1);
	o = BENCH_JSON(0, "--reps", "1", "--no-p2p-off");
	json_object_put(o);
	unsetenv("FAKECUDA_PEER_LOG");
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		en += !strncmp(line, "enable ", 7);
		dis += !strncmp(line, "disable ", 8);
	}
	fclose(f);
	unlink(path);
	assert_int_equal(en, 2 + 3 * 2 * 2 + 2);
	assert_int_equal(dis, en);
}

/* nccl-tests' busbw: all-reduce algbw*2(n-1)/n, all-gather algbw*(n-1)/n. */
static void nccl_busbw_formula(void **st)
{
	double a;

	(void)st;
	assert_true(fabs(ncclx_busbw(NCCLX_ALLREDUCE, 1e9, 1.0, 2, &a) - 1.0) < 1e-12);
	assert_true(fabs(a - 1.0) < 1e-12);
	assert_true(fabs(ncclx_busbw(NCCLX_ALLREDUCE, 2e9, 1.0, 4, &a) - 3.0) < 1e-12);
	assert_true(fabs(ncclx_busbw(NCCLX_ALLGATHER, 2e9, 1.0, 4, &a) - 1.5) < 1e-12);
	assert_true(fabs(ncclx_busbw(NCCLX_ALLGATHER, 1e9, 0.5, 2, &a) - 1.0) < 1e-12);
	assert_true(fabs(a - 2.0) < 1e-12);
}

/* bench --nccl: one checked row per size and collective, 8 B up. */
static void nccl_bench_table(void **st)
{
	char *out, *err, line[128];

	(void)st;
	RUN_RC(0, bench_main, &out, &err, "bench", "--nccl", "--max-bytes", "1M", "--iters", "2",
	       "--warmup", "1");
	assert_non_null(strstr(out, "# p2pctl bench --nccl: 2 GPUs (0,1), "));
	assert_non_null(strstr(out, "# all_reduce\n"));
	assert_non_null(strstr(out, "# all_gather\n"));
	for (unsigned long long b = 8; b <= (1 << 20); b *= 2) {
		snprintf(line, sizeof(line), "  %12llu %12llu ", b, b / 4);
		assert_non_null(strstr(out, line));	/* all-reduce: count = bytes / 4 */
		snprintf(line, sizeof(line), "  %12llu %12llu ", b, b / 8);
		assert_non_null(strstr(out, line));	/* all-gather: per rank */
	}
	assert_null(strstr(out, "FAIL"));
	assert_string_equal(err, "");
	free(out);
	free(err);
	RUN_RC(0, bench_main, &out, &err, "bench", "--nccl", "--max-bytes", "64k", "--iters", "1",
	       "--json");
	assert_non_null(strstr(out, "\"busbw_gbps\""));
	assert_non_null(strstr(out, "\"result\":\"OK\"") ? out : strstr(out, "\"result\": \"OK\""));
	free(out);
	free(err);
}

/* Wrong data from NCCL fails the run, naming GPU, element and size. */
static void nccl_bench_wrong(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKENCCL_WRONG", "1", 1);
	RUN_RC(1, bench_main, &out, &err, "bench", "--nccl", "--max-bytes", "1k", "--iters", "1");
	assert_non_null(strstr(out, "bench --nccl: FAIL: all_reduce 8 bytes: GPU 0's result: element 1 is "));
	/* the fake's error is one unit in the last place: the message must show it */
	{
		double got, want;
		const char *s = strstr(out, "element 1 is ");

		assert_int_equal(sscanf(s, "element 1 is %lf, expected %lf", &got, &want), 2);
		assert_true(got != want);
	}
	free(out);
	free(err);
}

/*
 * The collectives of one bench --nccl run over 8 and 16 B, in order, as
 * the fake NCCL logged them into path (emptied after).
 */
static void nccl_calls(const char *path, int warmup, int batches, int iters)
{
	const char *c = "ag";
	char want[4096], *got;
	FILE *f = fopen(path, "r+");

	assert_non_null(f);
	want[0] = 0;
	for (int k = 0; k < 2; k++) {	/* all-reduce: 2, 4 elements; all-gather: 1, 2 per rank */
		for (int size = 0; size < 2; size++)	/* the warm-up at both sizes, out of place */
			for (int i = 0; i < warmup; i++)
				snprintf(want + strlen(want), sizeof(want) - strlen(want), "%c%d ", c[k],
					 (k ? 1 : 2) << size);
		/* each size out of place, then in place: one untimed call, the
		 * batches, one checked call on new inputs */
		for (int size = 0; size < 2; size++)
			for (int ip = 0; ip < 2; ip++)
				for (int i = 0; i < 2 + batches * iters; i++)
					snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%c%d ",
						 ip ? "i" : "", c[k], (k ? 1 : 2) << size);
	}
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	got = slurp(f);	/* harness.h: reads up to where f stands, closes f */
	assert_string_equal(got, want);
	free(got);
	assert_int_equal(truncate(path, 0), 0);
}

/*
 * --batches N: N timed batches per size (the median reported), 1 being
 * nccl-tests' one batch; the warm-up runs at every size before any is
 * timed, one untimed call precedes each size's batches and one checked call
 * on new inputs follows them, out of place then in place, as in nccl-tests.
 * Seen in the fake's collectives, in order.
 */
static void nccl_bench_batches(void **st)
{
	char *out, *err, path[] = "/tmp/p2ps-nccl-count-XXXXXX";
	int fd = mkstemp(path);

	(void)st;
	assert_true(fd >= 0);
	close(fd);
	setenv("FAKENCCL_COUNT_FILE", path, 1);
	RUN_RC(0, bench_main, &out, &err, "bench", "--nccl", "--max-bytes", "16", "--iters", "2",
	       "--warmup", "1", "--batches", "3");
	assert_non_null(strstr(out, "1 warm-up + 3 x 2 timed iterations per size"));
	nccl_calls(path, 1, 3, 2);
	free(out);
	free(err);
	RUN_RC(0, bench_main, &out, &err, "bench", "--nccl", "--max-bytes", "16", "--iters", "2",
	       "--warmup", "2", "--batches", "1", "--json");
	assert_non_null(strstr(out, "\"batches\":1"));
	nccl_calls(path, 2, 1, 2);
	free(out);
	free(err);
	unsetenv("FAKENCCL_COUNT_FILE");
	unlink(path);
	RUN_RC(2, bench_main, &out, &err, "bench", "--nccl", "--batches", "0");
	assert_non_null(strstr(err, "bad --batches '0' (1 to 64)"));
	free(out);
	free(err);
	RUN_RC(2, bench_main, &out, &err, "bench", "--nccl", "--batches", "65");
	free(out);
	free(err);
}

/* NCCL's init hangs: reported within the deadline. */
static void nccl_bench_hang(void **st)
{
	char *out, *err;

	(void)st;
	setenv("FAKENCCL_HANG_INIT", "1", 1);
	RUN_RC(1, bench_main, &out, &err, "bench", "--nccl", "--max-bytes", "1k", "--timeout", "0.3");
	assert_non_null(strstr(out, "bench --nccl: HUNG: ncclCommInitAll over 2 GPUs did not return within "
				    "0.3 s"));
	free(out);
	free(err);
}

/*
 * A peer copy that never completes (FAKECUDA_FAULT=hang: the fake's blocking
 * waits block for good, as a real driver's do): bench reports HUNG with the
 * cell and its GPUs at its --timeout, with the cells done, and exits 1. In a
 * process of its own, SIGKILLed after 60 s, so a bench that blocks fails here.
 */
static void bench_copy_hang(void **st)
{
	static const char *const args[] = { "bench", "--size", "4k", "--reps", "1", "--timeout", "1",
					    NULL };
	char *out;
	int status, killed;

	(void)st;
	setenv("FAKECUDA_FAULT", "hang", 1);
	out = child_run(args, 0, NULL, 60, &status, &killed);
	assert_false(killed);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	assert_non_null(strstr(out, "bench: HUNG: the copy 0->1 with ce did not finish within 1 s "
				    "(GPUs 0 and 1): the path hangs"));
	/* the cells before it are shown */
	assert_non_null(strstr(out, "Unidirectional P2P=Disabled Bandwidth"));
	assert_non_null(strstr(out, "(1 of 28 cells done)\n"));
	free(out);
}

/*
 * SIGINT or SIGTERM while bench waits on a hung copy (a deadline of 1000 s):
 * the wait ends, bench prints what it has and exits 128 + the signal.
 */
static void bench_signal_in_hang(void **st)
{
	static const char *const args[] = { "bench", "--size", "4k", "--reps", "1", "--timeout", "1000",
					    NULL };
	static const int sigs[] = { SIGINT, SIGTERM };
	char *out;
	int status, killed;

	(void)st;
	setenv("FAKECUDA_FAULT", "hang", 1);
	for (int k = 0; k < 2; k++) {
		out = child_run(args, sigs[k], "fakecuda: an operation on GPU 0's stream hangs", 60, &status,
				&killed);
		assert_false(killed);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 128 + sigs[k]);
		assert_non_null(strstr(out, k ? "bench: interrupted by SIGTERM in the copy 0->1 with ce "
					      "(GPUs 0 and 1): a partial result" :
					"bench: interrupted by SIGINT in the copy 0->1 with ce (GPUs 0 and 1): "
					"a partial result"));
		free(out);
	}
}

/*
 * cuCtxEnablePeerAccess blocks in the driver for good (FAKECUDA_FAULT=
 * enablehang; FIELD N10's devicesLock): no signal ends the call, so bench's
 * watchdog names it within its deadline (--timeout, at least 10 s) with the
 * cells done, and exits 1; SIGINT or SIGTERM ends it within a second
 * (RIG_GUARD_SIGNAL_S), 128 + the signal. In a process of its own,
 * SIGKILLed after 60 s, so a bench without the watchdog fails here.
 */
static void bench_enable_hang(void **st)
{
	static const char *const args[] = { "bench", "--size", "4k", "--reps", "1", "--timeout", "1",
					    NULL };
	static const char *const sargs[] = { "bench", "--size", "4k", "--reps", "1", "--timeout",
					     "1000", NULL };
	char *out;
	int status, killed;

	(void)st;
	setenv("FAKECUDA_FAULT", "enablehang", 1);
	out = child_run(args, 0, NULL, 60, &status, &killed);
	assert_false(killed);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	assert_non_null(strstr(out, "bench: HUNG: GPU 0: cuCtxEnablePeerAccess 0->1 has not returned for "));
	assert_non_null(strstr(out, " s: blocked in the driver (on 580.65.06 to 610.57.03 likely "
				    "nvidia-uvm's devicesLock; see docs/support.md) (12 of 28 cells done)\n"));
	/* the P2P=Disabled cells done before it are shown */
	assert_non_null(strstr(out, "Unidirectional P2P=Disabled Bandwidth"));
	free(out);
	out = child_run(sargs, SIGTERM, "fakecuda: cuCtxEnablePeerAccess hangs", 60, &status, &killed);
	assert_false(killed);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 128 + SIGTERM);
	assert_non_null(strstr(out, "bench: interrupted by SIGTERM: GPU 0: cuCtxEnablePeerAccess 0->1 had "
				    "not returned after "));
	assert_non_null(strstr(out, "Unidirectional P2P=Disabled Bandwidth"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(json_shape, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(bench_copy_hang, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(bench_signal_in_hang, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(bench_enable_hang, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(peer_access_per_cell, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(nccl_busbw_formula, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(nccl_bench_table, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(nccl_bench_wrong, fake_test_setup, fake_test_teardown),
		/* before nccl_bench_hang, which leaves the fake NCCL loaded and hung */
		cmocka_unit_test_setup_teardown(nccl_bench_batches, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(nccl_bench_hang, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(values_follow_fake, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(spread, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(pairs_subset, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(text_output, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(plot, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(copy_error, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(degraded, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(one_gpu, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(errors, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(off_method_sample, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(wrong_data_fails, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(poisoned_cells, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(plot_leaves_out_diagonal, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(pair_summary, fake_test_setup, fake_test_teardown),
		cmocka_unit_test_setup_teardown(staged_cells_marked, fake_test_setup, fake_test_teardown),
	};

	bench_nccl_exit_on_hang = 0;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
