// SPDX-License-Identifier: GPL-2.0
/*
 * `p2pctl doctor`: the GPUs (ids, names, VRAM, BAR1, Resizable BAR).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <p2p-shim/gpurule.h>

#include "doctor.h"

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

/* The module's own table (rules/gpurule.c), as the caps guard reads it. */
static const char *arch_of(uint16_t dev)
{
	return p2ps_gpu_arch_name(p2ps_gpu_arch(0x10de, dev));
}

static uint64_t vram_of(uint16_t dev)
{
	size_t i;

	for (i = 0; i < sizeof(vram_ids) / sizeof(vram_ids[0]); i++)
		if (vram_ids[i].device == dev)
			return (uint64_t)vram_ids[i].gib * GiB;
	return 0;
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

int p2ps_dr_find_gpus(struct dctx *c)
{
	struct p2ps_doctor_report *r = c->r;
	char **names, vfs[400] = "";
	size_t n, i, cap = 0, nr_vfs = 0, vfs_off = 0;
	bool any_driver = false;
	int err;

	err = p2ps_root_list(&c->root, "/sys/bus/pci/devices", &names, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		char link[PATH_MAX], real[PATH_MAX];
		struct p2ps_gpu *g;
		unsigned long vendor, cls, dev;
		bool ok1, ok2, ok3;
		char numabuf[32], path[PATH_MAX + 16], drv[PATH_MAX];

		snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s", names[i]);
		if (!p2ps_root_realpath(&c->root, link, real, sizeof(real)))
			p2ps_strlcpy(real, link, sizeof(real));
		vendor = p2ps_dr_read_hex(c, real, "vendor", &ok1);
		cls = p2ps_dr_read_hex(c, real, "class", &ok2);
		dev = p2ps_dr_read_hex(c, real, "device", &ok3);
		if (!ok1 || !ok2 || !ok3 || vendor != 0x10de ||
		    ((cls >> 8) != 0x0300 && (cls >> 8) != 0x0302))
			continue;
		/* an SR-IOV virtual function (its physfn link names the GPU): not a GPU of its own */
		snprintf(path, sizeof(path), "%s/physfn", real);
		if (p2ps_root_realpath(&c->root, path, drv, sizeof(drv))) {
			const char *pf = strrchr(drv, '/');

			if (!p2ps_catf(vfs, sizeof(vfs), &vfs_off, ", ", "%s (of %s)", names[i], pf ? pf + 1 : drv) &&
			    !strstr(vfs, "..."))
				p2ps_catf(vfs, sizeof(vfs), &vfs_off, ", ", "...");
			nr_vfs++;
			continue;
		}
		if (strlen(real) >= sizeof(g->path)) {
			p2ps_dr_add(c, "gpu", names[i], P2PS_V_WARN, "sysfs device path", NULL,
				    "NVIDIA device %04lx more than 36 bridges deep: not checked", dev);
			continue;
		}
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
		snprintf(path, sizeof(path), "%s/driver", real);
		if (p2ps_root_realpath(&c->root, path, drv, sizeof(drv))) {
			const char *base = strrchr(drv, '/');

			p2ps_strlcpy(g->driver, base ? base + 1 : drv, sizeof(g->driver));
			g->driver_known = true;
			any_driver = true;
		}
		snprintf(path, sizeof(path), "%s/numa_node", real);
		g->numa_node = -1;
		if (p2ps_root_line(&c->root, path, numabuf, sizeof(numabuf)))
			g->numa_node = (int)strtol(numabuf, NULL, 10);
	}
	p2ps_free_list(names, n);
	if (nr_vfs)
		p2ps_dr_add(c, "sriov", NULL, P2PS_V_OK, "physfn links", NULL,
			    "%zu SR-IOV virtual function%s not counted as GPUs: %s", nr_vfs,
			    nr_vfs == 1 ? "" : "s", vfs);
	/* A tree that records driver links (or the live system): none = unbound. */
	for (i = 0; i < r->nr_gpus; i++)
		if (any_driver || c->root.live)
			r->gpus[i].driver_known = true;
	return 0;
}

/*
 * A GPU behind Intel VMD (Volume Management Device): its root port sits in
 * a PCI domain of its own (10000 and up) that the vmd driver makes from
 * the VMD endpoint's BARs; the firmware and the driver's chipset checks
 * see only the endpoint.  Intel documents VMD for NVMe; P2P through it is
 * untested, and the GPU's DMA goes out as the endpoint's.
 */
static void check_vmd(struct dctx *c, const struct p2ps_gpu *g)
{
	char comps[P2PS_DR_MAX_DEPTH][16], host[64];
	int n = p2ps_dr_split_path(g->path, comps, P2PS_DR_MAX_DEPTH, host, sizeof(host)), i;

	for (i = 1; i < n; i++)
		if (strlen(comps[i]) == 13 && strlen(comps[i - 1]) == 12) {
			p2ps_dr_add(c, "vmd", g->bdf, P2PS_V_WARN, "sysfs device path",
			    "turn VMD off for this GPU's slots in the firmware setup (often \"VMD controller\" or \"Intel RST/VMD\" under storage), so the GPU sits on a root port of its own",
			    "behind an Intel VMD domain (endpoint %s, domain %.5s): the GPU's root port is hidden from the firmware and the driver's chipset checks; P2P through VMD is untested",
			    comps[i - 1], comps[i]);
			return;
		}
}

void p2ps_dr_gpus(struct dctx *c)
{
	struct p2ps_doctor_report *r = c->r;
	char rebar[32] = "";
	bool have_rebar = p2ps_dr_param(c, "EnableResizableBar", rebar, sizeof(rebar));
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

		p2ps_dr_fmt_size(g->vram, vs, sizeof(vs));
		p2ps_dr_fmt_size(g->bar1, bs, sizeof(bs));
		p2ps_dr_add(c, "gpu", g->bdf, P2PS_V_OK, g->path, NULL,
		    "%s [10de:%04x], %s, VRAM %s%s%s%s, BAR1 %s, NUMA node %d",
		    *g->name ? g->name : "NVIDIA GPU", g->device, g->arch, vs,
		    g->vram ? " (" : "", g->vram ? g->vram_source : "", g->vram ? ")" : "",
		    bs, g->numa_node);
		check_vmd(c, g);
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
