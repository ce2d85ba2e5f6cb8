// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "deadline.h"
#include "engine.h"
#include "opts.h"

const char *const method_names[M_COUNT] = {
	"ce", "ce-pull", "ce-split", "sm-write", "sm-read", "sm-split", "staged", "ce-multi",
};

int method_parse(const char *s)
{
	for (int m = 0; m < M_COUNT; m++)
		if (!strcmp(s, method_names[m]))
			return m;
	if (!strcmp(s, "sm"))
		return M_SM_WRITE;
	return -1;
}

void plan_reset(struct plan *p)
{
	struct op *keep = p->op;
	int cap = p->cap;

	memset(p, 0, sizeof(*p));
	p->op = keep;
	p->cap = cap;
}

void plan_free(struct plan *p)
{
	free(p->op);
	memset(p, 0, sizeof(*p));
}

static void use_stream(struct plan *p, int g, int s)
{
	for (int k = 0; k < p->nstreams; k++)
		if (p->sg[k] == g && p->ss[k] == s)
			return;
	if (p->nstreams < (int)(sizeof(p->sg) / sizeof(p->sg[0]))) {
		p->sg[p->nstreams] = g;
		p->ss[p->nstreams] = s;
		p->nstreams++;
	}
}

static struct op *add(struct plan *p, int kind, int g, int s)
{
	struct op *o;

	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 64;
		struct op *n = realloc(p->op, sizeof(*n) * cap);

		if (!n) {
			p->oom = 1;
			return NULL;
		}
		p->op = n;
		p->cap = cap;
	}
	o = &p->op[p->n++];
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->gpu = g;
	o->s = s;
	if (kind != OP_REC && kind != OP_WAIT)
		use_stream(p, g, s);
	return o;
}

static int add_ce(struct plan *p, int on, int a, int b, CUdeviceptr src, CUdeviceptr dst,
		  size_t n, int d)
{
	struct op *o = add(p, a == b ? OP_D2D : OP_PEER, on, d);

	if (!o)
		return -1;
	o->sg = a;
	o->dg = b;
	o->src = src;
	o->dst = dst;
	o->n = n;
	return 0;
}

static int add_kern(struct rig *r, struct plan *p, int on, int k, CUdeviceptr src,
		    CUdeviceptr dst, size_t n, int d)
{
	struct op *o;

	if (!r->g[on].kernels_ok)
		return -1;
	o = add(p, OP_KERN, on, d);
	if (!o)
		return -1;
	o->kern = k;
	o->src = src;
	o->dst = dst;
	o->n = n;
	return 0;
}

static int add_staged(struct rig *r, struct plan *p, int a, int b, CUdeviceptr src,
		      CUdeviceptr dst, size_t n, int d)
{
	size_t slot = r->ring_slot;
	struct op *o;

	if (!r->ring[d] || !slot)
		return -1;
	for (size_t off = 0; off < n; off += slot) {
		size_t len = n - off < slot ? n - off : slot;
		int k = p->ring_next[d];
		char *host = (char *)r->ring[d] + (size_t)k * slot;

		p->ring_next[d] = (k + 1) % RIG_RING;
		if (p->ring_used[d][k]) {
			o = add(p, OP_WAIT, a, d);
			if (!o)
				return -1;
			o->ev = r->g[b].ev_free[d][k];
		}
		o = add(p, OP_D2H, a, d);
		if (!o)
			return -1;
		o->host = host;
		o->src = src + off;
		o->n = len;
		o = add(p, OP_REC, a, d);
		if (!o)
			return -1;
		o->ev = r->g[a].ev_fill[d][k];
		o = add(p, OP_WAIT, b, d);
		if (!o)
			return -1;
		o->ev = r->g[a].ev_fill[d][k];
		o = add(p, OP_H2D, b, d);
		if (!o)
			return -1;
		o->host = host;
		o->dst = dst + off;
		o->n = len;
		o = add(p, OP_REC, b, d);
		if (!o)
			return -1;
		o->ev = r->g[b].ev_free[d][k];
		p->ring_used[d][k] = 1;
	}
	return 0;
}

int plan_copy(struct rig *r, struct plan *p, int m, int a, int b, CUdeviceptr src,
	      CUdeviceptr dst, size_t n, int d)
{
	size_t h = (n / 2) & ~(size_t)255;

	if (a == b) {
		switch (m) {
		case M_SM_WRITE: case M_SM_READ: case M_SM_SPLIT:
			return add_kern(r, p, a, K_WRITE, src, dst, n, d);
		case M_STAGED:
			return -1;
		default:
			return add_ce(p, a, a, a, src, dst, n, d);
		}
	}
	if (!h)
		h = n;
	switch (m) {
	case M_CE:
		return add_ce(p, a, a, b, src, dst, n, d);
	case M_CE_PULL:
		return add_ce(p, b, a, b, src, dst, n, d);
	case M_CE_SPLIT:
		if (add_ce(p, a, a, b, src, dst, h, d))
			return -1;
		return h == n ? 0 : add_ce(p, b, a, b, src + h, dst + h, n - h, d);
	case M_SM_WRITE:
		return add_kern(r, p, a, K_WRITE, src, dst, n, d);
	case M_SM_READ:
		return add_kern(r, p, b, K_READ, src, dst, n, d);
	case M_SM_SPLIT:
		if (!r->g[a].kernels_ok || !r->g[b].kernels_ok)
			return -1;
		if (add_kern(r, p, a, K_WRITE, src, dst, h, d))
			return -1;
		return h == n ? 0 : add_kern(r, p, b, K_READ, src + h, dst + h, n - h, d);
	case M_STAGED:
		return add_staged(r, p, a, b, src, dst, n, d);
	case M_CE_MULTI:
		if (add_ce(p, a, a, b, src, dst, h, d))
			return -1;
		return h == n ? 0 : add_ce(p, a, a, b, src + h, dst + h, n - h, d + 2);
	}
	return -1;
}

void sm_grid(const struct rig *r, int g, const struct sm_cfg *sm, size_t n,
	     unsigned *blocks, unsigned *threads)
{
	unsigned long long n16 = n / 16, need;
	unsigned t = sm->threads > 0 ? (unsigned)sm->threads : 512;
	unsigned long long b = (unsigned long long)r->g[g].sms *
			       (sm->blocks_per_sm > 0 ? sm->blocks_per_sm : 4);

	if (n16 < t * 4ULL && n < t) {
		/* tiny: one block covers the vectors and the tail bytes */
		t = n16 > 16 ? 32 * (unsigned)((n16 + 31) / 32) : 32;
	}
	need = (n16 + t - 1) / t;
	if (need < 1)
		need = 1;
	if (b > need)
		b = need;
	if (b < 1)
		b = 1;
	*blocks = (unsigned)b;
	*threads = t;
}

CUresult sm_launch(struct rig *r, int g, CUstream s, int k, const struct sm_cfg *sm,
		   CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	unsigned long long n16 = n / 16, tail = n % 16;
	void *args[4] = { &dst, &src, &n16, &tail };
	unsigned blocks, threads;

	sm_grid(r, g, sm, n, &blocks, &threads);
	return cu.cuLaunchKernel(r->g[g].fn[k], blocks, 1, 1, threads, 1, 1, 0, s, args, NULL);
}

#define CK(call)                                  \
	do {                                      \
		cr = (call);                      \
		if (cr != CUDA_SUCCESS)           \
			goto out;                 \
	} while (0)

CUresult plan_run(struct rig *r, const struct plan *p, const struct sm_cfg *sm, int use_delay,
		  double timeout, struct run_result *out)
{
	int tg, cur = -1;
	struct gpu *t;
	CUstream ts;
	CUresult cr = CUDA_SUCCESS;
	double c0, c1, end = now_s() + timeout;
	float ms = 0;

	memset(out, 0, sizeof(*out));
	if (p->oom)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!p->nstreams)
		return CUDA_ERROR_INVALID_VALUE;
	tg = p->sg[0];
	t = &r->g[tg];
	ts = t->s[p->ss[0]];
	r->flag[0] = 0;
	r->flag[1] = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	CK(rig_cur(r, tg));
	cur = tg;
	if (use_delay && t->kernels_ok) {
		CUdeviceptr f = r->flag_dev;
		unsigned long long timeout = 20000000ULL;	/* clocks: ~10 ms at 2 GHz */
		void *args[2] = { &f, &timeout };

		CK(cu.cuLaunchKernel(t->fn[K_DELAY], 1, 1, 1, 1, 1, 1, 0, ts, args, NULL));
	}
	CK(cu.cuEventRecord(t->ev_start, ts));
	for (int k = 1; k < p->nstreams; k++) {
		if (cur != p->sg[k])
			CK(rig_cur(r, cur = p->sg[k]));
		CK(cu.cuStreamWaitEvent(r->g[p->sg[k]].s[p->ss[k]], t->ev_start, 0));
	}
	c0 = now_s();
	for (int i = 0; i < p->n; i++) {
		const struct op *o = &p->op[i];
		CUstream s = r->g[o->gpu].s[o->s];

		if (cur != o->gpu)
			CK(rig_cur(r, cur = o->gpu));
		switch (o->kind) {
		case OP_PEER:
			CK(cu.cuMemcpyPeerAsync(o->dst, r->g[o->dg].ctx, o->src, r->g[o->sg].ctx, o->n, s));
			break;
		case OP_D2D:
			CK(cu.cuMemcpyDtoDAsync(o->dst, o->src, o->n, s));
			break;
		case OP_KERN:
			CK(sm_launch(r, o->gpu, s, o->kern, sm, o->dst, o->src, o->n));
			break;
		case OP_D2H:
			CK(cu.cuMemcpyDtoHAsync(o->host, o->src, o->n, s));
			break;
		case OP_H2D:
			CK(cu.cuMemcpyHtoDAsync(o->dst, o->host, o->n, s));
			break;
		case OP_REC:
			CK(cu.cuEventRecord(o->ev, s));
			break;
		case OP_WAIT:
			CK(cu.cuStreamWaitEvent(s, o->ev, 0));
			break;
		}
	}
	c1 = now_s();
	end = c1 + timeout;
	for (int k = 1; k < p->nstreams; k++) {
		struct gpu *g = &r->g[p->sg[k]];

		if (cur != p->sg[k])
			CK(rig_cur(r, cur = p->sg[k]));
		CK(cu.cuEventRecord(g->ev_aux[p->ss[k]], g->s[p->ss[k]]));
		CK(rig_cur(r, cur = tg));
		CK(cu.cuStreamWaitEvent(ts, g->ev_aux[p->ss[k]], 0));
	}
	if (cur != tg)
		CK(rig_cur(r, cur = tg));
	CK(cu.cuEventRecord(t->ev_stop, ts));
out:
	/* Always release the blocking kernel, even on error. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	r->flag[0] = 1;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (cr != CUDA_SUCCESS) {
		for (int k = 0; k < p->nstreams; k++) {
			rig_cur(r, p->sg[k]);
			if (dl_wait(r->g[p->sg[k]].s[p->ss[k]], NULL, end) == CUDA_ERROR_NOT_READY)
				out->hung = 1;
		}
		return cr;
	}
	cr = dl_wait(NULL, t->ev_stop, end);
	if (cr == CUDA_ERROR_NOT_READY)
		out->hung = 1;
	if (cr == CUDA_SUCCESS)
		cr = cu.cuEventElapsedTime(&ms, t->ev_start, t->ev_stop);
	out->gpu_ms = ms;
	out->cpu_us = (c1 - c0) * 1e6;
	out->timed_out = r->flag[1] != 0;
	return cr;
}
