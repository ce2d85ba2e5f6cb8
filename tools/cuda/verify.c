// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify: for each GPU pair, enable peer access and move a data
 * pattern both ways through the copy engines (cuMemcpyPeerAsync) and through
 * SM loads/stores (a kernel reading peer memory, a kernel writing it); check
 * every byte, and the guard bytes past the end, on the host.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cmds.h"
#include "cuda_int.h"
#include "engine.h"

#define GUARD 256
#define POISON 0xa5a5a5a5u

enum { V_CE, V_SM_READ, V_SM_WRITE, V_COUNT };
static const char *const vnames[V_COUNT] = { "ce", "sm-read", "sm-write" };

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void verify_pattern(uint8_t *buf, size_t n, uint64_t seed)
{
	size_t w = n / 8;

	for (size_t k = 0; k < w; k++) {
		uint64_t v = splitmix64(seed + k);

		for (int b = 0; b < 8; b++)
			buf[8 * k + b] = (uint8_t)(v >> (8 * b));
	}
	if (n % 8) {
		uint64_t v = splitmix64(seed + w);

		for (size_t b = 0; b < n % 8; b++)
			buf[8 * w + b] = (uint8_t)(v >> (8 * b));
	}
}

int verify_compare(const uint8_t *got, const uint8_t *want, size_t n, uint64_t *offset,
		   uint8_t *expected, uint8_t *actual, uint64_t *nbad)
{
	const size_t blk = 4096;
	int found = 0;

	*nbad = 0;
	for (size_t o = 0; o < n; o += blk) {
		size_t l = n - o < blk ? n - o : blk;

		if (!memcmp(got + o, want + o, l))
			continue;
		for (size_t k = o; k < o + l; k++) {
			if (got[k] == want[k])
				continue;
			if (!found) {
				found = 1;
				*offset = k;
				*expected = want[k];
				*actual = got[k];
			}
			(*nbad)++;
		}
	}
	return found;
}

struct vtest {
	int src, dst, method, engine;
	int ok;
	char error[1024];
	int mismatch;		/* 1 data, 2 guard overwritten */
	uint64_t offset, nbad;
	uint8_t expected, got;
	double gbps;
};

struct vstate {
	struct rig r;
	struct sm_cfg sm;
	uint64_t size;
	uint8_t *want, *got;
	uint64_t seed;
};

static int fail(struct vtest *t, const char *what, CUresult cr)
{
	t->ok = 0;
	snprintf(t->error, sizeof(t->error), "%s: %s", what, cu_errstr(cr));
	return -1;
}

#define VT(call, what)                                  \
	do {                                            \
		CUresult cr_ = (call);                  \
		if (cr_ != CUDA_SUCCESS)                \
			return fail(t, what, cr_);      \
	} while (0)

/* One copy a -> b by method m; fills t. */
static int run_test(struct vstate *v, struct vtest *t)
{
	struct rig *r = &v->r;
	int a = t->src, b = t->dst;
	size_t n = v->size, total = r->bufsize;
	struct gpu *ga = &r->g[a], *gb = &r->g[b], *ge;
	CUstream s;
	float ms = 0;

	t->ok = 1;
	t->engine = t->method == V_SM_READ ? b : a;
	ge = &r->g[t->engine];
	s = ge->s[0];
	if (t->method != V_CE && !ge->kernels_ok) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "kernels not loaded on GPU %d: %.900s",
			 t->engine, r->jitlog[0] ? r->jitlog : "unknown reason");
		return -1;
	}
	verify_pattern(v->want, n, v->seed);
	v->seed += 0x100000000ULL;
	memset(v->want + n, (int)(POISON & 0xff), total - n);
	VT(rig_cur(r, a), "cuCtxSetCurrent");
	VT(cu.cuMemcpyHtoD(ga->src, v->want, n), "upload pattern (cuMemcpyHtoD)");
	VT(rig_cur(r, b), "cuCtxSetCurrent");
	VT(cu.cuMemsetD32(gb->dst, POISON, total / 4), "poison destination (cuMemsetD32)");
	VT(cu.cuCtxSynchronize(), "cuCtxSynchronize");
	VT(rig_cur(r, t->engine), "cuCtxSetCurrent");
	VT(cu.cuEventRecord(ge->ev_start, s), "cuEventRecord");
	switch (t->method) {
	case V_CE:
		VT(cu.cuMemcpyPeerAsync(gb->dst, gb->ctx, ga->src, ga->ctx, n, s), "cuMemcpyPeerAsync");
		break;
	case V_SM_READ:
		VT(sm_launch(r, b, s, K_READ, &v->sm, gb->dst, ga->src, n), "launch p2p_read");
		break;
	case V_SM_WRITE:
		VT(sm_launch(r, a, s, K_WRITE, &v->sm, gb->dst, ga->src, n), "launch p2p_write");
		break;
	}
	VT(cu.cuEventRecord(ge->ev_stop, s), "cuEventRecord");
	VT(cu.cuStreamSynchronize(s), "copy (cuStreamSynchronize)");
	if (cu.cuEventElapsedTime(&ms, ge->ev_start, ge->ev_stop) == CUDA_SUCCESS && ms > 0)
		t->gbps = n / 1e9 / (ms / 1e3);
	memset(v->got, 0, total);
	VT(rig_cur(r, b), "cuCtxSetCurrent");
	VT(cu.cuMemcpyDtoH(v->got, gb->dst, total), "read back (cuMemcpyDtoH)");
	if (verify_compare(v->got, v->want, n, &t->offset, &t->expected, &t->got, &t->nbad)) {
		t->ok = 0;
		t->mismatch = 1;
		snprintf(t->error, sizeof(t->error),
			 "first mismatch at offset %" PRIu64 " (0x%" PRIx64 "): expected 0x%02x, got 0x%02x"
			 " (%" PRIu64 " of %zu bytes differ)",
			 t->offset, t->offset, t->expected, t->got, t->nbad, n);
		return -1;
	}
	if (verify_compare(v->got + n, v->want + n, total - n, &t->offset, &t->expected,
			   &t->got, &t->nbad)) {
		t->ok = 0;
		t->mismatch = 2;
		t->offset += n;
		snprintf(t->error, sizeof(t->error),
			 "wrote past the end: offset %" PRIu64 " (0x%" PRIx64 "): expected 0x%02x, got 0x%02x",
			 t->offset, t->offset, t->expected, t->got);
		return -1;
	}
	return 0;
}

static void vusage(FILE *f)
{
	fprintf(f,
		"Usage: p2pctl verify [--size BYTES] [--pairs I-J,...] [--json]\n"
		"  --size BYTES   bytes per copy (default 64M = 64 MiB; any size >= 1)\n"
		"  --pairs LIST   only these GPU pairs (default: every pair)\n"
		"  --json         JSON on stdout\n"
		"exit status: 0 all OK, 1 a test failed, 2 usage, 3 no driver or fewer than 2 GPUs\n");
}

static json_object *test_json(const struct vtest *t)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "method", json_object_new_string(vnames[t->method]));
	json_object_object_add(o, "src", json_object_new_int(t->src));
	json_object_object_add(o, "dst", json_object_new_int(t->dst));
	json_object_object_add(o, "engine_gpu", json_object_new_int(t->engine));
	json_object_object_add(o, "status", json_object_new_string(t->ok ? "OK" : "FAIL"));
	if (t->ok) {
		json_object_object_add(o, "gbps", json_object_new_double((double)(int64_t)(t->gbps * 100) / 100));
	} else {
		json_object_object_add(o, "error", json_object_new_string(t->error));
		if (t->mismatch) {
			json_object *m = json_object_new_object();

			json_object_object_add(m, "offset", json_object_new_int64((int64_t)t->offset));
			json_object_object_add(m, "expected", json_object_new_int(t->expected));
			json_object_object_add(m, "got", json_object_new_int(t->got));
			json_object_object_add(m, "where", json_object_new_string(
				t->mismatch == 1 ? "data" : "guard"));
			json_object_object_add(o, "first_mismatch", m);
			if (t->mismatch == 1)
				json_object_object_add(o, "bad_bytes", json_object_new_int64((int64_t)t->nbad));
		}
	}
	return o;
}

int verify_main(int argc, char **argv, FILE *out, FILE *err)
{
	static const struct option lo[] = {
		{ "size", required_argument, NULL, 's' },
		{ "pairs", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static int sel[P2P_MAX_GPUS][P2P_MAX_GPUS];
	struct vstate *v;
	const char *pairs = NULL;
	char emsg[512];
	int json = 0, rc = 0, opt, n, use[P2P_MAX_GPUS] = { 0 }, nok = 0, nfail = 0;
	json_object *jpairs = NULL;

	v = calloc(1, sizeof(*v));
	if (!v)
		return P2P_EXIT_FAIL;
	v->size = 64ULL << 20;
	v->seed = 0x70327063746c0000ULL;	/* "p2pctl" */
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (parse_size(optarg, &v->size) || v->size > (1ULL << 40)) {
				fprintf(err, "verify: bad --size '%s'\n", optarg);
				rc = P2P_EXIT_USAGE;
			}
			break;
		case 'p': pairs = optarg; break;
		case 'j': json = 1; break;
		case 'h': vusage(out); goto done;
		default:
			fprintf(err, "verify: bad option '%s'\n", argv[optind - 1]);
			rc = P2P_EXIT_USAGE;
		}
	}
	if (!rc && optind < argc) {
		fprintf(err, "verify: unexpected argument '%s'\n", argv[optind]);
		rc = P2P_EXIT_USAGE;
	}
	if (!rc && parse_pairs(pairs, sel, emsg, sizeof(emsg))) {
		fprintf(err, "verify: %s\n", emsg);
		rc = P2P_EXIT_USAGE;
	}
	if (rc) {
		vusage(err);
		goto done;
	}
	v->sm.threads = 512;
	v->sm.blocks_per_sm = 4;
	rc = cu_open(emsg, sizeof(emsg));
	if (rc) {
		fprintf(err, "verify: %s\n", emsg);
		goto done;
	}
	rc = rig_count(&n, emsg, sizeof(emsg));
	if (rc) {
		fprintf(err, "verify: %s\n", emsg);
		goto close;
	}
	if (n < 2) {
		fprintf(err, "verify: needs at least two GPUs (%d found)\n", n);
		rc = P2P_EXIT_NODEV;
		goto close;
	}
	for (int i = 0; i < P2P_MAX_GPUS; i++)
		for (int j = 0; j < P2P_MAX_GPUS; j++) {
			if (!sel[i][j])
				continue;
			if (i >= n || j >= n) {
				if (pairs) {
					fprintf(err, "verify: no GPU %d (%d found)\n", i >= n ? i : j, n);
					rc = P2P_EXIT_NODEV;
					goto close;
				}
				continue;
			}
			use[i] = use[j] = 1;
		}
	{
		size_t total = ((v->size + 3) & ~(uint64_t)3) + GUARD;

		v->want = malloc(total);
		v->got = malloc(total);
		if (!v->want || !v->got) {
			fprintf(err, "verify: cannot allocate 2 x %zu bytes of host memory\n", total);
			rc = P2P_EXIT_FAIL;
			goto close;
		}
		rc = rig_open(&v->r, use, total, 0, emsg, sizeof(emsg));
		if (rc) {
			fprintf(err, "verify: %s\n", emsg);
			goto close;
		}
	}
	if (json)
		jpairs = json_object_new_array();
	else
		for (int i = 0; i < n; i++)
			if (use[i])
				fprintf(out, "GPU %d: %s (%s)\n", i, v->r.g[i].name, v->r.g[i].busid);
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++) {
			struct vtest tests[2 * V_COUNT];
			int nt = 0, peer_ok, pfail = 0;
			char perr[512] = "";
			json_object *jp = NULL, *jt = NULL;

			if (!sel[a][b])
				continue;
			peer_ok = v->r.can_peer[a][b] && v->r.can_peer[b][a];
			if (!peer_ok) {
				snprintf(perr, sizeof(perr),
					 "peer access not supported (cuDeviceCanAccessPeer %d->%d = %d, %d->%d = %d)",
					 a, b, v->r.can_peer[a][b], b, a, v->r.can_peer[b][a]);
			} else {
				CUresult cr = rig_peer(&v->r, a, b, 1);

				if (cr == CUDA_SUCCESS)
					cr = rig_peer(&v->r, b, a, 1);
				if (cr != CUDA_SUCCESS) {
					peer_ok = 0;
					snprintf(perr, sizeof(perr), "cuCtxEnablePeerAccess: %s", cu_errstr(cr));
				}
			}
			if (peer_ok) {
				for (int m = 0; m < V_COUNT; m++)
					for (int d = 0; d < 2; d++) {
						struct vtest *t = &tests[nt++];

						memset(t, 0, sizeof(*t));
						t->src = d ? b : a;
						t->dst = d ? a : b;
						t->method = m;
						run_test(v, t);
						pfail += !t->ok;
						nok += t->ok;
					}
			}
			{
				CUresult c1 = rig_peer(&v->r, a, b, 0), c2 = rig_peer(&v->r, b, a, 0);

				if (peer_ok && (c1 != CUDA_SUCCESS || c2 != CUDA_SUCCESS)) {
					snprintf(perr, sizeof(perr), "cuCtxDisablePeerAccess: %s",
						 cu_errstr(c1 != CUDA_SUCCESS ? c1 : c2));
					pfail++;
				}
			}
			if (!peer_ok)
				pfail++;
			nfail += pfail;
			if (json) {
				jp = json_object_new_object();
				jt = json_object_new_array();
				json_object *gp = json_object_new_array();

				json_object_array_add(gp, json_object_new_int(a));
				json_object_array_add(gp, json_object_new_int(b));
				json_object_object_add(jp, "gpus", gp);
				json_object_object_add(jp, "can_access_peer", json_object_new_boolean(
					v->r.can_peer[a][b] && v->r.can_peer[b][a]));
				json_object_object_add(jp, "status", json_object_new_string(pfail ? "FAIL" : "OK"));
				if (perr[0])
					json_object_object_add(jp, "error", json_object_new_string(perr));
				for (int k = 0; k < nt; k++)
					json_object_array_add(jt, test_json(&tests[k]));
				json_object_object_add(jp, "tests", jt);
				json_object_array_add(jpairs, jp);
				continue;
			}
			fprintf(out, "pair %d-%d: can-access-peer %d->%d %s, %d->%d %s\n", a, b,
				a, b, v->r.can_peer[a][b] ? "yes" : "no", b, a,
				v->r.can_peer[b][a] ? "yes" : "no");
			if (perr[0])
				fprintf(out, "  FAIL  %s\n", perr);
			for (int k = 0; k < nt; k++) {
				const struct vtest *t = &tests[k];

				fprintf(out, "  %-9s %d->%d  %-4s", vnames[t->method], t->src, t->dst,
					t->ok ? "OK" : "FAIL");
				if (t->ok)
					fprintf(out, "  %" PRIu64 " bytes, %s on GPU %d, %.1f GB/s\n", v->size,
						t->method == V_CE ? "copy engine" : "kernel", t->engine, t->gbps);
				else
					fprintf(out, "  %s\n", t->error);
			}
		}
	if (json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "command", json_object_new_string("verify"));
		json_object_object_add(o, "format", json_object_new_int(1));
		json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)v->size));
		json_object_object_add(o, "driver_version", json_object_new_int(v->r.driver_version));
		json_object_object_add(o, "devices", cuda_devices_json(&v->r));
		json_object_object_add(o, "pairs", jpairs);
		json_object_object_add(o, "ok_tests", json_object_new_int(nok));
		json_object_object_add(o, "failures", json_object_new_int(nfail));
		json_object_object_add(o, "result", json_object_new_string(nfail ? "FAIL" : "OK"));
		fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								      JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		fprintf(out, "verify: %s (%d OK, %d FAIL)\n", nfail ? "FAIL" : "OK", nok, nfail);
	}
	rc = nfail ? P2P_EXIT_FAIL : P2P_EXIT_OK;
	rig_close(&v->r);
close:
	cu_close();
done:
	free(v->want);
	free(v->got);
	free(v);
	return rc;
}

