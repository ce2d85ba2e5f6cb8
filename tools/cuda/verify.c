// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify: for each GPU pair, enable peer access and move a data
 * pattern both ways through the copy engines (cuMemcpyPeerAsync) and through
 * SM loads/stores (a kernel reading peer memory, a kernel writing it); check
 * every byte, and the guard bytes past the end, on the host. Then the same
 * for managed memory (cuMemAllocManaged): a GPU reading and writing the
 * other's pages through the mapping UVM gives it (cuMemAdvise
 * SetPreferredLocation + SetAccessedBy), a migration between the GPUs
 * (cuMemPrefetchAsync) and demand paging (page faults, no advice).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cmds.h"
#include "cuda_int.h"
#include "engine.h"

#define GUARD 256
#define POISON 0xa5a5a5a5u
#define SRC_GUARD 0x5a	/* past the end of a managed test's source: an overrun shows */

enum { V_CE, V_SM_READ, V_SM_WRITE, V_UM_READ, V_UM_WRITE, V_UM_PREFETCH, V_UM_FAULT, V_COUNT };
#define V_DEV_COUNT V_UM_READ	/* the device-memory methods come first */
#define V_UM_COUNT (V_COUNT - V_DEV_COUNT)
static const char *const vnames[V_COUNT] = {
	"ce", "sm-read", "sm-write", "um-read", "um-write", "um-prefetch", "um-fault",
};

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void verify_pattern(uint8_t *buf, size_t n, uint64_t seed)
{
	size_t w = n / 8;

	for (size_t k = 0; k < w; k++) {
		uint64_t v = splitmix64(seed + k);

		for (int b = 0; b < 8; b++)
			buf[8 * k + b] = (uint8_t)(v >> (8 * b));
	}
	if (n % 8) {
		uint64_t v = splitmix64(seed + w);

		for (size_t b = 0; b < n % 8; b++)
			buf[8 * w + b] = (uint8_t)(v >> (8 * b));
	}
}

int verify_compare(const uint8_t *got, const uint8_t *want, size_t n, uint64_t *offset,
		   uint8_t *expected, uint8_t *actual, uint64_t *nbad)
{
	const size_t blk = 4096;
	int found = 0;

	*nbad = 0;
	for (size_t o = 0; o < n; o += blk) {
		size_t l = n - o < blk ? n - o : blk;

		if (!memcmp(got + o, want + o, l))
			continue;
		for (size_t k = o; k < o + l; k++) {
			if (got[k] == want[k])
				continue;
			if (!found) {
				found = 1;
				*offset = k;
				*expected = want[k];
				*actual = got[k];
			}
			(*nbad)++;
		}
	}
	return found;
}

struct vtest {
	int src, dst, method, engine;
	int ok;
	int skipped;		/* not run; error says why */
	char error[1024];
	int mismatch;		/* 1 data, 2 guard overwritten */
	uint64_t offset, nbad;
	uint8_t expected, got;
	double gbps;
};

struct vstate {
	struct rig r;
	struct sm_cfg sm;
	uint64_t size;
	uint8_t *want, *got;
	uint64_t seed;
	int no_managed;
	CUdeviceptr um;		/* managed buffer of r.bufsize bytes, for the pair under test */
};

/* The managed-memory part of one pair. */
enum { UM_OK, UM_FAIL, UM_SKIPPED };
static const char *const umstatus[] = { "OK", "FAIL", "SKIPPED" };

struct umpair {
	int status;
	char reason[512];	/* SKIPPED: why; FAIL: an error outside the tests */
	int nok, nfail, nskip;
};

static int fail(struct vtest *t, const char *what, CUresult cr)
{
	t->ok = 0;
	snprintf(t->error, sizeof(t->error), "%s: %s", what, cu_errstr(cr));
	return -1;
}

#define VT(call, what)                                  \
	do {                                            \
		CUresult cr_ = (call);                  \
		if (cr_ != CUDA_SUCCESS)                \
			return fail(t, what, cr_);      \
	} while (0)

static int check_got(struct vstate *v, struct vtest *t);

/* One copy a -> b by method m; fills t. */
static int run_test(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst;
	size_t n = v->size, total = r->bufsize;
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
	verify_pattern(v->want, n, v->seed);
	v->seed += 0x100000000ULL;
	memset(v->want + n, (int)(POISON & 0xff), total - n);
	VT(rig_cur(r, a), "cuCtxSetCurrent");
	VT(cu.cuMemcpyHtoD(ga->src, v->want, n), "upload pattern (cuMemcpyHtoD)");
	VT(rig_cur(r, b), "cuCtxSetCurrent");
	VT(cu.cuMemsetD32(gb->dst, POISON, total / 4), "poison destination (cuMemsetD32)");
	VT(cu.cuCtxSynchronize(), "cuCtxSynchronize");
	VT(rig_cur(r, t->engine), "cuCtxSetCurrent");
	VT(cu.cuEventRecord(ge->ev_start, s), "cuEventRecord");
	switch (t->method) {
	case V_CE:
		VT(cu.cuMemcpyPeerAsync(gb->dst, gb->ctx, ga->src, ga->ctx, n, s), "cuMemcpyPeerAsync");
		break;
	case V_SM_READ:
		VT(sm_launch(r, b, s, K_READ, &v->sm, gb->dst, ga->src, n), "launch p2p_read");
		break;
	case V_SM_WRITE:
		VT(sm_launch(r, a, s, K_WRITE, &v->sm, gb->dst, ga->src, n), "launch p2p_write");
		break;
	}
	VT(cu.cuEventRecord(ge->ev_stop, s), "cuEventRecord");
	VT(cu.cuStreamSynchronize(s), "copy (cuStreamSynchronize)");
	if (cu.cuEventElapsedTime(&ms, ge->ev_start, ge->ev_stop) == CUDA_SUCCESS && ms > 0)
		t->gbps = n / 1e9 / (ms / 1e3);
	memset(v->got, 0, total);
	VT(rig_cur(r, b), "cuCtxSetCurrent");
	VT(cu.cuMemcpyDtoH(v->got, gb->dst, total), "read back (cuMemcpyDtoH)");
	return check_got(v, t);
}

/* Compare v->got with v->want: n data bytes, then the guard bytes. */
static int check_got(struct vstate *v, struct vtest *t)
{
	size_t n = v->size, total = v->r.bufsize;

	if (verify_compare(v->got, v->want, n, &t->offset, &t->expected, &t->got, &t->nbad)) {
		t->ok = 0;
		t->mismatch = 1;
		snprintf(t->error, sizeof(t->error),
			 "first mismatch at offset %" PRIu64 " (0x%" PRIx64 "): expected 0x%02x, got 0x%02x"
			 " (%" PRIu64 " of %zu bytes differ)",
			 t->offset, t->offset, t->expected, t->got, t->nbad, n);
		return -1;
	}
	if (verify_compare(v->got + n, v->want + n, total - n, &t->offset, &t->expected,
			   &t->got, &t->nbad)) {
		t->ok = 0;
		t->mismatch = 2;
		t->offset += n;
		snprintf(t->error, sizeof(t->error),
			 "wrote past the end: offset %" PRIu64 " (0x%" PRIx64 "): expected 0x%02x, got 0x%02x",
			 t->offset, t->offset, t->expected, t->got);
		return -1;
	}
	return 0;
}

/*
 * Managed memory. The managed buffer v->um (r.bufsize bytes: the data, then
 * the guard) is filled by the host, placed on a GPU with cuMemPrefetchAsync,
 * then touched by the other one. Every readback goes through a plain device
 * buffer (cuMemAlloc) of the GPU that holds or received the data, so the
 * check sees what that GPU's memory holds.
 */
static uint8_t *um_host(CUdeviceptr p)
{
	return (uint8_t *)(uintptr_t)p;
}

/* Move the managed buffer to GPU g, or to the host (g < 0; on GPU -1 - g's stream). */
static CUresult um_prefetch(struct vstate *v, int g)
{
	struct rig *r = &v->r;
	int sg = g >= 0 ? g : -1 - g;
	CUresult cr = rig_cur(r, sg);

	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemPrefetchAsync(v->um, r->bufsize, g >= 0 ? r->g[g].dev : CU_DEVICE_CPU,
					   r->g[sg].s[0]);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuStreamSynchronize(r->g[sg].s[0]);
	return cr;
}

/* SetPreferredLocation(owner) + SetAccessedBy(accessor), or unset both. */
static CUresult um_advise(struct vstate *v, int owner, int accessor, int set)
{
	struct rig *r = &v->r;
	CUresult cr;

	cr = cu.cuMemAdvise(v->um, r->bufsize, set ? CU_MEM_ADVISE_SET_PREFERRED_LOCATION :
			    CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, r->g[owner].dev);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemAdvise(v->um, r->bufsize, set ? CU_MEM_ADVISE_SET_ACCESSED_BY :
				    CU_MEM_ADVISE_UNSET_ACCESSED_BY, r->g[accessor].dev);
	return cr;
}

/* Copy total bytes of the managed buffer into GPU g's plain dst with a kernel on g. */
static CUresult um_readback(struct vstate *v, int g)
{
	struct rig *r = &v->r;
	CUresult cr = rig_cur(r, g);

	if (cr == CUDA_SUCCESS)
		cr = sm_launch(r, g, r->g[g].s[0], K_READ, &v->sm, r->g[g].dst, v->um, r->bufsize);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuStreamSynchronize(r->g[g].s[0]);
	return cr;
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
	size_t n = v->size, total = r->bufsize;
	struct gpu *ga = &r->g[a], *gb = &r->g[b], *ge;
	int mapped = t->method == V_UM_READ || t->method == V_UM_WRITE;
	int owner = t->method == V_UM_READ || t->method == V_UM_PREFETCH ? a : b;
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
	verify_pattern(v->want, n, v->seed);
	v->seed += 0x100000000ULL;
	memset(v->want + n, (int)(POISON & 0xff), total - n);
	/* The source image: the pattern, then SRC_GUARD bytes (um-prefetch
	 * moves the whole buffer, so there they are the expected guard). */
	memcpy(v->got, v->want, n);
	memset(v->got + n, t->method == V_UM_PREFETCH ? (int)(POISON & 0xff) : SRC_GUARD, total - n);
	/* The host writes the managed pages: the source image for a read or a
	 * migration, poison where a GPU is going to write. */
	VT(um_prefetch(v, -1 - a), "pages to the host (cuMemPrefetchAsync)");
	if (owner == a)
		memcpy(um_host(v->um), v->got, total);
	else
		memset(um_host(v->um), (int)(POISON & 0xff), total);
	if (mapped)
		VT(um_advise(v, owner, owner == a ? b : a, 1), "cuMemAdvise");
	VT(um_prefetch(v, owner), "place pages (cuMemPrefetchAsync)");
	VT(rig_cur(r, t->engine), "cuCtxSetCurrent");
	if (owner == a) {
		VT(cu.cuMemsetD32(gb->dst, POISON, total / 4), "poison destination (cuMemsetD32)");
	} else {
		VT(cu.cuMemcpyHtoD(ga->src, v->got, total), "upload pattern (cuMemcpyHtoD)");
	}
	VT(cu.cuCtxSynchronize(), "cuCtxSynchronize");
	VT(cu.cuEventRecord(ge->ev_start, s), "cuEventRecord");
	switch (t->method) {
	case V_UM_READ:
		VT(sm_launch(r, b, s, K_READ, &v->sm, gb->dst, v->um, n), "launch p2p_read");
		break;
	case V_UM_PREFETCH:
		VT(cu.cuMemPrefetchAsync(v->um, total, gb->dev, s), "cuMemPrefetchAsync");
		break;
	default:
		VT(sm_launch(r, a, s, K_WRITE, &v->sm, v->um, ga->src, n), "launch p2p_write");
	}
	VT(cu.cuEventRecord(ge->ev_stop, s), "cuEventRecord");
	VT(cu.cuStreamSynchronize(s), t->method == V_UM_PREFETCH ? "migration (cuStreamSynchronize)" :
	   "kernel (cuStreamSynchronize)");
	if (cu.cuEventElapsedTime(&ms, ge->ev_start, ge->ev_stop) == CUDA_SUCCESS && ms > 0)
		t->gbps = (t->method == V_UM_PREFETCH ? total : n) / 1e9 / (ms / 1e3);
	if (t->method != V_UM_READ)
		VT(um_readback(v, b), "read back on the destination GPU (kernel)");
	if (mapped)
		VT(um_advise(v, owner, owner == a ? b : a, 0), "cuMemAdvise (unset)");
	memset(v->got, 0, total);
	VT(rig_cur(r, b), "cuCtxSetCurrent");
	VT(cu.cuMemcpyDtoH(v->got, gb->dst, total), "read back (cuMemcpyDtoH)");
	return check_got(v, t);
}

/* Why the managed-memory tests cannot run on pair a-b, or NULL. */
static const char *um_skip_reason(struct vstate *v, int a, int b, char *buf, size_t len)
{
	struct rig *r = &v->r;
	const int g2[2] = { a, b };

	if (v->no_managed)
		return "--no-managed";
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
		if (r->bufsize > fr / 2) {
			snprintf(buf, len, "%zu bytes of managed memory is more than half of the "
				 "%zu bytes free on GPU %d; use a smaller --size",
				 r->bufsize, fr, g2[k]);
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
static void um_pair(struct vstate *v, int a, int b, struct vtest *tests, int *nt, struct umpair *u)
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
		u->nskip = V_UM_COUNT * 2;
		return;
	}
	cr = rig_cur(r, a);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemAllocManaged(&v->um, r->bufsize, CU_MEM_ATTACH_GLOBAL);
	if (cr != CUDA_SUCCESS) {
		v->um = 0;
		u->status = UM_FAIL;
		snprintf(u->reason, sizeof(u->reason), "cuMemAllocManaged(%zu): %s", r->bufsize,
			 cu_errstr(cr));
		u->nfail = 1;
		return;
	}
	for (int m = V_UM_READ; m < V_COUNT; m++)
		for (int d = 0; d < 2; d++) {
			struct vtest *t = &tests[(*nt)++];

			memset(t, 0, sizeof(*t));
			t->src = d ? b : a;
			t->dst = d ? a : b;
			t->method = m;
			if (gate && m != V_UM_READ) {
				t->skipped = 1;
				snprintf(t->error, sizeof(t->error), "not run: um-read failed");
				u->nskip++;
				continue;
			}
			if (run_um_test(v, t)) {
				/* A guard overwrite is the kernel's own overrun, not the
				 * peer path: it does not stop the other tests. */
				if (m == V_UM_READ && t->mismatch != 2)
					gate = 1;
				/* Leave no advice behind for the next test. */
				if (m == V_UM_READ || m == V_UM_WRITE)
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
	rig_cur(r, a);
	cu.cuCtxSynchronize();
	cr = cu.cuMemFree(v->um);
	v->um = 0;
	if (cr != CUDA_SUCCESS && !u->nfail) {
		u->nfail++;
		snprintf(u->reason, sizeof(u->reason), "cuMemFree (managed): %s", cu_errstr(cr));
	}
	u->status = u->nfail ? UM_FAIL : UM_OK;
}

static void vusage(FILE *f)
{
	fprintf(f,
		"Usage: p2pctl verify [--size BYTES] [--pairs I-J,...] [--no-managed] [--json]\n"
		"  --size BYTES   bytes per copy (default 64M = 64 MiB; any size >= 1)\n"
		"  --pairs LIST   only these GPU pairs (default: every pair)\n"
		"  --no-managed   skip the managed-memory (cuMemAllocManaged) tests\n"
		"  --json         JSON on stdout\n"
		"tests, both ways for each pair: ce, sm-read, sm-write (device memory);\n"
		"  um-read, um-write (a GPU using the other's managed pages through its\n"
		"  mapping), um-prefetch (migration between the GPUs), um-fault (demand paging)\n"
		"exit status: 0 all OK, 1 a test failed, 2 usage, 3 no driver or fewer than 2 GPUs\n");
}

static json_object *test_json(const struct vtest *t)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "method", json_object_new_string(vnames[t->method]));
	json_object_object_add(o, "src", json_object_new_int(t->src));
	json_object_object_add(o, "dst", json_object_new_int(t->dst));
	json_object_object_add(o, "engine_gpu", json_object_new_int(t->engine));
	json_object_object_add(o, "status", json_object_new_string(
		t->skipped ? "SKIPPED" : t->ok ? "OK" : "FAIL"));
	if (t->skipped) {
		json_object_object_add(o, "reason", json_object_new_string(t->error));
	} else if (t->ok) {
		json_object_object_add(o, "gbps", json_object_new_double((double)(int64_t)(t->gbps * 100) / 100));
	} else {
		json_object_object_add(o, "error", json_object_new_string(t->error));
		if (t->mismatch) {
			json_object *m = json_object_new_object();

			json_object_object_add(m, "offset", json_object_new_int64((int64_t)t->offset));
			json_object_object_add(m, "expected", json_object_new_int(t->expected));
			json_object_object_add(m, "got", json_object_new_int(t->got));
			json_object_object_add(m, "where", json_object_new_string(
				t->mismatch == 1 ? "data" : "guard"));
			json_object_object_add(o, "first_mismatch", m);
			if (t->mismatch == 1)
				json_object_object_add(o, "bad_bytes", json_object_new_int64((int64_t)t->nbad));
		}
	}
	return o;
}

/* What moved the data in t, for the text output. */
static const char *test_how(const struct vtest *t, char *buf, size_t len)
{
	switch (t->method) {
	case V_CE:
		snprintf(buf, len, "copy engine on GPU %d", t->engine);
		break;
	case V_UM_READ:
		snprintf(buf, len, "kernel on GPU %d through its mapping of GPU %d's pages",
			 t->dst, t->src);
		break;
	case V_UM_WRITE:
		snprintf(buf, len, "kernel on GPU %d through its mapping of GPU %d's pages",
			 t->src, t->dst);
		break;
	case V_UM_PREFETCH:
		snprintf(buf, len, "cuMemPrefetchAsync GPU %d -> GPU %d", t->src, t->dst);
		break;
	case V_UM_FAULT:
		snprintf(buf, len, "kernel on GPU %d faulting on GPU %d's pages", t->src, t->dst);
		break;
	default:
		snprintf(buf, len, "kernel on GPU %d", t->engine);
	}
	return buf;
}

static json_object *um_json(const struct vstate *v, int a, int b, const struct umpair *u)
{
	json_object *o = json_object_new_object(), *c = json_object_new_array();

	json_object_object_add(o, "status", json_object_new_string(umstatus[u->status]));
	if (u->reason[0])
		json_object_object_add(o, "reason", json_object_new_string(u->reason));
	json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)v->size));
	json_object_array_add(c, json_object_new_int(v->r.g[a].concurrent_managed));
	json_object_array_add(c, json_object_new_int(v->r.g[b].concurrent_managed));
	json_object_object_add(o, "concurrent_managed_access", c);
	json_object_object_add(o, "ok_tests", json_object_new_int(u->nok));
	json_object_object_add(o, "failed_tests", json_object_new_int(u->nfail));
	json_object_object_add(o, "skipped_tests", json_object_new_int(u->nskip));
	return o;
}

static void um_print(FILE *out, const struct vstate *v, int a, int b, const struct umpair *u)
{
	fprintf(out, "  managed memory %d-%d: %s", a, b, umstatus[u->status]);
	if (u->status == UM_SKIPPED) {
		fprintf(out, ": %s\n", u->reason);
		return;
	}
	fprintf(out, " (%d OK, %d FAIL, %d not run; cuMemAllocManaged, %" PRIu64 " bytes)",
		u->nok, u->nfail, u->nskip, v->size);
	if (u->reason[0])
		fprintf(out, ": %s", u->reason);
	fprintf(out, "\n");
}

int verify_main(int argc, char **argv, FILE *out, FILE *err)
{
	static const struct option lo[] = {
		{ "size", required_argument, NULL, 's' },
		{ "pairs", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-managed", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static int sel[P2P_MAX_GPUS][P2P_MAX_GPUS];
	struct vstate *v;
	const char *pairs = NULL;
	char emsg[512];
	int json = 0, rc = 0, opt, n, use[P2P_MAX_GPUS] = { 0 }, nok = 0, nfail = 0, nskip = 0;
	json_object *jpairs = NULL;

	v = calloc(1, sizeof(*v));
	if (!v)
		return P2P_EXIT_FAIL;
	v->size = 64ULL << 20;
	v->seed = 0x70327063746c0000ULL;	/* "p2pctl" */
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (parse_size(optarg, &v->size) || v->size > (1ULL << 40)) {
				fprintf(err, "verify: bad --size '%s'\n", optarg);
				rc = P2P_EXIT_USAGE;
			}
			break;
		case 'p': pairs = optarg; break;
		case 'j': json = 1; break;
		case 'M': v->no_managed = 1; break;
		case 'h': vusage(out); goto done;
		default:
			fprintf(err, "verify: bad option '%s'\n", argv[optind - 1]);
			rc = P2P_EXIT_USAGE;
		}
	}
	if (!rc && optind < argc) {
		fprintf(err, "verify: unexpected argument '%s'\n", argv[optind]);
		rc = P2P_EXIT_USAGE;
	}
	if (!rc && parse_pairs(pairs, sel, emsg, sizeof(emsg))) {
		fprintf(err, "verify: %s\n", emsg);
		rc = P2P_EXIT_USAGE;
	}
	if (rc) {
		vusage(err);
		goto done;
	}
	v->sm.threads = 512;
	v->sm.blocks_per_sm = 4;
	rc = cu_open(emsg, sizeof(emsg));
	if (rc) {
		fprintf(err, "verify: %s\n", emsg);
		goto done;
	}
	rc = rig_count(&n, emsg, sizeof(emsg));
	if (rc) {
		fprintf(err, "verify: %s\n", emsg);
		goto close;
	}
	if (n < 2) {
		fprintf(err, "verify: needs at least two GPUs (%d found)\n", n);
		rc = P2P_EXIT_NODEV;
		goto close;
	}
	for (int i = 0; i < P2P_MAX_GPUS; i++)
		for (int j = 0; j < P2P_MAX_GPUS; j++) {
			if (!sel[i][j])
				continue;
			if (i >= n || j >= n) {
				if (pairs) {
					fprintf(err, "verify: no GPU %d (%d found)\n", i >= n ? i : j, n);
					rc = P2P_EXIT_NODEV;
					goto close;
				}
				continue;
			}
			use[i] = use[j] = 1;
		}
	{
		size_t total = ((v->size + 3) & ~(uint64_t)3) + GUARD;

		v->want = malloc(total);
		v->got = malloc(total);
		if (!v->want || !v->got) {
			fprintf(err, "verify: cannot allocate 2 x %zu bytes of host memory\n", total);
			rc = P2P_EXIT_FAIL;
			goto close;
		}
		rc = rig_open(&v->r, use, total, 0, emsg, sizeof(emsg));
		if (rc) {
			fprintf(err, "verify: %s\n", emsg);
			goto close;
		}
	}
	if (json)
		jpairs = json_object_new_array();
	else
		for (int i = 0; i < n; i++)
			if (use[i])
				fprintf(out, "GPU %d: %s (%s)\n", i, v->r.g[i].name, v->r.g[i].busid);
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			struct vtest tests[2 * V_COUNT];
			struct umpair um = { .status = UM_SKIPPED };
			int nt = 0, peer_ok, pfail = 0;
			char perr[512] = "";
			json_object *jp = NULL, *jt = NULL;

			if (!sel[a][b])
				continue;
			peer_ok = v->r.can_peer[a][b] && v->r.can_peer[b][a];
			if (!peer_ok) {
				snprintf(perr, sizeof(perr),
					 "peer access not supported (cuDeviceCanAccessPeer %d->%d = %d, %d->%d = %d)",
					 a, b, v->r.can_peer[a][b], b, a, v->r.can_peer[b][a]);
			} else {
				CUresult cr = rig_peer(&v->r, a, b, 1);

				if (cr == CUDA_SUCCESS)
					cr = rig_peer(&v->r, b, a, 1);
				if (cr != CUDA_SUCCESS) {
					peer_ok = 0;
					snprintf(perr, sizeof(perr), "cuCtxEnablePeerAccess: %s", cu_errstr(cr));
				}
			}
			if (peer_ok) {
				for (int m = 0; m < V_DEV_COUNT; m++)
					for (int d = 0; d < 2; d++) {
						struct vtest *t = &tests[nt++];

						memset(t, 0, sizeof(*t));
						t->src = d ? b : a;
						t->dst = d ? a : b;
						t->method = m;
						run_test(v, t);
						pfail += !t->ok;
						nok += t->ok;
					}
				um_pair(v, a, b, tests, &nt, &um);
				pfail += um.nfail;
				nok += um.nok;
				nskip += um.nskip;
			} else {
				snprintf(um.reason, sizeof(um.reason), "peer access is not enabled");
				nskip += um.nskip = V_UM_COUNT * 2;
			}
			{
				CUresult c1 = rig_peer(&v->r, a, b, 0), c2 = rig_peer(&v->r, b, a, 0);

				if (peer_ok && (c1 != CUDA_SUCCESS || c2 != CUDA_SUCCESS)) {
					snprintf(perr, sizeof(perr), "cuCtxDisablePeerAccess: %s",
						 cu_errstr(c1 != CUDA_SUCCESS ? c1 : c2));
					pfail++;
				}
			}
			if (!peer_ok)
				pfail++;
			nfail += pfail;
			if (json) {
				jp = json_object_new_object();
				jt = json_object_new_array();
				json_object *gp = json_object_new_array();

				json_object_array_add(gp, json_object_new_int(a));
				json_object_array_add(gp, json_object_new_int(b));
				json_object_object_add(jp, "gpus", gp);
				json_object_object_add(jp, "can_access_peer", json_object_new_boolean(
					v->r.can_peer[a][b] && v->r.can_peer[b][a]));
				json_object_object_add(jp, "status", json_object_new_string(pfail ? "FAIL" : "OK"));
				if (perr[0])
					json_object_object_add(jp, "error", json_object_new_string(perr));
				for (int k = 0; k < nt; k++)
					json_object_array_add(jt, test_json(&tests[k]));
				json_object_object_add(jp, "tests", jt);
				json_object_object_add(jp, "managed", um_json(v, a, b, &um));
				json_object_array_add(jpairs, jp);
				continue;
			}
			fprintf(out, "pair %d-%d: can-access-peer %d->%d %s, %d->%d %s\n", a, b,
				a, b, v->r.can_peer[a][b] ? "yes" : "no", b, a,
				v->r.can_peer[b][a] ? "yes" : "no");
			if (perr[0])
				fprintf(out, "  FAIL  %s\n", perr);
			for (int k = 0; k < nt; k++) {
				const struct vtest *t = &tests[k];

				fprintf(out, "  %-11s %d->%d  %-4s", vnames[t->method], t->src, t->dst,
					t->skipped ? "SKIP" : t->ok ? "OK" : "FAIL");
				if (t->ok && !t->skipped)
					fprintf(out, "  %" PRIu64 " bytes, %s, %.1f GB/s\n", v->size,
						test_how(t, emsg, sizeof(emsg)), t->gbps);
				else
					fprintf(out, "  %s\n", t->error);
			}
			um_print(out, v, a, b, &um);
		}
	if (json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "command", json_object_new_string("verify"));
		json_object_object_add(o, "format", json_object_new_int(1));
		json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)v->size));
		json_object_object_add(o, "driver_version", json_object_new_int(v->r.driver_version));
		json_object_object_add(o, "devices", cuda_devices_json(&v->r));
		json_object_object_add(o, "pairs", jpairs);
		json_object_object_add(o, "ok_tests", json_object_new_int(nok));
		json_object_object_add(o, "failures", json_object_new_int(nfail));
		json_object_object_add(o, "skipped_tests", json_object_new_int(nskip));
		json_object_object_add(o, "result", json_object_new_string(nfail ? "FAIL" : "OK"));
		fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								      JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		fprintf(out, "verify: %s (%d OK, %d FAIL", nfail ? "FAIL" : "OK", nok, nfail);
		if (nskip)
			fprintf(out, ", %d skipped", nskip);
		fprintf(out, ")\n");
	}
	rc = nfail ? P2P_EXIT_FAIL : P2P_EXIT_OK;
	rig_close(&v->r);
close:
	cu_close();
done:
	free(v->want);
	free(v->got);
	free(v);
	return rc;
}

