// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's procs test: processes starting, mapping a peer's memory
 * and exiting at once, as the ranks of a multi-GPU job do. On 580.65.06 to
 * 595.x nvidia-uvm can deadlock there (its devicesLock taken for reading by
 * a BAR1 peer mapping while a process's teardown holds it for writing
 * across the RM free; docs/support.md): every process has a deadline, and
 * one that misses it is killed and named, so the test fails, it does not
 * hang.
 */

#include "verify.h"

#define PROCS_N 4		/* second processes at once */
#define PROCS_ROUNDS 3
/* where process p's slice of n bytes starts (p = PROCS_N: the end) */
#define SLICE(n, p) ((n) * (size_t)(p) / PROCS_N)

/*
 * procs a -> b: PROCS_ROUNDS times, PROCS_N second processes (the ipc test's,
 * verify --ipc-child) started at once on GPU b, each opening GPU a's buffers
 * with cuIpcOpenMemHandle, copying from them with CE and SM loads (checked
 * there), storing its own slice of the pattern into a's destination
 * (checked here: were they all to store the same bytes, one process's
 * landing stores would hide the others' losses) and exiting, all at the
 * same time.
 */
int run_procs(struct vstate *v, struct vtest *t)
{
	static const char *const part[3] = { "ce OK", "sm-read OK", "sm-write DONE" };
	struct rig *r = &v->r;
	int a = t->src, b = t->dst;
	size_t n = v->size < FLAG_MAX ? v->size : FLAG_MAX;
	char spec[PROCS_N][560], hs[129], hd[129];
	CUipcMemHandle h[2];
	uint64_t s1, s2, seed = v->seed;
	struct vchild ch[PROCS_N];
	double end;
	int rc = 0;

	t->ok = 1;
	t->engine = b;
	if (!cu.cuIpcGetMemHandle || !cu.cuIpcOpenMemHandle || !cu.cuIpcCloseMemHandle) {
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "the CUDA driver lacks cuIpcGetMemHandle, "
			 "cuIpcOpenMemHandle_v2 or cuIpcCloseMemHandle");
		return 0;
	}
	/* The vram test's seed stream: adding this test moved no other's seeds. */
	v->seed = v->vseed;
	for (int round = 0; round < PROCS_ROUNDS && !rc; round++) {
		int started = 0, late = 0;

		s1 = v->seed;
		vimages(v, n);
		s2 = v->seed;
		v->seed += 0x100000000ULL;
		if (vstage(v, t, a, a, 0) || vfail_if(t, rig_cur(r, a), "cuCtxSetCurrent") ||
		    vfail_if(t, cu.cuIpcGetMemHandle(&h[0], r->g[a].src), "cuIpcGetMemHandle (source)") ||
		    vfail_if(t, cu.cuIpcGetMemHandle(&h[1], r->g[a].dst), "cuIpcGetMemHandle (destination)")) {
			rc = -1;
			break;
		}
		vhex(hs, &h[0], 64);
		vhex(hd, &h[1], 64);
		for (int p = 0; p < PROCS_N; p++)
			snprintf(spec[p], sizeof(spec[p]), "b=%d,n=%zu,s1=%" PRIx64 ",s2=%" PRIx64 ",t=%g,"
				 "src=%s,dst=%s,w=%zu+%zu", b, n, s1, s2, v->timeout, hs, hd, SLICE(n, p),
				 SLICE(n, p + 1) - SLICE(n, p));
		for (; started < PROCS_N; started++)
			if (vchild_start(t, "--ipc-child", spec[started], &ch[started]))
				break;
		end = now_s() + 2 * v->timeout + 5;
		for (int p = 0; p < started; p++)
			if (vchild_read(&ch[p], NULL, end) < 0)
				late++;
		if (late) {
			t->ok = 0;
			snprintf(t->error, sizeof(t->error), "round %d: %d of %d processes started at once on "
				 "GPU %d (each opening GPU %d's buffers, copying, exiting) did not finish within "
				 "%.3g s and were killed: processes mapping a peer's memory while others exit hang "
				 "(on " V_UVM_LOCK_DRIVERS " nvidia-uvm's devicesLock inversion, docs/support.md; fixed in "
				 "610.57.04)", round + 1, late, PROCS_N, b, a, 2 * v->timeout + 5);
			rc = -1;
			break;
		}
		if (started < PROCS_N) {
			rc = -1;
			break;
		}
		for (int p = 0; p < PROCS_N && !rc; p++)
			for (int k = 0; k < 3 && !rc; k++)
				if (!strstr(ch[p].buf, part[k])) {
					char *e = strstr(ch[p].buf, "ipc-child: "), *nl;

					while (e && (!strncmp(e + 11, "ce OK", 5) || !strncmp(e + 11, "sm-read OK", 10)))
						e = strstr(e + 11, "ipc-child: ");
					nl = e ? strchr(e, '\n') : NULL;
					t->ok = 0;
					snprintf(t->error, sizeof(t->error), "round %d, process %d of %d on GPU %d: %.*s",
						 round + 1, p + 1, PROCS_N, b,
						 e ? (int)(nl ? nl - e - 11 : (long)strlen(e + 11)) : 40,
						 e ? e + 11 : "no result (see its output)");
					rc = -1;
				}
		if (rc)
			break;
		/* Each process stored its slice of one pattern into a's destination. */
		memset(v->want, (int)(POISON & 0xff), v->total);
		pattern_fill(v->want + GUARD, n, s2);
		if (vreadback(v, t, a, r->g[a].dst) || vcheck_got(v, t, n)) {
			char e[1024], who[40] = "";
			int p = 0;

			while (t->mismatch == 1 && p + 1 < PROCS_N && t->offset >= SLICE(n, p + 1))
				p++;
			if (t->mismatch == 1)
				snprintf(who, sizeof(who), ", first in process %d's", p + 1);
			snprintf(e, sizeof(e), "round %d, %d processes on GPU %d storing into GPU %d's buffer "
				 "(a slice each%s): %.850s", round + 1, PROCS_N, b, a, who, t->error);
			snprintf(t->error, sizeof(t->error), "%s", e);
			rc = -1;
			break;
		}
		t->rounds++;
		t->bytes += (uint64_t)PROCS_N * 3 * n;
	}
	v->vseed = v->seed;
	v->seed = seed;
	if (rc)
		return -1;
	t->proven = a != b;
	if (a != b)
		snprintf(t->path, sizeof(t->path), "%d processes at once on GPU %d reached GPU %d's buffers "
			 "through their peer mappings", PROCS_N, b, a);
	else
		snprintf(t->path, sizeof(t->path), "loopback within GPU %d: no peer path", a);
	return 0;
}
