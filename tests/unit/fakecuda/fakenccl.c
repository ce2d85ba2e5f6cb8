// SPDX-License-Identifier: GPL-2.0
/*
 * A fake libnccl.so.2 for the unit tests of p2pctl verify's nccl test and
 * bench --nccl: the few entry points they use, over the fake libcuda's
 * device memory (host memory).
 *
 * Collectives run on the stream, as NCCL's kernels do: each rank's part is
 * queued on its stream (fakecuda_host_op, the fake libcuda's hook) when it is
 * launched (at the outermost ncclGroupEnd inside a group, at the call
 * outside one), and runs when something waits for that stream, reading the
 * inputs then: work queued earlier on the same stream is seen, work on
 * other streams only if something ordered it. A rank's part waits for every
 * rank's (the stream stays not ready meanwhile), then the collective runs
 * once for all. int32/float32 sum all-reduce, and ncclAllGather (every
 * rank's input in rank order). ncclCommDestroy waits for the
 * communicator's collectives to finish, as NCCL's (finalize) does: it never
 * returns while one is stuck on its stream; ncclCommAbort does not wait.
 *
 * Faults (each collective counts per communicator from 1; those marked * hit
 * only collectives from the FAKENCCL_FROM-th on, default 1):
 *   FAKENCCL_WRONG=1     * rank 0's result is wrong in one element (the middle)
 *   FAKENCCL_HANG_INIT=1   ncclCommInitAll never returns
 *   FAKENCCL_FAULT=LIST  comma-separated:
 *     stale       * a rank's input is read from the copy NCCL took at the
 *                   first collective over that buffer and count, not from the
 *                   buffer (a cached mapping that never sees new data): a
 *                   result right once, and unchanged while the inputs change
 *     inplace     * in-place calls (result buffer = input, or for all-gather
 *                   input = result + rank x count) are wrong in one element
 *     npot        * counts that are not a power of two leave the last element
 *                   of every result unwritten (a remainder path missing)
 *     stream-hang * the collective never finishes on the stream (queries say
 *                   not ready for good; ncclCommDestroy then never returns)
 *     groupend-hang  the ncclGroupEnd that launches the FAKENCCL_FROM-th
 *                   collective never returns
 *     destroy-hang   ncclCommDestroy never returns
 *     quiet         NCCL logs no channel lines (NCCL_DEBUG=INFO or not)
 *   Every hang ignores signals, as a thread blocked in NCCL does.
 *
 * With NCCL_DEBUG=INFO and NCCL_DEBUG_FILE set (and NCCL_DEBUG_SUBSYS unset
 * or naming INIT or ALL, as NCCL filters its INIT lines), the init appends
 * NCCL's channel lines to that file, two channels of a ring,
 * "... NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM", the transport
 * FAKENCCL_TRANSPORT (default P2P/CUMEM; SHM/direct/direct is what NCCL
 * uses when its topology check rules P2P out).
 *
 * One rank per process (ncclGetUniqueId + ncclCommInitRank): the ranks meet
 * in a file under /dev/shm named in the id (sparse: a header, then a 64 MiB
 * slot per rank). Unlike NCCL, they meet at the call, on the host: a rank's
 * call waits until every rank has read the previous collective's slots
 * (each call's stream must be waited for before the next call), copies its
 * input into its slot and waits for every rank's input; the result is
 * computed on its stream. (Met on the stream, a rank descheduled on a
 * loaded test machine would count against the other ranks' --timeout.) Each rank logs only its own channel
 * lines. FAKENCCL_RANK_FAULT, on rank FAKENCCL_RANK (default 0) only:
 * hang-init: its ncclCommInitRank never returns; die: its process exits
 * (status 3) in its first all-reduce; wrong: its results are wrong in one
 * element; chatty: it writes 64 KiB of messages to stderr in
 * ncclCommInitRank.
 *
 * FAKENCCL_COUNT_FILE: "a<count> " per all-reduce launched, "g<count> " per
 * all-gather (count per rank), "i" before it when in place (rank 0's calls).
 */
#include <dlfcn.h>
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

#define MAXRANK 16
#define NSLOT 256		/* collectives of one group in flight at once */
/* The meeting place of one process per rank. */
#define SLOT (64UL << 20)
struct shared { int joined, done; int in[16], out[16]; char pad[4096 - 136]; };

/* One rank's part of a collective. */
struct call {
	const void *s;
	void *r;
	size_t count;
	int type, gather;
	unsigned fault;		/* F_* of this collective */
};
enum { F_WRONG = 1, F_STALE = 2, F_INPLACE = 4, F_NPOT = 8, F_HANG = 16 };

/* The communicators of one ncclCommInitAll (one process, every rank). */
struct group {
	int n, live, outstanding;
	struct slot { long seq; int arrived, finished, ran; struct call c[MAXRANK]; } slot[NSLOT];
};

struct ncclComm {
	int rank, n;
	struct group *g;	/* ncclCommInitAll */
	struct shared *sh;	/* ncclCommInitRank */
	long calls;		/* collectives launched */
	int outstanding;	/* ncclCommInitRank: not finished on the stream */
};
typedef struct ncclComm *ncclComm_t;

/* A queued rank's part (fakecuda frees it once done). */
struct op {
	struct ncclComm *comm;	/* one rank per process */
	struct group *g;	/* ncclCommInitAll */
	int rank, n, phase;
	long seq;
	struct call c;
};

/* Launched inside a group: queued at the outermost ncclGroupEnd. */
static int depth, group_hang;
static struct { struct op *o; void *stream; } pending[1024];
static int npending;
/* Groups whose collectives never finished: kept, their ops may still run. */
static struct group *stuck[64];
static struct ncclComm *stuck_comm;

/* FAKENCCL_HANG_INIT as it was when the library was opened (p2pctl asks for
 * the version then, in its own thread): the init thread may start only
 * after the test has reset the environment. */
static int hang_init;

static int (*host_op)(void *, int (*)(void *), void *);

static void hang_forever(void)
{
	for (;;)
		pause();	/* a handler that returns does not end it */
}

static int knob(const char *what)
{
	const char *f = getenv("FAKENCCL_FAULT");
	size_t l = strlen(what);

	for (const char *p = f; p && (p = strstr(p, what)); p += l)
		if ((p == f || p[-1] == ',') && (p[l] == ',' || !p[l]))
			return 1;
	return 0;
}

static long from_call(void)
{
	const char *s = getenv("FAKENCCL_FROM");

	return s && atol(s) > 0 ? atol(s) : 1;
}

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

/* NCCL_DEBUG_SUBSYS lets INIT lines through: unset, or INIT or ALL named
 * (a leading ^ inverts the list). */
static int subsys_init(void)
{
	const char *s = getenv("NCCL_DEBUG_SUBSYS");
	int named;

	if (!s || !*s)
		return 1;
	named = strcasestr(s, "INIT") || strcasestr(s, "ALL");
	return *s == '^' ? !named : named;
}

/* NCCL's INFO lines of the connections it set up (rank < 0: all ranks'). */
static void debug_channels(int n, int rank)
{
	const char *d = getenv("NCCL_DEBUG"), *path = getenv("NCCL_DEBUG_FILE");
	const char *tr = getenv("FAKENCCL_TRANSPORT");
	FILE *f;

	if (!d || strcasecmp(d, "INFO") || !path || n < 2 || !subsys_init() || knob("quiet"))
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

/* stale: the first copy of each input (buffer, count) seen. */
static struct { const void *s; size_t count; char *copy; } cache[64];

static void cache_clear(void)
{
	for (int i = 0; i < 64; i++) {
		free(cache[i].copy);
		cache[i].copy = NULL;
	}
}

static const void *input(const struct call *c)
{
	int i;

	if (!(c->fault & F_STALE))
		return c->s;
	for (i = 0; i < 64 && cache[i].copy; i++)
		if (cache[i].s == c->s && cache[i].count == c->count)
			return cache[i].copy;
	if (i == 64)
		return c->s;
	cache[i].s = c->s;
	cache[i].count = c->count;
	cache[i].copy = malloc(c->count * 4 + 1);
	memcpy(cache[i].copy, c->s, c->count * 4);
	return cache[i].copy;
}

/* Unloaded (p2pctl's ncclx_close): what it kept goes with it. */
__attribute__((destructor)) static void fakenccl_fini(void)
{
	cache_clear();
	for (int i = 0; i < 64; i++) {
		free(stuck[i]);
		stuck[i] = NULL;
	}
	free(stuck_comm);
	stuck_comm = NULL;
}

/* The fake libcuda's hook (the library p2pctl loaded: $P2PCTL_LIBCUDA). */
static int find_hook(void)
{
	const char *p = getenv("P2PCTL_LIBCUDA");
	void *h;

	if (host_op)
		return 0;
	h = dlopen(p && *p ? p : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (h)
		*(void **)&host_op = dlsym(h, "fakecuda_host_op");
	if (h)
		dlclose(h);
	return host_op ? 0 : -1;
}

int ncclCommInitAll(ncclComm_t *comm, int n, const int *devs)
{
	struct group *g;

	(void)devs;
	if (hang_init)
		hang_forever();
	if (n < 1 || n > MAXRANK)
		return 4;	/* ncclInvalidArgument */
	if (find_hook())
		return 3;	/* ncclInternalError: no fake libcuda */
	debug_channels(n, -1);
	cache_clear();
	g = calloc(1, sizeof(*g));
	g->n = n;
	g->live = n;
	for (int i = 0; i < n; i++) {
		comm[i] = calloc(1, sizeof(**comm));
		comm[i]->rank = i;
		comm[i]->n = n;
		comm[i]->g = g;
	}
	return 0;
}

/* The fault knobs of one-process-per-rank: on this rank? */
static int rank_fault(const char *what, int rank)
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
static int reached(const int *k, int n, int v)
{
	for (int i = 0; i < n; i++)
		if (__atomic_load_n(&k[i], __ATOMIC_ACQUIRE) < v)
			return 0;
	return 1;
}

/* ncclUniqueId is 128 bytes passed by value. */
struct uid { char b[128]; };

int ncclCommInitRank(ncclComm_t *comm, int n, struct uid id, int rank)
{
	int fd;
	struct shared *sh;

	if (n < 1 || n > MAXRANK || rank < 0 || rank >= n)
		return 4;
	if (find_hook())
		return 3;
	id.b[127] = '\0';
	fd = open(id.b, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)(sizeof(*sh) + SLOT * (size_t)n)))
		return 2;	/* ncclSystemError */
	sh = mmap(NULL, sizeof(*sh) + SLOT * (size_t)n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sh == MAP_FAILED)
		return 2;
	debug_channels(n, rank);
	cache_clear();
	if (rank_fault("chatty", rank))
		for (int i = 0; i < 1024; i++)
			fprintf(stderr, "fakenccl: a message of 64 bytes that p2pctl must read past %05d\n", i);
	/* as NCCL's init: every rank waits for all */
	__atomic_add_fetch(&sh->joined, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&sh->joined, __ATOMIC_ACQUIRE) < n)
		nap();
	if (!rank)
		unlink(id.b);
	/* after joining, so that the file goes; the other ranks go on */
	if (rank_fault("hang-init", rank))
		hang_forever();
	*comm = calloc(1, sizeof(**comm));
	(*comm)->rank = rank;
	(*comm)->n = n;
	(*comm)->sh = sh;
	return 0;
}

static int pow2(size_t x)
{
	return x && !(x & (x - 1));
}

/* One element of the result: sum of the inputs (int32 or float32). */
static void add(void *acc, const void *x, int type)
{
	if (type == 7)
		*(float *)acc += *(const float *)x;
	else
		*(int32_t *)acc += *(const int32_t *)x;
}

/* The faults applied to rank's result r of out elements (after it is written). */
static void damage(const struct call *c, int rank, size_t out)
{
	if (!out)
		return;
	if ((c->fault & (F_WRONG | F_INPLACE)) && rank == 0)
		((int32_t *)c->r)[out / 2] += 1;
}

/* The collective of n ranks' calls c[], all arrived: every result written. */
static void compute(struct call *c, int n)
{
	size_t count = c[0].count, out = c[0].gather ? count * n : count, keep;
	char *tmp = calloc(out ? out : 1, 4);

	/* the results are computed first, then stored: in place is no special case */
	if (c[0].gather) {
		for (int k = 0; k < n; k++)
			memcpy(tmp + (size_t)k * count * 4, input(&c[k]), count * 4);
	} else {
		for (int k = 0; k < n; k++) {
			const char *in = input(&c[k]);

			for (size_t e = 0; e < count; e++)
				add(tmp + e * 4, in + e * 4, c[0].type);
		}
	}
	keep = (c[0].fault & F_NPOT) && !pow2(count) ? 1 : 0;
	for (int i = 0; i < n; i++) {
		memcpy(c[i].r, tmp, (out - keep) * 4);
		damage(&c[i], i, out);
	}
	free(tmp);
}

/* A queued part of a collective of one ncclCommInitAll group. 0 done, 1 waiting. */
static int op_group(struct op *o)
{
	struct group *g = o->g;
	struct slot *sl = &g->slot[o->seq % NSLOT];

	if (o->c.fault & F_HANG)
		return 1;
	if (sl->seq != o->seq) {
		if (sl->arrived && sl->finished < g->n)
			return 1;	/* an older collective still holds the slot */
		memset(sl, 0, sizeof(*sl));
		sl->seq = o->seq;
	}
	if (!o->phase) {
		sl->c[o->rank] = o->c;
		sl->arrived++;
		o->phase = 1;
	}
	if (sl->arrived < g->n)
		return 1;
	if (!sl->ran) {
		compute(sl->c, g->n);
		sl->ran = 1;
	}
	sl->finished++;
	g->outstanding--;
	return 0;
}

/* A queued part of a collective across processes (every input in its slot). 0 done, 1 hung. */
static int op_shared(struct op *o)
{
	struct ncclComm *c = o->comm;
	char *slot = (char *)(c->sh + 1), *tmp;
	size_t count = o->c.count, out = o->c.gather ? count * c->n : count;
	size_t keep = (o->c.fault & F_NPOT) && !pow2(count) ? 1 : 0;

	if (o->c.fault & F_HANG)
		return 1;
	tmp = calloc(out ? out : 1, 4);
	for (int k = 0; k < c->n; k++) {
		if (o->c.gather)
			memcpy(tmp + (size_t)k * count * 4, slot + SLOT * (size_t)k, count * 4);
		else
			for (size_t e = 0; e < count; e++)
				add(tmp + e * 4, slot + SLOT * (size_t)k + e * 4, o->c.type);
	}
	memcpy(o->c.r, tmp, (out - keep) * 4);
	free(tmp);
	damage(&o->c, c->rank, out);
	if (rank_fault("wrong", c->rank) && out)
		((int32_t *)o->c.r)[out / 2] += 1;
	__atomic_store_n(&c->sh->out[c->rank], (int)o->seq, __ATOMIC_RELEASE);
	c->outstanding--;
	return 0;
}

static int op_run(void *p)
{
	struct op *o = p;

	return o->g ? op_group(o) : op_shared(o);
}

static void count_collective(const struct call *c, int inplace)
{
	const char *path = getenv("FAKENCCL_COUNT_FILE");
	FILE *f = path ? fopen(path, "a") : NULL;

	if (f) {
		fprintf(f, "%s%c%zu ", inplace ? "i" : "", c->gather ? 'g' : 'a', c->count);
		fclose(f);
	}
}

/* A rank's part of a collective (gather 0: all-reduce, 1: all-gather). */
static int collective(const void *s, void *r, size_t count, int type, int gather, ncclComm_t comm,
		      void *stream)
{
	struct op *o;
	long n;
	int inplace;

	if (type != 2 && type != 7)
		return 4;	/* ncclInvalidArgument: int32 and float32 only */
	if (!stream || (comm->sh && count * 4 > SLOT))
		return 4;
	if (comm->sh && rank_fault("die", comm->rank))
		_exit(3);
	o = calloc(1, sizeof(*o));
	n = ++comm->calls;
	inplace = gather ? (const char *)s == (const char *)r + (size_t)comm->rank * count * 4 : s == r;
	o->c = (struct call){ s, r, count, type, gather, 0 };
	if (n >= from_call()) {
		if (getenv("FAKENCCL_WRONG") && atoi(getenv("FAKENCCL_WRONG")))
			o->c.fault |= F_WRONG;
		if (knob("stale"))
			o->c.fault |= F_STALE;
		if (knob("inplace") && inplace)
			o->c.fault |= F_INPLACE;
		if (knob("npot"))
			o->c.fault |= F_NPOT;
		if (knob("stream-hang"))
			o->c.fault |= F_HANG;
		if (knob("groupend-hang") && n == from_call())
			group_hang = 1;
	}
	o->rank = comm->rank;
	o->n = comm->n;
	o->seq = n;
	if (comm->g) {
		o->g = comm->g;
		o->g->outstanding++;
	} else {
		o->comm = comm;
		comm->outstanding++;
	}
	if (!comm->rank)
		count_collective(&o->c, inplace);
	if (comm->sh) {
		/* the ranks meet at the call (see the top), each its input in its slot */
		char *slot = (char *)(comm->sh + 1);

		while (!reached(comm->sh->out, comm->n, (int)n - 1))
			nap();
		memcpy(slot + SLOT * (size_t)comm->rank, input(&o->c), count * 4);
		__atomic_store_n(&comm->sh->in[comm->rank], (int)n, __ATOMIC_RELEASE);
		while (!reached(comm->sh->in, comm->n, (int)n))
			nap();
	}
	if (depth) {
		if (npending == (int)(sizeof(pending) / sizeof(pending[0])))
			return 5;	/* ncclInvalidUsage */
		pending[npending].o = o;
		pending[npending++].stream = stream;
		return 0;
	}
	return host_op(stream, op_run, o) ? 1 : 0;
}

int ncclAllReduce(const void *s, void *r, size_t count, int type, int op, ncclComm_t comm, void *stream)
{
	if (op != 0)
		return 4;	/* sum only */
	return collective(s, r, count, type, 0, comm, stream);
}

int ncclAllGather(const void *s, void *r, size_t count, int type, ncclComm_t comm, void *stream)
{
	return collective(s, r, count, type, 1, comm, stream);
}

int ncclGroupStart(void)
{
	depth++;
	return 0;
}

int ncclGroupEnd(void)
{
	int rc = 0;

	if (--depth)
		return 0;
	if (group_hang) {
		group_hang = 0;
		hang_forever();
	}
	for (int i = 0; i < npending; i++)
		if (host_op(pending[i].stream, op_run, pending[i].o))
			rc = 1;
	npending = 0;
	return rc;
}

static int destroy(ncclComm_t c, int wait)
{
	if (wait && knob("destroy-hang"))
		hang_forever();
	/* NCCL's finalize waits for the communicator's work on the streams */
	if (wait && (c->sh ? c->outstanding : c->g->outstanding))
		hang_forever();
	if (c->sh) {
		if (c->outstanding) {
			stuck_comm = c;	/* its queued parts point at it */
			return 0;
		}
		munmap(c->sh, sizeof(*c->sh) + SLOT * (size_t)c->n);
		free(c);
		return 0;
	}
	if (!--c->g->live) {
		if (!c->g->outstanding) {
			free(c->g);
		} else {
			for (int i = 0; i < 64; i++)
				if (!stuck[i]) {
					stuck[i] = c->g;	/* its queued parts point at it */
					break;
				}
		}
	}
	free(c);
	return 0;
}

int ncclCommDestroy(ncclComm_t c) { return destroy(c, 1); }
int ncclCommAbort(ncclComm_t c) { return destroy(c, 0); }
