/* SPDX-License-Identifier: GPL-2.0 */
/* Copy plans: a list of driver calls on a few streams, timed as one run. */
#ifndef P2P_CUDA_ENGINE_H
#define P2P_CUDA_ENGINE_H

#include "rig.h"

enum method {
	M_CE,		/* cuMemcpyPeerAsync (DtoD on one GPU) on the source GPU's stream */
	M_CE_PULL,	/* cuMemcpyPeerAsync on the destination GPU's stream */
	M_CE_SPLIT,	/* half pushed by the source's, half pulled by the destination's copy engine */
	M_SM_WRITE,	/* p2p_write kernel on the source GPU (on one GPU: the local copy kernel) */
	M_SM_READ,	/* p2p_read kernel on the destination GPU */
	M_SM_SPLIT,	/* half written by the source's SMs, half read by the destination's */
	M_STAGED,	/* P2P off: our own pipeline through pinned host memory */
	M_CE_MULTI,	/* two cuMemcpyPeerAsync halves on two streams of the source GPU */
	M_COUNT
};
extern const char *const method_names[M_COUNT];
int method_parse(const char *s);	/* -1 unknown; "auto" is handled by callers */

struct sm_cfg {
	int threads;		/* per block */
	int blocks_per_sm;
};

enum { OP_PEER, OP_D2D, OP_KERN, OP_D2H, OP_H2D, OP_REC, OP_WAIT };

struct op {
	int kind, gpu, s, kern;
	CUdeviceptr dst, src;
	int dg, sg;
	void *host;
	size_t n;
	CUevent ev;
};

struct plan {
	struct op *op;
	int n, cap;
	int sg[2 * RIG_STREAMS * 2], ss[2 * RIG_STREAMS * 2], nstreams;
	int ring_used[2][RIG_RING];
	int ring_next[2];
	int oom;
};

void plan_reset(struct plan *p);
void plan_free(struct plan *p);
/*
 * Append a copy of n bytes from (GPU a, src) to (GPU b, dst) done by method m
 * on stream slot d (0 or 1) of the GPU(s) that drive it. 0, or -1 when m cannot do it
 * (SM methods without loaded kernels; staged without a ring).
 */
int plan_copy(struct rig *r, struct plan *p, int m, int a, int b, CUdeviceptr src,
	      CUdeviceptr dst, size_t n, int d);

struct run_result {
	double gpu_ms;		/* start to stop event */
	double cpu_us;		/* host time spent enqueueing the plan's operations */
	int timed_out;		/* the blocking kernel gave up before release */
	int hung;		/* not done by the deadline, or a signal came (dl_stop):
				 * the streams may still be busy */
};

/*
 * Execute p once: block the first stream with the delay kernel (when
 * use_delay and kernels are loaded), record start, make the other streams
 * wait for it, enqueue everything, join the streams, record stop, release,
 * and wait for stop until timeout s after the last enqueue (deadline.h):
 * CUDA_ERROR_NOT_READY with out->hung set past it or on a signal.
 */
CUresult plan_run(struct rig *r, const struct plan *p, const struct sm_cfg *sm, int use_delay,
		  double timeout, struct run_result *out);

/* Launch geometry for n bytes on GPU g. */
void sm_grid(const struct rig *r, int g, const struct sm_cfg *sm, size_t n,
	     unsigned *blocks, unsigned *threads);
/* Launch kernel k on (g, stream s) copying n bytes src -> dst. */
CUresult sm_launch(struct rig *r, int g, CUstream s, int k, const struct sm_cfg *sm,
		   CUdeviceptr dst, CUdeviceptr src, size_t n);

#endif
