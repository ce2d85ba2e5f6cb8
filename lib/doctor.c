// SPDX-License-Identifier: GPL-2.0
/*
 * libp2pshim: host checks (`p2pctl doctor`).  Reads procfs/sysfs/boot files
 * under a root prefix, so that the unit tests run on captured fixture trees.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <p2p-shim/profile.h>
#include "internal.h"

#define GiB ((uint64_t)1 << 30)
#define MiB ((uint64_t)1 << 20)


const char *p2ps_verdict_name(enum p2ps_verdict v)
{
	switch (v) {
	case P2PS_V_OK: return "ok";
	case P2PS_V_SKIP: return "skip";
	case P2PS_V_WARN: return "warn";
	case P2PS_V_FAIL: return "fail";
	}
	return "unknown";
}

const char *p2ps_static_bar1_name(enum p2ps_static_bar1 s)
{
	switch (s) {
	case P2PS_SB_YES: return "yes";
	case P2PS_SB_NO: return "no";
	case P2PS_SB_UNALIGNED: return "yes, unusable";
	case P2PS_SB_INIT_FAILS: return "init fails";
	default: return "unknown";
	}
}

const char *p2ps_p2p_name(enum p2ps_p2p p)
{
	switch (p) {
	case P2PS_P2P_BAR1: return "bar1";
	case P2PS_P2P_NATIVE: return "native";
	case P2PS_P2P_NONE: return "none";
	default: return "unknown";
	}
}

const char *p2ps_pcie_path_name(enum p2ps_pcie_path p)
{
	switch (p) {
	case P2PS_PATH_SWITCH: return "common switch";
	case P2PS_PATH_ROOT_COMPLEX: return "same root complex";
	case P2PS_PATH_HOST_BRIDGES: return "across host bridges";
	case P2PS_PATH_CROSS_SOCKET: return "across sockets";
	default: return "unknown";
	}
}

void p2ps_dr_add(struct dctx *c, const char *check, const char *subject, enum p2ps_verdict v,
		const char *source, const char *remedy, const char *fmt, ...)
{
	struct p2ps_doctor_report *r = c->r;
	struct p2ps_finding *f;
	va_list ap;

	if (c->err)
		return;
	if (r->nr_findings == c->cap_f) {
		size_t n = c->cap_f ? c->cap_f * 2 : 32;
		struct p2ps_finding *nf = realloc(r->findings, n * sizeof(*nf));

		if (!nf) {
			c->err = -ENOMEM;
			return;
		}
		r->findings = nf;
		c->cap_f = n;
	}
	f = &r->findings[r->nr_findings++];
	memset(f, 0, sizeof(*f));
	p2ps_strlcpy(f->check, check, sizeof(f->check));
	p2ps_strlcpy(f->subject, subject ? subject : "", sizeof(f->subject));
	f->verdict = v;
	p2ps_strlcpy(f->source, source ? source : "", sizeof(f->source));
	p2ps_strlcpy(f->remedy, v == P2PS_V_OK || !remedy ? "" : remedy, sizeof(f->remedy));
	va_start(ap, fmt);
	vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
	va_end(ap);
	if (v == P2PS_V_FAIL)
		r->nr_fail++;
	else if (v == P2PS_V_WARN)
		r->nr_warn++;
}

const struct p2ps_finding *p2ps_doctor_find(const struct p2ps_doctor_report *r,
					    const char *check, const char *subject)
{
	size_t i;

	for (i = 0; i < r->nr_findings; i++)
		if (!strcmp(r->findings[i].check, check) &&
		    (!subject || !strcmp(r->findings[i].subject, subject)))
			return &r->findings[i];
	return NULL;
}

/* ---------------------------------------------------------------- kernel */

static void kernel_release(struct dctx *c)
{
	char buf[512];
	struct p2ps_doctor_report *r = c->r;

	if (p2ps_root_line(&c->root, "/proc/sys/kernel/osrelease", buf, sizeof(buf)) && *buf) {
		p2ps_strlcpy(r->kernel_release, buf, sizeof(r->kernel_release));
		return;
	}
	if (p2ps_root_line(&c->root, "/proc/version", buf, sizeof(buf)) &&
	    !strncmp(buf, "Linux version ", 14)) {
		char *s = buf + 14, *e = s;

		while (*e && !isspace((unsigned char)*e))
			e++;
		*e = '\0';
		p2ps_strlcpy(r->kernel_release, s, sizeof(r->kernel_release));
		return;
	}
	if (c->root.live) {
		struct utsname u;

		if (!uname(&u))
			p2ps_strlcpy(r->kernel_release, u.release, sizeof(r->kernel_release));
	}
}

static void load_config(struct dctx *c)
{
	char path[256];

	c->config = p2ps_root_read(&c->root, "/proc/config.gz", NULL, true);
	if (c->config) {
		p2ps_strlcpy(c->config_src, "/proc/config.gz", sizeof(c->config_src));
		return;
	}
	if (!*c->r->kernel_release)
		return;
	snprintf(path, sizeof(path), "/boot/config-%s", c->r->kernel_release);
	c->config = p2ps_root_read(&c->root, path, NULL, true);
	if (c->config)
		p2ps_strlcpy(c->config_src, path, sizeof(c->config_src));
}

/* 1: =y or =m; 0: not set (or absent from a config that exists); -1: no config. */
static int cfg(const struct dctx *c, const char *name)
{
	const char *p = c->config;
	size_t n = strlen(name);

	if (!p)
		return -1;
	while ((p = strstr(p, name))) {
		bool bol = p == c->config || p[-1] == '\n';

		if (bol && p[n] == '=')
			return p[n + 1] == 'y' || p[n + 1] == 'm';
		p += n;
	}
	return 0;
}

static bool kallsyms_has(struct dctx *c, const char *sym)
{
	char *ks = p2ps_root_read(&c->root, "/proc/kallsyms", NULL, false);
	char pat[128];
	bool found = false;

	if (!ks)
		return false;
	snprintf(pat, sizeof(pat), " %s\n", sym);
	found = strstr(ks, pat) != NULL;
	free(ks);
	return found;
}

static void check_kernel(struct dctx *c)
{
	const char *src = c->config_src;
	char buf[256];
	int k;

	/* kprobes */
	k = cfg(c, "CONFIG_KPROBES");
	if (k == 1)
		p2ps_dr_add(c, "kprobes", NULL, P2PS_V_OK, src, NULL, "CONFIG_KPROBES=y");
	else if (k == 0)
		p2ps_dr_add(c, "kprobes", NULL, P2PS_V_FAIL, src,
		    "use a kernel built with CONFIG_KPROBES=y (stock Debian, Ubuntu and Fedora kernels have it)",
		    "kprobes missing: kernel %s built without CONFIG_KPROBES", c->r->kernel_release);
	else if (kallsyms_has(c, "register_kprobe"))
		p2ps_dr_add(c, "kprobes", NULL, P2PS_V_OK, "/proc/kallsyms", NULL,
		    "register_kprobe present (no kernel config found)");
	else if (p2ps_root_exists(&c->root, "/proc/kallsyms"))
		p2ps_dr_add(c, "kprobes", NULL, P2PS_V_FAIL, "/proc/kallsyms",
		    "use a kernel built with CONFIG_KPROBES=y",
		    "kprobes missing: no register_kprobe in /proc/kallsyms");
	else
		p2ps_dr_add(c, "kprobes", NULL, P2PS_V_WARN, "",
		    "make /proc/config.gz or /boot/config-$(uname -r) available",
		    "unknown: no kernel config and no /proc/kallsyms");

	/* lockdown */
	if (p2ps_root_line(&c->root, "/sys/kernel/security/lockdown", buf, sizeof(buf))) {
		char *sel = strchr(buf, '['), *e = sel ? strchr(sel, ']') : NULL;

		if (sel && e) {
			*e = '\0';
			sel++;
		} else {
			sel = buf;
		}
		if (!strcmp(sel, "none"))
			p2ps_dr_add(c, "lockdown", NULL, P2PS_V_OK, "/sys/kernel/security/lockdown", NULL,
			    "lockdown: none");
		else
			p2ps_dr_add(c, "lockdown", NULL, P2PS_V_FAIL, "/sys/kernel/security/lockdown",
			    "sign p2p-shim.ko with a key the kernel trusts (e.g. a MOK enrolled with mokutil), or disable Secure Boot",
			    "kernel lockdown '%s' refuses unsigned modules", sel);
	} else if (cfg(c, "CONFIG_LOCK_DOWN_KERNEL_FORCE_CONFIDENTIALITY") == 1 ||
		   cfg(c, "CONFIG_LOCK_DOWN_KERNEL_FORCE_INTEGRITY") == 1) {
		p2ps_dr_add(c, "lockdown", NULL, P2PS_V_FAIL, src,
		    "sign p2p-shim.ko with a key the kernel trusts, or use a kernel without forced lockdown",
		    "kernel config forces lockdown: unsigned modules are refused");
	} else {
		p2ps_dr_add(c, "lockdown", NULL, P2PS_V_OK, src,
		    NULL, "no lockdown reported (securityfs absent; not forced by the kernel config)");
	}

	/* Secure Boot (efivars) */
	{
		char **names;
		size_t n, i;
		int sb = -1;

		if (!p2ps_root_exists(&c->root, "/sys/firmware/efi")) {
			p2ps_dr_add(c, "secure-boot", NULL, P2PS_V_OK, "/sys/firmware/efi", NULL,
			    "no EFI: no Secure Boot");
		} else if (!p2ps_root_list(&c->root, "/sys/firmware/efi/efivars", &names, &n)) {
			for (i = 0; i < n; i++) {
				if (!strncmp(names[i], "SecureBoot-", 11)) {
					char path[512];
					size_t len = 0;
					char *v;

					snprintf(path, sizeof(path), "/sys/firmware/efi/efivars/%s", names[i]);
					v = p2ps_root_read(&c->root, path, &len, false);
					if (v && len >= 5)
						sb = v[4] == 1;
					free(v);
				}
			}
			p2ps_free_list(names, n);
			if (sb == 1)
				p2ps_dr_add(c, "secure-boot", NULL, P2PS_V_WARN, "efivars SecureBoot",
				    "sign p2p-shim.ko and enroll the key (mokutil --import), or disable Secure Boot",
				    "Secure Boot is on: distribution kernels then refuse unsigned modules");
			else if (sb == 0)
				p2ps_dr_add(c, "secure-boot", NULL, P2PS_V_OK, "efivars SecureBoot", NULL,
				    "Secure Boot is off");
			else
				p2ps_dr_add(c, "secure-boot", NULL, P2PS_V_SKIP, "efivars", NULL,
				    "EFI present but SecureBoot variable not readable");
		}
	}

	/* module signature enforcement */
	if (p2ps_root_line(&c->root, "/sys/module/module/parameters/sig_enforce", buf, sizeof(buf)) &&
	    (buf[0] == 'Y' || buf[0] == '1'))
		p2ps_dr_add(c, "sig-enforce", NULL, P2PS_V_FAIL, "/sys/module/module/parameters/sig_enforce",
		    "sign p2p-shim.ko with a key the kernel trusts (scripts/sign-file), or boot without module.sig_enforce=1",
		    "module signatures enforced: an unsigned p2p-shim.ko is refused");
	else if (cfg(c, "CONFIG_MODULE_SIG_FORCE") == 1)
		p2ps_dr_add(c, "sig-enforce", NULL, P2PS_V_FAIL, src,
		    "sign p2p-shim.ko with a key the kernel trusts (scripts/sign-file)",
		    "CONFIG_MODULE_SIG_FORCE=y: an unsigned p2p-shim.ko is refused");
	else
		p2ps_dr_add(c, "sig-enforce", NULL, P2PS_V_OK, "/sys/module/module/parameters/sig_enforce",
		    NULL, "module signatures not enforced");

	/* modules_disabled */
	if (p2ps_root_line(&c->root, "/proc/sys/kernel/modules_disabled", buf, sizeof(buf))) {
		if (buf[0] == '1')
			p2ps_dr_add(c, "modules-disabled", NULL, P2PS_V_FAIL, "/proc/sys/kernel/modules_disabled",
			    "load p2p-shim before kernel.modules_disabled is set (it stays 1 until reboot)",
			    "module loading is disabled (kernel.modules_disabled=1)");
		else
			p2ps_dr_add(c, "modules-disabled", NULL, P2PS_V_OK, "/proc/sys/kernel/modules_disabled",
			    NULL, "module loading allowed");
	} else {
		p2ps_dr_add(c, "modules-disabled", NULL, P2PS_V_SKIP, "/proc/sys/kernel/modules_disabled",
		    NULL, "not readable");
	}
}

/* ---------------------------------------------------------------- driver */

static bool parse_nv_version(const char *s, char *out, size_t len)
{
	const char *start = s;

	/* the first token of the form N.N[.N] */
	while (*s) {
		if (isdigit((unsigned char)*s) && (s == start || !isalnum((unsigned char)s[-1]))) {
			const char *e = s;
			int dots = 0;

			while (isdigit((unsigned char)*e) || *e == '.') {
				dots += *e == '.';
				e++;
			}
			if (dots >= 1 && dots <= 2 && e[-1] != '.' && (size_t)(e - s) < len) {
				memcpy(out, s, e - s);
				out[e - s] = '\0';
				return true;
			}
			s = e;
			continue;
		}
		s++;
	}
	return false;
}

static void check_driver(struct dctx *c)
{
	struct p2ps_doctor_report *r = c->r;
	const char *vf = "/proc/driver/nvidia/version";
	char line[512], ver[P2PS_NAME_LEN] = "";
	const struct p2ps_profile *p;

	if (!p2ps_root_line(&c->root, vf, line, sizeof(line))) {
		if (p2ps_root_line(&c->root, "/sys/module/nvidia/version", ver, sizeof(ver)))
			p2ps_dr_add(c, "nvidia", NULL, P2PS_V_WARN, "/sys/module/nvidia/version",
			    "check that the nvidia module finished loading (dmesg)",
			    "nvidia %s is loaded but %s is missing", ver, vf);
		else
			p2ps_dr_add(c, "nvidia", NULL, P2PS_V_WARN, vf,
			    "load the nvidia open kernel module (p2p-shim arms when it arrives)",
			    "nvidia driver not loaded");
		p2ps_dr_add(c, "profile", NULL, P2PS_V_SKIP, NULL, NULL, "no driver version to check");
		return;
	}
	{
		const char *m = strstr(line, "Module");
		char *tail = m ? (char *)m + 6 : line;

		if (!parse_nv_version(tail, ver, sizeof(ver)))
			p2ps_root_line(&c->root, "/sys/module/nvidia/version", ver, sizeof(ver));
	}
	p2ps_strlcpy(r->driver_version, ver, sizeof(r->driver_version));
	if (strstr(line, "Open Kernel Module")) {
		r->open_module = true;
		p2ps_dr_add(c, "nvidia", NULL, P2PS_V_OK, vf, NULL, "NVIDIA open kernel module %s loaded",
		    *ver ? ver : "(version unknown)");
	} else {
		p2ps_dr_add(c, "nvidia", NULL, P2PS_V_FAIL, vf,
		    "install the open kernel module flavour of the driver (e.g. nvidia-open, or the installer's -m=kernel-open)",
		    "proprietary nvidia kernel module %s: unsupported (p2p-shim needs the open module)",
		    *ver ? ver : "");
	}
	if (!*ver) {
		p2ps_dr_add(c, "profile", NULL, P2PS_V_WARN, vf, "check /proc/driver/nvidia/version",
		    "driver version not found");
		return;
	}
	p = p2ps_profile_for_version(ver);
	if (p) {
		p2ps_strlcpy(r->profile, p->name, sizeof(r->profile));
		p2ps_dr_add(c, "profile", NULL, P2PS_V_OK, "p2ps_profile_for_version", NULL,
		    "driver %s: profile %s (%s)", ver, p->name, p->versions);
	} else {
		char vers[128];

		p2ps_supported_versions(vers, sizeof(vers));
		p2ps_dr_add(c, "profile", NULL, P2PS_V_FAIL, "p2ps_profile_for_version",
		    "use a supported driver branch, or check it with `p2pctl check` and arm with `p2pctl enable --force`",
		    "no profile for driver %s (supported: %s)", ver, vers);
	}
}

/* ---------------------------------------------------------------- GPUs */

struct gpu_id {
	uint16_t lo, hi;
	const char *arch;
};

/* Approximate PCI device id ranges of NVIDIA chip families. */
static const struct gpu_id arch_ids[] = {
	{ 0x1e00, 0x1fff, "Turing" },
	{ 0x2180, 0x21ff, "Turing" },
	{ 0x20b0, 0x20ff, "Ampere" },	/* GA100 */
	{ 0x2200, 0x22ff, "Ampere" },	/* GA102 */
	{ 0x2300, 0x23ff, "Hopper" },	/* GH100 */
	{ 0x2400, 0x25ff, "Ampere" },	/* GA103-GA107 */
	{ 0x2600, 0x28ff, "Ada" },	/* AD102-AD107 */
	{ 0x2900, 0x2fff, "Blackwell" },	/* GB100, GB20x */
};

struct gpu_mem {
	uint16_t device;
	uint16_t gib;
};

/* Nominal VRAM of common boards (modded boards differ: then BAR1 is what counts). */
static const struct gpu_mem vram_ids[] = {
	{ 0x2204, 24 },	/* RTX 3090 */
	{ 0x2203, 24 },	/* RTX 3090 Ti */
	{ 0x2206, 10 },	/* RTX 3080 */
	{ 0x2684, 24 },	/* RTX 4090 */
	{ 0x2685, 24 },	/* RTX 4090 D */
	{ 0x2704, 16 },	/* RTX 4080 */
	{ 0x2702, 16 },	/* RTX 4080 SUPER */
	{ 0x2803, 8 },	/* RTX 4060 Ti 8 GB */
	{ 0x2805, 16 },	/* RTX 4060 Ti 16 GB */
	{ 0x2b85, 32 },	/* RTX 5090 */
	{ 0x2330, 80 },	/* H100 SXM */
	{ 0x2331, 80 },	/* H100 PCIe */
	{ 0x2335, 141 },	/* H200 */
	{ 0x26b1, 48 },	/* RTX 6000 Ada */
};

struct gpu_chip {
	uint16_t lo, hi;
	const char *chip;
};

/*
 * Approximate PCI device id ranges of the chips (for "mixed pair" verdicts:
 * the driver compares chip architecture and implementation).
 */
static const struct gpu_chip chip_ids[] = {
	{ 0x1e00, 0x1e7f, "TU102" }, { 0x1e80, 0x1eff, "TU104" }, { 0x1f00, 0x1f7f, "TU106" },
	{ 0x1f80, 0x1fff, "TU117" }, { 0x2180, 0x21ff, "TU116" },
	{ 0x20b0, 0x20ff, "GA100" }, { 0x2200, 0x223f, "GA102" }, { 0x2400, 0x247f, "GA103" },
	{ 0x2480, 0x24ff, "GA104" }, { 0x2500, 0x257f, "GA106" }, { 0x2580, 0x25ff, "GA107" },
	{ 0x2300, 0x233f, "GH100" },
	{ 0x2680, 0x26ff, "AD102" }, { 0x2700, 0x277f, "AD103" }, { 0x2780, 0x27ff, "AD104" },
	{ 0x2800, 0x287f, "AD106" }, { 0x2880, 0x28ff, "AD107" },
	{ 0x2900, 0x29ff, "GB100" }, { 0x2b80, 0x2bff, "GB202" }, { 0x2c00, 0x2c7f, "GB203" },
	{ 0x2d00, 0x2d7f, "GB206" }, { 0x2d80, 0x2dff, "GB207" }, { 0x2f00, 0x2f7f, "GB205" },
};

static const char *chip_of(uint16_t dev)
{
	size_t i;

	for (i = 0; i < sizeof(chip_ids) / sizeof(chip_ids[0]); i++)
		if (dev >= chip_ids[i].lo && dev <= chip_ids[i].hi)
			return chip_ids[i].chip;
	return "";
}

/*
 * Measured VRAM of @bdf from `nvidia-smi --query-gpu=...` CSV output (the
 * pci.bus_id and memory.total columns, wherever they are): MiB, or 0.
 */
static uint64_t smi_vram_mib(const char *text, const char *bdf)
{
	const char *line = text;
	int bus_col = -1, mem_col = -1;

	while (line && *line) {
		const char *eol = strchrnul(line, '\n');
		char buf[1024], *tok, *save;
		int col = 0;
		char busid[32] = "";
		unsigned long long mem = 0;
		bool have_mem = false;

		snprintf(buf, sizeof(buf), "%.*s", (int)(eol - line), line);
		line = *eol ? eol + 1 : NULL;
		if (bus_col < 0 || mem_col < 0) {
			for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), col++) {
				tok = p2ps_trim(tok);
				if (!strcmp(tok, "pci.bus_id"))
					bus_col = col;
				else if (!strncmp(tok, "memory.total", 12))
					mem_col = col;
			}
			continue;
		}
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), col++) {
			tok = p2ps_trim(tok);
			if (col == bus_col)
				p2ps_strlcpy(busid, tok, sizeof(busid));
			else if (col == mem_col)
				have_mem = sscanf(tok, "%llu", &mem) == 1;
		}
		if (*busid && have_mem) {
			unsigned int dom, bus, dev, fn;
			char norm[16];

			/* nvidia-smi: 00000000:01:00.0; sysfs: 0000:01:00.0 */
			if (sscanf(busid, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
				continue;
			snprintf(norm, sizeof(norm), "%04x:%02x:%02x.%x", dom, bus, dev, fn);
			if (!strcasecmp(norm, bdf))
				return mem;
		}
	}
	return 0;
}

static const char *arch_of(uint16_t dev)
{
	size_t i;

	for (i = 0; i < sizeof(arch_ids) / sizeof(arch_ids[0]); i++)
		if (dev >= arch_ids[i].lo && dev <= arch_ids[i].hi)
			return arch_ids[i].arch;
	return "unknown";
}

static uint64_t vram_of(uint16_t dev)
{
	size_t i;

	for (i = 0; i < sizeof(vram_ids) / sizeof(vram_ids[0]); i++)
		if (vram_ids[i].device == dev)
			return (uint64_t)vram_ids[i].gib * GiB;
	return 0;
}

static void fmt_size(uint64_t b, char *buf, size_t len)
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
	char path[512], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	*ok = p2ps_root_line(&c->root, path, buf, sizeof(buf));
	return *ok ? strtoul(buf, NULL, 0) : 0;
}

/*
 * NVIDIA's "BAR1" (the framebuffer aperture) is the memory BAR after BAR0.
 * The sysfs resource file has one line per resource index; a 64-bit BAR0
 * (H100/H200) takes indexes 0 and 1, so BAR1 is line 2 there, while GeForce
 * boards have a 32-bit BAR0 and BAR1 on line 1.
 */
#define IORESOURCE_MEM_64 0x00100000UL

static uint64_t bar1_size(struct dctx *c, const char *dir)
{
	unsigned long long s[6] = { 0 }, e[6] = { 0 }, f[6] = { 0 };
	char path[512];
	char *res, *l;
	int i, idx;

	snprintf(path, sizeof(path), "%s/resource", dir);
	res = p2ps_root_read(&c->root, path, NULL, false);
	if (!res)
		return 0;
	for (i = 0, l = res; i < 6 && l && *l; i++) {
		if (sscanf(l, "%llx %llx %llx", &s[i], &e[i], &f[i]) != 3)
			break;
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	free(res);
	idx = f[0] & IORESOURCE_MEM_64 ? 2 : 1;
	if (s[idx] && e[idx] > s[idx])
		return e[idx] - s[idx] + 1;
	return 0;
}

static void gpu_name(struct dctx *c, const char *bdf, char *out, size_t len)
{
	char path[256];
	char *info, *m;

	snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", bdf);
	info = p2ps_root_read(&c->root, path, NULL, false);
	if (!info)
		return;
	m = strstr(info, "Model:");
	if (m) {
		char *e = strchr(m, '\n');

		if (e)
			*e = '\0';
		p2ps_strlcpy(out, p2ps_trim(m + 6), len);
	}
	free(info);
}

static int find_gpus(struct dctx *c)
{
	struct p2ps_doctor_report *r = c->r;
	char **names;
	size_t n, i, cap = 0;
	int err;

	err = p2ps_root_list(&c->root, "/sys/bus/pci/devices", &names, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		char link[256], real[256];
		struct p2ps_gpu *g;
		unsigned long vendor, cls, dev;
		bool ok1, ok2, ok3;
		char numabuf[32], path[300];

		snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s", names[i]);
		if (!p2ps_root_realpath(&c->root, link, real, sizeof(real)))
			p2ps_strlcpy(real, link, sizeof(real));
		vendor = p2ps_dr_read_hex(c, real, "vendor", &ok1);
		cls = p2ps_dr_read_hex(c, real, "class", &ok2);
		dev = p2ps_dr_read_hex(c, real, "device", &ok3);
		if (!ok1 || !ok2 || !ok3 || vendor != 0x10de ||
		    ((cls >> 8) != 0x0300 && (cls >> 8) != 0x0302))
			continue;
		if (r->nr_gpus == cap) {
			size_t nc = cap ? cap * 2 : 8;
			struct p2ps_gpu *ng = realloc(r->gpus, nc * sizeof(*ng));

			if (!ng) {
				p2ps_free_list(names, n);
				return -ENOMEM;
			}
			r->gpus = ng;
			cap = nc;
		}
		g = &r->gpus[r->nr_gpus++];
		memset(g, 0, sizeof(*g));
		p2ps_strlcpy(g->bdf, names[i], sizeof(g->bdf));
		p2ps_strlcpy(g->path, real, sizeof(g->path));
		g->device = (uint16_t)dev;
		g->pci_class = (uint32_t)cls;
		p2ps_strlcpy(g->arch, arch_of(g->device), sizeof(g->arch));
		p2ps_strlcpy(g->chip, chip_of(g->device), sizeof(g->chip));
		g->vram = vram_of(g->device);
		p2ps_strlcpy(g->vram_source, g->vram ? "nominal" : "", sizeof(g->vram_source));
		if (c->opts && c->opts->smi_query_text) {
			uint64_t mib = smi_vram_mib(c->opts->smi_query_text, g->bdf);

			/* memory.total is what clients see; boards carry whole GiB */
			if (mib) {
				g->vram = (mib * MiB + GiB - 1) / GiB * GiB;
				g->vram_mib = mib;
				p2ps_strlcpy(g->vram_source, "nvidia-smi", sizeof(g->vram_source));
			}
		}
		g->bar1 = bar1_size(c, real);
		g->display = -1;
		snprintf(path, sizeof(path), "%s/boot_vga", real);
		if (p2ps_root_line(&c->root, path, numabuf, sizeof(numabuf)))
			g->display = numabuf[0] == '1';
		gpu_name(c, g->bdf, g->name, sizeof(g->name));
		snprintf(path, sizeof(path), "%s/numa_node", real);
		g->numa_node = -1;
		if (p2ps_root_line(&c->root, path, numabuf, sizeof(numabuf)))
			g->numa_node = (int)strtol(numabuf, NULL, 10);
	}
	p2ps_free_list(names, n);
	return 0;
}

static bool param_value(struct dctx *c, const char *key, char *out, size_t len)
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

static void check_gpus(struct dctx *c)
{
	struct p2ps_doctor_report *r = c->r;
	char rebar[32] = "";
	bool have_rebar = param_value(c, "EnableResizableBar", rebar, sizeof(rebar));
	bool small_bar = false;
	size_t i;

	if (r->nr_gpus == 0) {
		p2ps_dr_add(c, "gpus", NULL, P2PS_V_WARN, "/sys/bus/pci/devices",
		    "check that the GPUs are visible (lspci -d 10de:)", "no NVIDIA display/3D device found");
		return;
	}
	for (i = 0; i < r->nr_gpus; i++) {
		struct p2ps_gpu *g = &r->gpus[i];
		char vs[32], bs[32];

		fmt_size(g->vram, vs, sizeof(vs));
		fmt_size(g->bar1, bs, sizeof(bs));
		p2ps_dr_add(c, "gpu", g->bdf, P2PS_V_OK, g->path, NULL,
		    "%s [10de:%04x], %s, VRAM %s%s%s%s, BAR1 %s, NUMA node %d",
		    *g->name ? g->name : "NVIDIA GPU", g->device, g->arch, vs,
		    g->vram ? " (" : "", g->vram ? g->vram_source : "", g->vram ? ")" : "",
		    bs, g->numa_node);
		if (!strcmp(g->arch, "unknown"))
			p2ps_dr_add(c, "arch", g->bdf, P2PS_V_WARN, "PCI device id",
			    "p2p-shim targets Turing and later with the open driver",
			    "architecture of device 0x%04x unknown", g->device);

		if (!g->bar1) {
			p2ps_dr_add(c, "bar1", g->bdf, P2PS_V_WARN, "resource", "check the PCI resources (lspci -vv)",
			    "BAR1 size unknown");
		} else if (g->bar1 <= 256 * MiB) {
			small_bar = true;
			p2ps_dr_add(c, "bar1", g->bdf, P2PS_V_FAIL, "resource",
			    "enable Above 4G Decoding and Resizable BAR in the firmware setup, and set NVreg_EnableResizableBar=1 (p2pctl config --write)",
			    "BAR1 is %s: BAR1 P2P needs all of VRAM in BAR1 (Resizable BAR)", bs);
		} else if (g->vram && g->bar1 < g->vram) {
			small_bar = true;
			p2ps_dr_add(c, "bar1", g->bdf, P2PS_V_FAIL, "resource",
			    "enable Resizable BAR (firmware, NVreg_EnableResizableBar=1); a board with more VRAM than the largest BAR1 can't use BAR1 P2P",
			    "BAR1 %s is smaller than VRAM %s: static BAR1 impossible", bs, vs);
		} else if (g->vram) {
			p2ps_dr_add(c, "bar1", g->bdf, P2PS_V_OK, "resource", NULL,
			    "BAR1 %s covers VRAM %s (Resizable BAR)", bs, vs);
		} else {
			p2ps_dr_add(c, "bar1", g->bdf, P2PS_V_WARN, "resource",
			    "make sure BAR1 is at least as large as VRAM",
			    "BAR1 %s; VRAM unknown, can't compare", bs);
		}
	}
	if (!have_rebar)
		p2ps_dr_add(c, "rebar-param", NULL, P2PS_V_SKIP, "/proc/driver/nvidia/params", NULL,
		    "NVreg_EnableResizableBar unknown (driver not loaded)");
	else if (atoi(rebar) != 0)
		p2ps_dr_add(c, "rebar-param", NULL, P2PS_V_OK, "/proc/driver/nvidia/params", NULL,
		    "NVreg_EnableResizableBar=%s", rebar);
	else if (small_bar)
		p2ps_dr_add(c, "rebar-param", NULL, P2PS_V_FAIL, "/proc/driver/nvidia/params",
		    "add `options nvidia NVreg_EnableResizableBar=1` (p2pctl config --write) and reload nvidia",
		    "NVreg_EnableResizableBar=0: the driver does not resize BAR1");
	else
		p2ps_dr_add(c, "rebar-param", NULL, P2PS_V_OK, "/proc/driver/nvidia/params", NULL,
		    "NVreg_EnableResizableBar=0, but BAR1 is already large (sized by the firmware)");
}

static void check_iommu(struct dctx *c)
{
	char **names;
	size_t n = 0;
	char cmdline[1024] = "";

	if (p2ps_root_list(&c->root, "/sys/class/iommu", &names, &n))
		n = 0;
	else
		p2ps_free_list(names, n);
	p2ps_root_line(&c->root, "/proc/cmdline", cmdline, sizeof(cmdline));
	if (n == 0) {
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_OK, "/sys/class/iommu", NULL,
		    "IOMMU off (no IOMMU registered)");
	} else if (strstr(cmdline, "iommu=pt") || strstr(cmdline, "iommu.passthrough=1")) {
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_OK, "/proc/cmdline", NULL,
		    "IOMMU in passthrough mode (%zu unit%s)", n, n == 1 ? "" : "s");
	} else {
		/*
		 * UVM/CUDA peer PTEs use the peer BAR1 as the IOMMU maps it
		 * (kbusGetBar1P2PDmaInfo), but RM's own BAR1 windows
		 * (dmaAllocBar1P2PMapping_GH100) describe the raw bus address:
		 * under translation those DMAs fault.
		 */
		p2ps_dr_add(c, "iommu", NULL, P2PS_V_WARN, "/sys/class/iommu",
		    "boot with iommu=pt: with a translating IOMMU, peer mappings the driver makes itself through BAR1 windows use the raw bus address and fault; CUDA peer mappings through UVM use the IOMMU address and work",
		    "IOMMU on (%zu unit%s), translated DMA", n, n == 1 ? "" : "s");
	}
}

/* ---------------------------------------------------------------- static BAR1 */

/*
 * The driver's static-BAR1 decision at BAR1 initialisation, per generation
 * (docs/cards.md has the source lines): kbusInitBar1_GM107 maps the boot
 * console at BAR1 offset 0, reserves the P2P mailbox (8 x 64 KiB) unless the
 * PCIe P2P type is BAR1, asks kbusIsStaticBar1Supported_TU102 and maps the
 * client-visible VRAM: from 580 at ALIGN_UP(console + mailbox, 512 MiB),
 * in 570-575 wherever the BAR1 heap has room (2 MiB aligned).  565 decides
 * before the console and mailbox and maps at 0.  Peers take the static BAR1
 * only at a 512 MiB-aligned DMA address (_kbusCreateStaticBar1IOMMUMapping).
 * 550/560 (gen-0) have no RMForceStaticBar1: kbusInitBar1_GM107 asks the
 * HAL kbusIsBar1P2PCapable (550.163.01 kern_bus_gm107.c L1011), which
 * p2p-shim's hook Z1 points at _GH100 (kern_bus_gh100.c L1119-1149): yes
 * when RMForceP2PType=2 and BAR1 VA - 128 KiB holds VRAM rounded up to
 * 2 MiB; the mapping then goes at BAR1 offset 0 (Z2), as in 565 before the
 * console (docs/hooks.md, Gen 0): kbusInitBar1_GM107 asks before it maps
 * the console and preserves the console mapping only when the answer is
 * no (as read in the 550.54.15-based tinygrad fork's kern_bus_gm107.c,
 * which differs there only by calling _GH100 directly).
 */
enum drv_gen {
	GEN_UNSERVED,		/* < 550, or the proprietary module */
	GEN_0,			/* 550/560: kbusIsBar1P2PCapable, RMForceP2PType=2 only */
	GEN_A0,			/* 565: default 3 (ONLY_GPU), decided before the console */
	GEN_A1,			/* 570: default 3 (ONLY_GPU) */
	GEN_A2,			/* 575: default 0 (DISABLE) */
	GEN_B,			/* 580+: default 2 (AUTO), console offset padded to 512 MiB */
};

#define SB_DISABLE 0
#define SB_ENABLE 1
#define SB_AUTO 2
#define SB_ONLY_GPU 3

#define KiB ((uint64_t)1 << 10)
#define ALIGN_DOWN_(x, a) ((x) / (a) * (a))
#define ALIGN_UP_(x, a) (((x) + (a) - 1) / (a) * (a))
#define SZ_2M (2 * MiB)
#define SZ_512M (512 * MiB)
#define CONSOLE_EST (32 * MiB)	/* a 3840x2160x4 firmware framebuffer */
#define USERD_MAX (64 * MiB)	/* 512 bytes x channels: not fixed by the source */

struct sb_rules {
	enum drv_gen gen;
	bool assumed;			/* no driver loaded: rules of 580+ assumed */
	long user_force_sb, user_pcie_type, user_force_p2p_type;	/* -1: not set */
	bool shim_keys;			/* p2p-shim supplies its registry defaults */
	bool shim_force;		/* p2p-shim forces static BAR1 where it fits (570+) */
};

struct sb_result {
	enum p2ps_static_bar1 v;
	char why[200];
	char remedy[256];
};

/* The effective RMForceStaticBar1 of a generation. */
static long sb_force_type(const struct sb_rules *k)
{
	long max = k->gen <= GEN_A1 ? 4 : 3;

	if (k->user_force_sb >= 0 && k->user_force_sb < max)
		return k->user_force_sb;
	switch (k->gen) {
	case GEN_A0:
	case GEN_A1: return SB_ONLY_GPU;
	case GEN_A2: return k->shim_keys ? SB_AUTO : SB_DISABLE;
	default: return SB_AUTO;
	}
}

/* Is the P2P mailbox reserved in BAR1 (_kbusRequiresP2PMailboxBar1_GM107)? */
static bool sb_mailbox(const struct sb_rules *k)
{
	if (k->gen == GEN_0 || k->gen == GEN_A0 || k->gen == GEN_A1) {
		long t = k->user_force_p2p_type >= 0 ? k->user_force_p2p_type :
			 k->shim_keys ? 2 : 0;

		return t != 2;		/* RMForceP2PType 2 = BAR1P2P there */
	}
	return (k->user_pcie_type >= 0 ? k->user_pcie_type : k->shim_keys ? 1 : 0) != 1;
}

static bool sb_bar1p2p_type(const struct sb_rules *k)
{
	return (k->gen == GEN_0 || k->gen == GEN_A0 || k->gen == GEN_A1) && !sb_mailbox(k);
}

#define MB(x) ((unsigned long long)((x) / MiB))

/*
 * Evaluate one GPU with RMForceStaticBar1 = @force: @bar1 the BAR1 size,
 * @fb the VRAM address space, @cfb the client-visible VRAM, @console whether
 * the boot console is in BAR1.
 */
static void sb_eval(const struct sb_rules *k, long force, uint64_t bar1, uint64_t fb,
		    uint64_t cfb, bool console, struct sb_result *o)
{
	uint64_t va = bar1 - 4 * KiB - 1;	/* mappableLength: last 4 KiB cut off */
	uint64_t va_al = ALIGN_DOWN_(va, SZ_2M);
	uint64_t fb_al = ALIGN_UP_(fb, SZ_2M);
	uint64_t con = console ? CONSOLE_EST : 0;
	uint64_t mbox = sb_mailbox(k) ? 8 * 64 * KiB : 0;
	uint64_t need = fb_al, off, req;

	o->remedy[0] = '\0';
	if (k->gen == GEN_0) {
		/*
		 * 550/560: kbusIsBar1P2PCapable_GH100 through p2p-shim's hook;
		 * no registry key forces or disables it, and the mapping sits at
		 * BAR1 offset 0 whatever the console (decided before it).
		 */
		if (!sb_bar1p2p_type(k)) {
			o->v = P2PS_SB_NO;
			snprintf(o->why, sizeof(o->why),
				 "550/560 map it only with RMForceP2PType=2, which is not in effect");
			return;
		}
		if (va < 128 * KiB || va - 128 * KiB < fb_al) {
			o->v = P2PS_SB_NO;
			snprintf(o->why, sizeof(o->why),
				 "550/560 rule: BAR1 (%llu MiB) minus 128 KiB can't hold VRAM (%llu MiB)",
				 MB(bar1), MB(fb_al));
			return;
		}
		o->v = P2PS_SB_YES;
		snprintf(o->why, sizeof(o->why),
			 "550/560 rule (RMForceP2PType=2, p2p-shim's hooks): BAR1 %llu MiB holds VRAM %llu MiB from offset 0%s",
			 MB(bar1), MB(fb_al), con ? " (decided before the console)" : "");
		return;
	}
	if (k->gen == GEN_A0) {
		/*
		 * 565: decided before the console and the mailbox; with static
		 * BAR1 the console is not preserved (static BAR1 maps FB 0 at
		 * BAR1 0, where the console already was) and nothing precedes it.
		 * ENABLE has no size check, AUTO wants twice the FB.
		 */
		need = ALIGN_UP_(cfb, SZ_2M);
		if (force == SB_DISABLE) {
			o->v = P2PS_SB_NO;
			snprintf(o->why, sizeof(o->why), "RMForceStaticBar1=0 (set by the user)");
			return;
		}
		if (force == SB_ONLY_GPU && !sb_bar1p2p_type(k)) {
			o->v = P2PS_SB_NO;
			snprintf(o->why, sizeof(o->why),
				 "565 default (RMForceStaticBar1=3) maps it only with RMForceP2PType=2, which is not in effect");
			return;
		}
		if ((force == SB_ONLY_GPU && (va < 128 * KiB || va - 128 * KiB < fb_al)) ||
		    (force == SB_AUTO && va_al < 2 * fb_al)) {
			o->v = P2PS_SB_NO;
			snprintf(o->why, sizeof(o->why), "%s: BAR1 (%llu MiB) can't hold %sVRAM (%llu MiB)",
				 force == SB_AUTO ? "565 automatic rule" : "565 rule", MB(bar1),
				 force == SB_AUTO ? "twice " : "", MB(fb_al));
			return;
		}
		if (need > va_al) {
			o->v = P2PS_SB_INIT_FAILS;
			snprintf(o->why, sizeof(o->why),
				 "RMForceStaticBar1=1 (565 checks no size): VRAM (%llu MiB) overruns BAR1 (%llu MiB): the GPU fails to initialise",
				 MB(need), MB(va_al));
			return;
		}
		o->v = P2PS_SB_YES;
		snprintf(o->why, sizeof(o->why), "565 rule: BAR1 %llu MiB holds VRAM %llu MiB from offset 0%s",
			 MB(bar1), MB(need), con ? " (565 then reserves no console mapping)" : "");
		return;
	}
	switch (force) {
	case SB_DISABLE:
		o->v = P2PS_SB_NO;
		snprintf(o->why, sizeof(o->why), "RMForceStaticBar1=0 (%s)",
			 k->user_force_sb == 0 ? "set by the user" : "the 575 default");
		return;
	case SB_ENABLE:
		need = k->gen == GEN_B ? ALIGN_DOWN_(cfb, SZ_2M) : ALIGN_UP_(cfb, SZ_2M);
		if (va_al < need) {
			o->v = P2PS_SB_INIT_FAILS;
			snprintf(o->why, sizeof(o->why),
				 "RMForceStaticBar1=1 but BAR1 (%llu MiB usable) can't hold VRAM (%llu MiB): BAR1 init fails, so does the GPU",
				 MB(va_al), MB(need));
			return;
		}
		off = k->gen == GEN_B ? ALIGN_UP_(con + mbox, SZ_512M) : ALIGN_UP_(con + mbox, SZ_2M);
		if (off + need > va_al) {
			o->v = P2PS_SB_INIT_FAILS;
			snprintf(o->why, sizeof(o->why),
				 "RMForceStaticBar1=1: VRAM (%llu MiB) mapped after the %s at %llu MiB overruns BAR1 (%llu MiB): the GPU fails to initialise",
				 MB(need), con ? "console" : "P2P mailbox", MB(off), MB(va_al));
			return;
		}
		break;
	case SB_ONLY_GPU:
		if (!sb_bar1p2p_type(k)) {
			o->v = P2PS_SB_NO;
			snprintf(o->why, sizeof(o->why),
				 "570 default (RMForceStaticBar1=3) maps it only with RMForceP2PType=2, which is not in effect");
			return;
		}
		if (va < 128 * KiB || va - 128 * KiB < fb_al) {
			o->v = P2PS_SB_NO;
			snprintf(o->why, sizeof(o->why),
				 "BAR1 (%llu MiB) minus 128 KiB can't hold VRAM (%llu MiB)",
				 MB(bar1), MB(fb_al));
			return;
		}
		/* the check ignores the console; the mapping goes after it */
		need = ALIGN_UP_(cfb, SZ_2M);
		off = ALIGN_UP_(con, SZ_2M);
		if (off + need > va_al) {
			o->v = P2PS_SB_INIT_FAILS;
			snprintf(o->why, sizeof(o->why),
				 "VRAM (%llu MiB) mapped after the console overruns BAR1 (%llu MiB): the GPU fails to initialise",
				 MB(need), MB(va_al));
			return;
		}
		break;
	case SB_AUTO:
	default:
		req = fb_al + 128 * KiB + con + mbox;
		if (k->gen == GEN_B && (con || mbox))
			req += SZ_512M - (con + mbox) % SZ_512M;
		if (va_al < req) {
			o->v = P2PS_SB_NO;
			snprintf(o->why, sizeof(o->why),
				 "automatic rule: BAR1 (%llu MiB usable) < VRAM %llu MiB + USERD + 128 KiB%s%s%s",
				 MB(va_al), MB(fb_al), con ? " + console" : "",
				 mbox ? " + P2P mailbox" : "",
				 k->gen == GEN_B && (con || mbox) ? " + padding to 512 MiB" : "");
			return;
		}
		if (va_al < req + USERD_MAX) {
			o->v = P2PS_SB_UNKNOWN;
			snprintf(o->why, sizeof(o->why),
				 "automatic rule: BAR1 exceeds VRAM + reserves by only %llu MiB; the USERD reserve (512 bytes per channel) decides",
				 MB(va_al - req));
			return;
		}
		off = k->gen == GEN_B ? ALIGN_UP_(con + mbox, SZ_512M) : ALIGN_UP_(con + mbox, SZ_2M);
		need = ALIGN_UP_(cfb, SZ_2M);	/* what gets mapped: the client-visible VRAM */
		break;
	}
	if (off % SZ_512M) {
		o->v = P2PS_SB_UNALIGNED;
		snprintf(o->why, sizeof(o->why),
			 "mapped after the %s at a 2 MiB boundary: peers need a 512 MiB-aligned address (570-575), so BAR1 P2P mappings fail",
			 con ? "boot console" : "P2P mailbox");
		return;
	}
	o->v = P2PS_SB_YES;
	snprintf(o->why, sizeof(o->why), "%s: BAR1 %llu MiB holds VRAM %llu MiB%s",
		 force == SB_ENABLE ? "RMForceStaticBar1=1" :
		 force == SB_ONLY_GPU ? "RMForceP2PType=2 with the 570 default" : "automatic rule",
		 MB(bar1), MB(need), !off ? "" :
		 con ? " from offset 512 MiB, after the console" : " from offset 512 MiB, after the P2P mailbox");
}

/* Value of @key in a RegistryDwords string ("K=V;K=V"), or -1. */
static long reg_key(const char *dwords, const char *key)
{
	size_t n = strlen(key);
	const char *p;

	for (p = dwords; p && (p = strstr(p, key)); p += n) {
		bool start = p == dwords || p[-1] == ';' || p[-1] == '"' || isspace((unsigned char)p[-1]);

		if (start && p[n] == '=')
			return strtol(p + n + 1, NULL, 0);
	}
	return -1;
}

static void sb_rules_init(struct dctx *c, struct sb_rules *k)
{
	const char *ver = c->r->driver_version;
	char dwords[512] = "", buf[16];
	long major = strtol(ver, NULL, 10);

	memset(k, 0, sizeof(*k));
	if (!*ver) {
		k->gen = GEN_B;
		k->assumed = true;
	} else if (!c->r->open_module || major < 550) {
		k->gen = GEN_UNSERVED;
	} else {
		k->gen = major < 565 ? GEN_0 : major < 570 ? GEN_A0 : major < 575 ? GEN_A1 : major < 580 ? GEN_A2 : GEN_B;
	}
	param_value(c, "RegistryDwords", dwords, sizeof(dwords));
	/* 550/560 have no RMForceStaticBar1: the key is not read there */
	k->user_force_sb = k->gen == GEN_0 ? -1 : reg_key(dwords, "RMForceStaticBar1");
	k->user_pcie_type = reg_key(dwords, "RMPcieP2PType");
	k->user_force_p2p_type = reg_key(dwords, "RMForceP2PType");
	k->shim_keys = !(p2ps_root_line(&c->root, "/sys/module/p2p_shim/parameters/registry_defaults",
					 buf, sizeof(buf)) && (buf[0] == 'N' || buf[0] == '0'));
	k->shim_force = !(p2ps_root_line(&c->root, "/sys/module/p2p_shim/parameters/static_bar1",
					  buf, sizeof(buf)) && (buf[0] == 'N' || buf[0] == '0'));
}

#define SHIM_DYNAMIC_RESERVE (64 * MiB)	/* kmod/sbar1.c: BAR1 left for dynamic mappings */

/*
 * p2p-shim's static BAR1 policy (kmod/sbar1.c), where the driver's rule
 * said no: 570+, RMForceStaticBar1 not set by the user, BAR1 P2P the P2P
 * type (no mailbox), no console before 580 (its 2 MiB-aligned placement
 * fails the peers' 512 MiB check), and the client FB at its offset plus
 * 64 MiB inside BAR1.  Turns @o into YES, or says in @o why not.
 */
static void sb_shim_force(const struct sb_rules *k, uint64_t bar1, uint64_t cfb, bool console,
			  struct sb_result *o)
{
	uint64_t va_al = ALIGN_DOWN_(bar1 - 4 * KiB - 1, SZ_2M);
	uint64_t off, map;
	size_t n = strlen(o->why);

	if (o->v != P2PS_SB_NO || k->gen < GEN_A1 || k->gen == GEN_UNSERVED ||
	    !k->shim_force || k->user_force_sb >= 0 || sb_mailbox(k))
		return;
	if (console && k->gen != GEN_B) {
		snprintf(o->why + n, sizeof(o->why) - n,
			 "; p2p-shim does not force it: the console comes first (570-575)");
		return;
	}
	off = k->gen == GEN_B && console ? SZ_512M : 0;
	map = k->gen == GEN_B ? ALIGN_DOWN_(cfb, SZ_2M) : ALIGN_UP_(cfb, SZ_2M);
	if (off + map + SHIM_DYNAMIC_RESERVE > va_al) {
		snprintf(o->why + n, sizeof(o->why) - n, "; too little room for p2p-shim to force it");
		return;
	}
	o->v = P2PS_SB_YES;
	snprintf(o->why, sizeof(o->why),
		 "forced by p2p-shim (the driver's rule says no): BAR1 %llu MiB holds VRAM %llu MiB%s",
		 MB(bar1), MB(map), off ? " from offset 512 MiB, after the console" : "");
}

static const char *const ENABLE_KEY =
	"options nvidia NVreg_RegistryDwords=\"RMForceStaticBar1=1\" (with any keys already there)";

static void sb_gpu(struct dctx *c, const struct sb_rules *k, struct p2ps_gpu *g,
		   struct sb_result *o)
{
	long force = sb_force_type(k);
	uint64_t cfb;
	bool con = g->display == 1;
	char bs[32], vs[32];

	memset(o, 0, sizeof(*o));
	fmt_size(g->bar1, bs, sizeof(bs));
	fmt_size(g->vram, vs, sizeof(vs));
	if (k->gen == GEN_UNSERVED) {
		o->v = P2PS_SB_NO;
		snprintf(o->why, sizeof(o->why),
			 "driver %s: not served by p2p-shim (%s)", c->r->driver_version,
			 c->r->open_module ? "before 550: no static BAR1 for GeForce" :
			 "the proprietary module");
		p2ps_strlcpy(o->remedy, c->r->open_module ? "use the open driver 550 or later" :
			     "install the open kernel module flavour of the driver", sizeof(o->remedy));
		return;
	}
	if (!strncmp(g->chip, "GB20", 4) && *c->r->driver_version &&
	    strtol(c->r->driver_version, NULL, 10) < 570) {
		o->v = P2PS_SB_NO;
		snprintf(o->why, sizeof(o->why), "driver %s does not support %s (GB20x: 570.86.16 and later)",
			 c->r->driver_version, g->chip);
		p2ps_strlcpy(o->remedy, "use the open driver 570.86.16 or later", sizeof(o->remedy));
		return;
	}
	if (!g->bar1 || !g->vram) {
		o->v = P2PS_SB_UNKNOWN;
		snprintf(o->why, sizeof(o->why), "BAR1 or VRAM size unknown");
		p2ps_strlcpy(o->remedy, "give nvidia-smi --query-gpu output (memory.total), or check lspci -vv",
			     sizeof(o->remedy));
		return;
	}
	/* client-visible VRAM: nvidia-smi's total, or VRAM less an estimated RM reserve */
	cfb = g->vram_mib ? g->vram_mib * MiB : g->vram - g->vram / 256;
	sb_eval(k, force, g->bar1, g->vram, cfb, con, o);
	sb_shim_force(k, g->bar1, cfb, con, o);

	switch (o->v) {
	case P2PS_SB_YES:
		return;
	case P2PS_SB_UNKNOWN:
		p2ps_strlcpy(o->remedy, "load the driver and p2p-shim, then `p2pctl verify` shows whether the pair maps",
			     sizeof(o->remedy));
		return;
	case P2PS_SB_UNALIGNED:
		p2ps_strlcpy(o->remedy,
			     "move the display (and boot console) to another GPU or the iGPU, or use driver 580+ (static BAR1 at 512 MiB)",
			     sizeof(o->remedy));
		return;
	case P2PS_SB_INIT_FAILS: {
		struct sb_result w;
		struct sb_rules k2 = *k;

		k2.user_force_sb = -1;
		sb_eval(&k2, SB_ENABLE, g->bar1, g->vram, cfb, false, &w);
		if (con && w.v == P2PS_SB_YES)
			snprintf(o->remedy, sizeof(o->remedy),
				 "move the display (and boot console) to another GPU or the iGPU, or take RMForceStaticBar1=1 out of NVreg_RegistryDwords");
		else
			snprintf(o->remedy, sizeof(o->remedy),
				 "take RMForceStaticBar1=1 out of NVreg_RegistryDwords: BAR1 can't hold VRAM here");
		return;
	}
	default:
		break;
	}
	/* NO: say what would change it */
	if (k->gen == GEN_0) {
		if (!sb_bar1p2p_type(k))
			p2ps_strlcpy(o->remedy,
				     k->shim_keys ? "take RMForceP2PType out of NVreg_RegistryDwords (p2p-shim supplies 2)" :
				     "load p2p-shim with registry_defaults=1 (its RMForceP2PType=2 turns static BAR1 on)",
				     sizeof(o->remedy));
		else if (g->bar1 <= 256 * MiB || (g->bar1 < g->vram && g->bar1 < 4 * GiB))
			p2ps_strlcpy(o->remedy,
				     "enable Above 4G Decoding and Resizable BAR in the firmware setup and set NVreg_EnableResizableBar=1 (p2pctl config --write)",
				     sizeof(o->remedy));
		else
			snprintf(o->remedy, sizeof(o->remedy),
				 "none on 550/560 (no RMForceStaticBar1 there): BAR1 (%s) can't hold VRAM (%s) plus 128 KiB; with 570 or later p2p-shim forces it where the client FB fits (docs/cards.md)",
				 bs, vs);
		return;
	}
	if (force == SB_DISABLE && k->user_force_sb == 0) {
		p2ps_strlcpy(o->remedy, "take RMForceStaticBar1=0 out of NVreg_RegistryDwords", sizeof(o->remedy));
	} else if (force == SB_DISABLE || (force == SB_ONLY_GPU && !sb_bar1p2p_type(k))) {
		p2ps_strlcpy(o->remedy,
			     k->shim_keys ? "take RMForceP2PType out of NVreg_RegistryDwords (p2p-shim supplies 2)" :
			     "load p2p-shim with registry_defaults=1 (its registry keys turn static BAR1 on)",
			     sizeof(o->remedy));
	} else if (g->bar1 <= 256 * MiB || (g->bar1 < g->vram && g->bar1 < 4 * GiB)) {
		p2ps_strlcpy(o->remedy,
			     "enable Above 4G Decoding and Resizable BAR in the firmware setup and set NVreg_EnableResizableBar=1 (p2pctl config --write)",
			     sizeof(o->remedy));
	} else if (g->bar1 < g->vram) {
		snprintf(o->remedy, sizeof(o->remedy),
			 "none in software: BAR1 (%s) is smaller than VRAM (%s) and can't hold it (RMForceStaticBar1=1 would make GPU initialisation fail); a larger BAR1, if the board offers one (Resizable BAR)",
			 bs, vs);
	} else {
		struct sb_result w, w0;
		struct sb_rules k2 = *k;

		k2.user_force_sb = -1;
		sb_eval(&k2, SB_ENABLE, g->bar1, g->vram, cfb, con, &w);
		sb_eval(&k2, SB_ENABLE, g->bar1, g->vram, cfb, false, &w0);
		if (con && force == SB_AUTO) {
			sb_eval(&k2, SB_AUTO, g->bar1, g->vram, cfb, false, &w0);
			if (w0.v == P2PS_SB_YES) {
				p2ps_strlcpy(o->remedy,
					     "move the display (and boot console) to another GPU or the iGPU: without the console in BAR1 the automatic rule fits",
					     sizeof(o->remedy));
				return;
			}
			sb_eval(&k2, SB_ENABLE, g->bar1, g->vram, cfb, false, &w0);
		}
		if (w.v == P2PS_SB_YES)
			snprintf(o->remedy, sizeof(o->remedy),
				 "BAR1 can't grow further; forcing fits here%s: %s, then reload nvidia",
				 sb_mailbox(k) ? "" : " (p2p-shim's registry keys keep the P2P mailbox out of BAR1)",
				 ENABLE_KEY);
		else if (w0.v == P2PS_SB_YES)
			snprintf(o->remedy, sizeof(o->remedy),
				 "move the display (and boot console) to another GPU or the iGPU, then force it: %s. With the console in BAR1, forcing makes GPU initialisation fail",
				 ENABLE_KEY);
		else
			snprintf(o->remedy, sizeof(o->remedy),
				 "none in software: forcing (RMForceStaticBar1=1) would make GPU initialisation fail here; a larger BAR1 (Resizable BAR), if the board offers one");
	}
}

static void check_static_bar1(struct dctx *c, struct sb_rules *k)
{
	struct p2ps_doctor_report *r = c->r;
	size_t i;

	sb_rules_init(c, k);
	for (i = 0; i < r->nr_gpus; i++) {
		struct p2ps_gpu *g = &r->gpus[i];
		struct sb_result o;
		enum p2ps_verdict v;

		sb_gpu(c, k, g, &o);
		g->static_bar1 = o.v;
		p2ps_strlcpy(g->static_bar1_why, o.why, sizeof(g->static_bar1_why));
		v = o.v == P2PS_SB_YES ? P2PS_V_OK : o.v == P2PS_SB_INIT_FAILS ? P2PS_V_FAIL : P2PS_V_WARN;
		p2ps_dr_add(c, "static-bar1", g->bdf, v,
		    k->assumed ? "rules of driver 580+ (no driver loaded)" : "rules of the installed driver",
		    o.remedy, "static BAR1 %s%s: %s", p2ps_static_bar1_name(o.v),
		    g->display == 1 ? " (drives the boot display)" : "", o.why);
	}
}

/* ---------------------------------------------------------------- pairs */

int p2ps_dr_split_path(const char *path, char comps[][16], int max, char *host, size_t hostlen)
{
	char buf[256], *tok, *save;
	int n = 0;

	*host = '\0';
	p2ps_strlcpy(buf, path, sizeof(buf));
	for (tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		if (!strncmp(tok, "pci", 3) && strchr(tok, ':') && !*host)
			p2ps_strlcpy(host, tok, hostlen);
		else if (*host && strlen(tok) == 12 && tok[4] == ':' && tok[7] == ':' && n < max)
			p2ps_strlcpy(comps[n++], tok, 16);
	}
	return n;
}

static enum p2ps_pcie_path pair_path(const struct p2ps_gpu *a, const struct p2ps_gpu *b)
{
	char ca[16][16], cb[16][16], ha[64], hb[64];
	int na = p2ps_dr_split_path(a->path, ca, 16, ha, sizeof(ha));
	int nb = p2ps_dr_split_path(b->path, cb, 16, hb, sizeof(hb));
	int i;

	if (!*ha || !*hb || na == 0 || nb == 0)
		return P2PS_PATH_UNKNOWN;
	if (strcmp(ha, hb)) {
		if (a->numa_node >= 0 && b->numa_node >= 0 && a->numa_node != b->numa_node)
			return P2PS_PATH_CROSS_SOCKET;
		return P2PS_PATH_HOST_BRIDGES;
	}
	/* shared bridges above both devices */
	for (i = 0; i < na - 1 && i < nb - 1 && !strcmp(ca[i], cb[i]); i++)
		;
	return i > 0 ? P2PS_PATH_SWITCH : P2PS_PATH_ROOT_COMPLEX;
}

/* Entry (row @i, column @j) of `nvidia-smi topo -m`, or false. */
static bool topo_entry(const char *text, unsigned int i, unsigned int j, char *out, size_t len)
{
	char rowname[16];
	const char *line = text;

	snprintf(rowname, sizeof(rowname), "GPU%u", i);
	while (line && *line) {
		const char *eol = strchrnul(line, '\n');
		size_t rl = strlen(rowname);

		if ((size_t)(eol - line) > rl && !strncmp(line, rowname, rl) &&
		    isspace((unsigned char)line[rl])) {
			char buf[1024], *tok, *save;
			unsigned int col = 0;

			snprintf(buf, sizeof(buf), "%.*s", (int)(eol - line - rl), line + rl);
			for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
				if (col == j) {
					p2ps_strlcpy(out, tok, len);
					return true;
				}
				col++;
			}
			return false;
		}
		line = *eol ? eol + 1 : NULL;
	}
	return false;
}

static bool datacenter_nvlink_arch(const struct p2ps_gpu *g)
{
	return !strcmp(g->arch, "Hopper") ||
	       (g->device >= 0x20b0 && g->device <= 0x20ff) ||	/* GA100 */
	       (g->device >= 0x2900 && g->device <= 0x29ff);	/* GB100 */
}

/*
 * Intel I/O hub root ports of p2p_caps.c (_kp2pCapsGetStatusOverPcie): P2P
 * is not forwarded between two such hubs.
 */
static bool intel_ioh_root_port(unsigned long dev)
{
	return (dev >= 0x3408 && dev <= 0x3411) || (dev >= 0x3c02 && dev <= 0x3c0b) ||
	       (dev >= 0x0e02 && dev <= 0x0e0b) || (dev >= 0x2f01 && dev <= 0x2f0b) ||
	       (dev >= 0x6f01 && dev <= 0x6f0b) || dev == 0x3420 || dev == 0x3421;
}

/*
 * The root port above @g if it is one of those: its device id, and its
 * "domain:bus" in @hub (the driver compares domain and bus).
 */
static unsigned long ioh_port(struct dctx *c, const struct p2ps_gpu *g, char *hub, size_t len)
{
	const char *p = strstr(g->path, "/pci"), *s, *e;
	char dir[300];
	unsigned long vendor, dev;
	bool ok1, ok2;

	if (!p)
		return 0;
	s = strchr(p + 1, '/');
	if (!s)
		return 0;
	e = strchr(s + 1, '/');
	if (!e)
		return 0;		/* the GPU sits on the root bus */
	snprintf(dir, sizeof(dir), "%.*s", (int)(e - g->path), g->path);
	vendor = p2ps_dr_read_hex(c, dir, "vendor", &ok1);
	dev = p2ps_dr_read_hex(c, dir, "device", &ok2);
	if (!ok1 || !ok2 || vendor != 0x8086 || !intel_ioh_root_port(dev))
		return 0;
	snprintf(hub, len, "%.7s", s + 1);	/* "0000:00" of "0000:00:03.0" */
	return dev;
}

static bool ok_sb(enum p2ps_static_bar1 s)
{
	return s == P2PS_SB_YES;
}

/*
 * Whether @key is set for the GPU at @bdf in NVreg_RegistryDwordsPerDevice
 * ("pci=DDDD:BB:DD.F;Key=Value;...;pci=...": the keys after a pci= entry
 * are that GPU's).
 */
static bool per_device_key(struct dctx *c, const char *bdf, const char *key)
{
	char dwords[512] = "", pat[32];
	const char *p, *end;

	param_value(c, "RegistryDwordsPerDevice", dwords, sizeof(dwords));
	snprintf(pat, sizeof(pat), "pci=%s", bdf);
	for (p = strstr(dwords, pat); p; p = strstr(p + 1, pat)) {
		end = strstr(p + 1, "pci=");
		if (end)
			dwords[end - dwords] = '\0';
		if (reg_key(p, key) >= 0)
			return true;
		if (!end)
			break;
	}
	return false;
}

/*
 * 550 to 570: RMForceP2PType other than DEFAULT/NVLink on the first GPU of
 * a P2P query makes the driver's NVLink check refuse before it looks at
 * the links (p2p_caps.c _gpumgrGetP2PCapsStatusOverNvLink), and p2p-shim
 * supplies RMForceP2PType=2 (BAR1P2P there) to every GPU whose user did
 * not set it.  Whether that happens to @g.
 */
static bool nvlink_forced_off(struct dctx *c, const struct sb_rules *k, const struct p2ps_gpu *g)
{
	long major = strtol(c->r->driver_version, NULL, 10);
	long t = k->user_force_p2p_type;

	if (!c->r->open_module || major < 550 || major >= 575 || per_device_key(c, g->bdf, "RMForceP2PType"))
		return false;
	if (t < 0)
		t = k->shim_keys ? 2 : 0;
	return t != 0 && t != 3;	/* DEFAULT, NVLINK */
}

static void pair_verdict(struct dctx *c, const struct sb_rules *k, struct p2ps_pair *p,
			 const char *subj)
{
	const struct p2ps_gpu *a = &c->r->gpus[p->a], *b = &c->r->gpus[p->b];
	const struct p2ps_gpu *bad = NULL;
	char hub_a[16] = "", hub_b[16] = "", remedy[320] = "";
	unsigned long ra, rb;
	enum p2ps_verdict v = P2PS_V_OK;

	if (p->native == P2PS_NATIVE_NVLINK && (nvlink_forced_off(c, k, a) || nvlink_forced_off(c, k, b))) {
		p->p2p = P2PS_P2P_BAR1;
		v = P2PS_V_WARN;
		snprintf(p->p2p_why, sizeof(p->p2p_why),
			 "NVLink, but RMForceP2PType=2 (p2p-shim's default before 575) turns the driver's "
			 "NVLink check off: PCIe BAR1 instead");
		snprintf(remedy, sizeof(remedy),
			 "to keep NVLink: options nvidia NVreg_RegistryDwordsPerDevice=\"pci=%s;"
			 "RMForceP2PType=0;pci=%s;RMForceP2PType=0\" (these GPUs then get no BAR1 P2P "
			 "with PCIe-only peers)", a->bdf, b->bdf);
		goto out;
	}
	if (p->native == P2PS_NATIVE_NVLINK) {
		p->p2p = P2PS_P2P_NATIVE;
		snprintf(p->p2p_why, sizeof(p->p2p_why), "NVLink: the stock driver's P2P, shim not needed");
		goto out;
	}
	if (!strcmp(a->arch, "Hopper") && !strcmp(b->arch, "Hopper")) {
		if ((ok_sb(a->static_bar1) && ok_sb(b->static_bar1)) || !k->shim_keys) {
			p->p2p = P2PS_P2P_NATIVE;
			snprintf(p->p2p_why, sizeof(p->p2p_why),
				 "Hopper: the stock driver's own PCIe P2P (BAR1 P2P with static BAR1, else the mailbox)");
		} else {
			p->p2p = P2PS_P2P_NONE;
			v = P2PS_V_FAIL;
			snprintf(p->p2p_why, sizeof(p->p2p_why),
				 "Hopper without static BAR1 on both: p2p-shim's caps guard refuses a pair whose ForceP2P it supplied");
			p2ps_strlcpy(remedy, "load p2p-shim with registry_defaults=0 on this host (the stock mailbox P2P then applies)",
				     sizeof(remedy));
		}
		goto out;
	}
	if (k->gen == GEN_UNSERVED) {
		p->p2p = P2PS_P2P_NONE;
		v = P2PS_V_FAIL;
		snprintf(p->p2p_why, sizeof(p->p2p_why), "driver %s is not served by p2p-shim",
			 c->r->driver_version);
		p2ps_strlcpy(remedy, c->r->open_module ? "use the open driver 550 or later" :
			     "install the open kernel module flavour of the driver", sizeof(remedy));
		goto out;
	}
	ra = ioh_port(c, a, hub_a, sizeof(hub_a));
	rb = ioh_port(c, b, hub_b, sizeof(hub_b));
	if (ra && rb && strcmp(hub_a, hub_b)) {
		p->p2p = P2PS_P2P_NONE;
		v = P2PS_V_FAIL;
		snprintf(p->p2p_why, sizeof(p->p2p_why),
			 "root ports on different Intel I/O hubs (8086:%04lx on %s, 8086:%04lx on %s): they don't forward P2P; the stock check (IOH_TOPOLOGY_NOT_SUPPORTED) is skipped under ForceP2P",
			 ra, hub_a, rb, hub_b);
		p2ps_strlcpy(remedy, "put both GPUs below root ports of one I/O hub (one CPU socket)",
			     sizeof(remedy));
		goto out;
	}
	if (!ok_sb(a->static_bar1) && a->static_bar1 != P2PS_SB_UNKNOWN)
		bad = a;
	else if (!ok_sb(b->static_bar1) && b->static_bar1 != P2PS_SB_UNKNOWN)
		bad = b;
	if (bad) {
		const struct p2ps_finding *f = p2ps_doctor_find(c->r, "static-bar1", bad->bdf);

		p->p2p = P2PS_P2P_NONE;
		v = P2PS_V_FAIL;
		snprintf(p->p2p_why, sizeof(p->p2p_why), "%s: static BAR1 %s (BAR1 P2P needs it on both GPUs)",
			 bad->bdf, p2ps_static_bar1_name(bad->static_bar1));
		if (f && *f->remedy)
			snprintf(remedy, sizeof(remedy), "%s: %s", bad->bdf, f->remedy);
		goto out;
	}
	if (a->static_bar1 == P2PS_SB_UNKNOWN || b->static_bar1 == P2PS_SB_UNKNOWN) {
		p->p2p = P2PS_P2P_UNKNOWN;
		v = P2PS_V_WARN;
		snprintf(p->p2p_why, sizeof(p->p2p_why), "static BAR1 of %s unknown",
			 a->static_bar1 == P2PS_SB_UNKNOWN ? a->bdf : b->bdf);
		p2ps_strlcpy(remedy, "load the driver and p2p-shim, then run `p2pctl verify`", sizeof(remedy));
		goto out;
	}
	p->p2p = P2PS_P2P_BAR1;
	if (strcmp(a->arch, b->arch) || (*a->chip && *b->chip && strcmp(a->chip, b->chip))) {
		v = P2PS_V_WARN;
		snprintf(p->p2p_why, sizeof(p->p2p_why),
			 "mixed chips (%s %s + %s %s), static BAR1 on both: the stock PCIe check refuses mixed pairs, ForceP2P skips it, BAR1 P2P has no such check; untested",
			 a->arch, *a->chip ? a->chip : "?", b->arch, *b->chip ? b->chip : "?");
		p2ps_strlcpy(remedy, "check the data path with `p2pctl verify` before relying on it",
			     sizeof(remedy));
	} else {
		snprintf(p->p2p_why, sizeof(p->p2p_why), "static BAR1 on both GPUs: BAR1 P2P with p2p-shim");
	}
out:
	p2ps_dr_add(c, "p2p", subj, v, k->assumed ? "rules of driver 580+ (no driver loaded)" : "rules of the installed driver",
	    remedy, "P2P: %s (%s)", p2ps_p2p_name(p->p2p), p->p2p_why);
}

static int check_pairs(struct dctx *c, const struct sb_rules *k)
{
	struct p2ps_doctor_report *r = c->r;
	bool nvlink_core = p2ps_root_exists(&c->root, "/proc/driver/nvidia-nvlink");
	const char *topo = c->opts ? c->opts->topo_text : NULL;
	const char *topo_src = c->opts && c->opts->topo_source ? c->opts->topo_source :
			       "nvidia-smi topo -m";
	size_t i, j, np = r->nr_gpus * (r->nr_gpus - (r->nr_gpus > 0)) / 2;

	if (!np)
		return 0;
	r->pairs = calloc(np, sizeof(*r->pairs));
	if (!r->pairs)
		return -ENOMEM;
	for (i = 0; i < r->nr_gpus; i++) {
		for (j = i + 1; j < r->nr_gpus; j++) {
			struct p2ps_pair *p = &r->pairs[r->nr_pairs++];
			const struct p2ps_gpu *a = &r->gpus[i], *b = &r->gpus[j];
			char subj[48], ent[32];

			snprintf(subj, sizeof(subj), "%s %s", a->bdf, b->bdf);
			p->a = (unsigned int)i;
			p->b = (unsigned int)j;
			p->path = pair_path(a, b);

			/* native P2P */
			if (topo && topo_entry(topo, (unsigned int)i, (unsigned int)j, ent, sizeof(ent))) {
				p->native = !strncmp(ent, "NV", 2) ? P2PS_NATIVE_NVLINK : P2PS_NATIVE_NONE;
				snprintf(p->native_source, sizeof(p->native_source), "%s: %s", topo_src, ent);
			} else if (!nvlink_core) {
				p->native = P2PS_NATIVE_NONE;
				p2ps_strlcpy(p->native_source, "no /proc/driver/nvidia-nvlink",
					     sizeof(p->native_source));
			} else if (datacenter_nvlink_arch(a) && datacenter_nvlink_arch(b)) {
				p->native = P2PS_NATIVE_NVLINK;
				p2ps_strlcpy(p->native_source,
					     "/proc/driver/nvidia-nvlink and GPU architecture (probable)",
					     sizeof(p->native_source));
			} else {
				p->native = P2PS_NATIVE_UNKNOWN;
				p2ps_strlcpy(p->native_source,
					     "/proc/driver/nvidia-nvlink present, link state unknown",
					     sizeof(p->native_source));
			}

			switch (p->path) {
			case P2PS_PATH_SWITCH:
			case P2PS_PATH_ROOT_COMPLEX:
				p2ps_dr_add(c, "pcie-path", subj, P2PS_V_OK, "sysfs device path", NULL,
				    "PCIe path: %s", p2ps_pcie_path_name(p->path));
				break;
			case P2PS_PATH_HOST_BRIDGES:
			case P2PS_PATH_CROSS_SOCKET: {
				char ha[64], hb[64], comps[16][16];

				p2ps_dr_split_path(a->path, comps, 16, ha, sizeof(ha));
				p2ps_dr_split_path(b->path, comps, 16, hb, sizeof(hb));
				p2ps_dr_add(c, "pcie-path", subj,
				    p->native == P2PS_NATIVE_NVLINK ? P2PS_V_OK : P2PS_V_WARN,
				    "sysfs device path, numa_node",
				    "put both GPUs under one socket's root complex (or one switch); else expect a fraction of the bandwidth, and check P2P with p2pctl verify",
				    "PCIe path: %s (%s NUMA %d, %s NUMA %d): %s", p2ps_pcie_path_name(p->path),
				    ha, a->numa_node, hb, b->numa_node,
				    p->path == P2PS_PATH_CROSS_SOCKET ?
				    "P2P crosses the socket interconnect (UPI, xGMI): lower bandwidth, higher latency, and some platforms don't forward it" :
				    "P2P goes between root complexes through the CPU's fabric: usually slower than under one root port or switch");
				break;
			}
			default:
				p2ps_dr_add(c, "pcie-path", subj, P2PS_V_SKIP, "sysfs device path", NULL,
				    "PCIe path unknown");
			}
			switch (p->native) {
			case P2PS_NATIVE_NVLINK:
				if (nvlink_forced_off(c, k, a) || nvlink_forced_off(c, k, b))
					p2ps_dr_add(c, "native-p2p", subj, P2PS_V_WARN, p->native_source, NULL,
					    "native P2P over NVLink, turned off by RMForceP2PType=2 on this driver (see p2p)");
				else
					p2ps_dr_add(c, "native-p2p", subj, P2PS_V_OK, p->native_source, NULL,
					    "native P2P over NVLink: shim not needed");
				break;
			case P2PS_NATIVE_NONE:
				p2ps_dr_add(c, "native-p2p", subj, P2PS_V_OK, p->native_source, NULL,
				    "no NVLink: P2P over PCIe BAR1 needs the shim");
				break;
			default:
				p2ps_dr_add(c, "native-p2p", subj, P2PS_V_SKIP, p->native_source, NULL,
				    "NVLink state unknown (give nvidia-smi topo -m output)");
			}
			pair_verdict(c, k, p, subj);
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- module */

static void check_module(struct dctx *c)
{
	bool loaded = p2ps_root_exists(&c->root, "/sys/module/p2p_shim");
	struct p2ps_status_info *st = NULL;
	struct p2ps_handle *h = c->opts ? c->opts->h : NULL;

	if (!loaded) {
		char *mods = p2ps_root_read(&c->root, "/proc/modules", NULL, false);

		loaded = mods && (!strncmp(mods, "p2p_shim ", 9) || strstr(mods, "\np2p_shim "));
		free(mods);
	}
	if (!loaded) {
		p2ps_dr_add(c, "module", NULL, P2PS_V_WARN, "/sys/module/p2p_shim",
		    "modprobe p2p-shim (or insmod p2p-shim.ko), then p2pctl enable",
		    "p2p-shim not loaded");
		p2ps_dr_add(c, "stale-gpus", NULL, P2PS_V_SKIP, NULL, NULL,
		    "p2p-shim not loaded: can't tell which GPUs were initialised before arming");
		return;
	}
	if (!h || p2ps_status(h, &st)) {
		p2ps_dr_add(c, "module", NULL, P2PS_V_OK, "/sys/module/p2p_shim", NULL,
		    "p2p-shim loaded (state not queried)");
		p2ps_dr_add(c, "stale-gpus", NULL, P2PS_V_SKIP, NULL, NULL, "module state not available");
		return;
	}
	if (st->state == P2PS_STATE_ARMED)
		p2ps_dr_add(c, "module", NULL, P2PS_V_OK, "P2PS_IOC_STATUS", NULL,
		    "p2p-shim armed: profile %s, %u hooks", st->profile, st->nr_installed);
	else
		p2ps_dr_add(c, "module", NULL, P2PS_V_WARN, "P2PS_IOC_STATUS",
		    st->state == P2PS_STATE_WAITING ? "load nvidia: the shim arms when it arrives" :
		    "run p2pctl enable",
		    "p2p-shim loaded, %s", p2ps_state_name(st->state));
	if (st->stale_gpus) {
		char list[128] = "";
		size_t off = 0;
		unsigned int b;

		for (b = 0; b < 32; b++)
			if (st->stale_gpus & (1U << b)) {
				int k = snprintf(list + off, sizeof(list) - off, "%s%u", off ? "," : "", b);

				if (k > 0 && (size_t)k < sizeof(list) - off)
					off += k;
			}
		p2ps_dr_add(c, "stale-gpus", NULL, P2PS_V_WARN, "P2PS_IOC_STATUS",
		    "GPUs cache P2P capabilities at initialisation: reload nvidia after arming, or load p2p-shim first (softdep, p2pctl config --write)",
		    "GPU instance(s) %s initialised before arming", list);
	} else {
		p2ps_dr_add(c, "stale-gpus", NULL, P2PS_V_OK, "P2PS_IOC_STATUS", NULL,
		    "no GPU initialised before arming");
	}
	p2ps_status_free(st);
}

/* ---------------------------------------------------------------- entry */

int p2ps_doctor(const struct p2ps_doctor_opts *opts, struct p2ps_doctor_report **out)
{
	struct dctx c;
	int err;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	c.opts = opts;
	err = p2ps_root_init(&c.root, opts ? opts->root : NULL);
	if (err)
		return err;
	c.r = calloc(1, sizeof(*c.r));
	if (!c.r) {
		p2ps_root_fini(&c.root);
		return -ENOMEM;
	}
	kernel_release(&c);
	load_config(&c);
	check_kernel(&c);
	check_driver(&c);
	err = find_gpus(&c);
	if (!err) {
		struct sb_rules k;

		check_gpus(&c);
		check_static_bar1(&c, &k);
		check_iommu(&c);
		err = check_pairs(&c, &k);
		if (!err) {
			p2ps_dr_platform(&c);
			p2ps_dr_software(&c);
		}
	}
	if (!err)
		check_module(&c);
	if (!err)
		err = c.err;
	free(c.config);
	p2ps_root_fini(&c.root);
	if (err) {
		p2ps_doctor_free(c.r);
		return err;
	}
	*out = c.r;
	return 0;
}

void p2ps_doctor_free(struct p2ps_doctor_report *r)
{
	if (!r)
		return;
	free(r->findings);
	free(r->gpus);
	free(r->pairs);
	free(r);
}
