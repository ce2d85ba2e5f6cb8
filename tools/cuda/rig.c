// SPDX-License-Identifier: GPL-2.0
/* Per-GPU setup shared by verify and bench. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rig.h"

#define TRY(g, call)                                                        \
	do {                                                                \
		CUresult r_ = (call);                                       \
		if (r_ != CUDA_SUCCESS) {                                   \
			(g)->err = r_;                                      \
			snprintf((g)->errmsg, sizeof((g)->errmsg),          \
				 "GPU %d: %s: %s", (g)->ord, #call,         \
				 cu_errstr(r_));                            \
			return NULL;                                        \
		}                                                           \
	} while (0)

struct setup_arg {
	struct rig *r;
	struct gpu *g;
	int fill;
	char jitlog[2048];
};

static void *setup_gpu(void *p)
{
	struct setup_arg *a = p;
	struct gpu *g = a->g;
	CUresult kr;

	TRY(g, cu.cuDevicePrimaryCtxRetain(&g->ctx, g->dev));
	TRY(g, cu.cuCtxSetCurrent(g->ctx));
	kr = kernels_load(&g->mod, g->fn, a->jitlog, sizeof(a->jitlog));
	g->kernels_ok = kr == CUDA_SUCCESS;
	if (!g->kernels_ok) {
		size_t l = strlen(a->jitlog);
		snprintf(a->jitlog + l, sizeof(a->jitlog) - l, "%sloading kernels: %s",
			 l ? "\n" : "", cu_errstr(kr));
	}
	for (int s = 0; s < RIG_STREAMS; s++) {
		TRY(g, cu.cuStreamCreate(&g->s[s], CU_STREAM_NON_BLOCKING));
		TRY(g, cu.cuEventCreate(&g->ev_aux[s], CU_EVENT_DISABLE_TIMING));
	}
	for (int s = 0; s < 2; s++)
		for (int k = 0; k < RIG_RING; k++) {
			TRY(g, cu.cuEventCreate(&g->ev_fill[s][k], CU_EVENT_DISABLE_TIMING));
			TRY(g, cu.cuEventCreate(&g->ev_free[s][k], CU_EVENT_DISABLE_TIMING));
		}
	TRY(g, cu.cuEventCreate(&g->ev_start, CU_EVENT_DEFAULT));
	TRY(g, cu.cuEventCreate(&g->ev_stop, CU_EVENT_DEFAULT));
	if (a->r->bufsize) {
		TRY(g, cu.cuMemAlloc(&g->src, a->r->bufsize));
		TRY(g, cu.cuMemAlloc(&g->dst, a->r->bufsize));
		if (a->fill && a->r->bufsize >= 4) {
			TRY(g, cu.cuMemsetD32(g->src, 0x5a5a5a5a, a->r->bufsize / 4));
			TRY(g, cu.cuMemsetD32(g->dst, 0xa5a5a5a5, a->r->bufsize / 4));
		}
	}
	TRY(g, cu.cuCtxSynchronize());
	return NULL;
}

int rig_count(int *n, char *err, size_t errlen)
{
	CUresult r = cu.cuDeviceGetCount(n);

	if (r != CUDA_SUCCESS) {
		snprintf(err, errlen, "cuDeviceGetCount: %s", cu_errstr(r));
		return P2P_EXIT_NODEV;
	}
	if (*n < 1) {
		snprintf(err, errlen, "no CUDA GPU found");
		return P2P_EXIT_NODEV;
	}
	if (*n > P2P_MAX_GPUS)
		*n = P2P_MAX_GPUS;
	return 0;
}

int rig_open(struct rig *r, const int *use, size_t bufsize, int fill, char *err, size_t errlen)
{
	pthread_t th[P2P_MAX_GPUS];
	struct setup_arg *args;
	int started[P2P_MAX_GPUS] = { 0 };
	int rc = 0;
	CUresult cr;

	memset(r, 0, sizeof(*r));
	r->bufsize = bufsize;
	rc = rig_count(&r->n, err, errlen);
	if (rc)
		return rc;
	cu.cuDriverGetVersion(&r->driver_version);
	for (int i = 0; i < r->n; i++) {
		struct gpu *g = &r->g[i];

		g->ord = i;
		g->used = use ? use[i] : 1;
		cr = cu.cuDeviceGet(&g->dev, i);
		if (cr != CUDA_SUCCESS) {
			snprintf(err, errlen, "cuDeviceGet(%d): %s", i, cu_errstr(cr));
			return P2P_EXIT_NODEV;
		}
		cu.cuDeviceGetName(g->name, sizeof(g->name), g->dev);
		cu.cuDeviceGetPCIBusId(g->busid, sizeof(g->busid), g->dev);
		cu.cuDeviceGetAttribute(&g->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, g->dev);
		cu.cuDeviceGetAttribute(&g->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, g->dev);
		cu.cuDeviceGetAttribute(&g->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, g->dev);
		if (cu.cuDeviceGetAttribute(&g->managed, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY,
					    g->dev) != CUDA_SUCCESS)
			g->managed = 0;
		if (cu.cuDeviceGetAttribute(&g->concurrent_managed,
					    CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
					    g->dev) != CUDA_SUCCESS)
			g->concurrent_managed = 0;
		if (g->sms < 1)
			g->sms = 1;
	}
	for (int i = 0; i < r->n; i++)
		for (int j = 0; j < r->n; j++) {
			if (i == j)
				continue;
			cr = cu.cuDeviceCanAccessPeer(&r->can_peer[i][j], r->g[i].dev, r->g[j].dev);
			if (cr != CUDA_SUCCESS)
				r->can_peer[i][j] = 0;
		}
	args = calloc(r->n, sizeof(*args));
	if (!args) {
		snprintf(err, errlen, "out of memory");
		return P2P_EXIT_FAIL;
	}
	for (int i = 0; i < r->n; i++) {
		if (!r->g[i].used)
			continue;
		args[i].r = r;
		args[i].g = &r->g[i];
		args[i].fill = fill;
		if (pthread_create(&th[i], NULL, setup_gpu, &args[i]) == 0)
			started[i] = 1;
		else
			setup_gpu(&args[i]);
	}
	for (int i = 0; i < r->n; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
		if (!r->g[i].used)
			continue;
		if (r->g[i].err && !rc) {
			snprintf(err, errlen, "%s", r->g[i].errmsg);
			rc = P2P_EXIT_FAIL;
		}
		if (!r->g[i].kernels_ok && !r->jitlog[0])
			snprintf(r->jitlog, sizeof(r->jitlog), "%s", args[i].jitlog);
	}
	free(args);
	if (rc)
		return rc;
	for (int i = 0; i < r->n; i++) {
		void *h;

		if (!r->g[i].used)
			continue;
		cu.cuCtxSetCurrent(r->g[i].ctx);
		cr = cu.cuMemHostAlloc(&h, 64, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemHostGetDevicePointer(&r->flag_dev, h, 0);
		if (cr != CUDA_SUCCESS) {
			snprintf(err, errlen, "pinned flag: %s", cu_errstr(cr));
			return P2P_EXIT_FAIL;
		}
		r->flag = h;
		memset(h, 0, 64);
		break;
	}
	return 0;
}

int rig_cur_gpu = -1;

CUresult rig_cur(struct rig *r, int g)
{
	rig_cur_gpu = g;
	return cu.cuCtxSetCurrent(r->g[g].ctx);
}

static pthread_mutex_t guard_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	const char *what, *hint;
	int g, a, b, fired;
	double start;
	char label[256];
} guard;

void rig_guard(const char *what, int g, int a, int b)
{
	pthread_mutex_lock(&guard_mu);
	guard.what = what;
	guard.hint = NULL;
	guard.g = g;
	guard.a = a;
	guard.b = b;
	guard.start = now_s();
	pthread_mutex_unlock(&guard_mu);
}

void rig_guard_call(const char *label, const char *hint)
{
	pthread_mutex_lock(&guard_mu);
	snprintf(guard.label, sizeof(guard.label), "%s", label);
	guard.what = guard.label;
	guard.hint = hint;
	guard.g = guard.a = guard.b = -1;
	guard.start = now_s();
	pthread_mutex_unlock(&guard_mu);
}

const char *rig_guard_hint(void)
{
	const char *h;

	pthread_mutex_lock(&guard_mu);
	h = guard.hint;
	pthread_mutex_unlock(&guard_mu);
	return h ? h : "";
}

void rig_unguard(void)
{
	int fired;

	pthread_mutex_lock(&guard_mu);
	guard.what = NULL;
	fired = guard.fired;
	pthread_mutex_unlock(&guard_mu);
	/* the call returned after the watchdog claimed it: the watchdog is
	 * printing the hang and ends the process; nothing more from here */
	while (fired)
		pause();
}

int rig_guard_expired(double limit, const char **what, int *g, int *a, int *b, double *t)
{
	int on;

	pthread_mutex_lock(&guard_mu);
	on = guard.what && !guard.fired && (*t = now_s() - guard.start) > limit;
	if (on) {
		guard.fired = 1;
		*what = guard.what;
		*g = guard.g;
		*a = guard.a;
		*b = guard.b;
	}
	pthread_mutex_unlock(&guard_mu);
	return on;
}

CUresult rig_peer(struct rig *r, int a, int b, int on)
{
	CUresult cr;

	if (r->peer_on[a][b] == on)
		return CUDA_SUCCESS;
	cr = rig_cur(r, a);
	if (cr != CUDA_SUCCESS)
		return cr;
	rig_guard(on ? "cuCtxEnablePeerAccess" : "cuCtxDisablePeerAccess", a, a, b);
	cr = on ? cu.cuCtxEnablePeerAccess(r->g[b].ctx, 0) : cu.cuCtxDisablePeerAccess(r->g[b].ctx);
	rig_unguard();
	if (cr == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED || cr == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)
		cr = CUDA_SUCCESS;
	if (cr == CUDA_SUCCESS)
		r->peer_on[a][b] = on;
	return cr;
}

CUresult rig_ring_alloc(struct rig *r, size_t slot)
{
	CUresult cr = CUDA_SUCCESS;

	if (r->ring[0] && r->ring_slot >= slot)
		return CUDA_SUCCESS;
	for (int d = 0; d < 2; d++) {
		if (r->ring[d])
			cu.cuMemFreeHost(r->ring[d]);
		r->ring[d] = NULL;
	}
	for (int i = 0; i < r->n; i++)
		if (r->g[i].used) {
			rig_cur(r, i);
			break;
		}
	for (int d = 0; d < 2 && cr == CUDA_SUCCESS; d++)
		cr = cu.cuMemHostAlloc(&r->ring[d], slot * RIG_RING, CU_MEMHOSTALLOC_PORTABLE);
	r->ring_slot = cr == CUDA_SUCCESS ? slot : 0;
	return cr;
}

void rig_close(struct rig *r)
{
	if (!cu.cuCtxSetCurrent)
		return;
	for (int i = 0; i < r->n; i++)
		for (int j = 0; j < r->n; j++)
			if (r->peer_on[i][j])
				rig_peer(r, i, j, 0);
	for (int d = 0; d < 2; d++)
		if (r->ring[d])
			cu.cuMemFreeHost(r->ring[d]);
	if (r->flag)
		cu.cuMemFreeHost((void *)r->flag);
	r->flag = NULL;
	for (int i = 0; i < r->n; i++) {
		struct gpu *g = &r->g[i];

		if (!g->used || !g->ctx)
			continue;
		cu.cuCtxSetCurrent(g->ctx);
		cu.cuCtxSynchronize();
		if (g->src)
			cu.cuMemFree(g->src);
		if (g->dst)
			cu.cuMemFree(g->dst);
		for (int s = 0; s < RIG_STREAMS; s++) {
			if (g->s[s])
				cu.cuStreamDestroy(g->s[s]);
			if (g->ev_aux[s])
				cu.cuEventDestroy(g->ev_aux[s]);
		}
		for (int s = 0; s < 2; s++)
			for (int k = 0; k < RIG_RING; k++) {
				if (g->ev_fill[s][k])
					cu.cuEventDestroy(g->ev_fill[s][k]);
				if (g->ev_free[s][k])
					cu.cuEventDestroy(g->ev_free[s][k]);
			}
		if (g->ev_start)
			cu.cuEventDestroy(g->ev_start);
		if (g->ev_stop)
			cu.cuEventDestroy(g->ev_stop);
		if (g->mod)
			cu.cuModuleUnload(g->mod);
		cu.cuCtxSetCurrent(NULL);
		cu.cuDevicePrimaryCtxRelease(g->dev);
		g->ctx = NULL;
	}
}

/* The GPUs, for the JSON of verify and bench. */
json_object *rig_devices_json(const struct rig *r)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < r->n; i++) {
		json_object *d = json_object_new_object();
		char cc[16];

		snprintf(cc, sizeof(cc), "%d.%d", r->g[i].cc_major, r->g[i].cc_minor);
		json_object_object_add(d, "index", json_object_new_int(i));
		json_object_object_add(d, "name", json_object_new_string(r->g[i].name));
		json_object_object_add(d, "pci_bus_id", json_object_new_string(r->g[i].busid));
		json_object_object_add(d, "sm_count", json_object_new_int(r->g[i].sms));
		json_object_object_add(d, "compute_capability", json_object_new_string(cc));
		json_object_object_add(d, "measured", json_object_new_boolean(r->g[i].used));
		json_object_array_add(a, d);
	}
	return a;
}

/* Which GPU can reach which (cuDeviceCanAccessPeer), null on the diagonal. */
json_object *rig_peer_json(const struct rig *r)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < r->n; i++) {
		json_object *row = json_object_new_array();

		for (int j = 0; j < r->n; j++)
			json_object_array_add(row, i == j ? NULL :
					      json_object_new_boolean(r->can_peer[i][j]));
		json_object_array_add(a, row);
	}
	return a;
}

_Noreturn void rig_exit(FILE *out, int sig)
{
	int null;

	fflush(out);
	null = open("/dev/null", O_WRONLY);
	if (null >= 0) {
		dup2(null, 1);
		dup2(null, 2);
	}
	_exit(sig ? 128 + sig : P2P_EXIT_FAIL);
}
