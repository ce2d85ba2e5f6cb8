// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's concurrent test: every directed pair at once for --seconds,
 * a fresh pattern and poison every round.
 */

#include "verify.h"

/* The load of the concurrent test: 0, or -1 with the failing test's error set. */
/* Round seed of GPU g's source in the concurrent test. */
static uint64_t conc_seed(uint64_t seed, int g)
{
	return seed + ((uint64_t)g << 40);
}

/*
 * One round's check: every destination read back, each directed pair's
 * three slices compared with its source's pattern of this round. 0, or -1
 * (a test failed, or a CUDA error on *failed).
 */
static int conc_check(struct vstate *v, struct vtest *tests, int first, int nt, const int *idx,
		      size_t slice, uint64_t seed, int round, struct vtest **failed)
{
	struct rig *r = &v->r;
	static const char *const part[3] = { "copy-engine", "SM-store", "SM-load" };
	int bad = 0;

	for (int b = 0; b < r->n; b++) {
		int have = 0;
		struct vtest *t;

		for (int k = first; k < nt; k++)
			have |= tests[k].dst == b;
		if (!have)
			continue;
		*failed = t = &tests[first];
		if (vreadback(v, t, b, r->g[b].dst))
			return -1;
		for (int k = first; k < nt; k++) {
			struct vtest *p = &tests[k];
			int a = p->src, j = idx[a] - (idx[a] > idx[b]);
			size_t off = GUARD + (size_t)j * 3 * slice;

			if (p->dst != b || !p->ok)
				continue;
			pattern_fill(v->want, v->size, conc_seed(seed, a));
			p->rounds = round;
			p->bytes += 3 * slice;
			for (int q = 0; q < 3 && p->ok; q++)
				if (pattern_compare(v->got + off + q * slice, v->want + off - GUARD + q * slice,
						    slice, &p->offset, &p->expected, &p->got, &p->nbad)) {
					p->ok = 0;
					p->mismatch = 1;
					bad = 1;
					snprintf(p->error, sizeof(p->error),
						 "%s slice: first mismatch at offset %" PRIu64 " (0x%" PRIx64
						 "): expected 0x%02x, got 0x%02x%s (%" PRIu64 " of %zu bytes "
						 "differ) in round %d of all pairs at once", part[q],
						 p->offset, p->offset, p->expected, p->got,
						 p->got == (POISON & 0xff) ? ", the poison: the write never landed" : "",
						 p->nbad, slice, round);
				}
		}
	}
	return bad ? -1 : 0;
}

/*
 * Rounds until v->seconds have passed or a round fails: each round gives
 * every source a new pattern (a new seed) and poisons every destination,
 * runs every directed pair at once, and checks everything, so a loss in any
 * round shows and a later round cannot repair it.
 */
static int conc_loop(struct vstate *v, struct vtest *tests, int first, int nt, const int *idx,
		     size_t slice, int *iters, struct vtest **failed)
{
	struct rig *r = &v->r;
	double end = now_s() + v->seconds;
	struct vtest *t = &tests[first];

	*failed = t;
	do {
		uint64_t seed = v->seed;

		v->seed += 0x100000000ULL;
		for (int g = 0; g < r->n; g++) {
			if (idx[g] < 0)
				continue;
			memset(v->img, SRC_TAIL, v->total);
			pattern_fill(v->img + GUARD, v->size, conc_seed(seed, g));
			*failed = t = &tests[first];
			VT(rig_cur(r, g), "cuCtxSetCurrent");
			VT(cu.cuMemcpyHtoDAsync(r->g[g].src, v->img, v->total, r->g[g].s[1]),
			   "upload pattern (cuMemcpyHtoDAsync)");
			VT(cu.cuMemsetD32Async(r->g[g].dst, POISON, v->total / 4, r->g[g].s[1]),
			   "poison destination (cuMemsetD32Async)");
			VW(g, r->g[g].s[1], "upload of the pattern");
		}
		for (int k = first; k < nt; k++) {
			struct vtest *p = &tests[k];
			int a = p->src, b = p->dst, j = idx[a] - (idx[a] > idx[b]);
			size_t off = GUARD + (size_t)j * 3 * slice;

			*failed = t = p;
			VT(rig_cur(r, a), "cuCtxSetCurrent");
			VT(cu.cuMemcpyPeerAsync(r->g[b].dst + off, r->g[b].ctx, r->g[a].src + off,
						r->g[a].ctx, slice, r->g[a].s[2]), "cuMemcpyPeerAsync");
			VT(sm_launch(r, a, r->g[a].s[0], K_WRITE, &v->sm, r->g[b].dst + off + slice,
				     r->g[a].src + off + slice, slice), "launch p2p_write");
			VT(rig_cur(r, b), "cuCtxSetCurrent");
			VT(sm_launch(r, b, r->g[b].s[3], K_READ, &v->sm, r->g[b].dst + off + 2 * slice,
				     r->g[a].src + off + 2 * slice, slice), "launch p2p_read");
		}
		for (int k = first; k < nt; k++) {
			*failed = t = &tests[k];
			VW(t->src, r->g[t->src].s[2], "the concurrent copy-engine copies");
			VW(t->src, r->g[t->src].s[0], "the concurrent SM stores");
			VW(t->dst, r->g[t->dst].s[3], "the concurrent SM loads");
		}
		(*iters)++;
		if (conc_check(v, tests, first, nt, idx, slice, seed, *iters, failed))
			return (*failed)->ok ? 0 : 1;
	} while (now_s() < end && !dl_stop);
	for (int k = first; k < nt && dl_stop; k++)
		tests[k].cut = 1;
	return 0;
}

/*
 * concurrent: every directed pair of the selected pairs at once, both ways,
 * for v->seconds: into GPU b's destination, each source a has three slices,
 * one written by a's copy engine, one by a's SM stores, one read by b's SM
 * loads. Every round is checked; one result per directed pair.
 */
int run_concurrent(struct vstate *v, int sel[P2P_MAX_GPUS][P2P_MAX_GPUS], struct vtest *tests,
			  int *nt, int maxt)
{
	struct rig *r = &v->r;
	int n = r->n, idx[P2P_MAX_GPUS], ng = 0, first = *nt, iters = 0, rc;
	size_t slice;
	struct vtest dummy = { .method = V_CONCURRENT }, *t = &dummy;

	for (int i = 0; i < n; i++) {
		idx[i] = -1;
		for (int j = 0; j < n; j++)
			if (i != j && sel[i][j] && r->peer_on[i][j] && r->peer_on[j][i]) {
				idx[i] = ng++;
				break;
			}
	}
	if (ng < 2)
		return 0;
	if (v->out) {
		fprintf(v->out, "concurrent: every directed pair at once, %.3g s\n", v->seconds);
		fflush(v->out);
	}
	slice = (v->size / (3 * (size_t)(ng - 1))) & ~(size_t)15;
	for (int a = 0; a < n; a++)
		for (int b = 0; b < n; b++) {
			if (a == b || idx[a] < 0 || idx[b] < 0 || !sel[a][b] || !r->peer_on[a][b] ||
			    !r->peer_on[b][a] || *nt >= maxt)
				continue;
			t = &tests[(*nt)++];
			memset(t, 0, sizeof(*t));
			t->method = V_CONCURRENT;
			t->src = a;
			t->dst = b;
			t->engine = a;
			t->ok = 1;
			t->proven = 1;
			snprintf(t->path, sizeof(t->path), "copy engine of GPU %d, SM stores of GPU %d and "
				 "SM loads of GPU %d through the peer mappings, all pairs at once", a, a, b);
			if (!slice) {
				t->skipped = 1;
				snprintf(t->error, sizeof(t->error), "--size is below the %d bytes it needs",
					 48 * (ng - 1));
			}
		}
	if (!slice)
		return 0;
	t = &tests[first];
	for (int g = 0; g < n; g++)
		if (idx[g] >= 0 && !r->g[g].kernels_ok) {
			for (int k = first; k < *nt; k++) {
				tests[k].ok = 0;
				snprintf(tests[k].error, sizeof(tests[k].error),
					 "kernels not loaded on GPU %d: %.900s", g,
					 r->jitlog[0] ? r->jitlog : "unknown reason");
			}
			return -1;
		}
	rc = conc_loop(v, tests, first, *nt, idx, slice, &iters, &t);
	if (rc < 0) {
		struct vtest w = *t;

		/* Let what is still queued finish before anything else runs. */
		for (int g = 0; g < n && !v->hung; g++)
			for (int q = 0; q < RIG_STREAMS && idx[g] >= 0 && !v->hung; q++)
				vwait(v, &w, g, r->g[g].s[q], NULL, "the concurrent test's other copies");
		if (w.hung)
			*t = w;
		for (int k = first; k < *nt; k++)
			if (tests[k].ok) {
				tests[k].ok = 0;
				snprintf(tests[k].error, sizeof(tests[k].error),
					 "not checked: the concurrent run failed on %d->%d", t->src, t->dst);
			}
		return -1;
	}
	for (int k = first; k < *nt; k++)
		tests[k].rounds = iters;
	return rc ? -1 : 0;
}
