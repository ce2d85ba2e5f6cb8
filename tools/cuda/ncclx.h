/* SPDX-License-Identifier: GPL-2.0 */
/* libnccl.so.2 as users have it (system, pip wheel, virtualenv, conda), with deadlines. */
#ifndef P2P_CUDA_NCCLX_H
#define P2P_CUDA_NCCLX_H

#include <limits.h>
#include <stddef.h>

typedef struct ncclComm *ncclComm_t;
/* NCCL's ncclUniqueId: 128 opaque bytes, passed by value. */
typedef struct { char internal[128]; } ncclxUniqueId;

/* NCCL's ncclInt32 and ncclFloat32, the only types p2pctl uses: both of
 * NCCLX_ELEM bytes, the one definition of an element's size in verify's
 * nccl tests and bench --nccl. */
#define NCCLX_INT32 2
#define NCCLX_FLOAT32 7
#define NCCLX_ELEM 4
#define NCCLX_SUM 0

struct ncclx {
	void *h;
	char path[PATH_MAX];	/* the file that was loaded */
	int version;
	int (*GetVersion)(int *);
	int (*CommInitAll)(ncclComm_t *, int, const int *);
	/* one rank per process, as PyTorch and vLLM run NCCL (may be NULL) */
	int (*GetUniqueId)(ncclxUniqueId *);
	int (*CommInitRank)(ncclComm_t *, int, ncclxUniqueId, int);
	int (*CommDestroy)(ncclComm_t);
	int (*CommAbort)(ncclComm_t);
	int (*AllReduce)(const void *, void *, size_t, int, int, ncclComm_t, void *);
	int (*AllGather)(const void *, void *, size_t, int, ncclComm_t, void *);	/* may be NULL */
	int (*GroupStart)(void);
	int (*GroupEnd)(void);
	const char *(*GetErrorString)(int);
};

extern struct ncclx nx;

/*
 * Load libnccl.so.2: $P2PCTL_LIBNCCL if set; else the copy a Python
 * environment holds, as PyTorch and vLLM load it (site-packages/nvidia/nccl/lib
 * of $VIRTUAL_ENV, $CONDA_PREFIX (or its lib/), ~/.local, /opt/<x>/.venv,
 * /usr{,/local}/lib/python3.*); else the dynamic linker's. 0, or -1 with
 * why (every place looked at).
 */
int ncclx_open(char *why, size_t len);
void ncclx_close(void);

/*
 * ncclCommInitAll with a deadline: it runs in its own thread. 0 done,
 * 1 NCCL returned an error (why), 2 it did not return within timeout s
 * (why; the thread is left behind, the caller must not touch NCCL again).
 */
int ncclx_init_all(ncclComm_t *comm, int n, const int *devs, double timeout, char *why, size_t len);

enum { NCCLX_ALLREDUCE, NCCLX_ALLGATHER };
/*
 * nccl-tests' bus bandwidth (GB/s, 1e9 bytes) of one collective of bytes
 * (all-reduce: the buffer; all-gather: the whole gathered buffer) over n
 * ranks taking sec: algbw = bytes / sec; all-reduce busbw = algbw *
 * 2(n-1)/n, all-gather algbw * (n-1)/n.
 */
double ncclx_busbw(int coll, double bytes, double sec, int n, double *algbw);

#endif
