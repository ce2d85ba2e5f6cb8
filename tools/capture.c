// SPDX-License-Identifier: GPL-2.0
/*
 * p2pctl report --capture DIR: the files doctor read, in the tree format
 * that `doctor --root DIR/root` reads (tests/fixtures/capture-host's):
 *
 *   DIR/root/...          each file doctor opened, at its real path; each
 *                         directory it listed, with its subdirectories
 *   DIR/root/.symlinks    "LINK<TAB>target<TAB>real path" for every link on
 *                         the way (sysfs links are not made as links)
 *   DIR/cmd/NAME.txt      command outputs ("$ command", output), among them
 *                         doctor's nvidia-smi topology and memory
 *   DIR/driver/           kallsyms-nvidia.txt.gz, for `check`
 *   DIR/MISSING           what was not copied whole, and why
 *
 * The paths come from the library's trace of a doctor run (struct
 * p2ps_doctor_opts.trace): a newer doctor that reads more needs a newer
 * capture.  Text is redacted as the report is, unless --full, and every
 * home (/home/NAME, or one learnt) becomes one /home/userN in path names,
 * .symlinks, MISSING and text alike (redact.c numbers them), so that the
 * replay finds what the text names; only known binary kinds are copied
 * as they are; of PCI config space, the Device Serial Number is zeroed;
 * of a process, only what doctor reads of it (the libnccl.so lines of
 * /proc/PID/maps) is kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "p2pctl.h"
#include "capture.h"
#include "redact.h"

#define CAP_FILE_MAX ((size_t)8 << 20)
#define CAP_LIST_MAX 4096

struct trace_ent {
	char *path;
	int how;
};

struct p2pctl_capture {
	char dir[PATH_MAX];
	struct p2ps_root *src;
	struct p2pctl_redact *red;	/* red->full: nothing replaced */
	struct trace_ent *ents;
	size_t n, cap;
	char **links;			/* .symlinks lines */
	size_t nr_links;
	char **notes;			/* MISSING lines */
	size_t nr_notes;
	FILE *miss;
};

static int mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	p2ps_strlcpy(buf, path, sizeof(buf));
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int p2pctl_capture_new(const char *dir, const char *root, struct p2pctl_redact *red,
		       struct p2pctl_capture **out)
{
	struct p2pctl_capture *c = calloc(1, sizeof(*c));
	char path[PATH_MAX + 16];
	int err;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	p2ps_strlcpy(c->dir, dir, sizeof(c->dir));
	c->red = red;
	snprintf(path, sizeof(path), "%s/root", dir);
	if (!access(path, F_OK)) {
		free(c);
		return -EEXIST;
	}
	err = p2ps_root_new(&c->src, root);
	if (!err)
		err = mkdirs(path);
	snprintf(path, sizeof(path), "%s/cmd", dir);
	if (!err)
		err = mkdirs(path);
	snprintf(path, sizeof(path), "%s/driver", dir);
	if (!err)
		err = mkdirs(path);
	snprintf(path, sizeof(path), "%s/MISSING", dir);
	if (!err && !(c->miss = fopen(path, "w")))
		err = -errno;
	if (err) {
		p2ps_root_free(c->src);
		free(c);
		return err;
	}
	*out = c;
	return 0;
}

void p2pctl_capture_trace(void *arg, const char *path, int how)
{
	struct p2pctl_capture *c = arg;

	if (!path || path[0] != '/')
		return;
	if (c->n == c->cap) {
		size_t n = c->cap ? c->cap * 2 : 256;
		struct trace_ent *e = realloc(c->ents, n * sizeof(*e));

		if (!e)
			return;
		c->ents = e;
		c->cap = n;
	}
	c->ents[c->n].path = strdup(path);
	c->ents[c->n].how = how;
	if (c->ents[c->n].path)
		c->n++;
}

/* @in's name in the capture: its home as /home/userN (unless --full). */
static void map_home(struct p2pctl_capture *c, const char *in, char *out, size_t len)
{
	p2pctl_redact_path(c->red, in, out, len);
}

/* @to relative to the directory @from (both absolute, canonical). */
static void relpath(const char *from, const char *to, char *out, size_t len)
{
	size_t common = 0, i, off = 0;
	const char *p;

	for (i = 0; from[i] && from[i] == to[i]; i++)
		if (from[i] == '/')
			common = i;
	if (!from[i] && (to[i] == '/' || !to[i]))
		common = i;
	out[0] = '\0';
	for (p = from + common; *p; p++)
		if (*p == '/')
			p2ps_catf(out, len, &off, "", "../");
	p2ps_catf(out, len, &off, "", "%s", to[common] == '/' ? to + common + 1 : to + common);
	if (!off)
		p2ps_strlcpy(out, ".", len);
}

static void add_line(char ***lines, size_t *n, const char *line)
{
	char **nl = realloc(*lines, (*n + 1) * sizeof(*nl));

	if (!nl)
		return;
	*lines = nl;
	nl[*n] = strdup(line);
	if (nl[*n])
		(*n)++;
}

static void add_link(struct p2pctl_capture *c, const char *link, const char *real)
{
	char ml[PATH_MAX], mr[PATH_MAX], dir[PATH_MAX], rel[PATH_MAX], line[3 * PATH_MAX + 4];

	map_home(c, link, ml, sizeof(ml));
	map_home(c, real, mr, sizeof(mr));
	p2ps_strlcpy(dir, ml, sizeof(dir));
	*strrchr(dir, '/') = '\0';
	relpath(*dir ? dir : "/", mr, rel, sizeof(rel));
	snprintf(line, sizeof(line), "%s\t%s\t%s", ml, rel, mr);
	add_line(&c->links, &c->nr_links, line);
}

/*
 * The real path of @path in the source (false: it does not resolve), with
 * a .symlinks line for each link on the way.
 */
static bool walk(struct p2pctl_capture *c, const char *path, char *real, size_t len)
{
	char prefix[PATH_MAX] = "", cur[PATH_MAX] = "", rq[PATH_MAX], expect[2 * PATH_MAX];
	const char *p = path;
	size_t pl = 0;

	while (*p) {
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		p2ps_catf(prefix, sizeof(prefix), &pl, "", "/%.*s", (int)n, p);
		snprintf(expect, sizeof(expect), "%s/%.*s", cur, (int)n, p);
		if (p2ps_root_realpath(c->src, prefix, rq, sizeof(rq))) {
			if (strcmp(rq, expect) && !(n <= 2 && p[0] == '.' && (n == 1 || p[1] == '.')))
				add_link(c, expect, rq);
			p2ps_strlcpy(cur, rq, sizeof(cur));
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			char *s = strrchr(cur, '/');

			if (s)
				*s = '\0';
		} else if (!(n == 1 && p[0] == '.')) {
			p2ps_strlcpy(cur, expect, sizeof(cur));
		}
		p += n;
	}
	if (!p2ps_root_realpath(c->src, path, real, len))
		return false;
	return true;
}

static void note_missing(struct p2pctl_capture *c, const char *path, const char *why)
{
	char m[PATH_MAX], line[PATH_MAX + 128];

	map_home(c, path, m, sizeof(m));
	snprintf(line, sizeof(line), "%s: %s", m, why);
	add_line(&c->notes, &c->nr_notes, line);
}

/* /sys/.../DOMAIN:BUS:DEV.FN/config: a PCI function's config space */
static bool is_pci_config(const char *path)
{
	const char *slash = strrchr(path, '/');

	return !strncmp(path, "/sys/", 5) && !strcmp(slash, "/config") && slash - path > 13 &&
	       slash[-2] == '.' && slash[-5] == ':';
}

/*
 * Copied as it is: the binary kinds doctor reads (config space, EFI
 * variables, a module's ELF notes, ELF objects and modules, compressed
 * ones), by name or magic.  Anything else is text, a NUL byte or not, and
 * redacted.
 */
static bool is_binary(const char *path, const char *s, size_t len)
{
	static const char *const magic[] = { "\x7f" "ELF", "\x1f\x8b", "\xfd" "7zXZ", "\x28\xb5\x2f\xfd" };
	static const char *const ends[] = { ".ko", ".gz", ".xz", ".zst", ".so" };
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t i, bl = strlen(base);

	if (is_pci_config(path) || strstr(base, ".so.") || !strncmp(path, "/sys/firmware/efi/", 18) ||
	    (!strncmp(path, "/sys/module/", 12) && strstr(path, "/notes/")))
		return true;
	for (i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if (len >= strlen(magic[i]) && !memcmp(s, magic[i], strlen(magic[i])))
			return true;
	for (i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (bl >= strlen(ends[i]) && !strcmp(base + bl - strlen(ends[i]), ends[i]))
			return true;
	return false;
}

/* @text (@len bytes, from @src) to DIR/@rel, redacted unless binary or --full. */
static int write_out(struct p2pctl_capture *c, const char *rel, const char *src, const char *text,
		     size_t len)
{
	char path[2 * PATH_MAX], *red = NULL, *slash;
	bool binary = is_binary(src, text, len);
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/%s", c->dir, rel);
	slash = strrchr(path, '/');
	*slash = '\0';
	mkdirs(path);
	*slash = '/';
	if (!binary) {
		red = p2pctl_redact_capture(c->red, text, len, &len);
		if (!red)
			return -ENOMEM;		/* never the text unredacted */
		text = red;
	}
	f = fopen(path, "w");
	if (!f || fwrite(text, 1, len, f) != len)
		err = -EIO;
	if (f && fclose(f))
		err = -EIO;
	free(red);
	return err;
}

/*
 * A file over 8 MiB (a libnccl.so, say): only its 1 MiB chunks that hold
 * the word "version" (how doctor dates a library), in order, at most
 * 16 MiB of them; false if it could not be read.
 */
static bool take_versions(struct p2pctl_capture *c, const char *real, const char *rel)
{
	char path[3 * PATH_MAX], *buf, *slash;
	int fd = p2ps_root_open_regular(c->src, real);
	size_t have = 0, kept = 0;
	ssize_t n;
	FILE *f;

	if (fd < 0)
		return false;
	snprintf(path, sizeof(path), "%s/%s", c->dir, rel);
	slash = strrchr(path, '/');
	*slash = '\0';
	mkdirs(path);
	*slash = '/';
	buf = malloc((1 << 20) + 64);
	f = buf ? fopen(path, "w") : NULL;
	while (f && kept < ((size_t)16 << 20) && (n = read(fd, buf + have, 1 << 20)) > 0) {
		size_t end = have + (size_t)n;

		if (memmem(buf, end, "version", 7)) {
			fwrite(buf, 1, end, f);
			kept += end;
		}
		have = end > 64 ? 64 : end;
		memmove(buf, buf + end - have, have);
	}
	close(fd);
	free(buf);
	return f && !fclose(f);
}

bool p2pctl_capture_kept_line(const char *line, size_t len)
{
	return memmem(line, len, "/libnccl.so", 11);
}

/*
 * Of a process, doctor reads only which libnccl.so it maps (nccl_mapped()
 * in lib/doctor_software.c): of /proc/PID/maps keep those lines (@s, *@len
 * updated in place), and nothing of a process that maps none (false).
 * Every other file: true, as it is.
 */
static bool keep_of_process(const char *path, char *s, size_t *len)
{
	const char *pid = path + 6;
	char *in = s, *out = s;
	size_t n = strspn(pid, "0123456789");

	if (strncmp(path, "/proc/", 6) || !n || strcmp(pid + n, "/maps"))
		return true;
	while (in < s + *len) {
		char *e = memchr(in, '\n', (size_t)(s + *len - in));
		size_t l = e ? (size_t)(e - in) + 1 : (size_t)(s + *len - in);

		if (p2pctl_capture_kept_line(in, l)) {
			memmove(out, in, l);
			out += l;
		}
		in += l;
	}
	*len = (size_t)(out - s);
	*out = '\0';
	return *len > 0;
}

/* One path doctor read: its file, or its directory (and entries, if listed). */
static void take(struct p2pctl_capture *c, const char *path, int how)
{
	char real[PATH_MAX], mapped[PATH_MAX], rel[PATH_MAX + 8];
	struct stat st;
	int fd;

	if (!walk(c, path, real, sizeof(real))) {
		if (how != P2PS_TRACE_LIST)
			return;
		p2ps_strlcpy(real, path, sizeof(real));	/* only .symlinks lines under it */
	}
	map_home(c, real, mapped, sizeof(mapped));
	snprintf(rel, sizeof(rel), "root%s", mapped);
	fd = p2ps_root_open(c->src, real, O_PATH | O_NOFOLLOW);
	if (fd >= 0 && fstat(fd, &st))
		st.st_mode = 0;
	if (fd >= 0)
		close(fd);
	if (fd >= 0 && S_ISREG(st.st_mode)) {
		size_t len = 0;
		char *s = p2ps_root_read_max(c->src, real, &len, false, CAP_FILE_MAX);

		if (s && !keep_of_process(real, s, &len)) {
			free(s);
			return;
		}
		if (s && is_pci_config(real))
			p2pctl_redact_pci_config(c->red, (uint8_t *)s, len);
		if (s) {
			if (write_out(c, rel, real, s, len))
				note_missing(c, real, "could not write");
		} else if (errno != EFBIG) {
			note_missing(c, real, strerror(errno));
		} else if (take_versions(c, real, rel)) {
			note_missing(c, real, "over 8 MiB: only its 1 MiB chunks with \"version\" kept");
		} else {
			note_missing(c, real, "over 8 MiB, could not be read");
		}
		free(s);
		return;
	}
	if (fd >= 0 && !S_ISDIR(st.st_mode)) {
		note_missing(c, real, "not a regular file");
		return;
	}
	if (fd >= 0) {
		char full[3 * PATH_MAX];

		snprintf(full, sizeof(full), "%s/%s", c->dir, rel);
		mkdirs(full);
	}
	if (how == P2PS_TRACE_LIST) {
		char **names;
		size_t n, i;

		if (p2ps_root_list(c->src, path, &names, &n))
			return;
		for (i = 0; i < n && i < CAP_LIST_MAX; i++) {
			char child[2 * PATH_MAX], src[2 * PATH_MAX], rc[PATH_MAX];

			snprintf(child, sizeof(child), "%s/%s", strcmp(real, "/") ? real : "", names[i]);
			snprintf(src, sizeof(src), "%s/%s", strcmp(path, "/") ? path : "", names[i]);
			if (!p2ps_root_realpath(c->src, src, rc, sizeof(rc)))
				continue;
			if (strcmp(rc, child)) {
				add_link(c, child, rc);
			} else {
				int d = p2ps_root_open(c->src, child, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

				if (d >= 0) {
					char m[PATH_MAX], full[3 * PATH_MAX];

					close(d);
					map_home(c, child, m, sizeof(m));
					snprintf(full, sizeof(full), "%s/root%s", c->dir, m);
					mkdirs(full);
				}
			}
		}
		if (n > CAP_LIST_MAX)
			note_missing(c, path, "more than 4096 entries, the rest left out");
		p2ps_free_list(names, n);
	}
}

int p2pctl_capture_cmd(struct p2pctl_capture *c, const char *name, const char *text)
{
	char rel[PATH_MAX], path[2 * PATH_MAX + 8];

	snprintf(rel, sizeof(rel), "cmd/%s.txt", name);
	snprintf(path, sizeof(path), "%s/%s", c->dir, rel);
	if (!access(path, F_OK))
		return 0;		/* the first output wins: doctor's own */
	return write_out(c, rel, rel, text ? text : "", text ? strlen(text) : 0);
}

/* The [nvidia] lines of kallsyms, for `check` on the capture. */
static void kallsyms(struct p2pctl_capture *c, const char *root)
{
	char path[PATH_MAX + 32], *s, *p;
	gzFile g;

	if (root) {
		snprintf(path, sizeof(path), "%s/../driver/kallsyms-nvidia.txt.gz", root);
		s = p2ps_read_file_max(path, NULL, true, 64 << 20);
	} else {
		s = p2ps_read_file_max("/proc/kallsyms", NULL, false, 64 << 20);
	}
	if (!s) {
		add_line(&c->notes, &c->nr_notes, "kallsyms: not readable");
		return;
	}
	snprintf(path, sizeof(path), "%s/driver/kallsyms-nvidia.txt.gz", c->dir);
	g = gzopen(path, "wb");
	for (p = s; g && *p;) {
		char *e = strchrnul(p, '\n');

		if (memmem(p, (size_t)(e - p), "[nvidia]", 8))
			gzprintf(g, "%.*s\n", (int)(e - p), p);
		p = *e ? e + 1 : e;
	}
	if (!g || gzclose(g) != Z_OK)
		add_line(&c->notes, &c->nr_notes, "kallsyms: could not write");
	free(s);
}

static int cmp_ent(const void *a, const void *b)
{
	const struct trace_ent *x = a, *y = b;
	int d = strcmp(x->path, y->path);

	return d ? d : x->how - y->how;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int p2pctl_capture_finish(struct p2pctl_capture *c, const char *root)
{
	char path[PATH_MAX + 16];
	size_t i;
	FILE *f;
	int err = 0;

	if (c->n)
		qsort(c->ents, c->n, sizeof(*c->ents), cmp_ent);
	for (i = 0; i < c->n; i++)
		if (!i || strcmp(c->ents[i].path, c->ents[i - 1].path) ||
		    c->ents[i].how == P2PS_TRACE_LIST)
			take(c, c->ents[i].path, c->ents[i].how);
	kallsyms(c, root);
	if (c->nr_links)
		qsort(c->links, c->nr_links, sizeof(*c->links), cmp_str);
	snprintf(path, sizeof(path), "%s/root/.symlinks", c->dir);
	f = fopen(path, "w");
	for (i = 0; f && i < c->nr_links; i++)
		if (!i || strcmp(c->links[i], c->links[i - 1]))
			fprintf(f, "%s\n", c->links[i]);
	if (!f || fclose(f))
		err = -EIO;
	if (c->nr_notes)
		qsort(c->notes, c->nr_notes, sizeof(*c->notes), cmp_str);
	for (i = 0; i < c->nr_notes; i++)
		if (!i || strcmp(c->notes[i], c->notes[i - 1]))
			fprintf(c->miss, "%s\n", c->notes[i]);
	for (i = 0; i < c->nr_notes; i++)
		free(c->notes[i]);
	free(c->notes);
	if (fclose(c->miss))
		err = -EIO;
	for (i = 0; i < c->n; i++)
		free(c->ents[i].path);
	for (i = 0; i < c->nr_links; i++)
		free(c->links[i]);
	free(c->ents);
	free(c->links);
	p2ps_root_free(c->src);
	free(c);
	return err;
}
