// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's copy tests: ce, sm-read and sm-write, and vram (the same
 * three at the bottom, middle and top of each GPU's free memory).
 */

#include "verify.h"

/* ce, sm-read, sm-write a -> b: two rounds (full size, then a byte tail). */
int run_copy(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst;
	struct gpu *ga = &r->g[a], *gb = &r->g[b], *ge;
	CUstream s;
	float ms = 0;

	t->ok = 1;
	t->engine = t->method == V_SM_READ ? b : a;
	ge = &r->g[t->engine];
	s = ge->s[0];
	if (t->method != V_CE && !ge->kernels_ok) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "kernels not loaded on GPU %d: %.900s",
			 t->engine, r->jitlog[0] ? r->jitlog : "unknown reason");
		return -1;
	}
	if (vdev_path(v, t))
		return -1;
	for (int round = 0; round < 2; round++) {
		size_t n = vround_size(v, round);

		vimages(v, n);
		if (vstage(v, t, a, b, 0))
			return -1;
		VT(rig_cur(r, t->engine), "cuCtxSetCurrent");
		VT(cu.cuEventRecord(ge->ev_start, s), "cuEventRecord");
		switch (t->method) {
		case V_CE:
			VT(cu.cuMemcpyPeerAsync(gb->dst + GUARD, gb->ctx, ga->src + GUARD, ga->ctx, n, s),
			   "cuMemcpyPeerAsync");
			break;
		case V_SM_READ:
			VT(sm_launch(r, b, s, K_READ, &v->sm, gb->dst + GUARD, ga->src + GUARD, n),
			   "launch p2p_read");
			break;
		case V_SM_WRITE:
			VT(sm_launch(r, a, s, K_WRITE, &v->sm, gb->dst + GUARD, ga->src + GUARD, n),
			   "launch p2p_write");
			break;
		}
		VT(cu.cuEventRecord(ge->ev_stop, s), "cuEventRecord");
		VW(t->engine, s, "the copy");
		if (round == 0 && cu.cuEventElapsedTime(&ms, ge->ev_start, ge->ev_stop) == CUDA_SUCCESS &&
		    ms > 0)
			t->gbps = n / 1e9 / (ms / 1e3);
		if (vreadback(v, t, b, gb->dst) || vcheck_got(v, t, n))
			return -1;
		t->bytes += n;
		t->rounds++;
	}
	return 0;
}

/*
 * vram a -> b: ce, sm-read and sm-write (both rounds of each) with a's
 * source and b's destination at the bottom, the middle and the top of each
 * GPU's free memory: allocated after a pad of none, half, and all of what
 * is free but the buffer and VRAM_MARGIN. CUDA does not say where memory
 * sits; with today's allocator a pad below makes it likely. A BAR1 window
 * that covers only the lower part of VRAM fails at the places above it.
 */
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

int run_vram(struct vstate *v, struct vtest *t)
{
	static const int ms[3] = { V_CE, V_SM_READ, V_SM_WRITE };
	struct rig *r = &v->r;
	int a = t->src, b = t->dst, gs[2] = { t->src, t->dst };
	CUdeviceptr keep_src = r->g[a].src, keep_dst = r->g[b].dst;
	uint64_t padmb[3][2] = { { 0 } }, seed;

	t->ok = 1;
	t->engine = a;
	t->proven = 1;
	if (!cu.cuMemGetInfo) {
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "the driver lacks cuMemGetInfo_v2");
		return 0;
	}
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
	for (int k = 0; k < 3 && t->ok && !t->skipped; k++) {
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
				/* as car: no memory is a skip, not a P2P failure */
				t->skipped = 1;
				snprintf(t->error, sizeof(t->error), "%s of free memory not tested: GPU %d ran "
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
		if (t->skipped) {
			;	/* the buffers allocated are freed below */
		} else if (cr != CUDA_SUCCESS) {
			vfail(t, what, cr);
		} else {
			r->g[a].src = buf[0];
			r->g[b].dst = buf[1];
			for (int m = 0; m < 3 && t->ok && !v->hung; m++) {
				memset(&sub, 0, sizeof(sub));
				sub.src = a;
				sub.dst = b;
				sub.method = ms[m];
				run_copy(v, &sub);
				t->bytes += sub.bytes;
				if (sub.ok)
					continue;
				take_failure(t, &sub);
				snprintf(t->error, sizeof(t->error), "%s of free memory (buffers above pads of %"
					 PRIu64 " MiB on GPU %d and %" PRIu64 " MiB on GPU %d): %s: %.800s",
					 vplace[k], padmb[k][0], a, padmb[k][1], b, vnames[ms[m]], sub.error);
			}
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
			 "place");
	memcpy(t->vram_mb, padmb, sizeof(padmb));
	return t->ok ? 0 : -1;
}
