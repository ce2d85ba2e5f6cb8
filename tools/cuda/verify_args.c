// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's command line: argv into the run's options (struct vstate's
 * and struct vopts), every usage error here, before anything is opened.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

#include "verify.h"

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

static uint64_t random_seed(void)
{
	uint64_t s = 0;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != (ssize_t)sizeof(s))
		s = (uint64_t)(now_s() * 1e9) ^ ((uint64_t)getpid() << 32);
	return s;
}

/*
 * One option opt (its argument arg) into v and o. 0, P2P_EXIT_USAGE having
 * said why on err, or -1 for an option verify does not have.
 */
static int one_opt(int opt, char *arg, struct vstate *v, struct vopts *o, FILE *err)
{
	char *end;
	double x;

	switch (opt) {
	case 's':
		if (parse_size(arg, &v->size) || v->size > (1ULL << 40)) {
			fprintf(err, "verify: bad --size '%s'\n", arg);
			return P2P_EXIT_USAGE;
		}
		return 0;
	case 'p': o->pairs = arg; return 0;
	case 't':
		o->tlist = arg;
		if (!*arg) {
			fprintf(err, "verify: --tests: empty list (name tests, or leave "
				"--tests out for all)\n");
			return P2P_EXIT_USAGE;
		}
		return 0;
	case 'S':
		errno = 0;
		v->seed0 = strtoull(arg, &end, 0);
		o->seeded = 1;
		if (errno || !*arg || *end) {
			fprintf(err, "verify: bad --seed '%s'\n", arg);
			return P2P_EXIT_USAGE;
		}
		return 0;
	case 'D':
	case 'T':
	case 'B':
		x = strtod(arg, &end);
		*(opt == 'D' ? &v->seconds : opt == 'T' ? &v->timeout : &v->vram_budget) = x;
		if (!*arg || *end || !(x > 0) || x > 86400) {
			fprintf(err, "verify: bad --%s '%s'\n", opt == 'D' ? "seconds" :
				opt == 'T' ? "timeout" : "vram-budget", arg);
			return P2P_EXIT_USAGE;
		}
		return 0;
	case 'Q': v->vram_quick = 1; return 0;
	case 'O':
		if (!strcmp(arg, "auto")) {
			v->pad_auto = 1;
		} else if (!strcmp(arg, "0")) {
			v->pad_auto = 0;
			v->pad_req = 0;
		} else if (parse_size(arg, &v->pad_req)) {
			fprintf(err, "verify: bad --offset '%s'\n", arg);
			return P2P_EXIT_USAGE;
		} else {
			v->pad_auto = 0;
		}
		return 0;
	case 'L': v->loopback = 1; return 0;
	case 'j': o->json = 1; return 0;
	case 'M': v->no_managed = 1; return 0;
	}
	return -1;	/* not an option of verify's: the caller names it */
}

/* After the options: what they say together. 0, or P2P_EXIT_USAGE said on err. */
static int check_opts(struct vstate *v, struct vopts *o, FILE *err)
{
	char emsg[512];

	if (parse_pairs(o->pairs, o->sel, emsg, sizeof(emsg)))
		goto usage;
	if (!(v->tests = parse_tests(o->tlist, emsg, sizeof(emsg))))
		goto usage;
	if (v->loopback && o->tlist && strcmp(o->tlist, "all") &&
	    loopback_refuses(v->tests, emsg, sizeof(emsg)))
		goto usage;
	return 0;
usage:
	fprintf(err, "verify: %s\n", emsg);
	return P2P_EXIT_USAGE;
}

int verify_args(int argc, char **argv, FILE *out, FILE *err, struct vstate *v, struct vopts *o)
{
	int rc = 0, opt, bad;

	memset(o, 0, sizeof(*o));
	v->size = 64ULL << 20;
	v->timeout = 10;
	v->seconds = 3;
	v->vram_budget = 30;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "jh", lo, NULL)) != -1) {
		if (opt == 'I' || opt == 'C' || opt == 'R') {
			/* internal: a second process of the ipc, car or nccl test */
			o->child = opt;
			o->child_spec = optarg;
			return -1;
		}
		if (opt == 'h') {
			vusage(out);
			return rc;
		}
		bad = one_opt(opt, optarg, v, o, err);
		if (bad < 0)
			fprintf(err, "verify: bad option '%s'\n", argv[optind - 1]);
		if (bad)
			rc = P2P_EXIT_USAGE;
	}
	if (!rc && optind < argc) {
		fprintf(err, "verify: unexpected argument '%s'\n", argv[optind]);
		rc = P2P_EXIT_USAGE;
	}
	if (!rc)
		rc = check_opts(v, o, err);
	/* A copy-engine copy is told from a staged one only by timing it
	 * against the staged path: ce brings the path test with it, so copies
	 * at staging speed fail however the tests are chosen. */
	if (v->tests & (1u << V_CE))
		v->tests |= 1u << V_PATH;
	if (rc) {
		vusage(err);
		return rc;
	}
	if (!o->seeded)
		v->seed0 = random_seed();
	v->seed = v->seed0;
	v->vseed = v->seed0 ^ 0x8000000000000000ULL;
	return -1;
}
