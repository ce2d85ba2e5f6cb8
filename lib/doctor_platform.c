// SPDX-License-Identifier: GPL-2.0
/*
 * libp2pshim: `p2pctl doctor`'s platform checks (issue 23): ACS on the
 * bridges between two GPUs, PCIe links per GPU and per bridge, virtual
 * machines, and GPUs that drive a display.  Everything is read from sysfs
 * and procfs under the doctor's root, so captured trees work as the live
 * system does; config space comes from sysfs `config` files (the first 64
 * bytes for a normal user, all 4096 for root).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_DEPTH 16

/* ---------------------------------------------------------------- helpers */

int p2ps_pci_ext_cap(const uint8_t *cfg, size_t len, uint16_t id)
{
	size_t off = 0x100;
	unsigned int n;

	if (!cfg || len < 0x104)
		return -1;
	/* at most one header per dword of the extended space: more is a loop */
	for (n = 0; n < (4096 - 0x100) / 4; n++) {
		uint32_t h;

		if (off < 0x100 || off + 4 > len || (off & 3))
			return -1;
		h = cfg[off] | (uint32_t)cfg[off + 1] << 8 | (uint32_t)cfg[off + 2] << 16 |
		    (uint32_t)cfg[off + 3] << 24;
		if (h == 0 || h == 0xffffffff)
			return 0;		/* no extended capabilities */
		if ((h & 0xffff) == id)
			return (int)off;
		off = h >> 20;
		if (!off)
			return 0;
	}
	return -1;
}

int p2ps_pcie_gen(const char *speed)
{
	static const struct { const char *s; int gen; } gens[] = {
		{ "2.5 GT/s", 1 }, { "5.0 GT/s", 2 }, { "5 GT/s", 2 }, { "8.0 GT/s", 3 },
		{ "8 GT/s", 3 }, { "16.0 GT/s", 4 }, { "32.0 GT/s", 5 }, { "64.0 GT/s", 6 },
	};
	size_t i;

	for (i = 0; speed && i < sizeof(gens) / sizeof(gens[0]); i++)
		if (!strncmp(speed, gens[i].s, strlen(gens[i].s)))
			return gens[i].gen;
	return 0;
}

/* sysfs directories of the bridges and the device on @path, root port first. */
static int path_dirs(const char *path, char dirs[][300], char bdfs[][16], int max)
{
	char comps[MAX_DEPTH][16], host[64];
	int n = p2ps_dr_split_path(path, comps, MAX_DEPTH, host, sizeof(host)), i;
	const char *p;

	if (n > max)
		n = max;
	for (i = 0; i < n; i++) {
		p = strstr(path, comps[i]);
		if (!p)
			return 0;
		snprintf(dirs[i], 300, "%.*s", (int)(p - path + 12), path);
		p2ps_strlcpy(bdfs[i], comps[i], 16);
	}
	return n;
}

static bool attr_line(struct dctx *c, const char *dir, const char *attr, char *buf, size_t len)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	return p2ps_root_line(&c->root, path, buf, len) && *buf;
}

struct link {
	int cur_gen, max_gen, cur_w, max_w;
	bool known;
};

static void read_link(struct dctx *c, const char *dir, struct link *l)
{
	char buf[64];

	memset(l, 0, sizeof(*l));
	if (attr_line(c, dir, "current_link_speed", buf, sizeof(buf))) {
		l->cur_gen = p2ps_pcie_gen(buf);
		l->known = true;
	}
	if (attr_line(c, dir, "max_link_speed", buf, sizeof(buf)))
		l->max_gen = p2ps_pcie_gen(buf);
	if (attr_line(c, dir, "current_link_width", buf, sizeof(buf)))
		l->cur_w = atoi(buf);
	if (attr_line(c, dir, "max_link_width", buf, sizeof(buf)))
		l->max_w = atoi(buf);
	l->known = l->known && l->max_gen && l->max_w;
}

/*
 * A bridge of the chipset rather than the CPU: AMD's chipset (Promontory)
 * switch ports, or an Intel PCH root port (devices 1b-1d of bus 0: the
 * CPU's own ports are 01.x and 06.0).  Writes "vvvv:dddd" to @id.
 */
static bool chipset_bridge(struct dctx *c, const char *dir, const char *bdf, bool root_port,
			   char *id, size_t len)
{
	bool ok1, ok2;
	unsigned long v = p2ps_dr_read_hex(c, dir, "vendor", &ok1);
	unsigned long d = p2ps_dr_read_hex(c, dir, "device", &ok2);
	unsigned int slot = (unsigned int)strtoul(bdf + 8, NULL, 16);

	if (!ok1 || !ok2)
		return false;
	snprintf(id, len, "%04lx:%04lx", v, d);
	if (v == 0x1022 && ((d >= 0x43b0 && d <= 0x43ff) || d == 0x57a3 || d == 0x57a4 || d == 0x57ad))
		return true;
	return v == 0x8086 && root_port && !strncmp(bdf + 5, "00:", 3) &&
	       slot >= 0x1b && slot <= 0x1d;
}

/* ---------------------------------------------------------------- ACS */

static void acs_bits(unsigned int ctrl, char *buf, size_t len)
{
	static const struct { unsigned int bit; const char *name; } names[] = {
		{ P2PS_ACS_RR, "ReqRedir" }, { P2PS_ACS_CR, "CmpltRedir" },
		{ P2PS_ACS_UF, "UpstreamFwd" }, { P2PS_ACS_EC, "EgressCtrl" },
		{ P2PS_ACS_DT, "DirectTrans" },
	};
	size_t i, off = 0;

	*buf = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int k;

		if (!(ctrl & names[i].bit))
			continue;
		k = snprintf(buf + off, len - off, "%s%s", off ? " " : "", names[i].name);
		if (k < 0 || (size_t)k >= len - off)
			break;
		off += k;
	}
}

/*
 * ACS control of the bridge at @dir: the control register, -1 if it has no
 * ACS capability, -2 if its extended config space can't be read.
 */
static int acs_ctrl(struct dctx *c, const char *dir)
{
	char path[400];
	size_t len = 0;
	uint8_t *cfg;
	int off, ret;

	snprintf(path, sizeof(path), "%s/config", dir);
	cfg = (uint8_t *)p2ps_root_read(&c->root, path, &len, false);
	if (!cfg)
		return -2;
	off = p2ps_pci_ext_cap(cfg, len, P2PS_PCI_EXT_CAP_ACS);
	if (off < 0 || (off > 0 && (size_t)off + 8 > len))
		ret = -2;
	else if (!off)
		ret = -1;
	else
		ret = cfg[off + 6] | cfg[off + 7] << 8;
	free(cfg);
	return ret;
}

static void check_acs_pair(struct dctx *c, const struct p2ps_pair *p, const char *subj)
{
	const struct p2ps_gpu *g[2] = { &c->r->gpus[p->a], &c->r->gpus[p->b] };
	char dirs[2][MAX_DEPTH][300], bdfs[2][MAX_DEPTH][16], ha[64], hb[64], dummy[MAX_DEPTH][16];
	char redir[200] = "", param[160] = "", ports[120] = "";
	int n[2], common = 0, s, unreadable = 0, nports = 0;
	size_t ro = 0, po = 0, so = 0;

	n[0] = path_dirs(g[0]->path, dirs[0], bdfs[0], MAX_DEPTH);
	n[1] = path_dirs(g[1]->path, dirs[1], bdfs[1], MAX_DEPTH);
	p2ps_dr_split_path(g[0]->path, dummy, MAX_DEPTH, ha, sizeof(ha));
	p2ps_dr_split_path(g[1]->path, dummy, MAX_DEPTH, hb, sizeof(hb));
	if (!n[0] || !n[1] || !*ha || !*hb) {
		p2ps_dr_add(c, "acs", subj, P2PS_V_SKIP, "sysfs device path", NULL,
			    "PCIe path unknown: ACS not checked");
		return;
	}
	if (!strcmp(ha, hb))
		while (common < n[0] - 1 && common < n[1] - 1 &&
		       !strcmp(bdfs[0][common], bdfs[1][common]))
			common++;
	/*
	 * Only the two downstream ports of the deepest common switch decide:
	 * there a request turns from one port to the other, unless ACS
	 * redirects it upstream.  Deeper ports send it upstream anyway, and
	 * without a common switch it turns in the root complex.
	 */
	if (common > 0 && common < n[0] - 1 && common < n[1] - 1) {
		for (s = 0; s < 2; s++) {
			int ctrl = acs_ctrl(c, dirs[s][common]);
			char bits[80];
			int k;

			k = snprintf(ports + so, sizeof(ports) - so, "%s%s", so ? " " : "", bdfs[s][common]);
			if (k > 0 && (size_t)k < sizeof(ports) - so)
				so += k;
			nports++;
			if (ctrl == -2) {
				unreadable++;
				continue;
			}
			if (ctrl < 0 || !(ctrl & (P2PS_ACS_RR | P2PS_ACS_CR | P2PS_ACS_EC)))
				continue;
			acs_bits((unsigned int)ctrl, bits, sizeof(bits));
			k = snprintf(redir + ro, sizeof(redir) - ro, "%s%s (%s)", ro ? ", " : "",
				     bdfs[s][common], bits);
			if (k > 0 && (size_t)k < sizeof(redir) - ro)
				ro += k;
			k = snprintf(param + po, sizeof(param) - po, "%s%s", po ? ";" : "", bdfs[s][common]);
			if (k > 0 && (size_t)k < sizeof(param) - po)
				po += k;
		}
	}
	if (*redir) {
		char remedy[256];

		snprintf(remedy, sizeof(remedy),
			 "boot with pci=disable_acs_redir=%s (Linux 5.1+; only these ports, quoted in GRUB: ';' separates them), not pcie_acs_override; check again after reboot",
			 param);
		p2ps_dr_add(c, "acs", subj, P2PS_V_WARN, "config space, ACS capability (0x0d)", remedy,
			    "ACS redirects P2P at %s: requests go up to the root complex instead of across the switch (slow, or refused)",
			    redir);
	} else if (unreadable) {
		p2ps_dr_add(c, "acs", subj, P2PS_V_SKIP, "config space", NULL,
			    "extended config space of %d bridge%s not readable (run as root)", unreadable,
			    unreadable == 1 ? "" : "s");
	} else if (!nports) {
		p2ps_dr_add(c, "acs", subj, P2PS_V_OK, "sysfs device path", NULL,
			    "no common switch: P2P turns in the root complex, where ACS redirect changes nothing");
	} else {
		p2ps_dr_add(c, "acs", subj, P2PS_V_OK, "config space, ACS capability (0x0d)", NULL,
			    "no ACS redirect on the switch ports between the GPUs (%s)", ports);
	}
}

/* ---------------------------------------------------------------- link */

static void check_link_gpu(struct dctx *c, const struct p2ps_gpu *g)
{
	char dirs[MAX_DEPTH][300], bdfs[MAX_DEPTH][16];
	char detail[512], problems[400] = "", remedy[256] = "", id[16];
	int n = path_dirs(g->path, dirs, bdfs, MAX_DEPTH), i;
	struct link gl, bl;
	size_t off, po = 0;
	bool chipset = false, narrow = false;
	int cap_gen = 0, cap_w = 0;
	char cap_gen_at[16] = "", cap_w_at[16] = "";

#define PROBLEM(...) do { \
		int k_ = snprintf(problems + po, sizeof(problems) - po, "%s", po ? "; " : ""); \
		if (k_ > 0 && (size_t)k_ < sizeof(problems) - po) \
			po += k_; \
		k_ = snprintf(problems + po, sizeof(problems) - po, __VA_ARGS__); \
		if (k_ > 0 && (size_t)k_ < sizeof(problems) - po) \
			po += k_; \
	} while (0)

	read_link(c, g->path, &gl);
	if (!gl.known) {
		p2ps_dr_add(c, "link", g->bdf, P2PS_V_SKIP, "sysfs current/max_link_*", NULL,
			    "PCIe link attributes not found");
		return;
	}
	off = (size_t)snprintf(detail, sizeof(detail), "Gen%d x%d of Gen%d x%d", gl.cur_gen,
			       gl.cur_w, gl.max_gen, gl.max_w);
	if (gl.cur_w && gl.cur_w < gl.max_w) {
		PROBLEM("trained to x%d of x%d", gl.cur_w, gl.max_w);
		narrow = true;
	}
	for (i = 0; i < n - 1; i++) {
		read_link(c, dirs[i], &bl);
		if (!bl.known)
			continue;
		/* the narrowest bridge link on the path */
		if (bl.max_gen < gl.max_gen && (!cap_gen || bl.max_gen < cap_gen)) {
			cap_gen = bl.max_gen;
			p2ps_strlcpy(cap_gen_at, bdfs[i], sizeof(cap_gen_at));
		}
		if (bl.max_w < gl.max_w && (!cap_w || bl.max_w < cap_w)) {
			cap_w = bl.max_w;
			p2ps_strlcpy(cap_w_at, bdfs[i], sizeof(cap_w_at));
		}
		if (bl.cur_w && bl.cur_w < bl.max_w)
			PROBLEM("%s trained to x%d of x%d", bdfs[i], bl.cur_w, bl.max_w);
		if (!chipset && chipset_bridge(c, dirs[i], bdfs[i], i == 0, id, sizeof(id))) {
			PROBLEM("behind the chipset (%s, %s): P2P shares its uplink to the CPU", bdfs[i], id);
			chipset = true;
		}
	}
	if (cap_gen)
		PROBLEM("bridge %s limits the path to Gen%d", cap_gen_at, cap_gen);
	if (cap_w)
		PROBLEM("bridge %s limits the path to x%d", cap_w_at, cap_w);
	narrow = narrow || cap_w || cap_gen;
	if (c->vm == 1) {
		p2ps_dr_add(c, "link", g->bdf, P2PS_V_SKIP, "sysfs current/max_link_*", NULL,
			    "%s; in a VM the bridges' links are emulated: read the host's", detail);
		return;
	}
	if (gl.cur_gen && gl.cur_gen < (cap_gen ? cap_gen : gl.max_gen) && off < sizeof(detail))
		snprintf(detail + off, sizeof(detail) - off,
			 " (idle GPUs train down: read it under load, nvidia-smi -q -d PCIE during p2pctl bench)");
	if (!*problems) {
		p2ps_dr_add(c, "link", g->bdf, P2PS_V_OK, "sysfs current/max_link_*", NULL, "%s", detail);
		return;
	}
	if (chipset && narrow)
		p2ps_strlcpy(remedy, "move the GPU to a CPU-attached x16 slot (the chipset's uplink is shared and narrow); check slot width and bifurcation in the firmware setup", sizeof(remedy));
	else if (chipset)
		p2ps_strlcpy(remedy, "move the GPU to a slot wired to the CPU (the board manual's lane table says which)", sizeof(remedy));
	else
		p2ps_strlcpy(remedy, "use an x16 slot wired to the CPU; check riser, slot bifurcation (x8/x8) and the PCIe generation setting in the firmware setup", sizeof(remedy));
	p2ps_dr_add(c, "link", g->bdf, P2PS_V_WARN, "sysfs current/max_link_*", remedy, "%s; %s",
		    detail, problems);
#undef PROBLEM
}

/* ---------------------------------------------------------------- VM */

static void check_vm(struct dctx *c)
{
	static const char *const vendors[] = {
		"QEMU", "KVM", "VMware", "Xen", "innotek", "VirtualBox", "Amazon EC2",
		"Google Compute Engine", "Parallels", "Bochs", "OpenStack", "Virtual Machine",
		"Cloud Hypervisor", "Firecracker",
	};
	char why[200] = "", buf[128], real[300];
	size_t off = 0, i;
	bool any_source = false, vm = false;
	char *cpuinfo = p2ps_root_read(&c->root, "/proc/cpuinfo", NULL, false);

#define WHY(...) do { \
		int k_ = snprintf(why + off, sizeof(why) - off, "%s", off ? "; " : ""); \
		if (k_ > 0 && (size_t)k_ < sizeof(why) - off) \
			off += k_; \
		k_ = snprintf(why + off, sizeof(why) - off, __VA_ARGS__); \
		if (k_ > 0 && (size_t)k_ < sizeof(why) - off) \
			off += k_; \
	} while (0)

	if (cpuinfo) {
		char *fl = strstr(cpuinfo, "\nflags");

		any_source = true;
		if (fl) {
			char *e = strchr(fl + 1, '\n');

			if (e)
				*e = '\0';
			if (strstr(fl, " hypervisor")) {
				vm = true;
				WHY("CPU flag 'hypervisor'");
			}
		}
		free(cpuinfo);
	}
	if (p2ps_root_line(&c->root, "/sys/hypervisor/type", buf, sizeof(buf)) && *buf) {
		any_source = vm = true;
		WHY("/sys/hypervisor/type %s", buf);
	}
	{
		const char *dmi[] = { "/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name" };

		for (i = 0; i < 2; i++) {
			size_t j;

			if (!p2ps_root_line(&c->root, dmi[i], buf, sizeof(buf)))
				continue;
			any_source = true;
			for (j = 0; j < sizeof(vendors) / sizeof(vendors[0]); j++)
				if (strstr(buf, vendors[j])) {
					vm = true;
					WHY("DMI %s", buf);
					break;
				}
		}
	}
	/* the host bridge the driver's chipset check looks at: evidence only
	 * (emulated ones reuse ids of real chipsets, e.g. QEMU q35's 8086:29c0) */
	if (vm && p2ps_root_realpath(&c->root, "/sys/bus/pci/devices/0000:00:00.0", real, sizeof(real))) {
		bool ok1, ok2;
		unsigned long v = p2ps_dr_read_hex(c, real, "vendor", &ok1);
		unsigned long d = p2ps_dr_read_hex(c, real, "device", &ok2);

		if (ok1 && ok2)
			WHY("host bridge %04lx:%04lx", v, d);
	}
	c->vm = !any_source ? -1 : vm;
	if (!any_source)
		p2ps_dr_add(c, "vm", NULL, P2PS_V_SKIP, "/proc/cpuinfo", NULL,
			    "no CPU flags or DMI to tell");
	else if (!vm)
		p2ps_dr_add(c, "vm", NULL, P2PS_V_OK, "/proc/cpuinfo, DMI", NULL,
			    "bare metal: no hypervisor seen");
	else
		p2ps_dr_add(c, "vm", NULL, P2PS_V_WARN, "/proc/cpuinfo, DMI, host bridge",
			    "the driver's own PCIe P2P check does not know an emulated host bridge (CHIPSET_NOT_SUPPORTED); p2p-shim's ForceP2P skips it, but the host must map the peer BARs in its IOMMU with ACS redirect off (QEMU: x-nv-gpudirect-clique); BAR1 P2P in a VM is untested",
			    "virtual machine: %s", why);
#undef WHY
}

/* ---------------------------------------------------------------- display */

/* Framebuffers and connected DRM connectors that belong to the GPU at @path. */
static void displays_of(struct dctx *c, const char *path, char *fbs, size_t fblen, int *connected,
			bool *seen)
{
	char **names;
	size_t n, i, plen = strlen(path), off = 0;
	char real[400], file[450], buf[64];

	*fbs = '\0';
	*connected = 0;
	if (!p2ps_root_list(&c->root, "/sys/class/graphics", &names, &n)) {
		*seen = *seen || n > 0;
		for (i = 0; i < n; i++) {
			char link[300];

			if (strncmp(names[i], "fb", 2))
				continue;
			snprintf(link, sizeof(link), "/sys/class/graphics/%s", names[i]);
			if (!p2ps_root_realpath(&c->root, link, real, sizeof(real)) ||
			    strncmp(real, path, plen) || real[plen] != '/')
				continue;
			snprintf(file, sizeof(file), "%s/name", real);
			if (!p2ps_root_line(&c->root, file, buf, sizeof(buf)))
				p2ps_strlcpy(buf, "?", sizeof(buf));
			off += (size_t)snprintf(fbs + off, off < fblen ? fblen - off : 0, "%s%s (%s)",
						off ? ", " : "", names[i], buf);
			if (off >= fblen)
				break;
		}
		p2ps_free_list(names, n);
	}
	if (!p2ps_root_list(&c->root, "/sys/class/drm", &names, &n)) {
		*seen = *seen || n > 0;
		for (i = 0; i < n; i++) {
			char link[300];

			if (strncmp(names[i], "card", 4) || !strchr(names[i], '-'))
				continue;
			snprintf(link, sizeof(link), "/sys/class/drm/%s", names[i]);
			if (!p2ps_root_realpath(&c->root, link, real, sizeof(real)) ||
			    strncmp(real, path, plen) || real[plen] != '/')
				continue;
			snprintf(file, sizeof(file), "%s/status", real);
			if (p2ps_root_line(&c->root, file, buf, sizeof(buf)) && !strcmp(buf, "connected"))
				(*connected)++;
		}
		p2ps_free_list(names, n);
	}
}

static const char *console_rule(struct dctx *c)
{
	long major = strtol(c->r->driver_version, NULL, 10);

	if (!*c->r->driver_version || major >= 580)
		return "580+ puts static BAR1 after the console at 512 MiB: BAR1 must hold VRAM + 512 MiB";
	if (major >= 570)
		return "570-575 put static BAR1 right after the console, not 512 MiB aligned: peers can't map it";
	return "550-565 decide static BAR1 before the console and map it at offset 0";
}

static void check_display(struct dctx *c)
{
	size_t i;

	for (i = 0; i < c->r->nr_gpus; i++) {
		const struct p2ps_gpu *g = &c->r->gpus[i];
		char fbs[160], what[256];
		int connected = 0;
		bool seen = false;

		displays_of(c, g->path, fbs, sizeof(fbs), &connected, &seen);
		if (g->display < 0 && !seen) {
			p2ps_dr_add(c, "display", g->bdf, P2PS_V_SKIP, "boot_vga, /sys/class/graphics, /sys/class/drm",
				    NULL, "no boot_vga, framebuffer or DRM information");
			continue;
		}
		if (g->display != 1 && !*fbs && !connected) {
			p2ps_dr_add(c, "display", g->bdf, P2PS_V_OK, "boot_vga, /sys/class/graphics, /sys/class/drm",
				    NULL, "drives no display or console");
			continue;
		}
		{
			char conn[48] = "";

			if (connected)
				snprintf(conn, sizeof(conn), "%d connected DRM connector%s", connected,
					 connected == 1 ? "" : "s");
			snprintf(what, sizeof(what), "%s%s%s%s%s%s",
				 g->display == 1 ? "boot display (console in BAR1)" : "",
				 *fbs && g->display == 1 ? ", " : "", *fbs ? "framebuffer " : "", fbs,
				 *conn && (*fbs || g->display == 1) ? ", " : "", conn);
		}
		if (g->display != 1) {
			p2ps_dr_add(c, "display", g->bdf, P2PS_V_OK, "boot_vga, /sys/class/graphics, /sys/class/drm",
				    NULL, "%s; not the boot console: static BAR1 does not count it", what);
		} else if (g->static_bar1 == P2PS_SB_YES) {
			p2ps_dr_add(c, "display", g->bdf, P2PS_V_OK, "boot_vga, static BAR1 rules", NULL,
				    "%s; %s; static BAR1 still fits here", what, console_rule(c));
		} else {
			p2ps_dr_add(c, "display", g->bdf, P2PS_V_WARN, "boot_vga, static BAR1 rules",
				    "move the display and boot console to another GPU or the iGPU (firmware setup: primary display), then reboot",
				    "%s; %s; static BAR1 %s", what, console_rule(c),
				    p2ps_static_bar1_name(g->static_bar1));
		}
	}
}

/* ---------------------------------------------------------------- entry */

void p2ps_dr_platform(struct dctx *c)
{
	size_t i;

	check_vm(c);
	for (i = 0; i < c->r->nr_gpus; i++)
		check_link_gpu(c, &c->r->gpus[i]);
	for (i = 0; i < c->r->nr_pairs; i++) {
		char subj[48];

		snprintf(subj, sizeof(subj), "%s %s", c->r->gpus[c->r->pairs[i].a].bdf,
			 c->r->gpus[c->r->pairs[i].b].bdf);
		check_acs_pair(c, &c->r->pairs[i], subj);
	}
	check_display(c);
}
