// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's vram test: ce, sm-read and sm-write a -> b with a's
 * source and b's destination moved over all of each GPU's free memory
 * (the sweep), or, with --quick, at three places of it (the sample). A
 * BAR1 window that covers only part of VRAM, or a bad region behind the
 * peer path, fails where a buffer lands on it.
 */

#include <stdlib.h>

#include "verify.h"

/*
 * t failed because its sub-test sub did: t takes over how (hang, the GPU,
 * the first mismatch); the caller writes t's error, which adds where.
 */
static void take_failure(struct vtest *t, const struct vtest *sub)
{
	t->ok = 0;
	t->hung = sub->hung;
	t->gpu = sub->gpu;
	t->mismatch = sub->mismatch;
	t->offset = sub->offset;
	t->nbad = sub->nbad;
	t->expected = sub->expected;
	t->got = sub->got;
}

/* What vram runs at each place: ce, sm-read and sm-write a -> b. */
static const int vram_methods[3] = { V_CE, V_SM_READ, V_SM_WRITE };

/*
 * The three copies a -> b with the buffers the rig holds now, into t's
 * bytes, stopping at the first that fails: its method, its sub-test in
 * *sub (t has taken its failure), or -1 when all three passed.
 */
static int vram_copies(struct vstate *v, struct vtest *t, int a, int b, struct vtest *sub)
{
	for (int m = 0; m < 3 && !v->hung; m++) {
		memset(sub, 0, sizeof(*sub));
		sub->src = a;
		sub->dst = b;
		sub->method = vram_methods[m];
		run_copy(v, sub);
		t->bytes += sub->bytes;
		if (!sub->ok) {
			take_failure(t, sub);
			return vram_methods[m];
		}
	}
	return -1;
}

static const char *const vplace[3] = { "bottom", "middle", "top" };

#define VRAM_RETRY (512ULL << 20)	/* a pad that did not fit is tried this much smaller */

/*
 * A pad of *p bytes, then the buffer of n, in the current context. Free
 * memory can shrink between cuMemGetInfo and the allocations (a display
 * GPU's desktop, another process): out of memory, the pad is tried once more,
 * VRAM_RETRY smaller. *p is the pad allocated; on an error nothing is.
 */
static CUresult vram_alloc(uint64_t *p, size_t n, CUdeviceptr *pad, CUdeviceptr *buf)
{
	CUresult cr = CUDA_ERROR_OUT_OF_MEMORY;

	for (int k = 0; k < 2 && cr == CUDA_ERROR_OUT_OF_MEMORY; k++) {
		if (k && *p <= VRAM_RETRY)
			break;
		if (k)
			*p -= VRAM_RETRY;
		*pad = 0;
		cr = *p ? cu.cuMemAlloc(pad, *p) : CUDA_SUCCESS;
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemAlloc(buf, n);
		if (cr != CUDA_SUCCESS && *pad) {
			cu.cuMemFree(*pad);
			*pad = 0;
		}
	}
	if (cr != CUDA_SUCCESS)
		*buf = 0;
	return cr;
}

/*
 * --quick: ce, sm-read and sm-write (both rounds of each) with a's source
 * and b's destination at three places of each GPU's free memory, the
 * bottom, the middle and the top: allocated after a pad of none, half, and
 * all of what is free but the buffer and VRAM_MARGIN. CUDA does not say
 * where memory sits; with today's allocator a pad below makes it likely. A
 * sample: memory between the places, and the top VRAM_MARGIN, is not tested.
 */
static int vram_sample(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst, gs[2] = { t->src, t->dst };
	CUdeviceptr keep_src = r->g[a].src, keep_dst = r->g[b].dst;
	uint64_t padmb[3][2] = { { 0 } }, seed;

	for (int i = 0; i < 2; i++) {
		size_t fr = 0, tot = 0;

		if (rig_cur(r, gs[i]) == CUDA_SUCCESS && cu.cuMemGetInfo(&fr, &tot) == CUDA_SUCCESS &&
		    fr < v->total + VRAM_MARGIN) {
			t->skipped = 1;
			snprintf(t->error, sizeof(t->error), "GPU %d has %zu MiB free, less than the buffer "
				 "and a %llu MiB margin", gs[i], fr >> 20, VRAM_MARGIN >> 20);
			return 0;
		}
	}
	/* Seeds of its own, so that adding it moved no other test's. */
	seed = v->seed;
	v->seed = v->vseed;
	for (int k = 0; k < 3 && t->ok && !t->skipped && !t->partial; k++) {
		CUdeviceptr pad[2] = { 0 }, buf[2] = { 0 };
		struct vtest sub;
		CUresult cr = CUDA_SUCCESS;
		char what[160] = "";

		for (int i = 0; i < 2 && cr == CUDA_SUCCESS; i++) {
			size_t fr = 0, tot = 0;
			uint64_t need = v->total + VRAM_MARGIN, p = 0, p0;

			cr = rig_cur(r, gs[i]);
			if (cr == CUDA_SUCCESS)
				cr = cu.cuMemGetInfo(&fr, &tot);
			if (cr == CUDA_SUCCESS && fr > need && k)
				p = (k == 1 ? (fr - need) / 2 : fr - need) & ~((2ULL << 20) - 1);
			p0 = p;
			if (cr == CUDA_SUCCESS)
				cr = vram_alloc(&p, v->total, &pad[i], &buf[i]);
			padmb[k][i] = p >> 20;
			if (cr == CUDA_ERROR_OUT_OF_MEMORY) {
				/* as car: no memory is not a P2P failure; a skip, or,
				 * once the bottom was tested, a part tested (PARTIAL,
				 * as a sweep the budget ended): neither is OK */
				if (k)
					t->partial = 1;
				else
					t->skipped = 1;
				snprintf(k ? t->warn : t->error, k ? sizeof(t->warn) : sizeof(t->error),
					 "%s of free memory not tested: GPU %d ran "
					 "out of memory for a pad of %" PRIu64 " MiB%s and the buffer, of %zu "
					 "MiB cuMemGetInfo said free: memory taken meanwhile (a display GPU's "
					 "desktop, another process)%s", vplace[k], gs[i], p0 >> 20,
					 p0 > VRAM_RETRY ? " (and 512 MiB less)" : "", fr >> 20, k == 2 ? "; the bottom and middle were OK" :
					 k == 1 ? "; the bottom was OK" : "");
			} else if (cr != CUDA_SUCCESS) {
				snprintf(what, sizeof(what), "%s of free memory: allocating a %" PRIu64 " MiB "
					 "pad and the buffer on GPU %d", vplace[k], p >> 20, gs[i]);
			}
		}
		if (t->skipped || t->partial) {
			;	/* the buffers allocated are freed below */
		} else if (cr != CUDA_SUCCESS) {
			vfail(t, what, cr);
		} else {
			r->g[a].src = buf[0];
			r->g[b].dst = buf[1];
			int m = vram_copies(v, t, a, b, &sub);

			if (m >= 0)
				snprintf(t->error, sizeof(t->error), "%s of free memory (buffers above pads of %"
					 PRIu64 " MiB on GPU %d and %" PRIu64 " MiB on GPU %d): %s: %.800s",
					 vplace[k], padmb[k][0], a, padmb[k][1], b, vnames[m], sub.error);
			r->g[a].src = keep_src;
			r->g[b].dst = keep_dst;
		}
		if (v->hung) {
			v->seed = seed;
			return -1;	/* a stuck context: leave its memory alone */
		}
		for (int i = 0; i < 2; i++) {
			rig_cur(r, gs[i]);
			if (buf[i])
				cu.cuMemFree(buf[i]);
			if (pad[i])
				cu.cuMemFree(pad[i]);
		}
		t->rounds++;
	}
	v->vseed = v->seed;
	v->seed = seed;
	if (t->ok)
		snprintf(t->path, sizeof(t->path), "SM loads and stores through the peer mappings at each "
			 "place (a sample: the memory between the places and the top %llu MiB not tested)",
			 VRAM_MARGIN >> 20);
	memcpy(t->vram_mb, padmb, sizeof(padmb));
	return t->ok ? 0 : -1;
}

/*
 * The sweep's buffers: at most VRAM_MAXBUF per GPU, so a small --size moves
 * larger buffers of its own (v's images are swapped for the sweep's).
 */
#define VRAM_MAXBUF 4096
#define VRAM_ALIGN (2ULL << 20)

struct vram_side {
	int g;
	CUdeviceptr *buf;
	int n;			/* buffers allocated */
	int done;		/* ... of them tested */
	uint64_t free;		/* bytes cuMemGetInfo said free before */
};

/*
 * Every buffer of w bytes that GPU s->g's free memory holds, allocated until
 * the allocator says no (out of memory), at most cap bytes. CUDA_SUCCESS,
 * or the error of an allocation that failed otherwise.
 */
static CUresult vram_take(struct vstate *v, struct vram_side *s, size_t w, uint64_t cap)
{
	CUresult cr = rig_cur(&v->r, s->g);

	s->buf = calloc(VRAM_MAXBUF, sizeof(*s->buf));
	if (!s->buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	while (cr == CUDA_SUCCESS && s->n < VRAM_MAXBUF && (uint64_t)(s->n + 1) * w <= cap) {
		cr = cu.cuMemAlloc(&s->buf[s->n], w);
		if (cr == CUDA_SUCCESS)
			s->n++;
	}
	return cr == CUDA_ERROR_OUT_OF_MEMORY ? CUDA_SUCCESS : cr;
}

static void vram_give(struct vstate *v, struct vram_side *s)
{
	if (s->buf && rig_cur(&v->r, s->g) == CUDA_SUCCESS)
		for (int i = 0; i < s->n; i++)
			cu.cuMemFree(s->buf[i]);
	free(s->buf);
	s->buf = NULL;
}

/* The buffer size, host images and all of v that run_copy reads for it. */
struct vram_size {
	uint64_t size;
	size_t total;
	uint8_t *want, *got, *img;
};

static void vram_swap(struct vstate *v, struct vram_size *z)
{
	struct vram_size k = { v->size, v->total, v->want, v->got, v->img };

	v->size = z->size;
	v->total = z->total;
	v->want = z->want;
	v->got = z->got;
	v->img = z->img;
	*z = k;
}

/*
 * The sweep: all free memory of a and b taken in buffers, then buffer k of
 * a as the source and buffer k of b as the destination of ce, sm-read and
 * sm-write (the shorter list wraps), until every buffer was used or the
 * budget (v->vram_budget seconds from the start) ends. A budget that ends
 * first leaves the test a WARN that says what was covered, never an OK.
 */
static int vram_sweep(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst;
	struct vram_side sd[2] = { { .g = a }, { .g = b } };
	CUdeviceptr keep_src = r->g[a].src, keep_dst = r->g[b].dst;
	double end = now_s() + v->vram_budget;
	struct vram_size z = { 0 };
	uint64_t seed, most = 0;
	CUresult cr = CUDA_SUCCESS;
	size_t w = v->total;

	for (int i = 0; i < 2 && cr == CUDA_SUCCESS; i++) {
		size_t fr = 0, tot = 0;

		cr = rig_cur(r, sd[i].g);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemGetInfo(&fr, &tot);
		sd[i].free = fr;
		if (fr > most)
			most = fr;
	}
	if (cr != CUDA_SUCCESS)
		return vfail(t, "cuMemGetInfo", cr);
	/* at most VRAM_MAXBUF buffers: larger ones where --size is small */
	if (most / VRAM_MAXBUF > w) {
		w = (most / VRAM_MAXBUF + VRAM_ALIGN - 1) & ~(VRAM_ALIGN - 1);
		z.total = w;
		z.size = w - 2 * GUARD;
		z.want = malloc(w);
		z.got = malloc(w);
		z.img = malloc(w);
		if (!z.want || !z.got || !z.img) {
			free(z.want);
			free(z.got);
			free(z.img);
			t->skipped = 1;
			snprintf(t->error, sizeof(t->error), "cannot allocate 3 x %zu bytes of host memory for "
				 "the sweep's buffers", w);
			return 0;
		}
	}
	for (int i = 0; i < 2 && cr == CUDA_SUCCESS; i++)
		cr = vram_take(v, &sd[i], w, sd[i].free);
	if (cr != CUDA_SUCCESS) {
		vfail(t, "allocating free memory for the sweep", cr);
	} else if (!sd[0].n || !sd[1].n) {
		int g = sd[0].n ? b : a;

		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "GPU %d has no room for a %zu-byte buffer beyond the "
			 "tests' own (%" PRIu64 " MiB free)", g, w, sd[!sd[0].n ? 0 : 1].free >> 20);
	}
	if (t->ok && !t->skipped) {
		int nk = sd[0].n > sd[1].n ? sd[0].n : sd[1].n;

		if (z.want)
			vram_swap(v, &z);
		/* Seeds of its own, so that adding it moved no other test's. */
		seed = v->seed;
		v->seed = v->vseed;
		for (int k = 0; k < nk && t->ok && !vhalt(v); k++) {
			struct vtest sub;

			if (k && now_s() > end) {
				t->partial = 1;
				break;
			}
			r->g[a].src = sd[0].buf[k % sd[0].n];
			r->g[b].dst = sd[1].buf[k % sd[1].n];
			int m = vram_copies(v, t, a, b, &sub);

			if (m >= 0)
				snprintf(t->error, sizeof(t->error), "free memory, buffer %d of %d on GPU %d and "
					 "%d of %d on GPU %d (%zu bytes each, allocated until none was left): %s: "
					 "%.800s", k % sd[0].n + 1, sd[0].n, a, k % sd[1].n + 1, sd[1].n, b, w,
					 vnames[m], sub.error);
			for (int i = 0; i < 2; i++)
				if (k < sd[i].n)
					sd[i].done = k + 1;
			t->rounds++;
		}
		v->vseed = v->seed;
		v->seed = seed;
		r->g[a].src = keep_src;
		r->g[b].dst = keep_dst;
		if (z.want)
			vram_swap(v, &z);
	}
	if (!v->hung) {	/* a stuck context: leave its memory alone */
		vram_give(v, &sd[0]);
		vram_give(v, &sd[1]);
	}
	free(z.want);
	free(z.got);
	free(z.img);
	t->vram_buf = w;
	for (int i = 0; i < 2; i++) {
		t->vram_cov[i] = (uint64_t)sd[i].done * w;
		t->vram_free[i] = sd[i].free;
		t->vram_nbuf[i] = sd[i].n;
	}
	if (!t->ok || t->skipped)
		return t->ok ? 0 : -1;
	if (dl_stop && (sd[0].done < sd[0].n || sd[1].done < sd[1].n))
		t->partial = 1;
	snprintf(t->path, sizeof(t->path), "SM loads and stores through the peer mappings of every "
		 "buffer tested");
	if (t->partial)
		snprintf(t->warn, sizeof(t->warn), "%s: %" PRIu64 " of %" PRIu64 " MiB on GPU %d and %"
			 PRIu64 " of %" PRIu64 " MiB on GPU %d tested, the rest NOT tested",
			 dl_stop ? "interrupted" : "the time budget (--vram-budget) ended",
			 t->vram_cov[0] >> 20, t->vram_free[0] >> 20, a, t->vram_cov[1] >> 20,
			 t->vram_free[1] >> 20, b);
	return 0;
}

int run_vram(struct vstate *v, struct vtest *t)
{
	t->ok = 1;
	t->engine = t->src;
	t->proven = 1;
	t->quick = v->vram_quick;
	if (!cu.cuMemGetInfo) {
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "the driver lacks cuMemGetInfo_v2");
		return 0;
	}
	return v->vram_quick ? vram_sample(v, t) : vram_sweep(v, t);
}
