// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl bench --nccl: NCCL all-reduce and all-gather bus bandwidth per size,
 * measured the way nccl-tests' all_reduce_perf and all_gather_perf measure
 * it (one process, one communicator per GPU from ncclCommInitAll, float32,
 * out of place and in place, warm-up calls at every size first, then per
 * size the mean host time of a batch of iterations, each iteration at the
 * next offset into the buffers; the median of 5 batches by default, where
 * nccl-tests times one: --batches 1 is its method), with every result
 * checked on inputs made anew for the check (as nccl-tests re-seeds) and a
 * deadline on every wait and every blocking NCCL call.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_cmds.h"
#include "cuda_int.h"
#include "deadline.h"
#include "ncclx.h"

int bench_nccl_exit_on_hang = 1;

#define NB_BATCHES 5	/* default */
#define NB_BATCHES_MAX 64
#define NB_POISON 0xa5a5a5a5u

static int dcmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

struct nb {
	struct rig r;
	int gs[P2P_MAX_GPUS], n;
	ncclComm_t comm[P2P_MAX_GPUS];
	CUdeviceptr sbuf[P2P_MAX_GPUS], rbuf[P2P_MAX_GPUS];
	uint64_t minb, maxb;
	uint64_t buf;		/* bytes of each device buffer (maxb, whole words, >= an element per rank) */
	int iters, warmup, batches, json;
	double timeout;
	uint64_t rep;		/* the inputs' seed: a new one at every fill */
	float *host, *want, *got;
	FILE *out, *err;
	char hang[512];
	char gl[80];		/* "GPUs 0,1" */
};

/*
 * SIGINT or SIGTERM (dl_stop, deadline.h): the run stops at its next wait
 * (rows printed so far stand); a blocking NCCL call that has not returned
 * RIG_GUARD_SIGNAL_S after the signal is ended by the watchdog; a second
 * signal ends the process at once.
 */

/* The cell in progress ("all_reduce 1024 bytes in place"), for the watchdog;
 * written by the main thread outside guarded calls only. */
static char nb_where[96];

/*
 * The watchdog: NCCL's launches (ncclGroupEnd, where NCCL may block
 * connecting) and ncclCommDestroy are guarded (rig_guard_call); one that has
 * not returned within rig_guard_limit(--timeout), or RIG_GUARD_SIGNAL_S after
 * a signal, is named with its cell, and the process _exit()s (status 1, or
 * 128 + the signal): nothing can end the blocked call.
 */
static struct {
	pthread_t th;
	int on;
	volatile int stop;
	double timeout;
	FILE *out;
} nbw;

static void *nb_watchdog(void *p)
{
	double sig_at = 0;

	(void)p;
	while (!nbw.stop) {
		const char *what;
		int g, a, b, sig = dl_stop;
		double t;

		dl_nap(20000);
		if (sig && !sig_at)
			sig_at = now_s();
		if (!rig_guard_expired(sig && now_s() - sig_at > RIG_GUARD_SIGNAL_S ? RIG_GUARD_SIGNAL_S :
				       rig_guard_limit(nbw.timeout), &what, &g, &a, &b, &t))
			continue;
		if (sig)
			fprintf(nbw.out, "bench --nccl: INTERRUPTED by SIG%s: %s: %s after %.3g s\n",
				sigabbrev_np(sig), nb_where, what, t);
		else
			fprintf(nbw.out, "bench --nccl: HUNG: %s: %s has not returned for %.3g s: %s\n", nb_where,
				what, t, rig_guard_hint());
		rig_exit(nbw.out, sig);
	}
	return NULL;
}

static const char nb_hint[] = "NCCL hangs (try NCCL_P2P_DISABLE=1 to see whether its P2P transport is "
			      "the cause)";

static void nb_usage(FILE *f)
{
	fprintf(f,
		"Usage: p2pctl bench --nccl [--min-bytes B] [--max-bytes B] [--iters N]\n"
		"                    [--warmup N] [--batches N] [--like-nccl-tests]\n"
		"                    [--gpus LIST] [--timeout S] [--json]\n"
		"  --min-bytes B    smallest size (default 8)\n"
		"  --max-bytes B    largest size (default 256M); sizes double from the smallest\n"
		"  --iters N        timed iterations per batch (default 20)\n"
		"  --warmup N       untimed calls at every size, all before the first timed\n"
		"                   size, as nccl-tests (default 5)\n"
		"  --batches N      timed batches per size, the median reported (default 5;\n"
		"                   1 times a size as nccl-tests does, with one batch)\n"
		"  --like-nccl-tests  nccl-tests' defaults: --warmup 1 --batches 1 --iters 20\n"
		"                   (options given as well still count)\n"
		"  --gpus LIST      these GPUs, e.g. 0,1 (default: all)\n"
		"  --timeout S      deadline of NCCL's init and of every wait (default 30); a\n"
		"                   blocking NCCL call's is S, at least 10 s\n"
		"  -j, --json       JSON on stdout\n"
		"all-reduce (float32 sum) and all-gather, out of place and in place, one\n"
		"communicator per GPU in this process; busbw as nccl-tests computes it:\n"
		"all-reduce algbw * 2(n-1)/n, all-gather algbw * (n-1)/n; every result is\n"
		"checked on new inputs. SIGINT or SIGTERM stops the run (status 128 + N).\n");
}

/* Element e of rank k's input at seed rep: small integers, so float sums
 * are exact; every element and every sum changes with rep (by 29 mod 61). */
static float nb_elem(uint64_t rep, int k, size_t e)
{
	return (float)(int)((e * 7 + (size_t)k * 13 + rep * 29) % 61) - 30.0f;
}

/* Wait for every GPU's stream 0, with the deadline. 0, -1 hung, -2 CUDA
 * error, -4 interrupted (b->hang says which). */
static int nb_wait(struct nb *b, const char *what)
{
	double end = now_s() + b->timeout;

	for (int k = 0; k < b->n; k++) {
		CUresult cr;

		rig_cur(&b->r, b->gs[k]);
		/* timed: the host times the batches, as nccl-tests does */
		cr = dl_wait_timed(b->r.g[b->gs[k]].s[0], end);
		if (cr == CUDA_ERROR_NOT_READY && dl_stop) {
			snprintf(b->hang, sizeof(b->hang), "%s on GPU %d", what, b->gs[k]);
			return -4;
		}
		if (cr == CUDA_ERROR_NOT_READY) {
			snprintf(b->hang, sizeof(b->hang), "%s did not finish within %.3g s on GPU %d: "
				 "%s", what, b->timeout, b->gs[k], nb_hint);
			return -1;
		}
		if (cr != CUDA_SUCCESS) {
			snprintf(b->hang, sizeof(b->hang), "%s failed on GPU %d: %s", what, b->gs[k],
				 cu_errstr(cr));
			return -2;
		}
	}
	return 0;
}

/* nb_wait's result as nb_size's: -3 hung, -2 error, -4 interrupted. */
static int nb_waited(int w)
{
	return w == -1 ? -3 : w;
}

static const char *nb_name(int coll)
{
	return coll == NCCLX_ALLREDUCE ? "ncclAllReduce" : "ncclAllGather";
}

/*
 * nccl-tests' size for a step of the doubling: whole float32 elements on
 * every rank, by division (all-gather: bytes / n per rank; at least one
 * element). *count: each rank's input. Returns the size nccl-tests reports
 * (all-reduce: each rank's buffer; all-gather: the gathered buffer).
 */
static uint64_t nb_bytes(const struct nb *b, int coll, uint64_t bytes, size_t *count)
{
	uint64_t per = bytes / NCCLX_ELEM / (coll == NCCLX_ALLREDUCE ? 1 : (uint64_t)b->n);

	*count = (size_t)(per ? per : 1);
	return (uint64_t)*count * NCCLX_ELEM * (coll == NCCLX_ALLREDUCE ? 1 : (uint64_t)b->n);
}

/*
 * One launch of coll over every rank at count elements per rank's input,
 * iteration iter: as nccl-tests, at offset total * (iter % (buf / total))
 * into the buffers, so that consecutive calls use other memory. In place,
 * the input is the result buffer (all-gather: its rank-th part).
 */
static int nb_launch(struct nb *b, int coll, size_t count, int inplace, int iter)
{
	uint64_t total = (uint64_t)count * NCCLX_ELEM * (coll == NCCLX_ALLREDUCE ? 1 : (uint64_t)b->n);
	uint64_t shift = total * ((uint64_t)iter % (b->buf / total));
	int nr = nx.GroupStart();

	for (int k = 0; k < b->n && !nr; k++) {
		struct gpu *g = &b->r.g[b->gs[k]];
		CUdeviceptr r = b->rbuf[k] + shift, s = b->sbuf[k] + shift;

		if (inplace)
			s = coll == NCCLX_ALLREDUCE ? r : r + (uint64_t)k * count * NCCLX_ELEM;
		if (coll == NCCLX_ALLREDUCE)
			nr = nx.AllReduce((void *)(uintptr_t)s, (void *)(uintptr_t)r, count, NCCLX_FLOAT32,
					  NCCLX_SUM, b->comm[k], g->s[0]);
		else
			nr = nx.AllGather((void *)(uintptr_t)s, (void *)(uintptr_t)r, count, NCCLX_FLOAT32,
					  b->comm[k], g->s[0]);
	}
	if (!nr)
		return nx.GroupEnd();
	nx.GroupEnd();
	return nr;
}

/* n launches from iteration iter on, under the watchdog (label: the call). */
static int nb_launches(struct nb *b, int coll, size_t count, int inplace, int iter, int n, char *msg,
		       size_t len)
{
	char label[256];
	int nr = 0;

	snprintf(label, sizeof(label), "ncclGroupEnd (%s of %zu bytes%s over %s)",
		 coll == NCCLX_ALLREDUCE ? "all-reduce" : "all-gather",
		 (size_t)count * NCCLX_ELEM * (coll == NCCLX_ALLREDUCE ? 1 : b->n), inplace ? " in place" : "",
		 b->gl);
	rig_guard_call(label, nb_hint);
	for (int i = 0; i < n && !nr; i++)
		nr = nb_launch(b, coll, count, inplace, iter + i);
	rig_unguard();
	if (nr)
		snprintf(msg, len, "%s: %s", nb_name(coll), nx.GetErrorString(nr));
	return nr ? -2 : 0;
}

/*
 * New inputs (seed b->rep++) at offset 0 (in place: in the result buffer,
 * all-gather: its rank-th part), the results poisoned first (out of place),
 * and the results they must give into b->want. 0 or nb_size's codes.
 */
static int nb_fill(struct nb *b, int coll, size_t count, int inplace, char *msg, size_t len)
{
	size_t total = coll == NCCLX_ALLREDUCE ? count : count * b->n;
	uint64_t rep = b->rep++;

	for (size_t e = 0; e < total; e++) {
		if (coll == NCCLX_ALLREDUCE) {
			float s = 0;

			for (int k = 0; k < b->n; k++)
				s += nb_elem(rep, b->gs[k], e);
			b->want[e] = s;
		} else {
			b->want[e] = nb_elem(rep, b->gs[e / count], e % count);
		}
	}
	for (int k = 0; k < b->n; k++) {
		CUstream s = b->r.g[b->gs[k]].s[0];
		CUdeviceptr in = inplace ? b->rbuf[k] + (coll == NCCLX_ALLREDUCE ? 0 :
				(uint64_t)k * count * NCCLX_ELEM) : b->sbuf[k];
		CUresult cr;

		for (size_t e = 0; e < count; e++)
			b->host[e] = nb_elem(rep, b->gs[k], e);
		rig_cur(&b->r, b->gs[k]);
		cr = cu.cuMemsetD32Async(b->rbuf[k], NB_POISON, total, s);
		/* on the stream NCCL uses: ordered before its call */
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemcpyHtoDAsync(in, b->host, count * NCCLX_ELEM, s);
		if (cr != CUDA_SUCCESS) {
			snprintf(msg, len, "the inputs' upload failed on GPU %d: %s", b->gs[k], cu_errstr(cr));
			return -2;
		}
		/* pageable memory: the copy may read b->host after it returns */
		{
			int w = nb_wait(b, "the upload of the inputs");

			if (w)
				return nb_waited(w);
		}
	}
	return 0;
}

/* Every element of every rank's result against b->want. 0, -1 wrong (msg), -2. */
static int nb_check(struct nb *b, int coll, size_t count, char *msg, size_t len)
{
	size_t total = coll == NCCLX_ALLREDUCE ? count : count * b->n;

	for (int k = 0; k < b->n; k++) {
		rig_cur(&b->r, b->gs[k]);
		if (cu.cuMemcpyDtoH(b->got, b->rbuf[k], total * NCCLX_ELEM) != CUDA_SUCCESS) {
			snprintf(msg, len, "read back from GPU %d failed", b->gs[k]);
			return -2;
		}
		for (size_t e = 0; e < total; e++)
			if (memcmp(&b->got[e], &b->want[e], NCCLX_ELEM)) {
				uint32_t gb;

				memcpy(&gb, &b->got[e], 4);
				/* %.9g: a float off by one unit in the last place shows */
				snprintf(msg, len, "GPU %d's result: element %zu is %.9g, expected %.9g%s",
					 b->gs[k], e, (double)b->got[e], (double)b->want[e],
					 gb == NB_POISON ? " (0xa5a5a5a5, the poison: NCCL never wrote it)" : "");
				return -1;
			}
	}
	return 0;
}

/*
 * The warm-up, as nccl-tests 2.19.6 runs it: --warmup calls at every size
 * (out of place, at the per-iteration offsets) before any size is timed.
 * NCCL's first calls at a new size are slow (it connects algorithms and
 * protocols when first used); a warm-up only just before each size left 8,
 * 32 and 512 B of the all-reduce 1.3-2.4x slower in every process on the
 * lent H200 pair (docs/bench.md). 0 or nb_size's codes.
 */
static int nb_warm(struct nb *b, int coll, char *msg, size_t len)
{
	for (uint64_t bytes = b->minb; bytes <= b->maxb; bytes *= 2) {
		size_t count;
		int w;

		nb_bytes(b, coll, bytes, &count);
		if (nb_launches(b, coll, count, 0, 0, b->warmup, msg, len))
			return -2;
		if ((w = nb_wait(b, "the warm-up")))
			return nb_waited(w);
	}
	return 0;
}

/*
 * One size of one collective, in place or out of place, after the warm-up,
 * as nccl-tests' BenchTime: inputs made, one untimed call (its sync: the
 * GPUs idled while the last size was checked on the host), --batches timed
 * batches of --iters calls (host time from the first launch to the end of
 * the last; the median batch reported); then new inputs (nccl-tests
 * re-seeds: a result left from an earlier call cannot pass), one call, every
 * element of every rank's result checked. bytes: nccl-tests' size.
 * 0, -1 wrong data (msg), -2 NCCL or CUDA error (msg), -3 hang (b->hang),
 * -4 interrupted (b->hang).
 */
static int nb_size(struct nb *b, int coll, size_t count, int inplace, double *sec, char *msg, size_t len)
{
	double t0, bt[NB_BATCHES_MAX];
	int w;

	*sec = 0;
	if ((w = nb_fill(b, coll, count, inplace, msg, len)))
		return w;
	if (nb_launches(b, coll, count, inplace, 0, 1, msg, len))
		return -2;
	if ((w = nb_wait(b, "the call before the timed batches")))
		return nb_waited(w);
	for (int k = 0; k < b->batches; k++) {
		t0 = now_s();
		if (nb_launches(b, coll, count, inplace, 0, b->iters, msg, len))
			return -2;
		if ((w = nb_wait(b, coll == NCCLX_ALLREDUCE ? "an all-reduce" : "an all-gather")))
			return nb_waited(w);
		bt[k] = (now_s() - t0) / b->iters;
	}
	qsort(bt, b->batches, sizeof(bt[0]), dcmp);
	*sec = bt[b->batches / 2];
	if ((w = nb_fill(b, coll, count, inplace, msg, len)))
		return w;
	if (nb_launches(b, coll, count, inplace, 0, 1, msg, len))
		return -2;
	if ((w = nb_wait(b, "the checked call")))
		return nb_waited(w);
	return nb_check(b, coll, count, msg, len);
}

static int parse_gpus(const char *s, int *gs, int *n)
{
	char buf[256], *save = NULL;

	*n = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		char *end;
		long g = strtol(w, &end, 10);

		if (*end || g < 0 || g >= P2P_MAX_GPUS || *n >= P2P_MAX_GPUS)
			return -1;
		gs[(*n)++] = (int)g;
	}
	return *n ? 0 : -1;
}

int bench_nccl_main(int argc, char **argv, FILE *out, FILE *err)
{
	static const struct option lo[] = {
		{ "nccl", no_argument, NULL, 'N' },
		{ "min-bytes", required_argument, NULL, 'b' },
		{ "max-bytes", required_argument, NULL, 'e' },
		{ "iters", required_argument, NULL, 'i' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "batches", required_argument, NULL, 'B' },
		{ "like-nccl-tests", no_argument, NULL, 'L' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const cname[2] = { "all_reduce", "all_gather" };
	struct nb *b = calloc(1, sizeof(*b));
	const char *gpus = NULL;
	char emsg[1024], *end;
	int rc = 0, opt, ndev, use[P2P_MAX_GPUS] = { 0 }, devs[P2P_MAX_GPUS], bad = 0, like = 0;
	int given[3] = { 0 };	/* --iters, --warmup, --batches on the command line */
	json_object *jo = NULL, *jr = NULL;
	int sig_on = 0;

	if (!b)
		return P2P_EXIT_FAIL;
	b->out = out;
	b->err = err;
	b->minb = 8;
	b->maxb = 256ULL << 20;
	b->iters = 20;
	b->warmup = 5;
	b->batches = NB_BATCHES;
	b->timeout = 30;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "jh", lo, NULL)) != -1) {
		switch (opt) {
		case 'N': break;
		case 'b':
		case 'e':
			if (parse_size(optarg, opt == 'b' ? &b->minb : &b->maxb) ||
			    (opt == 'e' && b->maxb > (16ULL << 30))) {
				fprintf(err, "bench: bad --%s '%s'\n", opt == 'b' ? "min-bytes" : "max-bytes", optarg);
				rc = P2P_EXIT_USAGE;
			}
			break;
		case 'i':
		case 'w': {
			long x = strtol(optarg, &end, 10);

			if (!*optarg || *end || x < (opt == 'i' ? 1 : 0) || x > 100000) {
				fprintf(err, "bench: bad --%s '%s'\n", opt == 'i' ? "iters" : "warmup", optarg);
				rc = P2P_EXIT_USAGE;
			}
			*(opt == 'i' ? &b->iters : &b->warmup) = (int)x;
			given[opt == 'i' ? 0 : 1] = 1;
			break;
		}
		case 'B': {
			long x = strtol(optarg, &end, 10);

			if (!*optarg || *end || x < 1 || x > NB_BATCHES_MAX) {
				fprintf(err, "bench: bad --batches '%s' (1 to %d)\n", optarg, NB_BATCHES_MAX);
				rc = P2P_EXIT_USAGE;
				break;
			}
			b->batches = (int)x;
			given[2] = 1;
			break;
		}
		case 'L': like = 1; break;
		case 'g': gpus = optarg; break;
		case 'T':
			b->timeout = strtod(optarg, &end);
			if (!*optarg || *end || !(b->timeout > 0) || b->timeout > 86400) {
				fprintf(err, "bench: bad --timeout '%s'\n", optarg);
				rc = P2P_EXIT_USAGE;
			}
			break;
		case 'j': b->json = 1; break;
		case 'h': nb_usage(out); goto done;
		default:
			fprintf(err, "bench --nccl: bad option '%s'\n", argv[optind - 1]);
			rc = P2P_EXIT_USAGE;
		}
	}
	if (like) {
		/* nccl-tests 2.19.6's: -w 1, -n 20, one timed batch */
		b->warmup = given[1] ? b->warmup : 1;
		b->iters = given[0] ? b->iters : 20;
		b->batches = given[2] ? b->batches : 1;
	}
	if (!rc && b->minb > b->maxb) {
		fprintf(err, "bench: --min-bytes is above --max-bytes\n");
		rc = P2P_EXIT_USAGE;
	}
	if (!rc && gpus && parse_gpus(gpus, b->gs, &b->n)) {
		fprintf(err, "bench: bad --gpus '%s' (e.g. 0,1)\n", gpus);
		rc = P2P_EXIT_USAGE;
	}
	if (rc) {
		nb_usage(err);
		goto done;
	}
	rc = cu_open(emsg, sizeof(emsg));
	if (!rc)
		rc = rig_count(&ndev, emsg, sizeof(emsg));
	if (rc) {
		fprintf(err, "bench: %s\n", emsg);
		goto done;
	}
	if (!gpus)
		for (b->n = 0; b->n < ndev && b->n < P2P_MAX_GPUS; b->n++)
			b->gs[b->n] = b->n;
	for (int k = 0; k < b->n; k++) {
		if (b->gs[k] >= ndev) {
			fprintf(err, "bench: no GPU %d (%d found)\n", b->gs[k], ndev);
			rc = P2P_EXIT_NODEV;
			goto close;
		}
		use[b->gs[k]] = 1;
	}
	if (b->n < 2) {
		fprintf(err, "bench --nccl: needs at least two GPUs (%d)\n", b->n);
		rc = P2P_EXIT_NODEV;
		goto close;
	}
	if (ncclx_open(emsg, sizeof(emsg))) {
		fprintf(err, "bench --nccl: %s\n", emsg);
		rc = P2P_EXIT_NODEV;
		goto close;
	}
	/* every size's buffers fit (nb_bytes rounds down), and one element per rank */
	b->buf = (b->maxb + 3) & ~3ULL;
	if (b->buf < (uint64_t)NCCLX_ELEM * b->n)
		b->buf = (uint64_t)NCCLX_ELEM * b->n;
	b->host = malloc(b->buf);
	b->want = malloc(b->buf);
	b->got = malloc(b->buf);
	if (!b->host || !b->want || !b->got) {
		fprintf(err, "bench --nccl: cannot allocate 3 x %" PRIu64 " bytes of host memory\n", b->buf);
		rc = P2P_EXIT_FAIL;
		goto nccl;
	}
	rc = rig_open(&b->r, use, 0, 0, emsg, sizeof(emsg));
	if (rc) {
		fprintf(err, "bench: %s\n", emsg);
		goto nccl;
	}
	for (int k = 0; k < b->n; k++) {
		CUresult cr = rig_cur(&b->r, b->gs[k]);

		devs[k] = b->r.g[b->gs[k]].dev;
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemAlloc(&b->sbuf[k], b->buf);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemAlloc(&b->rbuf[k], b->buf);
		/* the warm-up's inputs: zeros (nb_fill makes each size's) */
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemsetD32Async(b->sbuf[k], 0, b->buf / 4, b->r.g[b->gs[k]].s[0]);
		if (cr == CUDA_SUCCESS && nb_wait(b, "the zeroing of the inputs"))
			cr = CUDA_ERROR_NOT_READY;
		if (cr != CUDA_SUCCESS) {
			fprintf(err, "bench --nccl: GPU %d: cannot allocate or fill 2 x %" PRIu64 " bytes: %s\n",
				b->gs[k], b->buf, cu_errstr(cr));
			rc = P2P_EXIT_FAIL;
			goto rig;
		}
	}
	{
		size_t l = (size_t)snprintf(b->gl, sizeof(b->gl), "GPUs ");

		for (int k = 0; k < b->n && l < sizeof(b->gl); k++)
			l += (size_t)snprintf(b->gl + l, sizeof(b->gl) - l, "%s%d", k ? "," : "", b->gs[k]);
	}
	switch (ncclx_init_all(b->comm, b->n, devs, b->timeout, emsg, sizeof(emsg))) {
	case 0: break;
	case 2:
		fprintf(out, "bench --nccl: HUNG: %s\n", emsg);
		fflush(out);
		if (bench_nccl_exit_on_hang)
			_exit(P2P_EXIT_FAIL);
		rc = P2P_EXIT_FAIL;
		goto done;	/* touch nothing: NCCL is stuck */
	default:
		fprintf(err, "bench --nccl: %s\n", emsg);
		rc = P2P_EXIT_FAIL;
		goto rig;
	}
	sig_on = !dl_catch();
	nbw.stop = 0;
	nbw.timeout = b->timeout;
	nbw.out = out;
	snprintf(nb_where, sizeof(nb_where), "the start");
	nbw.on = !pthread_create(&nbw.th, NULL, nb_watchdog, NULL);
	if (b->json) {
		jo = json_object_new_object();
		jr = json_object_new_array();
	} else {
		fprintf(out, "# p2pctl bench --nccl: %d GPUs (", b->n);
		for (int k = 0; k < b->n; k++)
			fprintf(out, "%s%d", k ? "," : "", b->gs[k]);
		fprintf(out, "), %s, NCCL %d; float32, out of place and in place, %d warm-up + %d x %d timed "
			"iterations per size (median batch)\n", nx.path, nx.version, b->warmup, b->batches,
			b->iters);
		fprintf(out, "# busbw as nccl-tests: all_reduce algbw*2(n-1)/n, all_gather algbw*(n-1)/n\n");
		fflush(out);
	}
	for (int c = 0; c < 2 && !bad; c++) {
		int r;

		if (c == NCCLX_ALLGATHER && !nx.AllGather) {
			fprintf(err, "bench --nccl: %s has no ncclAllGather: all_gather skipped\n", nx.path);
			break;
		}
		if (!b->json) {
			fprintf(out, "#\n# %s\n# %12s %12s %5s %10s %12s %12s  %s\n", cname[c], "size(B)", "count",
				"place", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "check");
			fflush(out);
		}
		snprintf(nb_where, sizeof(nb_where), "%s warm-up", cname[c]);
		r = nb_warm(b, c, emsg, sizeof(emsg));
		/* per size out of place, then in place, as nccl-tests */
		for (uint64_t bytes = b->minb; bytes <= b->maxb && !r; bytes *= 2) {
			for (int ip = 0; ip < 2 && !r; ip++) {
				double sec, algbw, busbw;
				size_t count;
				uint64_t sz = nb_bytes(b, c, bytes, &count);

				snprintf(nb_where, sizeof(nb_where), "%s %" PRIu64 " bytes%s", cname[c], sz,
					 ip ? " in place" : "");
				r = dl_stop ? -4 : nb_size(b, c, count, ip, &sec, emsg, sizeof(emsg));
				if (r == -4 && !b->hang[0])
					snprintf(b->hang, sizeof(b->hang), "before it started");
				if (r)
					break;
				busbw = ncclx_busbw(c, (double)sz, sec, b->n, &algbw);
				if (b->json) {
					json_object *e = json_object_new_object();

					json_object_object_add(e, "collective", json_object_new_string(cname[c]));
					json_object_object_add(e, "bytes", json_object_new_int64((int64_t)sz));
					json_object_object_add(e, "in_place", json_object_new_boolean(ip));
					json_object_object_add(e, "time_us", json_object_new_double(sec * 1e6));
					json_object_object_add(e, "algbw_gbps", json_object_new_double(algbw));
					json_object_object_add(e, "busbw_gbps", json_object_new_double(busbw));
					json_object_object_add(e, "data_checked", json_object_new_boolean(1));
					json_object_array_add(jr, e);
				} else {
					fprintf(out, "  %12" PRIu64 " %12zu %5s %10.2f %12.2f %12.2f  ok\n", sz, count,
						ip ? "in" : "out", sec * 1e6, algbw, busbw);
					fflush(out);
				}
			}
		}
		if (r == -4) {
			/* a signal: the rows so far stand; GPU work may be in flight */
			fprintf(out, "bench --nccl: INTERRUPTED by SIG%s: %s: %s\n", sigabbrev_np(dl_stop), nb_where,
				b->hang);
			fflush(out);
			rc = 128 + dl_stop;
			if (bench_nccl_exit_on_hang)
				_exit(rc);
			goto unsig;
		}
		if (r) {
			fprintf(out, "bench --nccl: %s: %s: %s\n", r == -3 ? "HUNG" : "FAIL", nb_where,
				r == -3 ? b->hang : emsg);
			fflush(out);
			rc = P2P_EXIT_FAIL;
			if (r == -3 && bench_nccl_exit_on_hang)
				_exit(P2P_EXIT_FAIL);
			if (r == -3)
				goto unsig;	/* touch nothing: NCCL is stuck */
			bad = 1;
		}
	}
	/* ncclCommDestroy waits for the communicators' work: under the watchdog */
	{
		char label[256];

		snprintf(nb_where, sizeof(nb_where), "the end");
		snprintf(label, sizeof(label), "ncclCommDestroy (%s)", b->gl);
		rig_guard_call(label, nb_hint);
		for (int k = 0; k < b->n; k++)
			if (b->comm[k])
				nx.CommDestroy(b->comm[k]);
		rig_unguard();
	}
	if (b->json) {
		json_object *jg = json_object_new_array();

		for (int k = 0; k < b->n; k++)
			json_object_array_add(jg, json_object_new_int(b->gs[k]));
		json_object_object_add(jo, "command", json_object_new_string("bench --nccl"));
		json_object_object_add(jo, "gpus", jg);
		json_object_object_add(jo, "libnccl", json_object_new_string(nx.path));
		json_object_object_add(jo, "nccl_version", json_object_new_int(nx.version));
		json_object_object_add(jo, "iters", json_object_new_int(b->iters));
		json_object_object_add(jo, "warmup", json_object_new_int(b->warmup));
		json_object_object_add(jo, "batches", json_object_new_int(b->batches));
		json_object_object_add(jo, "results", jr);
		json_object_object_add(jo, "result", json_object_new_string(bad ? "FAIL" : "OK"));
		fprintf(out, "%s\n", json_object_to_json_string_ext(jo, JSON_C_TO_STRING_PRETTY |
								       JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(jo);
	}
	if (nbw.on) {
		nbw.stop = 1;
		pthread_join(nbw.th, NULL);
		nbw.on = 0;
	}
	if (sig_on) {
		dl_release();
		sig_on = 0;
	}
rig:
	for (int k = 0; k < b->n; k++) {
		if (!b->sbuf[k] && !b->rbuf[k])
			continue;
		rig_cur(&b->r, b->gs[k]);
		if (b->sbuf[k])
			cu.cuMemFree(b->sbuf[k]);
		if (b->rbuf[k])
			cu.cuMemFree(b->rbuf[k]);
	}
	rig_close(&b->r);
nccl:
	ncclx_close();
close:
	cu_close();
	goto done;
unsig:
	/* NCCL is stuck or its work in flight: nothing is torn down */
	if (nbw.on) {
		nbw.stop = 1;
		pthread_join(nbw.th, NULL);
		nbw.on = 0;
	}
	if (sig_on)
		dl_release();
done:
	free(b->host);
	free(b->want);
	free(b->got);
	free(b);
	return rc;
}
