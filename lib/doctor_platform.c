// SPDX-License-Identifier: GPL-2.0
/*
 * libp2pshim: `p2pctl doctor`'s platform checks (issue 23): ACS on the
 * bridges between two GPUs and PCIe links per GPU and per bridge; with
 * doctor_host.c's virtual machine and display checks, in that order.  Everything is read from sysfs
 * and procfs under the doctor's root, so captured trees work as the live
 * system does; config space comes from sysfs `config` files (the first 64
 * bytes for a normal user, all 4096 for root).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

#define MAX_DEPTH P2PS_DR_MAX_DEPTH

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
static int path_dirs(const char *path, char dirs[][600], char bdfs[][16], int max)
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
		snprintf(dirs[i], 600, "%.*s", (int)(p - path + strlen(comps[i])), path);
		p2ps_strlcpy(bdfs[i], comps[i], 16);
	}
	return n;
}

static bool attr_line(struct dctx *c, const char *dir, const char *attr, char *buf, size_t len)
{
	char path[700];

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
		if ((ctrl & names[i].bit) && !p2ps_catf(buf, len, &off, " ", "%s", names[i].name))
			break;
	}
}

/*
 * ACS control of the bridge at @dir: the control register, -1 if it has no
 * ACS capability, -2 if its extended config space can't be read.
 */
static int acs_ctrl(struct dctx *c, const char *dir)
{
	char path[700];
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

/* What ACS clears for P2P: the bits the kernel's disable_acs_redir= clears too. */
#define ACS_P2P_BITS (P2PS_ACS_RR | P2PS_ACS_CR | P2PS_ACS_EC)

/* The switch ports that redirect P2P, on all pairs: one parameter must name them all. */
struct acs_ports {
	char bdf[64][16];
	int n;
	bool more;			/* more than bdf[] holds */
};

static void acs_port_add(struct acs_ports *a, const char *bdf)
{
	int i;

	for (i = 0; i < a->n; i++)
		if (!strcmp(a->bdf[i], bdf))
			return;
	if (a->n < (int)(sizeof(a->bdf) / sizeof(a->bdf[0])))
		p2ps_strlcpy(a->bdf[a->n++], bdf, sizeof(a->bdf[0]));
	else
		a->more = true;
}

static void check_acs_pair(struct dctx *c, const struct p2ps_pair *p, const char *subj,
			   struct acs_ports *all)
{
	const struct p2ps_gpu *g[2] = { &c->r->gpus[p->a], &c->r->gpus[p->b] };
	char dirs[2][MAX_DEPTH][600], bdfs[2][MAX_DEPTH][16], ha[64], hb[64], dummy[MAX_DEPTH][16];
	char redir[200] = "", now[160] = "", ports[120] = "";
	int n[2], common = 0, s, unreadable = 0, nports = 0;
	size_t ro = 0, no = 0, so = 0;

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

			p2ps_catf(ports, sizeof(ports), &so, " ", "%s", bdfs[s][common]);
			nports++;
			if (ctrl == -2) {
				unreadable++;
				continue;
			}
			if (ctrl < 0 || !(ctrl & ACS_P2P_BITS))
				continue;
			acs_bits((unsigned int)ctrl, bits, sizeof(bits));
			p2ps_catf(redir, sizeof(redir), &ro, ", ", "%s (%s)", bdfs[s][common], bits);
			/*
			 * data:mask: setpci reads the register and changes only
			 * those bits, whatever it holds by then (a capture is old)
			 */
			p2ps_catf(now, sizeof(now), &no, " ", "-s %s ECAP_ACS+6.w=0000:%04x",
				  bdfs[s][common], ACS_P2P_BITS);
			acs_port_add(all, bdfs[s][common]);
		}
	}
	if (*redir) {
		char remedy[256];

		/* the permanent fix names every port of every pair: p2ps_dr_platform() */
		snprintf(remedy, sizeof(remedy),
			 "try now, as root (until reboot or reset; the devices below lose isolation from each other, while their IOMMU groups still claim it):\n# setpci %s",
			 now);
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

/*
 * The permanent fix, for the host: the kernel keeps only the last
 * pci=disable_acs_redir=, so one names every port (';' between them, as
 * Documentation/admin-guide/kernel-parameters.txt has it).  grub.cfg's
 * linux line is GRUB script, where ';' ends a command: the value keeps
 * double quotes there, \" inside /etc/default/grub's own.  Whole ports
 * only: without their domain where all are 0000 (the kernel's default) if
 * that is what fits in @len, else no list at all (the detail names them).
 */
void p2ps_dr_acs_param(char *buf, size_t len, const char (*bdf)[16], int n, bool more)
{
	static const char pre[] = "permanent: GRUB_CMDLINE_LINUX=\"... pci=disable_acs_redir=\\\"";
	static const char post[] = "\\\"\" in /etc/default/grub (\\\" as shown: ; ends a grub.cfg command), then update-grub, reboot";
	char list[256] = "";
	size_t lo = 0, cut;
	bool all_zero = true;
	int i;

	for (i = 0; i < n; i++)
		all_zero = all_zero && !strncmp(bdf[i], "0000:", 5);
	for (cut = 0; !more && cut <= (all_zero ? 5 : 0); cut += 5) {
		*list = '\0';
		lo = 0;
		for (i = 0; i < n; i++)
			if (!p2ps_catf(list, sizeof(list), &lo, ";", "%s", bdf[i] + cut))
				break;
		if (i == n && sizeof(pre) - 1 + lo + sizeof(post) - 1 < len)
			break;
		*list = '\0';
	}
	if (*list)
		snprintf(buf, len, "%s%s%s", pre, list, post);
	else
		snprintf(buf, len, "permanent: pci=disable_acs_redir=\\\"PORT;PORT;...\\\" naming every port of the acs lines, in GRUB_CMDLINE_LINUX=\"...\" of /etc/default/grub, then update-grub and reboot");
}

static void acs_boot_param(struct dctx *c, const struct acs_ports *a)
{
	char remedy[256], detail[200] = "";
	size_t dl = 0;
	int i;

	if (!a->n)
		return;
	for (i = 0; i < a->n; i++)
		if (!p2ps_catf(detail, sizeof(detail), &dl, " ", "%s", a->bdf[i])) {
			p2ps_catf(detail, sizeof(detail), &dl, " ", "...");
			break;
		}
	p2ps_dr_acs_param(remedy, sizeof(remedy), a->bdf, a->n, a->more);
	p2ps_dr_add(c, "acs", NULL, P2PS_V_WARN, "config space, ACS capability (0x0d)", remedy,
		    "ACS redirect on %d%s switch port%s between GPUs (%s): one pci=disable_acs_redir= (Linux 5.1+) must name them all, not pcie_acs_override",
		    a->n, a->more ? "+" : "", a->n == 1 ? "" : "s", detail);
}

/* ---------------------------------------------------------------- link */

static void check_link_gpu(struct dctx *c, const struct p2ps_gpu *g)
{
	char dirs[MAX_DEPTH][600], bdfs[MAX_DEPTH][16];
	char detail[512], problems[400] = "", remedy[256] = "", id[16];
	int n = path_dirs(g->path, dirs, bdfs, MAX_DEPTH), i;
	struct link gl, bl;
	size_t off, po = 0;
	bool chipset = false, narrow = false;
	int cap_gen = 0, cap_w = 0;
	char cap_gen_at[16] = "", cap_w_at[16] = "";

#define PROBLEM(...) p2ps_catf(problems, sizeof(problems), &po, "; ", __VA_ARGS__)

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

/* ---------------------------------------------------------------- AER */

/* TOTAL_ERR_COR of @dir's aer_dev_correctable (the kernel's AER counters), or -1. */
static long aer_correctable(struct dctx *c, const char *dir)
{
	char path[700], *text, *t;
	long n = -1;

	if ((size_t)snprintf(path, sizeof(path), "%s/aer_dev_correctable", dir) >= sizeof(path))
		return -1;
	text = p2ps_root_read(&c->root, path, NULL, false);
	t = text ? strstr(text, "TOTAL_ERR_COR ") : NULL;
	if (t)
		n = strtol(t + 14, NULL, 10);
	free(text);
	return n;
}

/*
 * Correctable errors (replayed TLPs: bad LCRC, receiver errors) on the GPU
 * or a bridge above it: a riser, an extension cable or a slot losing
 * signal.  The link retrains and replays, so P2P slows down or, at worst,
 * the link drops.  Counted since boot.
 */
static void check_aer_gpu(struct dctx *c, const struct p2ps_gpu *g)
{
	char dirs[MAX_DEPTH][600], bdfs[MAX_DEPTH][16], where[400] = "";
	int n = path_dirs(g->path, dirs, bdfs, MAX_DEPTH), i;
	size_t off = 0;
	bool any = false;
	long total = 0;

	for (i = 0; i < n; i++) {
		long e = aer_correctable(c, i == n - 1 ? g->path : dirs[i]);

		if (e < 0)
			continue;
		any = true;
		if (e > 0 && !p2ps_catf(where, sizeof(where), &off, ", ", "%s %ld", bdfs[i], e) &&
		    !strstr(where, "..."))
			p2ps_catf(where, sizeof(where), &off, ", ", "...");
		total += e;
	}
	if (!any)
		return;
	if (!total)
		p2ps_dr_add(c, "aer", g->bdf, P2PS_V_OK, "aer_dev_correctable", NULL,
			    "no correctable PCIe errors on its path since boot");
	else
		p2ps_dr_add(c, "aer", g->bdf, P2PS_V_WARN, "aer_dev_correctable",
			    "reseat the GPU and its riser or cable (or drop the slot to a lower PCIe generation in the firmware setup); watch TOTAL_ERR_COR in /sys/bus/pci/devices/BDF/aer_dev_correctable under p2pctl bench",
			    "%ld correctable PCIe errors on its path since boot (%s): a marginal link (riser, cable, slot) replays packets",
			    total, where);
}

/* ---------------------------------------------------------------- entry */

void p2ps_dr_platform(struct dctx *c)
{
	struct acs_ports *acs = calloc(1, sizeof(*acs));
	size_t i;

	if (!acs) {
		c->err = -ENOMEM;
		return;
	}

	for (i = 0; i < c->r->nr_gpus; i++) {
		check_link_gpu(c, &c->r->gpus[i]);
		check_aer_gpu(c, &c->r->gpus[i]);
	}
	for (i = 0; i < c->r->nr_pairs; i++) {
		char subj[48];

		snprintf(subj, sizeof(subj), "%s %s", c->r->gpus[c->r->pairs[i].a].bdf,
			 c->r->gpus[c->r->pairs[i].b].bdf);
		check_acs_pair(c, &c->r->pairs[i], subj, acs);
	}
	acs_boot_param(c, acs);
	free(acs);
}
