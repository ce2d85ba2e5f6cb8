// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int link_pcie_path(const char *busid, struct linkrate *l)
{
	char id[32], path[PATH_MAX + 64], real[PATH_MAX], *p;
	double best = 0;
	int bgen = 0, bw = 0, hops = 0;

	memset(l, 0, sizeof(*l));
	snprintf(id, sizeof(id), "%s", busid);
	for (p = id; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	/* CUDA may print an 8-digit domain: sysfs has 4. */
	if (strlen(id) == 17 && !strncmp(id, "0000", 4))
		memmove(id, id + 4, strlen(id + 4) + 1);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s", sysfs_root(), id);
	if (!realpath(path, real)) {
		snprintf(l->why, sizeof(l->why), "no %s in sysfs", id);
		return -1;
	}
	/* .../pci0000:00/0000:00:01.0/0000:01:00.0: each BDF component is a hop. */
	while ((p = strrchr(real, '/')) && is_bdf(p + 1)) {
		char sp[64], wd[16];
		int gen, w;
		double lane;

		if (!read_line(real, "current_link_speed", sp, sizeof(sp)) &&
		    !read_line(real, "current_link_width", wd, sizeof(wd)) &&
		    (lane = link_lane_gbps(sp, &gen)) > 0 && (w = atoi(wd)) > 0) {
			if (!hops || lane * w < best) {
				best = lane * w;
				bgen = gen;
				bw = w;
			}
			hops++;
		}
		*p = '\0';
	}
	if (!hops) {
		snprintf(l->why, sizeof(l->why), "sysfs reports no PCIe link speed for %s", id);
		return -1;
	}
	l->kind = LINK_PCIE;
	l->gbps = best;
	snprintf(l->label, sizeof(l->label), "PCIe Gen%d x%d", bgen, bw);
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

static int nvlink_rate(const char *a, const char *b, struct linkrate *l)
{
	const char *lib = getenv("P2PCTL_LIBNVML");
	void *h = dlopen(lib && *lib ? lib : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	int (*init)(void), (*shutdown)(void), (*byid)(const char *, nvmlDevice_t *);
	int (*state)(nvmlDevice_t, unsigned, int *), (*remote)(nvmlDevice_t, unsigned, nvmlPciInfo_t *);
	int (*version)(nvmlDevice_t, unsigned, unsigned *);
	nvmlDevice_t da;
	unsigned bd, bb, bdev, bfn, ver = 0;
	int links = 0;

	if (!h)
		return -1;
	*(void **)&init = dlsym(h, "nvmlInit_v2");
	*(void **)&shutdown = dlsym(h, "nvmlShutdown");
	*(void **)&byid = dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&state = dlsym(h, "nvmlDeviceGetNvLinkState");
	*(void **)&remote = dlsym(h, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
	*(void **)&version = dlsym(h, "nvmlDeviceGetNvLinkVersion");
	if (!init || !shutdown || !byid || !state || !remote || init()) {
		dlclose(h);
		return -1;
	}
	if (sscanf(b, "%x:%x:%x.%x", &bd, &bb, &bdev, &bfn) == 4 && !byid(a, &da)) {
		for (unsigned k = 0; k < NVML_NVLINK_MAX_LINKS; k++) {
			nvmlPciInfo_t pi;
			int on = 0;

			memset(&pi, 0, sizeof(pi));
			if (state(da, k, &on) || !on || remote(da, k, &pi))
				continue;
			if (pi.domain == bd && pi.bus == bb && pi.device == bdev) {
				links++;
				if (!ver && version)
					version(da, k, &ver);
			}
		}
	}
	shutdown();
	dlclose(h);
	if (!links)
		return -1;
	l->kind = LINK_NVLINK;
	/* per link and direction: NVLink 1 20 GB/s, 2 to 4 25 GB/s, 5 50 GB/s */
	l->gbps = links * (ver == 1 ? 20.0 : ver >= 5 ? 50.0 : 25.0);
	if (ver)
		snprintf(l->label, sizeof(l->label), "NVLink%u x%d", ver, links);
	else
		snprintf(l->label, sizeof(l->label), "NVLink x%d", links);
	return 0;
}

void link_rate(const char *a, const char *b, struct linkrate *l)
{
	struct linkrate la, lb;

	memset(l, 0, sizeof(*l));
	if (!nvlink_rate(a, b, l))
		return;
	if (link_pcie_path(a, &la)) {
		*l = la;
		return;
	}
	if (link_pcie_path(b, &lb)) {
		*l = lb;
		return;
	}
	*l = la.gbps <= lb.gbps ? la : lb;
}
