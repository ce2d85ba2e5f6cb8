// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's output: a line per test, JSON, the per-pair grid and
 * verdict, and the run's result and exit status.
 */

#include "verify.h"

json_object *vtest_json(const struct vtest *t)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "method", json_object_new_string(vnames[t->method]));
	if (t->label[0])
		json_object_object_add(o, "gpus", json_object_new_string(t->label));
	if (t->procs)
		json_object_object_add(o, "one_process_per_gpu", json_object_new_boolean(1));
	json_object_object_add(o, "src", json_object_new_int(t->src));
	json_object_object_add(o, "dst", json_object_new_int(t->dst));
	json_object_object_add(o, "engine_gpu", json_object_new_int(t->engine));
	json_object_object_add(o, "status", json_object_new_string(
		t->skipped ? "SKIPPED" : t->ok ? "OK" : "FAIL"));
	if (t->skipped) {
		json_object_object_add(o, "reason", json_object_new_string(t->error));
		return o;
	}
	json_object_object_add(o, "path_proven", json_object_new_boolean(t->proven && t->ok));
	if (t->method == V_PATH && (t->ok || t->off_gbps > 0)) {
		json_object_object_add(o, "off_gbps", json_object_new_double((double)(int64_t)(t->off_gbps * 100) / 100));
		json_object_object_add(o, "on_latency_us", json_object_new_double((double)(int64_t)(t->on_us * 100) / 100));
		json_object_object_add(o, "off_latency_us", json_object_new_double((double)(int64_t)(t->off_us * 100) / 100));
	}
	if (t->path[0])
		json_object_object_add(o, "path", json_object_new_string(t->path));
	if (t->ok && t->warn[0])
		json_object_object_add(o, "warning", json_object_new_string(t->warn));
	json_object_object_add(o, "rounds", json_object_new_int(t->rounds));
	if (t->method == V_VRAM && !t->quick) {
		json_object_object_add(o, "buffer_bytes", json_object_new_int64((int64_t)t->vram_buf));
		for (int i = 0; i < 2; i++) {
			char k[32];

			snprintf(k, sizeof(k), "%s_free_bytes", i ? "dst" : "src");
			json_object_object_add(o, k, json_object_new_int64((int64_t)t->vram_free[i]));
			snprintf(k, sizeof(k), "%s_tested_bytes", i ? "dst" : "src");
			json_object_object_add(o, k, json_object_new_int64((int64_t)t->vram_cov[i]));
		}
		json_object_object_add(o, "complete", json_object_new_boolean(!t->partial));
	}
	json_object_object_add(o, "bytes_checked", json_object_new_int64((int64_t)t->bytes));
	if (t->ok) {
		json_object_object_add(o, "gbps", json_object_new_double((double)(int64_t)(t->gbps * 100) / 100));
	} else {
		json_object_object_add(o, "error", json_object_new_string(t->error));
		json_object_object_add(o, "hint", json_object_new_string(vtest_hint(t)));
		if (t->hung)
			json_object_object_add(o, "hung", json_object_new_boolean(1));
		if (t->mismatch) {
			json_object *m = json_object_new_object();

			json_object_object_add(m, "offset", json_object_new_int64((int64_t)t->offset));
			json_object_object_add(m, "expected", json_object_new_int(t->expected));
			json_object_object_add(m, "got", json_object_new_int(t->got));
			json_object_object_add(m, "where", json_object_new_string(
				t->mismatch == 1 ? "data" : t->mismatch == 2 ? "guard" : "guard-before"));
			json_object_object_add(o, "first_mismatch", m);
			if (t->mismatch == 1)
				json_object_object_add(o, "bad_bytes", json_object_new_int64((int64_t)t->nbad));
		}
	}
	return o;
}

/* What moved the data in t, for the text output. */
static const char *test_how(const struct vtest *t, char *buf, size_t len)
{
	switch (t->method) {
	case V_CE:
		snprintf(buf, len, "copy engine on GPU %d", t->engine);
		break;
	case V_FLAGS:
		snprintf(buf, len, "%d rounds, GPU %d stores payload + flag, GPU %d polls", t->rounds,
			 t->src, t->dst);
		break;
	case V_FLAGS_POLL:
		snprintf(buf, len, "%d rounds, GPU %d polls GPU %d's flag through peer loads",
			 t->rounds, t->dst, t->src);
		break;
	case V_GRAPH:
		snprintf(buf, len, "%d replays of ce + sm-write (GPU %d) and sm-read (GPU %d) graphs",
			 t->rounds, t->src, t->dst);
		break;
	case V_IPC:
		snprintf(buf, len, "ce, sm-read and sm-write by a second process on GPU %d", t->dst);
		break;
	case V_UM_READ:
		snprintf(buf, len, "kernel on GPU %d through its mapping of GPU %d's pages",
			 t->dst, t->src);
		break;
	case V_UM_WRITE:
		snprintf(buf, len, "kernel on GPU %d through its mapping of GPU %d's pages",
			 t->src, t->dst);
		break;
	case V_UM_PREFETCH:
		snprintf(buf, len, "cuMemPrefetchAsync GPU %d -> GPU %d", t->src, t->dst);
		break;
	case V_UM_FAULT:
		snprintf(buf, len, "kernel on GPU %d faulting on GPU %d's pages", t->src, t->dst);
		break;
	case V_VRAM:
		if (!t->quick) {
			snprintf(buf, len, "ce, sm-read and sm-write over free memory in %zu-byte buffers: %"
				 PRIu64 " of %" PRIu64 " MiB free on GPU %d (%d buffers), %" PRIu64 " of %" PRIu64
				 " MiB on GPU %d (%d)", t->vram_buf, t->vram_cov[0] >> 20, t->vram_free[0] >> 20,
				 t->src, t->vram_nbuf[0], t->vram_cov[1] >> 20, t->vram_free[1] >> 20, t->dst,
				 t->vram_nbuf[1]);
			break;
		}
		snprintf(buf, len, "--quick: ce, sm-read and sm-write at the bottom, middle and top of free memory "
			 "(pads of %" PRIu64 ", %" PRIu64 " and %" PRIu64 " MiB on GPU %d, %" PRIu64 ", %"
			 PRIu64 " and %" PRIu64 " MiB on GPU %d)", t->vram_mb[0][0], t->vram_mb[1][0],
			 t->vram_mb[2][0], t->src, t->vram_mb[0][1], t->vram_mb[1][1], t->vram_mb[2][1],
			 t->dst);
		break;
	case V_VMM:
		snprintf(buf, len, "ce (GPU %d), sm-write (GPU %d) and sm-read (GPU %d) between "
			 "cuMemCreate buffers mapped with cuMemMap + cuMemSetAccess", t->src, t->src, t->dst);
		break;
	case V_CAR:
		snprintf(buf, len, "%d rounds (half replayed from a CUDA graph) of a one-kernel all-reduce, "
			 "rank 0 on GPU %d, rank 1 a second process on GPU %d", t->rounds, t->src, t->dst);
		break;
	case V_PROCS:
		snprintf(buf, len, "%d rounds of 4 processes at once on GPU %d opening GPU %d's buffers "
			 "(ce, sm-read, sm-write) and exiting", t->rounds, t->dst, t->src);
		break;
	case V_CONCURRENT:
		snprintf(buf, len, "%d rounds of all pairs at once%s", t->rounds,
			 t->cut ? " (cut short by the signal)" : "");
		break;
	case V_NCCL:
		snprintf(buf, len, "int32 sum all-reduce over %d GPU%s%s, %d calls on one communicator "
			 "(from 8 bytes, in place and out of place)", t->engine, t->engine == 1 ? "" : "s",
			 t->procs ? " in one process each (ncclCommInitRank)" : "", t->rounds);
		break;
	default:
		snprintf(buf, len, "kernel on GPU %d", t->engine);
	}
	return buf;
}

static void test_print(FILE *out, const struct vtest *t)
{
	char how[256];
	const char *st = t->skipped ? "SKIP" : !t->ok ? "FAIL" : t->warn[0] ? "WARN" : "OK";

	if (t->label[0])
		fprintf(out, "  %-11s %-4s  %-4s", vnames[t->method], t->label, st);
	else
		fprintf(out, "  %-11s %d->%d  %-4s", vnames[t->method], t->src, t->dst, st);
	if (t->skipped) {
		fprintf(out, "  %s\n", t->error);
	} else if (t->ok && t->method == V_PATH) {
		fprintf(out, "  %s%s%s\n", t->path, t->warn[0] ? "; " : "", t->warn);
	} else if (t->ok) {
		fprintf(out, "  %" PRIu64 " bytes, %s", t->bytes, test_how(t, how, sizeof(how)));
		if (t->gbps > 0)
			fprintf(out, ", %.1f GB/s", t->gbps);
		fprintf(out, "; %s: %s%s%s\n", t->proven ? "path" : "path not proven",
			t->path[0] ? t->path : "no proof made", t->warn[0] ? "; " : "", t->warn);
	} else {
		fprintf(out, "  %s\n", t->error);
		fprintf(out, "              usually: %s\n", vtest_hint(t));
	}
	fflush(out);	/* a line per test as it ends, also into a pipe */
}

static json_object *um_json(const struct vstate *v, int a, int b, const struct umpair *u)
{
	json_object *o = json_object_new_object(), *c = json_object_new_array();

	json_object_object_add(o, "status", json_object_new_string(umstatus[u->status]));
	if (u->reason[0])
		json_object_object_add(o, "reason", json_object_new_string(u->reason));
	json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)v->size));
	json_object_array_add(c, json_object_new_int(v->r.g[a].concurrent_managed));
	json_object_array_add(c, json_object_new_int(v->r.g[b].concurrent_managed));
	json_object_object_add(o, "concurrent_managed_access", c);
	json_object_object_add(o, "ok_tests", json_object_new_int(u->nok));
	json_object_object_add(o, "failed_tests", json_object_new_int(u->nfail));
	json_object_object_add(o, "skipped_tests", json_object_new_int(u->nskip));
	return o;
}

/* A test has ended: explain its error, and print its line at once. */
void vdone(struct vstate *v, struct vtest *t, int stop_before)
{
	/* A signal during the test: a failure may be the signal's doing (the
	 * ipc test's second process gets the terminal's SIGINT too). */
	if (!t->ok && !t->hung && !stop_before && dl_stop) {
		t->ok = 1;
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "not finished: interrupted (%s)", strsignal(dl_stop));
	}
	vexplain(v, t);
	if (v->out)
		test_print(v->out, t);
}

void um_print(FILE *out, const struct vstate *v, int a, int b, const struct umpair *u)
{
	fprintf(out, "  managed memory %d-%d: %s", a, b, umstatus[u->status]);
	if (u->status == UM_SKIPPED) {
		fprintf(out, ": %s\n", u->reason);
		return;
	}
	fprintf(out, " (%d OK, %d FAIL, %d not run; cuMemAllocManaged, %" PRIu64 " bytes)",
		u->nok, u->nfail, u->nskip, v->size);
	if (u->reason[0])
		fprintf(out, ": %s", u->reason);
	fprintf(out, "\n");
	fflush(out);
}

/* The grid cell of t: OK, OK* (path not proven), PART (vram: not all
 * tested), FAIL, HUNG, SKIP. */
static const char *cell_text(const struct vtest *t)
{
	return t->skipped ? "SKIP" : t->hung ? "HUNG" : !t->ok ? "FAIL" : t->partial ? "PART" :
	       t->proven ? "OK" : "OK*";
}

void pv_add(struct pverdict *pv, const struct vtest *t)
{
	if (t->method != V_NCCL)
		snprintf(pv->cell[t->method][t->src != pv->a], sizeof(pv->cell[0][0]), "%s",
			 cell_text(t));
	if (t->ok && t->partial)
		pv->partial = 1;
	if (t->method == V_PATH && t->ok && t->warn[0] && t->off_gbps > 0 &&
	    (!pv->warn_ratio || t->gbps / t->off_gbps < pv->warn_ratio))
		pv->warn_ratio = t->gbps / t->off_gbps;
	if (t->skipped || t->ok || t->method == V_NCCL)
		return;
	if (t->method == V_PATH && strstr(t->error, "staging speed"))
		pv->staging = 1;
	if (!strstr(pv->failed, vnames[t->method]) && strlen(pv->failed) < sizeof(pv->failed) - 16)
		snprintf(pv->failed + strlen(pv->failed), sizeof(pv->failed) - strlen(pv->failed), "%s%s",
			 pv->failed[0] ? ", " : "", vnames[t->method]);
	pv->nfail++;
}

/* Fold the pair's path tests (both ways) into pv. */
void pv_path(struct pverdict *pv, const struct vstate *v)
{
	int a = pv->a, b = pv->b;

	pv->measured = v->pm[a][b].done && v->pm[a][b].ok && v->pm[b][a].done && v->pm[b][a].ok;
	if (pv->measured) {
		pv->gbps = v->pm[a][b].on_gbps < v->pm[b][a].on_gbps ? v->pm[a][b].on_gbps :
			   v->pm[b][a].on_gbps;
		pv->us = v->pm[a][b].on_us > v->pm[b][a].on_us ? v->pm[a][b].on_us : v->pm[b][a].on_us;
	}
}

/*
 * The tests a plain "P2P verified" needs: the field's commonest faults
 * (stale SM loads, lost SM stores, flags out of order, a custom all-reduce's
 * wrong data: FIELD F2, F4, F5) pass every copy-engine copy, so the path and
 * ce tests alone cannot rule them out.
 */
static const int vkey[] = { V_SM_READ, V_SM_WRITE, V_FLAGS, V_FLAGS_POLL, V_CAR };

/* Did test m run (not skipped, one way at least) on pv's pair? */
static int pv_ran(const struct pverdict *pv, int m)
{
	for (int d = 0; d < 2; d++)
		if (pv->cell[m][d][0] && strcmp(pv->cell[m][d], "SKIP"))
			return 1;
	return 0;
}

/* The names of the key tests that did not run on pv's pair, into buf: how many. */
static int pv_keymiss(const struct pverdict *pv, char *buf, size_t len)
{
	int k = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(vkey) / sizeof(vkey[0]); i++)
		if (!pv_ran(pv, vkey[i])) {
			size_t l = strlen(buf);

			snprintf(buf + l, len - l, "%s%s", k++ ? ", " : "", vnames[vkey[i]]);
		}
	return k;
}

json_object *pv_keymiss_json(const struct pverdict *pv)
{
	json_object *o = json_object_new_array();

	for (size_t i = 0; i < sizeof(vkey) / sizeof(vkey[0]); i++)
		if (!pv_ran(pv, vkey[i]))
			json_object_array_add(o, json_object_new_string(vnames[vkey[i]]));
	return o;
}

/* "P2P verified" with what it rests on: "... for copy-engine copies only (sm-read, ... not run)" */
static void pv_verified(const struct pverdict *pv, char *buf, size_t len)
{
	char miss[128];
	int cecopy = 1;

	for (int m = 0; m < V_COUNT; m++)
		if (m != V_PATH && m != V_CE && m != V_UM_PREFETCH && pv_ran(pv, m))
			cecopy = 0;
	if (!pv_keymiss(pv, miss, sizeof(miss)))
		snprintf(buf, len, "P2P verified");
	else
		snprintf(buf, len, "P2P verified for %s (%s not run)",
			 cecopy ? "copy-engine copies only" : "the tests run", miss);
}

/* The verdict of a pair whose tests all passed, with the path measured. */
static void pv_ok_text(const struct pverdict *pv, char *buf, size_t len)
{
	char ver[192];
	size_t l;

	pv_verified(pv, ver, sizeof(ver));
	if (pv->link.kind != LINK_UNKNOWN)
		snprintf(buf, len, "%s, %.1f GB/s (%.0f%% of %s), %.1f us", ver, pv->gbps,
			 100 * pv->gbps / pv->link.gbps, pv->link.label, pv->us);
	else
		snprintf(buf, len, "%s, %.1f GB/s (line rate unknown), %.1f us", ver, pv->gbps, pv->us);
	l = strlen(buf);
	if (pv->warn_ratio > 0)
		snprintf(buf + l, len - l, "; WARN: peer copies only %.2fx the staged ones, though "
			 "their latency shows a direct path", pv->warn_ratio);

}

/* "0<->1: P2P verified, 25.1 GB/s (80% of PCIe Gen4 x16), 0.9 us" */
static void pv_text(const struct pverdict *pv, char *buf, size_t len)
{
	int l = snprintf(buf, len, "%d<->%d: ", pv->a, pv->b);

	if (l < 0 || (size_t)l >= len)
		return;
	buf += l;
	len -= (size_t)l;
	if (!pv->peer_ok && pv->noway[0])
		snprintf(buf, len, "P2P not available (%s: peer access could not be enabled)", pv->noway);
	else if (!pv->peer_ok)
		snprintf(buf, len, "P2P not available (cuDeviceCanAccessPeer says no)");
	else if (pv->staging)
		snprintf(buf, len, "P2P works at staging speed (FAIL: %s)", pv->failed);
	else if (pv->nfail)
		snprintf(buf, len, "P2P FAILED (%d test%s: %s)", pv->nfail, pv->nfail == 1 ? "" : "s",
			 pv->failed);
	else if (!pv->measured)
		snprintf(buf, len, "tests OK, path not measured (the path test did not run)");
	else
		pv_ok_text(pv, buf, len);
	l = strlen(buf);
	if (!pv->nfail && pv->partial)
		snprintf(buf + l, len - l, "; WARN: vram tested only part of free memory (the rest NOT "
			 "tested)");
}

/* Grid rows: the tests --tests selected that run per pair (not nccl). */
int grid_row(const struct vstate *v, int m)
{
	return m != V_NCCL && (v->tests & (1u << m)) &&
	       !(m >= V_UM_READ && m < V_CONCURRENT && v->no_managed);
}

/* Cells of the grid that did not run. */
static int pv_notrun(const struct pverdict *pv, const struct vstate *v)
{
	int k = 0;

	for (int m = 0; m < V_COUNT; m++)
		for (int d = 0; d < 2; d++)
			k += grid_row(v, m) && !pv->cell[m][d][0];
	return k;
}

/* The verdict line of a pair, with what an interrupted run left out. */
void pv_line(const struct pverdict *pv, const struct vstate *v, char *buf, size_t len)
{
	size_t l;
	int k = pv_notrun(pv, v);

	if (dl_stop && !pv->reached) {
		snprintf(buf, len, "%d<->%d: not tested (interrupted by %s)", pv->a, pv->b,
			 strsignal(dl_stop));
		return;
	}
	pv_text(pv, buf, len);
	l = strlen(buf);
	if (dl_stop && k && pv->peer_ok)
		snprintf(buf + l, len - l, "; partial: %d of the grid's tests not run (interrupted by %s)",
			 k, strsignal(dl_stop));
}

/*
 * The direction x test grid of a pair:
 *   0-1         0->1  1->0
 *   path        OK    OK
 */
void pv_grid(FILE *out, const struct pverdict *pv, const struct vstate *v)
{
	char d0[16], d1[16];

	snprintf(d0, sizeof(d0), "%d->%d", pv->a, pv->b);
	snprintf(d1, sizeof(d1), "%d->%d", pv->b, pv->a);
	fprintf(out, "  %d-%-10d %-5s %s\n", pv->a, pv->b, d0, d1);
	for (int m = 0; m < V_COUNT; m++)
		if (grid_row(v, m))
			fprintf(out, "  %-12s %-5s %s\n", vnames[m], pv->cell[m][0][0] ? pv->cell[m][0] : "-",
				pv->cell[m][1][0] ? pv->cell[m][1] : "-");
}

json_object *pv_grid_json(const struct pverdict *pv, const struct vstate *v)
{
	json_object *o = json_object_new_object();

	for (int m = 0; m < V_COUNT; m++) {
		json_object *d;

		if (!grid_row(v, m))
			continue;
		d = json_object_new_array();
		for (int k = 0; k < 2; k++)
			json_object_array_add(d, json_object_new_string(pv->cell[m][k][0] ? pv->cell[m][k] :
									  "-"));
		json_object_object_add(o, vnames[m], d);
	}
	return o;
}

void pair_json(struct vstate *v, json_object *jpairs, int a, int b, int pfail, const char *perr,
		      struct vtest *tests, int nt, const struct umpair *um)
{
	json_object *jp = json_object_new_object(), *jt = json_object_new_array();
	json_object *gp = json_object_new_array();

	json_object_array_add(gp, json_object_new_int(a));
	json_object_array_add(gp, json_object_new_int(b));
	json_object_object_add(jp, "gpus", gp);
	json_object_object_add(jp, "can_access_peer", json_object_new_boolean(
		a == b || (v->r.can_peer[a][b] && v->r.can_peer[b][a])));
	json_object_object_add(jp, "status", json_object_new_string(pfail ? "FAIL" : "OK"));
	if (perr[0])
		json_object_object_add(jp, "error", json_object_new_string(perr));
	for (int k = 0; k < nt; k++)
		json_object_array_add(jt, vtest_json(&tests[k]));
	json_object_object_add(jp, "tests", jt);
	json_object_object_add(jp, "managed", um_json(v, a, b, um));
	json_object_array_add(jpairs, jp);
}

/* The verdicts of the run, into root's "verdicts", and each pair's into its object. */
static void verdicts_json(struct vstate *v, struct vrun *r, json_object *root)
{
	json_object *jv = json_object_new_array();
	char line[512];

	for (int q = 0; q < r->npv; q++) {
		const struct pverdict *pv = &r->pvs[q];
		json_object *jp;

		pv_line(pv, v, line, sizeof(line));
		json_object_array_add(jv, json_object_new_string(line));
		if (r->pvjson[q] < 0)
			continue;
		jp = json_object_array_get_idx(r->jpairs, r->pvjson[q]);
		json_object_object_add(jp, "grid", pv_grid_json(pv, v));
		json_object_object_add(jp, "verdict", json_object_new_string(line));
		json_object_object_add(jp, "tests_not_run", pv_keymiss_json(pv));
		json_object_object_add(jp, "path_proven", json_object_new_boolean(
			pv->measured && !pv->nfail && pv->peer_ok));
		if (pv->link.kind != LINK_UNKNOWN) {
			json_object *jl = json_object_new_object();

			json_object_object_add(jl, "link", json_object_new_string(pv->link.label));
			json_object_object_add(jl, "gbps", json_object_new_double(
				(double)(int64_t)(pv->link.gbps * 100) / 100));
			json_object_object_add(jp, "line_rate", jl);
		}
	}
	if (r->nccl_verdict[0])
		json_object_array_add(jv, json_object_new_string(r->nccl_verdict));
	json_object_object_add(root, "verdicts", jv);
}

static void report_json(struct vstate *v, struct vrun *r, const char *result, FILE *out)
{
	json_object *o = json_object_new_object(), *jc = json_object_new_array();
	char seed[32];

	for (int k = 0; k < r->nct; k++)
		json_object_array_add(jc, vtest_json(&r->ctests[k]));
	snprintf(seed, sizeof(seed), "0x%016" PRIx64, v->seed0);
	json_object_object_add(o, "command", json_object_new_string("verify"));
	json_object_object_add(o, "format", json_object_new_int(2));
	json_object_object_add(o, "size_bytes", json_object_new_int64((int64_t)v->size));
	json_object_object_add(o, "seed", json_object_new_string(seed));
	json_object_object_add(o, "timeout_s", json_object_new_double(v->timeout));
	json_object_object_add(o, "loopback", json_object_new_boolean(v->loopback));
	json_object_object_add(o, "driver_version", json_object_new_int(v->r.driver_version));
	json_object_object_add(o, "devices", rig_devices_json(&v->r));
	json_object_object_add(o, "pairs", r->jpairs);
	json_object_object_add(o, "concurrent", jc);
	verdicts_json(v, r, o);
	json_object_object_add(o, "ok_tests", json_object_new_int(r->nok));
	json_object_object_add(o, "unproven_paths", json_object_new_int(r->nunproven));
	json_object_object_add(o, "failures", json_object_new_int(r->nfail));
	json_object_object_add(o, "skipped_tests", json_object_new_int(r->nskip));
	if (v->hung)
		json_object_object_add(o, "hung", json_object_new_string(v->hang));
	if (dl_stop)
		json_object_object_add(o, "interrupted", json_object_new_string(sigabbrev_np(dl_stop)));
	json_object_object_add(o, "result", json_object_new_string(result));
	fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void report_text(struct vstate *v, struct vrun *r, const char *result, FILE *out)
{
	char line[512];
	int rows = 0;

	for (int m = 0; m < V_COUNT; m++)
		rows += grid_row(v, m);
	if (r->npv && rows) {
		fprintf(out, "grid (test x direction: OK, OK* path not proven, PART not all tested, FAIL, HUNG, SKIP, - not run):\n");
		for (int q = 0; q < r->npv; q++)
			pv_grid(out, &r->pvs[q], v);
	}
	if (r->npv || r->nccl_verdict[0])
		fprintf(out, "verdict:\n");
	for (int q = 0; q < r->npv; q++) {
		pv_line(&r->pvs[q], v, line, sizeof(line));
		fprintf(out, "  %s\n", line);
	}
	if (r->nccl_verdict[0])
		fprintf(out, "  %s\n", r->nccl_verdict);
	for (int g = 0; g < r->n; g++)
		if (v->lost[g][0])
			fprintf(out, "  GPU %d: its context was lost to %s's fault (CUDA errors are "
				"sticky): the later tests that use GPU %d were not run\n", g, v->lost[g], g);
	if (dl_stop)
		fprintf(out, "verify: INTERRUPTED by SIG%s, a partial verdict (%d OK, %d FAIL", sigabbrev_np(dl_stop),
			r->nok, r->nfail);
	else
		fprintf(out, "verify: %s (%d OK, %d FAIL", result, r->nok, r->nfail);
	if (r->nskip)
		fprintf(out, ", %d skipped", r->nskip);
	fprintf(out, ")");
	if (r->nunproven)
		fprintf(out, "; %d OK without a proven path", r->nunproven);
	if (r->npartial)
		fprintf(out, "; %d vram test%s covered only part of free memory", r->npartial,
			r->npartial == 1 ? "" : "s");
	fprintf(out, "\n");
}

void verify_report(struct vstate *v, struct vrun *r, int json, FILE *out)
{
	/* a run in which every test was skipped proved nothing: not OK */
	const char *result = v->hung ? "HUNG" : dl_stop ? "INTERRUPTED" : r->nfail ? "FAIL" :
			     !r->nok ? "NO TEST RAN" : r->npartial ? "PARTIAL" : "OK";

	if (dl_stop && !r->nccl_verdict[0] && (v->tests & (1u << V_NCCL)) && !r->nccl_ran)
		snprintf(r->nccl_verdict, sizeof(r->nccl_verdict), "nccl: not run (interrupted by %s)",
			 strsignal(dl_stop));
	if (json)
		report_json(v, r, result, out);
	else
		report_text(v, r, result, out);
	fflush(out);
}

int verify_status(const struct vstate *v, const struct vrun *r)
{
	if (dl_stop && !v->hung)
		return 128 + dl_stop;	/* as a shell reports a command the signal ended */
	return r->nfail || v->hung || !r->nok ? P2P_EXIT_FAIL : P2P_EXIT_OK;
}
