// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's path test: the same peer copy timed with peer access off
 * and on against the link's line rate, and the path proof the device tests
 * take from it.
 */

#include <stdlib.h>

#include "verify.h"

/* The path of a device-memory test a -> b (ce, sm-*): 0, or -1 with t failed. */
int vdev_path(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst, m;
	char why[256];

	if (a == b) {
		snprintf(t->path, sizeof(t->path), "loopback within GPU %d: no peer path was used", a);
		return 0;
	}
	/* The GPU whose context must map the other's buffer. */
	m = vpeer_mapped(v, t->engine, t->engine == a ? r->g[b].dst : r->g[a].src, why, sizeof(why));
	if (m == 0) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error),
			 "no peer mapping: GPU %d has no access to GPU %d's memory "
			 "(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 0) although peer access was enabled; %s",
			 t->engine, t->engine == a ? b : a,
			 t->method == V_CE ? "cuMemcpyPeerAsync stages such a copy through host memory, "
			 "so right bytes would not show P2P" : "its kernels cannot reach the peer");
		return -1;
	}
	if (t->method == V_CE) {
		int att = -1;

		if (m < 0) {
			snprintf(t->path, sizeof(t->path), "%s", why);
			return 0;
		}
		if (cu.cuDeviceGetP2PAttribute &&
		    cu.cuDeviceGetP2PAttribute(&att, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED,
					       r->g[a].dev, r->g[b].dev) != CUDA_SUCCESS)
			att = -1;
		if (att == 0) {
			t->ok = 0;
			snprintf(t->error, sizeof(t->error),
				 "CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED %d->%d = 0: the driver stages "
				 "copies between these GPUs through host memory", a, b);
			return -1;
		}
		if (att == 1 && v->pm[a][b].done && v->pm[a][b].ok) {
			t->proven = 1;
			snprintf(t->path, sizeof(t->path), "peer copy measured (path test): %.1f GB/s with "
				 "peer access on against %.1f GB/s staged with it off, and GPU %d maps GPU %d's "
				 "buffer read-write", v->pm[a][b].on_gbps, v->pm[a][b].off_gbps, a, b);
		} else {
			snprintf(t->path, sizeof(t->path), att == 1 ?
				 "the driver reports a peer mapping (GPU %d maps GPU %d's buffer read-write, "
				 "CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED = 1); no measurement backs it (the "
				 "path test %s)" :
				 "GPU %d maps GPU %d's buffer, but the driver lacks cuDeviceGetP2PAttribute, "
				 "so staging is not excluded%s", a, b,
				 att != 1 ? "" : !v->pm[a][b].done ? "did not run" : "failed");
		}
		return 0;
	}
	/* An SM load or store reaches another GPU's memory only through a mapping. */
	t->proven = 1;
	snprintf(t->path, sizeof(t->path), "SM %s by GPU %d through its peer mapping of GPU %d's "
		 "memory (a kernel has no other way to reach it)%s",
		 t->method == V_SM_READ ? "loads" : "stores", t->engine, t->engine == a ? b : a,
		 m == 1 ? "; access flags read-write" : "");
	return 0;
}

#define PATH_MIN (4ULL << 20)	/* bytes per timed copy of the path test */
#define PATH_MAX_BYTES (32ULL << 20)
#define PATH_REPS 3
#define PATH_LAT_COPIES 100
#define PATH_STAGING_MARGIN 1.1	/* peer copies should beat staging by this */
/*
 * What only a direct path shows: latency well below the staged copies'.
 * On PCIe a staged copy (D2H over one link, H2D over the other, pipelined)
 * can come close to a peer copy's bandwidth (the field: Gen5 x8 28 GB/s on
 * against 24 off), or pass it where the host's memory is fast, but not its
 * latency (0.4-1.2 us on against ~14 us off). So bandwidth alone never
 * proves a path: a copy whose latency is not below this share of the
 * staged one's is staged, however fast.
 */
#define PATH_LAT_DIRECT 0.5
/* a direct path this much slower than staging fails (an ACS or IOMMU
 * detour: the field's 3 against 20 GB/s); nearer, the measure's noise
 * decides, and a WARN says so */
#define PATH_SLOWER 0.8
#define PATH_LINK_MARGIN LINK_OVER_MARGIN	/* and may not beat the line rate by more */

/* Read pd back and compare its n bytes with want; 0, or -1 with t failed. */
static int path_check(struct vstate *v, struct vtest *t, CUdeviceptr pd, size_t n, const uint8_t *want,
		      uint8_t *got, int on, const char *which)
{
	int a = t->src, b = t->dst;
	uint64_t off, nbad;
	uint8_t e, g8;

	VT(rig_cur(&v->r, b), "cuCtxSetCurrent");
	VT(cu.cuMemcpyDtoH(got, pd, n), "read back (cuMemcpyDtoH)");
	if (!pattern_compare(got, want, n, &off, &e, &g8, &nbad))
		return 0;
	t->ok = 0;
	t->mismatch = 1;
	t->offset = off;
	t->expected = e;
	t->got = g8;
	t->nbad = nbad;
	snprintf(t->error, sizeof(t->error), "GPU %d -> GPU %d, peer access %s, %s: first mismatch "
		 "at offset %" PRIu64 ": expected 0x%02x, got 0x%02x%s (%" PRIu64 " of %zu bytes "
		 "differ)", a, b, on ? "on" : "off", which, off, e, g8,
		 g8 == (POISON & 0xff) ? ", the poison: the write never landed" : "", nbad, n);
	return -1;
}

/* Poison n bytes at pd on GPU b and wait for it. 0, or -1 with t failed. */
static int path_poison(struct vstate *v, struct vtest *t, CUdeviceptr pd, size_t n)
{
	struct gpu *gb = &v->r.g[t->dst];

	VT(rig_cur(&v->r, t->dst), "cuCtxSetCurrent");
	VT(cu.cuMemsetD32Async(pd, POISON, n / 4, gb->s[1]), "poison destination (cuMemsetD32Async)");
	VW(t->dst, gb->s[1], "poisoning of the destination");
	return 0;
}

/*
 * One side of the path test: copies a -> b with cuMemcpyPeerAsync on a's
 * stream, a warm-up and PATH_REPS timed copies of n bytes (the best
 * counts), then PATH_LAT_COPIES 4-byte copies for the latency, each into
 * its own 4 bytes. Every copy's destination is poisoned before it and
 * checked after, so no copy counts whose bytes did not land. 0, or -1
 * with t failed.
 */
static int path_time(struct vstate *v, struct vtest *t, CUdeviceptr ps, CUdeviceptr pd, size_t n,
		     const uint8_t *want, uint8_t *got, int on, double *gbps, double *us)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst;
	struct gpu *ga = &r->g[a], *gb = &r->g[b];
	CUstream s = ga->s[0];
	const char *what = on ? "the copy with peer access on" : "the copy with peer access off";
	float ms = 0;

	*gbps = 0;
	for (int k = 0; k <= PATH_REPS; k++) {	/* k 0: the warm-up */
		char which[32];

		if (path_poison(v, t, pd, n))
			return -1;
		VT(rig_cur(r, a), "cuCtxSetCurrent");
		VT(cu.cuEventRecord(ga->ev_start, s), "cuEventRecord");
		VT(cu.cuMemcpyPeerAsync(pd, gb->ctx, ps, ga->ctx, n, s), "cuMemcpyPeerAsync");
		VT(cu.cuEventRecord(ga->ev_stop, s), "cuEventRecord");
		VW(a, s, what);
		if (k && cu.cuEventElapsedTime(&ms, ga->ev_start, ga->ev_stop) == CUDA_SUCCESS && ms > 0 &&
		    n / 1e9 / (ms / 1e3) > *gbps)
			*gbps = n / 1e9 / (ms / 1e3);
		snprintf(which, sizeof(which), k ? "timed copy %d" : "the warm-up copy", k);
		if (path_check(v, t, pd, n, want, got, on, which))
			return -1;
		t->bytes += n;
		t->rounds++;
	}
	if (path_poison(v, t, pd, 4 * PATH_LAT_COPIES))
		return -1;
	VT(rig_cur(r, a), "cuCtxSetCurrent");
	VT(cu.cuEventRecord(ga->ev_start, s), "cuEventRecord");
	for (int k = 0; k < PATH_LAT_COPIES; k++)
		VT(cu.cuMemcpyPeerAsync(pd + 4 * k, gb->ctx, ps + 4 * k, ga->ctx, 4, s), "cuMemcpyPeerAsync");
	VT(cu.cuEventRecord(ga->ev_stop, s), "cuEventRecord");
	VW(a, s, "the small copies");
	*us = cu.cuEventElapsedTime(&ms, ga->ev_start, ga->ev_stop) == CUDA_SUCCESS ?
	      ms * 1e3 / PATH_LAT_COPIES : 0;
	if (path_check(v, t, pd, 4 * PATH_LAT_COPIES, want, got, on, "the 4-byte copies"))
		return -1;
	t->bytes += 4 * PATH_LAT_COPIES;
	return 0;
}

/*
 * path a -> b: the same copy timed with peer access off (the driver stages
 * it through host memory) and on; the data checked both times. Peer copies
 * no faster than staging (in bandwidth and latency), slower than staging,
 * or faster than the link's line rate fail; a direct path (by latency)
 * barely faster than staging warns.
 */
int run_path(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst, rc = -1;
	size_t n = v->size < PATH_MIN ? PATH_MIN : v->size > PATH_MAX_BYTES ? PATH_MAX_BYTES : v->size;
	CUdeviceptr ps = 0, pd = 0;
	uint8_t *want = NULL, *got = NULL;
	double on_gbps = 0, on_us = 0, off_gbps = 0, off_us = 0;
	int direct;
	CUresult cr;
	const struct linkrate *l = &v->link;
	char rate[160];

	t->ok = 1;
	t->engine = a;
	n &= ~(size_t)15;
	want = malloc(n);
	got = malloc(n);
	if (!want || !got) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "cannot allocate 2 x %zu bytes of host memory", n);
		goto out;
	}
	pattern_fill(want, n, v->seed ^ 0x7061746800000000ULL);
	cr = rig_cur(r, a);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemAlloc(&ps, n);
	if (cr == CUDA_SUCCESS)
		cr = rig_cur(r, b);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemAlloc(&pd, n);
	if (cr != CUDA_SUCCESS) {
		vfail(t, "cuMemAlloc (the path test's buffers)", cr);
		goto out;
	}
	cr = rig_cur(r, a);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemcpyHtoDAsync(ps, want, n, r->g[a].s[1]);
	if (cr != CUDA_SUCCESS) {
		vfail(t, "upload pattern (cuMemcpyHtoDAsync)", cr);
		goto out;
	}
	if (vwait(v, t, a, r->g[a].s[1], NULL, "upload of the pattern") != CUDA_SUCCESS) {
		if (!t->hung)
			snprintf(t->error, sizeof(t->error), "upload of the pattern failed on GPU %d", a);
		t->ok = 0;
		goto out;
	}
	/* Peer access off both ways: cuMemcpyPeerAsync stages through host memory. */
	cr = rig_peer(r, a, b, 0);
	if (cr == CUDA_SUCCESS)
		cr = rig_peer(r, b, a, 0);
	if (cr != CUDA_SUCCESS) {
		vfail(t, "cuCtxDisablePeerAccess", cr);
		goto on;
	}
	if (path_time(v, t, ps, pd, n, want, got, 0, &off_gbps, &off_us) && v->hung)
		goto out;	/* a stuck context: touch nothing more */
on:
	cr = rig_peer(r, a, b, 1);
	if (cr == CUDA_SUCCESS)
		cr = rig_peer(r, b, a, 1);
	if (cr != CUDA_SUCCESS) {
		if (t->ok)
			vfail(t, "cuCtxEnablePeerAccess (again, after the copy with peer access off)", cr);
		goto out;
	}
	if (!t->ok || path_time(v, t, ps, pd, n, want, got, 1, &on_gbps, &on_us))
		goto out;
	t->gbps = on_gbps;
	t->off_gbps = off_gbps;
	t->on_us = on_us;
	t->off_us = off_us;
	if (l->kind != LINK_UNKNOWN)
		snprintf(rate, sizeof(rate), "%.0f%% of %s, %.1f GB/s", 100 * on_gbps / l->gbps, l->label,
			 l->gbps);
	else
		snprintf(rate, sizeof(rate), "line rate unknown: %.120s", l->why);
	direct = on_us > 0 && off_us > 0 && on_us <= PATH_LAT_DIRECT * off_us;
	if (!direct) {
		/* only a direct path's latency is far below staging's; bandwidth
		 * alone (a staged copy near or above the link's) proves nothing */
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "P2P works at staging speed: GPU %d -> GPU %d copies "
			 "%.1f GB/s with peer access on, %.1f GB/s with it off (%s); latency %.1f us on, "
			 "%.1f us off (%.2fx, a direct path is below %.1fx): the copies take no direct path",
			 a, b, on_gbps, off_gbps, rate, on_us, off_us, off_us > 0 ? on_us / off_us : 0,
			 PATH_LAT_DIRECT);
		goto out;
	}
	if (on_gbps < PATH_SLOWER * off_gbps) {
		/* a direct path that loses to staging: P2P makes copies slower */
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "P2P slower than staging: GPU %d -> GPU %d copies "
			 "%.1f GB/s with peer access on, %.1f GB/s with it off (%s); latency %.1f us on, "
			 "%.1f us off: a direct path, but slower than copies staged through host memory "
			 "(an ACS or IOMMU detour, or a narrow link)", a, b, on_gbps, off_gbps, rate,
			 on_us, off_us);
		goto out;
	}
	if (l->kind != LINK_UNKNOWN && on_gbps > PATH_LINK_MARGIN * l->gbps) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "faster than the link: GPU %d -> GPU %d copied "
			 "%.1f GB/s over %s (%.1f GB/s): the data did not cross it (it stayed in one "
			 "GPU's memory, or the link is misreported)", a, b, on_gbps, l->label, l->gbps);
		goto out;
	}
	if (l->kind == LINK_UNKNOWN && l->ceiling > 0 && on_gbps > PATH_LINK_MARGIN * l->ceiling) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "faster than any link: GPU %d -> GPU %d copied "
			 "%.1f GB/s with the line rate unknown, above %s (%.1f GB/s): the data did not "
			 "cross a link (it stayed in one GPU's memory)", a, b, on_gbps, l->ceiling_label,
			 l->ceiling);
		goto out;
	}
	t->proven = 1;
	snprintf(t->path, sizeof(t->path), "GPU %d -> GPU %d: %.1f GB/s with peer access on (%s), "
		 "%.1f GB/s off (%.1fx); latency %.1f us on, %.1f us off", a, b, on_gbps, rate, off_gbps,
		 off_gbps > 0 ? on_gbps / off_gbps : 0, on_us, off_us);
	if (on_gbps < PATH_STAGING_MARGIN * off_gbps)
		snprintf(t->warn, sizeof(t->warn), "a direct path (latency %.2fx the staged copies'), "
			 "but only %.2fx the staged bandwidth: the link is the limit, or it is shared",
			 on_us / off_us, on_gbps / off_gbps);
	rc = 0;
out:
	if (!v->hung) {
		if (pd && rig_cur(r, b) == CUDA_SUCCESS)
			cu.cuMemFree(pd);
		if (ps && rig_cur(r, a) == CUDA_SUCCESS)
			cu.cuMemFree(ps);
	}
	v->pm[a][b].done = 1;
	v->pm[a][b].ok = t->ok;
	v->pm[a][b].on_gbps = on_gbps;
	v->pm[a][b].off_gbps = off_gbps;
	v->pm[a][b].on_us = on_us;
	v->pm[a][b].off_us = off_us;
	free(want);
	free(got);
	return rc;
}
