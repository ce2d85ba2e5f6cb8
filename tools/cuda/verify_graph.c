// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's graph test: ce, sm-write and sm-read captured in CUDA graphs
 * and replayed.
 */

#include "verify.h"

/*
 * graph a -> b: one CUDA graph captured on GPU a's stream (a copy-engine
 * cuMemcpyDtoDAsync of the first third, p2p_write of the second), one on GPU b's (p2p_read of
 * the rest), each replayed GRAPH_REPLAYS times with a new pattern uploaded
 * and the destination poisoned before every replay.
 */
struct graphs {
	CUgraph g[2];
	CUgraphExec x[2];
};

static int graph_capture(struct vstate *v, struct vtest *t, struct graphs *G, int k, size_t n)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst, g = k ? b : a;
	struct gpu *ga = &r->g[a], *gb = &r->g[b];
	CUstream s = r->g[g].s[0];
	size_t c = (n / 3) & ~(size_t)15;
	CUresult cr, ce = CUDA_SUCCESS;

	VT(rig_cur(r, g), "cuCtxSetCurrent");
	VT(cu.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
	if (k == 0) {
		/* cuMemcpyPeerAsync cannot be captured (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
		 * on 580.159.04); a unified-address DtoD copy can, and is the same CE
		 * peer copy once peer access is on. */
		if (c)
			ce = cu.cuMemcpyDtoDAsync(gb->dst + GUARD, ga->src + GUARD, c, s);
		if (ce == CUDA_SUCCESS && c)
			ce = sm_launch(r, a, s, K_WRITE, &v->sm, gb->dst + GUARD + c, ga->src + GUARD + c, c);
	} else {
		ce = sm_launch(r, b, s, K_READ, &v->sm, gb->dst + GUARD + 2 * c, ga->src + GUARD + 2 * c,
			       n - 2 * c);
	}
	cr = cu.cuStreamEndCapture(s, &G->g[k]);
	VT(ce, k ? "capture p2p_read" : "capture cuMemcpyDtoDAsync + p2p_write");
	VT(cr, "cuStreamEndCapture");
	VT(cu.cuGraphInstantiateWithFlags(&G->x[k], G->g[k], 0), "cuGraphInstantiateWithFlags");
	return 0;
}

static int graph_replays(struct vstate *v, struct vtest *t, struct graphs *G, size_t n)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst;

	for (int k = 0; k < 2; k++)
		if (graph_capture(v, t, G, k, n))
			return -1;
	for (int rep = 0; rep < GRAPH_REPLAYS; rep++) {
		vimages(v, n);
		if (vstage(v, t, a, b, 0))
			return -1;
		VT(rig_cur(r, a), "cuCtxSetCurrent");
		VT(cu.cuGraphLaunch(G->x[0], r->g[a].s[0]), "cuGraphLaunch");
		VT(rig_cur(r, b), "cuCtxSetCurrent");
		VT(cu.cuGraphLaunch(G->x[1], r->g[b].s[0]), "cuGraphLaunch");
		{
			char wa[64], wb[64];

			snprintf(wa, sizeof(wa), "the replay of GPU %d's graph", a);
			snprintf(wb, sizeof(wb), "the replay of GPU %d's graph", b);
			VW(a, r->g[a].s[0], wa);
			VW(b, r->g[b].s[0], wb);
		}
		if (vreadback(v, t, b, r->g[b].dst))
			return -1;
		if (vcheck_got(v, t, n)) {
			char e[1024];
			size_t c = (n / 3) & ~(size_t)15;
			const char *part = t->mismatch != 1 ? "" : t->offset < c ? " (the copy-engine node)" :
					   t->offset < 2 * c ? " (the SM-store node)" : " (the SM-load node)";

			snprintf(e, sizeof(e), "replay %d: %.900s%s", rep, t->error, part);
			snprintf(t->error, sizeof(t->error), "%s", e);
			return -1;
		}
		t->bytes += n;
		t->rounds++;
	}
	return 0;
}

int run_graph(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst, rc;
	size_t n = v->size < FLAG_MAX ? v->size : FLAG_MAX;
	struct graphs G = { { NULL, NULL }, { NULL, NULL } };

	t->ok = 1;
	t->engine = a;
	if (!cu.cuStreamBeginCapture || !cu.cuStreamEndCapture || !cu.cuGraphInstantiateWithFlags ||
	    !cu.cuGraphLaunch || !cu.cuGraphExecDestroy || !cu.cuGraphDestroy) {
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "the CUDA driver lacks the graph entry points "
			 "(cuStreamBeginCapture_v2, cuGraphInstantiateWithFlags: CUDA 11.4)");
		return 0;
	}
	if (!r->g[a].kernels_ok || !r->g[b].kernels_ok) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "kernels not loaded on GPU %d: %.900s",
			 !r->g[a].kernels_ok ? a : b, r->jitlog[0] ? r->jitlog : "unknown reason");
		return -1;
	}
	if (a != b) {
		char why[256];
		int m1 = vpeer_mapped(v, a, r->g[b].dst, why, sizeof(why));
		int m2 = vpeer_mapped(v, b, r->g[a].src, why, sizeof(why));

		if (m1 == 0 || m2 == 0) {
			t->ok = 0;
			snprintf(t->error, sizeof(t->error), "no peer mapping: GPU %d has no access to "
				 "GPU %d's memory (CU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 0) although peer "
				 "access was enabled", m1 == 0 ? a : b, m1 == 0 ? b : a);
			return -1;
		}
		t->proven = 1;
		snprintf(t->path, sizeof(t->path), "graph nodes: GPU %d's copy engine and SM stores, GPU "
			 "%d's SM loads, through the peer mappings", a, b);
	} else {
		snprintf(t->path, sizeof(t->path), "loopback within GPU %d: no peer path was used", a);
	}
	rc = graph_replays(v, t, &G, n);
	if (!v->hung)
		for (int k = 0; k < 2; k++) {
			if (G.x[k])
				cu.cuGraphExecDestroy(G.x[k]);
			if (G.g[k])
				cu.cuGraphDestroy(G.g[k]);
		}
	return rc;
}
