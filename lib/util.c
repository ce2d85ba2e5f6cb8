// SPDX-License-Identifier: GPL-2.0
/* libp2pshim: files under a root prefix, decompression, small helpers. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <unistd.h>

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include "internal.h"

#define MAX_FILE (1UL << 30)

bool p2ps_catf(char *buf, size_t size, size_t *off, const char *sep, const char *fmt, ...)
{
	size_t room = *off < size ? size - *off : 0;
	va_list ap;
	int k, t;

	if (!room)
		return false;
	k = snprintf(buf + *off, room, "%s", *off ? sep : "");
	if (k < 0 || (size_t)k >= room)
		goto undo;
	va_start(ap, fmt);
	t = vsnprintf(buf + *off + k, room - k, fmt, ap);
	va_end(ap);
	if (t < 0 || (size_t)t >= room - k)
		goto undo;
	*off += k + t;
	return true;
undo:
	buf[*off] = '\0';	/* the string as it was, not a piece of what did not fit */
	return false;
}

void p2ps_strlcpy(char *dst, const char *src, size_t len)
{
	size_t n;

	if (!len)
		return;
	n = strlen(src);
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

char *p2ps_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;

	while (*p) {
		unsigned char c = *p;
		size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			   (c & 0xf8) == 0xf0 ? 4 : 0;
		uint32_t cp = n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
		size_t i;
		bool ok = n > 0;

		for (i = 1; ok && i < n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				ok = false;
			else
				cp = cp << 6 | (p[i] & 0x3f);
		}
		/* overlong forms, surrogates, past U+10FFFF, C0/C1 controls, DEL */
		if (ok && n > 1 && (cp < (n == 2 ? 0x80u : n == 3 ? 0x800u : 0x10000u) ||
				    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || (cp >= 0x80 && cp < 0xa0)))
			ok = false;
		if (ok && n == 1 && (c < 0x20 || c == 0x7f) && c != '\t')
			ok = false;
		if (!ok) {
			*p++ = '?';	/* one byte at a time: the rest is judged again */
			continue;
		}
		p += n;
	}
	return s;
}

char *p2ps_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int p2ps_fd_regular(int fd)
{
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int e = errno;

		close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	return fd;
}

char *p2ps_read_fd(int fd, size_t *lenp, bool gz, size_t max)
{
	size_t cap = 4096, len = 0;
	char *buf = NULL, *n;
	gzFile g = NULL;
	int err = EIO;

	fd = p2ps_fd_regular(fd);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	/* A regular file never blocks; reads go on without O_NONBLOCK. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if (gz) {
		g = gzdopen(fd, "rb");
		if (!g) {
			close(fd);
			errno = ENOMEM;
			return NULL;
		}
		fd = -1;
	}
	buf = malloc(cap + 1);
	if (!buf) {
		err = ENOMEM;
		goto fail;
	}
	for (;;) {
		long r;

		if (len == cap) {
			if (cap > max) {
				err = EFBIG;
				goto fail;
			}
			cap *= 2;
			n = realloc(buf, cap + 1);
			if (!n) {
				err = ENOMEM;
				goto fail;
			}
			buf = n;
		}
		if (g) {
			r = gzread(g, buf + len, (unsigned int)(cap - len));
		} else {
			r = (long)read(fd, buf + len, cap - len);
			if (r < 0 && errno == EINTR)
				continue;
		}
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > max) {
			err = EFBIG;
			goto fail;
		}
	}
	buf[len] = '\0';
	if (g)
		gzclose(g);
	if (fd >= 0)
		close(fd);
	if (lenp)
		*lenp = len;
	return buf;
fail:
	free(buf);
	if (g)
		gzclose(g);
	if (fd >= 0)
		close(fd);
	errno = err;
	return NULL;
}

char *p2ps_read_file_max(const char *path, size_t *lenp, bool gz, size_t max)
{
	return p2ps_read_fd(open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), lenp, gz, max);
}

char *p2ps_read_file(const char *path, size_t *lenp, bool gz)
{
	return p2ps_read_file_max(path, lenp, gz, MAX_FILE);
}

int p2ps_root_no_openat2;

int p2ps_root_init(struct p2ps_root *r, const char *root)
{
	char buf[sizeof(r->dir) + 16];
	size_t n;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (!root || !*root || !strcmp(root, "/")) {
		r->live = true;
		return 0;
	}
	if (strlen(root) >= sizeof(r->dir))
		return -ENAMETOOLONG;
	p2ps_strlcpy(r->dir, root, sizeof(r->dir));
	n = strlen(r->dir);
	while (n > 1 && r->dir[n - 1] == '/')
		r->dir[--n] = '\0';
	r->fd = open(r->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->fd < 0)
		return -ENOENT;
	snprintf(buf, sizeof(buf), "%s/.symlinks", r->dir);
	r->links = p2ps_read_file_max(buf, NULL, false, P2PS_ROOT_READ_MAX);
	return 0;
}

void p2ps_root_fini(struct p2ps_root *r)
{
	free(r->links);
	r->links = NULL;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

int p2ps_root_new(struct p2ps_root **out, const char *dir)
{
	struct p2ps_root *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	err = p2ps_root_init(r, dir);
	if (err) {
		p2ps_root_fini(r);
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

void p2ps_root_free(struct p2ps_root *r)
{
	if (!r)
		return;
	p2ps_root_fini(r);
	free(r);
}

const char *p2ps_root_path(const struct p2ps_root *r, const char *path, char *buf, size_t len)
{
	size_t a = strlen(r->dir), b = strlen(path);

	if (!len)
		return buf;
	if (a >= len)
		a = len - 1;
	memcpy(buf, r->dir, a);
	if (b >= len - a)
		b = len - a - 1;	/* truncated: the open fails */
	memcpy(buf + a, path, b);
	buf[a + b] = '\0';
	return buf;
}

int p2ps_root_resolve(const struct p2ps_root *r, const char *path, bool follow_last,
		      char *out, size_t len)
{
	char todo[PATH_MAX], cur[PATH_MAX] = "", full[2 * PATH_MAX], target[PATH_MAX];
	char tmp[2 * PATH_MAX];
	size_t cl = 0;
	int links = 0;
	const char *p;

	if (strlen(path) >= sizeof(todo))
		return -ENAMETOOLONG;
	p2ps_strlcpy(todo, path, sizeof(todo));
	p = todo;
	while (*p) {
		const char *e;
		size_t n, save;
		struct stat st;
		ssize_t k;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		n = (size_t)(e - p);
		if (n == 1 && p[0] == '.') {
			p = e;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *s = strrchr(cur, '/');

			if (s) {	/* ".." stops at the root */
				*s = '\0';
				cl = (size_t)(s - cur);
			}
			p = e;
			continue;
		}
		if (cl + 1 + n >= sizeof(cur))
			return -ENAMETOOLONG;
		save = cl;
		cur[cl++] = '/';
		memcpy(cur + cl, p, n);
		cl += n;
		cur[cl] = '\0';
		snprintf(full, sizeof(full), "%s%s", r->dir, cur);
		if (lstat(full, &st))
			return -errno;
		if (!S_ISLNK(st.st_mode) || (!follow_last && !e[strspn(e, "/")])) {
			p = e;
			continue;
		}
		if (++links > 40)
			return -ELOOP;
		k = readlink(full, target, sizeof(target) - 1);
		if (k < 0)
			return -errno;
		target[k] = '\0';
		/* the link's own directory, or the root for an absolute target */
		cl = target[0] == '/' ? 0 : save;
		cur[cl] = '\0';
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s%s", target, e) >= sizeof(todo))
			return -ENAMETOOLONG;
		p2ps_strlcpy(todo, tmp, sizeof(todo));
		p = todo;
	}
	if (!cl) {
		cur[0] = '/';
		cur[1] = '\0';
	}
	if (strlen(cur) >= len)
		return -ENAMETOOLONG;
	p2ps_strlcpy(out, cur, len);
	return 0;
}

int p2ps_root_open(const struct p2ps_root *r, const char *path, int flags)
{
	char canon[PATH_MAX], full[2 * PATH_MAX];
	int err;

	flags |= O_CLOEXEC;
	if (r->trace)
		r->trace(r->trace_arg, path, flags & O_DIRECTORY ? P2PS_TRACE_LIST : P2PS_TRACE_OPEN);
	if (r->live)
		return open(path, flags);
#ifdef SYS_openat2
	if (!p2ps_root_no_openat2) {
		struct open_how how;
		const char *rel = path + strspn(path, "/");
		long fd;

		memset(&how, 0, sizeof(how));
		how.flags = (uint64_t)flags;
		how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
		fd = syscall(SYS_openat2, r->fd, *rel ? rel : ".", &how, sizeof(how));
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
			return (int)fd;
	}
#endif
	/* No openat2 (before Linux 5.6, or a seccomp filter): walk it here. */
	err = p2ps_root_resolve(r, path, !(flags & O_NOFOLLOW), canon, sizeof(canon));
	if (err) {
		errno = -err;
		return -1;
	}
	snprintf(full, sizeof(full), "%s%s", r->dir, canon);
	return open(full, flags | O_NOFOLLOW);
}

char *p2ps_root_read_max(const struct p2ps_root *r, const char *path, size_t *len, bool gz,
			 size_t max)
{
	return p2ps_read_fd(p2ps_root_open(r, path, O_RDONLY | O_NONBLOCK), len, gz, max);
}

char *p2ps_root_read(const struct p2ps_root *r, const char *path, size_t *len, bool gz)
{
	return p2ps_root_read_max(r, path, len, gz, P2PS_ROOT_READ_MAX);
}

bool p2ps_root_line(const struct p2ps_root *r, const char *path, char *out, size_t len)
{
	char *s = p2ps_root_read(r, path, NULL, false), *nl;

	if (!s)
		return false;
	nl = strchr(s, '\n');
	if (nl)
		*nl = '\0';
	p2ps_strlcpy(out, p2ps_trim(s), len);
	free(s);
	return true;
}

bool p2ps_root_exists(const struct p2ps_root *r, const char *path)
{
	int fd = p2ps_root_open(r, path, O_PATH | O_NOFOLLOW);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Look @path up in .symlinks: the real path of the longest link prefix. */
static bool links_lookup(const struct p2ps_root *r, const char *path, char *out, size_t len)
{
	const char *line = r->links;
	size_t best = 0;
	char res[PATH_MAX];

	if (!line)
		return false;
	while (*line) {
		const char *eol = strchrnul(line, '\n');
		const char *t1 = memchr(line, '\t', eol - line);
		const char *t2 = t1 ? memchr(t1 + 1, '\t', eol - t1 - 1) : NULL;

		if (t2) {
			size_t ll = t1 - line;

			if (ll > best && !strncmp(path, line, ll) &&
			    (path[ll] == '\0' || path[ll] == '/') &&
			    (size_t)(eol - t2 - 1) < sizeof(res)) {
				int n = snprintf(res, sizeof(res), "%.*s%s",
						 (int)(eol - t2 - 1), t2 + 1, path + ll);

				if (n > 0 && (size_t)n < sizeof(res))
					best = ll;
			}
		}
		line = *eol ? eol + 1 : eol;
	}
	if (!best)
		return false;
	p2ps_strlcpy(out, res, len);
	return true;
}

bool p2ps_root_realpath(const struct p2ps_root *r, const char *path, char *out, size_t len)
{
	char cur[PATH_MAX], next[PATH_MAX], real[PATH_MAX];
	int i;

	if (r->trace)
		r->trace(r->trace_arg, path, P2PS_TRACE_REALPATH);
	if (r->live) {
		if (!realpath(path, real))
			return false;
		p2ps_strlcpy(out, real, len);
		return true;
	}
	p2ps_strlcpy(cur, path, sizeof(cur));
	for (i = 0; i < 8 && links_lookup(r, cur, next, sizeof(next)); i++) {
		if (!strcmp(next, cur))
			break;
		p2ps_strlcpy(cur, next, sizeof(cur));
	}
	/* Real links inside the tree, if any, resolved without leaving it. */
	if (!p2ps_root_resolve(r, cur, true, real, sizeof(real))) {
		p2ps_strlcpy(out, real, len);
		return true;
	}
	if (!i && !p2ps_root_exists(r, cur))
		return false;
	p2ps_strlcpy(out, cur, len);
	return true;
}

static int add_name(char ***names, size_t *n, const char *name)
{
	char **nn;
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*names)[i], name))
			return 0;
	nn = realloc(*names, (*n + 1) * sizeof(*nn));
	if (!nn)
		return -ENOMEM;
	*names = nn;
	nn[*n] = strdup(name);
	if (!nn[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int p2ps_root_list(const struct p2ps_root *r, const char *dir, char ***names, size_t *n)
{
	char buf[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int err = 0, fd;

	*names = NULL;
	*n = 0;
	fd = p2ps_root_open(r, dir, O_RDONLY | O_DIRECTORY);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d && fd >= 0)
		close(fd);
	if (d) {
		while (!err && (de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				err = add_name(names, n, de->d_name);
		closedir(d);
	}
	if (!r->live && r->links) {
		size_t dl = strlen(dir);
		const char *line = r->links;

		while (!err && *line) {
			const char *eol = strchrnul(line, '\n');
			const char *t1 = memchr(line, '\t', eol - line);

			if (t1 && (size_t)(t1 - line) > dl + 1 && !strncmp(line, dir, dl) &&
			    line[dl] == '/' && !memchr(line + dl + 1, '/', t1 - line - dl - 1)) {
				snprintf(buf, sizeof(buf), "%.*s", (int)(t1 - line - dl - 1), line + dl + 1);
				err = add_name(names, n, buf);
			}
			line = *eol ? eol + 1 : eol;
		}
	}
	if (err) {
		p2ps_free_list(*names, *n);
		*names = NULL;
		*n = 0;
		return err;
	}
	if (*n)
		qsort(*names, *n, sizeof(**names), cmp_str);
	return 0;
}

void p2ps_free_list(char **names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* ---------------------------------------------------------------- programs */

int p2ps_run_timeout_ms(void)
{
	const char *e = getenv("P2PCTL_CMD_TIMEOUT");
	char *end;
	double v;

	if (e && *e) {
		v = strtod(e, &end);
		if (!*end && v > 0 && v <= 3600)
			return (int)(v * 1000);
	}
	return P2PS_RUN_TIMEOUT_MS;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reap @pid within @ms; its wait status, or -1 if it is still there. */
static int reap(pid_t pid, int ms)
{
	long long end = now_ms() + ms;
	int st;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			return st;
		if (w < 0 && errno != EINTR)
			return -1;
		if (now_ms() >= end)
			return -1;
		usleep(10000);
	}
}

int p2ps_run(char *const argv[], int timeout_ms, size_t cap, bool merge_err, char **out)
{
	int pfd[2], efd[2], st = 0, child_errno = 0;
	long long end = now_ms() + timeout_ms;
	size_t len = 0;
	char *buf;
	bool timed_out = false;
	int reaped = -1;
	pid_t pid;

	*out = NULL;
	buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	if (pipe2(pfd, O_CLOEXEC)) {
		free(buf);
		return -errno;
	}
	if (pipe2(efd, O_CLOEXEC)) {
		close(pfd[0]);
		close(pfd[1]);
		free(buf);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(pfd[0]);
		close(pfd[1]);
		close(efd[0]);
		close(efd[1]);
		free(buf);
		return -e;
	}
	if (!pid) {
		int nul = open("/dev/null", O_RDWR);

		setpgid(0, 0);		/* its own group: a timeout kills its children too */
		if (nul >= 0)
			dup2(nul, 0);
		dup2(pfd[1], 1);
		if (merge_err)
			dup2(pfd[1], 2);
		else if (nul >= 0)
			dup2(nul, 2);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		child_errno = errno;
		if (write(efd[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(127);
		_exit(127);
	}
	setpgid(pid, pid);
	close(pfd[1]);
	close(efd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	fcntl(efd[0], F_SETFL, O_NONBLOCK);
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		long long left = end - now_ms();
		char chunk[4096];
		ssize_t n;
		int k;

		if (reaped < 0 && waitpid(pid, &st, WNOHANG) == pid)
			reaped = 1;	/* gone: take what is in the pipe, then stop */
		if (left <= 0 && reaped < 0) {
			timed_out = true;
			break;
		}
		k = reaped > 0 ? 1 : poll(&p, 1, (int)(left > 100 ? 100 : left));
		if (k < 0 && errno != EINTR)
			break;
		if (k <= 0)
			continue;
		n = read(pfd[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;		/* EOF, or nothing left after its exit */
		if (len < cap) {
			size_t take = (size_t)n < cap - len ? (size_t)n : cap - len;

			memcpy(buf + len, chunk, take);
			len += take;
		}
	}
	close(pfd[0]);
	if (read(efd[0], &child_errno, sizeof(child_errno)) != (ssize_t)sizeof(child_errno))
		child_errno = 0;
	close(efd[0]);
	buf[len] = '\0';
	if (!timed_out && reaped < 0) {
		long long left = end - now_ms();

		st = reap(pid, left > 0 ? (int)left : 0);
		if (st == -1)
			timed_out = true;
	}
	if (timed_out) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		/* One stuck in the kernel (a GPU off the bus) may never go: leave it. */
		reap(pid, 1000);
		*out = buf;
		return -ETIMEDOUT;
	}
	kill(-pid, SIGKILL);	/* what it left behind in its group */
	if (child_errno) {
		free(buf);
		return -child_errno;
	}
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void p2ps_run_describe(int rc, int timeout_ms, char *buf, size_t len)
{
	if (rc == -ETIMEDOUT)
		snprintf(buf, len, "timed out after %g s (killed)", timeout_ms / 1000.0);
	else if (rc == -ENOENT)
		snprintf(buf, len, "not found");
	else if (rc < 0)
		snprintf(buf, len, "could not run: %s", strerror(-rc));
	else if (rc >= 128)
		snprintf(buf, len, "killed by signal %d", rc - 128);
	else
		snprintf(buf, len, "exit status %d", rc);
}

/* ---------------------------------------------------------------- decompression */

static int grow(unsigned char **buf, size_t *cap, size_t need)
{
	unsigned char *n;
	size_t c = *cap ? *cap : 1 << 20;

	while (c < need) {
		if (c >= MAX_FILE)
			return -EFBIG;
		c *= 2;
	}
	if (c == *cap)
		return 0;
	n = realloc(*buf, c);
	if (!n)
		return -ENOMEM;
	*buf = n;
	*cap = c;
	return 0;
}

static int unxz(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen)
{
	lzma_stream s = LZMA_STREAM_INIT;
	unsigned char *buf = NULL;
	size_t cap = 0;
	lzma_ret ret;

	if (lzma_stream_decoder(&s, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
		return -P2PS_E_COMPRESSION;
	s.next_in = in;
	s.avail_in = inlen;
	do {
		if (grow(&buf, &cap, s.total_out + 65536)) {
			ret = LZMA_MEM_ERROR;
			break;
		}
		s.next_out = buf + s.total_out;
		s.avail_out = cap - s.total_out;
		ret = lzma_code(&s, LZMA_FINISH);
	} while (ret == LZMA_OK);
	*outlen = s.total_out;
	lzma_end(&s);
	if (ret != LZMA_STREAM_END) {
		free(buf);
		return -P2PS_E_COMPRESSION;
	}
	*out = buf;
	return 0;
}

static int unzstd(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen)
{
	ZSTD_DStream *z = ZSTD_createDStream();
	ZSTD_inBuffer ib = { in, inlen, 0 };
	unsigned char *buf = NULL;
	size_t cap = 0, len = 0, r;

	if (!z)
		return -ENOMEM;
	ZSTD_initDStream(z);
	for (;;) {
		ZSTD_outBuffer ob;

		if (grow(&buf, &cap, len + 65536))
			goto fail;
		ob.dst = buf + len;
		ob.size = cap - len;
		ob.pos = 0;
		r = ZSTD_decompressStream(z, &ob, &ib);
		if (ZSTD_isError(r))
			goto fail;
		len += ob.pos;
		if (r == 0 && ib.pos == ib.size)
			break;		/* last frame complete */
		if (ib.pos == ib.size && ob.pos < ob.size)
			goto fail;	/* truncated */
	}
	ZSTD_freeDStream(z);
	*out = buf;
	*outlen = len;
	return 0;
fail:
	ZSTD_freeDStream(z);
	free(buf);
	return -P2PS_E_COMPRESSION;
}

static int ungz(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen)
{
	z_stream s;
	unsigned char *buf = NULL;
	size_t cap = 0;
	int ret;

	memset(&s, 0, sizeof(s));
	if (inflateInit2(&s, 15 + 32) != Z_OK)
		return -P2PS_E_COMPRESSION;
	s.next_in = (unsigned char *)in;
	s.avail_in = (uInt)inlen;
	do {
		if (grow(&buf, &cap, s.total_out + 65536)) {
			ret = Z_MEM_ERROR;
			break;
		}
		s.next_out = buf + s.total_out;
		s.avail_out = (uInt)(cap - s.total_out);
		ret = inflate(&s, Z_NO_FLUSH);
	} while (ret == Z_OK);
	*outlen = s.total_out;
	inflateEnd(&s);
	if (ret != Z_STREAM_END) {
		free(buf);
		return -P2PS_E_COMPRESSION;
	}
	*out = buf;
	return 0;
}

int p2ps_decompress(const unsigned char *in, size_t inlen, unsigned char **out, size_t *outlen)
{
	if (inlen >= 6 && !memcmp(in, "\xfd" "7zXZ\0", 6))
		return unxz(in, inlen, out, outlen);
	if (inlen >= 4 && !memcmp(in, "\x28\xb5\x2f\xfd", 4))
		return unzstd(in, inlen, out, outlen);
	if (inlen >= 2 && in[0] == 0x1f && in[1] == 0x8b)
		return ungz(in, inlen, out, outlen);
	*out = malloc(inlen ? inlen : 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, in, inlen);
	*outlen = inlen;
	return 0;
}
