// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's ipc test: a second process opens the buffers with
 * cuIpcOpenMemHandle and copies with CE and SMs (and that second process).
 */
#include <stdlib.h>

#include "verify.h"

/* The second process. Prints "ipc-child: PART OK|FAIL text|DONE" lines. */
int ipc_child(const char *spec, FILE *out)
{
	struct rig *r = calloc(1, sizeof(*r));
	char emsg[512], hs[129], hd[129];
	CUipcMemHandle h[2];
	CUdeviceptr ps = 0, pd = 0, L = 0;
	uint64_t s1, s2, off, nbad;
	uint8_t *want = NULL, *got = NULL, e, g;
	size_t n, woff = 0, wlen;
	double timeout;
	int nf;
	int b, use[P2P_MAX_GPUS] = { 0 }, rc = P2P_EXIT_FAIL;
	CUresult cr;
	struct sm_cfg sm = { 512, 4 };
	CUstream s;

	vchild_init();
	/* ",w=OFF+LEN": store only that slice of the pattern (the procs test
	 * gives each process its own, so one landing store hides no other's loss) */
	if (!r || ((nf = sscanf(spec, "b=%d,n=%zu,s1=%" SCNx64 ",s2=%" SCNx64 ",t=%lf,src=%128[0-9a-f],"
				"dst=%128[0-9a-f],w=%zu+%zu", &b, &n, &s1, &s2, &timeout, hs, hd, &woff,
				&wlen)) != 7 && nf != 9) || b < 0 || b >= P2P_MAX_GPUS || !n ||
	    (nf == 9 && (woff > n || wlen > n - woff)) ||
	    vunhex(&h[0], hs, 64) || vunhex(&h[1], hd, 64)) {
		fprintf(out, "ipc-child: ERROR bad --ipc-child '%s'\n", spec);
		free(r);
		return P2P_EXIT_USAGE;
	}
	if (cu_open(emsg, sizeof(emsg))) {
		fprintf(out, "ipc-child: ERROR %s\n", emsg);
		free(r);
		return P2P_EXIT_NODEV;
	}
	use[b] = 1;
	if (rig_open(r, use, 0, 0, emsg, sizeof(emsg))) {
		fprintf(out, "ipc-child: ERROR %s\n", emsg);
		goto close;
	}
	s = r->g[b].s[0];
	want = malloc(n);
	got = malloc(n);
#define CC(call, what)                                                                   \
	do {                                                                             \
		cr = (call);                                                             \
		if (cr != CUDA_SUCCESS) {                                                \
			fprintf(out, "ipc-child: ERROR %s: %s\n", what, cu_errstr(cr));  \
			goto rig;                                                        \
		}                                                                        \
	} while (0)
	CC(want && got ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY, "host memory");
	CC(rig_cur(r, b), "cuCtxSetCurrent");
	CC(cu.cuMemAlloc(&L, (n + 3) & ~(size_t)3), "cuMemAlloc");
	CC(cu.cuIpcOpenMemHandle(&ps, h[0], CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
	   "cuIpcOpenMemHandle (source)");
	CC(cu.cuIpcOpenMemHandle(&pd, h[1], CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
	   "cuIpcOpenMemHandle (destination)");
	pattern_fill(want, n, s1);
	for (int part = 0; part < 2; part++) {
		const char *name = part ? "sm-read" : "ce";

		CC(cu.cuMemsetD32Async(L, POISON, (n + 3) / 4, s), "cuMemsetD32Async");
		if (part)
			CC(sm_launch(r, b, s, K_READ, &sm, L, ps + GUARD, n), "launch p2p_read");
		else
			CC(cu.cuMemcpyDtoDAsync(L, ps + GUARD, n, s), "cuMemcpyDtoDAsync");
		cr = vchild_wait(s, timeout);
		if (cr == CUDA_ERROR_NOT_READY) {
			fprintf(out, "ipc-child: %s FAIL did not finish within %.3g s (hung)\n", name, timeout);
			vchild_stuck(out);
		}
		CC(cr, name);
		CC(cu.cuMemcpyDtoH(got, L, n), "cuMemcpyDtoH");
		if (pattern_compare(got, want, n, &off, &e, &g, &nbad))
			fprintf(out, "ipc-child: %s FAIL first mismatch at offset %" PRIu64 " (0x%" PRIx64
				"): expected 0x%02x, got 0x%02x%s (%" PRIu64 " of %zu bytes differ)\n", name,
				off, off, e, g, g == (POISON & 0xff) ? ", the poison: the write never landed" : "",
				nbad, n);
		else
			fprintf(out, "ipc-child: %s OK\n", name);
	}
	if (nf != 9)
		wlen = n;
	pattern_fill(want, n, s2);
	CC(cu.cuMemcpyHtoDAsync(L, want, n, s), "cuMemcpyHtoDAsync");
	if (wlen)
		CC(sm_launch(r, b, s, K_WRITE, &sm, pd + GUARD + woff, L + woff, wlen), "launch p2p_write");
	cr = vchild_wait(s, timeout);
	if (cr == CUDA_ERROR_NOT_READY) {
		fprintf(out, "ipc-child: sm-write FAIL did not finish within %.3g s (hung)\n", timeout);
		vchild_stuck(out);
	}
	CC(cr, "sm-write");
	fprintf(out, "ipc-child: sm-write DONE\n");
	rc = 0;
rig:
#undef CC
	if (ps)
		cu.cuIpcCloseMemHandle(ps);
	if (pd)
		cu.cuIpcCloseMemHandle(pd);
	if (L)
		cu.cuMemFree(L);
	rig_close(r);
close:
	cu_close();
	free(want);
	free(got);
	free(r);
	return rc;
}

/* Run the child to its end; its output lines in c->buf. 0, or -1 with t failed. */
static int ipc_spawn(struct vstate *v, struct vtest *t, const char *spec, struct vchild *c)
{
	if (vchild_start(t, "--ipc-child", spec, c))
		return -1;
	if (vchild_read(c, NULL, now_s() + vchild_limit(v)) < 0) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "the second process did not finish within %.3g s "
			 "and was killed: the IPC path hangs", vchild_limit(v));
		return -1;
	}
	return 0;
}

/*
 * ipc a -> b: a second process (p2pctl itself, run as "verify --ipc-child",
 * or $P2PCTL_SELF) opens GPU a's source and destination buffers with
 * cuIpcOpenMemHandle in GPU b's context, as NCCL and vLLM share buffers
 * between ranks, and runs on them: a copy-engine copy (cuMemcpyDtoDAsync
 * from a's source into its own buffer), a p2p_read kernel, both checked
 * there, and a p2p_write kernel into a's destination, checked here.
 */
int run_ipc(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst;
	size_t n = v->size < FLAG_MAX ? v->size : FLAG_MAX;
	char spec[512], hs[129], hd[129], *out;
	static const char *const part[3] = { "ce", "sm-read", "sm-write" };
	CUipcMemHandle h[2];
	uint64_t s1, s2;
	struct vchild c;

	t->ok = 1;
	t->engine = b;
	if (!cu.cuIpcGetMemHandle || !cu.cuIpcOpenMemHandle || !cu.cuIpcCloseMemHandle) {
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "the CUDA driver lacks cuIpcGetMemHandle, "
			 "cuIpcOpenMemHandle_v2 or cuIpcCloseMemHandle");
		return 0;
	}
	s1 = v->seed;
	vimages(v, n);
	s2 = v->seed;
	v->seed += 0x100000000ULL;
	if (vstage(v, t, a, a, 0))
		return -1;
	VT(rig_cur(r, a), "cuCtxSetCurrent");
	VT(cu.cuIpcGetMemHandle(&h[0], r->g[a].src), "cuIpcGetMemHandle (source)");
	VT(cu.cuIpcGetMemHandle(&h[1], r->g[a].dst), "cuIpcGetMemHandle (destination)");
	vhex(hs, &h[0], 64);
	vhex(hd, &h[1], 64);
	snprintf(spec, sizeof(spec), "b=%d,n=%zu,s1=%" PRIx64 ",s2=%" PRIx64 ",t=%g,src=%s,dst=%s",
		 b, n, s1, s2, v->timeout, hs, hd);
	if (ipc_spawn(v, t, spec, &c))
		return -1;
	out = c.buf;
	for (int k = 0; k < 3; k++) {
		char key[64], *l;

		snprintf(key, sizeof(key), "ipc-child: %s ", part[k]);
		l = strstr(out, key);
		if (!l || (strncmp(l + strlen(key), "OK", 2) && strncmp(l + strlen(key), "DONE", 4))) {
			char *e = strstr(out, "ipc-child: ERROR "), *nl;

			if (l)
				e = l + strlen(key) + 5;	/* after "FAIL " */
			else if (e)
				e += 17;
			nl = e ? strchr(e, '\n') : NULL;
			t->ok = 0;
			snprintf(t->error, sizeof(t->error), "second process on GPU %d, %s of GPU %d's "
				 "buffer: %.*s", b, part[k], a, e ? (int)(nl ? nl - e : (long)strlen(e)) : 40,
				 e ? e : "no result (see its output)");
			return -1;
		}
		t->rounds++;
		t->bytes += n;
	}
	/* The write: poison, the pattern of seed s2, poison, in a's destination. */
	memset(v->want, (int)(POISON & 0xff), v->total);
	pattern_fill(v->want + GUARD, n, s2);
	if (vreadback(v, t, a, r->g[a].dst))
		return -1;
	if (vcheck_got(v, t, n)) {
		char e[1024];

		snprintf(e, sizeof(e), "second process on GPU %d, sm-write into GPU %d's buffer: %.900s",
			 b, a, t->error);
		snprintf(t->error, sizeof(t->error), "%s", e);
		return -1;
	}
	t->proven = a != b;
	snprintf(t->path, sizeof(t->path), a != b ?
		 "a second process opened GPU %d's buffers with cuIpcOpenMemHandle; GPU %d's copy "
		 "engine and SMs reached them through the peer mapping" :
		 "loopback within GPU %d: a second process, no peer path", a, b);
	return 0;
}
