// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <p2p-shim/vmguess.h>

#include "linkrate.h"

double link_lane_gbps(const char *speed, int *gen)
{
	static const struct { double gts, gbps; int gen; } t[] = {
		{ 2.5, 0.25, 1 }, { 5.0, 0.5, 2 }, { 8.0, 8.0 * 128 / 130 / 8, 3 },
		{ 16.0, 16.0 * 128 / 130 / 8, 4 }, { 32.0, 32.0 * 128 / 130 / 8, 5 },
		{ 64.0, 64.0 * 242 / 256 / 8, 6 },	/* FLIT mode: 242 of 256 bytes carry data */
	};
	double gts = strtod(speed, NULL);

	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
		if (gts > t[k].gts - 0.05 && gts < t[k].gts + 0.05) {
			*gen = t[k].gen;
			return t[k].gbps;
		}
	*gen = 0;
	return 0;
}

static const char *sysfs_root(void)
{
	const char *s = getenv("P2PCTL_SYSFS");

	return s && *s ? s : "/sys";
}

static int read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* "0000:41:00.0" */
static int is_bdf(const char *s)
{
	unsigned d, b, dev, fn;
	char tail;

	return sscanf(s, "%4x:%2x:%2x.%1x%c", &d, &b, &dev, &fn, &tail) == 4;
}

/*
 * A GPU's place in sysfs: devices/pci0000:00/0000:00:01.0/0000:01:00.0
 * splits into the host bridge's folder (host) and the BDF components below
 * it, c[0] the root port ... c[n - 1] the GPU. Each component's
 * current_link_* describe one link: an endpoint's or a switch's upstream
 * port's the link above it, a root or downstream port's the link below it.
 */
struct pcichain {
	char host[PATH_MAX];
	char *c[32];
	int n;
};

static int pcie_chain(const char *busid, struct pcichain *ch, char *why, size_t len)
{
	char id[32], path[PATH_MAX + 64], *p, *rev[32];
	int k = 0;

	snprintf(id, sizeof(id), "%s", busid);
	for (p = id; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	/* CUDA may print an 8-digit domain: sysfs has 4. */
	if (strlen(id) == 17 && !strncmp(id, "0000", 4))
		memmove(id, id + 4, strlen(id + 4) + 1);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s", sysfs_root(), id);
	if (!realpath(path, ch->host)) {
		snprintf(why, len, "no %s in sysfs", id);
		return -1;
	}
	while (k < 32 && (p = strrchr(ch->host, '/')) && is_bdf(p + 1)) {
		rev[k++] = p + 1;
		*p = '\0';
	}
	for (ch->n = 0; ch->n < k; ch->n++)
		ch->c[ch->n] = rev[k - 1 - ch->n];
	if (!k) {
		snprintf(why, len, "sysfs reports no PCIe link speed for %s", id);
		return -1;
	}
	return 0;
}

/*
 * Lower *best to the link at dir (its component bdf) if slower: what it
 * can carry (max_link_speed, else current_link_speed, times
 * current_link_width), or with now its current speed. 1 if dir names a
 * link, else 0.
 */
static int pcie_hop(const char *dir, const char *bdf, int now, double *best, int *bgen, int *bw,
		    const char **at)
{
	char sp[64], mx[64], wd[16];
	double lane;
	int gen, w;

	if (read_line(dir, "current_link_speed", sp, sizeof(sp)) ||
	    read_line(dir, "current_link_width", wd, sizeof(wd)) || (w = atoi(wd)) <= 0)
		return 0;
	if (!now && !read_line(dir, "max_link_speed", mx, sizeof(mx)) && link_lane_gbps(mx, &gen) > 0)
		snprintf(sp, sizeof(sp), "%s", mx);
	if ((lane = link_lane_gbps(sp, &gen)) <= 0)
		return 0;
	if (!*at || lane * w < *best) {
		*best = lane * w;
		*bgen = gen;
		*bw = w;
		*at = bdf;
	}
	return 1;
}

int link_pcie_path(const char *a, const char *b, int now, struct linkrate *l)
{
	struct pcichain ch[2];
	char dir[PATH_MAX + 64];
	const char *at = NULL, *id[2] = { a, b };
	double best = 0;
	int bgen = 0, bw = 0, common = 0, hops = 0;

	memset(l, 0, sizeof(*l));
	for (int g = 0; g < 2; g++)
		if (pcie_chain(id[g], &ch[g], l->why, sizeof(l->why)))
			return -1;
	/* Below a common bridge, P2P turns there: its uplink and above never carry it. */
	if (!strcmp(ch[0].host, ch[1].host))
		while (common < ch[0].n && common < ch[1].n && !strcmp(ch[0].c[common], ch[1].c[common]))
			common++;
	for (int g = 0; g < 2; g++) {
		size_t off = (size_t)snprintf(dir, sizeof(dir), "%s", ch[g].host);

		for (int k = 0; k < ch[g].n && off < sizeof(dir); k++) {
			off += (size_t)snprintf(dir + off, sizeof(dir) - off, "/%s", ch[g].c[k]);
			if (k >= common && off < sizeof(dir))
				hops += pcie_hop(dir, ch[g].c[k], now, &best, &bgen, &bw, &at);
		}
	}
	if (!hops) {
		snprintf(l->why, sizeof(l->why), "sysfs reports no PCIe link speed between %s and %s", a, b);
		return -1;
	}
	l->kind = LINK_PCIE;
	l->gbps = best;
	snprintf(l->label, sizeof(l->label), "PCIe Gen%d x%d", bgen, bw);
	if (!common)
		snprintf(l->from, sizeof(l->from), "sysfs: %s x current_link_width, slowest hop %s to "
			 "the root ports", now ? "current_link_speed" : "max_link_speed", at);
	else
		snprintf(l->from, sizeof(l->from), "sysfs: %s x current_link_width, slowest hop %s below "
			 "the GPUs' common %s %s", now ? "current_link_speed" : "max_link_speed", at,
			 common == 1 ? "root port" : "switch", ch[0].c[common - 1]);
	return 0;
}

/* Where to read /proc/cpuinfo: $P2PCTL_PROC, default /proc. */
static const char *proc_root(void)
{
	const char *s = getenv("P2PCTL_PROC");

	return s && *s ? s : "/proc";
}

/*
 * Whether we run in a VM, by `p2pctl doctor`'s test (<p2p-shim/vmguess.h>):
 * the CPU flag "hypervisor", /sys/hypervisor/type or a hypervisor's name in
 * DMI. 1 with what said so in why, else 0.
 */
static int in_vm(char *why, size_t len)
{
	static const char *const dmi[] = { "class/dmi/id/sys_vendor", "class/dmi/id/product_name" };
	char buf[128], path[PATH_MAX + 64], *cpu;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpuinfo", proc_root());
	f = fopen(path, "r");
	cpu = f ? calloc(1, 65536) : NULL;
	if (cpu) {
		/* the first CPU's flags line comes within its first few KiB */
		size_t n = fread(cpu, 1, 65535, f);

		cpu[n] = '\0';
		n = p2ps_vm_cpu_flag(cpu);
		free(cpu);
		if (n) {
			fclose(f);
			snprintf(why, len, "CPU flag 'hypervisor'");
			return 1;
		}
	}
	if (f)
		fclose(f);
	if (!read_line(sysfs_root(), "hypervisor/type", buf, sizeof(buf)) && buf[0]) {
		snprintf(why, len, "/sys/hypervisor/type %s", buf);
		return 1;
	}
	for (size_t k = 0; k < sizeof(dmi) / sizeof(dmi[0]); k++)
		if (!read_line(sysfs_root(), dmi[k], buf, sizeof(buf)) && p2ps_vm_vendor(buf)) {
			snprintf(why, len, "DMI %s", buf);
			return 1;
		}
	return 0;
}

/* NVML, as much of it as the NVLink query needs. */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
	char busIdLegacy[16];
	unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;
#define NVML_NVLINK_MAX_LINKS 18

#define NVML_P2P_CAPS_INDEX_NVLINK 2

/*
 * NVLink per link and direction, GB/s, from nvmlDeviceGetNvLinkVersion's
 * answer. Drivers up to about 535 answered the generation (1 to 4); newer
 * ones answer nvmlNvlinkVersion_t (1 1.0, 2 2.0, 3 2.2, 4 3.0, 5 3.1, 6 4.0,
 * 7 5.0; 580 answered 6 on a lent H200 pair of NVLink4). 2 to 5 differ by
 * at most 6% between the two readings.
 */
static double nvlink_gbps(unsigned ver, int *gen)
{
	static const struct { double gbps; int gen; } t[] = {
		{ 25.0, 0 }, { 20.0, 1 }, { 25.78125, 2 }, { 25.78125, 0 }, { 25.0, 0 },
		{ 25.0, 3 }, { 26.5625, 4 }, { 50.0, 5 },
	};

	if (ver < sizeof(t) / sizeof(t[0])) {
		*gen = t[ver].gen;
		return t[ver].gbps;
	}
	*gen = 0;
	return 50.0;
}

/*
 * NVLink links from GPU a to GPU b. A link counts when NVML's remote PCI
 * info names b (as NVML itself reports b's PCI address: inside a VM that can
 * differ from the guest's); when none does but NVML's P2P status says the
 * pair is NVLink-connected, every active link of a counts. 0, or -1 with
 * l->nvml saying why not.
 */
static int nvlink_rate(const char *a, const char *b, struct linkrate *l)
{
	const char *lib = getenv("P2PCTL_LIBNVML");
	void *h = dlopen(lib && *lib ? lib : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	int (*init)(void), (*shutdown)(void), (*byid)(const char *, nvmlDevice_t *);
	int (*state)(nvmlDevice_t, unsigned, int *), (*remote)(nvmlDevice_t, unsigned, nvmlPciInfo_t *);
	int (*version)(nvmlDevice_t, unsigned, unsigned *), (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
	int (*p2p)(nvmlDevice_t, nvmlDevice_t, int, int *);
	nvmlDevice_t da, db;
	nvmlPciInfo_t pb;
	unsigned ver = 0;
	int links = 0, active = 0, st = -1, r;

	if (!h) {
		snprintf(l->nvml, sizeof(l->nvml), "NVML not loaded (%.100s)", dlerror());
		return -1;
	}
	*(void **)&init = dlsym(h, "nvmlInit_v2");
	*(void **)&shutdown = dlsym(h, "nvmlShutdown");
	*(void **)&byid = dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&state = dlsym(h, "nvmlDeviceGetNvLinkState");
	*(void **)&remote = dlsym(h, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
	*(void **)&version = dlsym(h, "nvmlDeviceGetNvLinkVersion");
	*(void **)&pci = dlsym(h, "nvmlDeviceGetPciInfo_v3");
	*(void **)&p2p = dlsym(h, "nvmlDeviceGetP2PStatus");
	if (!init || !shutdown || !byid || !state || !remote || (r = init())) {
		snprintf(l->nvml, sizeof(l->nvml), "NVML lacks the NVLink queries or did not start");
		dlclose(h);
		return -1;
	}
	if ((r = byid(a, &da)) || (r = byid(b, &db))) {
		snprintf(l->nvml, sizeof(l->nvml), "NVML does not know GPU %s or %s (error %d)", a, b, r);
		goto out;
	}
	memset(&pb, 0, sizeof(pb));
	if (pci && pci(db, &pb))
		memset(&pb, 0, sizeof(pb));
	for (unsigned k = 0; k < NVML_NVLINK_MAX_LINKS; k++) {
		nvmlPciInfo_t pi;
		int on = 0;

		memset(&pi, 0, sizeof(pi));
		if (state(da, k, &on) || !on)
			continue;
		active++;
		if (!ver && version)
			version(da, k, &ver);
		if (remote(da, k, &pi))
			continue;
		if ((pb.busId[0] && !strcasecmp(pi.busId, pb.busId)) ||
		    (pb.busId[0] && pi.domain == pb.domain && pi.bus == pb.bus && pi.device == pb.device))
			links++;
	}
	if (!links && active && p2p && !p2p(da, db, NVML_P2P_CAPS_INDEX_NVLINK, &st) && st == 0)
		links = active;
	if (!links)
		snprintf(l->nvml, sizeof(l->nvml), active ? "no NVLink to this peer (NVML)" :
			 "no active NVLink (NVML)");
out:
	shutdown();
	dlclose(h);
	if (!links)
		return -1;
	l->kind = LINK_NVLINK;
	{
		int gen;

		l->gbps = links * nvlink_gbps(ver, &gen);
		if (gen)
			snprintf(l->label, sizeof(l->label), "NVLink%d x%d", gen, links);
		else
			snprintf(l->label, sizeof(l->label), "NVLink x%d", links);
	}
	return 0;
}

void link_rate(const char *a, const char *b, struct linkrate *l)
{
	char nvml[128], vm[160];

	memset(l, 0, sizeof(*l));
	if (!nvlink_rate(a, b, l)) {
		snprintf(l->from, sizeof(l->from), "NVML");
		return;
	}
	snprintf(nvml, sizeof(nvml), "%s", l->nvml);
	/* Emulated bridges show what the hypervisor chose (often Gen1 x1): no rate to judge by. */
	if (!link_pcie_path(a, b, 0, l) && in_vm(vm, sizeof(vm))) {
		memset(l, 0, sizeof(*l));
		snprintf(l->why, sizeof(l->why), "in a VM (%s), the bridges' links are emulated: read "
			 "the host's", vm);
	}
	snprintf(l->nvml, sizeof(l->nvml), "%s", nvml);
	if (l->kind == LINK_UNKNOWN) {
		int pcie = strstr(nvml, "NVLink") && strstr(nvml, "(NVML)");

		l->ceiling = pcie ? LINK_CEIL_PCIE : LINK_CEIL_ANY;
		snprintf(l->ceiling_label, sizeof(l->ceiling_label), pcie ?
			 "PCIe Gen6 x16, the fastest PCIe link (NVML reports no NVLink between them)" :
			 "NVLink5 x18, the fastest peer link (NVML did not say whether they have NVLink)");
	}
}

void link_print_now(FILE *f, const char *a, const char *b, const struct linkrate *cap)
{
	struct linkrate now;

	if (cap->kind != LINK_PCIE || link_pcie_path(a, b, 1, &now) || now.gbps >= cap->gbps - 1e-9)
		return;
	fprintf(f, "  link after the tests: %s (current_link_speed; idle GPUs train down, but one that "
		"stays below %s under load is slow: nvidia-smi -q -d PCIE during p2pctl bench)\n",
		now.label, cap->label);
}
