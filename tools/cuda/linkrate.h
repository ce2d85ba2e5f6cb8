/* SPDX-License-Identifier: GPL-2.0 */
/* The line rate of the link between two GPUs: NVLink (NVML) or PCIe (sysfs). */
#ifndef P2P_CUDA_LINKRATE_H
#define P2P_CUDA_LINKRATE_H

#include <stdio.h>

enum { LINK_UNKNOWN, LINK_PCIE, LINK_NVLINK };

/*
 * A copy faster than this times what the link can carry did not cross it
 * (it stayed in one GPU: FIELD N3's 128 GB/s over PCIe); bench marks such
 * cells (verify's path test: PATH_LINK_MARGIN, the same).
 */
#define LINK_OVER_MARGIN 1.05

struct linkrate {
	int kind;		/* LINK_* */
	double gbps;		/* data rate per direction, 1e9 bytes/s: what the link can carry */
	char label[64];		/* "PCIe Gen4 x16", "NVLink4 x18" */
	char from[160];		/* where the rate comes from: "NVML", "sysfs: ..., slowest hop ..." */
	char why[256];		/* LINK_UNKNOWN: why */
	char nvml[128];		/* not NVLink: what NVML said */
	/* LINK_UNKNOWN: a rate no link of this kind can carry (a copy faster
	 * than it did not cross one), and what it is */
	double ceiling;
	char ceiling_label[128];
};

/*
 * The ceilings without a line rate: NVML said there is no NVLink between
 * the GPUs, so the path is PCIe, and no PCIe link carries more than Gen6 x16
 * (64 GT/s, FLIT coding: 121 GB/s); NVML did not answer, so it may be
 * NVLink, and none carries more than NVLink5 x18 (900 GB/s).
 */
#define LINK_CEIL_PCIE (16 * 64.0 * 242 / 256 / 8)
#define LINK_CEIL_ANY (18 * 50.0)

/*
 * PCIe data rate per lane and direction (after 8b/10b or 128b/130b coding)
 * of a sysfs link speed ("16.0 GT/s PCIe"), and its generation; 0 for an
 * unknown speed.
 */
double link_lane_gbps(const char *speed, int *gen);

/*
 * The PCIe path between GPUs of sysfs bus ids a and b ("0000:41:00.0", any
 * case), read under $P2PCTL_SYSFS (default /sys). Every hop from each GPU
 * up to its root port counts, or, when the two share a switch, up to the
 * switch only (P2P turns there and never uses its uplink). A hop carries
 * the lower max_link_speed of its two ends times its current_link_width:
 * idle GPUs train their links down to 2.5 GT/s, the width stays. With
 * now set, the current_link_speed instead (what the links run at this
 * moment; label only). 0, or -1 with why set.
 */
int link_pcie_path(const char *a, const char *b, int now, struct linkrate *l);

/*
 * Line rate between GPUs of bus ids a and b: NVLink links between them
 * (libnvidia-ml.so.1, or $P2PCTL_LIBNVML), else the PCIe path, but in a
 * virtual machine (the test of `p2pctl doctor`'s "vm" check, from
 * $P2PCTL_PROC/cpuinfo (default /proc) and DMI) none: its bridges' links
 * are emulated. Never fails: kind LINK_UNKNOWN with why.
 */
void link_rate(const char *a, const char *b, struct linkrate *l);

/*
 * After a pair's copies: the PCIe links' current speed between a and b,
 * printed ("  link after the tests: ...") when below cap, what the path
 * can carry. Said, not judged: the link may have gone idle again.
 */
void link_print_now(FILE *f, const char *a, const char *b, const struct linkrate *cap);

#endif
