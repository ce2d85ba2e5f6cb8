// SPDX-License-Identifier: GPL-2.0
/*
 * A fake libnccl.so.2 for the unit tests of p2pctl verify's nccl test: the
 * few entry points verify uses, over the fake libcuda's device memory (host
 * memory). An int32/float32 sum all-reduce runs when the group ends (or when
 * every rank has called, outside a group). FAKENCCL_WRONG=1 makes rank 0's
 * result wrong in one element (count / 2), as a broken transport would.
 * ncclAllGather gathers every rank's input in rank order.
 * FAKENCCL_HANG_INIT=1: ncclCommInitAll never returns (NCCL's init hanging
 * on a broken P2P path).
 * With NCCL_DEBUG=INFO and NCCL_DEBUG_FILE set, ncclCommInitAll appends
 * NCCL's channel lines to that file, two channels of a ring,
 * "... NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM", the transport
 * FAKENCCL_TRANSPORT (default P2P/CUMEM; SHM/direct/direct is what NCCL
 * uses when its topology check rules P2P out).
 *
 * One rank per process (ncclGetUniqueId + ncclCommInitRank): the ranks meet
 * in a file under /dev/shm named in the id (sparse: a header, then a 64 MiB
 * slot per rank); a rank's all-reduce copies its input into its slot, waits
 * for every rank's, sums them all into its result, then waits until every
 * rank has read before the next. Each rank logs only its own channel lines.
 * FAKENCCL_RANK_FAULT, on rank FAKENCCL_RANK (default 0) only: hang-init
 * its ncclCommInitRank never returns; die: its process exits (status 3) in
 * its first all-reduce; wrong: its results are wrong in one element;
 * chatty: it writes 64 KiB of messages to stderr in ncclCommInitRank.
 */
#include <fcntl.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ncclComm { int rank, n; struct group *g; struct shared *sh; int seq; };
/* The meeting place of one process per rank. */
#define SLOT (64UL << 20)
struct shared { int joined, done; int in[16], out[16]; char pad[4096 - 136]; };
struct group { int n, called; struct call { const void *s; void *r; size_t count; int type, gather; } c[16]; };
typedef struct ncclComm *ncclComm_t;

static int depth;
static struct group *pending[64];
static int npending;

/* FAKENCCL_HANG_INIT as it was when the library was opened (p2pctl asks for
 * the version then, in its own thread): the init thread may start only
 * after the test has reset the environment. */
static int hang_init;

int ncclGetVersion(int *v)
{
	hang_init = getenv("FAKENCCL_HANG_INIT") && atoi(getenv("FAKENCCL_HANG_INIT"));
	*v = 22703;
	return 0;
}

const char *ncclGetErrorString(int r)
{
	return r ? "fake NCCL error" : "no error";
}

/*
 * NCCL's debug file, as NCCL keeps it: opened once with "w" at its first
 * line and written at its own offset from then on (NCCL's ncclDebugInit).
 * Opened again only when the file at that path is another one (a later
 * verify_main of the same test process removed it), which NCCL never sees.
 */
static FILE *debug_file(const char *path)
{
	static FILE *f;
	static char fpath[512];
	struct stat a, b;

	if (f && (strcmp(path, fpath) || stat(path, &a) || fstat(fileno(f), &b) || a.st_ino != b.st_ino)) {
		fclose(f);
		f = NULL;
	}
	if (!f) {
		f = fopen(path, "w");
		snprintf(fpath, sizeof(fpath), "%s", path);
	}
	return f;
}

/* NCCL's INFO lines of the connections it set up (rank < 0: all ranks'). */
static void debug_channels(int n, int rank)
{
	const char *d = getenv("NCCL_DEBUG"), *path = getenv("NCCL_DEBUG_FILE");
	const char *tr = getenv("FAKENCCL_TRANSPORT");
	FILE *f;

	if (!d || strcasecmp(d, "INFO") || !path || n < 2)
		return;
	f = debug_file(path);
	if (!f)
		return;
	for (int c = 0; c < 2; c++)
		for (int r = 0; r < n; r++)
			if (rank < 0 || r == rank)
				fprintf(f, "fakehost:%d:%d [%d] NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via %s\n",
				(int)getpid(), (int)getpid(), r, c, r, r, (r + 1) % n, (r + 1) % n,
				tr && *tr ? tr : "P2P/CUMEM");
	fflush(f);
}

int ncclCommInitAll(ncclComm_t *comm, int n, const int *devs)
{
	struct group *g;

	(void)devs;
	if (hang_init)
		for (;;)
			pause();
	if (n < 1 || n > 16)
		return 4;	/* ncclInvalidArgument */
	debug_channels(n, -1);
	g = calloc(1, sizeof(*g));
	g->n = n;
	for (int i = 0; i < n; i++) {
		comm[i] = calloc(1, sizeof(**comm));
		comm[i]->rank = i;
		comm[i]->n = n;
		comm[i]->g = g;
	}
	return 0;
}

/* The fault knobs of one-process-per-rank: on this rank? */
static int fault(const char *what, int rank)
{
	const char *f = getenv("FAKENCCL_RANK_FAULT"), *r = getenv("FAKENCCL_RANK");

	return f && !strcmp(f, what) && rank == (r ? atoi(r) : 0);
}

int ncclGetUniqueId(char id[128])
{
	static int seq;

	memset(id, 0, 128);
	snprintf(id, 128, "/dev/shm/fakenccl-%d-%d-%ld", (int)getpid(), seq++, (long)time(NULL));
	return 0;
}

static void nap(void)
{
	struct timespec ts = { 0, 100000 };

	nanosleep(&ts, NULL);
}

/* Every rank's counter at k reached at least v. */
static void barrier(const int *k, int n, int v)
{
	for (int i = 0; i < n; i++)
		while (__atomic_load_n(&k[i], __ATOMIC_ACQUIRE) < v)
			nap();
}

/* ncclUniqueId is 128 bytes passed by value. */
struct uid { char b[128]; };

int ncclCommInitRank(ncclComm_t *comm, int n, struct uid id, int rank)
{
	int fd;
	struct shared *sh;

	if (n < 1 || n > 16 || rank < 0 || rank >= n)
		return 4;
	id.b[127] = '\0';
	fd = open(id.b, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)(sizeof(*sh) + SLOT * (size_t)n)))
		return 2;	/* ncclSystemError */
	sh = mmap(NULL, sizeof(*sh) + SLOT * (size_t)n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sh == MAP_FAILED)
		return 2;
	debug_channels(n, rank);
	if (fault("chatty", rank))
		for (int i = 0; i < 1024; i++)
			fprintf(stderr, "fakenccl: a message of 64 bytes that p2pctl must read past %05d\n", i);
	/* as NCCL's init: every rank waits for all */
	__atomic_add_fetch(&sh->joined, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&sh->joined, __ATOMIC_ACQUIRE) < n)
		nap();
	if (!rank)
		unlink(id.b);
	/* after joining, so that the file goes; the other ranks go on */
	if (fault("hang-init", rank))
		for (;;)
			pause();
	*comm = calloc(1, sizeof(**comm));
	(*comm)->rank = rank;
	(*comm)->n = n;
	(*comm)->sh = sh;
	return 0;
}

/* A collective across processes: int32/float32 sum, or gather. */
static int collective_shared(const void *s, void *r, size_t count, int type, int gather, ncclComm_t c)
{
	char *slot = (char *)(c->sh + 1);
	int v = ++c->seq;

	if (count * 4 > SLOT)
		return 4;
	if (fault("die", c->rank))
		_exit(3);
	/* the previous collective's results are read by all: the slots are free */
	barrier(c->sh->out, c->n, v - 1);
	memcpy(slot + SLOT * (size_t)c->rank, s, count * 4);
	__atomic_store_n(&c->sh->in[c->rank], v, __ATOMIC_RELEASE);
	barrier(c->sh->in, c->n, v);
	if (gather) {
		for (int k = 0; k < c->n; k++)
			memcpy((char *)r + (size_t)k * count * 4, slot + SLOT * (size_t)k, count * 4);
	} else {
		for (size_t e = 0; e < count; e++) {
			int32_t si = 0;
			float sf = 0;

			for (int k = 0; k < c->n; k++) {
				const char *p = slot + SLOT * (size_t)k + e * 4;

				if (type == 7)
					sf += *(const float *)p;
				else
					si += *(const int32_t *)p;
			}
			if (type == 7)
				((float *)r)[e] = sf;
			else
				((int32_t *)r)[e] = si;
		}
	}
	if (fault("wrong", c->rank) && count)
		((int32_t *)r)[(gather ? count * c->n : count) / 2] += 1;
	__atomic_store_n(&c->sh->out[c->rank], v, __ATOMIC_RELEASE);
	return 0;
}

/* FAKENCCL_COUNT_FILE: "a<count> " per all-reduce run, "g<count> " per
 * all-gather (count per rank), for tests that count and order them. */
static void count_collective(size_t count, int gather)
{
	const char *path = getenv("FAKENCCL_COUNT_FILE");
	FILE *f = path ? fopen(path, "a") : NULL;

	if (f) {
		fprintf(f, "%c%zu ", gather ? 'g' : 'a', count);
		fclose(f);
	}
}

static void run(struct group *g)
{
	size_t count = g->c[0].count;
	int32_t *sum = calloc(count ? count : 1, 4);
	float *fsum = calloc(count ? count : 1, 4);
	size_t out = g->c[0].gather ? count * g->n : count;

	if (g->c[0].gather) {
		for (int i = 0; i < g->n; i++)
			for (int k = 0; k < g->n; k++)
				memcpy((char *)g->c[i].r + (size_t)k * count * 4, g->c[k].s, count * 4);
	} else if (g->c[0].type == 7) {
		for (int i = 0; i < g->n; i++)
			for (size_t e = 0; e < count; e++)
				fsum[e] += ((const float *)g->c[i].s)[e];
		for (int i = 0; i < g->n; i++)
			memcpy(g->c[i].r, fsum, count * 4);
	} else {
		for (int i = 0; i < g->n; i++)
			for (size_t e = 0; e < count; e++)
				sum[e] += ((const int32_t *)g->c[i].s)[e];
		for (int i = 0; i < g->n; i++)
			memcpy(g->c[i].r, sum, count * 4);
	}
	if (getenv("FAKENCCL_WRONG") && atoi(getenv("FAKENCCL_WRONG")) && out)
		((int32_t *)g->c[0].r)[out / 2] += 1;
	free(sum);
	free(fsum);
	g->called = 0;
	count_collective(count, g->c[0].gather);
}

/*
 * A rank's part of a collective (gather 0: all-reduce, 1: all-gather): it
 * runs when the last rank of the group has called, at the end of the
 * outermost ncclGroupEnd if inside a group.
 */
static int collective(const void *s, void *r, size_t count, int type, int gather, ncclComm_t comm)
{
	struct group *g = comm->g;

	if (type != 2 && type != 7)
		return 4;	/* ncclInvalidArgument: int32 and float32 only */
	if (comm->sh)
		return collective_shared(s, r, count, type, gather, comm);
	g->c[comm->rank] = (struct call){ s, r, count, type, gather };
	if (++g->called < g->n)
		return 0;
	if (depth) {
		pending[npending++] = g;
		return 0;
	}
	run(g);
	return 0;
}

int ncclAllReduce(const void *s, void *r, size_t count, int type, int op, ncclComm_t comm, void *stream)
{
	(void)stream;
	if (op != 0)
		return 4;	/* sum only */
	return collective(s, r, count, type, 0, comm);
}

int ncclAllGather(const void *s, void *r, size_t count, int type, ncclComm_t comm, void *stream)
{
	(void)stream;
	return collective(s, r, count, type, 1, comm);
}

int ncclGroupStart(void)
{
	depth++;
	return 0;
}

int ncclGroupEnd(void)
{
	if (--depth)
		return 0;
	for (int i = 0; i < npending; i++)
		run(pending[i]);
	npending = 0;
	return 0;
}

static int destroy(ncclComm_t c)
{
	if (c->sh) {
		munmap(c->sh, sizeof(*c->sh) + SLOT * (size_t)c->n);
		free(c);
		return 0;
	}
	if (c->rank == c->n - 1)
		free(c->g);
	free(c);
	return 0;
}

int ncclCommDestroy(ncclComm_t c) { return destroy(c); }
int ncclCommAbort(ncclComm_t c) { return destroy(c); }
