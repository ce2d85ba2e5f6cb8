// SPDX-License-Identifier: GPL-2.0
/* Run-time loader for the CUDA driver API (see cu.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

struct cu_api cu;
static void *cu_handle;
static const char *cu_opt_missing;

int cu_open(char *err, size_t errlen)
{
	const char *path = getenv("P2PCTL_LIBCUDA");
	CUresult r;

	if (!path || !*path)
		path = "libcuda.so.1";
	if (cu_handle)
		cu_close();
	cu_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!cu_handle) {
		snprintf(err, errlen,
			 "no CUDA driver: cannot load %s (%s); is the NVIDIA driver installed?",
			 path, dlerror());
		return P2P_EXIT_NODEV;
	}
#define CU_X_LOAD(name, sym, args)                                           \
	*(void **)&cu.name = dlsym(cu_handle, sym);                              \
	if (!cu.name) {                                                          \
		snprintf(err, errlen, "CUDA driver %s lacks %s: driver too old?", \
			 path, sym);                                             \
		cu_close();                                                      \
		return P2P_EXIT_NODEV;                                           \
	}
	CU_API_LIST(CU_X_LOAD)
#undef CU_X_LOAD
	cu_opt_missing = NULL;
#define CU_X_OPT(name, sym, args)                                            \
	*(void **)&cu.name = dlsym(cu_handle, sym);                              \
	if (!cu.name && !cu_opt_missing)                                         \
		cu_opt_missing = sym;
	CU_API_OPT_LIST(CU_X_OPT)
#undef CU_X_OPT
#define CU_X_PROOF(name, sym, args) *(void **)&cu.name = dlsym(cu_handle, sym);
	CU_API_PROOF_LIST(CU_X_PROOF)
#undef CU_X_PROOF
	r = cu.cuInit(0);
	if (r != CUDA_SUCCESS) {
		snprintf(err, errlen, "cuInit failed: %s%s", cu_errstr(r),
			 r == CUDA_ERROR_NO_DEVICE ? ": no NVIDIA GPU visible" : "");
		cu_close();
		return P2P_EXIT_NODEV;
	}
	return 0;
}

void cu_close(void)
{
	if (cu_handle)
		dlclose(cu_handle);
	cu_handle = NULL;
	cu_opt_missing = NULL;
	memset(&cu, 0, sizeof(cu));
}

const char *cu_missing_optional(void)
{
	return cu_opt_missing;
}

const char *cu_errstr(CUresult r)
{
	static _Thread_local char buf[256];
	const char *name = NULL, *text = NULL;

	if (cu.cuGetErrorName)
		cu.cuGetErrorName(r, &name);
	if (cu.cuGetErrorString)
		cu.cuGetErrorString(r, &text);
	snprintf(buf, sizeof(buf), "%s (%s)", name ? name : "CUDA_ERROR_?",
		 text ? text : "unknown error");
	if (!name) {
		char *p = strstr(buf, "?");
		if (p)
			snprintf(buf, sizeof(buf), "CUDA error %d (%s)", r,
				 text ? text : "unknown error");
	}
	return buf;
}
