/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The slice of the CUDA driver API that p2pctl verify/bench use, loaded at
 * run time with dlopen("libcuda.so.1"): no CUDA toolkit is needed to build.
 * Types and constants are those of cuda.h (ABI-stable).
 */
#ifndef P2P_CUDA_CU_H
#define P2P_CUDA_CU_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct { char reserved[64]; } CUipcMemHandle;
typedef unsigned long long CUmemGenericAllocationHandle;

/* Virtual memory management (cuMemCreate and friends, CUDA 10.2+). */
typedef struct { int type, id; } CUmemLocation;	/* CU_MEM_LOCATION_TYPE_DEVICE, ordinal */
typedef struct {
	int type;			/* CU_MEM_ALLOCATION_TYPE_PINNED */
	int requestedHandleTypes;	/* CUmemAllocationHandleType, 0: none */
	CUmemLocation location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType, gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;
typedef struct { CUmemLocation location; int flags; } CUmemAccessDesc;
#define CU_MEM_ALLOCATION_TYPE_PINNED 0x1
#define CU_MEM_LOCATION_TYPE_DEVICE 0x1
#define CU_MEM_ACCESS_FLAGS_PROT_READWRITE 0x3
#define CU_MEM_ALLOC_GRANULARITY_MINIMUM 0x0

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_MAP_FAILED = 205,
	CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
	CUDA_ERROR_INVALID_PTX = 218,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_NOT_READY = 600,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
	CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
	CUDA_ERROR_ASSERT = 710,
	CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
	CUDA_ERROR_LAUNCH_FAILED = 719,
	CUDA_ERROR_UNKNOWN = 999,
};

enum {
	CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
	CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
	CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
	CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
};

/* CUmem_advise (cuMemAdvise, the CUDA 8 entry point taking a CUdevice). */
enum {
	CU_MEM_ADVISE_SET_PREFERRED_LOCATION = 3,
	CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION = 4,
	CU_MEM_ADVISE_SET_ACCESSED_BY = 5,
	CU_MEM_ADVISE_UNSET_ACCESSED_BY = 6,
};

/* CUmem_range_attribute (cuMemRangeGetAttribute). */
enum {
	CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION = 2,
	CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY = 3,
	CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION = 4,
};

/* CUdevice_P2PAttribute, CUpointer_attribute and its access flags. */
#define CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED 0x02
#define CU_POINTER_ATTRIBUTE_ACCESS_FLAGS 16
#define CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE 0x0
#define CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ 0x1
#define CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE 0x3
#define CU_DEVICE_INVALID (-2)

#define CU_MEM_ATTACH_GLOBAL 0x1
#define CU_DEVICE_CPU (-1)

enum {
	CU_JIT_INFO_LOG_BUFFER = 3,
	CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
	CU_JIT_ERROR_LOG_BUFFER = 5,
	CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

#define CU_STREAM_NON_BLOCKING 0x1
#define CU_STREAM_CAPTURE_MODE_THREAD_LOCAL 1
#define CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS 0x1
#define CU_EVENT_DEFAULT 0x0
#define CU_EVENT_DISABLE_TIMING 0x2
#define CU_MEMHOSTALLOC_PORTABLE 0x1
#define CU_MEMHOSTALLOC_DEVICEMAP 0x2

/* X(return-less name, symbol, parameter list) */
#define CU_API_LIST(X)                                                          \
	X(cuInit, "cuInit", (unsigned int))                                         \
	X(cuDriverGetVersion, "cuDriverGetVersion", (int *))                        \
	X(cuGetErrorString, "cuGetErrorString", (CUresult, const char **))          \
	X(cuGetErrorName, "cuGetErrorName", (CUresult, const char **))              \
	X(cuDeviceGetCount, "cuDeviceGetCount", (int *))                            \
	X(cuDeviceGet, "cuDeviceGet", (CUdevice *, int))                            \
	X(cuDeviceGetName, "cuDeviceGetName", (char *, int, CUdevice))              \
	X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *, int, CUdevice))     \
	X(cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", (char *, int, CUdevice))      \
	X(cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer", (int *, CUdevice, CUdevice)) \
	X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *, CUdevice)) \
	X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice))    \
	X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext))                          \
	X(cuCtxSynchronize, "cuCtxSynchronize", (void))                             \
	X(cuCtxEnablePeerAccess, "cuCtxEnablePeerAccess", (CUcontext, unsigned int)) \
	X(cuCtxDisablePeerAccess, "cuCtxDisablePeerAccess", (CUcontext))           \
	X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr *, size_t))                     \
	X(cuMemFree, "cuMemFree_v2", (CUdeviceptr))                                 \
	X(cuMemHostAlloc, "cuMemHostAlloc", (void **, size_t, unsigned int))        \
	X(cuMemFreeHost, "cuMemFreeHost", (void *))                                 \
	X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", (CUdeviceptr *, void *, unsigned int)) \
	X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr, const void *, size_t))    \
	X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", (void *, CUdeviceptr, size_t))          \
	X(cuMemcpyPeerAsync, "cuMemcpyPeerAsync", (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream)) \
	X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
	X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", (void *, CUdeviceptr, size_t, CUstream)) \
	X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", (CUdeviceptr, const void *, size_t, CUstream)) \
	X(cuMemsetD32, "cuMemsetD32_v2", (CUdeviceptr, unsigned int, size_t))       \
	X(cuStreamCreate, "cuStreamCreate", (CUstream *, unsigned int))             \
	X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream))                        \
	X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream))                   \
	X(cuStreamQuery, "cuStreamQuery", (CUstream))                               \
	X(cuEventQuery, "cuEventQuery", (CUevent))                                  \
	X(cuMemsetD32Async, "cuMemsetD32Async", (CUdeviceptr, unsigned int, size_t, CUstream)) \
	X(cuPointerGetAttribute, "cuPointerGetAttribute", (void *, int, CUdeviceptr)) \
	X(cuStreamWaitEvent, "cuStreamWaitEvent", (CUstream, CUevent, unsigned int)) \
	X(cuEventCreate, "cuEventCreate", (CUevent *, unsigned int))                \
	X(cuEventDestroy, "cuEventDestroy_v2", (CUevent))                           \
	X(cuEventRecord, "cuEventRecord", (CUevent, CUstream))                      \
	X(cuEventSynchronize, "cuEventSynchronize", (CUevent))                      \
	X(cuEventElapsedTime, "cuEventElapsedTime", (float *, CUevent, CUevent))    \
	X(cuModuleLoadDataEx, "cuModuleLoadDataEx", (CUmodule *, const void *, unsigned int, int *, void **)) \
	X(cuModuleUnload, "cuModuleUnload", (CUmodule))                             \
	X(cuModuleGetFunction, "cuModuleGetFunction", (CUfunction *, CUmodule, const char *)) \
	X(cuLaunchKernel, "cuLaunchKernel", (CUfunction, unsigned int, unsigned int, unsigned int, \
		unsigned int, unsigned int, unsigned int, unsigned int, CUstream, void **, void **))

/*
 * Entry points that verify's managed-memory test needs and the rest of
 * p2pctl does not: a driver without them still loads, their pointers stay
 * NULL and that test is skipped with the missing name. cuMemAdvise and
 * cuMemPrefetchAsync are the CUDA 8 ABI (a CUdevice, not a CUmemLocation);
 * libcuda keeps exporting them for old binaries.
 */
#define CU_API_OPT_LIST(X)                                                      \
	X(cuMemAllocManaged, "cuMemAllocManaged", (CUdeviceptr *, size_t, unsigned int)) \
	X(cuMemAdvise, "cuMemAdvise", (CUdeviceptr, size_t, int, CUdevice))         \
	X(cuMemPrefetchAsync, "cuMemPrefetchAsync", (CUdeviceptr, size_t, CUdevice, CUstream)) \
	X(cuMemGetInfo, "cuMemGetInfo_v2", (size_t *, size_t *))

/*
 * Entry points verify uses to prove which path a test took (without them
 * the test says "path not proven"), to capture and replay CUDA graphs and
 * to share buffers between processes, and the cuMem (VMM) calls (without
 * them the graph, ipc or vmm test is skipped); cu_missing_optional()
 * ignores them.
 */
#define CU_API_PROOF_LIST(X)                                                    \
	X(cuDeviceGetP2PAttribute, "cuDeviceGetP2PAttribute", (int *, int, CUdevice, CUdevice)) \
	X(cuMemRangeGetAttribute, "cuMemRangeGetAttribute", (void *, size_t, int, CUdeviceptr, size_t)) \
	X(cuStreamBeginCapture, "cuStreamBeginCapture_v2", (CUstream, int))       \
	X(cuStreamEndCapture, "cuStreamEndCapture", (CUstream, CUgraph *))          \
	X(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", (CUgraphExec *, CUgraph, \
		unsigned long long))                                                \
	X(cuGraphLaunch, "cuGraphLaunch", (CUgraphExec, CUstream))                  \
	X(cuGraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec))                  \
	X(cuGraphDestroy, "cuGraphDestroy", (CUgraph))                              \
	X(cuIpcGetMemHandle, "cuIpcGetMemHandle", (CUipcMemHandle *, CUdeviceptr))  \
	X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2", (CUdeviceptr *, CUipcMemHandle, unsigned int)) \
	X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", (CUdeviceptr))                \
	X(cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity", (size_t *, \
		const CUmemAllocationProp *, int))                                  \
	X(cuMemCreate, "cuMemCreate", (CUmemGenericAllocationHandle *, size_t,      \
		const CUmemAllocationProp *, unsigned long long))                   \
	X(cuMemRelease, "cuMemRelease", (CUmemGenericAllocationHandle))             \
	X(cuMemAddressReserve, "cuMemAddressReserve", (CUdeviceptr *, size_t, size_t, \
		CUdeviceptr, unsigned long long))                                   \
	X(cuMemAddressFree, "cuMemAddressFree", (CUdeviceptr, size_t))              \
	X(cuMemMap, "cuMemMap", (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, \
		unsigned long long))                                                \
	X(cuMemUnmap, "cuMemUnmap", (CUdeviceptr, size_t))                          \
	X(cuMemSetAccess, "cuMemSetAccess", (CUdeviceptr, size_t, const CUmemAccessDesc *, size_t))

struct cu_api {
#define CU_X_FIELD(name, sym, args) CUresult (*name) args;
	CU_API_LIST(CU_X_FIELD)
	CU_API_OPT_LIST(CU_X_FIELD)
	CU_API_PROOF_LIST(CU_X_FIELD)
#undef CU_X_FIELD
};

/*
 * NULL when every optional entry point was found, else the symbol name of
 * the first one missing (after a successful cu_open()).
 */
const char *cu_missing_optional(void);

extern struct cu_api cu;

/* Exit codes shared by verify and bench (documented in docs/p2pctl-cuda.md). */
enum {
	P2P_EXIT_OK = 0,
	P2P_EXIT_FAIL = 1,	/* a pair/method failed, or a CUDA error mid-run */
	P2P_EXIT_USAGE = 2,	/* bad command line */
	P2P_EXIT_NODEV = 3,	/* no CUDA driver, cuInit failed, or too few GPUs */
};

/*
 * Load libcuda (the path in $P2PCTL_LIBCUDA, else "libcuda.so.1" through the
 * usual library search, LD_LIBRARY_PATH included) and cuInit(0) it.
 * Returns 0, or P2P_EXIT_NODEV with a message in err.
 */
int cu_open(char *err, size_t errlen);
void cu_close(void);
/* "CUDA_ERROR_X (text)" for r; static storage per thread. */
const char *cu_errstr(CUresult r);

#endif
