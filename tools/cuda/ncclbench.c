// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl bench --nccl: NCCL all-reduce and all-gather bus bandwidth per size,
 * measured the way nccl-tests' all_reduce_perf and all_gather_perf measure
 * it (one process, one communicator per GPU from ncclCommInitAll, float32,
 * out of place, warm-up calls at every size first, then per size the mean
 * host time of a batch of iterations; the median of 5 batches by default,
 * where nccl-tests times one: --batches 1 is its method), with every result
 * checked and a deadline on every wait.
 */
#include <errno.h>
#include <sched.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_cmds.h"
#include "cuda_int.h"
#include "ncclx.h"

int bench_nccl_exit_on_hang = 1;

#define NB_BATCHES 5	/* default */
#define NB_BATCHES_MAX 64

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
	int iters, warmup, batches, json;
	double timeout;
	float *host, *want, *got;
	FILE *out, *err;
	char hang[512];
};

static void nb_usage(FILE *f)
{
	fprintf(f,
		"Usage: p2pctl bench --nccl [--min-bytes B] [--max-bytes B] [--iters N]\n"
		"                    [--warmup N] [--batches N] [--gpus LIST] [--timeout S]\n"
		"                    [--json]\n"
		"  --min-bytes B    smallest size (default 8)\n"
		"  --max-bytes B    largest size (default 256M); sizes double from the smallest\n"
		"  --iters N        timed iterations per batch (default 20)\n"
		"  --warmup N       untimed calls at every size, all before the first timed\n"
		"                   size, as nccl-tests (default 5)\n"
		"  --batches N      timed batches per size, the median reported (default 5;\n"
		"                   1 times a size as nccl-tests does, with one batch)\n"
		"  --gpus LIST      these GPUs, e.g. 0,1 (default: all)\n"
		"  --timeout S      deadline of NCCL's init and of every wait (default 30)\n"
		"  -j, --json       JSON on stdout\n"
		"all-reduce (float32 sum) and all-gather, out of place, one communicator per\n"
		"GPU in this process; busbw as nccl-tests computes it: all-reduce\n"
		"algbw * 2(n-1)/n, all-gather algbw * (n-1)/n; every result is checked.\n");
}

/* Element e of rank k's input: small integers, so float sums are exact. */
static float nb_elem(int k, size_t e)
{
	return (float)(int)((e * 7 + (size_t)k * 13) % 61) - 30.0f;
}

/* Wait for every GPU's stream 0, with the deadline. 0 or -1 (hung: why set). */
static int nb_wait(struct nb *b, const char *what)
{
	double start = now_s(), end = start + b->timeout;

	for (int k = 0; k < b->n; k++) {
		struct gpu *g = &b->r.g[b->gs[k]];
		CUresult cr;

		rig_cur(&b->r, b->gs[k]);
		while ((cr = cu.cuStreamQuery(g->s[0])) == CUDA_ERROR_NOT_READY) {
			if (now_s() > end) {
				snprintf(b->hang, sizeof(b->hang), "%s did not finish within %.3g s on GPU %d: "
					 "NCCL hangs (try NCCL_P2P_DISABLE=1 to see whether its P2P transport "
					 "is the cause)", what, b->timeout, b->gs[k]);
				return -1;
			}
			/* spin at first, as cudaStreamSynchronize does: a nap would
			 * add its length to every timed batch of small sizes */
			if (now_s() - start > 0.005) {
				struct timespec ts = { 0, 20000 };

				nanosleep(&ts, NULL);
			} else {
				sched_yield();
			}
		}
		if (cr != CUDA_SUCCESS) {
			snprintf(b->hang, sizeof(b->hang), "%s failed on GPU %d: %s", what, b->gs[k],
				 cu_errstr(cr));
			return -2;
		}
	}
	return 0;
}

/* One launch of coll over every rank at count elements (per rank's input). */
static int nb_launch(struct nb *b, int coll, size_t count)
{
	int nr = nx.GroupStart();

	for (int k = 0; k < b->n && !nr; k++) {
		struct gpu *g = &b->r.g[b->gs[k]];

		if (coll == NCCLX_ALLREDUCE)
			nr = nx.AllReduce((void *)(uintptr_t)b->sbuf[k], (void *)(uintptr_t)b->rbuf[k], count,
					  NCCLX_FLOAT32, NCCLX_SUM, b->comm[k], g->s[0]);
		else
			nr = nx.AllGather((void *)(uintptr_t)b->sbuf[k], (void *)(uintptr_t)b->rbuf[k], count,
					  NCCLX_FLOAT32, b->comm[k], g->s[0]);
	}
	if (!nr)
		return nx.GroupEnd();
	nx.GroupEnd();
	return nr;
}

static const char *nb_name(int coll)
{
	return coll == NCCLX_ALLREDUCE ? "ncclAllReduce" : "ncclAllGather";
}

/* nccl-tests' size for a step of the doubling: whole float32 elements on every rank. */
static uint64_t nb_bytes(const struct nb *b, uint64_t bytes)
{
	uint64_t sz = bytes & ~(uint64_t)(4 * b->n - 1);

	return sz ? sz : 4ULL * b->n;
}

/*
 * The warm-up, as nccl-tests 2.19.6 runs it: --warmup calls at every size
 * before any size is timed. NCCL's first calls at a new size are slow (it
 * connects algorithms and protocols when first used); a warm-up only just
 * before each size left 8, 32 and 512 B of the all-reduce 1.3-2.4x slower
 * in every process on the lent H200 pair (docs/bench.md).
 * 0, -2 NCCL error (msg), -3 hang (b->hang).
 */
static int nb_warm(struct nb *b, int coll, char *msg, size_t len)
{
	for (uint64_t bytes = b->minb; bytes <= b->maxb; bytes *= 2) {
		size_t total = (size_t)(nb_bytes(b, bytes) / 4);
		size_t count = coll == NCCLX_ALLREDUCE ? total : total / b->n;
		int nr, w;

		for (int i = 0; i < b->warmup; i++)
			if ((nr = nb_launch(b, coll, count))) {
				snprintf(msg, len, "%s: %s", nb_name(coll), nx.GetErrorString(nr));
				return -2;
			}
		if ((w = nb_wait(b, "the warm-up")))
			return w == -1 ? -3 : -2;
	}
	return 0;
}

/*
 * One size, after the warm-up: poison, one untimed call, time iters, check.
 * bytes: nccl-tests' size
 * (all-reduce: each rank's buffer; all-gather: the gathered buffer).
 * 0, -1 wrong data (msg), -2 NCCL error (msg), -3 hang (b->hang).
 */
static int nb_size(struct nb *b, int coll, uint64_t bytes, double *sec, char *msg, size_t len)
{
	size_t total = (size_t)(bytes / 4), count = coll == NCCLX_ALLREDUCE ? total : total / b->n;
	double t0, bt[NB_BATCHES_MAX];
	int nr, w;

	*sec = 0;
	for (int k = 0; k < b->n; k++) {
		rig_cur(&b->r, b->gs[k]);
		if (cu.cuMemsetD32Async(b->rbuf[k], 0xa5a5a5a5u, total, b->r.g[b->gs[k]].s[0]) != CUDA_SUCCESS) {
			snprintf(msg, len, "cuMemsetD32Async failed on GPU %d", b->gs[k]);
			return -2;
		}
	}
	if ((w = nb_wait(b, "the poisoning of the results")))
		return w == -1 ? -3 : -2;
	/* one untimed call first, as nccl-tests' BenchTime syncs before its
	 * timed batch: the GPUs were idle during the last size's host check */
	if ((nr = nb_launch(b, coll, count))) {
		snprintf(msg, len, "%s: %s", nb_name(coll), nx.GetErrorString(nr));
		return -2;
	}
	if ((w = nb_wait(b, "the call before the timed batches")))
		return w == -1 ? -3 : -2;
	/* b->batches batches of iters, each timed as nccl-tests times its one
	 * batch (host time from the first launch to the end of the last); the
	 * median batch is reported, so one disturbed batch does not decide */
	for (int k = 0; k < b->batches; k++) {
		t0 = now_s();
		for (int i = 0; i < b->iters; i++)
			if ((nr = nb_launch(b, coll, count))) {
				snprintf(msg, len, "%s: %s", nb_name(coll), nx.GetErrorString(nr));
				return -2;
			}
		if ((w = nb_wait(b, coll == NCCLX_ALLREDUCE ? "an all-reduce" : "an all-gather")))
			return w == -1 ? -3 : -2;
		bt[k] = (now_s() - t0) / b->iters;
	}
	qsort(bt, b->batches, sizeof(bt[0]), dcmp);
	*sec = bt[b->batches / 2];
	/* the check: every element of every rank's result */
	for (size_t e = 0; e < total; e++) {
		if (coll == NCCLX_ALLREDUCE) {
			float s = 0;

			for (int k = 0; k < b->n; k++)
				s += nb_elem(b->gs[k], e);
			b->want[e] = s;
		} else {
			b->want[e] = nb_elem(b->gs[e / count], e % count);
		}
	}
	for (int k = 0; k < b->n; k++) {
		rig_cur(&b->r, b->gs[k]);
		if (cu.cuMemcpyDtoH(b->got, b->rbuf[k], total * 4) != CUDA_SUCCESS) {
			snprintf(msg, len, "read back from GPU %d failed", b->gs[k]);
			return -2;
		}
		for (size_t e = 0; e < total; e++)
			if (memcmp(&b->got[e], &b->want[e], 4)) {
				uint32_t gb;

				memcpy(&gb, &b->got[e], 4);
				/* %.9g: a float off by one unit in the last place shows */
				snprintf(msg, len, "GPU %d's result: element %zu is %.9g, expected %.9g%s",
					 b->gs[k], e, (double)b->got[e], (double)b->want[e],
					 gb == 0xa5a5a5a5u ? " (0xa5a5a5a5, the poison: NCCL never wrote it)" : "");
				return -1;
			}
	}
	return 0;
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
	int rc = 0, opt, ndev, use[P2P_MAX_GPUS] = { 0 }, devs[P2P_MAX_GPUS], bad = 0;
	json_object *jo = NULL, *jr = NULL;

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
			break;
		}
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
	b->maxb &= ~(uint64_t)(4 * b->n - 1);	/* whole float32 elements on every rank */
	b->host = malloc(b->maxb);
	b->want = malloc(b->maxb);
	b->got = malloc(b->maxb);
	if (!b->host || !b->want || !b->got || !b->maxb) {
		fprintf(err, "bench --nccl: cannot allocate 3 x %" PRIu64 " bytes of host memory\n", b->maxb);
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
			cr = cu.cuMemAlloc(&b->sbuf[k], b->maxb);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemAlloc(&b->rbuf[k], b->maxb);
		for (size_t e = 0; e < b->maxb / 4; e++)
			b->host[e] = nb_elem(b->gs[k], e);
		/* on the stream NCCL uses, waited for: a pageable cuMemcpyHtoD may
		 * return before its DMA lands */
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemcpyHtoDAsync(b->sbuf[k], b->host, b->maxb, b->r.g[b->gs[k]].s[0]);
		if (cr == CUDA_SUCCESS && nb_wait(b, "the upload of the inputs"))
			cr = CUDA_ERROR_NOT_READY;
		if (cr != CUDA_SUCCESS) {
			fprintf(err, "bench --nccl: GPU %d: cannot allocate or fill 2 x %" PRIu64 " bytes: %s\n",
				b->gs[k], b->maxb, cu_errstr(cr));
			rc = P2P_EXIT_FAIL;
			goto rig;
		}
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
	if (b->json) {
		jo = json_object_new_object();
		jr = json_object_new_array();
	} else {
		fprintf(out, "# p2pctl bench --nccl: %d GPUs (", b->n);
		for (int k = 0; k < b->n; k++)
			fprintf(out, "%s%d", k ? "," : "", b->gs[k]);
		fprintf(out, "), %s, NCCL %d; float32, out of place, %d warm-up + %d x %d timed "
			"iterations per size (median batch)\n", nx.path, nx.version, b->warmup, b->batches,
			b->iters);
		fprintf(out, "# busbw as nccl-tests: all_reduce algbw*2(n-1)/n, all_gather algbw*(n-1)/n\n");
		fflush(out);
	}
	for (int c = 0; c < 2 && !bad; c++) {
		uint64_t sz = 0;
		int r;

		if (c == NCCLX_ALLGATHER && !nx.AllGather) {
			fprintf(err, "bench --nccl: %s has no ncclAllGather: all_gather skipped\n", nx.path);
			break;
		}
		if (!b->json) {
			fprintf(out, "#\n# %s\n# %12s %12s %10s %12s %12s  %s\n", cname[c], "size(B)", "count",
				"time(us)", "algbw(GB/s)", "busbw(GB/s)", "check");
			fflush(out);
		}
		r = nb_warm(b, c, emsg, sizeof(emsg));
		for (uint64_t bytes = b->minb; bytes <= b->maxb && !r; bytes *= 2) {
			double sec, algbw, busbw;

			sz = nb_bytes(b, bytes);
			r = nb_size(b, c, sz, &sec, emsg, sizeof(emsg));
			if (r)
				break;
			busbw = ncclx_busbw(c, (double)sz, sec, b->n, &algbw);
			if (b->json) {
				json_object *e = json_object_new_object();

				json_object_object_add(e, "collective", json_object_new_string(cname[c]));
				json_object_object_add(e, "bytes", json_object_new_int64((int64_t)sz));
				json_object_object_add(e, "time_us", json_object_new_double(sec * 1e6));
				json_object_object_add(e, "algbw_gbps", json_object_new_double(algbw));
				json_object_object_add(e, "busbw_gbps", json_object_new_double(busbw));
				json_object_object_add(e, "data_checked", json_object_new_boolean(1));
				json_object_array_add(jr, e);
			} else {
				fprintf(out, "  %12" PRIu64 " %12" PRIu64 " %10.2f %12.2f %12.2f  ok\n", sz,
					c == NCCLX_ALLREDUCE ? sz / 4 : sz / 4 / b->n, sec * 1e6, algbw, busbw);
				fflush(out);
			}
		}
		if (r) {
			char where[32] = "warm-up";

			if (sz)
				snprintf(where, sizeof(where), "%" PRIu64 " bytes", sz);
			fprintf(out, "bench --nccl: %s: %s %s: %s\n", r == -3 ? "HUNG" : "FAIL", cname[c], where,
				r == -3 ? b->hang : emsg);
			fflush(out);
			rc = P2P_EXIT_FAIL;
			if (r == -3 && bench_nccl_exit_on_hang)
				_exit(P2P_EXIT_FAIL);
			if (r == -3)
				goto done;	/* touch nothing: NCCL is stuck */
			bad = 1;
		}
	}
	for (int k = 0; k < b->n; k++)
		if (b->comm[k])
			nx.CommDestroy(b->comm[k]);
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
done:
	free(b->host);
	free(b->want);
	free(b->got);
	free(b);
	return rc;
}
