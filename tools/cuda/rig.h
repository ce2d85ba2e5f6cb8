/* SPDX-License-Identifier: GPL-2.0 */
#ifndef P2P_CUDA_RIG_H
#define P2P_CUDA_RIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

#include "cu.h"
#include "kernels.h"
#include "opts.h"

#define RIG_STREAMS 4		/* slot d (0, 1) is direction d; d + 2 its second stream */
#define RIG_RING 4		/* host staging ring: slots per direction */

struct gpu {
	int ord;
	int used;
	CUdevice dev;
	CUcontext ctx;
	char name[128];
	char busid[32];
	int sms, cc_major, cc_minor;
	int managed, concurrent_managed;	/* CU_DEVICE_ATTRIBUTE_(CONCURRENT_)MANAGED_* */
	CUmodule mod;
	CUfunction fn[K_COUNT];
	int kernels_ok;
	CUstream s[RIG_STREAMS];
	CUevent ev_start, ev_stop;
	CUevent ev_aux[RIG_STREAMS];
	CUevent ev_fill[2][RIG_RING];	/* recorded when this GPU is the source */
	CUevent ev_free[2][RIG_RING];	/* recorded when this GPU is the destination */
	CUdeviceptr src, dst;			/* bufsize bytes each */
	CUresult err;
	char errmsg[256];
};

struct rig {
	int n;				/* GPUs in the system */
	int driver_version;
	size_t bufsize;
	struct gpu g[P2P_MAX_GPUS];
	int can_peer[P2P_MAX_GPUS][P2P_MAX_GPUS];
	int peer_on[P2P_MAX_GPUS][P2P_MAX_GPUS];
	volatile uint32_t *flag;	/* [0] release, [1] delay timed out */
	CUdeviceptr flag_dev;
	void *ring[2];	/* pinned staging buffers, RIG_RING slots each */
	size_t ring_slot;
	char jitlog[2048];
};

/*
 * cu_open() must have succeeded. Query every GPU; for those with use[i]
 * set: retain the primary context, load the kernels (failure there is not
 * fatal: kernels_ok = 0 and jitlog says why), create streams and events,
 * allocate src/dst of bufsize bytes (src filled with 0x5a5a5a5a when fill).
 * GPUs are set up in parallel, one thread each. 0, or an exit code + err.
 */
int rig_open(struct rig *r, const int *use, size_t bufsize, int fill, char *err, size_t errlen);
/* Count GPUs only (after cu_open). */
int rig_count(int *n, char *err, size_t errlen);
void rig_close(struct rig *r);
/* Enable (on=1) or disable peer access from GPU a's context to b's. */
CUresult rig_peer(struct rig *r, int a, int b, int on);
/*
 * Driver calls that may block in the kernel rather than on GPU work (peer
 * mappings take locks there): the one in flight, for a watchdog thread.
 * rig_guard() before the call (what, the GPU whose context makes it, and
 * the direction a->b or -1), rig_unguard() after. rig_guard_expired(): 1
 * if a call has been in flight over limit s (its record and age copied
 * out); it is then claimed, and a rig_unguard() after it never returns, so
 * the watchdog that claimed it reports the hang alone.
 */
void rig_guard(const char *what, int g, int a, int b);
/*
 * The same for a library call that may block for good (NCCL's host calls:
 * ncclGroupEnd, ncclCommDestroy): label (copied) names the call and its GPUs,
 * hint what a hang there means; rig_guard_expired() then gives g = -1 and
 * what = the label, rig_guard_hint() the hint.
 */
void rig_guard_call(const char *label, const char *hint);
void rig_unguard(void);
int rig_guard_expired(double limit, const char **what, int *g, int *a, int *b, double *t);
const char *rig_guard_hint(void);
/*
 * A watchdog's end of the run, from its own thread: flush @out (the partial
 * verdict), point stdout and stderr at /dev/null so that CUDA's or NCCL's
 * exit handlers, still blocked in the driver elsewhere, write nothing more,
 * and _exit with 128 + @sig after a signal, else P2P_EXIT_FAIL.
 */
_Noreturn void rig_exit(FILE *out, int sig);
/*
 * The one deadline of a guarded call, verify's and bench's: --timeout (sized
 * for GPU waits), but at least RIG_GUARD_MIN_S (a mapping call, or NCCL's
 * first group call connecting its channels, may take a while on a loaded
 * host). After a signal (SIGINT, SIGTERM), a guarded call in flight for
 * RIG_GUARD_SIGNAL_S, RIG_GUARD_SIGNAL_S after the signal, is taken as
 * blocked and ends the run (shorter calls, a normal teardown, go on).
 */
#define RIG_GUARD_MIN_S 10.0
/* The drivers with nvidia-uvm's devicesLock inversion (docs/support.md), and
 * what a peer-mapping call blocked past its deadline likely is. */
#define RIG_UVM_LOCK_DRIVERS "580.65.06 to 610.57.03"
#define RIG_BLOCKED_HINT "blocked in the driver (on " RIG_UVM_LOCK_DRIVERS " likely nvidia-uvm's " \
	"devicesLock; see docs/support.md)"
#define RIG_GUARD_SIGNAL_S 0.5
static inline double rig_guard_limit(double timeout)
{
	return timeout > RIG_GUARD_MIN_S ? timeout : RIG_GUARD_MIN_S;
}
/* Pinned host staging ring (RIG_STREAMS x RIG_RING x slot bytes). */
CUresult rig_ring_alloc(struct rig *r, size_t slot);
CUresult rig_cur(struct rig *r, int g);
/* The GPU whose context rig_cur() last made current (-1: none yet): the GPU
 * an error message names. */
extern int rig_cur_gpu;

/* JSON for verify and bench: the GPUs, and which can reach which
 * (cuDeviceCanAccessPeer; null on the diagonal). */
json_object *rig_devices_json(const struct rig *r);
json_object *rig_peer_json(const struct rig *r);

#endif
