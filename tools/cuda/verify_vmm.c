// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's vmm test: peer access through the CUDA virtual memory
 * API (cuMemCreate + cuMemMap + cuMemSetAccess), the path of NCCL's
 * P2P/CUMEM transport and of PyTorch's expandable segments. Its peer
 * mapping is made by cuMemSetAccess, not by cuCtxEnablePeerAccess, so a
 * driver can get one right and the other wrong.
 */

#include "verify.h"

/* One cuMemCreate allocation, mapped and readable-writable by two GPUs. */
struct vmm {
	CUmemGenericAllocationHandle h;
	CUdeviceptr p;
	size_t n;
	int mapped;
};

/* On owner's GPU, granted to owner and other. CUDA_SUCCESS or the error
 * of the call named in *what. */
static CUresult vmm_alloc(struct vstate *v, int owner, int other, struct vmm *m, const char **what)
{
	CUmemAllocationProp prop = { 0 };
	CUmemAccessDesc acc[2];
	size_t gran = 0;
	CUresult cr;

	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = v->r.g[owner].dev;
	*what = "cuMemGetAllocationGranularity";
	cr = cu.cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (cr != CUDA_SUCCESS)
		return cr;
	m->n = (v->total + gran - 1) / gran * gran;
	*what = "cuMemCreate";
	cr = cu.cuMemCreate(&m->h, m->n, &prop, 0);
	if (cr != CUDA_SUCCESS)
		return cr;
	*what = "cuMemAddressReserve";
	cr = cu.cuMemAddressReserve(&m->p, m->n, 0, 0, 0);
	if (cr != CUDA_SUCCESS)
		return cr;
	*what = "cuMemMap";
	cr = cu.cuMemMap(m->p, m->n, 0, m->h, 0);
	if (cr != CUDA_SUCCESS)
		return cr;
	m->mapped = 1;
	for (int i = 0; i < 2; i++) {
		acc[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		acc[i].location.id = v->r.g[i ? other : owner].dev;
		acc[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	}
	*what = "cuMemSetAccess";
	rig_guard("cuMemSetAccess", owner, other, owner);	/* a peer mapping: may block in the driver */
	cr = cu.cuMemSetAccess(m->p, m->n, acc, owner == other ? 1 : 2);
	rig_unguard();
	return cr;
}

static void vmm_free(struct vmm *m)
{
	if (m->mapped)
		cu.cuMemUnmap(m->p, m->n);
	if (m->p)
		cu.cuMemAddressFree(m->p, m->n);
	if (m->h)
		cu.cuMemRelease(m->h);
}

/* The three copies of one round: 0, or -1 with t failed. */
static int vmm_round(struct vstate *v, struct vtest *t, int k, size_t n)
{
	static const char *const what[3] = { "ce (cuMemcpyDtoDAsync)", "sm-write", "sm-read" };
	static const char *const copy[3] = { "the ce copy between the cuMem buffers",
		"the sm-write kernel into the cuMem buffer", "the sm-read kernel from the cuMem buffer" };
	struct rig *r = &v->r;
	int a = t->src, b = t->dst, e = k == 2 ? b : a;
	CUdeviceptr src = r->g[a].src + GUARD, dst = r->g[b].dst + GUARD;
	CUstream s = r->g[e].s[0];
	char err[1024];

	vimages(v, n);
	if (vstage(v, t, a, b, 0))
		return -1;
	VT(rig_cur(r, e), "cuCtxSetCurrent");
	if (k == 0)
		VT(cu.cuMemcpyDtoDAsync(dst, src, n, s), "cuMemcpyDtoDAsync between the cuMem buffers");
	else
		VT(sm_launch(r, e, s, k == 1 ? K_WRITE : K_READ, &v->sm, dst, src, n),
		   k == 1 ? "launch p2p_write" : "launch p2p_read");
	VW(e, s, copy[k]);
	if (vreadback(v, t, b, r->g[b].dst) == 0 && vcheck_got(v, t, n) == 0) {
		t->bytes += n;
		t->rounds++;
		return 0;
	}
	snprintf(err, sizeof(err), "%s on GPU %d, GPU %d's cuMem buffer into GPU %d's: %.900s",
		 what[k], e, a, b, t->error);
	snprintf(t->error, sizeof(t->error), "%s", err);
	return -1;
}

/*
 * vmm a -> b: a source on GPU a and a destination on GPU b, each
 * cuMemCreate'd on its GPU, mapped with cuMemMap and granted to both GPUs
 * with cuMemSetAccess. Then, twice (the full size, then the byte tail):
 * a copy-engine copy (cuMemcpyDtoDAsync on GPU a), SM stores by GPU a
 * (p2p_write) and SM loads by GPU b (p2p_read), a new pattern and poison
 * each, every byte and both guards checked.
 */
int run_vmm(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst, rc = -1;
	CUdeviceptr keep_src = r->g[a].src, keep_dst = r->g[b].dst;
	struct vmm ms = { 0 }, md = { 0 };
	uint64_t seed;
	const char *what = "";
	char why[256];
	CUresult cr;

	t->ok = 1;
	t->engine = a;
	if (!cu.cuMemCreate || !cu.cuMemMap || !cu.cuMemSetAccess || !cu.cuMemAddressReserve ||
	    !cu.cuMemGetAllocationGranularity || !cu.cuMemUnmap || !cu.cuMemAddressFree ||
	    !cu.cuMemRelease) {
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "the CUDA driver lacks the cuMem (virtual memory "
			 "management) entry points");
		return 0;
	}
	if (!r->g[a].kernels_ok || !r->g[b].kernels_ok) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "kernels not loaded: %.900s",
			 r->jitlog[0] ? r->jitlog : "unknown reason");
		return -1;
	}
	VT(rig_cur(r, a), "cuCtxSetCurrent");
	cr = vmm_alloc(v, a, b, &ms, &what);
	if (cr == CUDA_SUCCESS) {
		VT(rig_cur(r, b), "cuCtxSetCurrent");
		cr = vmm_alloc(v, b, a, &md, &what);
	}
	if (cr != CUDA_SUCCESS) {
		char w[128];

		snprintf(w, sizeof(w), "%s (the %s buffer)", what, ms.mapped ? "destination" : "source");
		vfail(t, w, cr);
		goto out;
	}
	/* cuMemSetAccess granted both GPUs read-write: the peer must say so. */
	for (int i = 0; i < 2; i++) {
		int g = i ? b : a, o = i ? a : b;

		if (a != b && vpeer_mapped(v, g, i ? ms.p : md.p, why, sizeof(why)) == 0) {
			t->ok = 0;
			snprintf(t->error, sizeof(t->error), "no peer mapping: cuMemSetAccess granted GPU %d "
				 "read-write access to GPU %d's cuMem buffer, but its access flags are 0", g, o);
			goto out;
		}
	}
	r->g[a].src = ms.p;
	r->g[b].dst = md.p;
	/* The vram test's seed stream: adding this test moved no other's seeds. */
	seed = v->seed;
	v->seed = v->vseed;
	for (int round = 0; round < 2 && t->ok; round++)
		for (int k = 0; k < 3 && t->ok; k++)
			if (vmm_round(v, t, k, vround_size(v, round)))
				t->ok = 0;
	v->vseed = v->seed;
	v->seed = seed;
	r->g[a].src = keep_src;
	r->g[b].dst = keep_dst;
	if (t->ok) {
		rc = 0;
		t->proven = a != b;
		if (a != b)
			snprintf(t->path, sizeof(t->path), "SM stores of GPU %d and SM loads of GPU %d "
				 "through the cuMemSetAccess mappings of each other's cuMemCreate memory; "
				 "GPU %d's copy engine between them", a, b, a);
		else
			snprintf(t->path, sizeof(t->path), "loopback within GPU %d: cuMem buffers, no peer "
				 "path", a);
	}
out:
	if (v->hung)
		return -1;	/* a stuck context: leave its memory alone */
	rig_cur(r, b);
	vmm_free(&md);
	rig_cur(r, a);
	vmm_free(&ms);
	return rc;
}
