// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl verify's nccl test with one process per GPU, as PyTorch and vLLM
 * run NCCL: rank 0 (a process of its own) calls ncclGetUniqueId and prints
 * the id; verify starts the other ranks with it; every rank calls
 * ncclCommInitRank, then the all-reduces of the in-process test
 * (nccl_call(): 8 B to 64 MiB capped by --size, in place and out of place,
 * on the one communicator), each rank checking its own result. Each rank
 * tells verify which stage it is in; a rank that stays in one past its
 * deadline is killed and named with the stage, a rank that dies is named
 * with its exit status. Each rank's NCCL debug output goes into a file of
 * its own, read afterwards for the transport per channel.
 */
#include <poll.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "verify.h"
#include "ncclx.h"

#define NCCL_MAX_BYTES (64ULL << 20)
#define NC "nccl-child: "

struct nspec {
	int rank, n, gs[P2P_MAX_GPUS];
	uint64_t seed, max;
	double timeout;
	char id[257], log[256];
};

/* "rank=R,n=N,gpus=A.B..,seed=X,max=B,t=S,id=HEX|new[,log=PATH]" */
static int nspec_parse(const char *s, struct nspec *p)
{
	char gpus[64], *c, *l;
	int k = 0;

	memset(p, 0, sizeof(*p));
	if (sscanf(s, "rank=%d,n=%d,gpus=%63[0-9.],seed=%" SCNx64 ",max=%" SCNu64 ",t=%lf,id=%256[0-9a-fnew]",
		   &p->rank, &p->n, gpus, &p->seed, &p->max, &p->timeout, p->id) != 7 || p->n < 1 ||
	    p->n > P2P_MAX_GPUS || p->rank < 0 || p->rank >= p->n || p->max < 8)
		return -1;
	for (c = gpus; k < p->n; k++) {
		p->gs[k] = (int)strtol(c, &l, 10);
		if (l == c || p->gs[k] < 0 || p->gs[k] >= P2P_MAX_GPUS)
			return -1;
		c = *l == '.' ? l + 1 : l;
	}
	l = strstr(s, ",log=");
	if (l)
		snprintf(p->log, sizeof(p->log), "%s", l + 5);
	return 0;
}

/*
 * A rank: "nccl-child: ID HEX" (rank 0), "nccl-child: STAGE what" before
 * each step, then "nccl-child: OK rounds bytes" or "nccl-child: FAIL text"
 * (HUNG text: a collective ran past the deadline; the context is stuck, so
 * the process exits without teardown).
 */
int nccl_child(const char *spec, FILE *out)
{
	struct nspec p;
	struct rig *r = calloc(1, sizeof(*r));
	int use[P2P_MAX_GPUS] = { 0 }, g, rc = P2P_EXIT_FAIL, rounds = 0, nr, inplace;
	int32_t *host = NULL, *want = NULL, *got = NULL;
	char emsg[512], rankf[300];
	ncclxUniqueId id;
	ncclComm_t comm = NULL;
	uint64_t bytes = 0;

	vchild_init();
	if (!r || nspec_parse(spec, &p)) {
		fprintf(out, NC "FAIL bad --nccl-child '%s'\n", spec);
		free(r);
		return P2P_EXIT_USAGE;
	}
	g = p.gs[p.rank];
	/* this rank's own NCCL debug file; NCCL reads it at its first call */
	if (p.log[0]) {
		snprintf(rankf, sizeof(rankf), "%s.%d", p.log, p.rank);
		setenv("NCCL_DEBUG_FILE", rankf, 1);
	}
	fprintf(out, NC "STAGE loading CUDA and NCCL\n");
	fflush(out);
	if (cu_open(emsg, sizeof(emsg)) || ncclx_open(emsg, sizeof(emsg))) {
		fprintf(out, NC "FAIL %s\n", emsg);
		goto out;
	}
	if (!nx.GetUniqueId || !nx.CommInitRank) {
		fprintf(out, NC "FAIL %s lacks ncclGetUniqueId or ncclCommInitRank\n", nx.path);
		goto out;
	}
	use[g] = 1;
	if (rig_open(r, use, p.max, 0, emsg, sizeof(emsg))) {
		fprintf(out, NC "FAIL %s\n", emsg);
		goto close;
	}
	host = malloc(p.max);
	want = malloc(p.max);
	got = malloc(p.max);
	if (!host || !want || !got || rig_cur(r, g) != CUDA_SUCCESS) {
		fprintf(out, NC "FAIL out of host memory or no context on GPU %d\n", g);
		goto close;
	}
	if (!strcmp(p.id, "new")) {
		char hex[257];

		fprintf(out, NC "STAGE ncclGetUniqueId\n");
		fflush(out);
		if ((nr = nx.GetUniqueId(&id))) {
			fprintf(out, NC "FAIL ncclGetUniqueId: %s\n", nx.GetErrorString(nr));
			goto close;
		}
		vhex(hex, &id, sizeof(id));
		fprintf(out, NC "ID %s\n", hex);
	} else if (strlen(p.id) != 2 * sizeof(id) || vunhex(&id, p.id, sizeof(id))) {
		fprintf(out, NC "FAIL bad id\n");
		goto close;
	}
	fprintf(out, NC "STAGE ncclCommInitRank\n");
	fflush(out);
	if ((nr = nx.CommInitRank(&comm, p.n, id, p.rank))) {
		fprintf(out, NC "FAIL ncclCommInitRank: %s\n", nx.GetErrorString(nr));
		goto close;
	}
	/* the calls of the in-process test, on this one communicator */
	for (uint64_t b; !nccl_call(p.max, rounds, &b, &inplace);) {
		size_t count = (size_t)(b / NCCLX_ELEM), el;
		uint64_t seed = p.seed + (uint64_t)rounds * 0x100000000ULL, off, nbad;
		CUstream s = r->g[g].s[0];
		CUdeviceptr in = inplace ? r->g[g].dst : r->g[g].src;
		const char *ip = inplace ? " in place" : "";
		CUresult cr;
		uint8_t e8, g8;

		for (size_t e = 0; e < count; e++) {
			int64_t sum = 0;

			for (int k = 0; k < p.n; k++)
				sum += nccl_elem(seed, p.gs[k], e);
			want[e] = (int32_t)sum;
			host[e] = nccl_elem(seed, g, e);
		}
		/* the input in place before NCCL's call, as the in-process test's */
		cr = inplace ? CUDA_SUCCESS : cu.cuMemsetD32Async(r->g[g].dst, POISON, count, s);
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemcpyHtoDAsync(in, host, b, s);
		if (cr == CUDA_SUCCESS)
			cr = vchild_wait(s, p.timeout);
		if (cr != CUDA_SUCCESS) {
			fprintf(out, NC "FAIL %" PRIu64 " bytes%s: upload on GPU %d: %s\n", b, ip, g, cu_errstr(cr));
			goto close;
		}
		fprintf(out, NC "STAGE all-reduce of %" PRIu64 " bytes%s\n", b, ip);
		fflush(out);
		nr = nx.AllReduce((void *)(uintptr_t)in, (void *)(uintptr_t)r->g[g].dst, count, NCCLX_INT32,
				  NCCLX_SUM, comm, s);
		if (nr) {
			fprintf(out, NC "FAIL %" PRIu64 " bytes%s: ncclAllReduce: %s\n", b, ip, nx.GetErrorString(nr));
			goto close;
		}
		cr = vchild_wait(s, p.timeout);
		if (cr == CUDA_ERROR_NOT_READY) {
			fprintf(out, NC "HUNG %" PRIu64 " bytes%s: the all-reduce did not finish within %.3g s "
				"on GPU %d\n", b, ip, p.timeout, g);
			vchild_stuck(out);
		}
		if (cr == CUDA_SUCCESS)
			cr = cu.cuMemcpyDtoH(got, r->g[g].dst, b);
		if (cr != CUDA_SUCCESS) {
			fprintf(out, NC "FAIL %" PRIu64 " bytes%s: the all-reduce on GPU %d: %s\n", b, ip, g,
				cu_errstr(cr));
			goto close;
		}
		if (pattern_compare((uint8_t *)got, (uint8_t *)want, b, &off, &e8, &g8, &nbad)) {
			el = off / NCCLX_ELEM;
			fprintf(out, NC "FAIL %" PRIu64 " bytes%s: GPU %d's result: element %zu is %d, the sum "
				"is %d (%" PRIu64 " bytes of %" PRIu64 " differ)\n", b, ip, g, el, got[el],
				want[el], nbad, b);
			goto close;
		}
		rounds++;
		bytes += b;
	}
	fprintf(out, NC "STAGE ncclCommDestroy\n");
	fflush(out);
	nx.CommDestroy(comm);
	comm = NULL;
	fprintf(out, NC "OK %d %" PRIu64 "\n", rounds, bytes);
	rc = 0;
close:
	if (comm)
		nx.CommAbort(comm);
	rig_close(r);
	cu_close();
out:
	fflush(out);
	free(host);
	free(want);
	free(got);
	free(r);
	return rc;
}

/* One rank's process, seen from verify. */
struct nrank {
	struct vchild proc;	/* proc.fd -1: ended (proc.status from waitpid) */
	char stage[96];		/* the last STAGE it named */
	double since;		/* when it named it */
	int inited;		/* it has entered ncclCommInitRank, at initat */
	double initat;
};

/* Read what the ranks wrote; update their stages; reap the ones that ended. */
static void nrank_pump(struct nrank *c, int n, int ms)
{
	struct pollfd p[P2P_MAX_GPUS];

	for (int k = 0; k < n; k++)
		p[k] = (struct pollfd){ c[k].proc.fd, POLLIN, 0 };
	if (poll(p, (nfds_t)n, ms) <= 0)
		return;
	for (int k = 0; k < n; k++) {
		struct vchild *ch = &c[k].proc;
		char *s, *e;

		if (ch->fd < 0 || !(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		/* a chatty rank (driver or NCCL messages on stderr): keep the newer half,
		 * and keep reading, so that it never blocks on a full pipe */
		if (ch->got >= sizeof(ch->buf) - 256) {
			size_t h = ch->got / 2;

			memmove(ch->buf, ch->buf + h, ch->got - h);
			ch->got -= h;
		}
		vchild_take(ch);
		/* the last complete STAGE line: a new one starts its deadline */
		for (s = ch->buf, e = NULL; (s = strstr(s, NC "STAGE ")) && strchr(s, '\n'); s++)
			e = s;
		if (e) {
			char st[96];

			snprintf(st, sizeof(st), "%.*s", (int)(strchr(e, '\n') - e - 18), e + 18);
			if (strcmp(st, c[k].stage)) {
				snprintf(c[k].stage, sizeof(c[k].stage), "%s", st);
				c[k].since = now_s();
				if (!strcmp(st, "ncclCommInitRank")) {
					c[k].inited = 1;
					c[k].initat = c[k].since;
				}
			}
		}
	}
}

/* The line after "nccl-child: WORD " in c's output, into buf; 0 if none. */
static int nrank_line(const struct nrank *c, const char *word, char *buf, size_t len)
{
	char key[32];
	const char *s;
	int n;

	snprintf(key, sizeof(key), NC "%s ", word);
	s = vchild_line(c->proc.buf, key, &n);
	if (!s)
		return 0;
	snprintf(buf, len, "%.*s", n, s);
	return 1;
}

/*
 * The rank files log.R into one file, log.procs, for nccl_transport. Never
 * into verify's own log: the NCCL of this process holds that open and
 * writes at its own offset, over anything appended.
 */
static void nrank_logs(const struct vstate *v, int n)
{
	char procs[300];
	FILE *o;

	if (!v->nccl_log[0])
		return;
	snprintf(procs, sizeof(procs), "%s.procs", v->nccl_log);
	o = fopen(procs, "w");
	if (!o)
		return;
	for (int k = 0; k < n; k++) {
		char path[300], line[1024];
		FILE *f;

		snprintf(path, sizeof(path), "%s.%d", v->nccl_log, k);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			fputs(line, o);
		if (f)
			fclose(f);
		unlink(path);
	}
	fclose(o);
}

/*
 * Start rank k (id: "new" for rank 0). 0, or -1 with t failed.
 */
static int nrank_start(struct vstate *v, struct vtest *t, struct nrank *c, const int *gs, int ng,
		       int k, const char *id, uint64_t max)
{
	char spec[700], gl[64] = "";
	size_t l = 0;

	for (int i = 0; i < ng; i++)
		l += (size_t)snprintf(gl + l, sizeof(gl) - l, "%s%d", i ? "." : "", gs[i]);
	l = (size_t)snprintf(spec, sizeof(spec), "rank=%d,n=%d,gpus=%s,seed=%" PRIx64 ",max=%" PRIu64
			     ",t=%g,id=%s", k, ng, gl, v->seed, max, v->timeout, id);
	if (v->nccl_log[0])
		snprintf(spec + l, sizeof(spec) - l, ",log=%s", v->nccl_log);
	memset(&c[k], 0, sizeof(c[k]));
	snprintf(c[k].stage, sizeof(c[k].stage), "starting");
	c[k].since = now_s();
	if (vchild_start(t, "--nccl-child", spec, &c[k].proc))
		return -1;
	return 0;
}

/*
 * A deadline passed for rank k (limit s in its stage): kill every rank still
 * running; t fails naming each with its stage.
 */
static void nrank_stuck(struct vtest *t, struct nrank *c, int n, const int *gs, int k, double limit)
{
	char who[600] = "";
	size_t l = 0;
	int nk = 0, last = -1;

	for (int j = 0; j < n; j++)
		nk += c[j].proc.fd >= 0;
	for (int j = 0; j < n; j++) {
		if (c[j].proc.fd < 0)
			continue;
		l += (size_t)snprintf(who + l, sizeof(who) - l, "%s rank %d (GPU %d) in %s",
				      last < 0 ? "" : ",", j, gs[j], c[j].stage);
		last = j;
		vchild_kill(&c[j].proc);
		if (l >= sizeof(who))
			break;
	}
	t->ok = 0;
	t->hung = 1;
	snprintf(t->error, sizeof(t->error), "%s%s still running after %.3g s (a process per rank) and "
		 "%s killed: %s", who + 1, nk > 1 ? " were" : " was", limit, nk > 1 ? "were" : "was",
		 !strcmp(c[k].stage, "ncclCommInitRank") ? "NCCL's init hangs (often peer access "
		 "that hangs on first use; try NCCL_P2P_DISABLE=1 to see whether P2P is the cause)" :
		 strncmp(c[k].stage, "all-reduce", 10) ? "it hangs" : "the all-reduce hangs");
}

/* Interrupted: the ranks still running are killed; t is skipped, naming them. */
static void nrank_interrupted(struct vtest *t, struct nrank *c, int n, const int *gs)
{
	size_t l = (size_t)snprintf(t->error, sizeof(t->error), "interrupted by %s:", strsignal(dl_stop));
	int nk = 0;

	for (int j = 0; j < n; j++) {
		if (c[j].proc.fd < 0)
			continue;
		if (l < sizeof(t->error))
			l += (size_t)snprintf(t->error + l, sizeof(t->error) - l, "%s rank %d (GPU %d) in %s",
					      nk++ ? "," : "", j, gs[j], c[j].stage);
		vchild_kill(&c[j].proc);
	}
	if (l < sizeof(t->error))
		snprintf(t->error + l, sizeof(t->error) - l, "%s", nk ? " (killed)" : " none running");
	t->skipped = 1;
}

/* Why rank k ended without OK, into t->error (the first such rank wins). */
static void nrank_why(struct vtest *t, const struct nrank *c, int k, int gpu)
{
	char l[800];

	t->ok = 0;
	if (c->proc.killed) {
		t->hung = 1;	/* told by nrank_stuck */
	} else if (nrank_line(c, "HUNG", l, sizeof(l))) {
		t->hung = 1;
		snprintf(t->error, sizeof(t->error), "rank %d (GPU %d): %s", k, gpu, l);
	} else if (nrank_line(c, "FAIL", l, sizeof(l))) {
		snprintf(t->error, sizeof(t->error), "rank %d (GPU %d): %s", k, gpu, l);
	} else if (WIFSIGNALED(c->proc.status)) {
		snprintf(t->error, sizeof(t->error), "rank %d (GPU %d)'s process died of signal %d (%s) in %s",
			 k, gpu, WTERMSIG(c->proc.status), strsignal(WTERMSIG(c->proc.status)), c->stage);
	} else {
		snprintf(t->error, sizeof(t->error), "rank %d (GPU %d)'s process exited with status %d in %s, "
			 "without a result", k, gpu, WEXITSTATUS(c->proc.status), c->stage);
	}
}

/*
 * The nccl test of GPU set gs with one process per GPU. Deadlines: starting
 * (loading CUDA, NCCL, the kernels) vchild_limit, 3 x --timeout + 10 s; ncclCommInitRank
 * --timeout from when the last rank entered it (the ranks wait for each
 * other); each all-reduce --timeout + 2 s (the rank's own wait is --timeout,
 * so its HUNG line comes first). Once a rank has ended without OK, the
 * others get 2 s.
 */
void run_nccl_procs(struct vstate *v, struct vtest *t, const int *gs, int ng)
{
	struct nrank c[P2P_MAX_GPUS];
	uint64_t max = v->size < NCCL_MAX_BYTES ? v->size : NCCL_MAX_BYTES;
	char id[300] = "", l[300];
	double firstbad = 0;
	int started = 0, bad = -1;

	t->ok = 1;
	t->method = V_NCCL;
	t->src = gs[0];
	t->dst = gs[ng - 1];
	t->engine = ng;
	t->procs = 1;
	if (max < 8) {
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "--size is below the 8 bytes it needs");
		return;
	}
	if (!nx.GetUniqueId || !nx.CommInitRank) {
		t->skipped = 1;
		snprintf(t->error, sizeof(t->error), "%.900s lacks ncclGetUniqueId or ncclCommInitRank", nx.path);
		return;
	}
	max -= max % NCCLX_ELEM;
	if (nrank_start(v, t, c, gs, ng, 0, "new", max))
		return;
	started = 1;
	for (;;) {
		double now = now_s(), end, lastinit = 0;
		int live = 0, ininit = 0;

		if (dl_stop) {
			/* SIGINT or SIGTERM: every rank ends now, named with its stage */
			nrank_interrupted(t, c, started, gs);
			break;
		}

		/* rank 0's id: start the others */
		if (started == 1 && c[0].proc.fd >= 0 && nrank_line(&c[0], "ID", id, sizeof(id)) &&
		    strchr(strstr(c[0].proc.buf, NC "ID ") + 15, '\n')) {
			for (int k = 1; k < ng; k++) {
				if (nrank_start(v, t, c, gs, ng, k, id, max)) {
					for (int i = 0; i < k; i++)
						vchild_kill(&c[i].proc);
					return;
				}
				started++;
			}
		}
		/* the ranks that have entered init, the last of them when */
		for (int k = 0; k < started; k++) {
			if (c[k].inited) {
				ininit++;
				if (c[k].initat > lastinit)
					lastinit = c[k].initat;
			}
		}
		for (int k = 0; k < started; k++) {
			double lim;

			if (c[k].proc.fd < 0) {
				if (bad < 0 && !nrank_line(&c[k], "OK", l, sizeof(l))) {
					bad = k;
					firstbad = now;
				}
				continue;
			}
			live++;
			if (!strcmp(c[k].stage, "ncclCommInitRank"))
				lim = ininit == ng ? lastinit + v->timeout : c[k].since + vchild_limit(v);
			else if (!strncmp(c[k].stage, "all-reduce", 10))
				lim = c[k].since + v->timeout + 2;
			else
				lim = c[k].since + vchild_limit(v);
			if (bad >= 0 && firstbad + 2 < lim)
				lim = firstbad + 2;
			if (now > lim && bad >= 0) {
				vchild_kill(&c[k].proc);
				live--;
			} else if (now > lim) {
				/* every rank still running is named: NCCL's ranks wait for each other,
				 * so which one is stuck is not visible from outside */
				double limit = !strcmp(c[k].stage, "ncclCommInitRank") && ininit == ng ?
					       v->timeout : lim - c[k].since;

				nrank_stuck(t, c, started, gs, k, limit);
				bad = k;
				firstbad = now;
				live = 0;
			}
		}
		if (!live && started == ng)
			break;
		if (!live) {
			/* rank 0 ended before printing its id */
			if (bad < 0)
				bad = 0;
			break;
		}
		end = now + 0.05;
		nrank_pump(c, started, (int)((end - now) * 1000));
	}
	if (bad >= 0 && t->ok && !t->skipped)
		nrank_why(t, &c[bad], bad, gs[bad]);
	for (int k = 0; k < started; k++)
		vchild_kill(&c[k].proc);	/* the ones still running */
	nrank_logs(v, started);
	if (!t->ok || t->skipped)
		return;
	nrank_line(&c[0], "OK", l, sizeof(l));
	if (sscanf(l, "%d %" SCNu64, &t->rounds, &t->bytes) != 2) {
		t->ok = 0;
		snprintf(t->error, sizeof(t->error), "rank 0 (GPU %d) gave no result", gs[0]);
		return;
	}
	v->seed += (uint64_t)t->rounds << 32;	/* past the ranks' seeds */
}
