// SPDX-License-Identifier: GPL-2.0
/*
 * `p2pctl doctor`: GPU pairs (PCIe path, NVLink, Intel I/O hubs) and what
 * each pair gets with p2p-shim.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <p2p-shim/gpurule.h>
#include <p2p-shim/readrule.h>

#include "doctor.h"

/*
 * The socket (physical_package_id) of every CPU in the list @list
 * ("0-7,16-23"), when they share one; else -1.
 */
static int list_socket(struct dctx *c, const char *list)
{
	const char *p = list;
	int sock = -1, n = 0;

	while (*p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo, cpu;

		if (end == p)
			return -1;
		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		for (cpu = lo; cpu <= hi && n < 8192; cpu++, n++) {
			char path[96], id[16];
			int s;

			snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%lu/topology/physical_package_id",
				 cpu);
			if (!p2ps_root_line(&c->root, path, id, sizeof(id)))
				return -1;
			s = atoi(id);
			if (sock >= 0 && s != sock)
				return -1;
			sock = s;
		}
		p = *end == ',' ? end + 1 : end + strlen(end);
	}
	return sock;
}

/*
 * @g's socket from its local CPUs (its local_cpulist, else its host
 * bridge's cpulistaffinity), for numa_node -1; -1 when they span sockets
 * or are not known.
 */
static int gpu_socket(struct dctx *c, const struct p2ps_gpu *g)
{
	char path[700], list[4096], comps[P2PS_DR_MAX_DEPTH][16], host[64];

	snprintf(path, sizeof(path), "%s/local_cpulist", g->path);
	if (!p2ps_root_line(&c->root, path, list, sizeof(list))) {
		p2ps_dr_split_path(g->path, comps, P2PS_DR_MAX_DEPTH, host, sizeof(host));
		if (strncmp(host, "pci", 3))
			return -1;
		snprintf(path, sizeof(path), "/sys/devices/%s/pci_bus/%s/cpulistaffinity", host, host + 3);
		if (!p2ps_root_line(&c->root, path, list, sizeof(list)))
			return -1;
	}
	return list_socket(c, list);
}

/* Sockets of the host: distinct physical_package_id of its CPUs (0: not known). */
static int host_sockets(struct dctx *c)
{
	char **names, path[128], id[16];
	size_t n, i;
	unsigned long seen[4] = { 0 };	/* up to 256 socket ids */
	int count = 0;

	if (p2ps_root_list(&c->root, "/sys/devices/system/cpu", &names, &n))
		return 0;
	for (i = 0; i < n; i++) {
		unsigned long s;

		if (strncmp(names[i], "cpu", 3) || !isdigit((unsigned char)names[i][3]))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/%s/topology/physical_package_id",
			 names[i]);
		if (!p2ps_root_line(&c->root, path, id, sizeof(id)))
			continue;
		s = strtoul(id, NULL, 10);
		if (s < 256 && !(seen[s / 64] & (1UL << (s % 64)))) {
			seen[s / 64] |= 1UL << (s % 64);
			count++;
		}
	}
	p2ps_free_list(names, n);
	return count;
}

static enum p2ps_pcie_path pair_path(struct dctx *c, const struct p2ps_gpu *a, const struct p2ps_gpu *b)
{
	char ca[P2PS_DR_MAX_DEPTH][16], cb[P2PS_DR_MAX_DEPTH][16], ha[64], hb[64];
	int na = p2ps_dr_split_path(a->path, ca, P2PS_DR_MAX_DEPTH, ha, sizeof(ha));
	int nb = p2ps_dr_split_path(b->path, cb, P2PS_DR_MAX_DEPTH, hb, sizeof(hb));
	int i;

	if (!*ha || !*hb || na == 0 || nb == 0)
		return P2PS_PATH_UNKNOWN;
	if (strcmp(ha, hb)) {
		int sa, sb;

		if (a->numa_node >= 0 && b->numa_node >= 0)
			return a->numa_node != b->numa_node ? P2PS_PATH_CROSS_SOCKET : P2PS_PATH_HOST_BRIDGES;
		sa = gpu_socket(c, a);
		sb = gpu_socket(c, b);
		return sa >= 0 && sb >= 0 && sa != sb ? P2PS_PATH_CROSS_SOCKET : P2PS_PATH_HOST_BRIDGES;
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
 * The root port above @g if it is one of those: its device id, and its
 * "domain:bus" in @hub (the driver compares domain and bus).
 */
static unsigned long ioh_port(struct dctx *c, const struct p2ps_gpu *g, char *hub, size_t len)
{
	const char *p = strstr(g->path, "/pci"), *s, *e;
	char dir[600];
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
	if (!ok1 || !ok2 || vendor != 0x8086 || !p2ps_intel_ioh_root_port(dev))
		return 0;
	snprintf(hub, len, "%.7s", s + 1);	/* "0000:00" of "0000:00:03.0" */
	return dev;
}

static bool ok_sb(enum p2ps_static_bar1 s)
{
	return s == P2PS_SB_YES;
}

/*
 * RMForceP2PType other than DEFAULT or NVLINK on the first GPU of a P2P
 * query makes the driver's NVLink check refuse before it looks at the
 * links (p2p_caps.c _gpumgrGetP2PCapsStatusOverNvLink); a value above the
 * last type is DEFAULT (kernel_bif.c, kbifConstructEngine's read).  NVLINK
 * is 3 of 4 in 550-570, 2 of 3 from 575 (nvrm_registry.h).  p2p-shim
 * supplies RMForceP2PType=2 (BAR1P2P) before 575 to every GPU whose user
 * did not set it.  @g's type where it refuses, else 0.
 */
static long nvlink_forced_off(struct dctx *c, const struct p2ps_dr_rules *k, const struct p2ps_gpu *g)
{
	unsigned int major = p2ps_driver_major(c->r->driver_version);
	long t = p2ps_dr_user_key(k->dwords, k->per_device, p2ps_dr_per_device_bdf(k, g),
				  "RMForceP2PType", NULL);
	long nvlink = major < 575 ? 3 : 2;

	if (!c->r->open_module || major < 550)
		return 0;
	if (t < 0)
		t = k->k.shim_keys && major < 575 ? 2 : 0;
	if (t > nvlink + 1)
		t = 0;
	return t != nvlink ? t : 0;
}

/*
 * The user's own ForceP2P for @g (p2p-shim keeps it: registry.c) with its
 * read (bits 1:0) or write (bits 5:4) field DISABLE (0): the driver then
 * answers DISABLED_BY_REGKEY (nvrm_registry.h NV_REG_STR_CL_FORCE_P2P,
 * p2p_caps.c's override switch).  The value in *@v.
 */
static bool force_p2p_off(const struct p2ps_dr_rules *k, const struct p2ps_gpu *g, long *v)
{
	*v = p2ps_dr_user_key(k->dwords, k->per_device, p2ps_dr_per_device_bdf(k, g), "ForceP2P", NULL);
	return *v >= 0 && ((*v & 3) == 0 || ((*v >> 4) & 3) == 0);
}

/*
 * The GPU whose type the driver checks for the pair: the first of the mask,
 * the lower GPU instance, given at first initialisation: the lower
 * address, as GPUs are normally first opened in that order.
 */
static const struct p2ps_gpu *first_of(const struct p2ps_gpu *a, const struct p2ps_gpu *b)
{
	return strcmp(a->bdf, b->bdf) <= 0 ? a : b;
}

/*
 * Is @g nvidia's?  Unknown (a tree without driver links) counts as yes; so
 * does no driver while nvidia is not loaded (doctor then predicts).
 */
static bool drives(const struct dctx *c, const struct p2ps_gpu *g)
{
	if (!g->driver_known)
		return true;
	if (!*g->driver)
		return !*c->r->driver_version;
	return !strcmp(g->driver, "nvidia");
}

static void pair_verdict(struct dctx *c, const struct p2ps_dr_rules *k, struct p2ps_pair *p,
			 const char *subj)
{
	const struct p2ps_gpu *a = &c->r->gpus[p->a], *b = &c->r->gpus[p->b];
	const struct p2ps_gpu *bad = NULL;
	char hub_a[16] = "", hub_b[16] = "", remedy[320] = "";
	unsigned long ra, rb;
	enum p2ps_verdict v = P2PS_V_OK;
	long t;

	/* a GPU nvidia does not drive (vfio-pci, nouveau, none) has no P2P at all */
	if (!drives(c, a) || !drives(c, b)) {
		bad = drives(c, a) ? b : a;
		p->p2p = P2PS_P2P_NONE;
		v = P2PS_V_FAIL;
		snprintf(p->p2p_why, sizeof(p->p2p_why), "%s is bound to %s, not nvidia", bad->bdf,
			 *bad->driver ? bad->driver : "no driver");
		snprintf(remedy, sizeof(remedy), "bind %s to nvidia if it is meant for P2P here "
			 "(driverctl unset-override %s, or unbind it from %s)", bad->bdf, bad->bdf,
			 *bad->driver ? bad->driver : "its driver");
		goto out;
	}
	if (p->native == P2PS_NATIVE_NVLINK && (t = nvlink_forced_off(c, k, first_of(a, b)))) {
		p->p2p = P2PS_P2P_BAR1;
		v = P2PS_V_WARN;
		snprintf(p->p2p_why, sizeof(p->p2p_why),
			 "NVLink, but RMForceP2PType=%ld on %s, the GPU the driver checks (p2p-shim's "
			 "default before 575 where the user has not set it), turns the driver's NVLink "
			 "check off: PCIe BAR1 instead", t, first_of(a, b)->bdf);
		snprintf(remedy, sizeof(remedy),
			 "to keep NVLink: options nvidia NVreg_RegistryDwordsPerDevice=\"pci=%s;"
			 "RMForceP2PType=0;pci=%s;RMForceP2PType=0\" (these GPUs then get no BAR1 P2P "
			 "with PCIe-only peers)", a->bdf, b->bdf);
		goto out;
	}
	if (p->native != P2PS_NATIVE_NVLINK && (bad = force_p2p_off(k, a, &t) ? a :
						 force_p2p_off(k, b, &t) ? b : NULL)) {
		const char *opt = NULL;

		p2ps_dr_user_key(k->dwords, k->per_device, p2ps_dr_per_device_bdf(k, bad), "ForceP2P", &opt);
		p->p2p = P2PS_P2P_NONE;
		v = P2PS_V_FAIL;
		snprintf(p->p2p_why, sizeof(p->p2p_why),
			 "ForceP2P=0x%lx on %s (the user's, %s) turns P2P %s off: the driver answers DISABLED_BY_REGKEY",
			 t, bad->bdf, opt ? opt : "NVreg_RegistryDwords",
			 (t & 3) == 0 && ((t >> 4) & 3) == 0 ? "reads and writes" : (t & 3) == 0 ? "reads" : "writes");
		snprintf(remedy, sizeof(remedy), "take ForceP2P out of %s (p2p-shim supplies its own), "
			 "then reload nvidia", opt ? opt : "NVreg_RegistryDwords");
		goto out;
	}
	if (p->native == P2PS_NATIVE_NVLINK) {
		p->p2p = P2PS_P2P_NATIVE;
		snprintf(p->p2p_why, sizeof(p->p2p_why), "NVLink: the stock driver's P2P, shim not needed");
		goto out;
	}
	if (!strcmp(a->arch, "Hopper") && !strcmp(b->arch, "Hopper")) {
		if ((ok_sb(a->static_bar1) && ok_sb(b->static_bar1)) || !k->k.shim_keys) {
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
	if (k->k.gen != P2PS_GEN_UNSERVED && *c->r->driver_version && !*c->r->profile) {
		const char *why = p2ps_unsupported_reason(c->r->driver_version);

		/* p2p-shim will not arm on it: the same reason as `p2pctl check` */
		p->p2p = P2PS_P2P_NONE;
		v = P2PS_V_FAIL;
		snprintf(p->p2p_why, sizeof(p->p2p_why), "no profile for driver %s%s%s: p2p-shim "
			 "does not arm", c->r->driver_version, why ? ": " : "", why ? why : "");
		p2ps_strlcpy(remedy, "see profile", sizeof(remedy));
		goto out;
	}
	if (k->k.gen == P2PS_GEN_UNSERVED) {
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
	/* the caps guard's generation rule (rules/gpurule.c) */
	if (p2ps_gpus_mixed(0x10de, a->device, 0x10de, b->device)) {
		p->p2p = P2PS_P2P_NONE;
		v = P2PS_V_FAIL;
		snprintf(p->p2p_why, sizeof(p->p2p_why),
			 "GPUs of two generations (%s %04x + %s %04x): p2p-shim refuses the pair (BAR1 atomics follow the memory owner's), as libcuda does",
			 a->arch, a->device, b->arch, b->device);
		p2ps_strlcpy(remedy, "run P2P work on GPUs of one generation (CUDA_VISIBLE_DEVICES)",
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
		if (f) {
			const char *l = f->remedy;
			size_t off = 0, n;

			/* its GPU's remedy, each fix named for that GPU */
			for (; *l; l += n + (l[n] == '\n')) {
				n = strcspn(l, "\n");
				p2ps_catf(remedy, sizeof(remedy), &off, "\n", "%s: %.*s", bad->bdf, (int)n, l);
			}
		}
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

int p2ps_dr_pairs(struct dctx *c)
{
	const struct p2ps_dr_rules *k = &c->rules;
	struct p2ps_doctor_report *r = c->r;
	bool nvlink_core = p2ps_root_exists(&c->root, "/proc/driver/nvidia-nvlink");
	const char *topo = c->opts ? c->opts->topo_text : NULL;
	const char *topo_src = c->opts && c->opts->topo_source ? c->opts->topo_source :
			       "nvidia-smi topo -m";
	size_t i, j, np = r->nr_gpus * (r->nr_gpus - (r->nr_gpus > 0)) / 2;
	long t;

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
			p->path = pair_path(c, a, b);

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
				char ha[64], hb[64], comps[P2PS_DR_MAX_DEPTH][16], where[300];
				int sa = -1, sb = -1, sockets = 0;

				p2ps_dr_split_path(a->path, comps, P2PS_DR_MAX_DEPTH, ha, sizeof(ha));
				p2ps_dr_split_path(b->path, comps, P2PS_DR_MAX_DEPTH, hb, sizeof(hb));
				if (a->numa_node < 0 || b->numa_node < 0) {
					sa = gpu_socket(c, a);
					sb = gpu_socket(c, b);
				}
				/*
				 * numa_node -1 on a multi-socket host: the kernel lists
				 * every CPU as the device's local ones, so neither tells
				 * the socket; don't call it one socket.
				 */
				bool unknown = (a->numa_node < 0 || b->numa_node < 0) && (sa < 0 || sb < 0) &&
					       (sockets = host_sockets(c)) > 1;

				if (sa >= 0 && sb >= 0)
					snprintf(where, sizeof(where), "%s socket %d, %s socket %d (local CPUs)",
						 ha, sa, hb, sb);
				else if (unknown)
					snprintf(where, sizeof(where), "%s NUMA %d, %s NUMA %d: socket unknown on "
						 "this %d-socket host (without NUMA information the kernel lists "
						 "every CPU as local)", ha, a->numa_node, hb, b->numa_node, sockets);
				else
					snprintf(where, sizeof(where), "%s NUMA %d, %s NUMA %d",
						 ha, a->numa_node, hb, b->numa_node);
				struct p2ps_host_cpu cpu;
				/*
				 * One AMD socket: root complexes meet in the Infinity
				 * Fabric, where the field measures P2P at line rate.
				 */
				bool amd;

				p2ps_dr_cpu(c, &cpu);	/* the vendor, even without family and model */
				amd = p->path == P2PS_PATH_HOST_BRIDGES && cpu.vendor == P2PS_CPU_AMD && !unknown;

				p2ps_dr_add(c, "pcie-path", subj,
				    p->native == P2PS_NATIVE_NVLINK || amd ? P2PS_V_OK : P2PS_V_WARN,
				    sa >= 0 && sb >= 0 ? "sysfs device path, local_cpulist" :
				    "sysfs device path, numa_node",
				    unknown ? "enable NUMA in the firmware setup (the ACPI SRAT/_PXM proximity of the host bridges; on AMD \"NUMA nodes per socket\" NPS1 or more) so numa_node tells the socket; meanwhile check P2P with p2pctl verify" :
				    "put both GPUs under one socket's root complex (or one switch); else expect a fraction of the bandwidth, and check P2P with p2pctl verify",
				    "PCIe path: %s (%s): %s", p2ps_pcie_path_name(p->path), where,
				    unknown ? "P2P may cross the socket interconnect (UPI, xGMI)" :
				    p->path == P2PS_PATH_CROSS_SOCKET ?
				    "P2P crosses the socket interconnect (UPI, xGMI): lower bandwidth, higher latency, and some platforms don't forward it" :
				    amd ? "P2P goes between root complexes of one AMD socket (Infinity Fabric), measured at line rate" :
				    "P2P goes between root complexes through the CPU's fabric: usually slower than under one root port or switch");
				break;
			}
			default:
				p2ps_dr_add(c, "pcie-path", subj, P2PS_V_SKIP, "sysfs device path", NULL,
				    "PCIe path unknown");
			}
			switch (p->native) {
			case P2PS_NATIVE_NVLINK:
				if ((t = nvlink_forced_off(c, k, first_of(a, b))))
					p2ps_dr_add(c, "native-p2p", subj, P2PS_V_WARN, p->native_source, NULL,
					    "native P2P over NVLink, turned off by RMForceP2PType=%ld on %s (see p2p)",
					    t, first_of(a, b)->bdf);
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
