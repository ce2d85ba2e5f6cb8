// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify: for each GPU pair, enable peer access and move data both
 * ways through every path an application uses, checking every byte and the
 * guard bytes on both sides on the host:
 *   ce, sm-read, sm-write  copy engine (cuMemcpyPeerAsync), SM loads, SM stores
 *   flags, flags-poll      the custom all-reduce pattern: payload + flag with
 *                          release semantics, polled with acquire loads, in
 *                          the GPU's own memory or through peer loads
 *   graph                  ce, sm-write and sm-read captured in CUDA graphs
 *                          and replayed
 *   ipc                    a second process opens the peer's buffers with
 *                          cuIpcOpenMemHandle and copies with CE and SMs
 *   um-*                   managed memory through UVM's mappings and migrations
 *   concurrent             every directed pair at once for --seconds
 * Every test says which path it proved (peer mapping, advice held) or that
 * it could not prove it. Every wait has a deadline: a hung path is reported
 * with its pair and test, and p2pctl exits.
 *
 * This file parses the command line, sets the GPUs up and runs the tests
 * pair by pair; each family of tests is a verify_<family>.c, what they share
 * is verify_common.c (verify.h), the second processes of ipc, procs, car and
 * nccl are started and ended by verify_child.c, and verify_report.c prints
 * and judges.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

#include "cuda_cmds.h"
#include "ncclx.h"
#include "verify.h"

int verify_exit_on_hang = 1;

/*
 * The watchdog: a driver call that blocks in the kernel (a peer mapping
 * waiting on a lock there, as nvidia-uvm's devicesLock inversion on
 * 580.65.06 to 610.57.03 makes it; FIELD N10) never returns, and in D state no
 * signal ends the process; nor does a thread blocked in NCCL's host calls
 * (ncclGroupEnd, ncclCommDestroy). After rig_guard_limit(--timeout) the
 * watchdog says which call on which GPUs, prints the verdict of what
 * finished, points stdout and stderr at /dev/null (the blocked thread keeps
 * the process's files open: a reader of a pipe would wait for good) and
 * _exit()s: the process may stay in D state, but the user has the
 * diagnosis. SIGINT or SIGTERM does the same RIG_GUARD_SIGNAL_S after the
 * signal, with status 128 + the signal. The main thread is blocked in that
 * call (or, had it just returned, stops in rig_unguard), so what the
 * watchdog reads of the run does not change under it, and it holds no
 * stdio lock.
 */
static struct {
	pthread_t th;
	int on;
	volatile int stop;
	struct vstate *v;
	FILE *out, *err;
	int json;
	const struct pverdict *pvs;
	const int *npv, *nok, *nfail;
} wd;

static void *watchdog(void *p)
{
	double sig_at = 0;

	(void)p;
	while (!wd.stop) {
		const char *what, *where, *hint;
		int g, a, b, sig = dl_stop;
		double t;
		char diag[768], line[512];

		dl_nap(20000);
		if (sig && !sig_at)
			sig_at = now_s();
		if (!rig_guard_expired(sig && now_s() - sig_at > RIG_GUARD_SIGNAL_S ? RIG_GUARD_SIGNAL_S :
				       rig_guard_limit(wd.v->timeout), &what, &g, &a, &b, &t))
			continue;
		/* g < 0: NCCL (what names the GPUs); else a driver call */
		where = g < 0 ? "in NCCL" : "in the driver";
		hint = g < 0 ? rig_guard_hint() : RIG_BLOCKED_HINT;
		if (g < 0 && sig)
			snprintf(diag, sizeof(diag), "%s interrupted by SIG%s after %.3g s", what,
				 sigabbrev_np(sig), t);
		else if (g < 0)
			snprintf(diag, sizeof(diag), "%s has not returned for %.3g s: %s", what, t, hint);
		else if (sig)
			snprintf(diag, sizeof(diag), "GPU %d: %s %d->%d interrupted by SIG%s after %.3g s: %s",
				 g, what, a, b, sigabbrev_np(sig), t, hint);
		else
			snprintf(diag, sizeof(diag), "GPU %d: %s %d->%d has not returned for %.3g s: %s", g,
				 what, a, b, t, hint);
		if (wd.json) {
			fprintf(wd.out, "{\n  \"command\": \"verify\",\n  \"result\": \"%s\",\n  \"%s\": \"%s\"\n}\n",
				sig ? "INTERRUPTED" : "HUNG", sig ? "interrupted" : "hung", diag);
		} else {
			fprintf(wd.out, "  %s\n", diag);
			if (*wd.npv)
				fprintf(wd.out, "verdict:\n");
			for (int q = 0; q < *wd.npv; q++) {
				if (wd.pvs[q].reached) {
					pv_line(&wd.pvs[q], wd.v, line, sizeof(line));
					fprintf(wd.out, "  %s\n", line);
				} else {
					fprintf(wd.out, "  %d<->%d: not finished: %s %s\n", wd.pvs[q].a,
						wd.pvs[q].b, sig ? "interrupted" : "blocked", where);
				}
			}
			if (sig)
				fprintf(wd.out, "verify: INTERRUPTED by SIG%s %s, a partial verdict (%d OK, %d FAIL "
					"before it)\n", sigabbrev_np(sig), where, *wd.nok, *wd.nfail);
			else
				fprintf(wd.out, "verify: HUNG %s, a partial verdict (%d OK, %d FAIL before it)\n",
					where, *wd.nok, *wd.nfail);
		}
		fprintf(wd.err, "verify: %s\n", diag);
		fflush(wd.err);
		rig_exit(wd.out, sig);
	}
	return NULL;
}

static unsigned parse_tests(const char *s, char *msg, size_t len)
{
	unsigned m = 0;
	char buf[256], *save = NULL;

	if (!s || !strcmp(s, "all"))
		return (1u << V_COUNT) - 1;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int k, found = 0;

		for (k = 0; k < V_COUNT; k++)
			if (!strcmp(w, vnames[k])) {
				m |= 1u << k;
				found = 1;
			}
		if (!strcmp(w, "flags")) {
			m |= 1u << V_FLAGS_POLL;
		} else if (!strcmp(w, "um")) {
			m |= ((1u << V_UM_COUNT) - 1) << V_UM_READ;
			found = 1;
		} else if (!strcmp(w, "sm")) {
			m |= 1u << V_SM_READ | 1u << V_SM_WRITE;
			found = 1;
		}
		if (!found) {
			snprintf(msg, len, "unknown test '%s' in --tests", w);
			return 0;
		}
	}
	return m;
}

/* What --loopback cannot run: each needs a second GPU. */
#define V_TWO_GPUS (1u << V_PATH | 1u << V_VRAM | ((1u << V_UM_COUNT) - 1) << V_UM_READ | \
		    1u << V_CONCURRENT)

/*
 * --loopback with tests named that need two GPUs: a usage error naming
 * them, so that what was asked for is what runs (a run of none of them
 * would otherwise end "OK").  "all" is the loopback set.
 */
static int loopback_refuses(unsigned int tests, char *msg, size_t len)
{
	unsigned int two = tests & V_TWO_GPUS;
	size_t n = 0;
	int k, nr = 0;

	if (!two)
		return 0;
	n = snprintf(msg, len, "--loopback does not run ");
	for (k = 0; k < V_COUNT; k++)
		if (two & (1u << k) && n < len)
			n += snprintf(msg + n, len - n, "%s%s", nr++ ? ", " : "", vnames[k]);
	if (n < len)
		snprintf(msg + n, len - n, ": %s two GPUs", nr > 1 ? "they need" : "it needs");
	return 1;
}

static void vusage(FILE *f)
{
	fprintf(f,
		"Usage: p2pctl verify [--size BYTES] [--pairs I-J,...] [--tests LIST] [--seed N]\n"
		"                     [--seconds S] [--timeout S] [--offset BYTES|auto] [--loopback]\n"
		"                     [--no-managed] [--quick] [--vram-budget S] [--json]\n"
		"  --size BYTES     bytes per copy (default 64M = 64 MiB; any size >= 1)\n"
		"  --pairs LIST     only these GPU pairs (default: every pair)\n"
		"  --tests LIST     only these tests (default all): path, ce, sm-read, sm-write,\n"
		"                   sm, flags, flags-poll, graph, ipc, vram, vmm, car, procs,\n"
		"                   um-read, um-write, um-prefetch, um-fault, um, concurrent,\n"
		"                   nccl (ce brings path: it judges ce's copies)\n"
		"  --seed N         pattern seed (default: random, printed)\n"
		"  --seconds S      how long the concurrent test runs (default 3)\n"
		"  --timeout S      deadline of every wait, peer-mapping call and NCCL init;\n"
		"                   a later one is a hang (default 10; a slow first NCCL\n"
		"                   init may need 30); peer-mapping calls, ncclGroupEnd and\n"
		"                   ncclCommDestroy get at least 10\n"
		"  --offset BYTES   allocate this much on each GPU before the test buffers\n"
		"                   (auto: about half of free; default 0)\n"
		"  --loopback       test each GPU against itself (one GPU is enough; proves no\n"
		"                   P2P path, checks the tool, the kernels and the GPU); path,\n"
		"                   vram, um-* and concurrent need two GPUs and are refused\n"
		"  --no-managed     skip the managed-memory (cuMemAllocManaged) tests\n"
		"  --quick          vram samples three places of free memory (bottom, middle,\n"
		"                   top) instead of sweeping all of it\n"
		"  --vram-budget S  time one vram sweep (one direction) may take (default 30);\n"
		"                   at its end vram says how much it tested: WARN, not OK\n"
		"  -j, --json       JSON on stdout\n"
		"  --help           this text\n"
		"tests, both ways for each pair: path (the same copy timed with peer access\n"
		"  off and on, against the link's line rate); ce, sm-read, sm-write;\n"
		"  flags, flags-poll (payload + release flag, polled with acquire loads);\n"
		"  graph (ce, sm-write and sm-read captured in CUDA graphs, replayed);\n"
		"  ipc (a second process opens the buffers with cuIpcOpenMemHandle);\n"
		"  vram (ce, sm-read, sm-write with buffers moved over all free memory);\n"
		"  vmm (ce, sm-write, sm-read between cuMemCreate/cuMemMap buffers that\n"
		"  cuMemSetAccess grants the peer); car (a one-kernel custom all-reduce\n"
		"  with a second process: payload, flag, flag wait, peer read; launched and\n"
		"  replayed from a CUDA graph); procs (4 processes at once mapping the\n"
		"  peer's buffers, copying and exiting, 3 rounds);\n"
		"  um-read, um-write (a GPU using the other's managed pages through its\n"
		"  mapping), um-prefetch (migration between the GPUs), um-fault (demand\n"
		"  paging); then concurrent (every directed pair at once) and nccl\n"
		"  (all-reduces through libnccl.so.2 when it loads, 8 B to 64 MiB, in place\n"
		"  and out of place on one communicator, in one process, then with one\n"
		"  process per GPU as PyTorch and vLLM run it)\n"
		"output: a line per test as it ends, a test x direction grid and a verdict\n"
		"  per pair; SIGINT or SIGTERM prints a partial verdict\n"
		"exit status: 0 all OK (or PARTIAL), 1 a test failed or hung, or none ran\n"
		"  (all skipped), 2 usage, 3 no driver or\n"
		"  fewer than 2 GPUs (without --loopback), 128 + N after signal N\n");
}

/* Test buffers of every used GPU, above a pad allocation. 0 or an exit code. */
static int alloc_buffers(struct vstate *v, const int *use, char *err, size_t len)
{
	struct rig *r = &v->r;

	for (int g = 0; g < r->n; g++) {
		struct gpu *gp = &r->g[g];
		size_t fr = 0, tot = 0;
		uint64_t pad = v->pad_req;
		CUresult cr;

		if (!use[g])
			continue;
		cr = rig_cur(r, g);
		if (v->pad_auto) {
			uint64_t need = 3 * (uint64_t)v->total + (256ULL << 20);

			pad = 0;
			if (cu.cuMemGetInfo && cu.cuMemGetInfo(&fr, &tot) == CUDA_SUCCESS && fr > need)
				pad = ((fr - need) / 2) & ~((2ULL << 20) - 1);
		}
		if (cr == CUDA_SUCCESS && pad) {
			cr = cu.cuMemAlloc(&v->pad[g], pad);
			if (cr != CUDA_SUCCESS) {
				snprintf(err, len, "GPU %d: cannot allocate the %" PRIu64 "-byte --offset pad: %s",
					 g, pad, cu_errstr(cr));
				return P2P_EXIT_FAIL;
			}
			v->padbytes[g] = pad;
		}
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemAlloc(&gp->src, v->total);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemAlloc(&gp->dst, v->total);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemAlloc(&v->chk[g], v->total);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemAlloc(&v->aux[g], AUX_BYTES);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemsetD32Async(v->aux[g], 0, AUX_BYTES / 4, gp->s[1]);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuStreamSynchronize(gp->s[1]);	/* nothing ran yet: cannot hang */
		if (cr != CUDA_SUCCESS) {
			snprintf(err, len, "GPU %d: cannot allocate 3 x %zu bytes of test buffers: %s", g,
				 v->total, cu_errstr(cr));
			return P2P_EXIT_FAIL;
		}
	}
	r->bufsize = v->total;
	return 0;
}

static void free_buffers(struct vstate *v)
{
	for (int g = 0; g < v->r.n; g++) {
		if (!v->chk[g] && !v->aux[g] && !v->pad[g])
			continue;
		rig_cur(&v->r, g);
		if (v->chk[g])
			cu.cuMemFree(v->chk[g]);
		if (v->aux[g])
			cu.cuMemFree(v->aux[g]);
		if (v->pad[g])
			cu.cuMemFree(v->pad[g]);
	}
}

static uint64_t random_seed(void)
{
	uint64_t s = 0;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != (ssize_t)sizeof(s))
		s = (uint64_t)(now_s() * 1e9) ^ ((uint64_t)getpid() << 32);
	return s;
}

/*
 * With peer access on one way only: can test m from s to d run? ce,
 * sm-write and flags use s's mapping of d's memory, sm-read d's mapping of
 * s's; the others use both (path turns both off and on again).
 */
static int one_way_runs(const struct rig *r, int m, int s, int d)
{
	if (m == V_CE || m == V_SM_WRITE || m == V_FLAGS)
		return r->peer_on[s][d];
	if (m == V_SM_READ)
		return r->peer_on[d][s];
	return r->peer_on[s][d] && r->peer_on[d][s];
}

/* Why an enable failed, by its error: what the field found behind it. */
static const char *enable_hint(CUresult cr)
{
	if (cr == CUDA_ERROR_MAP_FAILED)
		return "the driver could not map the peer's BAR1: static BAR1 missing or misaligned on one "
		       "GPU (a 5090 whose BAR1 starts 4 MiB in: \"not aligned\" in the kernel log), or a "
		       "mixed pair the driver falls back to the mailbox for; check `p2pctl doctor` (static "
		       "BAR1 on both GPUs)";
	if (cr == CUDA_ERROR_PEER_ACCESS_UNSUPPORTED)
		return "libcuda itself refuses the pair (mixed generations such as a 3080 with a 4090, "
		       "or a 4090 with an RTX 6000 Ada), whatever the kernel driver allows";
	return NULL;
}

/* Run the tests of (a, b), both ways; returns how many tests were added. */
static int pair_tests(struct vstate *v, int a, int b, struct vtest *tests)
{
	int nt = 0;

	for (int m = 0; m < V_DEV_COUNT && !vhalt(v); m++) {
		if (!(v->tests & (1u << m)))
			continue;
		for (int d = 0; d < (a == b ? 1 : 2) && !vhalt(v); d++) {
			struct vtest *t = &tests[nt++];
			int stop_before = dl_stop;

			if ((m == V_PATH || m == V_VRAM) && a == b) {
				nt--;
				break;
			}
			memset(t, 0, sizeof(*t));
			t->src = d ? b : a;
			t->dst = d ? a : b;
			t->method = m;
			if (vlost_skip(v, t, (const int[]){ a, b }, 2)) {
				;	/* both GPUs' contexts take part in every test of the pair */
			} else if (a != b && !one_way_runs(&v->r, m, t->src, t->dst)) {
				int x = v->r.peer_on[a][b] ? b : a, y = x == a ? b : a;

				t->ok = 1;
				t->skipped = 1;
				snprintf(t->error, sizeof(t->error), "not available (%d->%d could not be enabled)",
					 x, y);
			}
			else if (m == V_PATH)
				run_path(v, t);
			else if (m == V_FLAGS || m == V_FLAGS_POLL)
				run_flags(v, t);
			else if (m == V_GRAPH)
				run_graph(v, t);
			else if (m == V_IPC)
				run_ipc(v, t);
			else if (m == V_VRAM)
				run_vram(v, t);
			else if (m == V_VMM)
				run_vmm(v, t);
			else if (m == V_CAR)
				run_car(v, t);
			else if (m == V_PROCS)
				run_procs(v, t);
			else
				run_copy(v, t);
			vdone(v, t, stop_before);
		}
	}
	return nt;
}

int verify_main(int argc, char **argv, FILE *out, FILE *err)
{
	static const struct option lo[] = {
		{ "size", required_argument, NULL, 's' },
		{ "pairs", required_argument, NULL, 'p' },
		{ "tests", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'S' },
		{ "seconds", required_argument, NULL, 'D' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "offset", required_argument, NULL, 'O' },
		{ "loopback", no_argument, NULL, 'L' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-managed", no_argument, NULL, 'M' },
		{ "quick", no_argument, NULL, 'Q' },
		{ "vram-budget", required_argument, NULL, 'B' },
		/* internal: p2pctl's own second process for the ipc test */
		{ "ipc-child", required_argument, NULL, 'I' },
		/* internal: rank 1 of the car test */
		{ "car-child", required_argument, NULL, 'C' },
		/* internal: a rank of the nccl test's one-process-per-GPU run */
		{ "nccl-child", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static int sel[P2P_MAX_GPUS][P2P_MAX_GPUS];
	static struct vtest tests[2 * V_COUNT * 2], ctests[3 * P2P_MAX_GPUS * P2P_MAX_GPUS];
	static struct pverdict pvs[P2P_MAX_GPUS * P2P_MAX_GPUS];
	int npv = 0, pvjson[P2P_MAX_GPUS * P2P_MAX_GPUS];
	char nccl_verdict[1024] = "";
	struct vstate *v;
	const char *pairs = NULL, *tlist = NULL;
	char emsg[512], *end;
	int json = 0, rc = 0, opt, n, use[P2P_MAX_GPUS] = { 0 }, nok = 0, nfail = 0, nskip = 0;
	int nunproven = 0, npartial = 0, seeded = 0, nct = 0, nccl_ran = 0;
	const char *result;
	json_object *jpairs = NULL;
	int sig_on = 0;

	v = calloc(1, sizeof(*v));
	if (!v)
		return P2P_EXIT_FAIL;
	v->size = 64ULL << 20;
	v->timeout = 10;
	v->seconds = 3;
	v->vram_budget = 30;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "jh", lo, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (parse_size(optarg, &v->size) || v->size > (1ULL << 40)) {
				fprintf(err, "verify: bad --size '%s'\n", optarg);
				rc = P2P_EXIT_USAGE;
			}
			break;
		case 'p': pairs = optarg; break;
		case 't':
			tlist = optarg;
			if (!*tlist) {
				fprintf(err, "verify: --tests: empty list (name tests, or leave "
					"--tests out for all)\n");
				rc = P2P_EXIT_USAGE;
			}
			break;
		case 'S':
			errno = 0;
			v->seed0 = strtoull(optarg, &end, 0);
			if (errno || !*optarg || *end) {
				fprintf(err, "verify: bad --seed '%s'\n", optarg);
				rc = P2P_EXIT_USAGE;
			}
			seeded = 1;
			break;
		case 'D':
		case 'T':
		case 'B': {
			double x = strtod(optarg, &end);

			if (!*optarg || *end || !(x > 0) || x > 86400) {
				fprintf(err, "verify: bad --%s '%s'\n", opt == 'D' ? "seconds" :
					opt == 'T' ? "timeout" : "vram-budget", optarg);
				rc = P2P_EXIT_USAGE;
			}
			*(opt == 'D' ? &v->seconds : opt == 'T' ? &v->timeout : &v->vram_budget) = x;
			break;
		}
		case 'Q': v->vram_quick = 1; break;
		case 'O':
			if (!strcmp(optarg, "auto")) {
				v->pad_auto = 1;
			} else if (!strcmp(optarg, "0")) {
				v->pad_auto = 0;
				v->pad_req = 0;
			} else if (parse_size(optarg, &v->pad_req)) {
				fprintf(err, "verify: bad --offset '%s'\n", optarg);
				rc = P2P_EXIT_USAGE;
			} else {
				v->pad_auto = 0;
			}
			break;
		case 'L': v->loopback = 1; break;
		case 'I':
			/* internal: the second process of the ipc test */
			rc = ipc_child(optarg, out);
			goto done;
		case 'C':
			/* internal: rank 1 of the car test */
			rc = car_child(optarg, out);
			goto done;
		case 'R':
			/* internal: a rank of the nccl test's per-process run */
			rc = nccl_child(optarg, out);
			goto done;
		case 'j': json = 1; break;
		case 'M': v->no_managed = 1; break;
		case 'h': vusage(out); goto done;
		default:
			fprintf(err, "verify: bad option '%s'\n", argv[optind - 1]);
			rc = P2P_EXIT_USAGE;
		}
	}
	if (!rc && optind < argc) {
		fprintf(err, "verify: unexpected argument '%s'\n", argv[optind]);
		rc = P2P_EXIT_USAGE;
	}
	if (!rc && parse_pairs(pairs, sel, emsg, sizeof(emsg))) {
		fprintf(err, "verify: %s\n", emsg);
		rc = P2P_EXIT_USAGE;
	}
	if (!rc && !(v->tests = parse_tests(tlist, emsg, sizeof(emsg)))) {
		fprintf(err, "verify: %s\n", emsg);
		rc = P2P_EXIT_USAGE;
	}
	if (!rc && v->loopback && tlist && strcmp(tlist, "all") &&
	    loopback_refuses(v->tests, emsg, sizeof(emsg))) {
		fprintf(err, "verify: %s\n", emsg);
		rc = P2P_EXIT_USAGE;
	}
	/* A copy-engine copy is told from a staged one only by timing it
	 * against the staged path: ce brings the path test with it, so copies
	 * at staging speed fail however the tests are chosen. */
	if (v->tests & (1u << V_CE))
		v->tests |= 1u << V_PATH;
	if (rc) {
		vusage(err);
		goto done;
	}
	if (!seeded)
		v->seed0 = random_seed();
	v->seed = v->seed0;
	v->vseed = v->seed0 ^ 0x8000000000000000ULL;
	v->sm.threads = 512;
	v->sm.blocks_per_sm = 4;
	sig_on = !dl_catch();
	rc = cu_open(emsg, sizeof(emsg));
	if (rc) {
		fprintf(err, "verify: %s\n", emsg);
		goto done;
	}
	rc = rig_count(&n, emsg, sizeof(emsg));
	if (rc) {
		fprintf(err, "verify: %s\n", emsg);
		goto close;
	}
	if (n < 2 && !v->loopback) {
		fprintf(err, "verify: needs at least two GPUs (%d found); --loopback tests one "
			"against itself\n", n);
		rc = P2P_EXIT_NODEV;
		goto close;
	}
	for (int i = 0; i < P2P_MAX_GPUS; i++)
		for (int j = 0; j < P2P_MAX_GPUS; j++) {
			if (!sel[i][j])
				continue;
			if (i >= n || j >= n) {
				if (pairs) {
					fprintf(err, "verify: no GPU %d (%d found)\n", i >= n ? i : j, n);
					rc = P2P_EXIT_NODEV;
					goto close;
				}
				continue;
			}
			use[i] = use[j] = 1;
		}
	if (v->loopback && !pairs)
		for (int i = 0; i < n; i++)
			use[i] = 1;
	v->total = 2 * GUARD + ((v->size + 15) & ~(uint64_t)15);
	v->want = malloc(v->total);
	v->got = malloc(v->total);
	v->img = malloc(v->total);
	if (!v->want || !v->got || !v->img) {
		fprintf(err, "verify: cannot allocate 3 x %zu bytes of host memory\n", v->total);
		rc = P2P_EXIT_FAIL;
		goto close;
	}
	rc = rig_open(&v->r, use, 0, 0, emsg, sizeof(emsg));
	if (!rc)
		rc = alloc_buffers(v, use, emsg, sizeof(emsg));
	if (rc) {
		fprintf(err, "verify: %s\n", emsg);
		goto rig;
	}
	if (json) {
		jpairs = json_object_new_array();
	} else {
		for (int i = 0; i < n; i++)
			if (use[i])
				fprintf(out, "GPU %d: %s (%s)%s\n", i, v->r.g[i].name, v->r.g[i].busid,
					v->padbytes[i] ? "" : "; test buffers not offset");
		fprintf(out, "seed 0x%016" PRIx64 " (--seed to repeat), timeout %.3g s", v->seed0,
			v->timeout);
		for (int i = 0; i < n; i++)
			if (use[i] && v->padbytes[i]) {
				fprintf(out, ", buffers above a %" PRIu64 " MiB allocation on each GPU",
					v->padbytes[i] >> 20);
				break;
			}
		fprintf(out, "\n");
		fflush(out);
		v->out = out;
	}
	wd.v = v;
	wd.out = out;
	wd.err = err;
	wd.json = json;
	wd.pvs = pvs;
	wd.npv = &npv;
	wd.nok = &nok;
	wd.nfail = &nfail;
	wd.stop = 0;
	wd.on = !pthread_create(&wd.th, NULL, watchdog, NULL);
	for (int a = 0; a < n && !vhalt(v); a++)
		for (int b = v->loopback ? a : a + 1; b < n && !vhalt(v); b++) {
			struct umpair um = { .status = UM_SKIPPED };
			int nt = 0, peer_ok, pfail = 0, one_way = 0;
			char perr[512] = "";
			struct pverdict *pv = NULL;

			if (v->loopback ? a != b || !use[a] : !sel[a][b])
				continue;
			peer_ok = a == b || (v->r.can_peer[a][b] && v->r.can_peer[b][a]);
			if (a != b) {
				pv = &pvs[npv];
				memset(pv, 0, sizeof(*pv));
				pv->a = a;
				pv->b = b;
				link_rate(v->r.g[a].busid, v->r.g[b].busid, &v->link);
				pv->link = v->link;
				pvjson[npv++] = json ? (int)json_object_array_length(jpairs) : -1;
			}
			if (!peer_ok) {
				snprintf(perr, sizeof(perr),
					 "peer access not supported (cuDeviceCanAccessPeer %d->%d = %d, %d->%d = %d)",
					 a, b, v->r.can_peer[a][b], b, a, v->r.can_peer[b][a]);
			} else if (a != b) {
				CUresult ab = rig_peer(&v->r, a, b, 1), ba = rig_peer(&v->r, b, a, 1);

				if (ab != CUDA_SUCCESS || ba != CUDA_SUCCESS) {
					int x = ab != CUDA_SUCCESS ? a : b, y = ab != CUDA_SUCCESS ? b : a;
					CUresult cr = ab != CUDA_SUCCESS ? ab : ba;
					const char *hint = enable_hint(cr);

					peer_ok = 0;
					one_way = ab == CUDA_SUCCESS || ba == CUDA_SUCCESS;
					snprintf(perr, sizeof(perr), "cuCtxEnablePeerAccess %d->%d (GPU %d mapping GPU "
						 "%d's memory): %s%s%d->%d %s%s%.300s", x, y, x, y, cu_errstr(cr), "; ",
						 y, x, ab != CUDA_SUCCESS && ba != CUDA_SUCCESS ? "failed too" :
						 "was enabled: the tests that need only it run", hint ? "\n        " : "",
						 hint ? hint : "");
					if (pv)
						snprintf(pv->noway, sizeof(pv->noway), "%s%d->%d",
							 ab != CUDA_SUCCESS && ba != CUDA_SUCCESS ? "both ways, " : "",
							 x, y);
				}
			}
			if (!json) {
				if (a == b)
					fprintf(out, "GPU %d loopback (no P2P: a check of the tool and the GPU)\n", a);
				else
					fprintf(out, "pair %d-%d: can-access-peer %d->%d %s, %d->%d %s\n", a, b,
						a, b, v->r.can_peer[a][b] ? "yes" : "no", b, a,
						v->r.can_peer[b][a] ? "yes" : "no");
				if (pv && pv->link.kind != LINK_UNKNOWN)
					fprintf(out, "  link: %s, %.1f GB/s per direction (%s)%s%s\n", pv->link.label,
						pv->link.gbps, pv->link.from, pv->link.nvml[0] ? "; NVLink: " : "",
						pv->link.nvml);
				else if (pv)
					fprintf(out, "  link: line rate unknown: %s%s%s\n", pv->link.why,
						pv->link.nvml[0] ? "; NVLink: " : "", pv->link.nvml);
				if (perr[0])
					fprintf(out, "  FAIL  %s\n", perr);
				fflush(out);
			}
			if (peer_ok || one_way) {
				nt = pair_tests(v, a, b, tests);
				for (int k = 0; k < nt; k++) {
					pfail += !tests[k].ok;
					nok += tests[k].ok && !tests[k].skipped;
					nskip += tests[k].skipped;
					nunproven += tests[k].ok && !tests[k].skipped && !tests[k].proven;
					npartial += tests[k].ok && !tests[k].skipped && tests[k].partial;
				}
				if (one_way) {
					/* the managed tests map both ways */
					snprintf(um.reason, sizeof(um.reason), "peer access is enabled one way only");
					if (!v->no_managed)
						nskip += um.nskip = V_UM_COUNT * 2;
					pfail++;	/* the enable that failed */
				} else if (!vhalt(v)) {
					int from = nt;
					struct vtest lt = { .src = a, .dst = b };

					if (vlost_skip(v, &lt, (const int[]){ a, b }, 2) &&
					    !v->no_managed && (v->tests & (((1u << V_UM_COUNT) - 1) << V_UM_READ))) {
						snprintf(um.reason, sizeof(um.reason), "%.400s", lt.error);
						um.nskip = V_UM_COUNT * 2;
					} else {
						um_pair(v, a, b, tests, &nt, &um);
					}
					pfail += um.nfail;
					nok += um.nok;
					nskip += um.nskip;
					for (int k = from; k < nt; k++)
						nunproven += tests[k].ok && !tests[k].skipped &&
							     !tests[k].proven;
				}
			} else {
				snprintf(um.reason, sizeof(um.reason), "peer access is not enabled");
				if (!v->no_managed)
					nskip += um.nskip = V_UM_COUNT * 2;
				pfail++;
			}
			nfail += pfail;
			if (pv) {
				pv->peer_ok = peer_ok;
				pv->reached = 1;
				for (int k = 0; k < nt; k++)
					pv_add(pv, &tests[k]);
				if ((peer_ok || one_way) && um.status == UM_SKIPPED && um.nskip)
					for (int m = V_UM_READ; m < V_CONCURRENT; m++)
						for (int d = 0; d < 2; d++)
							snprintf(pv->cell[m][d], sizeof(pv->cell[m][d]), "SKIP");
				pv_path(pv, v);
			}
			if (json) {
				pair_json(v, jpairs, a, b, pfail, perr, tests, nt, &um);
				continue;
			}
			if (!v->hung && a != b && !(dl_stop && um.status == UM_SKIPPED && !um.reason[0]))
				um_print(out, v, a, b, &um);
			if (pv && pv->link.kind == LINK_PCIE)
				link_print_now(out, v->r.g[a].busid, v->r.g[b].busid, &pv->link);
		}
	/* An interrupted run: the pairs it did not reach have a verdict too. */
	for (int a = 0; a < n && dl_stop && !v->loopback; a++)
		for (int b = a + 1; b < n; b++) {
			int q;

			for (q = 0; q < npv && (pvs[q].a != a || pvs[q].b != b); q++)
				;
			if (!sel[a][b] || q < npv)
				continue;
			memset(&pvs[npv], 0, sizeof(pvs[npv]));
			pvs[npv].a = a;
			pvs[npv].b = b;
			pvjson[npv++] = -1;
		}
	if (!vhalt(v) && (v->tests & (1u << V_CONCURRENT)) && !v->loopback) {
		static int csel[P2P_MAX_GPUS][P2P_MAX_GPUS];
		int nlost = 0;

		/* Not in a context a sticky error killed: the pairs of such a GPU
		 * are not run (and say why); the others still run at once. */
		for (int a = 0; a < n; a++)
			for (int b = 0; b < n; b++) {
				csel[a][b] = sel[a][b] && !v->lost[a][0] && !v->lost[b][0];
				if (a == b || csel[a][b] || !sel[a][b] ||
				    !v->r.peer_on[a][b] || !v->r.peer_on[b][a] ||
				    nlost >= (int)(sizeof(ctests) / sizeof(ctests[0])) / 2)
					continue;
				memset(&ctests[nct], 0, sizeof(ctests[nct]));
				ctests[nct].method = V_CONCURRENT;
				ctests[nct].src = a;
				ctests[nct].dst = b;
				vlost_skip(v, &ctests[nct++], (const int[]){ a, b }, 2);
				nlost++;
			}
		run_concurrent(v, csel, ctests, &nct, (int)(sizeof(ctests) / sizeof(ctests[0])));
		for (int k = 0; k < nct; k++)
			vdone(v, &ctests[k], 1);
		for (int k = 0; k < nct; k++) {
			nfail += !ctests[k].ok;
			nok += ctests[k].ok && !ctests[k].skipped;
			nskip += ctests[k].skipped;
			for (int q = 0; q < npv; q++)
				if ((pvs[q].a == ctests[k].src && pvs[q].b == ctests[k].dst) ||
				    (pvs[q].b == ctests[k].src && pvs[q].a == ctests[k].dst))
					pv_add(&pvs[q], &ctests[k]);
		}
	}
	if (!vhalt(v) && (v->tests & (1u << V_NCCL))) {
		int first = nct, sets[P2P_MAX_GPUS * P2P_MAX_GPUS + 1][P2P_MAX_GPUS], setn[P2P_MAX_GPUS * P2P_MAX_GPUS + 1];
		int ns = 0, all = 0, nobad;
		char why[512];

		for (int a = 0; a < n; a++)
			for (int b = v->loopback ? a : a + 1; b < n; b++)
				if (v->loopback ? a == b && use[a] : sel[a][b] && v->r.peer_on[a][b] &&
				    v->r.peer_on[b][a]) {
					sets[ns][0] = a;
					sets[ns][1] = b;
					setn[ns++] = a == b ? 1 : 2;
				}
		for (int g = 0; g < n && !v->loopback; g++)
			if (use[g])
				sets[ns][all++] = g;
		if (all > 2)
			setn[ns++] = all;
		nccl_ran = 1;
		if (ns)
			nccl_debug_begin(v);
		nobad = ns ? nccl_open(why, sizeof(why)) : 0;
		if (ns && !json) {
			/* out before NCCL's first call: a hang there must not lose it */
			fprintf(out, "nccl: all-reduce with %s\n", nobad ? "libnccl.so.2" : nx.path);
			fflush(out);
		}
		if (nobad) {
			struct vtest *t = &ctests[nct++];

			memset(t, 0, sizeof(*t));
			t->method = V_NCCL;
			t->skipped = 1;
			t->ok = 1;
			snprintf(t->label, sizeof(t->label), "-");
			snprintf(t->error, sizeof(t->error), "%s", why);
			vdone(v, t, 1);
			ns = 0;
		}
		for (int k = 0; k < ns && !vhalt(v); k++) {
			struct vtest *t = &ctests[nct++];
			char procs[300];
			size_t l = 0;

			memset(t, 0, sizeof(*t));
			for (int g = 0; g < setn[k]; g++)
				l += (size_t)snprintf(t->label + l, sizeof(t->label) - l, "%s%d", g ? "," : "",
						      sets[k][g]);
			long off = nccl_log_size(v);

			t->method = V_NCCL;
			t->engine = setn[k];
			if (!vlost_skip(v, t, sets[k], setn[k]))
				run_nccl(v, t, sets[k], setn[k]);
			if (t->ok && !t->skipped)
				nccl_transport(v, t, sets[k], setn[k], v->nccl_log, off);
			vdone(v, t, 0);
			if (setn[k] < 2 || vhalt(v))
				continue;
			/* the same, one process per GPU, as PyTorch and vLLM run it */
			{
				char lb[sizeof(t->label)];

				snprintf(lb, sizeof(lb), "%.56s/procs", t->label);
				t = &ctests[nct++];
				memset(t, 0, sizeof(*t));
				snprintf(t->label, sizeof(t->label), "%s", lb);
			}
			/* the ranks' logs, gathered into log.procs by run_nccl_procs */
			snprintf(procs, sizeof(procs), "%s.procs", v->nccl_log);
			run_nccl_procs(v, t, sets[k], setn[k]);
			if (t->ok && !t->skipped)
				nccl_transport(v, t, sets[k], setn[k], procs, 0);
			if (v->nccl_log[0])
				unlink(procs);
			vdone(v, t, 0);
		}
		nccl_debug_end(v);
		for (int k = first; k < nct; k++) {
			const struct vtest *t = &ctests[k];
			size_t l = strlen(nccl_verdict);

			nfail += !t->ok;
			nok += t->ok && !t->skipped;
			nskip += t->skipped;
			nunproven += t->ok && !t->skipped;
			if (t->skipped || !t->ok)
				snprintf(nccl_verdict + l, sizeof(nccl_verdict) - l, "%snccl %s: %s: %.400s",
					 l ? "; " : "", t->label, t->skipped ? "SKIPPED" : "FAIL", t->error);
		}
	}
	if (dl_stop && !nccl_verdict[0] && (v->tests & (1u << V_NCCL)) && !nccl_ran)
		snprintf(nccl_verdict, sizeof(nccl_verdict), "nccl: not run (interrupted by %s)",
			 strsignal(dl_stop));
	/* a run in which every test was skipped proved nothing: not OK */
	result = v->hung ? "HUNG" : dl_stop ? "INTERRUPTED" : nfail ? "FAIL" :
		 !nok ? "NO TEST RAN" : npartial ? "PARTIAL" : "OK";
	if (json) {
		json_object *o = json_object_new_object(), *jc = json_object_new_array();
		char seed[32];

		for (int k = 0; k < nct; k++)
			json_object_array_add(jc, vtest_json(&ctests[k]));
		snprintf(seed, sizeof(seed), "0x%016" PRIx64, v->seed0);
		json_object_object_add(o, "command", json_object_new_string("verify"));
		json_object_object_add(o, "format", json_object_new_int(2));
		json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)v->size));
		json_object_object_add(o, "seed", json_object_new_string(seed));
		json_object_object_add(o, "timeout_s", json_object_new_double(v->timeout));
		json_object_object_add(o, "loopback", json_object_new_boolean(v->loopback));
		json_object_object_add(o, "driver_version", json_object_new_int(v->r.driver_version));
		json_object_object_add(o, "devices", rig_devices_json(&v->r));
		json_object_object_add(o, "pairs", jpairs);
		json_object_object_add(o, "concurrent", jc);
		{
			json_object *jv = json_object_new_array();
			char line[512];

			for (int q = 0; q < npv; q++) {
				pv_line(&pvs[q], v, line, sizeof(line));
				json_object_array_add(jv, json_object_new_string(line));
				if (pvjson[q] >= 0) {
					json_object *jp = json_object_array_get_idx(jpairs, pvjson[q]);

					json_object_object_add(jp, "grid", pv_grid_json(&pvs[q], v));
					json_object_object_add(jp, "verdict", json_object_new_string(line));
					json_object_object_add(jp, "tests_not_run", pv_keymiss_json(&pvs[q]));
					json_object_object_add(jp, "path_proven", json_object_new_boolean(
						pvs[q].measured && !pvs[q].nfail && pvs[q].peer_ok));
					if (pvs[q].link.kind != LINK_UNKNOWN) {
						json_object *jl = json_object_new_object();

						json_object_object_add(jl, "link", json_object_new_string(
							pvs[q].link.label));
						json_object_object_add(jl, "gbps", json_object_new_double(
							(double)(int64_t)(pvs[q].link.gbps * 100) / 100));
						json_object_object_add(jp, "line_rate", jl);
					}
				}
			}
			if (nccl_verdict[0])
				json_object_array_add(jv, json_object_new_string(nccl_verdict));
			json_object_object_add(o, "verdicts", jv);
		}
		json_object_object_add(o, "ok_tests", json_object_new_int(nok));
		json_object_object_add(o, "unproven_paths", json_object_new_int(nunproven));
		json_object_object_add(o, "failures", json_object_new_int(nfail));
		json_object_object_add(o, "skipped_tests", json_object_new_int(nskip));
		if (v->hung)
			json_object_object_add(o, "hung", json_object_new_string(v->hang));
		if (dl_stop)
			json_object_object_add(o, "interrupted", json_object_new_string(sigabbrev_np(dl_stop)));
		json_object_object_add(o, "result", json_object_new_string(result));
		fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								      JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		char line[512];

		int rows = 0;

		for (int m = 0; m < V_COUNT; m++)
			rows += grid_row(v, m);
		if (npv && rows) {
			fprintf(out, "grid (test x direction: OK, OK* path not proven, PART not all tested, FAIL, HUNG, SKIP, - not run):\n");
			for (int q = 0; q < npv; q++)
				pv_grid(out, &pvs[q], v);
		}
		if (npv || nccl_verdict[0])
			fprintf(out, "verdict:\n");
		for (int q = 0; q < npv; q++) {
			pv_line(&pvs[q], v, line, sizeof(line));
			fprintf(out, "  %s\n", line);
		}
		if (nccl_verdict[0])
			fprintf(out, "  %s\n", nccl_verdict);
		for (int g = 0; g < n; g++)
			if (v->lost[g][0])
				fprintf(out, "  GPU %d: its context was lost to %s's fault (CUDA errors are "
					"sticky): the later tests that use GPU %d were not run\n", g, v->lost[g], g);
		if (dl_stop)
			fprintf(out, "verify: INTERRUPTED by SIG%s, a partial verdict (%d OK, %d FAIL", sigabbrev_np(dl_stop),
				nok, nfail);
		else
			fprintf(out, "verify: %s (%d OK, %d FAIL", result, nok, nfail);
		if (nskip)
			fprintf(out, ", %d skipped", nskip);
		fprintf(out, ")");
		if (nunproven)
			fprintf(out, "; %d OK without a proven path", nunproven);
		if (npartial)
			fprintf(out, "; %d vram test%s covered only part of free memory", npartial,
				npartial == 1 ? "" : "s");
		fprintf(out, "\n");
	}
	fflush(out);
	if (wd.on) {
		wd.stop = 1;
		pthread_join(wd.th, NULL);
		wd.on = 0;
	}
	rc = nfail || v->hung || !nok ? P2P_EXIT_FAIL : P2P_EXIT_OK;
	if (dl_stop && !v->hung)
		rc = 128 + dl_stop;	/* as a shell reports a command the signal ended */
	if (v->hung) {
		/* A stuck context: tearing it down could block forever. */
		fprintf(err, "verify: %s\n", v->hang);
		fflush(out);
		fflush(err);
		if (verify_exit_on_hang)
			_exit(P2P_EXIT_FAIL);
		goto done;
	}
	if (v->cut) {
		/* a wait cut short by the signal: its work may never end, and
		 * tearing the context down would wait for it */
		fflush(out);
		fflush(err);
		if (verify_exit_on_hang)
			_exit(rc);
		goto done;
	}
rig:
	free_buffers(v);
	rig_close(&v->r);
close:
	ncclx_close();
	cu_close();
done:
	if (sig_on)
		dl_release();
	free(v->want);
	free(v->got);
	free(v->img);
	free(v);
	return rc;
}
