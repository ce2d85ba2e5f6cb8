// SPDX-License-Identifier: GPL-2.0
/*
 * Random ioctls on /dev/p2p-shim.
 *
 *   p2ps-fuzz [-s SEED] [-n COUNT] [-u UID] [-a PERMILLE] [-D]
 *
 * Command numbers: the four P2PS ones, their numbers with other sizes and
 * directions, other numbers of our magic, other magics, and random words.
 * Arguments: NULL, unmapped, kernel and non-canonical addresses, misaligned
 * pointers, structs running into an unmapped page, read-only pages, and
 * random contents with the size field right or wrong and random flags.
 * -a: for root, how often (per mille) ENABLE/DISABLE get a well-formed
 * argument (default 20), so that the run does not spend itself arming.
 * -u: setuid (and setgid) to UID first.  -D: CAP_SYS_ADMIN dropped first
 * (stays uid 0).
 *
 * Checks, per call: the errno is one this command may return (the table
 * below; anything else is a failure); a refusal before the module writes
 * (ENOTTY, EPERM, EINVAL) leaves the caller's buffer untouched; a success
 * writes nothing past the struct; VERSION/STATUS results are sane.
 * Unprivileged (or without CAP_SYS_ADMIN): P2PS_IOC_STATUS is the same
 * before, every 1000 calls, and after.  Root: ends with a disable so the
 * module is left disabled, and checks it.
 *
 * Prints the seed, counts per command class and errno, ops/s; exit 0 if
 * no check failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/fs.h>
#include <p2p-shim/uapi.h>

#include "testutil.h"


#define PAGE 4096
#define GUARD 64

enum { C_VERSION, C_STATUS, C_ENABLE, C_DISABLE, C_OTHER, C_N };
static const char *const cname[C_N] = { "version", "status", "enable", "disable", "other" };
static const size_t csize[4] = {
	sizeof(struct p2ps_version), sizeof(struct p2ps_status),
	sizeof(struct p2ps_enable), sizeof(struct p2ps_disable),
};
static const unsigned long ccmd[4] = {
	P2PS_IOC_VERSION, P2PS_IOC_STATUS, P2PS_IOC_ENABLE, P2PS_IOC_DISABLE,
};

/* errno counts per class; index 0 is success. */
#define NERR 160
static unsigned long counts[C_N][NERR];
static unsigned long unchanged_checks, kinds[16];
/* Root ENABLE/DISABLE that failed yet changed the state, by errno. */
static unsigned long effect_on_error[NERR];
static int privileged;

static int allowed(int c, int err)
{
	switch (c) {
	case C_OTHER:
		return err == ENOTTY;
	case C_VERSION:
	case C_STATUS:
		return err == 0 || err == EINVAL || err == EFAULT;
	case C_ENABLE:
		if (!privileged)
			return err == EPERM;
		return err == 0 || err == EINVAL || err == EFAULT || err == EALREADY ||
		       err == EOPNOTSUPP || err == ENOENT || err == ENOTUNIQ || err == EILSEQ ||
		       err == ENOEXEC ||
		       err == ENOMEM || err == EBUSY;
	case C_DISABLE:
		if (!privileged)
			return err == EPERM;
		return err == 0 || err == EINVAL || err == EFAULT || err == EBUSY;
	}
	return 0;
}

static void failf(const char *fmt, unsigned long i, unsigned long cmd, int err)
{
	if (failures++ < 20) {
		fprintf(stderr, "FAIL op %lu cmd 0x%08lx: ", i, cmd);
		fprintf(stderr, fmt, err, strerrorname_np(err) ?: "?");
		fputc('\n', stderr);
	}
}

/* Numbers do_vfs_ioctl() handles before the driver sees them. */
static int vfs_cmd(unsigned long cmd)
{
	static const unsigned long vfs[] = {
		FIOCLEX, FIONCLEX, FIONBIO, FIOASYNC, FIOQSIZE, FIFREEZE, FITHAW,
		0x2 /* FIGETBSZ */, 0xc020660b /* FS_IOC_FIEMAP */, 0x40049409 /* FICLONE */,
		0x4020940d /* FICLONERANGE */, 0xc0189436 /* FIDEDUPERANGE */,
		0x80086601 /* FS_IOC_GETFLAGS */, 0x40086602 /* FS_IOC_SETFLAGS */,
		0x801c581f /* FS_IOC_FSGETXATTR */, 0x401c5820 /* FS_IOC_FSSETXATTR */,
		0x5460 /* FIOQSIZE */, 0x541b /* FIONREAD */,
	};
	size_t i;

	for (i = 0; i < sizeof(vfs) / sizeof(vfs[0]); i++)
		if (cmd == vfs[i])
			return 1;
	return 0;
}

static unsigned long pick_cmd(int *cls)
{
	uint32_t r = below(100);
	unsigned long cmd;
	int i;

	if (r < 56) {				/* the real ones */
		i = (int)below(4);
		*cls = i;
		return ccmd[i];
	}
	*cls = C_OTHER;
	if (r < 72) {				/* real numbers, other size/direction */
		i = (int)below(4);
		do {
			cmd = _IOC(below(4), P2PS_IOC_MAGIC, i, below(1u << _IOC_SIZEBITS));
		} while (cmd == ccmd[i]);
		return cmd;
	}
	if (r < 86)				/* our magic, other numbers */
		cmd = _IOC(below(4), P2PS_IOC_MAGIC, 4 + below(252), below(1u << _IOC_SIZEBITS));
	else if (r < 94)			/* another magic, our layout */
		cmd = ccmd[below(4)] ^ ((unsigned long)(1 + below(255)) << _IOC_TYPESHIFT);
	else					/* anything */
		cmd = (uint32_t)rnd();
	for (i = 0; i < 4; i++)
		if (cmd == ccmd[i])
			*cls = i;
	if (*cls == C_OTHER && vfs_cmd(cmd))
		return pick_cmd(cls);
	return cmd;
}

static unsigned char *rw, *ro, *edge, *unmapped;

/* Fill @p (a struct of class @c, or random) with random or plausible bytes. */
static void fill(unsigned char *p, size_t room, int c, int wellformed)
{
	size_t n = room < 512 ? room : 512, i;
	uint32_t size, flags;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)rnd();
	if (n < 16)
		return;
	if (wellformed && c < 4) {
		size = (uint32_t)csize[c];
	} else {
		switch (below(8)) {
		case 0: case 1: case 2: case 3:
			size = c < 4 ? (uint32_t)csize[c] : (uint32_t)csize[below(4)];
			break;
		case 4:
			size = (uint32_t)csize[below(4)];
			break;
		case 5:
			size = (uint32_t)(c < 4 ? csize[c] : 64) + (below(2) ? 1 : -1);
			break;
		case 6:
			size = below(2) ? 0 : 0xffffffffu;
			break;
		default:
			size = (uint32_t)rnd();
		}
	}
	memcpy(p, &size, 4);
	if (wellformed) {
		flags = c == C_ENABLE ? below(4) : 0;	/* DRY_RUN, FORCE or both */
	} else {
		switch (below(6)) {
		case 0: flags = 0; break;
		case 1: flags = P2PS_ENABLE_DRY_RUN; break;
		case 2: flags = P2PS_ENABLE_FORCE; break;
		case 3: flags = 1u << below(32); break;
		default: flags = (uint32_t)rnd();
		}
	}
	memcpy(p + 4, &flags, 4);
	if (c == C_ENABLE && (wellformed || below(2))) {
		uint32_t zero = 0;

		memcpy(p + 12, &zero, 4);	/* pad */
	}
}

/* The argument for one call: a pointer, and where it points (if anywhere). */
static unsigned long pick_arg(int c, int wellformed, unsigned char **buf, size_t *room)
{
	size_t sz = c < 4 ? csize[c] : 64;
	unsigned int off;

	*buf = NULL;
	*room = 0;
	if (wellformed) {
		kinds[0]++;
		*buf = rw + GUARD;
		*room = sz;
		return (unsigned long)*buf;
	}
	switch (below(16)) {
	case 0:
		kinds[1]++;
		return 0;					/* NULL */
	case 1:
		kinds[2]++;
		return (unsigned long)unmapped + below(PAGE);	/* munmap'd */
	case 2:
		kinds[3]++;
		return below(2) ? 0xffffffff81000000ul + below(1 << 20)	/* kernel */
				: 0x8000000000000000ul + below(PAGE);	/* non-canonical */
	case 3:
		kinds[4]++;
		return below(2) ? (unsigned long)-1 - below(64) : 1 + below(PAGE - 1);
	case 4: case 5:						/* runs off a page */
		kinds[5]++;
		off = 1 + below((unsigned int)sz + 3);
		*buf = edge - off;
		*room = off;
		return (unsigned long)*buf;
	case 6:							/* read-only */
		kinds[6]++;
		return (unsigned long)ro + (below(4) ? 0 : below(8));
	case 7: case 8:						/* misaligned */
		kinds[7]++;
		off = 1 + below(7);
		*buf = rw + GUARD + off;
		*room = sz;
		return (unsigned long)*buf;
	default:						/* aligned, random contents */
		kinds[8]++;
		*buf = rw + GUARD;
		*room = sz;
		return (unsigned long)*buf;
	}
}

static int status(int fd, struct p2ps_status *s)
{
	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s);
	return ioctl(fd, P2PS_IOC_STATUS, s) ? -errno : 0;
}

static int same_status(const struct p2ps_status *a, const struct p2ps_status *b)
{
	return a->state == b->state && a->flags == b->flags && a->hooks == b->hooks &&
	       a->live_mappings == b->live_mappings && a->stale_gpus == b->stale_gpus &&
	       !strcmp(a->driver_version, b->driver_version) && !strcmp(a->profile, b->profile);
}

static void print_status(const char *what, const struct p2ps_status *s)
{
	printf("%s: state=%u flags=%u hooks=%u live=%u stale=0x%x driver=%s profile=%s\n", what,
	       s->state, s->flags, s->hooks, s->live_mappings, s->stale_gpus,
	       s->driver_version, s->profile);
}

static int drop_sys_admin(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0))
		return -1;
	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	d[CAP_SYS_ADMIN / 32].permitted &= ~(1u << (CAP_SYS_ADMIN % 32));
	d[CAP_SYS_ADMIN / 32].inheritable &= ~(1u << (CAP_SYS_ADMIN % 32));
	return (int)syscall(SYS_capset, &h, d);
}

int main(int argc, char **argv)
{
	unsigned long n = 100000, i, ops_by_class[C_N] = { 0 };
	uint64_t seed = 0;
	long uid = -1;
	unsigned int permille = 20;
	int opt, fd, c, err, drop = 0;
	struct p2ps_status before, now, pre;
	struct timespec t0, t1;
	unsigned char *m, shadow[PAGE];
	double secs;

	while ((opt = getopt(argc, argv, "s:n:u:a:D")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': n = strtoul(optarg, NULL, 0); break;
		case 'u': uid = strtol(optarg, NULL, 0); break;
		case 'a': permille = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'D': drop = 1; break;
		default:
			fprintf(stderr, "usage: p2ps-fuzz [-s SEED] [-n COUNT] [-u UID] [-a PERMILLE] [-D]\n");
			return 2;
		}
	}
	if (!seed) {
		clock_gettime(CLOCK_REALTIME, &t0);
		seed = ((uint64_t)t0.tv_sec << 20) ^ (uint64_t)t0.tv_nsec ^ (uint64_t)getpid();
	}
	rng = seed ?: 1;

	/* rw: pages 0-1; edge: page 3, unmapped after a mapped page 2; ro: page 4. */
	m = mmap(NULL, 5 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return perror("mmap"), 2;
	rw = m;
	edge = m + 3 * PAGE;
	munmap(edge, PAGE);
	ro = m + 4 * PAGE;
	memset(ro, 0, PAGE);
	*(uint32_t *)ro = sizeof(struct p2ps_enable);	/* a valid-looking size */
	mprotect(ro, PAGE, PROT_READ);
	unmapped = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(unmapped, PAGE);

	fd = open("/dev/" P2PS_DEVICE_NAME, O_RDONLY);
	if (fd < 0)
		return perror("open /dev/" P2PS_DEVICE_NAME), 2;
	if (drop && drop_sys_admin())
		return perror("drop CAP_SYS_ADMIN"), 2;
	if (uid >= 0 && (setgid((gid_t)uid) || setuid((uid_t)uid)))
		return perror("setuid"), 2;
	privileged = !drop && geteuid() == 0;
	if (status(fd, &before))
		return perror("status"), 2;
	printf("seed=0x%016llx count=%lu uid=%d cap_sys_admin=%d wellformed_permille=%u\n",
	       (unsigned long long)seed, n, (int)geteuid(), privileged, permille);
	print_status("before", &before);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		unsigned long cmd = pick_cmd(&c), arg;
		int wellformed = c < 4 && below(1000) < (c >= C_ENABLE && privileged ? permille : 300);
		unsigned char *buf;
		size_t room;
		long ret;

		arg = pick_arg(c, wellformed, &buf, &room);
		if (buf) {
			fill(buf, room, c, wellformed);
			memset(buf + room, 0xa5, buf + room + GUARD <= edge ? GUARD : 0);
			memcpy(shadow, buf, room + (buf + room + GUARD <= edge ? GUARD : 0));
		}
		if (privileged && (c == C_ENABLE || c == C_DISABLE))
			status(fd, &pre);
		ret = ioctl(fd, cmd, arg);
		err = ret ? errno : 0;
		if (privileged && (c == C_ENABLE || c == C_DISABLE) && err) {
			status(fd, &now);
			if (!same_status(&pre, &now))
				effect_on_error[err < NERR ? err : NERR - 1]++;
		}
		if (ret && ret != -1)
			failf("returned %ld", i, cmd, (int)ret);
		ops_by_class[c]++;
		counts[c][err < NERR ? err : NERR - 1]++;
		if (!allowed(c, err))
			failf("errno %d (%s) not documented for this command", i, cmd, err);
		if (buf && buf + room + GUARD <= edge) {
			/* Refusals before the module writes leave the buffer as it was. */
			if ((err == ENOTTY || err == EPERM || err == EINVAL) &&
			    memcmp(shadow, buf, room + GUARD))
				failf("refused with %d (%s) but the buffer changed", i, cmd, err);
			/* Nothing is written past the struct. */
			if (memcmp(shadow + room, buf + room, GUARD))
				failf("errno %d (%s): bytes after the struct changed", i, cmd, err);
		}
		if (!err && (c == C_VERSION || c == C_STATUS)) {
			uint32_t size = *(uint32_t *)buf;

			if (size != csize[c])
				failf("success (%d %s) with size field changed", i, cmd, 0);
			if (c == C_VERSION && ((struct p2ps_version *)buf)->abi != P2PS_ABI_VERSION)
				failf("version abi wrong (%d %s)", i, cmd, 0);
			if (c == C_STATUS && ((struct p2ps_status *)buf)->state > P2PS_STATE_RESIDUAL)
				failf("status state out of range (%d %s)", i, cmd, 0);
		}
		if (!privileged && i % 1000 == 999) {
			unchanged_checks++;
			if (status(fd, &now) || !same_status(&before, &now))
				failf("state changed under an unprivileged caller (%d %s)", i, cmd, 0);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	if (privileged) {
		struct p2ps_disable d = { .size = sizeof(d) };

		if (ioctl(fd, P2PS_IOC_DISABLE, &d))
			failf("final disable: %d (%s)", i, P2PS_IOC_DISABLE, errno);
		status(fd, &now);
		if (now.state != P2PS_STATE_DISABLED || now.hooks || now.live_mappings)
			failf("not disabled at the end (%d %s)", i, 0, 0);
	} else {
		unchanged_checks++;
		if (status(fd, &now) || !same_status(&before, &now))
			failf("state changed under an unprivileged caller (%d %s)", i, 0, 0);
	}
	print_status("after", &now);

	for (c = 0; c < C_N; c++) {
		printf("%-8s %7lu calls:", cname[c], ops_by_class[c]);
		for (err = 0; err < NERR; err++)
			if (counts[c][err])
				printf(" %s=%lu", err ? strerrorname_np(err) ?: "?" : "ok",
				       counts[c][err]);
		printf("\n");
	}
	printf("args: wellformed=%lu null=%lu unmapped=%lu kernel=%lu wild=%lu page_edge=%lu "
	       "readonly=%lu misaligned=%lu random=%lu\n", kinds[0], kinds[1], kinds[2], kinds[3],
	       kinds[4], kinds[5], kinds[6], kinds[7], kinds[8]);
	if (!privileged)
		printf("state compared %lu times: unchanged\n", unchanged_checks);
	for (err = 1; err < NERR; err++)
		if (effect_on_error[err])
			printf("note: %lu enable/disable calls failed with %s after changing the state\n",
			       effect_on_error[err], strerrorname_np(err) ?: "?");
	printf("total=%lu seconds=%.2f ops_per_sec=%.0f failures=%lu\n", n, secs, n / secs,
	       failures);
	return failures ? 1 : 0;
}
