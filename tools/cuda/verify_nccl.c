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
 * $P2PCTL_LIBNCCL overrides), an int32 sum all-reduce over each selected
 * pair and over all the GPUs, with known data, every element checked, for
 * sizes from 8 B to 64 MiB (capped by --size). One thread drives all GPUs
 * (ncclCommInitAll + a group call); every wait has the deadline, and a hung
 * all-reduce aborts the communicators.
 */
#define nccl nx
#define NCCL_INT32 NCCLX_INT32
#define NCCL_SUM NCCLX_SUM
#define NCCL_MAX_BYTES (64ULL << 20)

int nccl_open(char *why, size_t len)
{
	return ncclx_open(why, len);
}

/* Element k of GPU g's input: small, so the int32 sums cannot overflow. */
static int32_t nccl_elem(uint64_t seed, int g, size_t k)
{
	return (int32_t)(splitmix64(seed + ((uint64_t)g << 48) + k) & 0xffff) - 0x8000;
}

/*
 * One all-reduce of count int32 over the ng GPUs in gs: src in each GPU's
 * src buffer, result in its dst; every GPU's result checked. 0, or -1 with t
 * failed (and v->hung on a hang).
 */
static int nccl_once(struct vstate *v, struct vtest *t, const int *gs, int ng, size_t count)
{
	struct rig *r = &v->r;
	int devs[P2P_MAX_GPUS], nr;
	ncclComm_t comm[P2P_MAX_GPUS] = { NULL };
	int32_t *host = (int32_t *)v->img, *got = (int32_t *)v->got, *want = (int32_t *)v->want;
	uint64_t seed = v->seed;
	int rc = -1;

	v->seed += 0x100000000ULL;
	for (int k = 0; k < ng; k++)
		devs[k] = r->g[gs[k]].dev;
	for (size_t e = 0; e < count; e++) {
		int64_t s = 0;

		for (int k = 0; k < ng; k++)
			s += nccl_elem(seed, gs[k], e);
		want[e] = (int32_t)s;
	}
	for (int k = 0; k < ng; k++) {
		int g = gs[k];

		for (size_t e = 0; e < count; e++)
			host[e] = nccl_elem(seed, g, e);
		VT(rig_cur(r, g), "cuCtxSetCurrent");
		VT(cu.cuMemcpyHtoDAsync(r->g[g].src, host, count * 4, r->g[g].s[1]),
		   "upload (cuMemcpyHtoDAsync)");
		VT(cu.cuMemsetD32Async(r->g[g].dst, POISON, count, r->g[g].s[1]), "cuMemsetD32Async");
		VW(g, r->g[g].s[1], "upload of the all-reduce input");
	}
	nr = ncclx_init_all(comm, ng, devs, v->timeout, t->error, sizeof(t->error));
	if (nr) {
		t->ok = 0;
		if (nr == 2) {
			/* NCCL is stuck in init: nothing more can be trusted to return */
			t->hung = 1;
			v->hung = 1;
			snprintf(v->hang, sizeof(v->hang), "nccl %.60s hung: %.600s", t->label, t->error);
		}
		return -1;
	}
	nr = nccl.GroupStart();
	for (int k = 0; k < ng && !nr; k++)
		nr = nccl.AllReduce((void *)(uintptr_t)r->g[gs[k]].src, (void *)(uintptr_t)r->g[gs[k]].dst,
				    count, NCCL_INT32, NCCL_SUM, comm[k], r->g[gs[k]].s[0]);
	if (!nr)
		nr = nccl.GroupEnd();
	else
		nccl.GroupEnd();
	if (nr) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "ncclAllReduce: %s", nccl.GetErrorString(nr));
		goto out;
	}
	for (int k = 0; k < ng; k++)
		if (vwait(v, t, gs[k], r->g[gs[k]].s[0], NULL, "the NCCL all-reduce") != CUDA_SUCCESS) {
			if (!t->hung)
				snprintf(t->error, sizeof(t->error), "the NCCL all-reduce failed on GPU %d",
					 gs[k]);
			t->ok = 0;
			goto out;
		}
	for (int k = 0; k < ng; k++) {
		uint64_t off, nbad;
		uint8_t e, g8;

		VT(rig_cur(r, gs[k]), "cuCtxSetCurrent");
		VT(cu.cuMemcpyDtoH(got, r->g[gs[k]].dst, count * 4), "read back (cuMemcpyDtoH)");
		if (pattern_compare((uint8_t *)got, (uint8_t *)want, count * 4, &off, &e, &g8, &nbad)) {
			size_t el = off / 4;

			t->ok = 0;
			snprintf(t->error, sizeof(t->error), "GPU %d's result: element %zu is %d, the sum "
				 "is %d (%" PRIu64 " bytes of %zu differ)", gs[k], el, got[el], want[el],
				 nbad, count * 4);
			goto out;
		}
	}
	t->bytes += count * 4;
	t->rounds++;
	rc = 0;
out:
	for (int k = 0; k < ng; k++)
		if (comm[k])
			(v->hung ? nccl.CommAbort : nccl.CommDestroy)(comm[k]);
	return rc;
}

/* The nccl tests of one GPU set: all sizes. */
void run_nccl(struct vstate *v, struct vtest *t, const int *gs, int ng)
{
	uint64_t max = v->size < NCCL_MAX_BYTES ? v->size : NCCL_MAX_BYTES;

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
	for (uint64_t b = 8; b <= max && !v->hung; b *= 8) {
		size_t count = (size_t)(b / 4);

		if (nccl_once(v, t, gs, ng, count)) {
			char e[1024];

			snprintf(e, sizeof(e), "%" PRIu64 " bytes: %.900s", b, t->error);
			snprintf(t->error, sizeof(t->error), "%s", e);
			return;
		}
		if (b * 8 > max && b != max && max % 4 == 0 && max >= 8) {
			if (nccl_once(v, t, gs, ng, (size_t)(max / 4))) {
				char e[1024];

				snprintf(e, sizeof(e), "%" PRIu64 " bytes: %.900s", max, t->error);
				snprintf(t->error, sizeof(t->error), "%s", e);
				return;
			}
		}
	}
	snprintf(t->path, sizeof(t->path), "NCCL chose its own transport (P2P, shared memory or "
		 "network); p2pctl does not see which");
}

/*
 * NCCL says which transport each channel connection uses, at INFO level
 * ("NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"). Unless the user
 * set NCCL_DEBUG, verify sends that into a file of its own for the nccl
 * test, before NCCL is loaded (NCCL reads its environment at its first
 * call).
 */
void nccl_debug_begin(struct vstate *v)
{
	const char *d = getenv("NCCL_DEBUG"), *tmp = getenv("TMPDIR");

	if (d) {
		snprintf(v->nccl_user, sizeof(v->nccl_user), "%s", d);
		return;
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
	setenv("NCCL_DEBUG_SUBSYS", "INIT", 0);
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
	unsetenv("NCCL_DEBUG");
	unsetenv("NCCL_DEBUG_FILE");
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

	if (!v->nccl_log[0] && !v->nccl_user[0]) {
		snprintf(t->path, sizeof(t->path), "NCCL chose its own transport; p2pctl could not make a "
			 "directory for NCCL's debug output (TMPDIR), so it did not read which");
		return;
	}
	if (!v->nccl_log[0]) {
		snprintf(t->path, sizeof(t->path), "NCCL chose its own transport; NCCL_DEBUG is set (%s), "
			 "so p2pctl did not read which", v->nccl_user);
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
		snprintf(t->path, sizeof(t->path), "NCCL chose its own transport; its debug output "
			 "(NCCL_DEBUG=INFO) named none");
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
