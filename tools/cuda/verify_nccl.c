// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's nccl test: an all-reduce through libnccl.so.2 with every
 * element checked, and the transport NCCL reports per channel.
 */

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include "verify.h"
#include "ncclx.h"

/*
 * nccl: when libnccl.so.2 can be opened (dlopen, as libcuda is; the path in
 * $P2PCTL_LIBNCCL overrides), int32 sum all-reduces over each selected pair
 * and over all the GPUs, with known data, every element checked: the calls
 * of nccl_call() (sizes from 8 B to 64 MiB capped by --size, out of place
 * and in place, some counts not a power of two), all on one communicator
 * per GPU, as a framework makes its calls, each with a new seed, so that a
 * fault from a communicator's second call on, or a result left from an
 * earlier call, shows. One thread drives all GPUs (ncclCommInitAll + a group
 * call); every wait has the deadline, NCCL's blocking host calls
 * (ncclGroupEnd, ncclCommDestroy) the watchdog's (verify.c), and a hung
 * all-reduce aborts the communicators.
 */
#define nccl nx
#define NCCL_MAX_BYTES (64ULL << 20)

static const char nccl_hint[] = "NCCL hangs (try NCCL_P2P_DISABLE=1 to see whether its P2P transport "
				"is the cause)";

int nccl_open(char *why, size_t len)
{
	return ncclx_open(why, len);
}

int32_t nccl_elem(uint64_t seed, int g, size_t k)
{
	return (int32_t)(splitmix64(seed + ((uint64_t)g << 48) + k) & 0xffff) - 0x8000;
}

/*
 * The k-th call (from 0) of the nccl tests up to max bytes: per size b = 8,
 * 64, 512, ... (and max itself, a multiple of 4): out of place, in place,
 * out of place again (the same buffers, new data), in place again; after
 * each size but the last, 1.5 b (a count that is not a power of two) out of
 * place and in place. 0 with *bytes and *inplace, -1 past the last call.
 */
int nccl_call(uint64_t max, int k, uint64_t *bytes, int *inplace)
{
	max -= max % NCCLX_ELEM;
	for (uint64_t b = 8; b <= max; b = b * 8 > max && b != max ? max : b * 8) {
		uint64_t odd = b / 2 * 3;

		if (k < 4) {
			*bytes = b;
			*inplace = k & 1;
			return 0;
		}
		k -= 4;
		if (b == max || odd > max)
			continue;
		odd -= odd % NCCLX_ELEM;
		if (k < 2) {
			*bytes = odd;
			*inplace = k;
			return 0;
		}
		k -= 2;
	}
	return -1;
}

/* "over GPUs 0,1" */
static void nccl_gpus(char *buf, size_t len, const int *gs, int ng)
{
	size_t l = (size_t)snprintf(buf, len, "GPUs ");

	for (int k = 0; k < ng && l < len; k++)
		l += (size_t)snprintf(buf + l, len - l, "%s%d", k ? "," : "", gs[k]);
}

/* End the communicators: ncclCommDestroy (it waits for their work), or
 * ncclCommAbort after a hang or a wait a signal cut short (v->cut: the work
 * may never end); both under the watchdog. */
static void nccl_end(struct vstate *v, struct vtest *t, ncclComm_t *comm, const int *gs, int ng)
{
	int stuck = v->hung || v->cut;
	char label[256], gl[80];

	nccl_gpus(gl, sizeof(gl), gs, ng);
	snprintf(label, sizeof(label), "nccl %s: %s (%s)", t->label, stuck ? "ncclCommAbort" :
		 "ncclCommDestroy", gl);
	rig_guard_call(label, nccl_hint);
	for (int k = 0; k < ng; k++)
		if (comm[k])
			(stuck ? nccl.CommAbort : nccl.CommDestroy)(comm[k]);
	rig_unguard();
}

/*
 * One all-reduce of count int32 over the ng GPUs in gs on comm: the input
 * in each GPU's src buffer (in place: its dst), the result in its dst;
 * every GPU's result checked. 0, or -1 with t failed (and v->hung on a hang).
 */
static int nccl_once(struct vstate *v, struct vtest *t, ncclComm_t *comm, const int *gs, int ng,
		     size_t count, int inplace)
{
	struct rig *r = &v->r;
	int32_t *host = (int32_t *)v->img, *got = (int32_t *)v->got, *want = (int32_t *)v->want;
	uint64_t seed = v->seed;
	size_t bytes = count * NCCLX_ELEM;
	char label[256], gl[80];
	int nr;

	v->seed += 0x100000000ULL;
	for (size_t e = 0; e < count; e++) {
		int64_t s = 0;

		for (int k = 0; k < ng; k++)
			s += nccl_elem(seed, gs[k], e);
		want[e] = (int32_t)s;
	}
	for (int k = 0; k < ng; k++) {
		int g = gs[k];
		CUdeviceptr in = inplace ? r->g[g].dst : r->g[g].src;

		for (size_t e = 0; e < count; e++)
			host[e] = nccl_elem(seed, g, e);
		VT(rig_cur(r, g), "cuCtxSetCurrent");
		if (!inplace)
			VT(cu.cuMemsetD32Async(r->g[g].dst, POISON, count, r->g[g].s[1]), "cuMemsetD32Async");
		VT(cu.cuMemcpyHtoDAsync(in, host, bytes, r->g[g].s[1]), "upload (cuMemcpyHtoDAsync)");
		VW(g, r->g[g].s[1], "upload of the all-reduce input");
	}
	nccl_gpus(gl, sizeof(gl), gs, ng);
	snprintf(label, sizeof(label), "nccl %s: ncclGroupEnd (all-reduce of %zu bytes%s over %s)", t->label,
		 bytes, inplace ? " in place" : "", gl);
	nr = nccl.GroupStart();
	for (int k = 0; k < ng && !nr; k++) {
		struct gpu *gp = &r->g[gs[k]];

		nr = nccl.AllReduce((void *)(uintptr_t)(inplace ? gp->dst : gp->src), (void *)(uintptr_t)gp->dst,
				    count, NCCLX_INT32, NCCLX_SUM, comm[k], gp->s[0]);
	}
	/* NCCL launches (and may block, connecting) here */
	rig_guard_call(label, nccl_hint);
	if (!nr)
		nr = nccl.GroupEnd();
	else
		nccl.GroupEnd();
	rig_unguard();
	if (nr) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "ncclAllReduce: %s", nccl.GetErrorString(nr));
		return -1;
	}
	for (int k = 0; k < ng; k++)
		if (vwait(v, t, gs[k], r->g[gs[k]].s[0], NULL, "the NCCL all-reduce") != CUDA_SUCCESS) {
			if (!t->hung && !v->cut)
				snprintf(t->error, sizeof(t->error), "the NCCL all-reduce failed on GPU %d",
					 gs[k]);
			t->ok = 0;
			return -1;
		}
	for (int k = 0; k < ng; k++) {
		uint64_t off, nbad;
		uint8_t e, g8;

		VT(rig_cur(r, gs[k]), "cuCtxSetCurrent");
		VT(cu.cuMemcpyDtoH(got, r->g[gs[k]].dst, bytes), "read back (cuMemcpyDtoH)");
		if (pattern_compare((uint8_t *)got, (uint8_t *)want, bytes, &off, &e, &g8, &nbad)) {
			size_t el = off / NCCLX_ELEM;

			t->ok = 0;
			snprintf(t->error, sizeof(t->error), "GPU %d's result: element %zu is %d, the sum "
				 "is %d (%" PRIu64 " bytes of %zu differ)", gs[k], el, got[el], want[el],
				 nbad, bytes);
			return -1;
		}
	}
	t->bytes += bytes;
	t->rounds++;
	return 0;
}

/* The nccl test of one GPU set: every call of nccl_call() on one communicator per GPU. */
void run_nccl(struct vstate *v, struct vtest *t, const int *gs, int ng)
{
	uint64_t max = v->size < NCCL_MAX_BYTES ? v->size : NCCL_MAX_BYTES, bytes;
	ncclComm_t comm[P2P_MAX_GPUS] = { NULL };
	int devs[P2P_MAX_GPUS], nr, inplace;

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
	for (int k = 0; k < ng; k++)
		devs[k] = v->r.g[gs[k]].dev;
	nr = ncclx_init_all(comm, ng, devs, v->timeout, t->error, sizeof(t->error));
	if (nr) {
		t->ok = 0;
		if (nr == 2) {
			/* NCCL is stuck in init: nothing more can be trusted to return */
			t->hung = 1;
			v->hung = 1;
			snprintf(v->hang, sizeof(v->hang), "nccl %.60s hung: %.600s", t->label, t->error);
		}
		return;
	}
	for (int k = 0; !vhalt(v) && !nccl_call(max, k, &bytes, &inplace); k++) {
		if (nccl_once(v, t, comm, gs, ng, (size_t)(bytes / NCCLX_ELEM), inplace)) {
			char e[1024];

			snprintf(e, sizeof(e), "%" PRIu64 " bytes%s: %.900s", bytes, inplace ? " in place" : "",
				 t->error);
			snprintf(t->error, sizeof(t->error), "%s", e);
			break;
		}
	}
	nccl_end(v, t, comm, gs, ng);
	if (t->ok && dl_stop && nccl_call(max, t->rounds, &bytes, &inplace) == 0) {
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "interrupted by %s after %d calls", strsignal(dl_stop),
			 t->rounds);
	}
}

/*
 * NCCL says which transport each channel connection uses, at INFO level in
 * its INIT subsystem ("NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM").
 * verify sends that into a file of its own for the nccl tests, whatever the
 * user set (NCCL_DEBUG=WARN, NCCL_DEBUG_SUBSYS=ENV would hide it), before
 * NCCL is loaded (NCCL reads its environment at its first call); the
 * ranks it starts inherit it. The user's settings are put back at the end.
 */
static const char *const nccl_vars[3] = { "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE" };
static char *nccl_saved[3];

void nccl_debug_begin(struct vstate *v)
{
	const char *tmp = getenv("TMPDIR");

	for (int k = 0; k < 3; k++) {
		const char *u = getenv(nccl_vars[k]);

		free(nccl_saved[k]);
		nccl_saved[k] = u ? strdup(u) : NULL;
	}
	/* a directory of its own (mkdtemp: 0700, a fresh name): NCCL opens the
	 * file by name, and a guessable name in /tmp could be made a symlink */
	snprintf(v->nccl_dir, sizeof(v->nccl_dir), "%.200s/p2pctl-nccl-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(v->nccl_dir)) {
		v->nccl_dir[0] = '\0';
		return;	/* the transport is then not read: nccl_transport says so */
	}
	snprintf(v->nccl_log, sizeof(v->nccl_log), "%s/nccl.log", v->nccl_dir);
	setenv("NCCL_DEBUG", "INFO", 1);
	setenv("NCCL_DEBUG_SUBSYS", "INIT", 1);
	setenv("NCCL_DEBUG_FILE", v->nccl_log, 1);
}

void nccl_debug_end(struct vstate *v)
{
	DIR *d;
	struct dirent *e;

	if (!v->nccl_log[0])
		return;
	/* nccl.log, and the ranks' nccl.log.R and nccl.log.procs a run left */
	d = opendir(v->nccl_dir);
	while (d && (e = readdir(d))) {
		char path[512];

		if (strncmp(e->d_name, "nccl.log", 8))
			continue;
		snprintf(path, sizeof(path), "%s/%s", v->nccl_dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(v->nccl_dir);
	v->nccl_log[0] = '\0';
	for (int k = 0; k < 3; k++) {
		if (nccl_saved[k])
			setenv(nccl_vars[k], nccl_saved[k], 1);
		else
			unsetenv(nccl_vars[k]);
		free(nccl_saved[k]);
		nccl_saved[k] = NULL;
	}
}

long nccl_log_size(const struct vstate *v)
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
 * The transports of the channel connections NCCL logged into path since
 * offset off (the GPU set gs's test): t->path says which. A connection via anything
 * but P2P between two GPUs with peer access fails t: NCCL's topology check
 * (NCCL_P2P_LEVEL) ruled P2P out, and NCCL runs at shared-memory speed.
 */
void nccl_transport(struct vstate *v, struct vtest *t, const int *gs, int ng, const char *path, long off)
{
	struct { char name[48]; int n; } tr[8] = { 0 };
	int ntr = 0, total = 0, bad = 0, ba = -1, bb = -1;
	char line[1024], badtr[48] = "", lvl[96] = "";
	const char *env = getenv("NCCL_P2P_LEVEL");
	FILE *f;

	if (!v->nccl_log[0]) {
		snprintf(t->path, sizeof(t->path), "NCCL chose its own transport");
		snprintf(t->warn, sizeof(t->warn), "p2pctl could not make a directory for NCCL's debug "
			 "output (TMPDIR), so the transport is not known");
		return;
	}
	f = fopen(path, "r");
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
		/* never OK: NCCL may have run on shared memory */
		snprintf(t->path, sizeof(t->path), "NCCL chose its own transport");
		snprintf(t->warn, sizeof(t->warn), "NCCL's debug output (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS="
			 "INIT) named no channel connection: the transport is not known");
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
