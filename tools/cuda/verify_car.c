// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's car test: a one-kernel custom all-reduce across two
 * processes, the pattern of vLLM's and SGLang's custom all-reduce and of the
 * field's stale reads and NaNs (docs/p2pctl-cuda.md). Rank 0 is this process
 * on GPU a, rank 1 a second process (verify --car-child) on GPU b; each has
 * an IPC buffer (flag, then two payload slots), the other opens it with
 * cuIpcOpenMemHandle. Every round, on each rank, one p2p_car kernel stores
 * the rank's payload into its buffer, stores the flag into the peer's
 * buffer, waits for the peer's flag (a deadline: a lost store fails, it does
 * not hang) and reads the peer's payload; both ranks check the sum. New
 * data every round; then the same kernel captured in a CUDA graph and
 * replayed.
 */
#include <stdlib.h>

#include "verify.h"

#define CAR_HDR 256		/* the flag, at the start of each rank's buffer */
#define CAR_MAX (1ULL << 20)	/* payload bytes per rank */
#define CAR_ROUNDS 8		/* launched one by one, then as many graph replays */

/* One rank's side. */
struct car {
	struct rig *r;
	int g, peer, rank;
	CUstream s;
	CUdeviceptr in, out, misc;	/* misc: the round counter at 0, status at 16 */
	CUdeviceptr mine, theirs;	/* the IPC buffers: this rank's, the peer's */
	size_t n;			/* u32 words per rank */
	uint64_t seed;
	double timeout;
	uint32_t *hin, *hpeer, *hprev[2], *hout;	/* hprev: the peer's of rounds k-1, k-2 */
};

static uint64_t car_seed(uint64_t seed, int rank, int k)
{
	return seed + ((uint64_t)k << 32) + (rank ? 0x9e3779b97f4a7c15ULL : 0);
}

static int car_alloc_host(struct car *c)
{
	c->hin = malloc(c->n * 4);
	c->hpeer = malloc(c->n * 4);
	c->hprev[0] = calloc(c->n, 4);
	c->hprev[1] = calloc(c->n, 4);
	c->hout = malloc(c->n * 4);
	return c->hin && c->hpeer && c->hprev[0] && c->hprev[1] && c->hout ? 0 : -1;
}

static void car_free_host(struct car *c)
{
	free(c->hin);
	free(c->hpeer);
	free(c->hprev[0]);
	free(c->hprev[1]);
	free(c->hout);
}

/* Launch this rank's kernel for the next round on c->s. */
static CUresult car_launch(struct car *c)
{
	CUdeviceptr mine = c->mine + CAR_HDR, peer = c->theirs + CAR_HDR, ctr = c->misc;
	CUdeviceptr st = c->misc + 16;
	/* The flag wait may last all of --timeout: the peer's rank may still be
	 * on the host between rounds (checking, capturing the graph); the host's
	 * own wait outlasts it (car_round), so a lost flag is named, not a hang. */
	unsigned long long n = c->n, tmo = (unsigned long long)(c->timeout * 1e9);
	void *args[10] = { &c->in, &mine, &peer, &c->out, &n, &ctr, &c->mine, &c->theirs, &tmo, &st };

	return cu.cuLaunchKernel(c->r->g[c->g].fn[K_CAR], 1, 1, 1, CAR_THREADS, 1, 1, 0, c->s, args,
				 NULL);
}

/*
 * Round k (graph: replay ge instead of a launch). 0; 1 with err set (a
 * wrong or missing result); -1 with err set (a CUDA error); -2: the kernel
 * did not finish within the deadline (a hang).
 */
static int car_round(struct car *c, int k, CUgraphExec ge, char *err, size_t len)
{
	uint32_t st[3];
	CUresult cr;

	memcpy(c->hprev[1], c->hprev[0], c->n * 4);
	memcpy(c->hprev[0], c->hpeer, c->n * 4);
	pattern_fill((uint8_t *)c->hin, c->n * 4, car_seed(c->seed, c->rank, k));
	pattern_fill((uint8_t *)c->hpeer, c->n * 4, car_seed(c->seed, !c->rank, k));
	cr = cu.cuMemcpyHtoDAsync(c->in, c->hin, c->n * 4, c->s);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemsetD32Async(c->out, POISON, c->n, c->s);
	if (cr == CUDA_SUCCESS)
		cr = ge ? cu.cuGraphLaunch(ge, c->s) : car_launch(c);
	if (cr == CUDA_SUCCESS)
		cr = vchild_wait(c->s, 2 * c->timeout + 1);
	if (cr == CUDA_ERROR_NOT_READY) {
		snprintf(err, len, "round %d%s: the kernel did not finish within %.3g s on GPU %d: the "
			 "path hangs", k + 1, ge ? " (graph replay)" : "", 2 * c->timeout + 1, c->g);
		return -2;
	}
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemcpyDtoH(st, c->misc + 16, sizeof(st));
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemcpyDtoH(c->hout, c->out, c->n * 4);
	if (cr != CUDA_SUCCESS) {
		snprintf(err, len, "round %d%s on GPU %d: %s", k + 1, ge ? " (graph replay)" : "", c->g,
			 cu_errstr(cr));
		return -1;
	}
	if (st[1] != 1) {
		snprintf(err, len, "round %d%s: GPU %d's flag never arrived in GPU %d's memory within "
			 "%.3g s (it holds %u, the round's value is %u): GPU %d's flag store into the peer "
			 "was lost or never became visible", k + 1, ge ? " (graph replay)" : "", c->peer,
			 c->g, c->timeout, st[0], st[2], c->peer);
		return 1;
	}
	for (size_t i = 0; i < c->n; i++) {
		uint32_t want = c->hin[i] + c->hpeer[i];
		char why[160] = "";

		if (c->hout[i] == want)
			continue;
		if ((k && c->hout[i] == c->hin[i] + c->hprev[0][i]) ||
		    (k > 1 && c->hout[i] == c->hin[i] + c->hprev[1][i]) || c->hout[i] == c->hin[i])
			snprintf(why, sizeof(why), ": GPU %d read %s where GPU %d's payload of this round "
				 "was, after its flag: a stale peer read", c->g, c->hout[i] == c->hin[i] ?
				 "0" : "an earlier round's payload", c->peer);
		else if (c->hout[i] == POISON)
			snprintf(why, sizeof(why), ": the poison, the kernel never stored it");
		snprintf(err, len, "round %d%s: element %zu is 0x%08x, expected 0x%08x (0x%08x + GPU %d's "
			 "0x%08x)%s", k + 1, ge ? " (graph replay)" : "", i, c->hout[i], want, c->hin[i],
			 c->peer, c->hpeer[i], why);
		return 1;
	}
	return 0;
}

/* CAR_ROUNDS launched rounds, then CAR_ROUNDS replays of a captured one. */
static int car_run(struct car *c, char *err, size_t len)
{
	CUgraph gr = NULL;
	CUgraphExec ge = NULL;
	CUresult cr;
	int k, rc = 0;

	for (k = 0; k < CAR_ROUNDS && !rc; k++)
		rc = car_round(c, k, NULL, err, len);
	if (rc)
		return rc;
	if (!cu.cuStreamBeginCapture || !cu.cuStreamEndCapture || !cu.cuGraphInstantiateWithFlags ||
	    !cu.cuGraphLaunch)
		return 0;	/* the driver cannot capture: the launched rounds stand */
	cr = cu.cuStreamBeginCapture(c->s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
	if (cr == CUDA_SUCCESS) {
		CUresult lr = car_launch(c);

		cr = cu.cuStreamEndCapture(c->s, &gr);
		if (cr == CUDA_SUCCESS)
			cr = lr;
	}
	if (cr == CUDA_SUCCESS)
		cr = cu.cuGraphInstantiateWithFlags(&ge, gr, 0);
	if (cr != CUDA_SUCCESS) {
		snprintf(err, len, "capturing the kernel in a CUDA graph on GPU %d: %s", c->g,
			 cu_errstr(cr));
		rc = -1;
	}
	for (; k < 2 * CAR_ROUNDS && !rc; k++)
		rc = car_round(c, k, ge, err, len);
	if (rc == -2)
		return rc;	/* a stuck context: leave the graph alone */
	if (ge)
		cu.cuGraphExecDestroy(ge);
	if (gr)
		cu.cuGraphDestroy(gr);
	return rc;
}

/* The second process: rank 1. Prints "car-child: READY", then "car-child:
 * OK" or "car-child: FAIL text" (or ERROR / HUNG). */
int car_child(const char *spec, FILE *out)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct car c = { 0 };
	char emsg[512], hs[2][129], err[1024];
	CUipcMemHandle h[2];
	unsigned base;
	int use[P2P_MAX_GPUS] = { 0 }, a, rc = P2P_EXIT_FAIL;
	CUresult cr = CUDA_SUCCESS;

	vchild_init();
	if (!r || sscanf(spec, "a=%d,b=%d,n=%zu,seed=%" SCNx64 ",base=%x,t=%lf,h0=%128[0-9a-f],"
			 "h1=%128[0-9a-f]", &a, &c.g, &c.n, &c.seed, &base, &c.timeout, hs[0], hs[1]) != 8 ||
	    c.g < 0 || c.g >= P2P_MAX_GPUS || !c.n || vunhex(&h[0], hs[0], 64) || vunhex(&h[1], hs[1], 64)) {
		fprintf(out, "car-child: ERROR bad --car-child '%s'\n", spec);
		free(r);
		return P2P_EXIT_USAGE;
	}
	c.r = r;
	c.rank = 1;
	c.peer = a;
	if (cu_open(emsg, sizeof(emsg))) {
		fprintf(out, "car-child: ERROR %s\n", emsg);
		free(r);
		return P2P_EXIT_NODEV;
	}
	use[c.g] = 1;
	if (rig_open(r, use, 0, 0, emsg, sizeof(emsg))) {
		fprintf(out, "car-child: ERROR %s\n", emsg);
		goto close;
	}
	c.s = r->g[c.g].s[0];
#define CC(call, what)                                                                   \
	do {                                                                             \
		if (cr == CUDA_SUCCESS && (cr = (call)) != CUDA_SUCCESS)                  \
			fprintf(out, "car-child: ERROR %s: %s\n", what, cu_errstr(cr));   \
	} while (0)
	CC(car_alloc_host(&c) ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS, "host memory");
	CC(r->g[c.g].kernels_ok ? rig_cur(r, c.g) : CUDA_ERROR_INVALID_PTX, "kernels");
	CC(cu.cuIpcOpenMemHandle(&c.theirs, h[0], CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
	   "cuIpcOpenMemHandle (rank 0's buffer)");
	CC(cu.cuIpcOpenMemHandle(&c.mine, h[1], CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
	   "cuIpcOpenMemHandle (this rank's buffer)");
	CC(cu.cuMemAlloc(&c.in, c.n * 4), "cuMemAlloc");
	CC(cu.cuMemAlloc(&c.out, c.n * 4), "cuMemAlloc");
	CC(cu.cuMemAlloc(&c.misc, 64), "cuMemAlloc");
	CC(cu.cuMemsetD32Async(c.misc, base, 1, c.s), "cuMemsetD32Async");
	CC(vchild_wait(c.s, c.timeout), "setting the round counter");
#undef CC
	if (cr == CUDA_SUCCESS) {
		int k;

		fprintf(out, "car-child: READY\n");
		fflush(out);
		k = car_run(&c, err, sizeof(err));
		fprintf(out, "car-child: %s%s\n", k == 0 ? "OK" : k == -2 ? "HUNG " : "FAIL ",
			k ? err : "");
		fflush(out);
		if (k == -2)
			vchild_stuck(out);
		rc = k ? P2P_EXIT_FAIL : 0;
	}
	if (c.theirs)
		cu.cuIpcCloseMemHandle(c.theirs);
	if (c.mine)
		cu.cuIpcCloseMemHandle(c.mine);
	if (c.in)
		cu.cuMemFree(c.in);
	if (c.out)
		cu.cuMemFree(c.out);
	if (c.misc)
		cu.cuMemFree(c.misc);
	rig_close(r);
close:
	cu_close();
	car_free_host(&c);
	free(r);
	return rc;
}

/* car a -> b: rank 0 here on GPU a, rank 1 in a second process on GPU b. */
int run_car(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst, k;
	struct car c = { 0 };
	struct vchild ch;
	CUdeviceptr buf[2] = { 0 };
	CUipcMemHandle h[2];
	char spec[600], hs[2][129], err[1024];
	const char *l;
	int ln, n;
	size_t nb = v->size < CAR_MAX ? v->size & ~(size_t)3 : CAR_MAX;
	unsigned base;

	t->ok = 1;
	t->engine = a;
	if (!cu.cuIpcGetMemHandle || !cu.cuIpcOpenMemHandle || !cu.cuIpcCloseMemHandle) {
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "the CUDA driver lacks cuIpcGetMemHandle, "
			 "cuIpcOpenMemHandle_v2 or cuIpcCloseMemHandle");
		return 0;
	}
	if (!r->g[a].kernels_ok || !r->g[b].kernels_ok) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "kernels not loaded: %.900s",
			 r->jitlog[0] ? r->jitlog : "unknown reason");
		return -1;
	}
	c.r = r;
	c.g = a;
	c.peer = b;
	c.n = nb ? nb / 4 : 1;
	/* The vram test's seed stream: adding this test moved no other's seeds. */
	c.seed = v->vseed;
	v->vseed += (uint64_t)(2 * CAR_ROUNDS) << 32;
	c.timeout = v->timeout;
	c.s = r->g[a].s[0];
	base = (uint32_t)splitmix64(c.seed);
	if (car_alloc_host(&c)) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "out of host memory");
		return -1;
	}
	/* CUDA errors here free what was allocated; no memory is a skip. */
#define CT(call, what)                                                                   \
	do {                                                                             \
		CUresult cr_ = (call);                                                   \
		if (cr_ == CUDA_ERROR_OUT_OF_MEMORY) {                                   \
			t->skipped = 1;                                                  \
			snprintf(t->error, sizeof(t->error), "not enough free memory on GPU %d " \
				 "for the buffers (%s)", rig_cur_gpu, what);             \
			goto free;                                                       \
		}                                                                        \
		if (cr_ != CUDA_SUCCESS) {                                               \
			vfail(t, what, cr_);                                             \
			goto free;                                                       \
		}                                                                        \
	} while (0)
	for (int i = 0; i < 2; i++) {
		int g = i ? b : a;

		CT(rig_cur(r, g), "cuCtxSetCurrent");
		CT(cu.cuMemAlloc(&buf[i], CAR_HDR + 2 * c.n * 4), "cuMemAlloc (IPC buffer)");
		/* The flag starts at the counter's value: (flag - round) < 0. */
		CT(cu.cuMemsetD32Async(buf[i], base, CAR_HDR / 4, r->g[g].s[0]), "cuMemsetD32Async");
		CT(vwait(v, t, g, r->g[g].s[0], NULL, "setting the flags"), "setting the flags");
		CT(cu.cuIpcGetMemHandle(&h[i], buf[i]), "cuIpcGetMemHandle");
		vhex(hs[i], &h[i], 64);
	}
	CT(rig_cur(r, a), "cuCtxSetCurrent");
	CT(cu.cuMemAlloc(&c.in, c.n * 4), "cuMemAlloc");
	CT(cu.cuMemAlloc(&c.out, c.n * 4), "cuMemAlloc");
	CT(cu.cuMemAlloc(&c.misc, 64), "cuMemAlloc");
	CT(cu.cuMemsetD32Async(c.misc, base, 1, c.s), "cuMemsetD32Async");
	CT(vwait(v, t, a, c.s, NULL, "setting the round counter"), "setting the round counter");
#undef CT
	c.mine = buf[0];
	c.theirs = buf[1];
	snprintf(spec, sizeof(spec), "a=%d,b=%d,n=%zu,seed=%" PRIx64 ",base=%x,t=%g,h0=%s,h1=%s",
		 a, b, c.n, c.seed, base, v->timeout, hs[0], hs[1]);
	if (vchild_start(t, "--car-child", spec, &ch))
		goto free;
	k = vchild_read(&ch, "car-child: READY", now_s() + vchild_limit(v));
	if (k) {
		t->ok = 0;
		if (k < 0) {
			snprintf(t->error, sizeof(t->error), "the second process (rank 1, GPU %d) did not get "
				 "ready within %.3g s and was killed", b, vchild_limit(v));
		} else {
			l = vchild_line(ch.buf, "car-child: ERROR ", &ln);
			snprintf(t->error, sizeof(t->error), "the second process (rank 1, GPU %d) failed: %.900s",
				 b, l ? l : ch.buf);
		}
		goto free;
	}
	k = car_run(&c, err, sizeof(err));
	/* Rank 1 to its end; once rank 0 has failed, it gets 2 s. */
	if (vchild_read(&ch, NULL, now_s() + (k ? 2 : vchild_limit(v))) && !k) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "the second process (rank 1, GPU %d) did not finish "
			 "within %.3g s and was killed: the custom all-reduce hangs", b, vchild_limit(v));
		goto free;
	}
	if (k) {
		l = vchild_line(ch.buf, "car-child: FAIL ", &ln);
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "rank 0 (this process, GPU %d): %.600s", a, err);
		if (l)
			snprintf(t->error + strlen(t->error), sizeof(t->error) - strlen(t->error),
				 "; rank 1 (GPU %d): %.*s", b, ln, l);
		if (k == -2) {
			t->hung = 1;
			v->hung = 1;
			snprintf(v->hang, sizeof(v->hang), "car %d->%d hung: %.700s", a, b, t->error);
			car_free_host(&c);
			return -1;	/* a stuck context: leave its memory alone */
		}
		goto free;
	}
	/* rank 1's result: its last line but READY (past 4 KiB of output the
	 * buffer keeps its newer half, READY may be gone) */
	l = NULL;
	for (const char *p = ch.buf; (p = vchild_line(p, "car-child: ", &n)); )
		if (strncmp(p, "READY", 5)) {
			l = p;
			ln = n;
		}
	if (!l || strncmp(l, "OK", 2)) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "rank 1 (second process, GPU %d): %.*s", b,
			 l ? ln : 60, l ? l : "no result from the second process");
		goto free;
	}
	t->rounds = 2 * CAR_ROUNDS;
	t->bytes = 2 * CAR_ROUNDS * c.n * 4 * 2;
	t->proven = a != b;
	snprintf(t->path, sizeof(t->path), a != b ?
		 "each rank's kernel stored its flag into and read its payload from the other GPU's "
		 "IPC buffer through the peer mapping" :
		 "loopback within GPU %d: two processes, no peer path", a);
free:
	if (v->hung) {
		car_free_host(&c);
		return -1;	/* a stuck context: leave its memory alone */
	}
	rig_cur(r, a);
	if (c.in)
		cu.cuMemFree(c.in);
	if (c.out)
		cu.cuMemFree(c.out);
	if (c.misc)
		cu.cuMemFree(c.misc);
	for (int i = 0; i < 2; i++) {
		rig_cur(r, i ? b : a);
		if (buf[i])
			cu.cuMemFree(buf[i]);
	}
	car_free_host(&c);
	return t->ok || t->skipped ? 0 : -1;
}
