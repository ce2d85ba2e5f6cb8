// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's managed-memory tests: um-read, um-write, um-prefetch,
 * um-fault through UVM's peer mappings and migrations.
 */

#include "verify.h"

/*
 * Managed memory. The managed buffer v->um (v->total bytes, data at GUARD)
 * is filled by the host, placed on a GPU with cuMemPrefetchAsync, then
 * touched by the other one. Every readback goes through a plain device
 * buffer (cuMemAlloc) of the GPU that holds or received the data, so the
 * check sees what that GPU's memory holds.
 */
static uint8_t *um_host(CUdeviceptr p)
{
	return (uint8_t *)(uintptr_t)p;
}

/* Move the managed buffer to GPU g, or to the host (g < 0; on GPU -1 - g's stream). */
static int um_prefetch(struct vstate *v, struct vtest *t, int g)
{
	struct rig *r = &v->r;
	int sg = g >= 0 ? g : -1 - g;

	VT(rig_cur(r, sg), "cuCtxSetCurrent");
	VT(cu.cuMemPrefetchAsync(v->um, v->total, g >= 0 ? r->g[g].dev : CU_DEVICE_CPU,
				 r->g[sg].s[0]), "cuMemPrefetchAsync");
	VW(sg, r->g[sg].s[0], "cuMemPrefetchAsync");
	return 0;
}

/* SetPreferredLocation(owner) + SetAccessedBy(accessor), or unset both. */
static CUresult um_advise(struct vstate *v, int owner, int accessor, int set)
{
	struct rig *r = &v->r;
	CUresult cr;

	cr = cu.cuMemAdvise(v->um, v->total, set ? CU_MEM_ADVISE_SET_PREFERRED_LOCATION :
			    CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, r->g[owner].dev);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemAdvise(v->um, v->total, set ? CU_MEM_ADVISE_SET_ACCESSED_BY :
				    CU_MEM_ADVISE_UNSET_ACCESSED_BY, r->g[accessor].dev);
	return cr;
}

/*
 * Do the range's attributes still say what the advice and the prefetch put
 * there: preferred location owner, accessed by accessor, last prefetched to
 * owner? 1 yes, 0 no (why), -1 not reported (why).
 */
static int um_held(struct vstate *v, int owner, int accessor, char *why, size_t len)
{
	struct rig *r = &v->r;
	int pref = CU_DEVICE_INVALID, last = CU_DEVICE_INVALID, acc[P2P_MAX_GPUS], found = 0;
	CUresult cr;

	if (!cu.cuMemRangeGetAttribute) {
		snprintf(why, len, "the driver lacks cuMemRangeGetAttribute");
		return -1;
	}
	cr = cu.cuMemRangeGetAttribute(&pref, sizeof(pref), CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
				       v->um, v->total);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemRangeGetAttribute(&last, sizeof(last),
					       CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION,
					       v->um, v->total);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemRangeGetAttribute(acc, sizeof(acc), CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
					       v->um, v->total);
	if (cr != CUDA_SUCCESS) {
		snprintf(why, len, "cuMemRangeGetAttribute: %s", cu_errstr(cr));
		return -1;
	}
	for (int k = 0; k < P2P_MAX_GPUS && acc[k] != CU_DEVICE_INVALID; k++)
		found |= acc[k] == r->g[accessor].dev;
	if (pref != r->g[owner].dev || last != r->g[owner].dev || !found) {
		snprintf(why, len, "preferred location %d, last prefetch %d, accessed by GPU %d: %s",
			 pref, last, accessor, found ? "yes" : "no");
		return 0;
	}
	return 1;
}

/* Copy total bytes of the managed buffer into GPU g's plain dst with a kernel on g. */
static int um_readback(struct vstate *v, struct vtest *t, int g)
{
	struct rig *r = &v->r;

	VT(rig_cur(r, g), "cuCtxSetCurrent");
	VT(sm_launch(r, g, r->g[g].s[0], K_READ, &v->sm, r->g[g].dst, v->um, v->total),
	   "read back on the destination GPU (kernel)");
	VW(g, r->g[g].s[0], "read back on the destination GPU");
	return 0;
}

/*
 * One managed-memory test; data moves from t->src to t->dst:
 *   um-read a->b     pages on a (preferred location a, accessed by b); a
 *                    kernel on b loads them through b's mapping of a's memory
 *   um-write a->b    pages on b (preferred b, accessed by a); a kernel on a
 *                    stores into them through a's mapping; b reads them back
 *   um-prefetch a->b pages on a, cuMemPrefetchAsync to b (a copy between
 *                    the GPUs); b reads them back
 *   um-fault a->b    pages on b, no advice; a kernel on a stores into them
 *                    (page faults: UVM migrates or maps); b reads them back
 */
static int run_um_test(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst;
	size_t n = v->size, total = v->total;
	struct gpu *ga = &r->g[a], *gb = &r->g[b], *ge;
	int mapped = t->method == V_UM_READ || t->method == V_UM_WRITE;
	int owner = t->method == V_UM_READ || t->method == V_UM_PREFETCH ? a : b;
	int accessor = owner == a ? b : a, held = 0;
	char why[384];
	CUstream s;
	float ms = 0;

	t->ok = 1;
	t->engine = t->method == V_UM_READ || t->method == V_UM_PREFETCH ? b : a;
	ge = &r->g[t->engine];
	s = ge->s[0];
	if (!ga->kernels_ok || !gb->kernels_ok) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "kernels not loaded on GPU %d: %.900s",
			 !ge->kernels_ok ? t->engine : t->engine == a ? b : a,
			 r->jitlog[0] ? r->jitlog : "unknown reason");
		return -1;
	}
	vimages(v, n);
	/* The host writes the managed pages: the source image for a read, the
	 * expected image for a migration (it moves as a whole), poison where a
	 * GPU is going to write. */
	if (um_prefetch(v, t, -1 - a))
		return -1;
	if (t->method == V_UM_PREFETCH)
		memcpy(um_host(v->um), v->want, total);
	else if (owner == a)
		memcpy(um_host(v->um), v->img, total);
	else
		memset(um_host(v->um), (int)(POISON & 0xff), total);
	if (mapped)
		VT(um_advise(v, owner, accessor, 1), "cuMemAdvise");
	if (um_prefetch(v, t, owner))
		return -1;
	VT(rig_cur(r, t->engine), "cuCtxSetCurrent");
	if (owner == a) {
		VT(cu.cuMemsetD32Async(gb->dst, POISON, total / 4, s), "poison destination (cuMemsetD32Async)");
	} else {
		VT(cu.cuMemcpyHtoDAsync(ga->src, v->img, total, s), "upload pattern (cuMemcpyHtoDAsync)");
	}
	VW(t->engine, s, owner == a ? "poisoning of the destination" : "upload of the pattern");
	if (mapped) {
		int m = vpeer_mapped(v, accessor, r->g[owner].src, why, sizeof(why));
		int h = m == 0 ? 0 : um_held(v, owner, accessor, why, sizeof(why));

		if (m == 0 || h == 0) {
			t->ok = 0;
			if (m == 0)
				snprintf(t->error, sizeof(t->error),
					 "no peer mapping: GPU %d has no access to GPU %d's memory "
					 "(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 0), so UVM can only migrate or "
					 "stage the pages", accessor, owner);
			else
				snprintf(t->error, sizeof(t->error),
					 "before the access: the advice did not hold: %s", why);
			return -1;
		}
		held = m == 1 && h == 1;
		if (!held)
			snprintf(t->path, sizeof(t->path), "%s", why);
	}
	VT(cu.cuEventRecord(ge->ev_start, s), "cuEventRecord");
	switch (t->method) {
	case V_UM_READ:
		VT(sm_launch(r, b, s, K_READ, &v->sm, gb->dst + GUARD, v->um + GUARD, n), "launch p2p_read");
		break;
	case V_UM_PREFETCH:
		VT(cu.cuMemPrefetchAsync(v->um, total, gb->dev, s), "cuMemPrefetchAsync");
		break;
	default:
		VT(sm_launch(r, a, s, K_WRITE, &v->sm, v->um + GUARD, ga->src + GUARD, n), "launch p2p_write");
	}
	VT(cu.cuEventRecord(ge->ev_stop, s), "cuEventRecord");
	VW(t->engine, s, t->method == V_UM_PREFETCH ? "the migration" : "the kernel");
	if (cu.cuEventElapsedTime(&ms, ge->ev_start, ge->ev_stop) == CUDA_SUCCESS && ms > 0)
		t->gbps = (t->method == V_UM_PREFETCH ? total : n) / 1e9 / (ms / 1e3);
	if (mapped && held) {
		/* After the access: still where the advice put them. */
		if (um_held(v, owner, accessor, why, sizeof(why)) == 0) {
			t->ok = 0;
			snprintf(t->error, sizeof(t->error), "after the access: the pages' attributes "
				 "changed (%s): UVM did not keep them where the advice put them", why);
			return -1;
		}
		/* Attributes are not residency: UVM may still move the pages
		 * through the host while they keep saying what the advice set
		 * (at a tenth of the SM rate), and p2pctl has no rate to tell
		 * that apart by. So the mapping is reported, never proven. */
		snprintf(t->path, sizeof(t->path),
			 "GPU %d maps GPU %d's memory; preferred location GPU %d, accessed by GPU %d "
			 "and last prefetch to GPU %d held before and after, but CUDA reports no "
			 "per-page residency, so pages served through the host are not excluded",
			 accessor, owner, owner, accessor, owner);
	}
	if (!mapped)
		snprintf(t->path, sizeof(t->path), "UVM chooses how it %s (peer copy, host "
			 "staging or a mapping); CUDA does not say which",
			 t->method == V_UM_PREFETCH ? "migrates" : "serves the faults");
	if (t->method != V_UM_READ && um_readback(v, t, b))
		return -1;
	if (mapped)
		VT(um_advise(v, owner, accessor, 0), "cuMemAdvise (unset)");
	if (vreadback(v, t, b, gb->dst) || vcheck_got(v, t, n))
		return -1;
	t->bytes = n;
	t->rounds = 1;
	return 0;
}

/* Why the managed-memory tests cannot run on pair a-b, or NULL. */
static const char *um_skip_reason(struct vstate *v, int a, int b, char *buf, size_t len)
{
	struct rig *r = &v->r;
	const int g2[2] = { a, b };

	if (v->no_managed)
		return "--no-managed";
	if (!(v->tests & (((1u << V_UM_COUNT) - 1) << V_UM_READ)))
		return "not in --tests";
	if (a == b)
		return "loopback (managed tests need two GPUs)";
	if (cu_missing_optional()) {
		snprintf(buf, len, "the CUDA driver lacks %s", cu_missing_optional());
		return buf;
	}
	for (int k = 0; k < 2; k++) {
		const struct gpu *g = &r->g[g2[k]];

		if (!g->managed) {
			snprintf(buf, len, "GPU %d has no managed memory "
				 "(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 0)", g2[k]);
			return buf;
		}
		if (!g->concurrent_managed) {
			snprintf(buf, len, "GPU %d cannot share managed memory with another "
				 "processor (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 0)",
				 g2[k]);
			return buf;
		}
	}
	for (int k = 0; k < 2; k++) {
		size_t fr = 0, tot = 0;

		if (rig_cur(r, g2[k]) != CUDA_SUCCESS ||
		    cu.cuMemGetInfo(&fr, &tot) != CUDA_SUCCESS)
			continue;
		/* Never ask UVM for more than half of what is free. */
		if (v->total > fr / 2) {
			snprintf(buf, len, "%zu bytes of managed memory is more than half of the "
				 "%zu bytes free on GPU %d; use a smaller --size",
				 v->total, fr, g2[k]);
			return buf;
		}
	}
	return NULL;
}

/*
 * Run the managed-memory tests of pair a-b (peer access on both ways),
 * appending them to tests[]. um-read runs first, both ways: if a GPU cannot
 * read the other's pages through its mapping, the mapping is wrong, and
 * writes or migrations through the same peer path could land in the wrong
 * GPU's memory, so the other tests are not run.
 */
void um_pair(struct vstate *v, int a, int b, struct vtest *tests, int *nt, struct umpair *u)
{
	struct rig *r = &v->r;
	const char *why;
	CUresult cr;
	int gate = 0;

	memset(u, 0, sizeof(*u));
	why = um_skip_reason(v, a, b, u->reason, sizeof(u->reason));
	if (why) {
		if (why != u->reason)
			snprintf(u->reason, sizeof(u->reason), "%s", why);
		u->status = UM_SKIPPED;
		/* tests the user turned off (--no-managed, --tests) are not "skipped" */
		u->nskip = a == b || v->no_managed || !strcmp(why, "not in --tests") ? 0 : V_UM_COUNT * 2;
		return;
	}
	cr = rig_cur(r, a);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemAllocManaged(&v->um, v->total, CU_MEM_ATTACH_GLOBAL);
	if (cr != CUDA_SUCCESS) {
		v->um = 0;
		u->status = UM_FAIL;
		snprintf(u->reason, sizeof(u->reason), "cuMemAllocManaged(%zu): %s", v->total,
			 cu_errstr(cr));
		u->nfail = 1;
		return;
	}
	for (int m = V_UM_READ; m < V_CONCURRENT && !vhalt(v); m++) {
		if (!(v->tests & (1u << m)))
			continue;
		for (int d = 0; d < 2 && !vhalt(v); d++) {
			struct vtest *t = &tests[(*nt)++];
			int stop_before = dl_stop, bad;

			memset(t, 0, sizeof(*t));
			t->src = d ? b : a;
			t->dst = d ? a : b;
			t->method = m;
			if ((gate && m != V_UM_READ) || vlost_skip(v, t, (const int[]){ a, b }, 2)) {
				t->skipped = 1;
				if (!t->error[0])
					snprintf(t->error, sizeof(t->error), "not run: um-read failed");
				u->nskip++;
				vdone(v, t, stop_before);
				continue;
			}
			bad = run_um_test(v, t);
			vdone(v, t, stop_before);
			if (t->skipped) {
				u->nskip++;
			} else if (bad) {
				/* A guard overwrite is the kernel's own overrun, not the
				 * peer path: it does not stop the other tests. */
				if (m == V_UM_READ && t->mismatch < 2)
					gate = 1;
				/* Leave no advice behind for the next test. */
				if (!v->hung && (m == V_UM_READ || m == V_UM_WRITE))
					um_advise(v, m == V_UM_READ ? t->src : t->dst,
						  m == V_UM_READ ? t->dst : t->src, 0);
				u->nfail++;
			} else {
				u->nok++;
			}
			if (m == V_UM_READ && d == 1 && gate) {
				snprintf(u->reason, sizeof(u->reason),
					 "um-read failed, so the other managed tests were not run: "
					 "writes and migrations over the same peer path could land "
					 "in the wrong GPU's memory");
			}
		}
	}
	if (v->hung) {
		u->status = UM_FAIL;
		return;
	}
	rig_cur(r, a);
	cr = cu.cuMemFree(v->um);
	v->um = 0;
	if (cr != CUDA_SUCCESS && !u->nfail) {
		u->nfail++;
		snprintf(u->reason, sizeof(u->reason), "cuMemFree (managed): %s", cu_errstr(cr));
	}
	u->status = u->nfail ? UM_FAIL : UM_OK;
}
