/* SPDX-License-Identifier: GPL-2.0 */
/* The line rate of the link between two GPUs: NVLink (NVML) or PCIe (sysfs). */
#ifndef P2P_CUDA_LINKRATE_H
#define P2P_CUDA_LINKRATE_H

enum { LINK_UNKNOWN, LINK_PCIE, LINK_NVLINK };

struct linkrate {
	int kind;		/* LINK_* */
	double gbps;		/* data rate per direction, 1e9 bytes/s */
	char label[64];		/* "PCIe Gen4 x16", "NVLink4 x18" */
	char why[256];		/* LINK_UNKNOWN: why */
	char nvml[128];		/* not NVLink: what NVML said */
};

/*
 * PCIe data rate per lane and direction (after 8b/10b or 128b/130b coding)
 * of a sysfs current_link_speed ("16.0 GT/s PCIe"), and its generation;
 * 0 for an unknown speed.
 */
double link_lane_gbps(const char *speed, int *gen);

/*
 * The slowest PCIe link from the root port down to the GPU bus (a sysfs
 * bus id such as "0000:41:00.0", any case), read under $P2PCTL_SYSFS (default
 * /sys): every bridge on the way counts. 0, or -1 with why set.
 */
int link_pcie_path(const char *busid, struct linkrate *l);

/*
 * Line rate between GPUs of bus ids a and b: NVLink links between them
 * (libnvidia-ml.so.1, or $P2PCTL_LIBNVML), else the slower of the two PCIe
 * paths. Never fails: kind LINK_UNKNOWN with why.
 */
void link_rate(const char *a, const char *b, struct linkrate *l);

#endif
