// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl what every test family of verify uses: failing a test with the GPU that
 * said so, deadline waits, the round's host images, staging and the byte
 * check with its guards.
 */
#include <errno.h>
#include <time.h>

#include "verify.h"

const char *const vnames[V_COUNT] = {
	"path", "ce", "sm-read", "sm-write", "flags", "flags-poll", "graph", "ipc", "vram", "vmm", "car",
	"procs",
	"um-read", "um-write", "um-prefetch", "um-fault", "concurrent", "nccl",
};

const char *const umstatus[] = { "OK", "FAIL", "SKIPPED" };

/* What a failure of each test usually means, and where doctor looks. */
const char *const vhint[V_COUNT] = {
	"the copies between these GPUs take no direct peer path at peer speed (the driver stages "
	"them through host memory, an IOMMU or ACS detour, or they never crossed the link): check "
	"`p2pctl doctor` (ACS, IOMMU, BAR1, link width)",
	"copy-engine peer copies are broken: check `p2pctl doctor` (peer mappings, BAR1)",
	"SM peer loads are broken (stale or wrong data): check `p2pctl doctor` (BAR1, IOMMU/ACS)",
	"SM peer stores are lost or misrouted: check `p2pctl doctor` (BAR1, IOMMU/ACS)",
	"stores into the peer or their ordering are broken (custom all-reduce would return wrong data): "
	"check `p2pctl doctor` (BAR1, ACS)",
	"peer reads return old values (custom all-reduce would hang or read stale data): "
	"check `p2pctl doctor` (BAR1 caching, IOMMU)",
	"copies replayed from a CUDA graph are lost or wrong (NCCL/vLLM under graph replay): "
	"check `p2pctl doctor` (BAR1, ACS)",
	"buffers shared between processes (cuIpcOpenMemHandle, as NCCL and vLLM do) reach the "
	"wrong memory or fail: check `p2pctl doctor` (BAR1, peer mappings)",
	"peer accesses to part of VRAM go wrong: the BAR1 window covers less than all of VRAM "
	"(static BAR1 smaller than VRAM, or a wrong BAR1 base): check `p2pctl doctor` (BAR1 size "
	"against VRAM)",
	"peer accesses through cuMem (VMM) mappings are wrong (NCCL's P2P/CUMEM transport, PyTorch's "
	"expandable segments): check `p2pctl doctor` (BAR1, peer mappings)",
	"a custom all-reduce across processes (vLLM, SGLang) would return wrong or stale data or "
	"hang: peer stores or flags lost, or peer reads stale; check `p2pctl doctor` (BAR1, "
	"IOMMU/ACS); until fixed, disable custom all-reduce (vLLM: --disable-custom-all-reduce)",
	"processes that map a peer's memory while others start or exit hang or fail (580.65.06 to "
	"595.x: nvidia-uvm's devicesLock inversion, docs/support.md): start and stop multi-GPU jobs "
	"one at a time, or update the driver; check `p2pctl doctor`",
	"UVM's peer mapping is wrong: check `p2pctl doctor` (uvm peer set, docs/uvm.md)",
	"UVM's peer mapping is wrong: check `p2pctl doctor` (uvm peer set, docs/uvm.md)",
	"UVM's peer migration copy is wrong: check `p2pctl doctor` (uvm peer set)",
	"UVM's fault handling between the GPUs is wrong: check `p2pctl doctor` (uvm peer set)",
	"P2P under load is misrouted or lost (switch, ACS): check `p2pctl doctor` (ACS, topology)",
	"NCCL's all-reduce over these GPUs returns wrong data or hangs (try NCCL_P2P_DISABLE=1 to "
	"see whether its P2P transport is the cause), or NCCL did not use P2P (NCCL_P2P_LEVEL, "
	"NCCL_P2P_DISABLE): check `p2pctl doctor`",
};

/*
 * The hint for t's failure: vhint[] by test, but the path test's "faster
 * than the link" (verify_path.c) says the opposite of its staging hint.
 */
const char *vtest_hint(const struct vtest *t)
{
	if (t->method == V_PATH && !strncmp(t->error, "faster than the link", 20))
		return "the line rate may be misread (an idle link trained down, a switch uplink, an "
		       "emulated bridge), or the copy stayed in one GPU: compare `nvidia-smi -q -d PCIE` "
		       "under load and `p2pctl doctor`'s link check";
	return vhint[t->method];
}

/* Fail t: "WHAT on GPU g: CUDA_ERROR_..." (g: the context the call ran in). */
int vfail(struct vtest *t, const char *what, CUresult cr)
{
	t->ok = 0;
	if (t->hung)
		return -1;
	t->cr = cr;
	t->gpu = rig_cur_gpu + 1;
	if (rig_cur_gpu >= 0)
		snprintf(t->error, sizeof(t->error), "%s on GPU %d: %s", what, rig_cur_gpu, cu_errstr(cr));
	else
		snprintf(t->error, sizeof(t->error), "%s: %s", what, cu_errstr(cr));
	return -1;
}

/*
 * The errors CUDA documents as sticky: "the process is in an inconsistent
 * state and any further CUDA work will return the same error". The context
 * that saw one is dead; every later call in it fails the same way.
 */
int vsticky(CUresult cr)
{
	return cr == CUDA_ERROR_ILLEGAL_ADDRESS || cr == CUDA_ERROR_ASSERT ||
	       (cr >= CUDA_ERROR_HARDWARE_STACK_ERROR && cr <= CUDA_ERROR_LAUNCH_FAILED);
}

/* "sm-read 0->1", "nccl 0,1", "concurrent 1->0": a test, for messages */
static void vtest_name(const struct vtest *t, char *buf, size_t len)
{
	if (t->label[0])
		snprintf(buf, len, "%s %s", vnames[t->method], t->label);
	else
		snprintf(buf, len, "%s %d->%d", vnames[t->method], t->src, t->dst);
}

/*
 * A bare CUDA_ERROR_ILLEGAL_ADDRESS tells a user nothing: say that the GPU
 * faulted on the other GPU's memory, through a peer mapping the driver
 * reports but that is not there (or points elsewhere). A sticky error also
 * kills the context it was seen in: remember whose (v->lost), so that later
 * tests are not run in it, where they would all fail with the same error
 * and hide what works.
 */
void vexplain(struct vstate *v, struct vtest *t)
{
	size_t l = strlen(t->error);
	int g = t->gpu ? t->gpu - 1 : t->method == V_IPC ? t->dst : t->engine;
	int p = g == t->src ? t->dst : t->src, first = 1;

	if (t->ok || t->skipped)
		return;
	if (t->gpu && vsticky(t->cr)) {
		first = !v->lost[g][0];
		if (first)
			vtest_name(t, v->lost[g], sizeof(v->lost[g]));
	}
	if (!first)
		snprintf(t->error + l, sizeof(t->error) - l, "; GPU %d's context was already lost to %s's "
			 "fault (CUDA errors are sticky)", g, v->lost[g]);
	else if (!strstr(t->error, "CUDA_ERROR_ILLEGAL_ADDRESS"))
		;
	else if (p == g)
		snprintf(t->error + l, sizeof(t->error) - l, "; GPU %d faulted on an address it was given "
			 "(no peer memory in this test: the tool or the GPU)", g);
	else
		snprintf(t->error + l, sizeof(t->error) - l, "; this likely means GPU %d faulted on GPU "
			 "%d's memory: its peer mapping of that memory is missing or wrong, although peer "
			 "access is on and the driver reports the mapping", g, p);
	l = strlen(t->error);
	if (first && t->gpu && vsticky(t->cr))
		snprintf(t->error + l, sizeof(t->error) - l, "; GPU %d's context is lost (CUDA errors are "
			 "sticky): later tests on GPU %d are not run", g, g);
}

/*
 * Before test t, which uses the contexts of the ng GPUs gs in this process:
 * if one was lost to an earlier test's sticky error, t is not run. 1 if so.
 */
int vlost_skip(struct vstate *v, struct vtest *t, const int *gs, int ng)
{
	for (int k = 0; k < ng; k++)
		if (gs[k] >= 0 && v->lost[gs[k]][0]) {
			t->ok = 1;
			t->skipped = 1;
			snprintf(t->error, sizeof(t->error), "not run: GPU %d's context was lost to %s's fault "
				 "(CUDA errors are sticky)", gs[k], v->lost[gs[k]]);
			return 1;
		}
	return 0;
}

/*
 * Wait for stream s of GPU g (or event e) with a deadline. A wait past the
 * deadline marks the test and the run hung (the GPU context is stuck;
 * nothing more can be trusted to return).
 */
CUresult vwait(struct vstate *v, struct vtest *t, int g, CUstream s, CUevent e,
		      const char *what)
{
	double end = now_s() + v->timeout;
	CUresult cr = rig_cur(&v->r, g);

	if (cr != CUDA_SUCCESS)
		return cr;
	cr = dl_wait(s, e, end);
	if (cr == CUDA_ERROR_NOT_READY && dl_stop) {
		/* cut short by the signal: the work may still be in flight, so
		 * nothing tears the context down after it (v->cut) */
		t->ok = 0;
		v->cut = 1;
		snprintf(t->error, sizeof(t->error), "%s on GPU %d: not finished: interrupted (%s)", what,
			 g, strsignal(dl_stop));
	} else if (cr == CUDA_ERROR_NOT_READY) {
		t->hung = 1;
		t->ok = 0;
		v->hung = 1;
		snprintf(t->error, sizeof(t->error),
			 "%s did not finish within %.3g s on GPU %d: the path hangs "
			 "(the GPU context is stuck; verify stops here)", what, v->timeout, g);
		snprintf(v->hang, sizeof(v->hang), "%s %d->%d hung: %.700s", vnames[t->method],
			 t->src, t->dst, t->error);
	}
	return cr;
}

/*
 * Host images of one round: want = what the destination must hold (poison,
 * the pattern at GUARD, poison), img = what the source holds (SRC_TAIL, the
 * pattern, SRC_TAIL). The seed changes every round.
 */
void vimages(struct vstate *v, size_t n)
{
	memset(v->want, (int)(POISON & 0xff), v->total);
	pattern_fill(v->want + GUARD, n, v->seed);
	memset(v->img, SRC_TAIL, v->total);
	memcpy(v->img + GUARD, v->want + GUARD, n);
	v->seed += 0x100000000ULL;
}

/* Compare v->got with v->want: n data bytes at GUARD, then both guards. */
int vcheck_got(struct vstate *v, struct vtest *t, size_t n)
{
	size_t total = v->total;

	if (pattern_compare(v->got + GUARD, v->want + GUARD, n, &t->offset, &t->expected, &t->got,
			    &t->nbad)) {
		t->ok = 0;
		t->mismatch = 1;
		snprintf(t->error, sizeof(t->error),
			 "first mismatch at offset %" PRIu64 " (0x%" PRIx64 "): expected 0x%02x, got 0x%02x%s"
			 " (%" PRIu64 " of %zu bytes differ)",
			 t->offset, t->offset, t->expected, t->got,
			 t->got == (POISON & 0xff) ? ", the poison: the write never landed" : "", t->nbad, n);
		return -1;
	}
	if (pattern_compare(v->got + GUARD + n, v->want + GUARD + n, total - GUARD - n, &t->offset,
			    &t->expected, &t->got, &t->nbad)) {
		t->ok = 0;
		t->mismatch = 2;
		t->offset += n;
		snprintf(t->error, sizeof(t->error),
			 "wrote past the end: offset %" PRIu64 " (0x%" PRIx64 "): expected 0x%02x, got 0x%02x",
			 t->offset, t->offset, t->expected, t->got);
		return -1;
	}
	if (pattern_compare(v->got, v->want, GUARD, &t->offset, &t->expected, &t->got, &t->nbad)) {
		t->ok = 0;
		t->mismatch = 3;
		snprintf(t->error, sizeof(t->error),
			 "wrote before the start: %" PRIu64 " bytes before offset 0: expected 0x%02x, "
			 "got 0x%02x", (uint64_t)GUARD - t->offset, t->expected, t->got);
		return -1;
	}
	return 0;
}

/*
 * Can GPU g's context reach p (another GPU's buffer) through a mapping?
 * 1 read-write, 0 no mapping, -1 unknown (why says why).
 */
int vpeer_mapped(struct vstate *v, int g, CUdeviceptr p, char *why, size_t len)
{
	int flags = -1;
	CUresult cr = rig_cur(&v->r, g);

	if (cr == CUDA_SUCCESS)
		cr = cu.cuPointerGetAttribute(&flags, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p);
	if (cr != CUDA_SUCCESS) {
		snprintf(why, len, "the driver does not report CU_POINTER_ATTRIBUTE_ACCESS_FLAGS (%s)",
			 cu_errstr(cr));
		return -1;
	}
	return flags == CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE ? 1 : 0;
}

/* Upload the source image to GPU a and poison GPU b's dst (and chk) buffers; wait. */
int vstage(struct vstate *v, struct vtest *t, int a, int b, int chk)
{
	struct rig *r = &v->r;

	VT(rig_cur(r, a), "cuCtxSetCurrent");
	VT(cu.cuMemcpyHtoDAsync(r->g[a].src, v->img, v->total, r->g[a].s[1]),
	   "upload pattern (cuMemcpyHtoDAsync)");
	VT(rig_cur(r, b), "cuCtxSetCurrent");
	VT(cu.cuMemsetD32Async(r->g[b].dst, POISON, v->total / 4, r->g[b].s[1]),
	   "poison destination (cuMemsetD32Async)");
	if (chk)
		VT(cu.cuMemsetD32Async(v->chk[b], POISON, v->total / 4, r->g[b].s[1]),
		   "poison check buffer (cuMemsetD32Async)");
	/* The upload must have landed before any copy reads it. */
	VW(a, r->g[a].s[1], "upload of the pattern");
	VW(b, r->g[b].s[1], "poisoning of the destination");
	return 0;
}

int vreadback(struct vstate *v, struct vtest *t, int g, CUdeviceptr p)
{
	memset(v->got, 0, v->total);
	VT(rig_cur(&v->r, g), "cuCtxSetCurrent");
	VT(cu.cuMemcpyDtoH(v->got, p, v->total), "read back (cuMemcpyDtoH)");
	return 0;
}

/* Round sizes: the full size, then (for a multiple of 16) 5 bytes less, so
 * the kernels' byte tail is always exercised. */
size_t vround_size(const struct vstate *v, int round)
{
	if (round == 0 || v->size % 16 || v->size < 32)
		return v->size;
	return v->size - 5;
}
