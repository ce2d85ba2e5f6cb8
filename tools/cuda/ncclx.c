// SPDX-License-Identifier: GPL-2.0
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ncclx.h"

struct ncclx nx;

static int try_load(const char *path)
{
	nx.h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!nx.h)
		return -1;
	snprintf(nx.path, sizeof(nx.path), "%s", path);
	return 0;
}

/* The places pip, virtualenvs and conda put libnccl.so.2. */
static int search(char *tried, size_t len)
{
	const char *home = getenv("HOME"), *venv = getenv("VIRTUAL_ENV"), *conda = getenv("CONDA_PREFIX");
	char pat[PATH_MAX];
	const char *pats[8];
	char bufs[8][PATH_MAX];
	int np = 0;

	if (venv && *venv) {
		snprintf(bufs[np], PATH_MAX, "%s/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2", venv);
		pats[np] = bufs[np];
		np++;
	}
	if (conda && *conda) {
		snprintf(bufs[np], PATH_MAX, "%s/lib/libnccl.so.2", conda);
		pats[np] = bufs[np];
		np++;
		snprintf(bufs[np], PATH_MAX, "%s/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2", conda);
		pats[np] = bufs[np];
		np++;
	}
	if (home && *home) {
		snprintf(bufs[np], PATH_MAX, "%s/.local/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2", home);
		pats[np] = bufs[np];
		np++;
	}
	pats[np++] = "/opt/*/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2";
	pats[np++] = "/usr/local/lib/python3*/*-packages/nvidia/nccl/lib/libnccl.so.2";
	pats[np++] = "/usr/lib/python3*/*-packages/nvidia/nccl/lib/libnccl.so.2";
	for (int k = 0; k < np; k++) {
		glob_t g;

		snprintf(pat, sizeof(pat), "%s", pats[k]);
		if (strlen(tried) + strlen(pat) + 3 < len)
			snprintf(tried + strlen(tried), len - strlen(tried), ", %s", pat);
		if (glob(pat, 0, NULL, &g))
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++)
			if (!try_load(g.gl_pathv[i])) {
				globfree(&g);
				return 0;
			}
		globfree(&g);
	}
	return -1;
}

int ncclx_open(char *why, size_t len)
{
	const char *env = getenv("P2PCTL_LIBNCCL");
	char tried[1024] = "";

	if (nx.h)
		return 0;
	if (env && *env) {
		if (try_load(env)) {
			snprintf(why, len, "cannot load %s (P2PCTL_LIBNCCL): %s", env, dlerror());
			return -1;
		}
	} else if (search(tried, sizeof(tried)) && try_load("libnccl.so.2")) {
		/* the Python environment's copy first: it is the one PyTorch and vLLM load */
		snprintf(why, len, "no libnccl.so.2 found; looked at %s and the dynamic linker's path "
			 "(%.200s)", tried + 2, dlerror());
		return -1;
	}
	*(void **)&nx.GetVersion = dlsym(nx.h, "ncclGetVersion");
	*(void **)&nx.CommInitAll = dlsym(nx.h, "ncclCommInitAll");
	*(void **)&nx.GetUniqueId = dlsym(nx.h, "ncclGetUniqueId");
	*(void **)&nx.CommInitRank = dlsym(nx.h, "ncclCommInitRank");
	*(void **)&nx.CommDestroy = dlsym(nx.h, "ncclCommDestroy");
	*(void **)&nx.CommAbort = dlsym(nx.h, "ncclCommAbort");
	*(void **)&nx.AllReduce = dlsym(nx.h, "ncclAllReduce");
	*(void **)&nx.AllGather = dlsym(nx.h, "ncclAllGather");
	*(void **)&nx.GroupStart = dlsym(nx.h, "ncclGroupStart");
	*(void **)&nx.GroupEnd = dlsym(nx.h, "ncclGroupEnd");
	*(void **)&nx.GetErrorString = dlsym(nx.h, "ncclGetErrorString");
	if (!nx.GetVersion || !nx.CommInitAll || !nx.CommDestroy || !nx.CommAbort || !nx.AllReduce ||
	    !nx.GroupStart || !nx.GroupEnd || !nx.GetErrorString) {
		snprintf(why, len, "%s lacks an entry point p2pctl needs (ncclCommInitAll, "
			 "ncclAllReduce, ncclCommAbort, ...)", nx.path);
		dlclose(nx.h);
		memset(&nx, 0, sizeof(nx));
		return -1;
	}
	if (nx.GetVersion(&nx.version))
		nx.version = 0;
	return 0;
}

void ncclx_close(void)
{
	if (nx.h)
		dlclose(nx.h);
	memset(&nx, 0, sizeof(nx));
}

struct initjob {
	ncclComm_t *comm;
	int n, rc, done;
	const int *devs;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void *init_thread(void *p)
{
	struct initjob *j = p;
	int rc = nx.CommInitAll(j->comm, j->n, j->devs);

	pthread_mutex_lock(&j->mu);
	j->rc = rc;
	j->done = 1;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

int ncclx_init_all(ncclComm_t *comm, int n, const int *devs, double timeout, char *why, size_t len)
{
	/* Left behind on a hang, so it must outlive this call. */
	static struct initjob j;
	pthread_t th;
	struct timespec ts;
	int done;

	memset(&j, 0, sizeof(j));
	j.comm = comm;
	j.n = n;
	j.devs = devs;
	pthread_mutex_init(&j.mu, NULL);
	pthread_cond_init(&j.cv, NULL);
	if (pthread_create(&th, NULL, init_thread, &j)) {
		snprintf(why, len, "cannot start a thread for ncclCommInitAll");
		return 1;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)timeout;
	ts.tv_nsec += (long)((timeout - (time_t)timeout) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&j.mu);
	while (!j.done)
		if (pthread_cond_timedwait(&j.cv, &j.mu, &ts) == ETIMEDOUT)
			break;
	done = j.done;
	pthread_mutex_unlock(&j.mu);
	if (!done) {
		pthread_detach(th);
		snprintf(why, len, "ncclCommInitAll over %d GPUs did not return within %.3g s: NCCL's "
			 "init hangs (often peer access that hangs on first use; try NCCL_P2P_DISABLE=1 "
			 "to see whether P2P is the cause)", n, timeout);
		return 2;
	}
	pthread_join(th, NULL);
	if (j.rc) {
		snprintf(why, len, "ncclCommInitAll: %s", nx.GetErrorString(j.rc));
		return 1;
	}
	return 0;
}

double ncclx_busbw(int coll, double bytes, double sec, int n, double *algbw)
{
	double a = sec > 0 ? bytes / sec / 1e9 : 0;

	if (algbw)
		*algbw = a;
	if (n < 2)
		return a;
	return coll == NCCLX_ALLREDUCE ? a * 2.0 * (n - 1) / n : a * (double)(n - 1) / n;
}
