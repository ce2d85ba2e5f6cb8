// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's copy tests: ce, sm-read and sm-write (verify_vram.c runs
 * them over free memory).
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
