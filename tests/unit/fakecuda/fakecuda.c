// SPDX-License-Identifier: GPL-2.0
/*
 * A fake libcuda.so.1 for the unit tests of p2pctl verify/bench: device
 * memory is host memory and time is virtual (events read a clock that copies
 * advance). Behaviour comes from the environment, read at each cuInit():
 *
 *   FAKECUDA_INIT_ERROR=N      cuInit returns N
 *   FAKECUDA_DEVICES=N         number of GPUs (default 2)
 *   FAKECUDA_PEER=0|1          cuDeviceCanAccessPeer answer (default 1)
 *   FAKECUDA_ENABLE_ERROR=N    cuCtxEnablePeerAccess returns N
 *   FAKECUDA_ENABLE_FROM=G     ... only in GPU G's context (one way)
 *   FAKECUDA_PEER_LOG=FILE     append "enable a->b" / "disable a->b" to FILE on each
 *                              successful cuCtxEnablePeerAccess / cuCtxDisablePeerAccess
 *   FAKECUDA_JIT_ERROR=1       cuModuleLoadDataEx fails with a JIT log
 *   FAKECUDA_COPY_ERROR=K      the K-th device-to-device copy (1-based,
 *                              copy-engine or kernel) fails with
 *                              CUDA_ERROR_LAUNCH_FAILED
 *   FAKECUDA_CORRUPT_OFFSET=O  flip byte O of the destination of each
 *                              device-to-device copy long enough ...
 *   FAKECUDA_CORRUPT_KIND=ce|sm ... only for that kind of copy
 *   FAKECUDA_OVERRUN=1         kernels copy 4 bytes too many
 *   FAKECUDA_UNDERRUN=1        kernels also store the 4 bytes before the
 *                              destination (from before the source)
 *   FAKECUDA_DROP_TAIL=1       kernels skip the byte tail (n % 16 bytes)
 *   FAKECUDA_BW_GBPS=X         peer bandwidth with peer access (default 100)
 *   FAKECUDA_NOPEER_GBPS=X     peer copies without it, and host copies (20)
 *   FAKECUDA_LOCAL_GBPS=X      copies within a GPU (1000)
 *   FAKECUDA_SM_GBPS=X         kernel copies (default: FAKECUDA_BW_GBPS)
 *   FAKECUDA_LAT_US=X          per-operation cost (default 2)
 *   FAKECUDA_NOPEER_LAT_US=X   ... of a copy between the GPUs staged through
 *                              host memory (no peer mapping, or the staged
 *                              fault; default 7 x FAKECUDA_LAT_US: 14 us
 *                              against 2, as the field's PCIe pairs)
 *   FAKECUDA_JITTER=X          relative jitter: op k costs (1 + X*((k%7)-3)/3)
 *   FAKECUDA_MANAGED=0|1       CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY (default 1)
 *   FAKECUDA_CONCURRENT_MANAGED=0|1  ..._CONCURRENT_MANAGED_ACCESS (default 1)
 *   FAKECUDA_FREE_BYTES=N      VRAM the tests can allocate per GPU (default
 *                              64 GiB): allocations take the lowest free
 *                              VRAM offsets (first fit, 2 MiB aligned), fail
 *                              with CUDA_ERROR_OUT_OF_MEMORY past N, and
 *                              cuMemGetInfo's free is N less what is allocated
 *   FAKECUDA_FREE_OVERSTATE=N  cuMemGetInfo's free is N bytes more than can be
 *                              allocated (memory another process, say a
 *                              display GPU's desktop, takes meanwhile)
 *   FAKECUDA_BAR1_BYTES=N      the BAR1 window covers only VRAM offsets below
 *                              N: a peer access (SM loads and stores, copy-
 *                              engine copies between the GPUs) to offset
 *                              o >= N reaches o % N instead, whichever
 *                              allocation of that GPU is there (zeros, and
 *                              stores lost, where none is)
 *   FAKECUDA_BAD_VRAM=OFF:LEN  VRAM offsets [OFF, OFF+LEN) of every GPU are bad
 *                              through the peer path: a peer access to them
 *                              (SM loads and stores from another GPU, copy-
 *                              engine copies between the GPUs) flips every
 *                              byte it moves there; local accesses are fine.
 *                              A negative OFF counts from the top of VRAM
 *                              (FAKECUDA_FREE_BYTES)
 *   FAKECUDA_CEDROP_FROM=K     copies between the GPUs (copy engine, peer
 *                              access on or off) write nothing from the
 *                              K-th on (1-based, counted from cuInit): a
 *                              check of only the first copy passes
 *   FAKECUDA_UM_BUG=map        a GPU using managed pages resident on its peer
 *                              through a mapping (preferred location there,
 *                              or accessed-by it, with peer access on) uses
 *                              its own memory at that offset instead, as
 *                              nvidia-uvm's VIDEO-aperture PTE for a BAR1
 *                              pair does before 590 (docs/uvm.md)
 *   FAKECUDA_UM_BUG=host       a kernel using managed pages through a peer
 *                              mapping gets the right bytes at a tenth of
 *                              the SM rate (the pages go through the host),
 *                              while every attribute says what the advice set
 *   FAKECUDA_UM_BUG=copy       a migration of managed pages from one GPU to
 *                              the other flips byte 256 (the first data
 *                              byte after verify's guard)
 *   FAKECUDA_FLAKY=K           the K-th kernel (1-based, counted from cuInit)
 *                              storing into another GPU's memory loses
 *                              its stores: an occasional loss, once
 *   FAKECUDA_FAULT_DIR=A>B     stale, lost, wrong, ptefault, readfault and
 *                              cedrop hit only GPU A's accesses (its SMs, or
 *                              its copy engine) to GPU B's memory
 *   FAKECUDA_STICKY=1          faults are sticky, as CUDA's are: a stream's
 *                              CUDA_ERROR_ILLEGAL_ADDRESS or _LAUNCH_FAILED
 *                              kills its context, whose later calls all
 *                              return it (until the next cuInit)
 *   FAKECUDA_FAULT=LIST        P2P faults (comma-separated), all of them
 *                              broken-but-advertised P2P (issue 26):
 *     stale    an SM-issued peer load (kernel on GPU g reading another GPU's
 *              memory, or managed pages through a peer mapping) returns the
 *              first snapshot g ever read of that allocation
 *     lost     SM-issued stores into another GPU's memory are dropped
 *              (copy-engine copies still land)
 *     nomap    cuCtxEnablePeerAccess succeeds but no peer mapping exists:
 *              kernels touching peer memory fault, cuMemcpyPeerAsync stages
 *              through host memory (right bytes, host bandwidth), UVM
 *              migrates managed pages instead of mapping them, and
 *              CU_POINTER_ATTRIBUTE_ACCESS_FLAGS of peer memory is 0
 *     wrong    an SM-issued peer load reaches the reading GPU's own memory
 *              at the same VRAM offset (zeros where it has none), for
 *              allocations at VRAM offset >= FAKECUDA_WRONG_ABOVE (default 0)
 *     ptefault peer access and the access flags say mapped, but a GPU's page
 *              tables lack the peer's pages: kernels touching another GPU's
 *              memory fault with CUDA_ERROR_ILLEGAL_ADDRESS (copy-engine
 *              copies still land)
 *     cedrop   copy-engine copies between the GPUs with peer access on
 *              write nothing (and take the time they would)
 *     staged   copy-engine copies between the GPUs move at
 *              FAKECUDA_NOPEER_GBPS even with peer access on, while the
 *              access flags and CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED
 *              still claim a peer mapping (a driver staging them through
 *              host memory behind a lying attribute)
 *     vmmstale an SM-issued load of another GPU's cuMemMap'ed memory (the
 *              cuMem/VMM path: cuMemCreate + cuMemMap + cuMemSetAccess)
 *              returns the first snapshot that GPU read of it, as stale
 *              does for every peer load
 *     flaglost the flag store of the custom all-reduce kernel (p2p_car) into
 *              the peer's memory is lost (its payload stores land): the
 *              peer's flag wait times out
 *     openhang cuIpcOpenMemHandle blocks forever in a process that opens
 *              while another child of the same parent is opening (a
 *              lock file held 50 ms per open): processes mapping at once
 *              deadlock, as 580.65.06-595.x's devicesLock inversion can
 *     readfault  SM-issued loads of another GPU's memory fault with
 *              CUDA_ERROR_ILLEGAL_ADDRESS; its stores land ("writes fine,
 *              reads not", FIELD F4)
 *     enablehang  cuCtxEnablePeerAccess never returns (a peer mapping
 *              blocked on a lock in the kernel, FIELD N10)
 *     ipcwrong cuIpcOpenMemHandle maps other (zeroed) memory, not the
 *              exporter's allocation
 *     ipcfirst only the first process to open an exported handle maps the
 *              allocation; every later one maps a private copy (reads right,
 *              stores lost): processes that all store the same bytes hide
 *              the others' losses behind the one that landed
 *     graphdrop  from the second launch of a CUDA graph on, its last node
 *              is dropped (a replay that loses a copy)
 *     hang     the first operation touching another GPU's memory of the kind
 *              FAKECUDA_HANG_KIND (ce, sm or flag; default any) never
 *              completes: queries say CUDA_ERROR_NOT_READY forever, and a
 *              blocking synchronisation on it never returns (signal
 *              handlers run), as a real one
 *
 * cuMemcpyPeerAsync on a capturing stream fails with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, as the real driver's does.
 *
 * Streams are ordered as CUDA orders them: every operation is queued on its
 * stream and runs only when something waits for it (cuStreamQuery or
 * ...Synchronize, cuEventQuery or ...Synchronize, cuCtxSynchronize, a
 * cuStreamWaitEvent dependency, a spinning flag kernel). Operations of
 * streams nobody waited for have not happened yet, so a missing
 * synchronisation shows as old data. cuMemcpyHtoD (pageable) and cuMemsetD32
 * go on the context's legacy stream, which only cuCtxSynchronize and the
 * synchronous cuMemcpyDtoH drain: a non-blocking stream does not wait for
 * them (CUDA's "may return before the DMA completes"). Host-to-device copies
 * capture the host bytes when queued; a device-to-host copy into pageable
 * memory completes before it returns, into cuMemHostAlloc memory it is
 * queued.
 *
 * A kernel touching another GPU's memory without a peer mapping fails with
 * CUDA_ERROR_ILLEGAL_ADDRESS (reported by the stream's next query or
 * synchronisation), as a real one would fault.
 *
 * Managed memory (cuMemAllocManaged) is host memory with a residency: the
 * host, or one GPU. A kernel touching it where it is resident on another GPU
 * maps it (preferred location there, or accessed-by the kernel's GPU, and
 * peer access on) or else migrates it; cuMemPrefetchAsync migrates it.
 * Built with -DFAKECUDA_NO_MANAGED, the library lacks the managed-memory
 * entry points (cuMemAllocManaged, cuMemAdvise, cuMemPrefetchAsync,
 * cuMemGetInfo_v2, cuMemRangeGetAttribute), as a very old driver would.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

#define MAXDEV 16
#define MAXALLOC 4096
#define MAXSTREAM 256
#define MAXEVENT 2048
#define MAXHOST 256
#define MAXSNAP 256
#define NOT_READY 600
#define VRAM_ALIGN (2ULL << 20)

struct CUctx_st { int dev; int peer[MAXDEV]; };
struct CUgraph_st;
struct CUstream_st { int dev; int used; CUresult err; struct CUgraph_st *capture; };
struct CUevent_st { int dev; int used; double t; int done; long long seq; struct CUstream_st *s; };
struct CUmod_st { int dev; };
struct CUfunc_st { int kind; };	/* K_* below */

enum { K_READ, K_WRITE, K_DELAY, K_FLAG_SET, K_FLAG_WAIT, K_CAR, K_NFUNC };
static const char *const kernel_entry[K_NFUNC] = {
	"p2p_read", "p2p_write", "p2p_delay", "p2p_flag_set", "p2p_flag_wait", "p2p_car",
};

typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int enable_from;
	int inited, ndev, peer, enable_error, jit_error, copy_error, overrun, underrun, drop_tail;
	int managed, concurrent_managed;
	int f_stale, f_lost, f_nomap, f_wrong, f_hang, f_graphdrop, f_ipcwrong, f_staged, f_ptefault;
	int f_cedrop, f_vmmstale, f_flaglost, f_openhang, f_readfault, f_enablehang, f_ipcfirst;
	int sticky;
	int dir_from, dir_to;	/* FAKECUDA_FAULT_DIR, -1: any */
	CUresult dead[MAXDEV];
	long long flaky, peer_stores;
	char hang_kind[8];
	int hung;			/* the hang has been used */
	unsigned long long wrong_above, bar1;
	long long bad_off, bad_len;	/* FAKECUDA_BAD_VRAM */
	char um_bug[8];
	long cedrop_from, ce_peer_copies;	/* FAKECUDA_CEDROP_FROM */
	double free_bytes, free_overstate;
	long long corrupt_off;
	char corrupt_kind[8];
	double bw, nopeer_bw, local_bw, sm_bw, lat_us, nopeer_lat_us, jitter;
	double clock_us;
	long long ncopies, nops, seq;
	struct CUctx_st ctx[MAXDEV];
	int ctx_refs[MAXDEV];
} F;
/* Device memory: a memfd mapped shared (so another process can open it
 * through an IPC handle); fd < 0 for memory opened from a handle. */
static struct {
	char *p;
	size_t n, maplen;
	int dev, fd, opened, gen;
	unsigned long long off;
	int vmm;		/* a cuMemMap of handle vmm (1-based), not cuMemAlloc */
	unsigned access;	/* vmm: GPUs granted read-write by cuMemSetAccess */
} allocs[MAXALLOC];
/* cuInit's count: allocations an earlier run left behind (a hung run does
 * not free) take no VRAM of a later run's GPUs. */
static int generation;
static struct CUstream_st streams[MAXSTREAM];	/* [0, MAXDEV): the legacy streams */
static struct CUevent_st events[MAXEVENT];
static struct { char *p; size_t n; } hostmem[MAXHOST];
static struct snap { int g; char *base; char *copy; size_t n; } snaps[MAXSNAP];
#define MAXMANAGED 64
#define RES_HOST (-1)
#define NO_PREF (-2)
static struct managed {
	char *p;
	size_t n;
	int resident, preferred, last_prefetch;
	int accessed_by[MAXDEV];
	char *shadow[MAXDEV];	/* "own memory" of each GPU under FAKECUDA_UM_BUG=map */
} managed[MAXMANAGED];
#define MAXMODULE 64
static struct CUmod_st *modules[MAXMODULE];
static struct CUfunc_st funcs[K_NFUNC] = { { 0 }, { 1 }, { 2 }, { 3 }, { 4 }, { 5 } };
static _Thread_local CUcontext current;

/* A queued operation. */
enum { Q_COPY, Q_KERN, Q_REC, Q_WAIT, Q_H2D, Q_D2H, Q_MEMSET, Q_PREFETCH, Q_HOST };
struct qop {
	int kind, done, hung, running;
	long long seq;
	struct CUstream_st *s;
	CUdeviceptr dst, src;
	size_t n;
	int sdev, ddev;		/* Q_COPY: contexts' devices */
	int fkind;		/* Q_KERN */
	unsigned long long a[10];
	unsigned int u32;
	struct CUevent_st *ev;
	struct CUstream_st *evs;	/* Q_WAIT: the stream and sequence number of the record */
	long long evseq;
	void *host;
	char *data;		/* Q_H2D: the bytes captured when queued; Q_HOST: fn's argument */
	int (*fn)(void *);	/* Q_HOST: fakecuda_host_op's function */
};
static struct qop **q;
static int qn, qcap, depth;

/* A captured graph: its operations, in capture order. */
struct CUgraph_st { struct qop **op; int n; long long launches; };
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraph_st *CUgraphExec;

/* Graphs not yet destroyed: freed at the next cuInit (a run that stopped
 * on a hang leaves its graphs alone, as it must with a real driver). */
static struct CUgraph_st *live_graphs[256];

static void graph_track(struct CUgraph_st *g, int on)
{
	for (int i = 0; i < 256; i++)
		if (on ? !live_graphs[i] : live_graphs[i] == g) {
			live_graphs[i] = on ? g : NULL;
			return;
		}
}

static void graph_free(struct CUgraph_st *g)
{
	for (int i = 0; i < g->n; i++) {
		free(g->op[i]->data);
		free(g->op[i]);
	}
	free(g->op);
	free(g);
}

/* ... and when the library is unloaded. */
__attribute__((destructor)) static void graphs_fini(void)
{
	for (int i = 0; i < 256; i++)
		if (live_graphs[i]) {
			graph_free(live_graphs[i]);
			live_graphs[i] = NULL;
		}
}

static double envd(const char *n, double d)
{
	const char *s = getenv(n);

	return s && *s ? atof(s) : d;
}

static int find_alloc(CUdeviceptr p)
{
	for (int i = 0; i < MAXALLOC; i++)
		if (allocs[i].p && (char *)(uintptr_t)p >= allocs[i].p &&
		    (char *)(uintptr_t)p < allocs[i].p + allocs[i].n + 256)
			return i;
	return -1;
}

static int find_dev(CUdeviceptr p)
{
	int i = find_alloc(p);

	return i < 0 ? -1 : allocs[i].dev;	/* -1: host memory */
}

/* Peer mapping from GPU g to GPU o's memory. */
static int mapped(int g, int o)
{
	return g == o || (F.ctx[g].peer[o] && !F.f_nomap);
}

/* May GPU g reach p (owner o's memory)? A cuMemMap mapping: only where
 * cuMemSetAccess granted it, peer access or not. */
static int may_access(int g, CUdeviceptr p, int o)
{
	int i = find_alloc(p);

	if (i >= 0 && allocs[i].vmm)
		return (allocs[i].access >> g) & 1;
	return mapped(g, o);
}

/* Is p in a cuMemMap mapping? */
static int is_vmm(CUdeviceptr p)
{
	int i = find_alloc(p);

	return i >= 0 && allocs[i].vmm;
}

static void advance_lat(size_t n, double gbps, double lat_us)
{
	double j = 1.0 + F.jitter * ((double)(F.nops % 7) - 3.0) / 3.0;

	F.nops++;
	F.clock_us += (lat_us + (gbps > 0 ? n / (gbps * 1e3) : 0)) * j;
}

static void advance(size_t n, double gbps)
{
	advance_lat(n, gbps, F.lat_us);
}

static void corrupt(CUdeviceptr dst, size_t n, const char *kind)
{
	if (F.corrupt_off >= 0 && (size_t)F.corrupt_off < n &&
	    (!F.corrupt_kind[0] || !strcmp(F.corrupt_kind, kind)))
		((unsigned char *)(uintptr_t)dst)[F.corrupt_off] ^= 0xff;
}

/*
 * FAKECUDA_BAD_VRAM: buf holds the n bytes a peer access moved to or from
 * p (GPU memory); flip those that sit at a bad VRAM offset.
 */
static void bad_vram(char *buf, CUdeviceptr p, size_t n)
{
	int i = F.bad_len > 0 ? find_alloc(p) : -1;
	unsigned long long o, lo, hi;

	if (i < 0 || allocs[i].vmm || allocs[i].opened)
		return;
	lo = (unsigned long long)(F.bad_off < 0 ? (long long)F.free_bytes + F.bad_off : F.bad_off);
	hi = lo + (unsigned long long)F.bad_len;
	o = allocs[i].off + (p - (CUdeviceptr)(uintptr_t)allocs[i].p);
	for (size_t k = 0; k < n; k++)
		if (o + k >= lo && o + k < hi)
			buf[k] ^= 0xff;
}

#define LOCK() pthread_mutex_lock(&mu)
#define UNLOCK_RET(x) do { CUresult r__ = (x); pthread_mutex_unlock(&mu); return r__; } while (0)
/* FAKECUDA_STICKY: a dead context's calls return the error that killed it */
#define DEAD(dev) do { if (F.dead[(dev)]) UNLOCK_RET(F.dead[(dev)]); } while (0)

static struct qop *enqueue(int kind, struct CUstream_st *s)
{
	struct qop *o = calloc(1, sizeof(*o));

	if (qn == qcap) {
		qcap = qcap ? 2 * qcap : 256;
		q = realloc(q, sizeof(*q) * qcap);
	}
	o->kind = kind;
	o->s = s;
	o->seq = ++F.seq;
	if (s->capture) {
		/* Captured: it becomes a node of the graph, nothing runs. */
		struct CUgraph_st *g = s->capture;

		g->op = realloc(g->op, sizeof(*g->op) * (g->n + 1));
		g->op[g->n++] = o;
		return o;
	}
	q[qn++] = o;
	return o;
}

static void compact(void)
{
	int k = 0;

	if (depth)
		return;
	for (int i = 0; i < qn; i++) {
		if (q[i]->done) {
			free(q[i]->data);
			free(q[i]);
		} else {
			q[k++] = q[i];
		}
	}
	qn = k;
}

static CUstream legacy(int dev)
{
	streams[dev].used = 1;
	streams[dev].dev = dev;
	return &streams[dev];
}

static struct managed *find_managed(CUdeviceptr p)
{
	for (int i = 0; i < MAXMANAGED; i++)
		if (managed[i].p && (char *)(uintptr_t)p >= managed[i].p &&
		    (char *)(uintptr_t)p < managed[i].p + managed[i].n + 256)
			return &managed[i];
	return NULL;
}

/* Managed pages move to dev (RES_HOST or a GPU). */
static void um_migrate(struct managed *m, int dev)
{
	if (m->resident == dev)
		return;
	if (m->resident >= 0 && dev >= 0 && !strcmp(F.um_bug, "copy") && m->n > 256)
		m->p[256] ^= 0xff;
	advance(m->n, m->resident >= 0 && dev >= 0 ? F.bw : F.nopeer_bw);
	m->resident = dev;
}

/* FAKECUDA_FAULT_DIR: does a fault apply to GPU g accessing owner's memory? */
static int fdir(int g, int owner)
{
	return F.dir_from < 0 || (g == F.dir_from && owner == F.dir_to);
}

/*
 * GPU g's kernel touches address p: map or migrate managed pages as UVM
 * would. Returns the address the access really reaches; *owner is the GPU
 * whose memory that is (-1: host memory); *err is set when g has no mapping.
 */
static CUdeviceptr resolve(CUdeviceptr p, int g, int *owner, CUresult *err)
{
	struct managed *m = find_managed(p);
	int o;

	if (!m) {
		*owner = find_dev(p);
		if (*owner >= 0 && (!may_access(g, p, *owner) || (F.f_ptefault && *owner != g && fdir(g, *owner))))
			*err = 700;
		return p;
	}
	o = m->resident;
	*owner = g;
	if (o == g)
		return p;
	if (o >= 0 && (m->preferred == o || m->accessed_by[g]) && mapped(g, o)) {
		*owner = o;
		if (strcmp(F.um_bug, "map"))
			return p;
		if (!m->shadow[g])
			m->shadow[g] = calloc(1, m->n + 256);
		return (CUdeviceptr)(uintptr_t)(m->shadow[g] + (p - (CUdeviceptr)(uintptr_t)m->p));
	}
	um_migrate(m, g);
	return p;
}

/* The allocation (device or managed) holding p: its base and length. */
static char *alloc_base(CUdeviceptr p, size_t *n)
{
	struct managed *m = find_managed(p);
	int i;

	if (m) {
		*n = m->n + 256;
		return m->p;
	}
	i = find_alloc(p);
	if (i < 0)
		return NULL;
	*n = allocs[i].n + 256;
	return allocs[i].p;
}

/*
 * FAKECUDA_BAR1_BYTES: where a peer access to p (GPU owner's memory) lands:
 * p itself below the window's end, else the owner's allocation at VRAM
 * offset o % window (NULL where none is). *len: bytes from p that land
 * contiguously (up to the window's end or the next wrap), *room: bytes
 * valid at the target.
 */
static char *bar1_target(CUdeviceptr p, int owner, size_t *len, size_t *room)
{
	int i = find_alloc(p);
	unsigned long long o;

	*len = *room = (size_t)-1;
	if (!F.bar1 || i < 0 || allocs[i].dev != owner)
		return (char *)(uintptr_t)p;
	o = allocs[i].off + (p - (CUdeviceptr)(uintptr_t)allocs[i].p);
	*len = F.bar1 - o % F.bar1;
	if (o < F.bar1)
		return (char *)(uintptr_t)p;
	o %= F.bar1;
	for (int k = 0; k < MAXALLOC; k++)
		if (allocs[k].p && allocs[k].dev == owner && allocs[k].gen == generation &&
		    o >= allocs[k].off && o < allocs[k].off + allocs[k].n) {
			*room = allocs[k].off + allocs[k].n + 256 - o;
			return allocs[k].p + (o - allocs[k].off);
		}
	return NULL;
}

/* n bytes through the BAR1 window: a peer's load from p, or store into it. */
static void bar1_load(char *out, CUdeviceptr p, size_t n, int owner)
{
	while (n) {
		size_t len, room, l;
		const char *t = bar1_target(p, owner, &len, &room);

		l = len < n ? len : n;
		memset(out, 0, l);
		if (t)
			memmove(out, t, room < l ? room : l);
		out += l;
		p += l;
		n -= l;
	}
}

static void bar1_store(CUdeviceptr p, const char *in, size_t n, int owner)
{
	while (n) {
		size_t len, room, l;
		char *t = bar1_target(p, owner, &len, &room);

		l = len < n ? len : n;
		if (t)
			memmove(t, in, room < l ? room : l);
		in += l;
		p += l;
		n -= l;
	}
}

/* n bytes at p as a kernel on GPU g loads them (owner: whose memory). */
static void load_bytes(char *out, CUdeviceptr p, size_t n, int g, int owner)
{
	const char *from = (const char *)(uintptr_t)p;

	if (owner >= 0 && owner != g && fdir(g, owner) && (F.f_stale || (F.f_vmmstale && is_vmm(p)))) {
		size_t an = 0;
		char *base = alloc_base(p, &an);
		struct snap *s = NULL;

		for (int i = 0; base && i < MAXSNAP; i++)
			if (snaps[i].base == base && snaps[i].g == g)
				s = &snaps[i];
		for (int i = 0; base && !s && i < MAXSNAP; i++)
			if (!snaps[i].base) {
				s = &snaps[i];
				s->base = base;
				s->g = g;
				s->n = an;
				s->copy = malloc(an);
				memcpy(s->copy, base, an);
			}
		if (s)
			from = s->copy + (from - base);
	}
	if (owner >= 0 && owner != g && F.f_wrong && fdir(g, owner)) {
		int i = find_alloc(p);

		if (i >= 0 && allocs[i].off >= F.wrong_above) {
			unsigned long long off = allocs[i].off + (p - (CUdeviceptr)(uintptr_t)allocs[i].p);

			memset(out, 0, n);
			for (int k = 0; k < MAXALLOC; k++)
				if (allocs[k].p && allocs[k].dev == g && off >= allocs[k].off &&
				    off < allocs[k].off + allocs[k].n) {
					size_t l = allocs[k].off + allocs[k].n + 256 - off;

					memcpy(out, allocs[k].p + (off - allocs[k].off), l < n ? l : n);
					break;
				}
			return;
		}
	}
	if (owner >= 0 && owner != g && F.bar1 && from == (const char *)(uintptr_t)p) {
		bar1_load(out, p, n, owner);
		return;
	}
	memmove(out, from, n);
}

static void store_bytes(CUdeviceptr p, const char *in, size_t n, int g, int owner)
{
	if (owner >= 0 && owner != g && F.f_lost && fdir(g, owner))
		return;
	if (owner >= 0 && owner != g && ++F.peer_stores == F.flaky)
		return;
	if (owner >= 0 && owner != g && F.bar1) {
		bar1_store(p, in, n, owner);
		return;
	}
	memmove((void *)(uintptr_t)p, in, n);
}

static int progress(struct CUstream_st *s, long long upto);
static void drop_snaps(char *base);

/* Run one queued operation of another stream than self; 0 if none could run. */
static int progress_other(struct CUstream_st *self)
{
	for (int i = 0; i < qn; i++) {
		struct qop *o = q[i];
		int first = 1;

		if (o->done || o->s == self || o->hung)
			continue;
		for (int k = 0; k < i; k++)
			if (q[k]->s == o->s && !q[k]->done)
				first = 0;
		if (first && progress(o->s, o->seq) == 0)
			return 1;
	}
	return 0;
}

static int op_hangs(const struct qop *o)
{
	const char *kind = NULL;

	if (!F.f_hang || F.hung)
		return 0;
	if (o->kind == Q_COPY && o->sdev != o->ddev)
		kind = "ce";
	if (o->kind == Q_KERN && (o->fkind == K_READ || o->fkind == K_WRITE)) {
		int dd = find_dev(o->a[0]), sd = find_dev(o->a[1]);

		if ((dd >= 0 && dd != o->s->dev) || (sd >= 0 && sd != o->s->dev))
			kind = "sm";
	}
	if (o->kind == Q_KERN && (o->fkind == K_FLAG_SET || o->fkind == K_FLAG_WAIT)) {
		int fd = find_dev(o->a[0]);

		if (fd >= 0 && fd != o->s->dev)
			kind = "flag";
	}
	return kind && (!F.hang_kind[0] || !strcmp(F.hang_kind, kind));
}

static void run_kernel(struct qop *o)
{
	int g = o->s->dev, dow = -1, sow = -1;
	CUresult err = 0;

	switch (o->fkind) {
	case K_READ:
	case K_WRITE: {
		size_t n = o->a[2] * 16 + (F.drop_tail ? 0 : o->a[3]) + (F.overrun ? 4 : 0);
		CUdeviceptr dst = resolve(o->a[0] - (F.underrun ? 4 : 0), g, &dow, &err);
		CUdeviceptr src = resolve(o->a[1] - (F.underrun ? 4 : 0), g, &sow, &err);
		char *tmp;

		if (F.f_readfault && sow >= 0 && sow != g && fdir(g, sow))
			err = 700;
		if (err) {
			o->s->err = err;
			return;
		}
		n += F.underrun ? 4 : 0;
		tmp = malloc(n ? n : 1);
		load_bytes(tmp, src, n, g, sow);
		if (sow >= 0 && sow != g)
			bad_vram(tmp, src, n);
		if (dow >= 0 && dow != g)
			bad_vram(tmp, dst, n);
		store_bytes(dst, tmp, n, g, dow);
		free(tmp);
		corrupt(dst, n, "sm");
		advance(n, !strcmp(F.um_bug, "host") && (find_managed(dst) || find_managed(src)) ?
			F.sm_bw / 10 : find_dev(dst) == find_dev(src) ? F.local_bw : F.sm_bw);
		break;
	}
	case K_DELAY: {
		volatile unsigned int *f = (volatile unsigned int *)(uintptr_t)o->a[0];

		if (!f[0])
			f[1] = 1;	/* nothing released it: timed out */
		break;
	}
	case K_FLAG_SET: {
		CUdeviceptr fl = resolve(o->a[0], g, &dow, &err);

		if (err) {
			o->s->err = err;
			return;
		}
		store_bytes(fl, (const char *)&o->u32, 4, g, dow);
		advance(4, F.sm_bw);
		break;
	}
	case K_CAR: {
		/* (in, mine, peer, out, n, ctr, myflag, peerflag, timeout_ns,
		 * status): see tools/cuda/kernels.c. The flag wait polls in real
		 * time: the peer is another process. */
		CUdeviceptr p[10];
		int ow[10] = { 0 };
		unsigned int v, f = 0, st[3];
		size_t nb = o->a[4] * 4;
		unsigned long long off;
		struct timespec t0, t1, nap = { 0, 100000 };
		char *mine, *peer;

		for (int i = 0; i < 10; i++)
			p[i] = i == 4 || i == 8 ? o->a[i] : resolve(o->a[i], g, &ow[i], &err);
		if (F.f_readfault && ((ow[2] >= 0 && ow[2] != g && fdir(g, ow[2])) ||
				      (ow[6] >= 0 && ow[6] != g && fdir(g, ow[6]))))
			err = 700;
		if (err) {
			o->s->err = err;
			return;
		}
		load_bytes((char *)&v, p[5], 4, g, ow[5]);
		v++;
		store_bytes(p[5], (const char *)&v, 4, g, ow[5]);
		off = (v & 1) * nb;
		mine = malloc(nb ? nb : 1);
		peer = malloc(nb ? nb : 1);
		load_bytes(mine, p[0], nb, g, ow[0]);
		store_bytes(p[1] + off, mine, nb, g, ow[1]);
		if (!F.f_flaglost)
			store_bytes(p[7], (const char *)&v, 4, g, ow[7]);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		st[1] = 2;
		for (;;) {
			load_bytes((char *)&f, p[6], 4, g, ow[6]);
			if ((int)(f - v) >= 0) {
				st[1] = 1;
				break;
			}
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if ((t1.tv_sec - t0.tv_sec) * 1000000000ULL + t1.tv_nsec - t0.tv_nsec >= o->a[8])
				break;
			if (!progress_other(o->s))
				nanosleep(&nap, NULL);
		}
		st[0] = f;
		st[2] = v;
		store_bytes(p[9], (const char *)st, 12, g, ow[9]);
		if (st[1] == 1) {
			load_bytes(peer, p[2] + off, nb, g, ow[2]);
			for (size_t i = 0; i < nb / 4; i++)
				((unsigned int *)mine)[i] += ((unsigned int *)peer)[i];
			store_bytes(p[3], mine, nb, g, ow[3]);
		}
		free(mine);
		free(peer);
		advance(nb * 2, F.sm_bw);
		break;
	}
	case K_FLAG_WAIT: {
		CUdeviceptr fl = resolve(o->a[0], g, &sow, &err);
		CUdeviceptr st = resolve(o->a[3], g, &dow, &err);
		unsigned int v = 0, status[2];

		if (F.f_readfault && sow >= 0 && sow != g && fdir(g, sow))
			err = 700;
		if (err) {
			o->s->err = err;
			return;
		}
		for (;;) {
			load_bytes((char *)&v, fl, 4, g, sow);
			if (v == o->u32) {
				status[1] = 1;
				break;
			}
			if (!progress_other(o->s)) {
				status[1] = 2;	/* timed out */
				break;
			}
		}
		status[0] = v;
		store_bytes(st, (const char *)status, 8, g, dow);
		advance(4, F.sm_bw);
		break;
	}
	}
}

static void execute(struct qop *o)
{
	switch (o->kind) {
	case Q_COPY: {
		/* between the GPUs without a peer mapping: staged through host memory */
		int staged = o->sdev != o->ddev &&
			     (F.f_staged || !(mapped(o->sdev, o->ddev) || mapped(o->ddev, o->sdev)));
		double bw = o->sdev == o->ddev ? F.local_bw : staged ? F.nopeer_bw : F.bw;

		if (o->sdev != o->ddev)
			F.ce_peer_copies++;
		if (F.f_cedrop && o->sdev != o->ddev && bw == F.bw &&
		    fdir(o->s->dev, o->s->dev == o->sdev ? o->ddev : o->sdev)) {
			;	/* nothing lands */
		} else if (F.cedrop_from && o->sdev != o->ddev && F.ce_peer_copies >= F.cedrop_from) {
			;	/* nothing lands from this copy on */
		} else if (F.bar1 && o->sdev != o->ddev && bw == F.bw) {
			/* through the engine's GPU's peer mapping of the other's BAR1 */
			char *tmp = malloc(o->n ? o->n : 1);
			int e = o->s->dev, sd = find_dev(o->src), dd = find_dev(o->dst);

			if (sd >= 0 && sd != e)
				bar1_load(tmp, o->src, o->n, sd);
			else
				memcpy(tmp, (const void *)(uintptr_t)o->src, o->n);
			if (dd >= 0 && dd != e)
				bar1_store(o->dst, tmp, o->n, dd);
			else
				memcpy((void *)(uintptr_t)o->dst, tmp, o->n);
			free(tmp);
		} else {
			memmove((void *)(uintptr_t)o->dst, (const void *)(uintptr_t)o->src, o->n);
		}
		if (o->sdev != o->ddev && bw == F.bw) {
			/* the side that is not the engine's GPU went through its BAR1 */
			int e = o->s->dev;

			if (find_dev(o->src) >= 0 && find_dev(o->src) != e)
				bad_vram((char *)(uintptr_t)o->dst, o->src, o->n);
			if (find_dev(o->dst) >= 0 && find_dev(o->dst) != e)
				bad_vram((char *)(uintptr_t)o->dst, o->dst, o->n);
		}
		corrupt(o->dst, o->n, "ce");
		advance_lat(o->n, bw, staged ? F.nopeer_lat_us : F.lat_us);
		break;
	}
	case Q_KERN:
		run_kernel(o);
		break;
	case Q_REC:
		if (o->ev->seq == o->seq) {
			o->ev->t = F.clock_us;
			o->ev->done = 1;
		}
		break;
	case Q_WAIT:
		break;
	case Q_H2D:
		memcpy((void *)(uintptr_t)o->dst, o->data ? o->data : o->host, o->n);
		if (o->s != &streams[o->s->dev])	/* not the legacy stream */
			advance(o->n, F.nopeer_bw);
		break;
	case Q_D2H:
		memcpy(o->host, (const void *)(uintptr_t)o->src, o->n);
		advance(o->n, F.nopeer_bw);
		break;
	case Q_MEMSET:
		for (size_t i = 0; i < o->n; i++)
			((unsigned int *)(uintptr_t)o->dst)[i] = o->u32;
		break;
	case Q_PREFETCH: {
		struct managed *m = find_managed(o->dst);

		if (m) {
			um_migrate(m, (int)o->a[0]);
			m->last_prefetch = (int)o->a[0];
		}
		break;
	}
	}
}

/* Run s's operations up to sequence number upto; -1 if one cannot finish. */
static int progress(struct CUstream_st *s, long long upto)
{
	for (int i = 0; i < qn; i++) {
		struct qop *o = q[i];

		if (o->s != s || o->done)
			continue;
		if (o->seq > upto)
			break;
		if (o->hung || o->running)
			return -1;
		if (op_hangs(o)) {
			o->hung = 1;
			F.hung = 1;
			/* what a test waits for before it signals the process */
			fprintf(stderr, "fakecuda: an operation on GPU %d's stream hangs\n", s->dev);
			return -1;
		}
		if (o->kind == Q_WAIT && progress(o->evs, o->evseq) < 0)
			return -1;
		if (o->kind == Q_HOST) {
			int busy;

			/* waiting for other streams (a collective's other ranks): run
			 * theirs, as their GPUs would meanwhile */
			o->running = 1;
			depth++;
			while ((busy = o->fn(o->data)) && progress_other(s))
				;
			depth--;
			o->running = 0;
			if (busy)
				return -1;
			o->done = 1;
			continue;
		}
		o->running = 1;
		depth++;
		execute(o);
		depth--;
		o->running = 0;
		o->done = 1;
	}
	return 0;
}

/* What an unloaded library would leak: the queue and the snapshots. */
__attribute__((destructor)) static void fake_fini(void)
{
	for (int i = 0; i < qn; i++)
		q[i]->done = 1;
	compact();
	free(q);
	q = NULL;
	qn = qcap = 0;
	for (int i = 0; i < MAXSNAP; i++)
		if (snaps[i].base)
			drop_snaps(snaps[i].base);
	{
		/* ipcfirst's markers of the handles this process exported */
		char pat[64];
		glob_t gl;

		snprintf(pat, sizeof(pat), "/tmp/fakecuda-ipcfirst-%d-*", (int)getpid());
		if (!glob(pat, 0, NULL, &gl))
			for (size_t i = 0; i < gl.gl_pathc; i++)
				unlink(gl.gl_pathv[i]);
		globfree(&gl);
	}
	/* and what a run that stopped at a hang never freed */
	for (int i = 0; i < MAXALLOC; i++)
		if (allocs[i].p) {
			munmap(allocs[i].p, allocs[i].maplen);
			if (allocs[i].fd >= 0)
				close(allocs[i].fd);
			allocs[i].p = NULL;
		}
	for (int i = 0; i < MAXHOST; i++) {
		free(hostmem[i].p);
		hostmem[i].p = NULL;
	}
	for (int i = 0; i < MAXMODULE; i++) {
		free(modules[i]);
		modules[i] = NULL;
	}
}

/*
 * A blocking wait on a hung operation blocks for good, as a real driver's
 * does: signal handlers run (a real wait sleeps or spins interruptibly) but
 * the call never returns, so only a caller that never blocks can report.
 */
static void hung_block(const char *fn)
{
	fprintf(stderr, "fakecuda: %s waits on a hung operation: blocked for good, as a real "
		"driver's wait is (use a query loop with a deadline)\n", fn);
	for (;;)
		pause();
}

static void set_faults(void)
{
	const char *f = getenv("FAKECUDA_FAULT"), *k = getenv("FAKECUDA_HANG_KIND");
	char buf[128], *save = NULL;

	F.f_stale = F.f_lost = F.f_nomap = F.f_wrong = F.f_hang = F.f_graphdrop = F.f_ipcwrong = F.f_staged = F.f_ptefault = F.f_cedrop = 0;
	F.f_vmmstale = F.f_flaglost = F.f_openhang = F.f_readfault = F.f_enablehang = F.f_ipcfirst = F.hung = 0;
	snprintf(F.hang_kind, sizeof(F.hang_kind), "%s", k ? k : "");
	F.wrong_above = (unsigned long long)envd("FAKECUDA_WRONG_ABOVE", 0);
	snprintf(buf, sizeof(buf), "%s", f ? f : "");
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "stale"))
			F.f_stale = 1;
		else if (!strcmp(t, "lost"))
			F.f_lost = 1;
		else if (!strcmp(t, "nomap"))
			F.f_nomap = 1;
		else if (!strcmp(t, "wrong"))
			F.f_wrong = 1;
		else if (!strcmp(t, "hang"))
			F.f_hang = 1;
		else if (!strcmp(t, "graphdrop"))
			F.f_graphdrop = 1;
		else if (!strcmp(t, "cedrop"))
			F.f_cedrop = 1;
		else if (!strcmp(t, "ptefault"))
			F.f_ptefault = 1;
		else if (!strcmp(t, "staged"))
			F.f_staged = 1;
		else if (!strcmp(t, "ipcwrong"))
			F.f_ipcwrong = 1;
		else if (!strcmp(t, "vmmstale"))
			F.f_vmmstale = 1;
		else if (!strcmp(t, "flaglost"))
			F.f_flaglost = 1;
		else if (!strcmp(t, "openhang"))
			F.f_openhang = 1;
		else if (!strcmp(t, "ipcfirst"))
			F.f_ipcfirst = 1;
		else if (!strcmp(t, "readfault"))
			F.f_readfault = 1;
		else if (!strcmp(t, "enablehang"))
			F.f_enablehang = 1;
		else
			fprintf(stderr, "fakecuda: unknown FAKECUDA_FAULT '%s'\n", t);
	}
}

CUresult cuInit(unsigned int flags)
{
	const char *k;

	(void)flags;
	LOCK();
	if ((int)envd("FAKECUDA_INIT_ERROR", 0))
		UNLOCK_RET((int)envd("FAKECUDA_INIT_ERROR", 0));
	for (int i = 0; i < 256; i++)
		if (live_graphs[i]) {
			graph_free(live_graphs[i]);
			live_graphs[i] = NULL;
		}
	generation++;
	F.ndev = (int)envd("FAKECUDA_DEVICES", 2);
	if (F.ndev > MAXDEV)
		F.ndev = MAXDEV;
	F.peer = (int)envd("FAKECUDA_PEER", 1);
	F.enable_error = (int)envd("FAKECUDA_ENABLE_ERROR", 0);
	F.enable_from = (int)envd("FAKECUDA_ENABLE_FROM", -1);
	F.jit_error = (int)envd("FAKECUDA_JIT_ERROR", 0);
	F.copy_error = (int)envd("FAKECUDA_COPY_ERROR", 0);
	F.overrun = (int)envd("FAKECUDA_OVERRUN", 0);
	F.underrun = (int)envd("FAKECUDA_UNDERRUN", 0);
	F.drop_tail = (int)envd("FAKECUDA_DROP_TAIL", 0);
	F.flaky = (long long)envd("FAKECUDA_FLAKY", 0);
	F.peer_stores = 0;
	F.corrupt_off = (long long)envd("FAKECUDA_CORRUPT_OFFSET", -1);
	k = getenv("FAKECUDA_CORRUPT_KIND");
	snprintf(F.corrupt_kind, sizeof(F.corrupt_kind), "%s", k ? k : "");
	F.bw = envd("FAKECUDA_BW_GBPS", 100);
	F.nopeer_bw = envd("FAKECUDA_NOPEER_GBPS", 20);
	F.local_bw = envd("FAKECUDA_LOCAL_GBPS", 1000);
	F.sm_bw = envd("FAKECUDA_SM_GBPS", F.bw);
	F.lat_us = envd("FAKECUDA_LAT_US", 2);
	F.nopeer_lat_us = envd("FAKECUDA_NOPEER_LAT_US", 7 * F.lat_us);
	F.jitter = envd("FAKECUDA_JITTER", 0);
	F.managed = (int)envd("FAKECUDA_MANAGED", 1);
	F.concurrent_managed = (int)envd("FAKECUDA_CONCURRENT_MANAGED", 1);
	F.free_bytes = envd("FAKECUDA_FREE_BYTES", 64.0 * (1 << 30));
	F.free_overstate = envd("FAKECUDA_FREE_OVERSTATE", 0);
	F.bar1 = (unsigned long long)envd("FAKECUDA_BAR1_BYTES", 0);
	F.cedrop_from = (long)envd("FAKECUDA_CEDROP_FROM", 0);
	k = getenv("FAKECUDA_BAD_VRAM");
	if (!k || sscanf(k, "%lld:%lld", &F.bad_off, &F.bad_len) != 2)
		F.bad_off = F.bad_len = 0;
	F.ce_peer_copies = 0;
	k = getenv("FAKECUDA_UM_BUG");
	snprintf(F.um_bug, sizeof(F.um_bug), "%s", k ? k : "");
	set_faults();
	F.sticky = (int)envd("FAKECUDA_STICKY", 0);
	k = getenv("FAKECUDA_FAULT_DIR");
	if (!k || sscanf(k, "%d>%d", &F.dir_from, &F.dir_to) != 2)
		F.dir_from = F.dir_to = -1;
	memset(F.dead, 0, sizeof(F.dead));
	F.ncopies = F.nops = 0;
	F.clock_us = 0;
	for (int i = 0; i < MAXDEV; i++) {
		memset(&F.ctx[i], 0, sizeof(F.ctx[i]));
		F.ctx[i].dev = i;
	}
	/* Whatever an earlier run left queued (a hung test) is dropped. */
	for (int i = 0; i < qn; i++)
		q[i]->done = 1;
	compact();
	F.inited = 1;
	UNLOCK_RET(0);
}

CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }

static const char *errname(CUresult r)
{
	switch (r) {
	case 0: return "CUDA_SUCCESS";
	case 1: return "CUDA_ERROR_INVALID_VALUE";
	case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
	case 3: return "CUDA_ERROR_NOT_INITIALIZED";
	case 100: return "CUDA_ERROR_NO_DEVICE";
	case 101: return "CUDA_ERROR_INVALID_DEVICE";
	case 205: return "CUDA_ERROR_MAP_FAILED";
	case 217: return "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED";
	case 218: return "CUDA_ERROR_INVALID_PTX";
	case 400: return "CUDA_ERROR_INVALID_HANDLE";
	case 500: return "CUDA_ERROR_NOT_FOUND";
	case 600: return "CUDA_ERROR_NOT_READY";
	case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
	case 704: return "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED";
	case 705: return "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED";
	case 719: return "CUDA_ERROR_LAUNCH_FAILED";
	case 900: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
	default: return NULL;
	}
}

CUresult cuGetErrorName(CUresult r, const char **s)
{
	*s = errname(r);
	return *s ? 0 : 1;
}

CUresult cuGetErrorString(CUresult r, const char **s)
{
	*s = errname(r) ? "fake error text" : NULL;
	if (r == 0)
		*s = "no error";
	return *s ? 0 : 1;
}

CUresult cuDeviceGetCount(int *n) { if (!F.inited) return 3; *n = F.ndev; return 0; }

CUresult cuDeviceGet(int *d, int o)
{
	if (o < 0 || o >= F.ndev)
		return 101;
	*d = o;
	return 0;
}

CUresult cuDeviceGetName(char *n, int len, int d)
{
	snprintf(n, len, "Fake GPU %d", d);
	return 0;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int d)
{
	(void)d;
	switch (attr) {
	case 16: *v = 4; break;		/* SMs */
	case 75: *v = 9; break;
	case 76: *v = 0; break;
	case 83: *v = F.managed; break;
	case 89: *v = F.concurrent_managed; break;
	default: *v = 0;
	}
	return 0;
}

CUresult cuDeviceGetPCIBusId(char *s, int len, int d)
{
	snprintf(s, len, "0000:%02x:00.0", 0x10 + d);
	return 0;
}

CUresult cuDeviceCanAccessPeer(int *can, int a, int b)
{
	if (a < 0 || a >= F.ndev || b < 0 || b >= F.ndev)
		return 101;
	*can = a != b && F.peer;
	return 0;
}

/* CU_DEVICE_P2P_ATTRIBUTE_*: 1 rank, 2 access, 3 native atomics, 4 arrays. */
CUresult cuDeviceGetP2PAttribute(int *v, int attr, int a, int b)
{
	if (a < 0 || a >= F.ndev || b < 0 || b >= F.ndev || a == b)
		return 101;
	if (attr < 1 || attr > 4)
		return 1;
	*v = attr == 1 ? 0 : F.peer;
	return 0;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, int d)
{
	if (d < 0 || d >= F.ndev)
		return 101;
	LOCK();
	F.ctx_refs[d]++;
	*c = &F.ctx[d];
	UNLOCK_RET(0);
}

CUresult cuDevicePrimaryCtxRelease_v2(int d)
{
	LOCK();
	if (d < 0 || d >= F.ndev || F.ctx_refs[d] <= 0)
		UNLOCK_RET(1);
	F.ctx_refs[d]--;
	UNLOCK_RET(0);
}

CUresult cuCtxSetCurrent(CUcontext c) { current = c; return 0; }

/* A stream's error, reported once; under FAKECUDA_STICKY a fault (700, 719)
 * kills the stream's context, as CUDA's sticky errors do. */
static CUresult take_err(struct CUstream_st *s)
{
	CUresult r = s->err;

	s->err = 0;
	if (F.sticky && (r == 700 || r == 719) && !F.dead[s->dev])
		F.dead[s->dev] = r;
	return r;
}

CUresult cuCtxSynchronize(void)
{
	CUresult r = 0;

	if (!current)
		return 201;
	LOCK();
	DEAD(current->dev);
	for (int i = 0; i < MAXSTREAM; i++) {
		struct CUstream_st *s = &streams[i];

		if (!s->used || s->dev != current->dev)
			continue;
		if (progress(s, 1LL << 62) < 0)
			hung_block("cuCtxSynchronize");
		if (s->err && !r)
			r = take_err(s);
		s->err = 0;
	}
	compact();
	UNLOCK_RET(r);
}

static void peer_log(const char *what, int a, int b)
{
	const char *path = getenv("FAKECUDA_PEER_LOG");
	FILE *f = path && *path ? fopen(path, "a") : NULL;

	if (f) {
		fprintf(f, "%s %d->%d\n", what, a, b);
		fclose(f);
	}
}

CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags)
{
	(void)flags;
	if (!current)
		return 201;
	if (F.f_enablehang)
		fprintf(stderr, "fakecuda: cuCtxEnablePeerAccess hangs\n");	/* tests wait for it */
	while (F.f_enablehang)
		pause();	/* a lock in the kernel: no return, no signal ends it */
	if (F.enable_error && (F.enable_from < 0 || current->dev == F.enable_from))
		return F.enable_error;
	if (!F.peer)
		return 217;
	if (current->peer[peer->dev])
		return 704;
	current->peer[peer->dev] = 1;
	peer_log("enable", current->dev, peer->dev);
	return 0;
}

CUresult cuCtxDisablePeerAccess(CUcontext peer)
{
	if (!current)
		return 201;
	if (!current->peer[peer->dev])
		return 705;
	current->peer[peer->dev] = 0;
	peer_log("disable", current->dev, peer->dev);
	return 0;
}

static unsigned long long vram_len(size_t n)
{
	return (n + VRAM_ALIGN - 1) & ~(VRAM_ALIGN - 1);
}

/* The lowest free VRAM offset of dev with room for n bytes; -1: none. */
static int vram_place(int dev, size_t n, unsigned long long *off)
{
	unsigned long long o = 0;

	for (int moved = 1; moved;) {
		moved = 0;
		for (int k = 0; k < MAXALLOC; k++)
			if (allocs[k].p && allocs[k].dev == dev && !allocs[k].opened && !allocs[k].vmm &&
			    allocs[k].gen == generation && allocs[k].off < o + vram_len(n) && o < allocs[k].off + vram_len(allocs[k].n)) {
				o = allocs[k].off + vram_len(allocs[k].n);
				moved = 1;
			}
	}
	if (o + vram_len(n) > (unsigned long long)F.free_bytes)
		return -1;
	*off = o;
	return 0;
}

/* VRAM of dev in use. */
__attribute__((unused)) static unsigned long long vram_used(int dev)
{
	unsigned long long u = 0;

	for (int k = 0; k < MAXALLOC; k++)
		if (allocs[k].p && allocs[k].dev == dev && !allocs[k].opened && allocs[k].gen == generation)
			u += vram_len(allocs[k].n);
	return u;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	/* 256 bytes of slack: FAKECUDA_OVERRUN's kernels may write past n. */
	size_t len = (n + 511 + 4095) & ~(size_t)4095;
	unsigned long long off = 0;
	char *m;
	int fd, i_oom = 0;

	if (!current)
		return 201;
	if (F.dead[current->dev])
		return F.dead[current->dev];
	fd = memfd_create("fakecuda", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)len)) {
		if (fd >= 0)
			close(fd);
		return 2;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return 2;
	}
	LOCK();
	if (vram_place(current->dev, n, &off))
		i_oom = MAXALLOC;	/* out of VRAM: the loop below finds nothing */
	for (int i = i_oom; i < MAXALLOC; i++)
		if (!allocs[i].p) {
			allocs[i].off = off;
			allocs[i].gen = generation;
			allocs[i].p = m;
			allocs[i].n = n;
			allocs[i].maplen = len;
			allocs[i].fd = fd;
			allocs[i].opened = 0;
			allocs[i].dev = current->dev;
			*p = (CUdeviceptr)(uintptr_t)m;
			UNLOCK_RET(0);
		}
	munmap(m, len);
	close(fd);
	UNLOCK_RET(2);
}

static void drop_snaps(char *base)
{
	for (int i = 0; i < MAXSNAP; i++)
		if (snaps[i].base == base) {
			free(snaps[i].copy);
			memset(&snaps[i], 0, sizeof(snaps[i]));
		}
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
	LOCK();
	/* cuMemFree waits for the work queued before it (a hung stream excepted). */
	for (int i = 0; i < MAXSTREAM; i++)
		if (streams[i].used)
			progress(&streams[i], 1LL << 62);
	compact();
	for (int i = 0; i < MAXMANAGED; i++)
		if (managed[i].p == (char *)(uintptr_t)p) {
			drop_snaps(managed[i].p);
			free(managed[i].p);
			for (int d = 0; d < MAXDEV; d++)
				free(managed[i].shadow[d]);
			memset(&managed[i], 0, sizeof(managed[i]));
			UNLOCK_RET(0);
		}
	for (int i = 0; i < MAXALLOC; i++)
		if (allocs[i].p == (char *)(uintptr_t)p && !allocs[i].vmm) {
			drop_snaps(allocs[i].p);
			munmap(allocs[i].p, allocs[i].maplen);
			if (allocs[i].fd >= 0)
				close(allocs[i].fd);
			allocs[i].p = NULL;
			UNLOCK_RET(0);
		}
	UNLOCK_RET(1);
}

/* CU_POINTER_ATTRIBUTE_ACCESS_FLAGS (16) and _DEVICE_ORDINAL (9). */
CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p)
{
	int d, *v = data;

	if (!current)
		return 201;
	LOCK();
	d = find_dev(p);
	if (d < 0 && !find_managed(p))
		UNLOCK_RET(1);
	if (attr == 16)
		*v = d < 0 || may_access(current->dev, p, d) ? 3 : 0;
	else if (attr == 9 && d >= 0)
		*v = d;
	else
		UNLOCK_RET(1);
	UNLOCK_RET(0);
}

#ifndef FAKECUDA_NO_MANAGED
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags)
{
	char *mem;

	if (!current)
		return 201;
	if (F.dead[current->dev])
		return F.dead[current->dev];
	if (!n || (flags != 1 && flags != 2))
		return 1;
	mem = aligned_alloc(4096, (n + 256 + 4095) & ~(size_t)4095);
	if (!mem)
		return 2;
	LOCK();
	for (int i = 0; i < MAXMANAGED; i++)
		if (!managed[i].p) {
			memset(&managed[i], 0, sizeof(managed[i]));
			managed[i].p = mem;
			managed[i].n = n;
			managed[i].resident = RES_HOST;
			managed[i].preferred = NO_PREF;
			managed[i].last_prefetch = NO_PREF;
			*p = (CUdeviceptr)(uintptr_t)mem;
			UNLOCK_RET(0);
		}
	free(mem);
	UNLOCK_RET(2);
}

CUresult cuMemAdvise(CUdeviceptr p, size_t n, int advice, int dev)
{
	struct managed *m;

	if (dev < -1 || dev >= F.ndev)
		return 101;
	LOCK();
	m = find_managed(p);
	if (!m || n > m->n + 256)
		UNLOCK_RET(1);
	switch (advice) {
	case 3: m->preferred = dev; break;
	case 4: m->preferred = NO_PREF; break;
	case 5: if (dev >= 0) m->accessed_by[dev] = 1; break;
	case 6: if (dev >= 0) m->accessed_by[dev] = 0; break;
	default: UNLOCK_RET(1);
	}
	UNLOCK_RET(0);
}

CUresult cuMemPrefetchAsync(CUdeviceptr p, size_t n, int dev, CUstream s)
{
	struct managed *m;
	struct qop *o;

	if (dev < -1 || dev >= F.ndev || !s)
		return 101;
	LOCK();
	m = find_managed(p);
	if (!m || n > m->n + 256)
		UNLOCK_RET(1);
	o = enqueue(Q_PREFETCH, s);
	o->dst = p;
	o->a[0] = (unsigned long long)(long long)dev;
	UNLOCK_RET(0);
}

/* CU_MEM_RANGE_ATTRIBUTE_*: 1 read mostly, 2 preferred location, 3 accessed
 * by (an int array, CU_DEVICE_INVALID = -2 after the last), 4 last prefetch. */
CUresult cuMemRangeGetAttribute(void *data, size_t size, int attr, CUdeviceptr p, size_t n)
{
	struct managed *m;
	int *v = data, k = 0;

	LOCK();
	m = find_managed(p);
	if (!m || n > m->n + 256 || size < 4)
		UNLOCK_RET(1);
	switch (attr) {
	case 1: *v = 0; break;
	case 2: *v = m->preferred; break;
	case 3:
		for (size_t i = 0; i < size / 4; i++)
			v[i] = -2;
		for (int d = 0; d < MAXDEV && (size_t)k < size / 4; d++)
			if (m->accessed_by[d])
				v[k++] = d;
		break;
	case 4: *v = m->last_prefetch; break;
	default: UNLOCK_RET(1);
	}
	UNLOCK_RET(0);
}

CUresult cuMemGetInfo_v2(size_t *fr, size_t *total)
{
	if (!current)
		return 201;
	LOCK();
	*fr = (size_t)(F.free_bytes - vram_used(current->dev) + F.free_overstate);
	*total = (size_t)F.free_bytes * 2;
	UNLOCK_RET(0);
}
#endif

CUresult cuMemHostAlloc(void **p, size_t n, unsigned int f)
{
	(void)f;
	*p = calloc(1, n ? n : 1);
	if (!*p)
		return 2;
	LOCK();
	for (int i = 0; i < MAXHOST; i++)
		if (!hostmem[i].p) {
			hostmem[i].p = *p;
			hostmem[i].n = n;
			break;
		}
	UNLOCK_RET(0);
}

CUresult cuMemFreeHost(void *p)
{
	LOCK();
	for (int i = 0; i < MAXHOST; i++)
		if (hostmem[i].p == p)
			hostmem[i].p = NULL;
	free(p);
	UNLOCK_RET(0);
}

static int pinned(const void *p)
{
	/* anywhere inside a cuMemHostAlloc block (the staging ring's slots) */
	for (int i = 0; i < MAXHOST; i++)
		if (hostmem[i].p && (const char *)p >= hostmem[i].p &&
		    (const char *)p < hostmem[i].p + hostmem[i].n)
			return 1;
	return 0;
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned int f)
{
	(void)f;
	*d = (CUdeviceptr)(uintptr_t)p;
	return 0;
}

/* Pageable: the bytes are taken now, the copy happens on the legacy stream. */
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
	struct qop *o;

	if (!current)
		return 201;
	LOCK();
	DEAD(current->dev);
	o = enqueue(Q_H2D, legacy(current->dev));
	o->dst = d;
	o->n = n;
	o->data = malloc(n ? n : 1);
	memcpy(o->data, s, n);
	UNLOCK_RET(0);
}

CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
	if (!current)
		return 201;
	LOCK();
	DEAD(current->dev);
	if (progress(legacy(current->dev), 1LL << 62) < 0)
		hung_block("cuMemcpyDtoH");
	memcpy(d, (const void *)(uintptr_t)s, n);
	compact();
	UNLOCK_RET(0);
}

static CUresult count_copy(void)
{
	F.ncopies++;
	return F.copy_error && F.ncopies == F.copy_error ? 719 : 0;
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc,
			   size_t n, CUstream s)
{
	struct qop *o;

	if (!dc || !sc || !s)
		return 400;
	if (s->capture)
		return 900;	/* as libcuda 580.159.04 answers (lent H100) */
	LOCK();
	DEAD(s->dev);
	if (count_copy())
		UNLOCK_RET(719);
	o = enqueue(Q_COPY, s);
	o->dst = dst;
	o->src = src;
	o->n = n;
	o->sdev = sc->dev;
	o->ddev = dc->dev;
	UNLOCK_RET(0);
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	struct qop *o;

	if (!s)
		return 400;
	LOCK();
	DEAD(s->dev);
	if (count_copy())
		UNLOCK_RET(719);
	o = enqueue(Q_COPY, s);
	o->dst = dst;
	o->src = src;
	o->n = n;
	/* unified addressing: the copy is between the GPUs that own the memory */
	o->sdev = find_dev(src) >= 0 ? find_dev(src) : s->dev;
	o->ddev = find_dev(dst) >= 0 ? find_dev(dst) : s->dev;
	UNLOCK_RET(0);
}

CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st)
{
	struct qop *o;

	if (!st)
		return 400;
	LOCK();
	DEAD(st->dev);
	if (!pinned(d)) {
		/* pageable: returns once the copy is done */
		if (progress(st, 1LL << 62) < 0)
			hung_block("cuMemcpyDtoHAsync (pageable)");
		memcpy(d, (const void *)(uintptr_t)s, n);
		advance(n, F.nopeer_bw);
		compact();
		UNLOCK_RET(0);
	}
	o = enqueue(Q_D2H, st);
	o->host = d;
	o->src = s;
	o->n = n;
	UNLOCK_RET(0);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
	struct qop *o;

	if (!st)
		return 400;
	LOCK();
	DEAD(st->dev);
	o = enqueue(Q_H2D, st);
	o->dst = d;
	o->n = n;
	o->host = (void *)s;
	if (!pinned(s)) {
		o->data = malloc(n ? n : 1);
		memcpy(o->data, s, n);
	}
	UNLOCK_RET(0);
}

CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n)
{
	struct qop *o;

	if (!current)
		return 201;
	LOCK();
	DEAD(current->dev);
	o = enqueue(Q_MEMSET, legacy(current->dev));
	o->dst = d;
	o->u32 = v;
	o->n = n;
	UNLOCK_RET(0);
}

CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
	struct qop *o;

	if (!s)
		return 400;
	LOCK();
	DEAD(s->dev);
	o = enqueue(Q_MEMSET, s);
	o->dst = d;
	o->u32 = v;
	o->n = n;
	UNLOCK_RET(0);
}

/*
 * For the fake NCCL (fakenccl.c), as a real NCCL queues its kernels: fn(arg)
 * runs in stream order when something waits for stream s, and returns 0 when
 * done, nonzero while it waits for other streams' work or another process
 * (the stream then stays not ready, as a kernel spinning on a peer's data
 * keeps it; a blocking synchronisation on it aborts, as on any hang). arg
 * is malloc'd; the fake frees it once done. 0, or 400 for a bad stream.
 */
__attribute__((visibility("default"))) int fakecuda_host_op(CUstream s, int (*fn)(void *), void *arg)
{
	struct qop *o;

	if (!s || !s->used)
		return 400;
	LOCK();
	o = enqueue(Q_HOST, s);
	o->fn = fn;
	o->data = arg;
	UNLOCK_RET(0);
}

CUresult cuStreamCreate(CUstream *s, unsigned int f)
{
	(void)f;
	if (!current)
		return 201;
	LOCK();
	for (int i = MAXDEV; i < MAXSTREAM; i++)
		if (!streams[i].used) {
			memset(&streams[i], 0, sizeof(streams[i]));
			streams[i].used = 1;
			streams[i].dev = current->dev;
			*s = &streams[i];
			UNLOCK_RET(0);
		}
	UNLOCK_RET(2);
}

CUresult cuStreamDestroy_v2(CUstream s)
{
	LOCK();
	s->used = 0;
	UNLOCK_RET(0);
}

CUresult cuStreamQuery(CUstream s)
{
	CUresult r;

	if (!s)
		return 400;
	LOCK();
	DEAD(s->dev);
	if (progress(s, 1LL << 62) < 0)
		UNLOCK_RET(NOT_READY);
	r = take_err(s);
	compact();
	UNLOCK_RET(r);
}

CUresult cuStreamSynchronize(CUstream s)
{
	CUresult r;

	if (!s)
		return 400;
	LOCK();
	DEAD(s->dev);
	if (progress(s, 1LL << 62) < 0)
		hung_block("cuStreamSynchronize");
	r = take_err(s);
	compact();
	UNLOCK_RET(r);
}

CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int f)
{
	struct qop *o;

	(void)f;
	if (!s || !e)
		return 400;
	LOCK();
	if (e->seq) {
		o = enqueue(Q_WAIT, s);
		o->ev = e;
		o->evs = e->s;
		o->evseq = e->seq;
	}
	UNLOCK_RET(0);
}

CUresult cuEventCreate(CUevent *e, unsigned int f)
{
	(void)f;
	if (!current)
		return 201;
	LOCK();
	for (int i = 0; i < MAXEVENT; i++)
		if (!events[i].used) {
			memset(&events[i], 0, sizeof(events[i]));
			events[i].used = 1;
			events[i].dev = current->dev;
			*e = &events[i];
			UNLOCK_RET(0);
		}
	UNLOCK_RET(2);
}

CUresult cuEventDestroy_v2(CUevent e)
{
	LOCK();
	e->used = 0;
	UNLOCK_RET(0);
}

CUresult cuEventRecord(CUevent e, CUstream s)
{
	struct qop *o;

	if (!s)
		s = legacy(e->dev);
	if (e->dev != s->dev)
		return 400;	/* event and stream of different contexts */
	LOCK();
	DEAD(s->dev);
	o = enqueue(Q_REC, s);
	o->ev = e;
	e->seq = o->seq;
	e->s = s;
	e->done = 0;
	UNLOCK_RET(0);
}

CUresult cuEventQuery(CUevent e)
{
	LOCK();
	DEAD(e->dev);
	if (!e->seq)
		UNLOCK_RET(0);
	if (progress(e->s, e->seq) < 0)
		UNLOCK_RET(NOT_READY);
	compact();
	UNLOCK_RET(e->done ? 0 : NOT_READY);
}

CUresult cuEventSynchronize(CUevent e)
{
	LOCK();
	if (!e->seq)
		UNLOCK_RET(0);
	if (progress(e->s, e->seq) < 0)
		hung_block("cuEventSynchronize");
	compact();
	UNLOCK_RET(e->done ? 0 : 400);
}

CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
	if (!a->done || !b->done)
		return a->seq && b->seq ? NOT_READY : 400;
	*ms = (float)((b->t - a->t) / 1e3);
	return 0;
}

CUresult cuModuleLoadDataEx(CUmodule *m, const void *img, unsigned int nopt, int *opt, void **val)
{
	int missing = 0;
	char entry[64];

	for (int k = 0; k < K_NFUNC; k++) {
		snprintf(entry, sizeof(entry), ".entry %s(", kernel_entry[k]);
		missing |= !strstr(img, entry);
	}
	if (F.jit_error || missing) {
		for (unsigned i = 0; i < nopt; i++)
			if (opt[i] == 5 && nopt > 1)
				snprintf(val[i], 64, "ptxas fatal   : fake JIT failure");
		return 218;
	}
	*m = calloc(1, sizeof(**m));
	(*m)->dev = current ? current->dev : 0;
	LOCK();
	for (int i = 0; i < MAXMODULE; i++)
		if (!modules[i]) {
			modules[i] = *m;
			break;
		}
	UNLOCK_RET(0);
}

CUresult cuModuleUnload(CUmodule m)
{
	LOCK();
	for (int i = 0; i < MAXMODULE; i++)
		if (modules[i] == m)
			modules[i] = NULL;
	free(m);
	UNLOCK_RET(0);
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	(void)m;
	for (int k = 0; k < K_NFUNC; k++)
		if (!strcmp(name, kernel_entry[k])) {
			*f = &funcs[k];
			return 0;
		}
	return 500;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			unsigned by, unsigned bz, unsigned shm, CUstream s, void **args, void **extra)
{
	struct qop *o;

	(void)gy; (void)gz; (void)by; (void)bz; (void)shm; (void)extra;
	if (!s || !gx || !bx || bx > 1024)
		return 1;
	LOCK();
	DEAD(s->dev);
	if ((f->kind == K_READ || f->kind == K_WRITE) && *(unsigned long long *)args[3] >= 16)
		UNLOCK_RET(1);
	if ((f->kind == K_READ || f->kind == K_WRITE) && count_copy())
		UNLOCK_RET(719);
	o = enqueue(Q_KERN, s);
	o->fkind = f->kind;
	switch (f->kind) {
	case K_READ:
	case K_WRITE:
		for (int i = 0; i < 4; i++)
			o->a[i] = *(unsigned long long *)args[i];
		break;
	case K_DELAY:
		o->a[0] = *(unsigned long long *)args[0];
		o->a[1] = *(unsigned long long *)args[1];
		break;
	case K_CAR:		/* ten u64 */
		for (int i = 0; i < 10; i++)
			o->a[i] = *(unsigned long long *)args[i];
		break;
	case K_FLAG_SET:	/* (u64 flag, u32 value) */
		o->a[0] = *(unsigned long long *)args[0];
		o->u32 = *(unsigned int *)args[1];
		break;
	case K_FLAG_WAIT:	/* (u64 flag, u32 want, u64 timeout_ns, u64 status) */
		o->a[0] = *(unsigned long long *)args[0];
		o->u32 = *(unsigned int *)args[1];
		o->a[2] = *(unsigned long long *)args[2];
		o->a[3] = *(unsigned long long *)args[3];
		break;
	}
	UNLOCK_RET(0);
}

CUresult cuStreamBeginCapture_v2(CUstream s, int mode)
{
	(void)mode;
	if (!s || s->capture || s == &streams[s->dev])
		return 1;
	LOCK();
	s->capture = calloc(1, sizeof(*s->capture));
	graph_track(s->capture, 1);
	UNLOCK_RET(0);
}

CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
	if (!s || !s->capture)
		return 1;
	LOCK();
	*g = s->capture;
	s->capture = NULL;
	UNLOCK_RET(0);
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	(void)flags;
	*e = g;
	return 0;
}

/* Queue a copy of every node on s (the last one dropped under graphdrop). */
CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
	int n;

	if (!s || !e)
		return 400;
	LOCK();
	DEAD(s->dev);
	n = e->n;
	if (F.f_graphdrop && ++e->launches >= 2 && n > 0)
		n--;
	for (int i = 0; i < n; i++) {
		struct qop *o = enqueue(e->op[i]->kind, s), *from = e->op[i];
		long long seq = o->seq;

		*o = *from;
		o->s = s;
		o->seq = seq;
		o->done = o->hung = o->running = 0;
		if (from->data) {
			o->data = malloc(from->n ? from->n : 1);
			memcpy(o->data, from->data, from->n);
		}
	}
	UNLOCK_RET(0);
}

CUresult cuGraphExecDestroy(CUgraphExec e)
{
	(void)e;
	return 0;
}

CUresult cuGraphDestroy(CUgraph g)
{
	LOCK();
	graph_track(g, 0);
	graph_free(g);
	UNLOCK_RET(0);
}

/*
 * Virtual memory management (cuMemCreate, cuMemMap, cuMemSetAccess), as
 * NCCL's P2P/CUMEM transport and PyTorch's expandable segments use it: a
 * handle is a memfd on its GPU, cuMemAddressReserve an inaccessible range,
 * cuMemMap maps the memfd there. A GPU reaches a mapping only where
 * cuMemSetAccess granted it (the owner too), whatever peer access says.
 * Such memory takes no VRAM offset (FAKECUDA_BAR1_BYTES and
 * FAKECUDA_FREE_BYTES leave it alone).
 */
typedef struct { int type, id; } CUmemLocation;
typedef struct {
	int type, requestedHandleTypes;
	CUmemLocation location;
	void *win32HandleMetaData;
	unsigned char allocFlags[8];
} CUmemAllocationProp;
typedef struct { CUmemLocation location; int flags; } CUmemAccessDesc;
#define MAXVMM 64
static struct { int fd, dev; size_t n; } vmh[MAXVMM];

CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop, int option)
{
	(void)option;
	if (!prop || prop->location.type != 1)
		return 1;
	*g = VRAM_ALIGN;
	return 0;
}

CUresult cuMemCreate(unsigned long long *h, size_t n, const CUmemAllocationProp *prop,
		     unsigned long long flags)
{
	int fd;

	(void)flags;
	if (!prop || prop->type != 1 || prop->location.type != 1 || prop->location.id < 0 ||
	    prop->location.id >= F.ndev || !n || n % VRAM_ALIGN)
		return 1;
	fd = memfd_create("fakecuda-vmm", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)n)) {
		if (fd >= 0)
			close(fd);
		return 2;
	}
	LOCK();
	for (int i = 0; i < MAXVMM; i++)
		if (!vmh[i].n) {
			vmh[i].fd = fd;
			vmh[i].dev = prop->location.id;
			vmh[i].n = n;
			*h = (unsigned long long)i + 1;
			UNLOCK_RET(0);
		}
	close(fd);
	UNLOCK_RET(2);
}

CUresult cuMemRelease(unsigned long long h)
{
	if (!h || h > MAXVMM || !vmh[h - 1].n)
		return 1;
	LOCK();
	close(vmh[h - 1].fd);
	vmh[h - 1].n = 0;
	UNLOCK_RET(0);
}

CUresult cuMemAddressReserve(CUdeviceptr *p, size_t n, size_t align, CUdeviceptr addr,
			     unsigned long long flags)
{
	void *m;

	(void)align;
	(void)addr;
	(void)flags;
	m = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return 2;
	*p = (CUdeviceptr)(uintptr_t)m;
	return 0;
}

CUresult cuMemAddressFree(CUdeviceptr p, size_t n)
{
	return munmap((void *)(uintptr_t)p, n) ? 1 : 0;
}

CUresult cuMemMap(CUdeviceptr p, size_t n, size_t off, unsigned long long h, unsigned long long flags)
{
	void *m;

	(void)flags;
	if (!h || h > MAXVMM || !vmh[h - 1].n || off + n > vmh[h - 1].n)
		return 1;
	LOCK();
	m = mmap((void *)(uintptr_t)p, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 vmh[h - 1].fd, (off_t)off);
	if (m == MAP_FAILED)
		UNLOCK_RET(2);
	for (int i = 0; i < MAXALLOC; i++)
		if (!allocs[i].p) {
			memset(&allocs[i], 0, sizeof(allocs[i]));
			allocs[i].p = m;
			/* find_alloc's 256 bytes of slack: no overrun knob here */
			allocs[i].n = n - 256;
			allocs[i].maplen = n;
			allocs[i].fd = -1;
			allocs[i].dev = vmh[h - 1].dev;
			allocs[i].gen = generation;
			allocs[i].vmm = (int)h;
			UNLOCK_RET(0);
		}
	UNLOCK_RET(2);
}

CUresult cuMemSetAccess(CUdeviceptr p, size_t n, const CUmemAccessDesc *d, size_t count)
{
	(void)n;
	LOCK();
	for (int i = 0; i < MAXALLOC; i++)
		if (allocs[i].p == (char *)(uintptr_t)p && allocs[i].vmm) {
			for (size_t k = 0; k < count; k++) {
				if (d[k].location.type != 1 || d[k].location.id < 0 ||
				    d[k].location.id >= F.ndev)
					UNLOCK_RET(1);
				if (d[k].flags == 3)
					allocs[i].access |= 1u << d[k].location.id;
				else
					allocs[i].access &= ~(1u << d[k].location.id);
			}
			UNLOCK_RET(0);
		}
	UNLOCK_RET(1);
}

CUresult cuMemUnmap(CUdeviceptr p, size_t n)
{
	LOCK();
	for (int i = 0; i < MAXALLOC; i++)
		if (allocs[i].p == (char *)(uintptr_t)p && allocs[i].vmm) {
			for (int k = 0; k < MAXSTREAM; k++)
				if (streams[k].used)
					progress(&streams[k], 1LL << 62);
			compact();
			drop_snaps(allocs[i].p);
			/* back to a reserved, inaccessible range */
			mmap(allocs[i].p, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
			     -1, 0);
			allocs[i].p = NULL;
			allocs[i].vmm = 0;
			UNLOCK_RET(0);
		}
	UNLOCK_RET(1);
}

/* CUipcMemHandle: 64 opaque bytes; here the exporter's pid and memfd. */
typedef struct { char reserved[64]; } CUipcMemHandle;
struct ipc { unsigned magic; int pid, fd, dev; size_t n, maplen; unsigned long long off; unsigned gen; };

static unsigned ipc_gen;	/* handles exported by this process */

/* ipcfirst: the marker of a handle's first opener (the exporter removes them). */
static void ipcfirst_path(char *path, size_t len, int pid, int fd, unsigned gen)
{
	snprintf(path, len, "/tmp/fakecuda-ipcfirst-%d-%d-%u", pid, fd, gen);
}

CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p)
{
	struct ipc x = { 0x46414b45, getpid(), -1, 0, 0, 0, 0, 0 };
	int i;

	LOCK();
	i = find_alloc(p);
	if (i < 0 || allocs[i].opened || allocs[i].vmm || allocs[i].p != (char *)(uintptr_t)p)
		UNLOCK_RET(1);
	x.fd = allocs[i].fd;
	x.dev = allocs[i].dev;
	x.n = allocs[i].n;
	x.maplen = allocs[i].maplen;
	x.off = allocs[i].off;
	x.gen = ++ipc_gen;
	memset(h, 0, sizeof(*h));
	memcpy(h->reserved, &x, sizeof(x));
	UNLOCK_RET(0);
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *p, CUipcMemHandle h, unsigned int flags)
{
	struct ipc x;
	char path[64];
	char *m;
	int fd;

	memcpy(&x, h.reserved, sizeof(x));
	if (!current || x.magic != 0x46414b45)
		return 1;
	if (x.pid == getpid())
		return 1;	/* CUDA refuses a handle of the same process */
	if (x.dev != current->dev && !(flags & 1) && !current->peer[x.dev])
		return 705;
	if (F.f_openhang) {
		int lf;

		snprintf(path, sizeof(path), "/tmp/fakecuda-openhang-%d", (int)getppid());
		lf = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
		if (lf >= 0 && flock(lf, LOCK_EX | LOCK_NB))
			for (;;)
				pause();	/* another process is mapping: the deadlock */
		usleep(50000);
		if (lf >= 0)
			close(lf);	/* and its lock */
	}
	if (F.f_ipcfirst && !F.f_ipcwrong) {
		int first;

		/* the first process to open this handle maps it; every later one
		 * gets a private copy: it reads the exporter's bytes, its stores
		 * are lost */
		ipcfirst_path(path, sizeof(path), x.pid, x.fd, x.gen);
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
		first = fd >= 0;
		if (fd >= 0)
			close(fd);
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", x.pid, x.fd);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return 1;
		m = mmap(NULL, x.maplen, PROT_READ | PROT_WRITE, (first ? MAP_SHARED : MAP_PRIVATE) |
			 MAP_NORESERVE, fd, 0);
		close(fd);
	} else if (F.f_ipcwrong) {
		m = mmap(NULL, x.maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			 -1, 0);
	} else {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", x.pid, x.fd);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return 1;
		m = mmap(NULL, x.maplen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
		close(fd);
	}
	if (m == MAP_FAILED)
		return 2;
	LOCK();
	if (x.dev != current->dev && (flags & 1))
		current->peer[x.dev] = 1;	/* CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS */
	for (int i = 0; i < MAXALLOC; i++)
		if (!allocs[i].p) {
			allocs[i].p = m;
			allocs[i].n = x.n;
			allocs[i].maplen = x.maplen;
			allocs[i].fd = -1;
			allocs[i].opened = 1;
			allocs[i].dev = x.dev;
			allocs[i].off = x.off;
			*p = (CUdeviceptr)(uintptr_t)m;
			UNLOCK_RET(0);
		}
	munmap(m, x.maplen);
	UNLOCK_RET(2);
}

CUresult cuIpcCloseMemHandle(CUdeviceptr p)
{
	LOCK();
	for (int i = 0; i < MAXALLOC; i++)
		if (allocs[i].p == (char *)(uintptr_t)p && allocs[i].opened) {
			for (int k = 0; k < MAXSTREAM; k++)
				if (streams[k].used)
					progress(&streams[k], 1LL << 62);
			compact();
			drop_snaps(allocs[i].p);
			munmap(allocs[i].p, allocs[i].maplen);
			allocs[i].p = NULL;
			UNLOCK_RET(0);
		}
	UNLOCK_RET(1);
}
