// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify: for each GPU pair, enable peer access and move data both
 * ways through every path an application uses, checking every byte and the
 * guard bytes on both sides on the host:
 *   ce, sm-read, sm-write  copy engine (cuMemcpyPeerAsync), SM loads, SM stores
 *   flags, flags-poll      the custom all-reduce pattern: payload + flag with
 *                          release semantics, polled with acquire loads, in
 *                          the GPU's own memory or through peer loads
 *   graph                  ce, sm-write and sm-read captured in CUDA graphs
 *                          and replayed
 *   ipc                    a second process opens the peer's buffers with
 *                          cuIpcOpenMemHandle and copies with CE and SMs
 *   um-*                   managed memory through UVM's mappings and migrations
 *   concurrent             every directed pair at once for --seconds
 * Every test says which path it proved (peer mapping, advice held) or that
 * it could not prove it. Every wait has a deadline: a hung path is reported
 * with its pair and test, and p2pctl exits.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_cmds.h"
#include "cuda_int.h"
#include "engine.h"
#include "linkrate.h"
#include "ncclx.h"

#define GUARD 256		/* guard bytes before and after every destination */
#define POISON 0xa5a5a5a5u	/* destinations and their guards */
#define SRC_TAIL 0x5a		/* around the source's data: an overrun copies it */
#define AUX_BYTES 4096		/* per GPU: the flag (offset 0) and the status (64) */
#define FLAG_MAX (4ULL << 20)	/* payload bytes of the flags tests */
#define FLAG_ROUNDS 8
#define GRAPH_REPLAYS 8
#define VRAM_MARGIN (256ULL << 20)	/* left free at the vram test's top place */

int verify_exit_on_hang = 1;
extern char **environ;

enum {
	V_PATH, V_CE, V_SM_READ, V_SM_WRITE, V_FLAGS, V_FLAGS_POLL, V_GRAPH, V_IPC, V_VRAM,
	V_UM_READ, V_UM_WRITE, V_UM_PREFETCH, V_UM_FAULT, V_CONCURRENT, V_NCCL, V_COUNT
};
#define V_DEV_COUNT V_UM_READ	/* the device-memory tests of a pair come first */
#define V_UM_COUNT (V_CONCURRENT - V_UM_READ)
static const char *const vnames[V_COUNT] = {
	"path", "ce", "sm-read", "sm-write", "flags", "flags-poll", "graph", "ipc", "vram",
	"um-read", "um-write", "um-prefetch", "um-fault", "concurrent", "nccl",
};

/* What a failure of each test usually means, and where doctor looks. */
static const char *const vhint[V_COUNT] = {
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
	"UVM's peer mapping is wrong: check `p2pctl doctor` (uvm peer set, docs/uvm.md)",
	"UVM's peer mapping is wrong: check `p2pctl doctor` (uvm peer set, docs/uvm.md)",
	"UVM's peer migration copy is wrong: check `p2pctl doctor` (uvm peer set)",
	"UVM's fault handling between the GPUs is wrong: check `p2pctl doctor` (uvm peer set)",
	"P2P under load is misrouted or lost (switch, ACS): check `p2pctl doctor` (ACS, topology)",
	"NCCL's all-reduce over these GPUs returns wrong data or hangs (try NCCL_P2P_DISABLE=1 to "
	"see whether its P2P transport is the cause), or NCCL did not use P2P (NCCL_P2P_LEVEL, "
	"NCCL_P2P_DISABLE): check `p2pctl doctor`",
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
	int hung;		/* a wait ran past the deadline */
	char error[1024];
	int mismatch;		/* 1 data, 2 guard after, 3 guard before */
	uint64_t offset, nbad, bytes;
	uint8_t expected, got;
	double gbps;
	int proven;		/* the path was shown (path says how), else path says why not */
	char label[64];		/* nccl: the GPU set */
	double off_gbps, on_us, off_us;	/* path: peer access off/on */
	char path[512];
	int rounds;
	int gpu;		/* 1 + the GPU whose call or wait returned the error */
	uint64_t vram_mb[3][2];	/* vram: the pads (MiB) of each place, on src and dst */
	int cut;		/* concurrent: ended early by a signal */
};

struct vstate {
	struct rig r;
	struct sm_cfg sm;
	uint64_t size, seed0, seed, pad_req;
	uint64_t vseed;		/* the vram test's seeds: a stream of their own */
	int pad_auto;
	size_t total;		/* bytes of every device buffer: GUARD + data + GUARD */
	uint8_t *want, *got, *img;
	int no_managed, loopback;
	unsigned tests;		/* bit per V_* */
	double timeout, seconds;
	CUdeviceptr um;		/* managed buffer of total bytes, for the pair under test */
	CUdeviceptr chk[P2P_MAX_GPUS], aux[P2P_MAX_GPUS], pad[P2P_MAX_GPUS];
	uint64_t padbytes[P2P_MAX_GPUS];
	int hung;
	char hang[768];
	struct linkrate link;	/* of the pair under test */
	struct { int done, ok; double on_gbps, off_gbps, on_us, off_us; }
		pm[P2P_MAX_GPUS][P2P_MAX_GPUS];	/* the path test of a -> b */
	FILE *out;		/* text output (NULL with --json): a line per test as it ends */
	char nccl_log[256];	/* NCCL's debug file (NCCL_DEBUG=INFO) that verify set up */
	char nccl_user[64];	/* the user's own NCCL_DEBUG, which verify leaves alone */
};

/*
 * SIGINT or SIGTERM: the signal's number. The test running finishes (its
 * GPU work is in flight), no new one starts, and the verdict of what ran
 * is printed; a second signal ends the process at once.
 */
static volatile sig_atomic_t vstop;

static void on_stop(int sig)
{
	if (vstop) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	vstop = sig;
}

static void vdone(struct vstate *v, struct vtest *t, int stop_before);

/* No new test starts: a hang or a signal. */
static int vhalt(const struct vstate *v)
{
	return v->hung || vstop;
}

/* The managed-memory part of one pair. */
enum { UM_OK, UM_FAIL, UM_SKIPPED };
static const char *const umstatus[] = { "OK", "FAIL", "SKIPPED" };

struct umpair {
	int status;
	char reason[512];	/* SKIPPED: why; FAIL: an error outside the tests */
	int nok, nfail, nskip;
};

/* Fail t: "WHAT on GPU g: CUDA_ERROR_..." (g: the context the call ran in). */
static int fail(struct vtest *t, const char *what, CUresult cr)
{
	t->ok = 0;
	if (t->hung)
		return -1;
	t->gpu = rig_cur_gpu + 1;
	if (rig_cur_gpu >= 0)
		snprintf(t->error, sizeof(t->error), "%s on GPU %d: %s", what, rig_cur_gpu, cu_errstr(cr));
	else
		snprintf(t->error, sizeof(t->error), "%s: %s", what, cu_errstr(cr));
	return -1;
}

/*
 * A bare CUDA_ERROR_ILLEGAL_ADDRESS tells a user nothing: say that the GPU
 * faulted on the other GPU's memory, through a peer mapping the driver
 * reports but that is not there (or points elsewhere).
 */
static void explain_error(struct vtest *t)
{
	size_t l = strlen(t->error);
	int g = t->gpu ? t->gpu - 1 : t->method == V_IPC ? t->dst : t->engine;
	int p = g == t->src ? t->dst : t->src;

	if (t->ok || t->skipped || !strstr(t->error, "CUDA_ERROR_ILLEGAL_ADDRESS"))
		return;
	if (p == g)
		snprintf(t->error + l, sizeof(t->error) - l, "; GPU %d faulted on an address it was given "
			 "(no peer memory in this test: the tool or the GPU)", g);
	else
		snprintf(t->error + l, sizeof(t->error) - l, "; this likely means GPU %d faulted on GPU "
			 "%d's memory: its peer mapping of that memory is missing or wrong, although peer "
			 "access is on and the driver reports the mapping", g, p);
}

#define VT(call, what)                                  \
	do {                                            \
		CUresult cr_ = (call);                  \
		if (cr_ != CUDA_SUCCESS)                \
			return fail(t, what, cr_);      \
	} while (0)

static void nap(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Wait for stream s of GPU g (or event e) with a deadline: query, never a
 * blocking synchronisation. A wait past the deadline marks the test and the
 * run hung (the GPU context is stuck; nothing more can be trusted to return).
 */
static CUresult vwait(struct vstate *v, struct vtest *t, int g, CUstream s, CUevent e,
		      const char *what)
{
	double end = now_s() + v->timeout;
	long us = 10;
	CUresult cr = rig_cur(&v->r, g);

	if (cr != CUDA_SUCCESS)
		return cr;
	for (;;) {
		cr = s ? cu.cuStreamQuery(s) : cu.cuEventQuery(e);
		if (cr != CUDA_ERROR_NOT_READY)
			return cr;
		if (now_s() > end) {
			t->hung = 1;
			t->ok = 0;
			v->hung = 1;
			snprintf(t->error, sizeof(t->error),
				 "%s did not finish within %.3g s on GPU %d: the path hangs "
				 "(the GPU context is stuck; verify stops here)", what, v->timeout, g);
			snprintf(v->hang, sizeof(v->hang), "%s %d->%d hung: %.700s", vnames[t->method],
				 t->src, t->dst, t->error);
			return CUDA_ERROR_NOT_READY;
		}
		nap(us);
		if (us < 2000)
			us *= 2;
	}
}

#define VW(g, s, what) VT(vwait(v, t, g, s, NULL, what), what)

/*
 * Host images of one round: want = what the destination must hold (poison,
 * the pattern at GUARD, poison), img = what the source holds (SRC_TAIL, the
 * pattern, SRC_TAIL). The seed changes every round.
 */
static void images(struct vstate *v, size_t n)
{
	memset(v->want, (int)(POISON & 0xff), v->total);
	verify_pattern(v->want + GUARD, n, v->seed);
	memset(v->img, SRC_TAIL, v->total);
	memcpy(v->img + GUARD, v->want + GUARD, n);
	v->seed += 0x100000000ULL;
}

/* Compare v->got with v->want: n data bytes at GUARD, then both guards. */
static int check_got(struct vstate *v, struct vtest *t, size_t n)
{
	size_t total = v->total;

	if (verify_compare(v->got + GUARD, v->want + GUARD, n, &t->offset, &t->expected, &t->got,
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
	if (verify_compare(v->got + GUARD + n, v->want + GUARD + n, total - GUARD - n, &t->offset,
			   &t->expected, &t->got, &t->nbad)) {
		t->ok = 0;
		t->mismatch = 2;
		t->offset += n;
		snprintf(t->error, sizeof(t->error),
			 "wrote past the end: offset %" PRIu64 " (0x%" PRIx64 "): expected 0x%02x, got 0x%02x",
			 t->offset, t->offset, t->expected, t->got);
		return -1;
	}
	if (verify_compare(v->got, v->want, GUARD, &t->offset, &t->expected, &t->got, &t->nbad)) {
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
static int peer_mapped(struct vstate *v, int g, CUdeviceptr p, char *why, size_t len)
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
static int stage(struct vstate *v, struct vtest *t, int a, int b, int chk)
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

static int readback(struct vstate *v, struct vtest *t, int g, CUdeviceptr p)
{
	memset(v->got, 0, v->total);
	VT(rig_cur(&v->r, g), "cuCtxSetCurrent");
	VT(cu.cuMemcpyDtoH(v->got, p, v->total), "read back (cuMemcpyDtoH)");
	return 0;
}

/* Round sizes: the full size, then (for a multiple of 16) 5 bytes less, so
 * the kernels' byte tail is always exercised. */
static size_t round_size(const struct vstate *v, int round)
{
	if (round == 0 || v->size % 16 || v->size < 32)
		return v->size;
	return v->size - 5;
}

/* The path of a device-memory test a -> b (ce, sm-*): 0, or -1 with t failed. */
static int dev_path(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst, m;
	char why[256];

	if (a == b) {
		snprintf(t->path, sizeof(t->path), "loopback within GPU %d: no peer path was used", a);
		return 0;
	}
	/* The GPU whose context must map the other's buffer. */
	m = peer_mapped(v, t->engine, t->engine == a ? r->g[b].dst : r->g[a].src, why, sizeof(why));
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
#define PATH_STAGING_MARGIN 1.1	/* peer copies must beat staging by this */
#define PATH_LINK_MARGIN 1.05	/* and may not beat the line rate by more */

/*
 * One side of the path test: copies a -> b with cuMemcpyPeerAsync on a's
 * stream, the destination poisoned first and checked after: the best of
 * PATH_REPS timed copies of n bytes, then PATH_LAT_COPIES 4-byte copies for
 * the latency. 0, or -1 with t failed.
 */
static int path_time(struct vstate *v, struct vtest *t, CUdeviceptr ps, CUdeviceptr pd, size_t n,
		     const uint8_t *want, uint8_t *got, int on, double *gbps, double *us)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst;
	struct gpu *ga = &r->g[a], *gb = &r->g[b];
	CUstream s = ga->s[0];
	float ms = 0;
	uint64_t off, nbad;
	uint8_t e, g8;

	*gbps = 0;
	VT(rig_cur(r, b), "cuCtxSetCurrent");
	VT(cu.cuMemsetD32Async(pd, POISON, n / 4, gb->s[1]), "poison destination (cuMemsetD32Async)");
	VW(b, gb->s[1], "poisoning of the destination");
	VT(rig_cur(r, a), "cuCtxSetCurrent");
	/* a warm-up, then the timed copies */
	VT(cu.cuMemcpyPeerAsync(pd, gb->ctx, ps, ga->ctx, n, s), "cuMemcpyPeerAsync");
	VW(a, s, on ? "the copy with peer access on" : "the copy with peer access off");
	for (int k = 0; k < PATH_REPS; k++) {
		VT(cu.cuEventRecord(ga->ev_start, s), "cuEventRecord");
		VT(cu.cuMemcpyPeerAsync(pd, gb->ctx, ps, ga->ctx, n, s), "cuMemcpyPeerAsync");
		VT(cu.cuEventRecord(ga->ev_stop, s), "cuEventRecord");
		VW(a, s, on ? "the copy with peer access on" : "the copy with peer access off");
		if (cu.cuEventElapsedTime(&ms, ga->ev_start, ga->ev_stop) == CUDA_SUCCESS && ms > 0 &&
		    n / 1e9 / (ms / 1e3) > *gbps)
			*gbps = n / 1e9 / (ms / 1e3);
	}
	VT(cu.cuEventRecord(ga->ev_start, s), "cuEventRecord");
	for (int k = 0; k < PATH_LAT_COPIES; k++)
		VT(cu.cuMemcpyPeerAsync(pd, gb->ctx, ps, ga->ctx, 4, s), "cuMemcpyPeerAsync");
	VT(cu.cuEventRecord(ga->ev_stop, s), "cuEventRecord");
	VW(a, s, "the small copies");
	*us = cu.cuEventElapsedTime(&ms, ga->ev_start, ga->ev_stop) == CUDA_SUCCESS ?
	      ms * 1e3 / PATH_LAT_COPIES : 0;
	VT(rig_cur(r, b), "cuCtxSetCurrent");
	VT(cu.cuMemcpyDtoH(got, pd, n), "read back (cuMemcpyDtoH)");
	if (verify_compare(got, want, n, &off, &e, &g8, &nbad)) {
		t->ok = 0;
		t->mismatch = 1;
		t->offset = off;
		t->expected = e;
		t->got = g8;
		t->nbad = nbad;
		snprintf(t->error, sizeof(t->error), "GPU %d -> GPU %d, peer access %s: first mismatch "
			 "at offset %" PRIu64 ": expected 0x%02x, got 0x%02x%s (%" PRIu64 " of %zu bytes "
			 "differ)", a, b, on ? "on" : "off", off, e, g8,
			 g8 == (POISON & 0xff) ? ", the poison: the write never landed" : "", nbad, n);
		return -1;
	}
	t->bytes += n;
	t->rounds++;
	return 0;
}

/*
 * path a -> b: the same copy timed with peer access off (the driver stages
 * it through host memory) and on; the data checked both times. Peer copies
 * no faster than staging, or faster than the link's line rate, fail.
 */
static int run_path(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst, rc = -1;
	size_t n = v->size < PATH_MIN ? PATH_MIN : v->size > PATH_MAX_BYTES ? PATH_MAX_BYTES : v->size;
	CUdeviceptr ps = 0, pd = 0;
	uint8_t *want = NULL, *got = NULL;
	double on_gbps = 0, on_us = 0, off_gbps = 0, off_us = 0;
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
	verify_pattern(want, n, v->seed ^ 0x7061746800000000ULL);
	cr = rig_cur(r, a);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemAlloc(&ps, n);
	if (cr == CUDA_SUCCESS)
		cr = rig_cur(r, b);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemAlloc(&pd, n);
	if (cr != CUDA_SUCCESS) {
		fail(t, "cuMemAlloc (the path test's buffers)", cr);
		goto out;
	}
	cr = rig_cur(r, a);
	if (cr == CUDA_SUCCESS)
		cr = cu.cuMemcpyHtoDAsync(ps, want, n, r->g[a].s[1]);
	if (cr != CUDA_SUCCESS) {
		fail(t, "upload pattern (cuMemcpyHtoDAsync)", cr);
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
		fail(t, "cuCtxDisablePeerAccess", cr);
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
			fail(t, "cuCtxEnablePeerAccess (again, after the copy with peer access off)", cr);
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
	if (on_gbps < PATH_STAGING_MARGIN * off_gbps) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "P2P works at staging speed: GPU %d -> GPU %d copies "
			 "%.1f GB/s with peer access on, %.1f GB/s with it off (%s); latency %.1f us on, "
			 "%.1f us off: the copies take no direct path", a, b, on_gbps, off_gbps, rate,
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
	t->proven = 1;
	snprintf(t->path, sizeof(t->path), "GPU %d -> GPU %d: %.1f GB/s with peer access on (%s), "
		 "%.1f GB/s off (%.1fx); latency %.1f us on, %.1f us off", a, b, on_gbps, rate, off_gbps,
		 off_gbps > 0 ? on_gbps / off_gbps : 0, on_us, off_us);
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

/* ce, sm-read, sm-write a -> b: two rounds (full size, then a byte tail). */
static int run_test(struct vstate *v, struct vtest *t)
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
	if (dev_path(v, t))
		return -1;
	for (int round = 0; round < 2; round++) {
		size_t n = round_size(v, round);

		images(v, n);
		if (stage(v, t, a, b, 0))
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
		if (readback(v, t, b, gb->dst) || check_got(v, t, n))
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
static const char *const vplace[3] = { "bottom", "middle", "top" };

static int run_vram(struct vstate *v, struct vtest *t)
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
	for (int k = 0; k < 3 && t->ok; k++) {
		CUdeviceptr pad[2] = { 0 }, buf[2] = { 0 };
		struct vtest sub;
		CUresult cr = CUDA_SUCCESS;
		char what[160] = "";

		for (int i = 0; i < 2 && cr == CUDA_SUCCESS; i++) {
			size_t fr = 0, tot = 0;
			uint64_t need = v->total + VRAM_MARGIN, p = 0;

			cr = rig_cur(r, gs[i]);
			if (cr == CUDA_SUCCESS)
				cr = cu.cuMemGetInfo(&fr, &tot);
			if (cr == CUDA_SUCCESS && fr > need && k)
				p = (k == 1 ? (fr - need) / 2 : fr - need) & ~((2ULL << 20) - 1);
			padmb[k][i] = p >> 20;
			if (cr == CUDA_SUCCESS && p)
				cr = cu.cuMemAlloc(&pad[i], p);
			if (cr == CUDA_SUCCESS)
				cr = cu.cuMemAlloc(&buf[i], v->total);
			if (cr != CUDA_SUCCESS)
				snprintf(what, sizeof(what), "%s of free memory: allocating a %" PRIu64 " MiB "
					 "pad and the buffer on GPU %d", vplace[k], p >> 20, gs[i]);
		}
		if (cr != CUDA_SUCCESS) {
			fail(t, what, cr);
		} else {
			r->g[a].src = buf[0];
			r->g[b].dst = buf[1];
			for (int m = 0; m < 3 && t->ok && !v->hung; m++) {
				memset(&sub, 0, sizeof(sub));
				sub.src = a;
				sub.dst = b;
				sub.method = ms[m];
				run_test(v, &sub);
				t->bytes += sub.bytes;
				if (sub.ok)
					continue;
				t->ok = 0;
				t->hung = sub.hung;
				t->gpu = sub.gpu;
				t->mismatch = sub.mismatch;
				t->offset = sub.offset;
				t->nbad = sub.nbad;
				t->expected = sub.expected;
				t->got = sub.got;
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

/*
 * flags a -> b: GPU a stores the payload into GPU b's memory, then the flag
 * (fence.sc.sys + st.release.sys) into b's memory; b polls its own memory
 * with acquire loads, then copies the payload it sees into a check buffer.
 * flags-poll a -> b: a writes the payload and the flag into its own memory;
 * b polls a's flag through SM peer loads, then copies the payload through
 * peer loads. Many rounds, a new flag value and pattern each.
 */
static int run_flags(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst, poll = t->method == V_FLAGS_POLL;
	struct gpu *ga = &r->g[a], *gb = &r->g[b];
	size_t n = v->size < FLAG_MAX ? v->size : FLAG_MAX;
	CUdeviceptr flag = poll ? v->aux[a] : v->aux[b], status = v->aux[b] + 64;
	uint32_t base = (uint32_t)(splitmix64(v->seed) & 0xffffff00u), st[2];
	unsigned long long tmo = (unsigned long long)(v->timeout * 0.5e9);

	t->ok = 1;
	t->engine = b;
	if (!ga->kernels_ok || !gb->kernels_ok) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "kernels not loaded on GPU %d: %.900s",
			 !gb->kernels_ok ? b : a, r->jitlog[0] ? r->jitlog : "unknown reason");
		return -1;
	}
	if (a != b) {
		char why[256];
		int m = peer_mapped(v, poll ? b : a, poll ? ga->src : gb->dst, why, sizeof(why));

		if (m == 0) {
			t->ok = 0;
			snprintf(t->error, sizeof(t->error), "no peer mapping: GPU %d has no access to "
				 "GPU %d's memory (CU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 0) although peer "
				 "access was enabled", poll ? b : a, poll ? a : b);
			return -1;
		}
		t->proven = 1;
		snprintf(t->path, sizeof(t->path), poll ?
			 "GPU %d polled GPU %d's flag and read its payload with SM peer loads" :
			 "GPU %d stored payload and flag into GPU %d's memory with SM peer stores",
			 poll ? b : a, poll ? a : b);
	} else {
		snprintf(t->path, sizeof(t->path), "loopback within GPU %d: no peer path was used", a);
	}
	VT(rig_cur(r, poll ? a : b), "cuCtxSetCurrent");
	VT(cu.cuMemsetD32Async(flag, base, 1, r->g[poll ? a : b].s[1]), "reset flag (cuMemsetD32Async)");
	VW(poll ? a : b, r->g[poll ? a : b].s[1], "reset of the flag");
	for (int round = 0; round < FLAG_ROUNDS; round++) {
		uint32_t val = base + (uint32_t)round + 1;
		images(v, n);
		if (poll) {
			/* Payload and flag on a's stream 2, in that order (the
			 * waiter's stream 0 differs even in loopback). */
			VT(rig_cur(r, b), "cuCtxSetCurrent");
			VT(cu.cuMemsetD32Async(v->chk[b], POISON, v->total / 4, gb->s[1]),
			   "poison check buffer (cuMemsetD32Async)");
			VW(b, gb->s[1], "poisoning of the check buffer");
			VT(rig_cur(r, a), "cuCtxSetCurrent");
			VT(cu.cuMemcpyHtoDAsync(ga->src, v->img, v->total, ga->s[2]),
			   "upload pattern (cuMemcpyHtoDAsync)");
		} else {
			if (stage(v, t, a, b, 1))
				return -1;
		}
		/* The waiter first, so it is polling when the flag comes. */
		{
			CUdeviceptr f = flag, sp = status;
			void *args[4] = { &f, &val, &tmo, &sp };

			VT(rig_cur(r, b), "cuCtxSetCurrent");
			VT(cu.cuLaunchKernel(gb->fn[K_FLAG_WAIT], 1, 1, 1, 1, 1, 1, 0, gb->s[0], args, NULL),
			   "launch p2p_flag_wait");
			VT(sm_launch(r, b, gb->s[0], poll ? K_READ : K_WRITE, &v->sm, v->chk[b] + GUARD,
				     (poll ? ga->src : gb->dst) + GUARD, n), "launch the payload copy");
		}
		{
			CUdeviceptr f = flag;
			void *args[2] = { &f, &val };

			VT(rig_cur(r, a), "cuCtxSetCurrent");
			if (!poll)
				VT(sm_launch(r, a, ga->s[2], K_WRITE, &v->sm, gb->dst + GUARD,
					     ga->src + GUARD, n), "launch p2p_write");
			VT(cu.cuLaunchKernel(ga->fn[K_FLAG_SET], 1, 1, 1, 1, 1, 1, 0, ga->s[2], args, NULL),
			   "launch p2p_flag_set");
		}
		VW(b, gb->s[0], "the flag wait");
		VW(a, ga->s[2], "the flag store");
		VT(rig_cur(r, b), "cuCtxSetCurrent");
		VT(cu.cuMemcpyDtoH(st, status, sizeof(st)), "read status (cuMemcpyDtoH)");
		if (st[1] != 1) {
			t->ok = 0;
			if (st[0] >= base && st[0] < val)
				snprintf(t->error, sizeof(t->error), poll ?
					 "peer read returned an old value: round %d, GPU %d still read "
					 "0x%08x from GPU %d's flag after it was set to 0x%08x "
					 "(stale peer read)" :
					 "flag never arrived: round %d, GPU %d still saw 0x%08x where GPU %d "
					 "stored 0x%08x (SM stores into the peer lost or not visible)",
					 round, b, st[0], a, val);
			else
				snprintf(t->error, sizeof(t->error),
					 "round %d: GPU %d read 0x%08x from the flag, a value nobody wrote "
					 "(want 0x%08x): %s reached the wrong memory", round, b, st[0], val,
					 poll ? "its peer loads" : "the peer stores");
			return -1;
		}
		if (readback(v, t, b, v->chk[b]))
			return -1;
		if (check_got(v, t, n)) {
			char e[1024];

			snprintf(e, sizeof(e), "round %d, payload seen after the flag: %.900s%s", round,
				 t->error, poll ? " (peer read returned old data)" : "");
			snprintf(t->error, sizeof(t->error), "%s", e);
			return -1;
		}
		t->bytes += n;
		t->rounds++;
	}
	return 0;
}

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
		images(v, n);
		if (stage(v, t, a, b, 0))
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
		if (readback(v, t, b, r->g[b].dst))
			return -1;
		if (check_got(v, t, n)) {
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

static int run_graph(struct vstate *v, struct vtest *t)
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
		int m1 = peer_mapped(v, a, r->g[b].dst, why, sizeof(why));
		int m2 = peer_mapped(v, b, r->g[a].src, why, sizeof(why));

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

/*
 * ipc a -> b: a second process (p2pctl itself, run as "verify --ipc-child",
 * or $P2PCTL_SELF) opens GPU a's source and destination buffers with
 * cuIpcOpenMemHandle in GPU b's context, as NCCL and vLLM share buffers
 * between ranks, and runs on them: a copy-engine copy (cuMemcpyDtoDAsync
 * from a's source into its own buffer), a p2p_read kernel, both checked
 * there, and a p2p_write kernel into a's destination, checked here.
 */
static void hex(char *out, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", ((const uint8_t *)p)[i]);
}

static int unhex(void *p, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned x;

		if (sscanf(s + 2 * i, "%2x", &x) != 1)
			return -1;
		((uint8_t *)p)[i] = (uint8_t)x;
	}
	return 0;
}

/* Wait for s with a deadline (the child's version of vwait). */
static CUresult child_wait(CUstream s, double timeout)
{
	double end = now_s() + timeout;
	long us = 10;
	CUresult cr;

	while ((cr = cu.cuStreamQuery(s)) == CUDA_ERROR_NOT_READY) {
		if (now_s() > end)
			return CUDA_ERROR_NOT_READY;
		nap(us);
		if (us < 2000)
			us *= 2;
	}
	return cr;
}

/* The second process. Prints "ipc-child: PART OK|FAIL text|DONE" lines. */
static int ipc_child(const char *spec, FILE *out)
{
	struct rig *r = calloc(1, sizeof(*r));
	char emsg[512], hs[129], hd[129];
	CUipcMemHandle h[2];
	CUdeviceptr ps = 0, pd = 0, L = 0;
	uint64_t s1, s2, off, nbad;
	uint8_t *want = NULL, *got = NULL, e, g;
	size_t n;
	double timeout;
	int b, use[P2P_MAX_GPUS] = { 0 }, rc = P2P_EXIT_FAIL;
	CUresult cr;
	struct sm_cfg sm = { 512, 4 };
	CUstream s;

	if (!r || sscanf(spec, "b=%d,n=%zu,s1=%" SCNx64 ",s2=%" SCNx64 ",t=%lf,src=%128[0-9a-f],dst=%128[0-9a-f]",
			 &b, &n, &s1, &s2, &timeout, hs, hd) != 7 || b < 0 || b >= P2P_MAX_GPUS || !n ||
	    unhex(&h[0], hs, 64) || unhex(&h[1], hd, 64)) {
		fprintf(out, "ipc-child: ERROR bad --ipc-child '%s'\n", spec);
		free(r);
		return P2P_EXIT_USAGE;
	}
	if (cu_open(emsg, sizeof(emsg))) {
		fprintf(out, "ipc-child: ERROR %s\n", emsg);
		free(r);
		return P2P_EXIT_NODEV;
	}
	use[b] = 1;
	if (rig_open(r, use, 0, 0, emsg, sizeof(emsg))) {
		fprintf(out, "ipc-child: ERROR %s\n", emsg);
		goto close;
	}
	s = r->g[b].s[0];
	want = malloc(n);
	got = malloc(n);
#define CC(call, what)                                                                   \
	do {                                                                             \
		cr = (call);                                                             \
		if (cr != CUDA_SUCCESS) {                                                \
			fprintf(out, "ipc-child: ERROR %s: %s\n", what, cu_errstr(cr));  \
			goto rig;                                                        \
		}                                                                        \
	} while (0)
	CC(want && got ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY, "host memory");
	CC(rig_cur(r, b), "cuCtxSetCurrent");
	CC(cu.cuMemAlloc(&L, (n + 3) & ~(size_t)3), "cuMemAlloc");
	CC(cu.cuIpcOpenMemHandle(&ps, h[0], CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
	   "cuIpcOpenMemHandle (source)");
	CC(cu.cuIpcOpenMemHandle(&pd, h[1], CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
	   "cuIpcOpenMemHandle (destination)");
	verify_pattern(want, n, s1);
	for (int part = 0; part < 2; part++) {
		const char *name = part ? "sm-read" : "ce";

		CC(cu.cuMemsetD32Async(L, POISON, (n + 3) / 4, s), "cuMemsetD32Async");
		if (part)
			CC(sm_launch(r, b, s, K_READ, &sm, L, ps + GUARD, n), "launch p2p_read");
		else
			CC(cu.cuMemcpyDtoDAsync(L, ps + GUARD, n, s), "cuMemcpyDtoDAsync");
		cr = child_wait(s, timeout);
		if (cr == CUDA_ERROR_NOT_READY) {
			fprintf(out, "ipc-child: %s FAIL did not finish within %.3g s (hung)\n", name, timeout);
			fflush(out);
			_exit(P2P_EXIT_FAIL);	/* a stuck context: do not tear it down */
		}
		CC(cr, name);
		CC(cu.cuMemcpyDtoH(got, L, n), "cuMemcpyDtoH");
		if (verify_compare(got, want, n, &off, &e, &g, &nbad))
			fprintf(out, "ipc-child: %s FAIL first mismatch at offset %" PRIu64 " (0x%" PRIx64
				"): expected 0x%02x, got 0x%02x%s (%" PRIu64 " of %zu bytes differ)\n", name,
				off, off, e, g, g == (POISON & 0xff) ? ", the poison: the write never landed" : "",
				nbad, n);
		else
			fprintf(out, "ipc-child: %s OK\n", name);
	}
	verify_pattern(want, n, s2);
	CC(cu.cuMemcpyHtoDAsync(L, want, n, s), "cuMemcpyHtoDAsync");
	CC(sm_launch(r, b, s, K_WRITE, &sm, pd + GUARD, L, n), "launch p2p_write");
	cr = child_wait(s, timeout);
	if (cr == CUDA_ERROR_NOT_READY) {
		fprintf(out, "ipc-child: sm-write FAIL did not finish within %.3g s (hung)\n", timeout);
		fflush(out);
		_exit(P2P_EXIT_FAIL);
	}
	CC(cr, "sm-write");
	fprintf(out, "ipc-child: sm-write DONE\n");
	rc = 0;
rig:
#undef CC
	if (ps)
		cu.cuIpcCloseMemHandle(ps);
	if (pd)
		cu.cuIpcCloseMemHandle(pd);
	if (L)
		cu.cuMemFree(L);
	rig_close(r);
close:
	cu_close();
	free(want);
	free(got);
	free(r);
	return rc;
}

/* Run the child; its output lines in buf. 0, or -1 with t failed. */
static int ipc_spawn(struct vstate *v, struct vtest *t, const char *spec, char *buf, size_t len)
{
	const char *self = getenv("P2PCTL_SELF");
	char *argv[] = { NULL, "verify", "--ipc-child", (char *)spec, NULL };
	posix_spawn_file_actions_t fa;
	int fd[2], status = 0, st;
	size_t got = 0;
	double end = now_s() + 3 * v->timeout + 10;
	pid_t pid;

	argv[0] = (char *)(self && *self ? self : "/proc/self/exe");
	if (pipe(fd)) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	st = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	if (st) {
		close(fd[0]);
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "cannot start the second process %s: %s", argv[0],
			 strerror(st));
		return -1;
	}
	for (;;) {
		struct pollfd p = { fd[0], POLLIN, 0 };
		int left = (int)((end - now_s()) * 1000);
		ssize_t k;

		if (left <= 0 || poll(&p, 1, left) <= 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			close(fd[0]);
			t->ok = 0;
			snprintf(t->error, sizeof(t->error), "the second process did not finish within "
				 "%.3g s and was killed: the IPC path hangs", 3 * v->timeout + 10);
			return -1;
		}
		k = read(fd[0], buf + got, len - 1 - got);
		if (k <= 0)
			break;
		got += (size_t)k;
		if (got >= len - 1)
			break;
	}
	buf[got] = '\0';
	close(fd[0]);
	waitpid(pid, &status, 0);
	return 0;
}

static int run_ipc(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst;
	size_t n = v->size < FLAG_MAX ? v->size : FLAG_MAX;
	char spec[512], hs[129], hd[129], out[4096];
	static const char *const part[3] = { "ce", "sm-read", "sm-write" };
	CUipcMemHandle h[2];
	uint64_t s1, s2;

	t->ok = 1;
	t->engine = b;
	if (!cu.cuIpcGetMemHandle || !cu.cuIpcOpenMemHandle || !cu.cuIpcCloseMemHandle) {
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "the CUDA driver lacks cuIpcGetMemHandle, "
			 "cuIpcOpenMemHandle_v2 or cuIpcCloseMemHandle");
		return 0;
	}
	s1 = v->seed;
	images(v, n);
	s2 = v->seed;
	v->seed += 0x100000000ULL;
	if (stage(v, t, a, a, 0))
		return -1;
	VT(rig_cur(r, a), "cuCtxSetCurrent");
	VT(cu.cuIpcGetMemHandle(&h[0], r->g[a].src), "cuIpcGetMemHandle (source)");
	VT(cu.cuIpcGetMemHandle(&h[1], r->g[a].dst), "cuIpcGetMemHandle (destination)");
	hex(hs, &h[0], 64);
	hex(hd, &h[1], 64);
	snprintf(spec, sizeof(spec), "b=%d,n=%zu,s1=%" PRIx64 ",s2=%" PRIx64 ",t=%g,src=%s,dst=%s",
		 b, n, s1, s2, v->timeout, hs, hd);
	if (ipc_spawn(v, t, spec, out, sizeof(out)))
		return -1;
	for (int k = 0; k < 3; k++) {
		char key[64], *l;

		snprintf(key, sizeof(key), "ipc-child: %s ", part[k]);
		l = strstr(out, key);
		if (!l || (strncmp(l + strlen(key), "OK", 2) && strncmp(l + strlen(key), "DONE", 4))) {
			char *e = strstr(out, "ipc-child: ERROR "), *nl;

			if (l)
				e = l + strlen(key) + 5;	/* after "FAIL " */
			else if (e)
				e += 17;
			nl = e ? strchr(e, '\n') : NULL;
			t->ok = 0;
			snprintf(t->error, sizeof(t->error), "second process on GPU %d, %s of GPU %d's "
				 "buffer: %.*s", b, part[k], a, e ? (int)(nl ? nl - e : (long)strlen(e)) : 40,
				 e ? e : "no result (see its output)");
			return -1;
		}
		t->rounds++;
		t->bytes += n;
	}
	/* The write: poison, the pattern of seed s2, poison, in a's destination. */
	memset(v->want, (int)(POISON & 0xff), v->total);
	verify_pattern(v->want + GUARD, n, s2);
	if (readback(v, t, a, r->g[a].dst))
		return -1;
	if (check_got(v, t, n)) {
		char e[1024];

		snprintf(e, sizeof(e), "second process on GPU %d, sm-write into GPU %d's buffer: %.900s",
			 b, a, t->error);
		snprintf(t->error, sizeof(t->error), "%s", e);
		return -1;
	}
	t->proven = a != b;
	snprintf(t->path, sizeof(t->path), a != b ?
		 "a second process opened GPU %d's buffers with cuIpcOpenMemHandle; GPU %d's copy "
		 "engine and SMs reached them through the peer mapping" :
		 "loopback within GPU %d: a second process, no peer path", a, b);
	return 0;
}

/*
 * nccl: when libnccl.so.2 can be opened (dlopen, as libcuda is; the path in
 * $P2PCTL_LIBNCCL overrides), an int32 sum all-reduce over each selected
 * pair and over all the GPUs, with known data, every element checked, for
 * sizes from 8 B to 64 MiB (capped by --size). One thread drives all GPUs
 * (ncclCommInitAll + a group call); every wait has the deadline, and a hung
 * all-reduce aborts the communicators.
 */
#define nccl nx
#define NCCL_INT32 NCCLX_INT32
#define NCCL_SUM NCCLX_SUM
#define NCCL_MAX_BYTES (64ULL << 20)

static int nccl_open(char *why, size_t len)
{
	return ncclx_open(why, len);
}

/* Element k of GPU g's input: small, so the int32 sums cannot overflow. */
static int32_t nccl_elem(uint64_t seed, int g, size_t k)
{
	return (int32_t)(splitmix64(seed + ((uint64_t)g << 48) + k) & 0xffff) - 0x8000;
}

/*
 * One all-reduce of count int32 over the ng GPUs in gs: src in each GPU's
 * src buffer, result in its dst; every GPU's result checked. 0, or -1 with t
 * failed (and v->hung on a hang).
 */
static int nccl_once(struct vstate *v, struct vtest *t, const int *gs, int ng, size_t count)
{
	struct rig *r = &v->r;
	int devs[P2P_MAX_GPUS], nr;
	ncclComm_t comm[P2P_MAX_GPUS] = { NULL };
	int32_t *host = (int32_t *)v->img, *got = (int32_t *)v->got, *want = (int32_t *)v->want;
	uint64_t seed = v->seed;
	int rc = -1;

	v->seed += 0x100000000ULL;
	for (int k = 0; k < ng; k++)
		devs[k] = r->g[gs[k]].dev;
	for (size_t e = 0; e < count; e++) {
		int64_t s = 0;

		for (int k = 0; k < ng; k++)
			s += nccl_elem(seed, gs[k], e);
		want[e] = (int32_t)s;
	}
	for (int k = 0; k < ng; k++) {
		int g = gs[k];

		for (size_t e = 0; e < count; e++)
			host[e] = nccl_elem(seed, g, e);
		VT(rig_cur(r, g), "cuCtxSetCurrent");
		VT(cu.cuMemcpyHtoDAsync(r->g[g].src, host, count * 4, r->g[g].s[1]),
		   "upload (cuMemcpyHtoDAsync)");
		VT(cu.cuMemsetD32Async(r->g[g].dst, POISON, count, r->g[g].s[1]), "cuMemsetD32Async");
		VW(g, r->g[g].s[1], "upload of the all-reduce input");
	}
	nr = ncclx_init_all(comm, ng, devs, v->timeout, t->error, sizeof(t->error));
	if (nr) {
		t->ok = 0;
		if (nr == 2) {
			/* NCCL is stuck in init: nothing more can be trusted to return */
			t->hung = 1;
			v->hung = 1;
			snprintf(v->hang, sizeof(v->hang), "nccl %.60s hung: %.600s", t->label, t->error);
		}
		return -1;
	}
	nr = nccl.GroupStart();
	for (int k = 0; k < ng && !nr; k++)
		nr = nccl.AllReduce((void *)(uintptr_t)r->g[gs[k]].src, (void *)(uintptr_t)r->g[gs[k]].dst,
				    count, NCCL_INT32, NCCL_SUM, comm[k], r->g[gs[k]].s[0]);
	if (!nr)
		nr = nccl.GroupEnd();
	else
		nccl.GroupEnd();
	if (nr) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "ncclAllReduce: %s", nccl.GetErrorString(nr));
		goto out;
	}
	for (int k = 0; k < ng; k++)
		if (vwait(v, t, gs[k], r->g[gs[k]].s[0], NULL, "the NCCL all-reduce") != CUDA_SUCCESS) {
			if (!t->hung)
				snprintf(t->error, sizeof(t->error), "the NCCL all-reduce failed on GPU %d",
					 gs[k]);
			t->ok = 0;
			goto out;
		}
	for (int k = 0; k < ng; k++) {
		uint64_t off, nbad;
		uint8_t e, g8;

		VT(rig_cur(r, gs[k]), "cuCtxSetCurrent");
		VT(cu.cuMemcpyDtoH(got, r->g[gs[k]].dst, count * 4), "read back (cuMemcpyDtoH)");
		if (verify_compare((uint8_t *)got, (uint8_t *)want, count * 4, &off, &e, &g8, &nbad)) {
			size_t el = off / 4;

			t->ok = 0;
			snprintf(t->error, sizeof(t->error), "GPU %d's result: element %zu is %d, the sum "
				 "is %d (%" PRIu64 " bytes of %zu differ)", gs[k], el, got[el], want[el],
				 nbad, count * 4);
			goto out;
		}
	}
	t->bytes += count * 4;
	t->rounds++;
	rc = 0;
out:
	for (int k = 0; k < ng; k++)
		if (comm[k])
			(v->hung ? nccl.CommAbort : nccl.CommDestroy)(comm[k]);
	return rc;
}

/* The nccl tests of one GPU set: all sizes. */
static void run_nccl(struct vstate *v, struct vtest *t, const int *gs, int ng)
{
	uint64_t max = v->size < NCCL_MAX_BYTES ? v->size : NCCL_MAX_BYTES;

	t->ok = 1;
	t->method = V_NCCL;
	t->src = gs[0];
	t->dst = gs[ng - 1];
	t->engine = ng;		/* the number of GPUs */
	if (max < 8) {
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "--size is below the 8 bytes it needs");
		return;
	}
	for (uint64_t b = 8; b <= max && !v->hung; b *= 8) {
		size_t count = (size_t)(b / 4);

		if (nccl_once(v, t, gs, ng, count)) {
			char e[1024];

			snprintf(e, sizeof(e), "%" PRIu64 " bytes: %.900s", b, t->error);
			snprintf(t->error, sizeof(t->error), "%s", e);
			return;
		}
		if (b * 8 > max && b != max && max % 4 == 0 && max >= 8) {
			if (nccl_once(v, t, gs, ng, (size_t)(max / 4))) {
				char e[1024];

				snprintf(e, sizeof(e), "%" PRIu64 " bytes: %.900s", max, t->error);
				snprintf(t->error, sizeof(t->error), "%s", e);
				return;
			}
		}
	}
	snprintf(t->path, sizeof(t->path), "NCCL chose its own transport (P2P, shared memory or "
		 "network); p2pctl does not see which");
}

/*
 * NCCL says which transport each channel connection uses, at INFO level
 * ("NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"). Unless the user
 * set NCCL_DEBUG, verify sends that into a file of its own for the nccl
 * test, before NCCL is loaded (NCCL reads its environment at its first
 * call).
 */
static void nccl_debug_begin(struct vstate *v)
{
	const char *d = getenv("NCCL_DEBUG"), *tmp = getenv("TMPDIR");

	if (d) {
		snprintf(v->nccl_user, sizeof(v->nccl_user), "%s", d);
		return;
	}
	snprintf(v->nccl_log, sizeof(v->nccl_log), "%s/p2pctl-nccl-%d.log", tmp && *tmp ? tmp : "/tmp",
		 (int)getpid());
	unlink(v->nccl_log);
	setenv("NCCL_DEBUG", "INFO", 1);
	setenv("NCCL_DEBUG_SUBSYS", "INIT", 0);
	setenv("NCCL_DEBUG_FILE", v->nccl_log, 1);
}

static void nccl_debug_end(struct vstate *v)
{
	if (!v->nccl_log[0])
		return;
	unlink(v->nccl_log);
	unsetenv("NCCL_DEBUG");
	unsetenv("NCCL_DEBUG_FILE");
}

static long nccl_log_size(const struct vstate *v)
{
	FILE *f = v->nccl_log[0] ? fopen(v->nccl_log, "r") : NULL;
	long n = 0;

	if (f && !fseek(f, 0, SEEK_END))
		n = ftell(f);
	if (f)
		fclose(f);
	return n < 0 ? 0 : n;
}

/*
 * The transports of the channel connections NCCL logged since offset off
 * (the GPU set gs's test): t->path says which. A connection via anything
 * but P2P between two GPUs with peer access fails t: NCCL's topology check
 * (NCCL_P2P_LEVEL) ruled P2P out, and NCCL runs at shared-memory speed.
 */
static void nccl_transport(struct vstate *v, struct vtest *t, const int *gs, int ng, long off)
{
	struct { char name[48]; int n; } tr[8] = { 0 };
	int ntr = 0, total = 0, bad = 0, ba = -1, bb = -1;
	char line[1024], badtr[48] = "", lvl[96] = "";
	const char *env = getenv("NCCL_P2P_LEVEL");
	FILE *f;

	if (!v->nccl_log[0]) {
		snprintf(t->path, sizeof(t->path), "NCCL chose its own transport; NCCL_DEBUG is set (%s), "
			 "so p2pctl did not read which", v->nccl_user);
		return;
	}
	f = fopen(v->nccl_log, "r");
	if (f && fseek(f, off, SEEK_SET)) {
		fclose(f);
		f = NULL;
	}
	while (f && fgets(line, sizeof(line), f)) {
		const char *c = strstr(line, " Channel "), *via = strstr(line, " via ");
		int ra, rb, k;
		char name[48];

		c = c ? strstr(c, " : ") : NULL;
		/* the rest of the line: "P2P/CUMEM/read", "P2P/direct pointer", "SHM/direct/direct" */
		if (!c || !via || sscanf(c + 3, "%d[%*[^]]] -> %d[%*[^]]]", &ra, &rb) != 2 ||
		    sscanf(via + 5, "%47[^\n]", name) != 1 || ra < 0 || rb < 0 || ra >= ng || rb >= ng)
			continue;
		total++;
		for (k = 0; k < ntr && strcmp(tr[k].name, name); k++)
			;
		if (k == ntr && ntr < 8) {
			snprintf(tr[ntr].name, sizeof(tr[ntr].name), "%s", name);
			tr[ntr++].n = 0;
		}
		if (k < ntr)
			tr[k].n++;
		if (strncmp(name, "P2P", 3) && v->r.peer_on[gs[ra]][gs[rb]] && v->r.peer_on[gs[rb]][gs[ra]]) {
			if (!bad++) {
				ba = gs[ra];
				bb = gs[rb];
				snprintf(badtr, sizeof(badtr), "%s", name);
			}
		}
	}
	if (f)
		fclose(f);
	if (!total) {
		snprintf(t->path, sizeof(t->path), "NCCL chose its own transport; its debug output "
			 "(NCCL_DEBUG=INFO) named none");
		return;
	}
	if (ntr == 1) {
		snprintf(t->path, sizeof(t->path), "NCCL reports %s on all %d channel connections "
			 "(NCCL_DEBUG=INFO); p2pctl does not measure NCCL's path", tr[0].name, total);
	} else {
		size_t l = (size_t)snprintf(t->path, sizeof(t->path), "NCCL reports");

		for (int k = 0; k < ntr && l < sizeof(t->path); k++)
			l += (size_t)snprintf(t->path + l, sizeof(t->path) - l, "%s %s on %d", k ? "," : "",
					      tr[k].name, tr[k].n);
		if (l < sizeof(t->path))
			snprintf(t->path + l, sizeof(t->path) - l, " of %d channel connections "
				 "(NCCL_DEBUG=INFO); p2pctl does not measure NCCL's path", total);
	}
	if (!bad || !t->ok)
		return;
	if (env)
		snprintf(lvl, sizeof(lvl), "NCCL_P2P_LEVEL=%.40s (set here)", env);
	else
		snprintf(lvl, sizeof(lvl), "NCCL_P2P_LEVEL");
	t->ok = 0;
	if (getenv("NCCL_P2P_DISABLE") && strcmp(getenv("NCCL_P2P_DISABLE"), "0"))
		snprintf(t->error, sizeof(t->error), "NCCL moved data via %s on %d of %d channel connections "
			 "between GPUs with peer access (%d->%d first), not P2P: NCCL_P2P_DISABLE is set",
			 badtr, bad, total, ba, bb);
	else
		snprintf(t->error, sizeof(t->error), "NCCL moved data via %s on %d of %d channel connections "
			 "between GPUs with peer access (%d->%d first), not P2P: its topology check put them "
			 "further apart than %s allows (NCCL_P2P_LEVEL=SYS lets it use P2P)", badtr, bad,
			 total, ba, bb, lvl);
}

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
	int accessor = owner == a ? b : a;
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
	images(v, n);
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
		int m = peer_mapped(v, accessor, r->g[owner].src, why, sizeof(why));
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
		t->proven = m == 1 && h == 1;
		if (!t->proven)
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
	if (mapped && t->proven) {
		/* After the access: still where the advice put them. */
		if (um_held(v, owner, accessor, why, sizeof(why)) == 0) {
			t->ok = 0;
			snprintf(t->error, sizeof(t->error), "after the access: the pages' attributes "
				 "changed (%s): UVM did not keep them where the advice put them", why);
			return -1;
		}
		snprintf(t->path, sizeof(t->path),
			 "GPU %d maps GPU %d's memory; preferred location GPU %d, accessed by GPU %d "
			 "and last prefetch to GPU %d held before and after (CUDA reports no per-page "
			 "residency)", accessor, owner, owner, accessor, owner);
	}
	if (!mapped)
		snprintf(t->path, sizeof(t->path), "UVM chooses how it %s (peer copy, host "
			 "staging or a mapping); CUDA does not say which",
			 t->method == V_UM_PREFETCH ? "migrates" : "serves the faults");
	if (t->method != V_UM_READ && um_readback(v, t, b))
		return -1;
	if (mapped)
		VT(um_advise(v, owner, accessor, 0), "cuMemAdvise (unset)");
	if (readback(v, t, b, gb->dst) || check_got(v, t, n))
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
		u->nskip = a == b || !strcmp(why, "not in --tests") ? 0 : V_UM_COUNT * 2;
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
			int stop_before = vstop, bad;

			memset(t, 0, sizeof(*t));
			t->src = d ? b : a;
			t->dst = d ? a : b;
			t->method = m;
			if (gate && m != V_UM_READ) {
				t->skipped = 1;
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
		if (readback(v, t, b, r->g[b].dst))
			return -1;
		for (int k = first; k < nt; k++) {
			struct vtest *p = &tests[k];
			int a = p->src, j = idx[a] - (idx[a] > idx[b]);
			size_t off = GUARD + (size_t)j * 3 * slice;

			if (p->dst != b || !p->ok)
				continue;
			verify_pattern(v->want, v->size, conc_seed(seed, a));
			p->rounds = round;
			p->bytes += 3 * slice;
			for (int q = 0; q < 3 && p->ok; q++)
				if (verify_compare(v->got + off + q * slice, v->want + off - GUARD + q * slice,
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
			verify_pattern(v->img + GUARD, v->size, conc_seed(seed, g));
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
	} while (now_s() < end && !vstop);
	for (int k = first; k < nt && vstop; k++)
		tests[k].cut = 1;
	return 0;
}

/*
 * concurrent: every directed pair of the selected pairs at once, both ways,
 * for v->seconds: into GPU b's destination, each source a has three slices,
 * one written by a's copy engine, one by a's SM stores, one read by b's SM
 * loads. Every round is checked; one result per directed pair.
 */
static int run_concurrent(struct vstate *v, int sel[P2P_MAX_GPUS][P2P_MAX_GPUS], struct vtest *tests,
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

static unsigned parse_tests(const char *s, char *msg, size_t len)
{
	unsigned m = 0;
	char buf[256], *save = NULL;

	if (!s || !strcmp(s, "all"))
		return (1u << V_COUNT) - 1;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int k, found = 0;

		for (k = 0; k < V_COUNT; k++)
			if (!strcmp(w, vnames[k])) {
				m |= 1u << k;
				found = 1;
			}
		if (!strcmp(w, "flags")) {
			m |= 1u << V_FLAGS_POLL;
		} else if (!strcmp(w, "um")) {
			m |= ((1u << V_UM_COUNT) - 1) << V_UM_READ;
			found = 1;
		} else if (!strcmp(w, "sm")) {
			m |= 1u << V_SM_READ | 1u << V_SM_WRITE;
			found = 1;
		}
		if (!found) {
			snprintf(msg, len, "unknown test '%s' in --tests", w);
			return 0;
		}
	}
	return m;
}

static void vusage(FILE *f)
{
	fprintf(f,
		"Usage: p2pctl verify [--size BYTES] [--pairs I-J,...] [--tests LIST] [--seed N]\n"
		"                     [--seconds S] [--timeout S] [--offset BYTES|auto] [--loopback]\n"
		"                     [--no-managed] [--json]\n"
		"  --size BYTES     bytes per copy (default 64M = 64 MiB; any size >= 1)\n"
		"  --pairs LIST     only these GPU pairs (default: every pair)\n"
		"  --tests LIST     only these tests (default all): path, ce, sm-read, sm-write,\n"
		"                   sm, flags, flags-poll, graph, ipc, vram, um-read, um-write,\n"
		"                   um-prefetch, um-fault, um, concurrent, nccl\n"
		"  --seed N         pattern seed (default: random, printed)\n"
		"  --seconds S      how long the concurrent test runs (default 3)\n"
		"  --timeout S      deadline of every wait; a later one is a hang (default 10)\n"
		"  --offset BYTES   allocate this much on each GPU before the test buffers\n"
		"                   (auto: about half of free; default 0: the vram test\n"
		"                   places buffers at the bottom, middle and top)\n"
		"  --loopback       test each GPU against itself (one GPU is enough; proves no\n"
		"                   P2P path, checks the tool, the kernels and the GPU)\n"
		"  --no-managed     skip the managed-memory (cuMemAllocManaged) tests\n"
		"  --json           JSON on stdout\n"
		"  --help           this text\n"
		"tests, both ways for each pair: path (the same copy timed with peer access\n"
		"  off and on, against the link's line rate); ce, sm-read, sm-write;\n"
		"  flags, flags-poll (payload + release flag, polled with acquire loads);\n"
		"  graph (ce, sm-write and sm-read captured in CUDA graphs, replayed);\n"
		"  ipc (a second process opens the buffers with cuIpcOpenMemHandle);\n"
		"  vram (ce, sm-read, sm-write at the bottom, middle and top of free memory);\n"
		"  um-read, um-write (a GPU using the other's managed pages through its\n"
		"  mapping), um-prefetch (migration between the GPUs), um-fault (demand\n"
		"  paging); then concurrent (every directed pair at once) and nccl\n"
		"  (all-reduce through libnccl.so.2 when it loads, 8 B to 64 MiB)\n"
		"output: a line per test as it ends, a test x direction grid and a verdict\n"
		"  per pair; SIGINT or SIGTERM prints a partial verdict\n"
		"exit status: 0 all OK, 1 a test failed or hung, 2 usage, 3 no driver or\n"
		"  fewer than 2 GPUs (without --loopback), 128 + N after signal N\n");
}

static json_object *test_json(const struct vtest *t)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "method", json_object_new_string(vnames[t->method]));
	if (t->label[0])
		json_object_object_add(o, "gpus", json_object_new_string(t->label));
	json_object_object_add(o, "src", json_object_new_int(t->src));
	json_object_object_add(o, "dst", json_object_new_int(t->dst));
	json_object_object_add(o, "engine_gpu", json_object_new_int(t->engine));
	json_object_object_add(o, "status", json_object_new_string(
		t->skipped ? "SKIPPED" : t->ok ? "OK" : "FAIL"));
	if (t->skipped) {
		json_object_object_add(o, "reason", json_object_new_string(t->error));
		return o;
	}
	json_object_object_add(o, "path_proven", json_object_new_boolean(t->proven && t->ok));
	if (t->method == V_PATH && (t->ok || t->off_gbps > 0)) {
		json_object_object_add(o, "off_gbps", json_object_new_double((double)(int64_t)(t->off_gbps * 100) / 100));
		json_object_object_add(o, "on_latency_us", json_object_new_double((double)(int64_t)(t->on_us * 100) / 100));
		json_object_object_add(o, "off_latency_us", json_object_new_double((double)(int64_t)(t->off_us * 100) / 100));
	}
	if (t->path[0])
		json_object_object_add(o, "path", json_object_new_string(t->path));
	json_object_object_add(o, "rounds", json_object_new_int(t->rounds));
	json_object_object_add(o, "bytes_checked", json_object_new_int64((int64_t)t->bytes));
	if (t->ok) {
		json_object_object_add(o, "gbps", json_object_new_double((double)(int64_t)(t->gbps * 100) / 100));
	} else {
		json_object_object_add(o, "error", json_object_new_string(t->error));
		json_object_object_add(o, "hint", json_object_new_string(vhint[t->method]));
		if (t->hung)
			json_object_object_add(o, "hung", json_object_new_boolean(1));
		if (t->mismatch) {
			json_object *m = json_object_new_object();

			json_object_object_add(m, "offset", json_object_new_int64((int64_t)t->offset));
			json_object_object_add(m, "expected", json_object_new_int(t->expected));
			json_object_object_add(m, "got", json_object_new_int(t->got));
			json_object_object_add(m, "where", json_object_new_string(
				t->mismatch == 1 ? "data" : t->mismatch == 2 ? "guard" : "guard-before"));
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
	case V_FLAGS:
		snprintf(buf, len, "%d rounds, GPU %d stores payload + flag, GPU %d polls", t->rounds,
			 t->src, t->dst);
		break;
	case V_FLAGS_POLL:
		snprintf(buf, len, "%d rounds, GPU %d polls GPU %d's flag through peer loads",
			 t->rounds, t->dst, t->src);
		break;
	case V_GRAPH:
		snprintf(buf, len, "%d replays of ce + sm-write (GPU %d) and sm-read (GPU %d) graphs",
			 t->rounds, t->src, t->dst);
		break;
	case V_IPC:
		snprintf(buf, len, "ce, sm-read and sm-write by a second process on GPU %d", t->dst);
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
	case V_VRAM:
		snprintf(buf, len, "ce, sm-read and sm-write at the bottom, middle and top of free memory "
			 "(pads of %" PRIu64 ", %" PRIu64 " and %" PRIu64 " MiB on GPU %d, %" PRIu64 ", %"
			 PRIu64 " and %" PRIu64 " MiB on GPU %d)", t->vram_mb[0][0], t->vram_mb[1][0],
			 t->vram_mb[2][0], t->src, t->vram_mb[0][1], t->vram_mb[1][1], t->vram_mb[2][1],
			 t->dst);
		break;
	case V_CONCURRENT:
		snprintf(buf, len, "%d rounds of all pairs at once%s", t->rounds,
			 t->cut ? " (cut short by the signal)" : "");
		break;
	case V_NCCL:
		snprintf(buf, len, "int32 sum all-reduce over %d GPU%s, %d sizes from 8 bytes", t->engine,
			 t->engine == 1 ? "" : "s", t->rounds);
		break;
	default:
		snprintf(buf, len, "kernel on GPU %d", t->engine);
	}
	return buf;
}

static void test_print(FILE *out, const struct vtest *t)
{
	char how[256];

	if (t->label[0])
		fprintf(out, "  %-11s %-4s  %-4s", vnames[t->method], t->label,
			t->skipped ? "SKIP" : t->ok ? "OK" : "FAIL");
	else
		fprintf(out, "  %-11s %d->%d  %-4s", vnames[t->method], t->src, t->dst,
			t->skipped ? "SKIP" : t->ok ? "OK" : "FAIL");
	if (t->skipped) {
		fprintf(out, "  %s\n", t->error);
	} else if (t->ok && t->method == V_PATH) {
		fprintf(out, "  %s\n", t->path);
	} else if (t->ok) {
		fprintf(out, "  %" PRIu64 " bytes, %s", t->bytes, test_how(t, how, sizeof(how)));
		if (t->gbps > 0)
			fprintf(out, ", %.1f GB/s", t->gbps);
		fprintf(out, "; %s: %s\n", t->proven ? "path" : "path not proven",
			t->path[0] ? t->path : "no proof made");
	} else {
		fprintf(out, "  %s\n", t->error);
		fprintf(out, "              usually: %s\n", vhint[t->method]);
	}
	fflush(out);	/* a line per test as it ends, also into a pipe */
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

/* A test has ended: explain its error, and print its line at once. */
static void vdone(struct vstate *v, struct vtest *t, int stop_before)
{
	/* A signal during the test: a failure may be the signal's doing (the
	 * ipc test's second process gets the terminal's SIGINT too). */
	if (!t->ok && !t->hung && !stop_before && vstop) {
		t->ok = 1;
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "not finished: interrupted (%s)", strsignal(vstop));
	}
	explain_error(t);
	if (v->out)
		test_print(v->out, t);
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
	fflush(out);
}

/* Test buffers of every used GPU, above a pad allocation. 0 or an exit code. */
static int alloc_buffers(struct vstate *v, const int *use, char *err, size_t len)
{
	struct rig *r = &v->r;

	for (int g = 0; g < r->n; g++) {
		struct gpu *gp = &r->g[g];
		size_t fr = 0, tot = 0;
		uint64_t pad = v->pad_req;
		CUresult cr;

		if (!use[g])
			continue;
		cr = rig_cur(r, g);
		if (v->pad_auto) {
			uint64_t need = 3 * (uint64_t)v->total + (256ULL << 20);

			pad = 0;
			if (cu.cuMemGetInfo && cu.cuMemGetInfo(&fr, &tot) == CUDA_SUCCESS && fr > need)
				pad = ((fr - need) / 2) & ~((2ULL << 20) - 1);
		}
		if (cr == CUDA_SUCCESS && pad) {
			cr = cu.cuMemAlloc(&v->pad[g], pad);
			if (cr != CUDA_SUCCESS) {
				snprintf(err, len, "GPU %d: cannot allocate the %" PRIu64 "-byte --offset pad: %s",
					 g, pad, cu_errstr(cr));
				return P2P_EXIT_FAIL;
			}
			v->padbytes[g] = pad;
		}
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemAlloc(&gp->src, v->total);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemAlloc(&gp->dst, v->total);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemAlloc(&v->chk[g], v->total);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemAlloc(&v->aux[g], AUX_BYTES);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemsetD32Async(v->aux[g], 0, AUX_BYTES / 4, gp->s[1]);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuStreamSynchronize(gp->s[1]);	/* nothing ran yet: cannot hang */
		if (cr != CUDA_SUCCESS) {
			snprintf(err, len, "GPU %d: cannot allocate 3 x %zu bytes of test buffers: %s", g,
				 v->total, cu_errstr(cr));
			return P2P_EXIT_FAIL;
		}
	}
	r->bufsize = v->total;
	return 0;
}

static void free_buffers(struct vstate *v)
{
	for (int g = 0; g < v->r.n; g++) {
		if (!v->chk[g] && !v->aux[g] && !v->pad[g])
			continue;
		rig_cur(&v->r, g);
		if (v->chk[g])
			cu.cuMemFree(v->chk[g]);
		if (v->aux[g])
			cu.cuMemFree(v->aux[g]);
		if (v->pad[g])
			cu.cuMemFree(v->pad[g]);
	}
}

static uint64_t random_seed(void)
{
	uint64_t s = 0;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) != (ssize_t)sizeof(s))
		s = (uint64_t)(now_s() * 1e9) ^ ((uint64_t)getpid() << 32);
	return s;
}

/* Run the tests of (a, b), both ways; returns how many tests were added. */
static int pair_tests(struct vstate *v, int a, int b, struct vtest *tests)
{
	int nt = 0;

	for (int m = 0; m < V_DEV_COUNT && !vhalt(v); m++) {
		if (!(v->tests & (1u << m)))
			continue;
		for (int d = 0; d < (a == b ? 1 : 2) && !vhalt(v); d++) {
			struct vtest *t = &tests[nt++];
			int stop_before = vstop;

			if ((m == V_PATH || m == V_VRAM) && a == b) {
				nt--;
				break;
			}
			memset(t, 0, sizeof(*t));
			t->src = d ? b : a;
			t->dst = d ? a : b;
			t->method = m;
			if (m == V_PATH)
				run_path(v, t);
			else if (m == V_FLAGS || m == V_FLAGS_POLL)
				run_flags(v, t);
			else if (m == V_GRAPH)
				run_graph(v, t);
			else if (m == V_IPC)
				run_ipc(v, t);
			else if (m == V_VRAM)
				run_vram(v, t);
			else
				run_test(v, t);
			vdone(v, t, stop_before);
		}
	}
	return nt;
}

/* What a pair's results add up to. */
struct pverdict {
	int a, b, peer_ok, nfail, staging, measured;
	int reached;		/* its tests ran (an interrupted run stops before some pairs) */
	char noway[48];		/* the direction whose peer access could not be enabled */
	double gbps, us;
	char failed[160];	/* the failed tests' names */
	struct linkrate link;
	char cell[V_COUNT][2][6];	/* the grid: [test][0: a->b, 1: b->a]; "" not run */
};

/* The grid cell of t: OK, OK* (path not proven), FAIL, HUNG, SKIP. */
static const char *cell_text(const struct vtest *t)
{
	return t->skipped ? "SKIP" : t->hung ? "HUNG" : !t->ok ? "FAIL" : t->proven ? "OK" : "OK*";
}

static void pv_add(struct pverdict *pv, const struct vtest *t)
{
	if (t->method != V_NCCL)
		snprintf(pv->cell[t->method][t->src != pv->a], sizeof(pv->cell[0][0]), "%s",
			 cell_text(t));
	if (t->skipped || t->ok || t->method == V_NCCL)
		return;
	if (t->method == V_PATH && strstr(t->error, "staging speed"))
		pv->staging = 1;
	if (!strstr(pv->failed, vnames[t->method]) && strlen(pv->failed) < sizeof(pv->failed) - 16)
		snprintf(pv->failed + strlen(pv->failed), sizeof(pv->failed) - strlen(pv->failed), "%s%s",
			 pv->failed[0] ? ", " : "", vnames[t->method]);
	pv->nfail++;
}

/* Fold the pair's path tests (both ways) into pv. */
static void pv_path(struct pverdict *pv, const struct vstate *v)
{
	int a = pv->a, b = pv->b;

	pv->measured = v->pm[a][b].done && v->pm[a][b].ok && v->pm[b][a].done && v->pm[b][a].ok;
	if (pv->measured) {
		pv->gbps = v->pm[a][b].on_gbps < v->pm[b][a].on_gbps ? v->pm[a][b].on_gbps :
			   v->pm[b][a].on_gbps;
		pv->us = v->pm[a][b].on_us > v->pm[b][a].on_us ? v->pm[a][b].on_us : v->pm[b][a].on_us;
	}
}

/* "0<->1: P2P verified, 25.1 GB/s (80% of PCIe Gen4 x16), 0.9 us" */
static void pv_text(const struct pverdict *pv, char *buf, size_t len)
{
	int l = snprintf(buf, len, "%d<->%d: ", pv->a, pv->b);

	if (l < 0 || (size_t)l >= len)
		return;
	buf += l;
	len -= (size_t)l;
	if (!pv->peer_ok && pv->noway[0])
		snprintf(buf, len, "P2P not available (%s: peer access could not be enabled)", pv->noway);
	else if (!pv->peer_ok)
		snprintf(buf, len, "P2P not available (cuDeviceCanAccessPeer says no)");
	else if (pv->staging)
		snprintf(buf, len, "P2P works at staging speed (FAIL: %s)", pv->failed);
	else if (pv->nfail)
		snprintf(buf, len, "P2P FAILED (%d test%s: %s)", pv->nfail, pv->nfail == 1 ? "" : "s",
			 pv->failed);
	else if (!pv->measured)
		snprintf(buf, len, "tests OK, path not measured (the path test did not run)");
	else if (pv->link.kind != LINK_UNKNOWN)
		snprintf(buf, len, "P2P verified, %.1f GB/s (%.0f%% of %s), %.1f us", pv->gbps,
			 100 * pv->gbps / pv->link.gbps, pv->link.label, pv->us);
	else
		snprintf(buf, len, "P2P verified, %.1f GB/s (line rate unknown), %.1f us", pv->gbps,
			 pv->us);
}

/* Grid rows: the tests --tests selected that run per pair (not nccl). */
static int grid_row(const struct vstate *v, int m)
{
	return m != V_NCCL && (v->tests & (1u << m)) &&
	       !(m >= V_UM_READ && m < V_CONCURRENT && v->no_managed);
}

/* Cells of the grid that did not run. */
static int pv_notrun(const struct pverdict *pv, const struct vstate *v)
{
	int k = 0;

	for (int m = 0; m < V_COUNT; m++)
		for (int d = 0; d < 2; d++)
			k += grid_row(v, m) && !pv->cell[m][d][0];
	return k;
}

/* The verdict line of a pair, with what an interrupted run left out. */
static void pv_line(const struct pverdict *pv, const struct vstate *v, char *buf, size_t len)
{
	size_t l;
	int k = pv_notrun(pv, v);

	if (vstop && !pv->reached) {
		snprintf(buf, len, "%d<->%d: not tested (interrupted by %s)", pv->a, pv->b,
			 strsignal(vstop));
		return;
	}
	pv_text(pv, buf, len);
	l = strlen(buf);
	if (vstop && k && pv->peer_ok)
		snprintf(buf + l, len - l, "; partial: %d of the grid's tests not run (interrupted by %s)",
			 k, strsignal(vstop));
}

/*
 * The direction x test grid of a pair:
 *   0-1         0->1  1->0
 *   path        OK    OK
 */
static void pv_grid(FILE *out, const struct pverdict *pv, const struct vstate *v)
{
	char d0[16], d1[16];

	snprintf(d0, sizeof(d0), "%d->%d", pv->a, pv->b);
	snprintf(d1, sizeof(d1), "%d->%d", pv->b, pv->a);
	fprintf(out, "  %d-%-10d %-5s %s\n", pv->a, pv->b, d0, d1);
	for (int m = 0; m < V_COUNT; m++)
		if (grid_row(v, m))
			fprintf(out, "  %-12s %-5s %s\n", vnames[m], pv->cell[m][0][0] ? pv->cell[m][0] : "-",
				pv->cell[m][1][0] ? pv->cell[m][1] : "-");
}

static json_object *pv_grid_json(const struct pverdict *pv, const struct vstate *v)
{
	json_object *o = json_object_new_object();

	for (int m = 0; m < V_COUNT; m++) {
		json_object *d;

		if (!grid_row(v, m))
			continue;
		d = json_object_new_array();
		for (int k = 0; k < 2; k++)
			json_object_array_add(d, json_object_new_string(pv->cell[m][k][0] ? pv->cell[m][k] :
									  "-"));
		json_object_object_add(o, vnames[m], d);
	}
	return o;
}

static void pair_json(struct vstate *v, json_object *jpairs, int a, int b, int pfail, const char *perr,
		      struct vtest *tests, int nt, const struct umpair *um)
{
	json_object *jp = json_object_new_object(), *jt = json_object_new_array();
	json_object *gp = json_object_new_array();

	json_object_array_add(gp, json_object_new_int(a));
	json_object_array_add(gp, json_object_new_int(b));
	json_object_object_add(jp, "gpus", gp);
	json_object_object_add(jp, "can_access_peer", json_object_new_boolean(
		a == b || (v->r.can_peer[a][b] && v->r.can_peer[b][a])));
	json_object_object_add(jp, "status", json_object_new_string(pfail ? "FAIL" : "OK"));
	if (perr[0])
		json_object_object_add(jp, "error", json_object_new_string(perr));
	for (int k = 0; k < nt; k++)
		json_object_array_add(jt, test_json(&tests[k]));
	json_object_object_add(jp, "tests", jt);
	json_object_object_add(jp, "managed", um_json(v, a, b, um));
	json_object_array_add(jpairs, jp);
}

int verify_main(int argc, char **argv, FILE *out, FILE *err)
{
	static const struct option lo[] = {
		{ "size", required_argument, NULL, 's' },
		{ "pairs", required_argument, NULL, 'p' },
		{ "tests", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 'S' },
		{ "seconds", required_argument, NULL, 'D' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "offset", required_argument, NULL, 'O' },
		{ "loopback", no_argument, NULL, 'L' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-managed", no_argument, NULL, 'M' },
		/* internal: p2pctl's own second process for the ipc test */
		{ "ipc-child", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static int sel[P2P_MAX_GPUS][P2P_MAX_GPUS];
	static struct vtest tests[2 * V_COUNT * 2], ctests[P2P_MAX_GPUS * P2P_MAX_GPUS];
	static struct pverdict pvs[P2P_MAX_GPUS * P2P_MAX_GPUS];
	int npv = 0, pvjson[P2P_MAX_GPUS * P2P_MAX_GPUS];
	char nccl_verdict[1024] = "";
	struct vstate *v;
	const char *pairs = NULL, *tlist = NULL;
	char emsg[512], *end;
	int json = 0, rc = 0, opt, n, use[P2P_MAX_GPUS] = { 0 }, nok = 0, nfail = 0, nskip = 0;
	int nunproven = 0, seeded = 0, nct = 0, nccl_ran = 0;
	json_object *jpairs = NULL;
	struct sigaction sa = { 0 }, old_int, old_term;
	int sig_on = 0;

	v = calloc(1, sizeof(*v));
	if (!v)
		return P2P_EXIT_FAIL;
	v->size = 64ULL << 20;
	v->timeout = 10;
	v->seconds = 3;
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
		case 't': tlist = optarg; break;
		case 'S':
			errno = 0;
			v->seed0 = strtoull(optarg, &end, 0);
			if (errno || !*optarg || *end) {
				fprintf(err, "verify: bad --seed '%s'\n", optarg);
				rc = P2P_EXIT_USAGE;
			}
			seeded = 1;
			break;
		case 'D':
		case 'T': {
			double x = strtod(optarg, &end);

			if (!*optarg || *end || !(x > 0) || x > 86400) {
				fprintf(err, "verify: bad --%s '%s'\n", opt == 'D' ? "seconds" : "timeout",
					optarg);
				rc = P2P_EXIT_USAGE;
			}
			*(opt == 'D' ? &v->seconds : &v->timeout) = x;
			break;
		}
		case 'O':
			if (!strcmp(optarg, "auto")) {
				v->pad_auto = 1;
			} else if (!strcmp(optarg, "0")) {
				v->pad_auto = 0;
				v->pad_req = 0;
			} else if (parse_size(optarg, &v->pad_req)) {
				fprintf(err, "verify: bad --offset '%s'\n", optarg);
				rc = P2P_EXIT_USAGE;
			} else {
				v->pad_auto = 0;
			}
			break;
		case 'L': v->loopback = 1; break;
		case 'I':
			/* internal: the second process of the ipc test */
			rc = ipc_child(optarg, out);
			goto done;
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
	if (!rc && !(v->tests = parse_tests(tlist, emsg, sizeof(emsg)))) {
		fprintf(err, "verify: %s\n", emsg);
		rc = P2P_EXIT_USAGE;
	}
	if (rc) {
		vusage(err);
		goto done;
	}
	if (!seeded)
		v->seed0 = random_seed();
	v->seed = v->seed0;
	v->vseed = v->seed0 ^ 0x8000000000000000ULL;
	v->sm.threads = 512;
	v->sm.blocks_per_sm = 4;
	vstop = 0;
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sig_on = !sigaction(SIGINT, &sa, &old_int) && !sigaction(SIGTERM, &sa, &old_term);
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
	if (n < 2 && !v->loopback) {
		fprintf(err, "verify: needs at least two GPUs (%d found); --loopback tests one "
			"against itself\n", n);
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
	if (v->loopback && !pairs)
		for (int i = 0; i < n; i++)
			use[i] = 1;
	v->total = 2 * GUARD + ((v->size + 15) & ~(uint64_t)15);
	v->want = malloc(v->total);
	v->got = malloc(v->total);
	v->img = malloc(v->total);
	if (!v->want || !v->got || !v->img) {
		fprintf(err, "verify: cannot allocate 3 x %zu bytes of host memory\n", v->total);
		rc = P2P_EXIT_FAIL;
		goto close;
	}
	rc = rig_open(&v->r, use, 0, 0, emsg, sizeof(emsg));
	if (!rc)
		rc = alloc_buffers(v, use, emsg, sizeof(emsg));
	if (rc) {
		fprintf(err, "verify: %s\n", emsg);
		goto rig;
	}
	if (json) {
		jpairs = json_object_new_array();
	} else {
		for (int i = 0; i < n; i++)
			if (use[i])
				fprintf(out, "GPU %d: %s (%s)%s\n", i, v->r.g[i].name, v->r.g[i].busid,
					v->padbytes[i] ? "" : "; test buffers not offset");
		fprintf(out, "seed 0x%016" PRIx64 " (--seed to repeat), timeout %.3g s", v->seed0,
			v->timeout);
		for (int i = 0; i < n; i++)
			if (use[i] && v->padbytes[i]) {
				fprintf(out, ", buffers above a %" PRIu64 " MiB allocation on each GPU",
					v->padbytes[i] >> 20);
				break;
			}
		fprintf(out, "\n");
		fflush(out);
		v->out = out;
	}
	for (int a = 0; a < n && !vhalt(v); a++)
		for (int b = v->loopback ? a : a + 1; b < n && !vhalt(v); b++) {
			struct umpair um = { .status = UM_SKIPPED };
			int nt = 0, peer_ok, pfail = 0;
			char perr[512] = "";
			struct pverdict *pv = NULL;

			if (v->loopback ? a != b || !use[a] : !sel[a][b])
				continue;
			peer_ok = a == b || (v->r.can_peer[a][b] && v->r.can_peer[b][a]);
			if (a != b) {
				pv = &pvs[npv];
				memset(pv, 0, sizeof(*pv));
				pv->a = a;
				pv->b = b;
				link_rate(v->r.g[a].busid, v->r.g[b].busid, &v->link);
				pv->link = v->link;
				pvjson[npv++] = json ? (int)json_object_array_length(jpairs) : -1;
			}
			if (!peer_ok) {
				snprintf(perr, sizeof(perr),
					 "peer access not supported (cuDeviceCanAccessPeer %d->%d = %d, %d->%d = %d)",
					 a, b, v->r.can_peer[a][b], b, a, v->r.can_peer[b][a]);
			} else if (a != b) {
				CUresult ab = rig_peer(&v->r, a, b, 1), ba = rig_peer(&v->r, b, a, 1);

				if (ab != CUDA_SUCCESS || ba != CUDA_SUCCESS) {
					int x = ab != CUDA_SUCCESS ? a : b, y = ab != CUDA_SUCCESS ? b : a;

					peer_ok = 0;
					snprintf(perr, sizeof(perr), "cuCtxEnablePeerAccess %d->%d (GPU %d mapping GPU "
						 "%d's memory): %s%s%d->%d %s", x, y, x, y,
						 cu_errstr(ab != CUDA_SUCCESS ? ab : ba), "; ", y, x,
						 ab != CUDA_SUCCESS && ba != CUDA_SUCCESS ? "failed too" :
						 "was enabled");
					if (pv)
						snprintf(pv->noway, sizeof(pv->noway), "%s%d->%d",
							 ab != CUDA_SUCCESS && ba != CUDA_SUCCESS ? "both ways, " : "",
							 x, y);
				}
			}
			if (!json) {
				if (a == b)
					fprintf(out, "GPU %d loopback (no P2P: a check of the tool and the GPU)\n", a);
				else
					fprintf(out, "pair %d-%d: can-access-peer %d->%d %s, %d->%d %s\n", a, b,
						a, b, v->r.can_peer[a][b] ? "yes" : "no", b, a,
						v->r.can_peer[b][a] ? "yes" : "no");
				if (pv && pv->link.kind != LINK_UNKNOWN)
					fprintf(out, "  link: %s, %.1f GB/s per direction (%s)%s%s\n", pv->link.label,
						pv->link.gbps, pv->link.kind == LINK_NVLINK ? "NVML" : "sysfs, slowest "
						"hop to the root port", pv->link.nvml[0] ? "; NVLink: " : "", pv->link.nvml);
				else if (pv)
					fprintf(out, "  link: line rate unknown: %s%s%s\n", pv->link.why,
						pv->link.nvml[0] ? "; NVLink: " : "", pv->link.nvml);
				if (perr[0])
					fprintf(out, "  FAIL  %s\n", perr);
				fflush(out);
			}
			if (peer_ok) {
				nt = pair_tests(v, a, b, tests);
				for (int k = 0; k < nt; k++) {
					pfail += !tests[k].ok;
					nok += tests[k].ok && !tests[k].skipped;
					nskip += tests[k].skipped;
					nunproven += tests[k].ok && !tests[k].skipped && !tests[k].proven;
				}
				if (!vhalt(v)) {
					int from = nt;

					um_pair(v, a, b, tests, &nt, &um);
					pfail += um.nfail;
					nok += um.nok;
					nskip += um.nskip;
					for (int k = from; k < nt; k++)
						nunproven += tests[k].ok && !tests[k].skipped &&
							     !tests[k].proven;
				}
			} else {
				snprintf(um.reason, sizeof(um.reason), "peer access is not enabled");
				if (!v->no_managed)
					nskip += um.nskip = V_UM_COUNT * 2;
				pfail++;
			}
			nfail += pfail;
			if (pv) {
				pv->peer_ok = peer_ok;
				pv->reached = 1;
				for (int k = 0; k < nt; k++)
					pv_add(pv, &tests[k]);
				if (peer_ok && um.status == UM_SKIPPED && um.nskip)
					for (int m = V_UM_READ; m < V_CONCURRENT; m++)
						for (int d = 0; d < 2; d++)
							snprintf(pv->cell[m][d], sizeof(pv->cell[m][d]), "SKIP");
				pv_path(pv, v);
			}
			if (json) {
				pair_json(v, jpairs, a, b, pfail, perr, tests, nt, &um);
				continue;
			}
			if (!v->hung && a != b && !(vstop && um.status == UM_SKIPPED && !um.reason[0]))
				um_print(out, v, a, b, &um);
		}
	/* An interrupted run: the pairs it did not reach have a verdict too. */
	for (int a = 0; a < n && vstop && !v->loopback; a++)
		for (int b = a + 1; b < n; b++) {
			int q;

			for (q = 0; q < npv && (pvs[q].a != a || pvs[q].b != b); q++)
				;
			if (!sel[a][b] || q < npv)
				continue;
			memset(&pvs[npv], 0, sizeof(pvs[npv]));
			pvs[npv].a = a;
			pvs[npv].b = b;
			pvjson[npv++] = -1;
		}
	if (!vhalt(v) && (v->tests & (1u << V_CONCURRENT)) && !v->loopback) {
		run_concurrent(v, sel, ctests, &nct, (int)(sizeof(ctests) / sizeof(ctests[0])));
		for (int k = 0; k < nct; k++)
			vdone(v, &ctests[k], 1);
		for (int k = 0; k < nct; k++) {
			nfail += !ctests[k].ok;
			nok += ctests[k].ok && !ctests[k].skipped;
			nskip += ctests[k].skipped;
			for (int q = 0; q < npv; q++)
				if ((pvs[q].a == ctests[k].src && pvs[q].b == ctests[k].dst) ||
				    (pvs[q].b == ctests[k].src && pvs[q].a == ctests[k].dst))
					pv_add(&pvs[q], &ctests[k]);
		}
	}
	if (!vhalt(v) && (v->tests & (1u << V_NCCL))) {
		int first = nct, sets[P2P_MAX_GPUS * P2P_MAX_GPUS + 1][P2P_MAX_GPUS], setn[P2P_MAX_GPUS * P2P_MAX_GPUS + 1];
		int ns = 0, all = 0, nobad;
		char why[512];

		for (int a = 0; a < n; a++)
			for (int b = v->loopback ? a : a + 1; b < n; b++)
				if (v->loopback ? a == b && use[a] : sel[a][b] && v->r.peer_on[a][b] &&
				    v->r.peer_on[b][a]) {
					sets[ns][0] = a;
					sets[ns][1] = b;
					setn[ns++] = a == b ? 1 : 2;
				}
		for (int g = 0; g < n && !v->loopback; g++)
			if (use[g])
				sets[ns][all++] = g;
		if (all > 2)
			setn[ns++] = all;
		nccl_ran = 1;
		if (ns)
			nccl_debug_begin(v);
		nobad = ns ? nccl_open(why, sizeof(why)) : 0;
		if (ns && !json)
			fprintf(out, "nccl: all-reduce with %s\n", nobad ? "libnccl.so.2" : nx.path);
		if (nobad) {
			struct vtest *t = &ctests[nct++];

			memset(t, 0, sizeof(*t));
			t->method = V_NCCL;
			t->skipped = 1;
			t->ok = 1;
			snprintf(t->label, sizeof(t->label), "-");
			snprintf(t->error, sizeof(t->error), "%s", why);
			vdone(v, t, 1);
			ns = 0;
		}
		for (int k = 0; k < ns && !vhalt(v); k++) {
			struct vtest *t = &ctests[nct++];
			size_t l = 0;

			memset(t, 0, sizeof(*t));
			for (int g = 0; g < setn[k]; g++)
				l += (size_t)snprintf(t->label + l, sizeof(t->label) - l, "%s%d", g ? "," : "",
						      sets[k][g]);
			long off = nccl_log_size(v);

			run_nccl(v, t, sets[k], setn[k]);
			if (t->ok && !t->skipped)
				nccl_transport(v, t, sets[k], setn[k], off);
			vdone(v, t, 0);
		}
		nccl_debug_end(v);
		for (int k = first; k < nct; k++) {
			const struct vtest *t = &ctests[k];
			size_t l = strlen(nccl_verdict);

			nfail += !t->ok;
			nok += t->ok && !t->skipped;
			nskip += t->skipped;
			nunproven += t->ok && !t->skipped;
			if (t->skipped || !t->ok)
				snprintf(nccl_verdict + l, sizeof(nccl_verdict) - l, "%snccl %s: %s: %.400s",
					 l ? "; " : "", t->label, t->skipped ? "SKIPPED" : "FAIL", t->error);
		}
	}
	if (vstop && !nccl_verdict[0] && (v->tests & (1u << V_NCCL)) && !nccl_ran)
		snprintf(nccl_verdict, sizeof(nccl_verdict), "nccl: not run (interrupted by %s)",
			 strsignal(vstop));
	if (json) {
		json_object *o = json_object_new_object(), *jc = json_object_new_array();
		char seed[32];

		for (int k = 0; k < nct; k++)
			json_object_array_add(jc, test_json(&ctests[k]));
		snprintf(seed, sizeof(seed), "0x%016" PRIx64, v->seed0);
		json_object_object_add(o, "command", json_object_new_string("verify"));
		json_object_object_add(o, "format", json_object_new_int(2));
		json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)v->size));
		json_object_object_add(o, "seed", json_object_new_string(seed));
		json_object_object_add(o, "timeout_s", json_object_new_double(v->timeout));
		json_object_object_add(o, "loopback", json_object_new_boolean(v->loopback));
		json_object_object_add(o, "driver_version", json_object_new_int(v->r.driver_version));
		json_object_object_add(o, "devices", cuda_devices_json(&v->r));
		json_object_object_add(o, "pairs", jpairs);
		json_object_object_add(o, "concurrent", jc);
		{
			json_object *jv = json_object_new_array();
			char line[512];

			for (int q = 0; q < npv; q++) {
				pv_line(&pvs[q], v, line, sizeof(line));
				json_object_array_add(jv, json_object_new_string(line));
				if (pvjson[q] >= 0) {
					json_object *jp = json_object_array_get_idx(jpairs, pvjson[q]);

					json_object_object_add(jp, "grid", pv_grid_json(&pvs[q], v));
					json_object_object_add(jp, "verdict", json_object_new_string(line));
					json_object_object_add(jp, "path_proven", json_object_new_boolean(
						pvs[q].measured && !pvs[q].nfail && pvs[q].peer_ok));
					if (pvs[q].link.kind != LINK_UNKNOWN) {
						json_object *jl = json_object_new_object();

						json_object_object_add(jl, "link", json_object_new_string(
							pvs[q].link.label));
						json_object_object_add(jl, "gbps", json_object_new_double(
							(double)(int64_t)(pvs[q].link.gbps * 100) / 100));
						json_object_object_add(jp, "line_rate", jl);
					}
				}
			}
			if (nccl_verdict[0])
				json_object_array_add(jv, json_object_new_string(nccl_verdict));
			json_object_object_add(o, "verdicts", jv);
		}
		json_object_object_add(o, "ok_tests", json_object_new_int(nok));
		json_object_object_add(o, "unproven_paths", json_object_new_int(nunproven));
		json_object_object_add(o, "failures", json_object_new_int(nfail));
		json_object_object_add(o, "skipped_tests", json_object_new_int(nskip));
		if (v->hung)
			json_object_object_add(o, "hung", json_object_new_string(v->hang));
		if (vstop)
			json_object_object_add(o, "interrupted", json_object_new_string(sigabbrev_np(vstop)));
		json_object_object_add(o, "result", json_object_new_string(
			v->hung ? "HUNG" : vstop ? "INTERRUPTED" : nfail ? "FAIL" : "OK"));
		fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								      JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		char line[512];

		int rows = 0;

		for (int m = 0; m < V_COUNT; m++)
			rows += grid_row(v, m);
		if (npv && rows) {
			fprintf(out, "grid (test x direction: OK, OK* path not proven, FAIL, HUNG, SKIP, - not run):\n");
			for (int q = 0; q < npv; q++)
				pv_grid(out, &pvs[q], v);
		}
		if (npv || nccl_verdict[0])
			fprintf(out, "verdict:\n");
		for (int q = 0; q < npv; q++) {
			pv_line(&pvs[q], v, line, sizeof(line));
			fprintf(out, "  %s\n", line);
		}
		if (nccl_verdict[0])
			fprintf(out, "  %s\n", nccl_verdict);
		if (vstop)
			fprintf(out, "verify: INTERRUPTED by SIG%s, a partial verdict (%d OK, %d FAIL", sigabbrev_np(vstop),
				nok, nfail);
		else
			fprintf(out, "verify: %s (%d OK, %d FAIL", v->hung ? "HUNG" : nfail ? "FAIL" : "OK", nok,
				nfail);
		if (nskip)
			fprintf(out, ", %d skipped", nskip);
		fprintf(out, ")");
		if (nunproven)
			fprintf(out, "; %d OK without a proven path", nunproven);
		fprintf(out, "\n");
	}
	fflush(out);
	rc = nfail || v->hung ? P2P_EXIT_FAIL : P2P_EXIT_OK;
	if (vstop && !v->hung)
		rc = 128 + vstop;	/* as a shell reports a command the signal ended */
	if (v->hung) {
		/* A stuck context: tearing it down could block forever. */
		fprintf(err, "verify: %s\n", v->hang);
		fflush(out);
		fflush(err);
		if (verify_exit_on_hang)
			_exit(P2P_EXIT_FAIL);
		goto done;
	}
rig:
	free_buffers(v);
	rig_close(&v->r);
close:
	ncclx_close();
	cu_close();
done:
	if (sig_on) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	free(v->want);
	free(v->got);
	free(v->img);
	free(v);
	return rc;
}
