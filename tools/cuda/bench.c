// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl bench: the matrices of cuda-samples' p2pBandwidthLatencyTest
 * (same transfer sizes, copies per timed run and byte accounting), with
 * repetitions (median and spread) and the fastest copy method per cell.
 * See docs/p2pctl-cuda.md and docs/bench.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuda_cmds.h"
#include "cuda_int.h"
#include "deadline.h"
#include "engine.h"
#include "linkrate.h"
#include "report.h"

enum kind { K_UNI, K_BI, K_LAT };
enum { MX_UNI_OFF, MX_UNI_ON, MX_BI_OFF, MX_BI_ON, MX_LAT_OFF, MX_LAT_ON,
       MX_CPU_OFF, MX_CPU_ON, MX_UNI_FAST, MX_COUNT };

static const struct {
	const char *key, *title, *unit;
} mx_info[MX_COUNT] = {
	{ "uni_p2p_off", "Unidirectional P2P=Disabled Bandwidth", "GB/s" },
	{ "uni_p2p_on", "Unidirectional P2P=Enabled Bandwidth", "GB/s" },
	{ "bi_p2p_off", "Bidirectional P2P=Disabled Bandwidth", "GB/s" },
	{ "bi_p2p_on", "Bidirectional P2P=Enabled Bandwidth", "GB/s" },
	{ "lat_gpu_p2p_off", "P2P=Disabled Latency, GPU", "us" },
	{ "lat_gpu_p2p_on", "P2P=Enabled Latency, GPU", "us" },
	{ "lat_cpu_p2p_off", "P2P=Disabled Latency, CPU", "us" },
	{ "lat_cpu_p2p_on", "P2P=Enabled Latency, CPU", "us" },
	{ "uni_p2p_on_fastest", "Unidirectional P2P=Enabled Bandwidth [p2pctl's fastest method per "
	  "cell, not the sample's method]", "GB/s" },
};

struct bench {
	struct rig r;
	struct plan plan;
	struct sm_cfg sm;
	uint64_t size;
	int copies, reps, lat_copies, forced, do_off, json, tty;
	int off_fastest;	/* P2P=Disabled: fastest of ce, ce-pull, staged (else the sample's ce) */
	int fastest;		/* measuring MX_UNI_FAST (else the sample's method, ce) */
	uint8_t *h1, *h2;	/* host buffers of size bytes for the data checks */
	size_t slot;
	int sel[P2P_MAX_GPUS][P2P_MAX_GPUS];
	int peer_ok[P2P_MAX_GPUS][P2P_MAX_GPUS];	/* cuCtxEnablePeerAccess i->j works */
	struct matrix *mx;	/* MX_COUNT */
	FILE *out, *err;
	char errmsg[512];
	json_object *notes;
	int done, total;
	double init_s;
	double timeout;		/* deadline of every wait (deadline.h) */
	int hung;		/* a wait ran past it or a signal cut it: the streams
				 * may be busy, the contexts are not torn down */
};

static void print_text(struct bench *b);

/*
 * The watchdog over the peer-mapping calls (rig_peer guards them): one
 * blocked in the kernel (a lock there, FIELD N10) never returns and no
 * signal ends it. After rig_guard_limit(--timeout), or RIG_GUARD_SIGNAL_S
 * after SIGINT or SIGTERM, it names the call and its GPUs, prints the
 * cells done, lets go of stdout and stderr (the blocked thread keeps the
 * process's files open) and _exit()s: 1, or 128 + the signal. The main
 * thread is blocked in that call, so what it reads of b does not change
 * under it, and it holds no stdio lock.
 */
static struct {
	pthread_t th;
	int on;
	volatile int stop;
	struct bench *b;
} bw;

static void *bench_watchdog(void *p)
{
	double sig_at = 0;

	(void)p;
	while (!bw.stop) {
		struct bench *b = bw.b;
		const char *what;
		int g, x, y, sig = dl_stop;
		double t;
		char diag[384];

		dl_nap(20000);
		if (sig && !sig_at)
			sig_at = now_s();
		if (!rig_guard_expired(sig && now_s() - sig_at > RIG_GUARD_SIGNAL_S ? RIG_GUARD_SIGNAL_S :
				       rig_guard_limit(b->timeout), &what, &g, &x, &y, &t))
			continue;
		if (sig)
			snprintf(diag, sizeof(diag), "interrupted by SIG%s: GPU %d: %s %d->%d had not returned "
				 "after %.3g s", sigabbrev_np(sig), g, what, x, y, t);
		else
			snprintf(diag, sizeof(diag), "HUNG: GPU %d: %s %d->%d has not returned for %.3g s: %s",
				 g, what, x, y, t, RIG_BLOCKED_HINT);
		if (b->json) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "command", json_object_new_string("bench"));
			json_object_object_add(o, "ok", json_object_new_boolean(0));
			if (sig)
				json_object_object_add(o, "interrupted",
						       json_object_new_string(sigabbrev_np(sig)));
			else
				json_object_object_add(o, "hung", json_object_new_boolean(1));
			json_object_object_add(o, "error", json_object_new_string(diag));
			fprintf(b->out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
									       JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(o);
		} else {
			if (b->done)
				print_text(b);
			fprintf(b->out, "bench: %s (%d of %d cells done)\n", diag, b->done, b->total);
		}
		fprintf(b->err, "bench: %s\n", diag);
		fflush(b->err);
		rig_exit(b->out, sig);
	}
	return NULL;
}

static void progress(struct bench *b, const char *what, int i, int j)
{
	if (!b->tty)
		return;
	fprintf(b->err, "\rbench: %-34s %2d->%-2d  [%3d/%3d]", what, i, j, b->done, b->total);
	fflush(b->err);
}

static void note(struct bench *b, const char *fmt, const char *a)
{
	char buf[4096];
	int l = snprintf(buf, sizeof(buf), fmt, a);

	if (l < 0)
		return;
	json_object_array_add(b->notes, json_object_new_string(buf));
}

/* Candidate methods for a cell; returns how many. */
static int candidates(const struct bench *b, enum kind k, int p2p, int diag, int *c)
{
	int n = 0;

	if (b->forced >= 0) {
		int sm = b->forced == M_SM_WRITE || b->forced == M_SM_READ || b->forced == M_SM_SPLIT;

		if ((!diag && !p2p && sm) || (p2p && !diag && b->forced == M_STAGED)) {
			c[n++] = M_CE;
			return -n;
		}
		c[n++] = b->forced;
		if (b->forced != M_CE)
			c[n++] = M_CE;	/* fallback when the forced one can't do this cell */
		return -n;		/* negative: take the first that works, no calibration */
	}
	if (!b->fastest && (p2p || !b->off_fastest)) {
		/* The sample-comparable matrices: its cuMemcpyPeerAsync (a CE push) */
		c[n++] = M_CE;
		return -n;
	}
	if (diag) {
		c[n++] = M_CE;
		c[n++] = M_SM_WRITE;
	} else if (!p2p && !b->off_fastest) {
		c[n++] = M_CE;	/* the sample's cuMemcpyPeerAsync without peer access */
		return -n;
	} else if (!p2p) {
		c[n++] = M_CE;
		c[n++] = M_CE_PULL;
		c[n++] = M_STAGED;
	} else if (k == K_LAT) {
		c[n++] = M_CE;
		c[n++] = M_CE_PULL;
		c[n++] = M_SM_WRITE;
		c[n++] = M_SM_READ;
	} else {
		c[n++] = M_CE;
		c[n++] = M_CE_PULL;
		c[n++] = M_CE_SPLIT;
		c[n++] = M_SM_WRITE;
		c[n++] = M_SM_READ;
		c[n++] = M_SM_SPLIT;
		c[n++] = M_CE_MULTI;
	}
	return n;
}

/*
 * One timed run of `copies` transfers. 1 when method m cannot do this cell,
 * 0 with *val (GB/s, or us per transfer for K_LAT) and *cpu (us per transfer
 * enqueue), or -1 on a CUDA error (message in b->errmsg).
 */
static int run_once(struct bench *b, enum kind k, int m, int i, int j, int copies,
		    double *val, double *cpu, int *timed_out)
{
	struct rig *r = &b->r;
	size_t n = k == K_LAT ? 16 : b->size;
	struct run_result rr;
	CUresult cr;
	double bytes;

	plan_reset(&b->plan);
	for (int c = 0; c < copies; c++) {
		if (i == j) {
			if (plan_copy(r, &b->plan, m, i, i, r->g[i].src, r->g[i].dst, n, 0))
				return 1;
			if (k == K_BI &&
			    plan_copy(r, &b->plan, m, i, i, r->g[i].dst, r->g[i].src, n, 1))
				return 1;
		} else {
			if (plan_copy(r, &b->plan, m, i, j, r->g[i].src, r->g[j].dst, n, 0))
				return 1;
			if (k == K_BI &&
			    plan_copy(r, &b->plan, m, j, i, r->g[j].src, r->g[i].dst, n, 1))
				return 1;
		}
	}
	cr = plan_run(r, &b->plan, &b->sm, b->plan.n <= 1024, b->timeout, &rr);
	if (rr.hung) {
		b->hung = 1;
		if (dl_stop)
			snprintf(b->errmsg, sizeof(b->errmsg), "interrupted by SIG%s in the %s %d->%d "
				 "with %s (GPUs %d and %d): a partial result", sigabbrev_np(dl_stop),
				 k == K_LAT ? "latency run" : k == K_BI ? "bidirectional copy" : "copy",
				 i, j, method_names[m], i, j);
		else
			snprintf(b->errmsg, sizeof(b->errmsg), "HUNG: the %s %d->%d with %s did not finish "
				 "within %.3g s (GPUs %d and %d): the path hangs (bench stops here; "
				 "p2pctl verify --pairs %d-%d names the test)",
				 k == K_LAT ? "latency run" : k == K_BI ? "bidirectional copy" : "copy",
				 i, j, method_names[m], b->timeout, i, j, i, j);
		return -1;
	}
	if (cr != CUDA_SUCCESS) {
		snprintf(b->errmsg, sizeof(b->errmsg), "%s %d->%d with %s: %s",
			 k == K_LAT ? "latency" : k == K_BI ? "bidirectional copy" : "copy",
			 i, j, method_names[m], cu_errstr(cr));
		return -1;
	}
	*timed_out = rr.timed_out;
	*cpu = rr.cpu_us / copies;
	if (k == K_LAT) {
		*val = rr.gpu_ms * 1e3 / copies;
		return 0;
	}
	bytes = (double)n * copies * (k == K_BI ? 2 : 1) * (i == j ? 2 : 1);
	*val = rr.gpu_ms > 0 ? bytes / 1e9 / (rr.gpu_ms / 1e3) : 0;
	return 0;
}

#define BENCH_POISON 0xa5a5a5a5u	/* every destination before a cell's timed runs */

/* Compare GPU d's dst with GPU s's src over n bytes: 0 equal, 1 not, -1 error. */
static int same_data(struct bench *b, int s, int d, size_t n, char *why, size_t len)
{
	struct rig *r = &b->r;
	CUresult cr = rig_cur(r, s);
	uint64_t off = 0, nbad = 0;
	uint8_t e = 0, g = 0;

	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemcpyDtoH(b->h1, r->g[s].src, n);
	if (cr == CUDA_SUCCESS)
		cr = rig_cur(r, d);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemcpyDtoH(b->h2, r->g[d].dst, n);
	if (cr != CUDA_SUCCESS) {
		snprintf(why, len, "reading back for the data check: %s", cu_errstr(cr));
		return -1;
	}
	if (!pattern_compare(b->h2, b->h1, n, &off, &e, &g, &nbad))
		return 0;
	snprintf(why, len, "first mismatch at offset %llu: expected 0x%02x, got 0x%02x%s (%llu of %zu "
		 "bytes differ)", (unsigned long long)off, e, g,
		 g == (BENCH_POISON & 0xff) ? ", the poison: the copy never wrote it" : "",
		 (unsigned long long)nbad, n);
	return 1;
}

/*
 * Poison the destination(s) of a cell before its timed runs: the warm-up,
 * the calibration runs of other methods and the P2P-off phase have left
 * the right bytes there, which a copy that writes nothing (or writes
 * elsewhere) would pass the check with.
 */
static int poison_cell(struct bench *b, enum kind k, int i, int j)
{
	struct rig *r = &b->r;
	size_t n = k == K_LAT ? 16 : b->size;
	int gs[2] = { j, i };
	CUresult cr = CUDA_SUCCESS;

	for (int q = 0; q < (k == K_BI && i != j ? 2 : 1) && cr == CUDA_SUCCESS; q++) {
		cr = rig_cur(r, gs[q]);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemsetD32Async(r->g[gs[q]].dst, BENCH_POISON, (n + 3) / 4, r->g[gs[q]].s[0]);
		if (cr == CUDA_SUCCESS &&
		    (cr = dl_wait(r->g[gs[q]].s[0], NULL, now_s() + b->timeout)) == CUDA_ERROR_NOT_READY) {
			b->hung = 1;
			snprintf(b->errmsg, sizeof(b->errmsg), "%s: poisoning GPU %d's destination before "
				 "%d->%d did not finish%s", dl_stop ? "interrupted" : "HUNG", gs[0], i, j,
				 dl_stop ? "" : " by the deadline");
			return -1;
		}
	}
	if (cr != CUDA_SUCCESS)
		snprintf(b->errmsg, sizeof(b->errmsg), "poisoning GPU %d's destination before %d->%d: %s",
			 gs[0], i, j, cu_errstr(cr));
	return cr == CUDA_SUCCESS ? 0 : -1;
}

/* Check the cell's last copy once ("fast but wrong" fails). 0, or -1 with errmsg. */
static int check_cell(struct bench *b, enum kind k, int m, int i, int j, struct cell *cell)
{
	size_t n = k == K_LAT ? 16 : b->size;
	char why[256];
	int rc;

	if (i == j && k == K_BI)
		return 0;	/* src and dst copied onto each other at once: no defined result */
	rc = same_data(b, i, j, n, why, sizeof(why));
	if (rc == 0 && k == K_BI)
		rc = same_data(b, j, i, n, why, sizeof(why));
	if (rc) {
		snprintf(b->errmsg, sizeof(b->errmsg), "%s %d->%d with %s copied wrong data (fast but "
			 "wrong): %s", k == K_LAT ? "latency" : k == K_BI ? "bidirectional copy" : "copy",
			 i, j, method_names[m], why);
		return -1;
	}
	cell->checked = 1;
	return 0;
}

static int measure_cell(struct bench *b, enum kind k, int p2p, int i, int j,
			struct cell *cell, struct cell *cpucell)
{
	int cand[M_COUNT], nc;
	int calibrate, best = -1, rc, to;
	int copies = k == K_LAT ? b->lat_copies : b->copies;
	double bestv = 0, v, cpu, *vals, *cpus;

	if (dl_stop) {
		snprintf(b->errmsg, sizeof(b->errmsg), "interrupted by SIG%s before cell %d->%d: a "
			 "partial result", sigabbrev_np(dl_stop), i, j);
		return -1;
	}

	/* SM methods need peer access both ways (the bidirectional run uses both);
	 * without it a P2P=Enabled cell is the driver's staged copy, and says so. */
	if (p2p && i != j && !(b->r.peer_on[i][j] && b->r.peer_on[j][i])) {
		p2p = 0;
		cell->staged = 1;
		if (cpucell)
			cpucell->staged = 1;
	}
	nc = candidates(b, k, p2p, i == j, cand);
	calibrate = nc > 1;
	if (nc < 0)
		nc = -nc;
	/* Warm-up (first use of a buffer pair, lazy mappings, clocks). */
	for (int c = 0; c < nc; c++) {
		rc = run_once(b, k, cand[c], i, j, 1, &v, &cpu, &to);
		if (rc < 0)
			return -1;
		if (rc == 0)
			break;
	}
	for (int c = 0; c < nc; c++) {
		rc = run_once(b, k, cand[c], i, j, k == K_LAT ? copies : 1, &v, &cpu, &to);
		if (rc < 0)
			return -1;
		if (rc > 0)
			continue;
		if (calibrate)
			cell->cal[cand[c]] = v;
		if (best < 0 || (k == K_LAT ? v < bestv : v > bestv)) {
			best = cand[c];
			bestv = v;
		}
		if (!calibrate)
			break;
	}
	if (best < 0) {
		snprintf(b->errmsg, sizeof(b->errmsg), "no copy method works for %d->%d", i, j);
		return -1;
	}
	vals = calloc(b->reps, sizeof(*vals));
	cpus = calloc(b->reps, sizeof(*cpus));
	if (!vals || !cpus) {
		free(vals);
		free(cpus);
		snprintf(b->errmsg, sizeof(b->errmsg), "out of memory");
		return -1;
	}
	cell->timeouts = 0;
	if (poison_cell(b, k, i, j)) {
		free(vals);
		free(cpus);
		return -1;
	}
	for (int rep = 0; rep < b->reps; rep++) {
		rc = run_once(b, k, best, i, j, copies, &vals[rep], &cpus[rep], &to);
		if (rc) {
			free(vals);
			free(cpus);
			return -1;
		}
		cell->timeouts += to;
	}
	cell->present = 1;
	cell->method = best;
	stats_compute(vals, b->reps, &cell->st);
	if (cpucell) {
		cpucell->present = 1;
		cpucell->method = best;
		stats_compute(cpus, b->reps, &cpucell->st);
	}
	free(vals);
	free(cpus);
	if (check_cell(b, k, best, i, j, cell))
		return -1;
	if (cpucell)
		cpucell->checked = cell->checked;
	return 0;
}

static int want_cell(const struct bench *b, int i, int j)
{
	if (!b->r.g[i].used || !b->r.g[j].used)
		return 0;
	return i == j || b->sel[i][j];
}

static int run_phase(struct bench *b, int p2p)
{
	static const char *const what[3] = { "unidirectional", "bidirectional", "latency" };
	int n = b->r.n, rc;

	for (int k = K_UNI; k <= K_LAT; k++) {
		int mi = k == K_UNI ? MX_UNI_OFF : k == K_BI ? MX_BI_OFF : MX_LAT_OFF;
		struct matrix *m = &b->mx[mi + (p2p ? 1 : 0)];
		struct matrix *cm = k == K_LAT ? &b->mx[p2p ? MX_CPU_ON : MX_CPU_OFF] : NULL;
		char label[64];

		snprintf(label, sizeof(label), "%s P2P=%s", what[k], p2p ? "on" : "off");
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++) {
				if (!want_cell(b, i, j))
					continue;
				progress(b, label, i, j);
				/* as the sample: peer access enabled (both ways) around each cell */
				if (p2p && i != j && b->peer_ok[i][j])
					rig_peer(&b->r, i, j, 1);
				if (p2p && i != j && b->peer_ok[j][i])
					rig_peer(&b->r, j, i, 1);
				rc = measure_cell(b, k, p2p, i, j, &m->c[i * n + j], cm ? &cm->c[i * n + j] : NULL);
				if (p2p && i != j && !b->hung) {
					rig_peer(&b->r, i, j, 0);
					rig_peer(&b->r, j, i, 0);
				}
				if (rc)
					return -1;
				b->done++;
			}
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: p2pctl bench [--size BYTES] [--reps N] [--pairs I-J,...] [--json]\n"
		"                    [--plot FILE.svg] [--plot-matrix KEY] [--no-p2p-off]\n"
		"                    [--method auto|ce|ce-pull|ce-split|ce-multi|sm-write|sm-read|sm-split|staged]\n"
		"                    [--copies N] [--lat-copies N] [--off-method sample|fastest]\n"
		"                    [--timeout S]\n"
		"       p2pctl bench --nccl [--min-bytes B] [--max-bytes B] [--iters N] [--warmup N]\n"
		"                    [--batches N] [--like-nccl-tests] [--gpus LIST] [--timeout S]\n"
		"                    [--json]\n"
		"  --size BYTES     bytes per transfer (default 160000000, the sample's 40M ints;\n"
		"                   suffixes k, M, G = KiB, MiB, GiB; kB, MB, GB decimal)\n"
		"  --reps N         timed runs per cell; median and spread over them (default 5)\n"
		"  --copies N       transfers per timed run (default 5, as the sample)\n"
		"  --lat-copies N   16-byte transfers per latency run (default 100, as the sample)\n"
		"  --pairs LIST     only these GPU pairs (and their GPUs' diagonal cells)\n"
		"  --method M       one copy method for every cell (default auto: the sample's\n"
		"                   cuMemcpyPeerAsync in its matrices, and a separate matrix of\n"
		"                   the fastest method per cell, uni_p2p_on_fastest)\n"
		"  --no-p2p-off     skip the P2P=Disabled matrices\n"
		"  --off-method M   P2P=Disabled cells: sample (default: cuMemcpyPeerAsync, the\n"
		"                   sample's method) or fastest (of ce, ce-pull and p2pctl's own\n"
		"                   staged pipeline; the matrices say so)\n"
		"  -j, --json       JSON on stdout instead of the text matrices\n"
		"  --plot FILE      write an SVG heatmap of one matrix (default uni_p2p_on)\n"
		"  --plot-matrix KEY  the matrix --plot draws (uni_p2p_on, bi_p2p_off, ...)\n"
		"  --timeout S      deadline of every copy run (default 30): a later one is\n"
		"                   HUNG, named with its cell; bench stops with the cells\n"
		"                   done (SIGINT, SIGTERM: the same at once); a peer-mapping\n"
		"                   call blocked past max(S, 10) is named the same way\n"
		"  --help           this text\n"
		"  --nccl           NCCL all-reduce and all-gather bus bandwidth per size, as\n"
		"                   nccl-tests measures it (p2pctl bench --nccl --help)\n"
		"exit status: 0 ok, 1 CUDA error or a hang, 2 usage, 3 no driver or no GPU,\n"
		"  128 + N after signal N\n");
}

static int env_int(const char *name, int def)
{
	const char *s = getenv(name);

	return s && *s ? atoi(s) : def;
}

/* One direction of a pair's summary: "25.00 GB/s on, 10.00 off (2.5x), 79% of LINK". */
static void summary_dir(const struct bench *b, int i, int j, const struct linkrate *l, int first,
			char *buf, size_t len)
{
	int n = b->r.n;
	const struct cell *on = &b->mx[MX_UNI_ON].c[i * n + j], *off = &b->mx[MX_UNI_OFF].c[i * n + j];
	double v = on->st.median;
	size_t k = (size_t)snprintf(buf, len, "%d->%d %.2f%s on", i, j, v, first ? " GB/s" : "");

	if (k < len && off->present && off->st.median > 0)
		k += (size_t)snprintf(buf + k, len - k, ", %.2f off (%.1fx)", off->st.median,
				      v / off->st.median);
	else if (k < len)
		k += (size_t)snprintf(buf + k, len - k, ", off not measured");
	if (k < len && l->kind != LINK_UNKNOWN)
		snprintf(buf + k, len - k, ", %.0f%%%s%s%s", 100 * v / l->gbps, first ? " of " : "",
			 first ? l->label : "",
			 v > LINK_OVER_MARGIN * l->gbps ? " (exceeds the link: did not cross it?)" : "");
	else if (k < len && first)
		snprintf(buf + k, len - k, ", line rate unknown (%.200s)", l->why);
}

/*
 * A line per pair: the unidirectional P2P=Enabled cells against the
 * P2P=Disabled ones, and their share of the link's line rate.
 */
static void print_summary(const struct bench *b, FILE *f)
{
	int n = b->r.n, head = 0;

	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			const struct matrix *m = &b->mx[MX_UNI_ON];
			struct linkrate l;
			char d0[512], d1[512];

			if (!m->c[i * n + j].present || !m->c[j * n + i].present)
				continue;
			if (!head++)
				fprintf(f, "summary (unidirectional, P2P=Enabled against P2P=Disabled, share of "
					"the line rate):\n");
			link_rate(b->r.g[i].busid, b->r.g[j].busid, &l);
			summary_dir(b, i, j, &l, 1, d0, sizeof(d0));
			summary_dir(b, j, i, &l, 0, d1, sizeof(d1));
			if (l.kind != LINK_UNKNOWN)
				fprintf(f, "  %d<->%d: %s (%.1f GB/s); %s\n", i, j, d0, l.gbps, d1);
			else
				fprintf(f, "  %d<->%d: %s; %s\n", i, j, d0, d1);
		}
	if (head)
		fputc('\n', f);
}

static void print_text(struct bench *b)
{
	FILE *f = b->out;
	int n = b->r.n;

	fprintf(f, "[p2pctl bench: P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n");
	for (int i = 0; i < n; i++)
		fprintf(f, "Device: %d, %s, pciBusID: %s%s\n", i, b->r.g[i].name, b->r.g[i].busid,
			b->r.g[i].used ? "" : " (not measured)");
	fprintf(f, "P2P Connectivity Matrix\n     D\\D");
	for (int j = 0; j < n; j++)
		fprintf(f, "%6d", j);
	fputc('\n', f);
	for (int i = 0; i < n; i++) {
		fprintf(f, "%6d\t", i);
		for (int j = 0; j < n; j++)
			fprintf(f, "%6d", i == j ? 1 : b->r.can_peer[i][j]);
		fputc('\n', f);
	}
	fprintf(f, "size %llu bytes x %d copies per run, %d runs per cell (median shown); "
		"latency: 16 bytes x %d\n\n", (unsigned long long)b->size, b->copies, b->reps,
		b->lat_copies);
	static const int order[] = { MX_UNI_OFF, MX_UNI_ON, MX_BI_OFF, MX_BI_ON,
				     MX_LAT_OFF, MX_CPU_OFF, MX_LAT_ON, MX_CPU_ON, MX_UNI_FAST };
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		const struct matrix *m = &b->mx[order[k]];
		int any = 0;

		for (int c = 0; c < n * n; c++)
			any |= m->c[c].present;
		if (any)
			matrix_print(f, m, method_names);
	}
	print_summary(b, f);
}

/* Whether --plot's @path can be written now (errno says why not). */
static int plot_writable(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];

	struct stat st;

	if (!*path)
		return 0;
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		errno = EISDIR;		/* fopen() would fail only after the run */
		return 0;
	}
	if (!access(path, F_OK))
		return !access(path, W_OK);
	if (!slash)
		return !access(".", W_OK | X_OK);
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	return !access(dir, W_OK | X_OK);
}

int bench_main(int argc, char **argv, FILE *out, FILE *err)
{
	static const struct option lo[] = {
		{ "size", required_argument, NULL, 's' },
		{ "reps", required_argument, NULL, 'r' },
		{ "copies", required_argument, NULL, 'c' },
		{ "lat-copies", required_argument, NULL, 'l' },
		{ "pairs", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, 'P' },
		{ "plot-matrix", required_argument, NULL, 'M' },
		{ "no-p2p-off", no_argument, NULL, 'n' },
		{ "method", required_argument, NULL, 'm' },
		{ "off-method", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, 'T' },
		/* handed to bench_nccl_main before parsing: see above */
		{ "nccl", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench *b;
	const char *pairs = NULL, *plot = NULL, *plotkey = "uni_p2p_on";
	char emsg[512];
	int use[P2P_MAX_GPUS] = { 0 }, rc = P2P_EXIT_OK, opt, sig_on = 0;
	double t0 = now_s();

	for (int k = 1; k < argc; k++)
		if (!strcmp(argv[k], "--nccl"))
			return bench_nccl_main(argc, argv, out, err);
	b = calloc(1, sizeof(*b));
	if (!b)
		return P2P_EXIT_FAIL;
	b->mx = calloc(MX_COUNT, sizeof(*b->mx));
	if (!b->mx) {
		free(b);
		return P2P_EXIT_FAIL;
	}
	b->out = out;
	b->err = err;
	b->size = 160000000;
	b->copies = 5;
	b->reps = 5;
	b->lat_copies = 100;
	b->forced = -1;
	b->do_off = 1;
	b->timeout = 30;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "jh", lo, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (parse_size(optarg, &b->size)) {
				fprintf(err, "bench: bad --size '%s'\n", optarg);
				rc = P2P_EXIT_USAGE;
			}
			break;
		case 'r': case 'c': case 'l': {
			char *e;
			long v = strtol(optarg, &e, 10);

			if (*e || v < 1 || v > 100000) {
				fprintf(err, "bench: bad count '%s'\n", optarg);
				rc = P2P_EXIT_USAGE;
			} else if (opt == 'r') {
				b->reps = (int)v;
			} else if (opt == 'c') {
				b->copies = (int)v;
			} else {
				b->lat_copies = (int)v;
			}
			break;
		}
		case 'p': pairs = optarg; break;
		case 'j': b->json = 1; break;
		case 'P':
			/* refused now, not after the whole run */
			plot = optarg;
			if (!plot_writable(plot)) {
				fprintf(err, "bench: --plot '%s': %s\n", plot,
					*plot ? strerror(errno) : "empty file name");
				rc = P2P_EXIT_USAGE;
			}
			break;
		case 'M': plotkey = optarg; break;
		case 'n': b->do_off = 0; break;
		case 'm':
			if (strcmp(optarg, "auto")) {
				b->forced = method_parse(optarg);
				if (b->forced < 0) {
					fprintf(err, "bench: unknown --method '%s'\n", optarg);
					rc = P2P_EXIT_USAGE;
				}
			}
			break;
		case 'T': {
			char *e;

			b->timeout = strtod(optarg, &e);
			if (!*optarg || *e || !(b->timeout > 0) || b->timeout > 86400) {
				fprintf(err, "bench: bad --timeout '%s'\n", optarg);
				rc = P2P_EXIT_USAGE;
			}
			break;
		}
		case 'o':
			if (!strcmp(optarg, "fastest")) {
				b->off_fastest = 1;
			} else if (strcmp(optarg, "sample")) {
				fprintf(err, "bench: unknown --off-method '%s' (sample or fastest)\n", optarg);
				rc = P2P_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(out);
			goto done;
		default:
			fprintf(err, "bench: bad option '%s'\n", argv[optind - 1]);
			rc = P2P_EXIT_USAGE;
		}
	}
	if (!rc && optind < argc) {
		fprintf(err, "bench: unexpected argument '%s'\n", argv[optind]);
		rc = P2P_EXIT_USAGE;
	}
	if (!rc && parse_pairs(pairs, b->sel, emsg, sizeof(emsg))) {
		fprintf(err, "bench: %s\n", emsg);
		rc = P2P_EXIT_USAGE;
	}
	if (!rc) {
		int ok = 0;

		for (int k = 0; k < MX_COUNT; k++)
			ok |= !strcmp(plotkey, mx_info[k].key);
		if (!ok) {
			fprintf(err, "bench: unknown --plot-matrix '%s'\n", plotkey);
			rc = P2P_EXIT_USAGE;
		}
	}
	if (rc) {
		usage(err);
		goto done;
	}
	b->sm.threads = env_int("P2PCTL_SM_THREADS", 512);
	b->sm.blocks_per_sm = env_int("P2PCTL_SM_BLOCKS_PER_SM", 4);
	b->slot = (size_t)env_int("P2PCTL_STAGE_SLOT", 8 << 20);
	b->tty = isatty(fileno(err));
	b->notes = json_object_new_array();
	sig_on = !dl_catch();
	bw.b = b;
	bw.stop = 0;
	bw.on = !pthread_create(&bw.th, NULL, bench_watchdog, NULL);

	rc = cu_open(emsg, sizeof(emsg));
	if (rc) {
		fprintf(err, "bench: %s\n", emsg);
		goto done;
	}
	{
		int n;

		rc = rig_count(&n, emsg, sizeof(emsg));
		if (rc) {
			fprintf(err, "bench: %s\n", emsg);
			goto close;
		}
		if (pairs) {
			for (int i = 0; i < P2P_MAX_GPUS; i++)
				for (int j = 0; j < P2P_MAX_GPUS; j++)
					if (b->sel[i][j] && (i >= n || j >= n)) {
						fprintf(err, "bench: no GPU %d (%d found)\n",
							i >= n ? i : j, n);
						rc = P2P_EXIT_NODEV;
						goto close;
					}
			for (int i = 0; i < n; i++)
				for (int j = 0; j < n; j++)
					if (b->sel[i][j])
						use[i] = use[j] = 1;
		} else {
			for (int i = 0; i < n; i++)
				use[i] = 1;
		}
	}
	rc = rig_open(&b->r, use, b->size, 1, emsg, sizeof(emsg));
	if (rc) {
		fprintf(err, "bench: %s\n", emsg);
		goto close;
	}
	b->init_s = now_s() - t0;
	if (b->r.jitlog[0]) {
		fprintf(err, "bench: SM copy kernels unavailable, copy engines only:\n%s\n", b->r.jitlog);
		note(b, "SM copy kernels unavailable: %s", b->r.jitlog);
	}
	for (int k = 0; k < MX_COUNT; k++) {
		static const char *const fastest_title[MX_COUNT] = {
			[MX_UNI_OFF] = "Unidirectional P2P=Disabled Bandwidth [p2pctl's fastest unmapped "
				       "copy, not the sample's method]",
			[MX_BI_OFF] = "Bidirectional P2P=Disabled Bandwidth [p2pctl's fastest unmapped "
				      "copy, not the sample's method]",
		};
		const char *title = b->off_fastest && fastest_title[k] ? fastest_title[k] :
				    mx_info[k].title;

		matrix_init(&b->mx[k], mx_info[k].key, title, mx_info[k].unit, b->r.n);
	}
	/* A different pattern in every GPU's source, for the data checks. */
	b->h1 = malloc(b->size);
	b->h2 = malloc(b->size);
	if (!b->h1 || !b->h2) {
		snprintf(b->errmsg, sizeof(b->errmsg), "cannot allocate 2 x %llu bytes of host memory",
			 (unsigned long long)b->size);
		rc = P2P_EXIT_FAIL;
		goto report;
	}
	for (int i = 0; i < b->r.n; i++) {
		CUresult cr;

		if (!b->r.g[i].used)
			continue;
		pattern_fill(b->h1, b->size, 0x62656e6368000000ULL + ((uint64_t)i << 40));
		cr = rig_cur(&b->r, i);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemcpyHtoD(b->r.g[i].src, b->h1, b->size);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuCtxSynchronize();
		if (cr != CUDA_SUCCESS) {
			snprintf(b->errmsg, sizeof(b->errmsg), "GPU %d: upload of the source pattern: %s",
				 i, cu_errstr(cr));
			rc = P2P_EXIT_FAIL;
			goto report;
		}
	}
	for (int i = 0; i < b->r.n; i++)
		for (int j = 0; j < b->r.n; j++)
			b->total += want_cell(b, i, j) ? 3 * (b->do_off ? 2 : 1) + (b->forced < 0) : 0;
	if (b->do_off) {
		size_t slot = b->slot < b->size ? b->slot : b->size;

		if ((b->off_fastest || b->forced == M_STAGED) &&
		    rig_ring_alloc(&b->r, slot ? slot : 16) != CUDA_SUCCESS)
			note(b, "no pinned staging memory: %s", "method 'staged' skipped");
		if (run_phase(b, 0)) {
			rc = P2P_EXIT_FAIL;
			goto report;
		}
	}
	for (int i = 0; i < b->r.n; i++)
		for (int j = 0; j < b->r.n; j++) {
			CUresult cr;

			if (i == j || !b->sel[i][j] || !want_cell(b, i, j))
				continue;
			if (!b->r.can_peer[i][j]) {
				char pair[32];

				snprintf(pair, sizeof(pair), "%d->%d", i, j);
				note(b, "no peer access %s: P2P=Enabled cells are the driver's staged copy, "
				     "marked * (staged in JSON)", pair);
				continue;
			}
			cr = rig_peer(&b->r, i, j, 1);
			if (cr != CUDA_SUCCESS) {
				char msg[384];

				/* One pair that cannot be enabled does not stop the others. */
				snprintf(msg, sizeof(msg), "cuCtxEnablePeerAccess %d->%d failed (%s): its "
					 "P2P=Enabled cells are the driver's staged copy, marked *",
					 i, j, cu_errstr(cr));
				note(b, "%s", msg);
			}
			/* enabled again around each cell of run_phase, as the sample does */
			b->peer_ok[i][j] = cr == CUDA_SUCCESS;
			rig_peer(&b->r, i, j, 0);
		}
	if (run_phase(b, 1))
		rc = P2P_EXIT_FAIL;
	/* Beside the sample's method: the fastest of p2pctl's per cell, its own matrix,
	 * with peer access on for all of it. */
	if (!rc && b->forced < 0) {
		b->fastest = 1;
		for (int i = 0; i < b->r.n; i++)
			for (int j = 0; j < b->r.n; j++)
				if (b->peer_ok[i][j])
					rig_peer(&b->r, i, j, 1);
		for (int i = 0; i < b->r.n && !rc; i++)
			for (int j = 0; j < b->r.n && !rc; j++) {
				if (!want_cell(b, i, j))
					continue;
				progress(b, "unidirectional, fastest method", i, j);
				if (measure_cell(b, K_UNI, 1, i, j, &b->mx[MX_UNI_FAST].c[i * b->r.n + j], NULL))
					rc = P2P_EXIT_FAIL;
				b->done++;
			}
	}
report:
	if (b->tty)
		fprintf(err, "\r%70s\r", "");
	if (rc)
		fprintf(err, "bench: %s\n", b->errmsg);
	if (b->json) {
		json_object *o = json_object_new_object(), *p = json_object_new_object();
		json_object *ms = json_object_new_object();

		json_object_object_add(o, "command", json_object_new_string("bench"));
		json_object_object_add(o, "format", json_object_new_int(1));
		json_object_object_add(o, "ok", json_object_new_boolean(rc == 0));
		if (rc)
			json_object_object_add(o, "error", json_object_new_string(b->errmsg));
		if (b->hung && !dl_stop)
			json_object_object_add(o, "hung", json_object_new_boolean(1));
		if (dl_stop)
			json_object_object_add(o, "interrupted",
					       json_object_new_string(sigabbrev_np(dl_stop)));
		json_object_object_add(o, "driver_version", json_object_new_int(b->r.driver_version));
		json_object_object_add(o, "devices", rig_devices_json(&b->r));
		json_object_object_add(o, "p2p_access", rig_peer_json(&b->r));
		json_object_object_add(p, "size_bytes", json_object_new_int64((int64_t)b->size));
		json_object_object_add(p, "copies_per_run", json_object_new_int(b->copies));
		json_object_object_add(p, "reps", json_object_new_int(b->reps));
		json_object_object_add(p, "latency_bytes", json_object_new_int(16));
		json_object_object_add(p, "latency_copies", json_object_new_int(b->lat_copies));
		json_object_object_add(p, "method", json_object_new_string(
			b->forced < 0 ? "auto" : method_names[b->forced]));
		json_object_object_add(p, "sm_threads", json_object_new_int(b->sm.threads));
		json_object_object_add(p, "sm_blocks_per_sm", json_object_new_int(b->sm.blocks_per_sm));
		json_object_object_add(p, "stage_slot_bytes", json_object_new_int64((int64_t)b->slot));
		json_object_object_add(p, "p2p_off", json_object_new_boolean(b->do_off));
		json_object_object_add(p, "p2p_off_method", json_object_new_string(
			b->off_fastest ? "fastest" : "sample"));
		json_object_object_add(o, "params", p);
		for (int k = 0; k < MX_COUNT; k++) {
			int any = 0;

			for (int c = 0; c < b->r.n * b->r.n; c++)
				any |= b->mx[k].c[c].present;
			if (any)
				json_object_object_add(ms, mx_info[k].key,
						       matrix_json(&b->mx[k], method_names, M_COUNT));
		}
		json_object_object_add(o, "matrices", ms);
		json_object_object_add(o, "notes", json_object_get(b->notes));
		json_object_object_add(o, "init_s", json_object_new_double(round(b->init_s * 1e4) / 1e4));
		json_object_object_add(o, "wall_s", json_object_new_double(
			round((now_s() - t0) * 1e4) / 1e4));
		fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								      JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else if (!rc || b->done) {
		print_text(b);
		for (size_t k = 0; k < json_object_array_length(b->notes); k++)
			fprintf(out, "note: %s\n",
				json_object_get_string(json_object_array_get_idx(b->notes, k)));
		fprintf(out, "wall time %.3f s\n", now_s() - t0);
		if (rc && b->done)
			fprintf(out, "bench: %s (%d of %d cells done)\n", b->errmsg, b->done, b->total);
	}
	if (plot && !rc) {
		FILE *f = fopen(plot, "w");
		const struct matrix *pm = NULL;
		char sub[256];

		for (int k = 0; k < MX_COUNT; k++)
			if (!strcmp(plotkey, mx_info[k].key))
				pm = &b->mx[k];
		snprintf(sub, sizeof(sub), "p2pctl bench, %s, %llu-byte transfers x %d, median of %d",
			 b->r.n ? b->r.g[0].name : "", (unsigned long long)b->size, b->copies, b->reps);
		if (!f || matrix_svg(f, pm, sub) || fclose(f)) {
			fprintf(err, "bench: cannot write %s\n", plot);
			rc = P2P_EXIT_FAIL;
		}
	}
	if (b->hung) {
		/* a copy still in flight (hung, or cut by the signal): tearing the
		 * contexts down would wait for it */
		fflush(out);
		fflush(err);
		goto done;
	}
	rig_close(&b->r);
close:
	cu_close();
done:
	if (bw.on) {
		bw.stop = 1;
		pthread_join(bw.th, NULL);
		bw.on = 0;
	}
	if (dl_stop && rc != P2P_EXIT_USAGE)
		rc = 128 + dl_stop;	/* as a shell reports a command the signal ended */
	if (sig_on)
		dl_release();
	plan_free(&b->plan);
	free(b->h1);
	free(b->h2);
	if (b->notes)
		json_object_put(b->notes);
	free(b->mx);
	free(b);
	return rc;
}

