// SPDX-License-Identifier: GPL-2.0
/*
 * `p2pctl doctor`: the helpers the check families share (reading the root,
 * sysfs paths, nvidia's params, the CPU, homes, sizes).  A check family
 * (lib/doctor_*.c) calls these, the findings store (findings.c), the
 * registry reader (doctor_registry.c) and the shared rules, never another
 * family: lib/doctor.c runs them in order.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <p2p-shim/readrule.h>
#include "doctor.h"

void p2ps_dr_fmt_size(uint64_t b, char *buf, size_t len)
{
	if (!b)
		snprintf(buf, len, "unknown");
	else if (b >= GiB && b % GiB == 0)
		snprintf(buf, len, "%" PRIu64 " GiB", b / GiB);
	else if (b >= GiB)
		snprintf(buf, len, "%.1f GiB", (double)b / GiB);
	else
		snprintf(buf, len, "%" PRIu64 " MiB", b / MiB);
}

unsigned long p2ps_dr_read_hex(struct dctx *c, const char *dir, const char *attr, bool *ok)
{
	char path[PATH_MAX + 64], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	*ok = p2ps_root_line(&c->root, path, buf, sizeof(buf));
	return *ok ? strtoul(buf, NULL, 0) : 0;
}

bool p2ps_dr_param(struct dctx *c, const char *key, char *out, size_t len)
{
	char *p = p2ps_root_read(&c->root, "/proc/driver/nvidia/params", NULL, false), *m;
	char pat[80];
	bool found = false;

	if (!p)
		return false;
	snprintf(pat, sizeof(pat), "%s:", key);
	for (m = strstr(p, pat); m; m = strstr(m + 1, pat)) {
		if (m == p || m[-1] == '\n') {
			char *e = strchr(m, '\n');

			if (e)
				*e = '\0';
			p2ps_strlcpy(out, p2ps_trim(m + strlen(pat)), len);
			found = true;
			break;
		}
	}
	free(p);
	return found;
}

int p2ps_dr_split_path(const char *path, char comps[][16], int max, char *host, size_t hostlen)
{
	char buf[1024], *tok, *save;
	int n = 0;

	*host = '\0';
	p2ps_strlcpy(buf, path, sizeof(buf));
	for (tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (!strncmp(tok, "pci", 3) && strchr(tok, ':') && !*host)
			p2ps_strlcpy(host, tok, hostlen);
		else if (*host && n < max && ((strlen(tok) == 12 && tok[4] == ':' && tok[7] == ':') ||
					      /* a VMD domain: 10000:e1:00.0 */
					      (strlen(tok) == 13 && tok[5] == ':' && tok[8] == ':')))
			p2ps_strlcpy(comps[n++], tok, 16);
	}
	return n;
}

bool p2ps_host_cpu_parse(const char *text, struct p2ps_host_cpu *cpu)
{
	const char *line;
	bool fam = false, mod = false;

	memset(cpu, 0, sizeof(*cpu));
	if (!text)
		return false;
	/* the first processor's block */
	for (line = text; *line && *line != '\n';) {
		const char *eol = strchrnul(line, '\n'), *colon = memchr(line, ':', eol - line);
		size_t kl;

		if (colon) {
			const char *v = colon + 1;

			for (kl = (size_t)(colon - line); kl && (line[kl - 1] == ' ' || line[kl - 1] == '\t'); kl--)
				;
			while (*v == ' ' || *v == '\t')
				v++;
			if (kl == 9 && !strncmp(line, "vendor_id", 9))
				snprintf(cpu->vendor_id, sizeof(cpu->vendor_id), "%.*s",
					 (int)(eol - v), v);
			else if (kl == 10 && !strncmp(line, "cpu family", 10))
				fam = sscanf(v, "%u", &cpu->family) == 1;
			else if (kl == 5 && !strncmp(line, "model", 5))
				mod = sscanf(v, "%u", &cpu->model) == 1;
		}
		line = *eol ? eol + 1 : eol;
	}
	cpu->vendor = !strcmp(cpu->vendor_id, "GenuineIntel") ? P2PS_CPU_INTEL :
		      !strcmp(cpu->vendor_id, "AuthenticAMD") ? P2PS_CPU_AMD : P2PS_CPU_OTHER;
	cpu->known = *cpu->vendor_id && fam && mod;
	return cpu->known;
}

bool p2ps_host_cpu(struct p2ps_host_cpu *cpu)
{
	char *text = p2ps_read_file_max("/proc/cpuinfo", NULL, false, 4 << 20);
	bool known = p2ps_host_cpu_parse(text, cpu);

	free(text);
	return known;
}

bool p2ps_dr_cpu(struct dctx *c, struct p2ps_host_cpu *cpu)
{
	char *text = p2ps_root_read(&c->root, "/proc/cpuinfo", NULL, false);
	bool known = p2ps_host_cpu_parse(text, cpu);

	free(text);
	return known;
}

bool p2ps_dr_shim_loaded(struct dctx *c)
{
	bool loaded = p2ps_root_exists(&c->root, "/sys/module/p2p_shim");

	if (!loaded) {
		char *mods = p2ps_root_read(&c->root, "/proc/modules", NULL, false);

		loaded = mods && (!strncmp(mods, "p2p_shim ", 9) || strstr(mods, "\np2p_shim "));
		free(mods);
	}
	return loaded;
}

/* /home/USER/SUFFIX for every user, and /root/SUFFIX */
void p2ps_dr_each_home(struct dctx *c, const char *suffix, void (*fn)(struct dctx *, void *, const char *),
		      void *arg)
{
	char **names, dir[600];
	size_t n, i;

	snprintf(dir, sizeof(dir), "/root/%s", suffix);
	fn(c, arg, dir);
	if (p2ps_root_list(&c->root, "/home", &names, &n))
		return;
	for (i = 0; i < n; i++) {
		snprintf(dir, sizeof(dir), "/home/%s/%s", names[i], suffix);
		fn(c, arg, dir);
	}
	p2ps_free_list(names, n);
}
