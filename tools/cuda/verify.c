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
 * verify_main reads top-down: verify_args.c parses the command line, this
 * file sets the GPUs up and runs the tests pair by pair, verify_report.c
 * prints and judges. Each family of tests is a verify_<family>.c, what they
 * share is verify_common.c (verify.h), and the second processes of ipc,
 * procs, car and nccl are started and ended by verify_child.c.
 */
#include <pthread.h>
#include <stdlib.h>
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
	const struct vrun *r;
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
			if (wd.r->npv)
				fprintf(wd.out, "verdict:\n");
			for (int q = 0; q < wd.r->npv; q++) {
				const struct pverdict *pv = &wd.r->pvs[q];

				if (pv->reached) {
					pv_line(pv, wd.v, line, sizeof(line));
					fprintf(wd.out, "  %s\n", line);
				} else {
					fprintf(wd.out, "  %d<->%d: not finished: %s %s\n", pv->a, pv->b,
						sig ? "interrupted" : "blocked", where);
				}
			}
			if (sig)
				fprintf(wd.out, "verify: INTERRUPTED by SIG%s %s, a partial verdict (%d OK, %d FAIL "
					"before it)\n", sigabbrev_np(sig), where, wd.r->nok, wd.r->nfail);
			else
				fprintf(wd.out, "verify: HUNG %s, a partial verdict (%d OK, %d FAIL before it)\n",
					where, wd.r->nok, wd.r->nfail);
		}
		fprintf(wd.err, "verify: %s\n", diag);
		fflush(wd.err);
		rig_exit(wd.out, sig);
	}
	return NULL;
}

static void watchdog_start(struct vstate *v, const struct vrun *r, int json, FILE *out, FILE *err)
{
	wd.v = v;
	wd.out = out;
	wd.err = err;
	wd.json = json;
	wd.r = r;
	wd.stop = 0;
	wd.on = !pthread_create(&wd.th, NULL, watchdog, NULL);
}

static void watchdog_stop(void)
{
	if (wd.on) {
		wd.stop = 1;
		pthread_join(wd.th, NULL);
		wd.on = 0;
	}
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


/* How far vsetup got, for vteardown. */
enum { VS_NONE, VS_CUDA, VS_RIG };

/* The GPUs the selected pairs use, into r->use. 0, or an exit status said on err. */
static int used_gpus(const struct vstate *v, struct vrun *r, const struct vopts *o, FILE *err)
{
	for (int i = 0; i < P2P_MAX_GPUS; i++)
		for (int j = 0; j < P2P_MAX_GPUS; j++) {
			if (!o->sel[i][j])
				continue;
			if (i >= r->n || j >= r->n) {
				if (o->pairs) {
					fprintf(err, "verify: no GPU %d (%d found)\n", i >= r->n ? i : j, r->n);
					return P2P_EXIT_NODEV;
				}
				continue;
			}
			r->use[i] = r->use[j] = 1;
		}
	if (v->loopback && !o->pairs)
		for (int i = 0; i < r->n; i++)
			r->use[i] = 1;
	return 0;
}

/* The GPUs, the seed and the buffers' offset, before the first test (text output). */
static void say_setup(struct vstate *v, const struct vrun *r, FILE *out)
{
	for (int i = 0; i < r->n; i++)
		if (r->use[i])
			fprintf(out, "GPU %d: %s (%s)%s\n", i, v->r.g[i].name, v->r.g[i].busid,
				v->padbytes[i] ? "" : "; test buffers not offset");
	fprintf(out, "seed 0x%016" PRIx64 " (--seed to repeat), timeout %.3g s", v->seed0,
		v->timeout);
	for (int i = 0; i < r->n; i++)
		if (r->use[i] && v->padbytes[i]) {
			fprintf(out, ", buffers above a %" PRIu64 " MiB allocation on each GPU",
				v->padbytes[i] >> 20);
			break;
		}
	fprintf(out, "\n");
	fflush(out);
	v->out = out;
}

/*
 * Open CUDA and the GPUs the pairs use, with their buffers. 0, or an exit
 * status said on err; *level says how far it got, for vteardown.
 */
static int vsetup(struct vstate *v, struct vrun *r, const struct vopts *o, FILE *out, FILE *err,
		  int *level)
{
	char emsg[512];
	int rc;

	v->sm.threads = 512;
	v->sm.blocks_per_sm = 4;
	rc = cu_open(emsg, sizeof(emsg));
	if (rc)
		goto say;
	*level = VS_CUDA;
	rc = rig_count(&r->n, emsg, sizeof(emsg));
	if (rc)
		goto say;
	if (r->n < 2 && !v->loopback) {
		fprintf(err, "verify: needs at least two GPUs (%d found); --loopback tests one "
			"against itself\n", r->n);
		return P2P_EXIT_NODEV;
	}
	rc = used_gpus(v, r, o, err);
	if (rc)
		return rc;
	v->total = 2 * GUARD + ((v->size + 15) & ~(uint64_t)15);
	v->want = malloc(v->total);
	v->got = malloc(v->total);
	v->img = malloc(v->total);
	if (!v->want || !v->got || !v->img) {
		fprintf(err, "verify: cannot allocate 3 x %zu bytes of host memory\n", v->total);
		return P2P_EXIT_FAIL;
	}
	*level = VS_RIG;
	rc = rig_open(&v->r, r->use, 0, 0, emsg, sizeof(emsg));
	if (!rc)
		rc = alloc_buffers(v, r->use, emsg, sizeof(emsg));
	if (rc)
		goto say;
	if (o->json)
		r->jpairs = json_object_new_array();
	else
		say_setup(v, r, out);
	return 0;
say:
	fprintf(err, "verify: %s\n", emsg);
	return rc;
}

static void vteardown(struct vstate *v, int level)
{
	if (level >= VS_RIG) {
		free_buffers(v);
		rig_close(&v->r);
	}
	if (level >= VS_CUDA) {
		ncclx_close();
		cu_close();
	}
}

/*
 * Enable peer access between a and b both ways (a == b: nothing to enable).
 * Whether both are on; else perr says why, and *one_way whether one is.
 */
static int pair_enable(struct vstate *v, int a, int b, struct pverdict *pv, char *perr, size_t len,
		       int *one_way)
{
	CUresult ab, ba, cr;
	const char *hint;
	int x, y;

	if (a == b)
		return 1;
	if (!v->r.can_peer[a][b] || !v->r.can_peer[b][a]) {
		snprintf(perr, len, "peer access not supported (cuDeviceCanAccessPeer %d->%d = %d, %d->%d = %d)",
			 a, b, v->r.can_peer[a][b], b, a, v->r.can_peer[b][a]);
		return 0;
	}
	ab = rig_peer(&v->r, a, b, 1);
	ba = rig_peer(&v->r, b, a, 1);
	if (ab == CUDA_SUCCESS && ba == CUDA_SUCCESS)
		return 1;
	x = ab != CUDA_SUCCESS ? a : b;
	y = ab != CUDA_SUCCESS ? b : a;
	cr = ab != CUDA_SUCCESS ? ab : ba;
	hint = enable_hint(cr);
	*one_way = ab == CUDA_SUCCESS || ba == CUDA_SUCCESS;
	snprintf(perr, len, "cuCtxEnablePeerAccess %d->%d (GPU %d mapping GPU "
		 "%d's memory): %s%s%d->%d %s%s%.300s", x, y, x, y, cu_errstr(cr), "; ",
		 y, x, ab != CUDA_SUCCESS && ba != CUDA_SUCCESS ? "failed too" :
		 "was enabled: the tests that need only it run", hint ? "\n        " : "",
		 hint ? hint : "");
	if (pv)
		snprintf(pv->noway, sizeof(pv->noway), "%s%d->%d",
			 ab != CUDA_SUCCESS && ba != CUDA_SUCCESS ? "both ways, " : "", x, y);
	return 0;
}

/* The pair's first lines (text output): the GPUs, the link, a failed enable. */
static void say_pair(const struct vstate *v, int a, int b, const struct pverdict *pv,
		     const char *perr, FILE *out)
{
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

/*
 * The tests of a pair with peer access on (one way at least): the device
 * tests, then the managed ones, counted into r. How many tests are in
 * r->tests; *pfail adds the pair's failures.
 */
static int pair_run(struct vstate *v, struct vrun *r, int a, int b, int one_way,
		    struct umpair *um, int *pfail)
{
	struct vtest *tests = r->tests, lt = { .src = a, .dst = b };
	int nt = pair_tests(v, a, b, tests), from;

	for (int k = 0; k < nt; k++) {
		*pfail += !tests[k].ok;
		r->nok += tests[k].ok && !tests[k].skipped;
		r->nskip += tests[k].skipped;
		r->nunproven += tests[k].ok && !tests[k].skipped && !tests[k].proven;
		r->npartial += tests[k].ok && !tests[k].skipped && tests[k].partial;
	}
	if (one_way) {
		/* the managed tests map both ways */
		snprintf(um->reason, sizeof(um->reason), "peer access is enabled one way only");
		if (!v->no_managed)
			r->nskip += um->nskip = V_UM_COUNT * 2;
		(*pfail)++;	/* the enable that failed */
		return nt;
	}
	if (vhalt(v))
		return nt;
	from = nt;
	if (vlost_skip(v, &lt, (const int[]){ a, b }, 2) &&
	    !v->no_managed && (v->tests & (((1u << V_UM_COUNT) - 1) << V_UM_READ))) {
		snprintf(um->reason, sizeof(um->reason), "%.400s", lt.error);
		um->nskip = V_UM_COUNT * 2;
	} else {
		um_pair(v, a, b, tests, &nt, um);
	}
	*pfail += um->nfail;
	r->nok += um->nok;
	r->nskip += um->nskip;
	for (int k = from; k < nt; k++)
		r->nunproven += tests[k].ok && !tests[k].skipped && !tests[k].proven;
	return nt;
}

/* The pair's verdict, from its nt tests in r->tests and its managed part. */
static void pair_verdict(const struct vstate *v, const struct vrun *r, struct pverdict *pv,
			 int peer_ok, int one_way, int nt, const struct umpair *um)
{
	pv->peer_ok = peer_ok;
	pv->reached = 1;
	for (int k = 0; k < nt; k++)
		pv_add(pv, &r->tests[k]);
	if ((peer_ok || one_way) && um->status == UM_SKIPPED && um->nskip)
		for (int m = V_UM_READ; m < V_CONCURRENT; m++)
			for (int d = 0; d < 2; d++)
				snprintf(pv->cell[m][d], sizeof(pv->cell[m][d]), "SKIP");
	pv_path(pv, v);
}

/* Pair (a, b) (a == b: --loopback's GPU a): enable, run, count, say. */
static void run_pair(struct vstate *v, struct vrun *r, int json, int a, int b, FILE *out)
{
	struct umpair um = { .status = UM_SKIPPED };
	int nt = 0, peer_ok, pfail = 0, one_way = 0;
	char perr[512] = "";
	struct pverdict *pv = NULL;

	if (a != b) {
		pv = &r->pvs[r->npv];
		memset(pv, 0, sizeof(*pv));
		pv->a = a;
		pv->b = b;
		link_rate(v->r.g[a].busid, v->r.g[b].busid, &v->link);
		pv->link = v->link;
		r->pvjson[r->npv++] = json ? (int)json_object_array_length(r->jpairs) : -1;
	}
	peer_ok = pair_enable(v, a, b, pv, perr, sizeof(perr), &one_way);
	if (!json)
		say_pair(v, a, b, pv, perr, out);
	if (peer_ok || one_way) {
		nt = pair_run(v, r, a, b, one_way, &um, &pfail);
	} else {
		snprintf(um.reason, sizeof(um.reason), "peer access is not enabled");
		if (!v->no_managed)
			r->nskip += um.nskip = V_UM_COUNT * 2;
		pfail++;
	}
	r->nfail += pfail;
	if (pv)
		pair_verdict(v, r, pv, peer_ok, one_way, nt, &um);
	if (json) {
		pair_json(v, r->jpairs, a, b, pfail, perr, r->tests, nt, &um);
		return;
	}
	if (!v->hung && a != b && !(dl_stop && um.status == UM_SKIPPED && !um.reason[0]))
		um_print(out, v, a, b, &um);
	if (pv && pv->link.kind == LINK_PCIE)
		link_print_now(out, v->r.g[a].busid, v->r.g[b].busid, &pv->link);
}

static void run_pairs(struct vstate *v, struct vrun *r, const struct vopts *o, FILE *out)
{
	for (int a = 0; a < r->n && !vhalt(v); a++)
		for (int b = v->loopback ? a : a + 1; b < r->n && !vhalt(v); b++)
			if (v->loopback ? a == b && r->use[a] : o->sel[a][b])
				run_pair(v, r, o->json, a, b, out);
	/* An interrupted run: the pairs it did not reach have a verdict too. */
	for (int a = 0; a < r->n && dl_stop && !v->loopback; a++)
		for (int b = a + 1; b < r->n; b++) {
			int q;

			for (q = 0; q < r->npv && (r->pvs[q].a != a || r->pvs[q].b != b); q++)
				;
			if (!o->sel[a][b] || q < r->npv)
				continue;
			memset(&r->pvs[r->npv], 0, sizeof(r->pvs[r->npv]));
			r->pvs[r->npv].a = a;
			r->pvs[r->npv].b = b;
			r->pvjson[r->npv++] = -1;
		}
}

/* Every directed pair at once, after the pairs' own tests. */
static void run_concurrent_all(struct vstate *v, struct vrun *r, const struct vopts *o)
{
	static int csel[P2P_MAX_GPUS][P2P_MAX_GPUS];
	const int maxt = (int)(sizeof(r->ctests) / sizeof(r->ctests[0]));
	struct vtest *ct = r->ctests;
	int nlost = 0;

	/* Not in a context a sticky error killed: the pairs of such a GPU
	 * are not run (and say why); the others still run at once. */
	for (int a = 0; a < r->n; a++)
		for (int b = 0; b < r->n; b++) {
			csel[a][b] = o->sel[a][b] && !v->lost[a][0] && !v->lost[b][0];
			if (a == b || csel[a][b] || !o->sel[a][b] ||
			    !v->r.peer_on[a][b] || !v->r.peer_on[b][a] || nlost >= maxt / 2)
				continue;
			memset(&ct[r->nct], 0, sizeof(ct[r->nct]));
			ct[r->nct].method = V_CONCURRENT;
			ct[r->nct].src = a;
			ct[r->nct].dst = b;
			vlost_skip(v, &ct[r->nct++], (const int[]){ a, b }, 2);
			nlost++;
		}
	run_concurrent(v, csel, ct, &r->nct, maxt);
	for (int k = 0; k < r->nct; k++)
		vdone(v, &ct[k], 1);
	for (int k = 0; k < r->nct; k++) {
		r->nfail += !ct[k].ok;
		r->nok += ct[k].ok && !ct[k].skipped;
		r->nskip += ct[k].skipped;
		for (int q = 0; q < r->npv; q++)
			if ((r->pvs[q].a == ct[k].src && r->pvs[q].b == ct[k].dst) ||
			    (r->pvs[q].b == ct[k].src && r->pvs[q].a == ct[k].dst))
				pv_add(&r->pvs[q], &ct[k]);
	}
}

#define NCCL_SETS (P2P_MAX_GPUS * P2P_MAX_GPUS + 1)

/*
 * The GPU sets of the nccl test, into sets (setn GPUs each): every selected
 * pair with peer access on both ways (--loopback: every used GPU alone), then
 * all the used GPUs when they are more than two. How many.
 */
static int nccl_sets(const struct vstate *v, const struct vrun *r, const struct vopts *o,
		     int sets[NCCL_SETS][P2P_MAX_GPUS], int *setn)
{
	int ns = 0, all = 0;

	for (int a = 0; a < r->n; a++)
		for (int b = v->loopback ? a : a + 1; b < r->n; b++)
			if (v->loopback ? a == b && r->use[a] : o->sel[a][b] && v->r.peer_on[a][b] &&
			    v->r.peer_on[b][a]) {
				sets[ns][0] = a;
				sets[ns][1] = b;
				setn[ns++] = a == b ? 1 : 2;
			}
	for (int g = 0; g < r->n && !v->loopback; g++)
		if (r->use[g])
			sets[ns][all++] = g;
	if (all > 2)
		setn[ns++] = all;
	return ns;
}

/* The nccl test of GPU set gs: in one process, then (two GPUs or more) a process per GPU. */
static void nccl_set(struct vstate *v, struct vrun *r, const int *gs, int ng)
{
	struct vtest *t = &r->ctests[r->nct++];
	char procs[300], lb[sizeof(t->label)];
	size_t l = 0;
	long off;

	memset(t, 0, sizeof(*t));
	for (int g = 0; g < ng; g++)
		l += (size_t)snprintf(t->label + l, sizeof(t->label) - l, "%s%d", g ? "," : "", gs[g]);
	off = nccl_log_size(v);
	t->method = V_NCCL;
	t->engine = ng;
	if (!vlost_skip(v, t, gs, ng))
		run_nccl(v, t, gs, ng);
	if (t->ok && !t->skipped)
		nccl_transport(v, t, gs, ng, v->nccl_log, off);
	vdone(v, t, 0);
	if (ng < 2 || vhalt(v))
		return;
	/* the same, one process per GPU, as PyTorch and vLLM run it */
	snprintf(lb, sizeof(lb), "%.56s/procs", t->label);
	t = &r->ctests[r->nct++];
	memset(t, 0, sizeof(*t));
	snprintf(t->label, sizeof(t->label), "%s", lb);
	/* the ranks' logs, gathered into log.procs by run_nccl_procs */
	snprintf(procs, sizeof(procs), "%s.procs", v->nccl_log);
	run_nccl_procs(v, t, gs, ng);
	if (t->ok && !t->skipped)
		nccl_transport(v, t, gs, ng, procs, 0);
	if (v->nccl_log[0])
		unlink(procs);
	vdone(v, t, 0);
}

/* The nccl tests, last: each set's, counted into r and its verdict line. */
static void run_nccl_all(struct vstate *v, struct vrun *r, const struct vopts *o, FILE *out)
{
	int sets[NCCL_SETS][P2P_MAX_GPUS], setn[NCCL_SETS];
	int first = r->nct, ns, nobad;
	char why[512];

	ns = nccl_sets(v, r, o, sets, setn);
	r->nccl_ran = 1;
	if (ns)
		nccl_debug_begin(v);
	nobad = ns ? nccl_open(why, sizeof(why)) : 0;
	if (ns && !o->json) {
		/* out before NCCL's first call: a hang there must not lose it */
		fprintf(out, "nccl: all-reduce with %s\n", nobad ? "libnccl.so.2" : nx.path);
		fflush(out);
	}
	if (nobad) {
		struct vtest *t = &r->ctests[r->nct++];

		memset(t, 0, sizeof(*t));
		t->method = V_NCCL;
		t->skipped = 1;
		t->ok = 1;
		snprintf(t->label, sizeof(t->label), "-");
		snprintf(t->error, sizeof(t->error), "%s", why);
		vdone(v, t, 1);
		ns = 0;
	}
	for (int k = 0; k < ns && !vhalt(v); k++)
		nccl_set(v, r, sets[k], setn[k]);
	nccl_debug_end(v);
	for (int k = first; k < r->nct; k++) {
		const struct vtest *t = &r->ctests[k];
		size_t l = strlen(r->nccl_verdict);

		r->nfail += !t->ok;
		r->nok += t->ok && !t->skipped;
		r->nskip += t->skipped;
		r->nunproven += t->ok && !t->skipped;
		if (t->skipped || !t->ok)
			snprintf(r->nccl_verdict + l, sizeof(r->nccl_verdict) - l, "%snccl %s: %s: %.400s",
				 l ? "; " : "", t->label, t->skipped ? "SKIPPED" : "FAIL", t->error);
	}
}

/*
 * After the report: a run that hung, or a wait a signal cut short, may have
 * work that never ends in a context; tearing it down could block forever.
 * Ends the process (verify_exit_on_hang) or says to skip the teardown.
 */
static int stuck_end(const struct vstate *v, int rc, FILE *out, FILE *err)
{
	if (!v->hung && !v->cut)
		return 0;
	if (v->hung)
		fprintf(err, "verify: %s\n", v->hang);
	fflush(out);
	fflush(err);
	if (verify_exit_on_hang)
		_exit(v->hung ? P2P_EXIT_FAIL : rc);
	return 1;
}

/* Set up, run the tests selected (every wait under its deadline), report. */
static int verify_run(struct vstate *v, struct vrun *r, const struct vopts *o, FILE *out, FILE *err)
{
	int sig_on = !dl_catch(), level = VS_NONE;
	int rc = vsetup(v, r, o, out, err, &level);

	if (!rc) {
		watchdog_start(v, r, o->json, out, err);
		run_pairs(v, r, o, out);
		if (!vhalt(v) && (v->tests & (1u << V_CONCURRENT)) && !v->loopback)
			run_concurrent_all(v, r, o);
		if (!vhalt(v) && (v->tests & (1u << V_NCCL)))
			run_nccl_all(v, r, o, out);
		verify_report(v, r, o->json, out);
		watchdog_stop();
		rc = verify_status(v, r);
		if (stuck_end(v, rc, out, err))
			level = VS_NONE;
	}
	vteardown(v, level);
	if (sig_on)
		dl_release();
	return rc;
}

int verify_main(int argc, char **argv, FILE *out, FILE *err)
{
	static struct vrun run;	/* large: not on the stack */
	struct vstate *v = calloc(1, sizeof(*v));
	struct vopts o;
	int rc;

	if (!v)
		return P2P_EXIT_FAIL;
	rc = verify_args(argc, argv, out, err, v, &o);
	if (rc < 0 && o.child == 'I')
		rc = ipc_child(o.child_spec, out);	/* the second process of the ipc test */
	else if (rc < 0 && o.child == 'C')
		rc = car_child(o.child_spec, out);	/* rank 1 of the car test */
	else if (rc < 0 && o.child == 'R')
		rc = nccl_child(o.child_spec, out);	/* a rank of the nccl test's per-process run */
	else if (rc < 0) {
		memset(&run, 0, sizeof(run));
		rc = verify_run(v, &run, &o, out, err);
	}
	free(v->want);
	free(v->got);
	free(v->img);
	free(v);
	return rc;
}
