/* SPDX-License-Identifier: GPL-2.0 */
/*
 * p2pctl verify, inside: the state of a run, one test's result, and what
 * the test families (verify_<family>.c) share. verify_args.c parses the
 * command line, verify.c runs the families pair by pair, verify_report.c
 * prints and judges what they found. Nothing here is used by bench.
 */
#ifndef P2P_CUDA_VERIFY_H
#define P2P_CUDA_VERIFY_H

#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <json-c/json.h>

#include "cuda_int.h"
#include "deadline.h"
#include "engine.h"
#include "linkrate.h"
#include "pattern.h"

#define GUARD 256		/* guard bytes before and after every destination */
#define POISON 0xa5a5a5a5u	/* destinations and their guards */
#define SRC_TAIL 0x5a		/* around the source's data: an overrun copies it */
#define AUX_BYTES 4096		/* per GPU: the flag (offset 0) and the status (64) */
#define FLAG_MAX (4ULL << 20)	/* payload bytes of the flags tests */
#define FLAG_ROUNDS 8
#define GRAPH_REPLAYS 8
#define VRAM_MARGIN (256ULL << 20)	/* left free at the vram test's top place */

enum {
	V_PATH, V_CE, V_SM_READ, V_SM_WRITE, V_FLAGS, V_FLAGS_POLL, V_GRAPH, V_IPC, V_VRAM, V_VMM, V_CAR, V_PROCS,
	V_UM_READ, V_UM_WRITE, V_UM_PREFETCH, V_UM_FAULT, V_CONCURRENT, V_NCCL, V_COUNT
};
#define V_DEV_COUNT V_UM_READ	/* the device-memory tests of a pair come first */
#define V_UM_COUNT (V_CONCURRENT - V_UM_READ)
extern const char *const vnames[V_COUNT];	/* the names --tests takes */
extern const char *const vhint[V_COUNT];	/* what a failure usually means */
struct vtest;
const char *vtest_hint(const struct vtest *t);	/* vhint[], or the failure's own */

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
	char warn[256];		/* OK, but worth a look (path: barely above staging) */
	char path[512];
	int rounds;
	int gpu;		/* 1 + the GPU whose call or wait returned the error */
	uint64_t vram_mb[3][2];	/* vram --quick: the pads (MiB) of each place, on src and dst */
	/* vram's sweep, on src and dst: bytes free before, bytes tested, buffers */
	uint64_t vram_free[2], vram_cov[2];
	int vram_nbuf[2];
	size_t vram_buf;	/* ... of this many bytes */
	int quick;		/* vram: --quick's sample */
	int partial;		/* vram: the budget or a signal ended the sweep first */
	int cut;		/* concurrent: ended early by a signal */
	int procs;		/* nccl: one process per GPU (ncclCommInitRank) */
	CUresult cr;		/* the CUDA error vfail() was given (0: none) */
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
	int vram_quick;		/* --quick: vram samples three places */
	double vram_budget;	/* --vram-budget: seconds of one vram sweep */
	unsigned tests;		/* bit per V_* */
	double timeout, seconds;
	CUdeviceptr um;		/* managed buffer of total bytes, for the pair under test */
	CUdeviceptr chk[P2P_MAX_GPUS], aux[P2P_MAX_GPUS], pad[P2P_MAX_GPUS];
	uint64_t padbytes[P2P_MAX_GPUS];
	int hung;
	int cut;		/* a wait cut short by a signal: work may be in flight */
	char hang[768];
	struct linkrate link;	/* of the pair under test */
	struct { int done, ok; double on_gbps, off_gbps, on_us, off_us; }
		pm[P2P_MAX_GPUS][P2P_MAX_GPUS];	/* the path test of a -> b */
	FILE *out;		/* text output (NULL with --json): a line per test as it ends */
	char nccl_dir[224];	/* verify's own directory for it (mkdtemp) */
	char nccl_log[256];	/* NCCL's debug file (NCCL_DEBUG=INFO) that verify set up */
	/* "" or the test whose sticky CUDA error (vsticky) killed GPU g's context
	 * in this process: no later test uses that context. */
	char lost[P2P_MAX_GPUS][80];
};

/*
 * dl_stop (deadline.h), SIGINT or SIGTERM: the wait in flight ends at once
 * (the test is "not finished: interrupted"), no new test starts, and the
 * verdict of what ran is printed.
 */

/* The drivers with nvidia-uvm's devicesLock inversion (docs/support.md). */
#define V_UVM_LOCK_DRIVERS RIG_UVM_LOCK_DRIVERS

/* No new test starts: a hang or a signal. */
static inline int vhalt(const struct vstate *v)
{
	return v->hung || dl_stop;
}

/* The managed-memory part of one pair. */
enum { UM_OK, UM_FAIL, UM_SKIPPED };
extern const char *const umstatus[];

struct umpair {
	int status;
	char reason[512];	/* SKIPPED: why; FAIL: an error outside the tests */
	int nok, nfail, nskip;
};

#define VT(call, what)                                  \
	do {                                            \
		CUresult cr_ = (call);                  \
		if (cr_ != CUDA_SUCCESS)                \
			return vfail(t, what, cr_);      \
	} while (0)

#define VW(g, s, what) VT(vwait(v, t, g, s, NULL, what), what)

/* What a pair's results add up to. */
struct pverdict {
	int a, b, peer_ok, nfail, staging, measured;
	int reached;		/* its tests ran (an interrupted run stops before some pairs) */
	char noway[48];		/* the direction whose peer access could not be enabled */
	double gbps, us;
	int partial;		/* a vram sweep ended before it tested all free memory */
	double warn_ratio;	/* a path test warned: its peer/staged bandwidth, the lowest */
	char failed[160];	/* the failed tests' names */
	struct linkrate link;
	char cell[V_COUNT][2][6];	/* the grid: [test][0: a->b, 1: b->a]; "" not run */
};

/* verify_args.c: the command line, beside what it sets in struct vstate. */
struct vopts {
	int json;		/* --json */
	const char *pairs;	/* --pairs as given; NULL: every pair */
	const char *tlist;	/* --tests as given */
	int seeded;		/* --seed given */
	int sel[P2P_MAX_GPUS][P2P_MAX_GPUS];	/* the pairs --pairs selects */
	int child;		/* 'I', 'C', 'R': run as --ipc-child, --car-child, --nccl-child */
	const char *child_spec;	/* ... with this spec */
};
/* -1: run (or o->child); else the exit status (a usage error, --help). */
int verify_args(int argc, char **argv, FILE *out, FILE *err, struct vstate *v, struct vopts *o);

/* What one run found, from verify.c's run to verify_report.c's verdict. */
struct vrun {
	int n;				/* GPUs found */
	int use[P2P_MAX_GPUS];		/* the GPUs the selected pairs use */
	struct vtest tests[2 * V_COUNT * 2];	/* the tests of the pair under test */
	struct vtest ctests[3 * P2P_MAX_GPUS * P2P_MAX_GPUS];	/* concurrent's and nccl's */
	int nct;
	struct pverdict pvs[P2P_MAX_GPUS * P2P_MAX_GPUS];
	int npv;
	int pvjson[P2P_MAX_GPUS * P2P_MAX_GPUS];	/* pvs[q]'s index in jpairs, or -1 */
	json_object *jpairs;		/* --json: an object per pair run */
	char nccl_verdict[1024];
	int nccl_ran;
	int nok, nfail, nskip, nunproven, npartial;
};

/* verify_common.c */
int vfail(struct vtest *t, const char *what, CUresult cr);
/* 0 if cr is CUDA_SUCCESS, else vfail()'s -1. */
static inline int vfail_if(struct vtest *t, CUresult cr, const char *what)
{
	return cr == CUDA_SUCCESS ? 0 : vfail(t, what, cr);
}
int vsticky(CUresult cr);
void vexplain(struct vstate *v, struct vtest *t);
int vlost_skip(struct vstate *v, struct vtest *t, const int *gs, int ng);
CUresult vwait(struct vstate *v, struct vtest *t, int g, CUstream s, CUevent e,
		      const char *what);
/* vwait in a second process (no vstate): s within timeout seconds, else CUDA_ERROR_NOT_READY. */
static inline CUresult vchild_wait(CUstream s, double timeout)
{
	return dl_wait(s, NULL, now_s() + timeout);
}
void vimages(struct vstate *v, size_t n);
int vcheck_got(struct vstate *v, struct vtest *t, size_t n);
int vpeer_mapped(struct vstate *v, int g, CUdeviceptr p, char *why, size_t len);
int vstage(struct vstate *v, struct vtest *t, int a, int b, int chk);
int vreadback(struct vstate *v, struct vtest *t, int g, CUdeviceptr p);
size_t vround_size(const struct vstate *v, int round);

/* verify_path.c */
int vdev_path(struct vstate *v, struct vtest *t);
int run_path(struct vstate *v, struct vtest *t);

/* verify_copy.c */
int run_copy(struct vstate *v, struct vtest *t);

/* verify_vram.c */
int run_vram(struct vstate *v, struct vtest *t);

/* verify_vmm.c */
int run_vmm(struct vstate *v, struct vtest *t);

/* verify_car.c */
int run_car(struct vstate *v, struct vtest *t);
int car_child(const char *spec, FILE *out);

/* verify_procs.c */
int run_procs(struct vstate *v, struct vtest *t);

/* verify_flags.c */
int run_flags(struct vstate *v, struct vtest *t);

/* verify_graph.c */
int run_graph(struct vstate *v, struct vtest *t);

/* verify_ipc.c */
int ipc_child(const char *spec, FILE *out);
int run_ipc(struct vstate *v, struct vtest *t);

/* verify_child.c: a second process (verify --ipc-child, --car-child, --nccl-child). */
struct vchild {
	pid_t pid;
	int fd;			/* its stdout and stderr; -1 once it has ended and been reaped */
	int status;		/* waitpid's, once reaped */
	int killed;		/* ended by vchild_kill at a deadline */
	size_t got;
	char buf[4096];		/* its output so far, NUL-terminated */
};
void vhex(char *out, const void *p, size_t n);
int vunhex(void *p, const char *s, size_t n);
int vchild_start(struct vtest *t, const char *opt, const char *spec, struct vchild *c);
ssize_t vchild_take(struct vchild *c);
void vchild_kill(struct vchild *c);
int vchild_read(struct vchild *c, const char *until, double end);
_Noreturn void vchild_stuck(FILE *out);
void vchild_init(void);
const char *vchild_line(const char *buf, const char *key, int *len);
#define VCHILD_REAP_S 10

/*
 * How long a second process (ipc's, car's rank 1, an nccl rank starting) may
 * take to get ready or to finish: its own waits are --timeout each, and it
 * loads CUDA and the kernels first.
 */
static inline double vchild_limit(const struct vstate *v)
{
	return 3 * v->timeout + 10;
}

/* verify_nccl.c */
int nccl_open(char *why, size_t len);
/* Element k of GPU g's input in the nccl tests: small, so int32 sums cannot overflow. */
int32_t nccl_elem(uint64_t seed, int g, size_t k);
int nccl_call(uint64_t max, int k, uint64_t *bytes, int *inplace);
void run_nccl(struct vstate *v, struct vtest *t, const int *gs, int ng);
/* verify_nccl_procs.c */
void run_nccl_procs(struct vstate *v, struct vtest *t, const int *gs, int ng);
int nccl_child(const char *spec, FILE *out);
void nccl_debug_begin(struct vstate *v);
void nccl_debug_end(struct vstate *v);
long nccl_log_size(const struct vstate *v);
void nccl_transport(struct vstate *v, struct vtest *t, const int *gs, int ng, const char *path, long off);

/* verify_um.c */
void um_pair(struct vstate *v, int a, int b, struct vtest *tests, int *nt, struct umpair *u);

/* verify_conc.c */
int run_concurrent(struct vstate *v, int sel[P2P_MAX_GPUS][P2P_MAX_GPUS], struct vtest *tests,
			  int *nt, int maxt);

/* verify_report.c */
/* The run's verdict on out, text or JSON; then its exit status. */
void verify_report(struct vstate *v, struct vrun *r, int json, FILE *out);
int verify_status(const struct vstate *v, const struct vrun *r);
json_object *vtest_json(const struct vtest *t);
void vdone(struct vstate *v, struct vtest *t, int stop_before);
void um_print(FILE *out, const struct vstate *v, int a, int b, const struct umpair *u);
void pv_add(struct pverdict *pv, const struct vtest *t);
void pv_path(struct pverdict *pv, const struct vstate *v);
int grid_row(const struct vstate *v, int m);
void pv_line(const struct pverdict *pv, const struct vstate *v, char *buf, size_t len);
void pv_grid(FILE *out, const struct pverdict *pv, const struct vstate *v);
json_object *pv_grid_json(const struct pverdict *pv, const struct vstate *v);
json_object *pv_keymiss_json(const struct pverdict *pv);
void pair_json(struct vstate *v, json_object *jpairs, int a, int b, int pfail, const char *perr,
		      struct vtest *tests, int nt, const struct umpair *um);

#endif
