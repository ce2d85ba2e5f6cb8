// SPDX-License-Identifier: GPL-2.0
/*
 * libp2pshim: `p2pctl doctor`'s checks of the software above the driver
 * (issue 23): the NCCL a process would load (FIELD.md F21: all-reduce
 * writes out of bounds once P2P is live, fixed in 2.27.5); then vLLM's
 * cached "no P2P" answers (F22, doctor_vllm.c).  Read under the doctor's
 * root.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <json-c/json.h>

#include "doctor.h"

#define NCCL_FIXED "2.27.5"

int p2ps_version_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		unsigned long x = strtoul(a, (char **)&a, 10), y = strtoul(b, (char **)&b, 10);

		if (x != y)
			return x < y ? -1 : 1;
		if (*a == '.')
			a++;
		else
			a += strlen(a);
		if (*b == '.')
			b++;
		else
			b += strlen(b);
	}
	return 0;
}

/* "X.Y.Z" at @s (digits and two dots) into @out. */
static bool take_version(const char *s, char *out, size_t len)
{
	size_t n = 0;
	int dots = 0;

	while ((isdigit((unsigned char)s[n]) || s[n] == '.') && n < 31) {
		dots += s[n] == '.';
		n++;
	}
	while (n && s[n - 1] == '.') {
		n--;
		dots--;
	}
	if (dots < 2 || n >= len)
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

/* The "NCCL version X.Y.Z" string NCCL carries for its banner. */
static bool version_in_file(struct dctx *c, const char *path, char *out, size_t len)
{
	static const char key[] = "NCCL version ";
	char *buf;
	size_t have = 0, n, total = 0;
	bool found = false;
	int fd = p2ps_root_open_regular(&c->root, path);
	FILE *f;

	if (fd < 0)
		return false;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return false;
	}
	buf = malloc((1 << 20) + 64);
	while (buf && !found && total < (1UL << 30) &&
	       (n = fread(buf + have, 1, (1 << 20), f)) > 0) {
		char *p = buf;
		size_t end = have + n;

		total += n;
		while ((p = memmem(p, end - (size_t)(p - buf), key, sizeof(key) - 1))) {
			if ((size_t)(p - buf) + sizeof(key) + 32 > end && !feof(f))
				break;		/* finish it with the next chunk */
			if (take_version(p + sizeof(key) - 1, out, len)) {
				found = true;
				break;
			}
			p++;
		}
		/* keep a tail for a string that spans two chunks */
		have = end > 64 ? 64 : end;
		memmove(buf, buf + end - have, have);
	}
	free(buf);
	fclose(f);
	return found;
}

struct nccl_lib {
	char path[512];
	char real[512];
	char version[32];
	char how[48];
};

struct nccl_scan {
	struct nccl_lib libs[16];
	size_t n;
};

static void nccl_consider_file(struct dctx *c, struct nccl_scan *s, const char *path,
			       const char *where, const char *distinfo_dir)
{
	struct nccl_lib *l;
	char real[512];
	const char *base;
	size_t i;

	if (!p2ps_root_realpath(&c->root, path, real, sizeof(real)) ||
	    !p2ps_root_exists(&c->root, real))
		return;
	for (i = 0; i < s->n; i++)
		if (!strcmp(s->libs[i].real, real))
			return;
	if (s->n == sizeof(s->libs) / sizeof(s->libs[0]))
		return;
	l = &s->libs[s->n++];
	memset(l, 0, sizeof(*l));
	p2ps_strlcpy(l->path, path, sizeof(l->path));
	p2ps_strlcpy(l->real, real, sizeof(l->real));
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	if (!strncmp(base, "libnccl.so.", 11) && take_version(base + 11, l->version, sizeof(l->version))) {
		snprintf(l->how, sizeof(l->how), "%s, file name", where);
		return;
	}
	if (version_in_file(c, real, l->version, sizeof(l->version))) {
		snprintf(l->how, sizeof(l->how), "%s, its version string", where);
		return;
	}
	if (distinfo_dir) {
		char **names;
		size_t n;

		if (!p2ps_root_list(&c->root, distinfo_dir, &names, &n)) {
			for (i = 0; i < n && !*l->version; i++) {
				const char *d = strchr(names[i], '-');

				if (!strncmp(names[i], "nvidia_nccl_cu", 14) && d &&
				    strstr(names[i], ".dist-info") &&
				    take_version(d + 1, l->version, sizeof(l->version)))
					snprintf(l->how, sizeof(l->how), "%s, %s", where, names[i]);
			}
			p2ps_free_list(names, n);
		}
	}
	if (!*l->version)
		snprintf(l->how, sizeof(l->how), "%s", where);
}

static void nccl_consider(struct dctx *c, struct nccl_scan *s, const char *dir, const char *where,
			  const char *distinfo_dir)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/libnccl.so.2", dir);
	nccl_consider_file(c, s, path, where, distinfo_dir);
}

static void nccl_python(struct dctx *c, struct nccl_scan *s, const char *libdir);

/* PREFIX/lib of a virtualenv or a conda installation: its Python packages, its own libraries. */
static void nccl_env(struct dctx *c, struct nccl_scan *s, const char *prefix, const char *where)
{
	char lib[1024];

	snprintf(lib, sizeof(lib), "%s/lib", prefix);
	nccl_python(c, s, lib);
	nccl_consider(c, s, lib, where, NULL);
}

/* nccl_env() for every entry of @dir, as @where. */
static void nccl_env_each(struct dctx *c, struct nccl_scan *s, const char *dir, const char *where)
{
	char **names, env[800];
	size_t n, i;

	if (p2ps_root_list(&c->root, dir, &names, &n))
		return;
	for (i = 0; i < n; i++) {
		snprintf(env, sizeof(env), "%s/%s", dir, names[i]);
		nccl_env(c, s, env, where);
	}
	p2ps_free_list(names, n);
}

/*
 * Environments below @dir (a home, /opt): DIR/NAME (a .venv, miniconda3),
 * DIR/NAME/envs/ENV (conda's environments), DIR/.virtualenvs/ENV and
 * DIR/.pyenv/versions/V.
 */
static void nccl_envs_under(struct dctx *c, struct nccl_scan *s, const char *dir)
{
	char **names, path[600], sub[700];
	size_t n, i;

	if (p2ps_root_list(&c->root, dir, &names, &n))
		return;
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		nccl_env(c, s, path, "virtualenv or conda");
		snprintf(sub, sizeof(sub), "%s/envs", path);
		nccl_env_each(c, s, sub, "conda environment");
		/* a project's own environment: DIR/PROJECT/.venv, DIR/PROJECT/venv */
		snprintf(sub, sizeof(sub), "%s/.venv", path);
		nccl_env(c, s, sub, "virtualenv");
		snprintf(sub, sizeof(sub), "%s/venv", path);
		nccl_env(c, s, sub, "virtualenv");
		if (!strcmp(names[i], ".virtualenvs") || !strcmp(names[i], "venvs") ||
		    !strcmp(names[i], ".venvs") || !strcmp(names[i], "virtualenvs"))
			nccl_env_each(c, s, path, "virtualenv");
		snprintf(sub, sizeof(sub), "%s/versions", path);
		if (!strcmp(names[i], ".pyenv"))
			nccl_env_each(c, s, sub, "pyenv");
	}
	p2ps_free_list(names, n);
}

/* The NCCL libraries running processes have mapped (/proc/PID/maps). */
static void nccl_mapped(struct dctx *c, struct nccl_scan *s)
{
	char **names, path[64], where[48];
	size_t n, i;

	if (p2ps_root_list(&c->root, "/proc", &names, &n))
		return;
	for (i = 0; i < n; i++) {
		char *maps, *line, *save;

		if (!isdigit((unsigned char)names[i][0]) || strspn(names[i], "0123456789") != strlen(names[i]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/maps", names[i]);
		maps = p2ps_root_read(&c->root, path, NULL, false);
		for (line = maps ? strtok_r(maps, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
			char *file = strchr(line, '/'), *del;

			if (!file || !strstr(file, "/libnccl.so"))
				continue;
			if ((del = strstr(file, " (deleted)")))
				*del = '\0';
			snprintf(where, sizeof(where), "mapped by process %s", names[i]);
			nccl_consider_file(c, s, file, where, NULL);
		}
		free(maps);
	}
	p2ps_free_list(names, n);
}

/* Directories of ld.so.conf (and its includes, one level of globs). */
static void nccl_ldconf(struct dctx *c, struct nccl_scan *s, const char *file, int depth)
{
	char *text = p2ps_root_read(&c->root, file, NULL, false), *line, *save;

	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line = p2ps_trim(line);
		if (!strncmp(line, "include", 7) && isspace((unsigned char)line[7]) && depth < 2) {
			char *pat = p2ps_trim(line + 8), dir[512], **names;
			const char *slash = strrchr(pat, '/'), *star = strchr(pat, '*');
			size_t n, i, plen;

			if (!slash)
				continue;
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - pat), pat);
			if (!star) {
				nccl_ldconf(c, s, pat, depth + 1);
				continue;
			}
			plen = (size_t)(star - slash - 1);
			if (p2ps_root_list(&c->root, dir, &names, &n))
				continue;
			for (i = 0; i < n; i++) {
				const char *suffix = star + 1;
				size_t nl = strlen(names[i]), sl = strlen(suffix);
				char f[1024];

				if (strncmp(names[i], slash + 1, plen) || nl < sl ||
				    strcmp(names[i] + nl - sl, suffix))
					continue;
				snprintf(f, sizeof(f), "%s/%s", dir, names[i]);
				nccl_ldconf(c, s, f, depth + 1);
			}
			p2ps_free_list(names, n);
		} else if (line[0] == '/') {
			nccl_consider(c, s, line, "ldconfig", NULL);
		}
	}
	free(text);
}

/* DIR/python3*\/{site,dist}-packages/nvidia/nccl/lib */
static void nccl_python(struct dctx *c, struct nccl_scan *s, const char *libdir)
{
	static const char *const pkgs[] = { "site-packages", "dist-packages" };
	char **names;
	size_t n, i, j;

	if (p2ps_root_list(&c->root, libdir, &names, &n))
		return;
	for (i = 0; i < n; i++) {
		if (strncmp(names[i], "python3", 7))
			continue;
		for (j = 0; j < 2; j++) {
			char sp[600], dir[700];

			snprintf(sp, sizeof(sp), "%s/%s/%s", libdir, names[i], pkgs[j]);
			snprintf(dir, sizeof(dir), "%s/nvidia/nccl/lib", sp);
			nccl_consider(c, s, dir, "Python package", sp);
		}
	}
	p2ps_free_list(names, n);
}

static void python_cb(struct dctx *c, void *arg, const char *dir)
{
	nccl_python(c, arg, dir);
}

static void check_nccl(struct dctx *c)
{
	static const char *const trusted[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
		"/lib", "/usr/lib", "/usr/local/cuda/lib64",
	};
	static const char *const pylibs[] = {
		"/usr/lib", "/usr/local/lib", "/opt/conda/lib", "/usr/lib64", "/usr/local/lib64",
	};
	struct nccl_scan *s = calloc(1, sizeof(*s));
	size_t i;

	if (!s) {
		c->err = -ENOMEM;
		return;
	}
	if (c->root.live) {
		const char *env[] = { getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX") };
		char *llp = getenv("LD_LIBRARY_PATH") ? strdup(getenv("LD_LIBRARY_PATH")) : NULL;
		char *tok, *save, dir[600];

		for (tok = llp ? strtok_r(llp, ":", &save) : NULL; tok; tok = strtok_r(NULL, ":", &save))
			if (*tok == '/')
				nccl_consider(c, s, tok, "LD_LIBRARY_PATH", NULL);
		free(llp);
		for (i = 0; i < 2; i++)
			if (env[i] && *env[i] == '/') {
				snprintf(dir, sizeof(dir), "%s/lib", env[i]);
				nccl_python(c, s, dir);
				nccl_consider(c, s, dir, i ? "conda" : "virtualenv", NULL);
			}
	}
	nccl_ldconf(c, s, "/etc/ld.so.conf", 0);
	for (i = 0; i < sizeof(trusted) / sizeof(trusted[0]); i++)
		nccl_consider(c, s, trusted[i], "ldconfig", NULL);
	for (i = 0; i < sizeof(pylibs) / sizeof(pylibs[0]); i++)
		nccl_python(c, s, pylibs[i]);
	p2ps_dr_each_home(c, ".local/lib", python_cb, s);
	/* virtualenvs and conda in homes and /opt; then what processes run */
	nccl_envs_under(c, s, "/root");
	{
		char **homes, home[300];
		size_t n, i;

		if (!p2ps_root_list(&c->root, "/home", &homes, &n)) {
			for (i = 0; i < n; i++) {
				snprintf(home, sizeof(home), "/home/%s", homes[i]);
				nccl_envs_under(c, s, home);
			}
			p2ps_free_list(homes, n);
		}
	}
	nccl_envs_under(c, s, "/opt");
	nccl_mapped(c, s);

	if (!s->n)
		p2ps_dr_add(c, "nccl", NULL, P2PS_V_SKIP, "ld.so.conf, Python packages", NULL,
			    "no libnccl.so.2 found (ld.so.conf directories, Python packages)");
	for (i = 0; i < s->n; i++) {
		const struct nccl_lib *l = &s->libs[i];

		if (!*l->version)
			p2ps_dr_add(c, "nccl", NULL, P2PS_V_SKIP, l->how, NULL,
				    "%s: version not found", l->real);
		else if (p2ps_version_cmp(l->version, NCCL_FIXED) < 0)
			p2ps_dr_add(c, "nccl", NULL, P2PS_V_WARN, l->how,
				    "update it to 2.27.5 or later (pip install -U nvidia-nccl-cu12 in that environment, or the distribution's libnccl2)",
				    "NCCL %s (%s): before 2.27.5 its all-reduce can write out of bounds once P2P is live",
				    l->version, l->real);
		else
			p2ps_dr_add(c, "nccl", NULL, P2PS_V_OK, l->how, NULL, "NCCL %s (%s)", l->version,
				    l->real);
	}
	free(s);
}

/*
 * NCCL uses P2P only up to a distance: between GPUs across host bridges
 * (NODE) or sockets (SYS) it stays on shared memory unless
 * NCCL_P2P_LEVEL=SYS (all-reduce busbw 9.9 -> 20.4 GB/s measured with it
 * on 8 GPUs over two sockets).  Named once for the bar1 pairs there.
 */
static void check_nccl_level(struct dctx *c)
{
	const struct p2ps_doctor_report *r = c->r;
	/* what the detail holds after its words: whole pairs, then "..." */
	char list[sizeof(((struct p2ps_finding *)0)->detail) - 72] = "";
	size_t i, off = 0, n = 0;

	for (i = 0; i < r->nr_pairs; i++) {
		const struct p2ps_pair *p = &r->pairs[i];

		if (p->p2p != P2PS_P2P_BAR1 ||
		    (p->path != P2PS_PATH_HOST_BRIDGES && p->path != P2PS_PATH_CROSS_SOCKET))
			continue;
		if (!p2ps_catf(list, sizeof(list), &off, ", ", "%s %s (%s)", r->gpus[p->a].bdf,
			       r->gpus[p->b].bdf, p->path == P2PS_PATH_CROSS_SOCKET ? "SYS" : "NODE") &&
		    !strstr(list, "..."))
			p2ps_catf(list, sizeof(list), &off, ", ", "...");
		n++;
	}
	if (n)
		p2ps_dr_add(c, "nccl-p2p-level", NULL, P2PS_V_WARN, "PCIe paths of the bar1 pairs",
			    "export NCCL_P2P_LEVEL=SYS for jobs on these GPUs",
			    "NCCL keeps GPUs at NODE/SYS distance on shared memory, not P2P: %s", list);
}

/*
 * NCCL's own configuration files (NCCL reads ~/.nccl.conf, then
 * /etc/nccl.conf, as environment defaults): NCCL_P2P_DISABLE=1, or an
 * NCCL_P2P_LEVEL short of the GPUs' distance, keeps NCCL off P2P whatever
 * the driver offers.  The environment of doctor itself too, on the live
 * system.
 */
static void nccl_setting(struct dctx *c, const char *where, const char *key, const char *val)
{
	static const char *const off_levels[] = { "LOC", "0", "NVL", "1" };
	size_t i;

	if (!strcmp(key, "NCCL_P2P_DISABLE") && strcmp(val, "0")) {
		p2ps_dr_add(c, "nccl-conf", NULL, P2PS_V_WARN, where,
			    "delete the NCCL_P2P_DISABLE line (or set it to 0) for jobs meant to use P2P",
			    "NCCL_P2P_DISABLE=%s in %s: NCCL never uses P2P", val, where);
		return;
	}
	if (strcmp(key, "NCCL_P2P_LEVEL"))
		return;
	for (i = 0; i < sizeof(off_levels) / sizeof(off_levels[0]); i++)
		if (!strcasecmp(val, off_levels[i]))
			break;
	if (i < sizeof(off_levels) / sizeof(off_levels[0]))
		p2ps_dr_add(c, "nccl-conf", NULL, P2PS_V_WARN, where,
			    "delete the NCCL_P2P_LEVEL line\nor set NCCL_P2P_LEVEL=SYS",
			    "NCCL_P2P_LEVEL=%s in %s: NCCL uses P2P %s", val, where,
			    i < 2 ? "for no pair" : "over NVLink only, never PCIe");
	else
		p2ps_dr_add(c, "nccl-conf", NULL, P2PS_V_OK, where, NULL,
			    "NCCL_P2P_LEVEL=%s in %s", val, where);
}

static void nccl_conf_file(struct dctx *c, const char *file)
{
	char *text = p2ps_root_read(&c->root, file, NULL, false), *line, *save;

	for (line = text ? strtok_r(text, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		line = p2ps_trim(line);
		if (*line == '#' || !eq)
			continue;
		*eq = '\0';
		nccl_setting(c, file, p2ps_trim(line), p2ps_trim(eq + 1));
	}
	free(text);
}

static void nccl_conf_cb(struct dctx *c, void *arg, const char *file)
{
	(void)arg;
	nccl_conf_file(c, file);
}

static void check_nccl_conf(struct dctx *c)
{
	static const char *const keys[] = { "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL" };
	size_t i;

	if (c->root.live) {
		for (i = 0; i < 2; i++)
			if (getenv(keys[i]))
				nccl_setting(c, "the environment", keys[i], getenv(keys[i]));
		if (getenv("NCCL_CONF_FILE"))
			nccl_conf_file(c, getenv("NCCL_CONF_FILE"));
	}
	p2ps_dr_each_home(c, ".nccl.conf", nccl_conf_cb, NULL);
	nccl_conf_file(c, "/etc/nccl.conf");
}

void p2ps_dr_software(struct dctx *c)
{
	check_nccl(c);
	check_nccl_level(c);
	check_nccl_conf(c);
}
