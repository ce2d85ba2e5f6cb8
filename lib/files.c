// SPDX-License-Identifier: GPL-2.0
/*
 * libp2pshim: whole files with a cap, regular ones only, and files under a
 * root prefix (a captured tree or the live system), every path resolved
 * inside it.  What doctor reads, and report and its capture through it.
 */
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

#include <zlib.h>

#include "internal.h"

/* p2ps_read_file(): kernel modules */
#define MAX_FILE (1UL << 30)

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

/*
 * @pathfd (O_PATH, taken) reopened for reading if it is a regular file.
 * An O_PATH open runs no driver's open method, so a device node (a
 * watchdog arms on open) or a FIFO is refused before anything opens it.
 * The reopen goes through /proc/self/fd, the same inode; -1 with errno
 * ENOSYS where /proc is not mounted (the caller opens by path then, and
 * p2ps_read_fd() still refuses what is not a regular file).
 */
static int reopen_regular(int pathfd)
{
	char self[64];
	struct stat st;
	int fd, e;

	if (pathfd < 0)
		return -1;
	if (fstat(pathfd, &st)) {
		e = errno;
		close(pathfd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(pathfd);
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pathfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	e = fd < 0 && errno == ENOENT ? ENOSYS : errno;
	close(pathfd);
	errno = e;
	return fd;
}

char *p2ps_read_file_max(const char *path, size_t *lenp, bool gz, size_t max)
{
	int fd = reopen_regular(open(path, O_PATH | O_CLOEXEC));

	if (fd < 0 && errno == ENOSYS)
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	return p2ps_read_fd(fd, lenp, gz, max);
}

char *p2ps_read_file(const char *path, size_t *lenp, bool gz)
{
	return p2ps_read_file_max(path, lenp, gz, MAX_FILE);
}

int p2ps_root_no_openat2;

static int cmp_link(const void *a, const void *b)
{
	const struct p2ps_link *x = a, *y = b;
	size_t n = x->plen < y->plen ? x->plen : y->plen;
	int d = memcmp(x->path, y->path, n);

	return d ? d : (x->plen > y->plen) - (x->plen < y->plen);
}

/*
 * ROOT/.symlinks ("LINK<TAB>target<TAB>real path" a line) indexed once,
 * sorted by link path: every lookup is a binary search, not a scan (a
 * capture of a large host has tens of thousands of lines).
 */
static int index_links(struct p2ps_root *r)
{
	const char *line = r->links;
	size_t cap = 0;

	while (line && *line) {
		const char *eol = strchrnul(line, '\n');
		const char *t1 = memchr(line, '\t', eol - line);
		const char *t2 = t1 ? memchr(t1 + 1, '\t', eol - t1 - 1) : NULL;

		if (t2 && t1 > line) {
			if (r->nr_links == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct p2ps_link *n = realloc(r->link, nc * sizeof(*n));

				if (!n)
					return -ENOMEM;
				r->link = n;
				cap = nc;
			}
			r->link[r->nr_links++] = (struct p2ps_link){
				.path = line, .plen = (size_t)(t1 - line),
				.real = t2 + 1, .rlen = (size_t)(eol - t2 - 1),
			};
		}
		line = *eol ? eol + 1 : eol;
	}
	if (r->nr_links)
		qsort(r->link, r->nr_links, sizeof(*r->link), cmp_link);
	return 0;
}

/* The link whose path is exactly @path[0..@n), or NULL. */
static const struct p2ps_link *find_link(const struct p2ps_root *r, const char *path, size_t n)
{
	struct p2ps_link key = { .path = path, .plen = n };

	if (!r->nr_links)
		return NULL;
	return bsearch(&key, r->link, r->nr_links, sizeof(*r->link), cmp_link);
}

/* Index of the first link not sorting before @prefix[0..@n). */
static size_t lower_link(const struct p2ps_root *r, const char *prefix, size_t n)
{
	struct p2ps_link key = { .path = prefix, .plen = n };
	size_t lo = 0, hi = r->nr_links;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_link(&r->link[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

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
	r->links = p2ps_read_file_max(buf, NULL, false, P2PS_LINKS_MAX);
	if (!r->links && errno != ENOENT) {
		int err = -errno;

		close(r->fd);
		r->fd = -1;
		return err;	/* a tree without its links would lose its devices */
	}
	return index_links(r);
}

void p2ps_root_fini(struct p2ps_root *r)
{
	free(r->links);
	r->links = NULL;
	free(r->link);
	r->link = NULL;
	r->nr_links = 0;
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

int p2ps_root_open_regular(const struct p2ps_root *r, const char *path)
{
	int fd = reopen_regular(p2ps_root_open(r, path, O_PATH));

	if (fd < 0 && errno == ENOSYS)
		fd = p2ps_fd_regular(p2ps_root_open(r, path, O_RDONLY | O_NONBLOCK));
	return fd;
}

char *p2ps_root_read_max(const struct p2ps_root *r, const char *path, size_t *len, bool gz,
			 size_t max)
{
	return p2ps_read_fd(p2ps_root_open_regular(r, path), len, gz, max);
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
	size_t n = strlen(path);

	/* @path itself, then each parent: "/a/b/c", "/a/b", "/a" */
	while (n) {
		const struct p2ps_link *l = find_link(r, path, n);

		if (l) {
			int k = snprintf(out, len, "%.*s%s", (int)l->rlen, l->real, path + n);

			return k > 0 && (size_t)k < len;
		}
		while (n && path[n - 1] != '/')
			n--;
		while (n && path[n - 1] == '/')
			n--;
	}
	return false;
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
	if (!r->live && r->nr_links) {
		size_t dl = strlen(dir), i;

		/* the links "DIR/NAME": a run of the sorted index */
		snprintf(buf, sizeof(buf), "%s/", dir);
		for (i = lower_link(r, buf, dl + 1); !err && i < r->nr_links; i++) {
			const struct p2ps_link *l = &r->link[i];

			if (l->plen <= dl + 1 || memcmp(l->path, buf, dl + 1))
				break;
			if (memchr(l->path + dl + 1, '/', l->plen - dl - 1))
				continue;
			snprintf(buf, sizeof(buf), "%.*s", (int)(l->plen - dl - 1), l->path + dl + 1);
			err = add_name(names, n, buf);
			snprintf(buf, sizeof(buf), "%s/", dir);
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
