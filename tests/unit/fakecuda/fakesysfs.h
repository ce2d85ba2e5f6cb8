/* SPDX-License-Identifier: GPL-2.0 */
/* A fake sysfs for the PCIe line rate of tests/unit/test_cuda_*.c (include
 * after cmocka.h): the fake's GPUs 0000:10:00.0 and 0000:11:00.0 on their
 * own root ports, behind one switch, or in a VM. */
#ifndef P2P_FAKESYSFS_H
#define P2P_FAKESYSFS_H

#include <stdio.h>
#include <stdlib.h>

/*
 * A fake sysfs under a temporary folder (P2PCTL_SYSFS points at it) and a
 * fake /proc beside it (P2PCTL_PROC: its cpuinfo names the CPU flag
 * "hypervisor" only in a VM, whatever machine runs the tests).
 */
static char sysfs_dir[64];

static inline void put(const char *dir, const char *name, const char *val)
{
	char p[1024];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", val);
	fclose(f);
}

static inline void fake_sysfs_begin(int vm)
{
	char d[512], cmd[1024];

	snprintf(sysfs_dir, sizeof(sysfs_dir), "/tmp/p2pctl-sysfs-XXXXXX");
	assert_non_null(mkdtemp(sysfs_dir));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/bus/pci/devices %s/proc", sysfs_dir, sysfs_dir);
	assert_int_equal(system(cmd), 0);
	snprintf(d, sizeof(d), "%s/proc", sysfs_dir);
	put(d, "cpuinfo", vm ? "processor\t: 0\nflags\t\t: fpu sse2 hypervisor lahf_lm" :
	    "processor\t: 0\nflags\t\t: fpu sse2 lahf_lm");
	setenv("P2PCTL_SYSFS", sysfs_dir, 1);
	setenv("P2PCTL_PROC", d, 1);
}

/*
 * The device at devices/@rel (its parents as folders above it) with its
 * link: sysfs's current_link_speed @cur, max_link_speed @max (NULL: none),
 * current_link_width @width; a bus/pci/devices link to it when @gpu.
 */
static inline void fake_dev(const char *rel, const char *cur, const char *max, const char *width,
			    int gpu)
{
	char d[512], cmd[1200];
	const char *bdf = strrchr(rel, '/') + 1;

	snprintf(d, sizeof(d), "%s/devices/%s", sysfs_dir, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", d);
	assert_int_equal(system(cmd), 0);
	put(d, "current_link_speed", cur);
	if (max)
		put(d, "max_link_speed", max);
	put(d, "current_link_width", width);
	if (gpu) {
		snprintf(cmd, sizeof(cmd), "ln -s ../../../devices/%s %s/bus/pci/devices/%s", rel,
			 sysfs_dir, bdf);
		assert_int_equal(system(cmd), 0);
	}
}

/*
 * Two GPUs (0000:10:00.0 and 0000:11:00.0), each below a root port of its
 * own (0000:00:01.0, 0000:00:02.0): the root ports' links at root_cur
 * (max_link_speed root_max) x root_w, the GPUs' at gpu_cur (gpu_max) x
 * gpu_w; vm: the CPU flag "hypervisor".
 */
static inline void fake_two_roots(int vm, const char *root_cur, const char *root_max, const char *root_w,
				  const char *gpu_cur, const char *gpu_max, const char *gpu_w)
{
	fake_sysfs_begin(vm);
	fake_dev("pci0000:00/0000:00:01.0", root_cur, root_max, root_w, 0);
	fake_dev("pci0000:00/0000:00:02.0", root_cur, root_max, root_w, 0);
	fake_dev("pci0000:00/0000:00:01.0/0000:10:00.0", gpu_cur, gpu_max, gpu_w, 1);
	fake_dev("pci0000:00/0000:00:02.0/0000:11:00.0", gpu_cur, gpu_max, gpu_w, 1);
}

/* Every link at speed (current and max) and width, the root ports at root_width. */
static inline void fake_sysfs(const char *speed, const char *width, const char *root_width)
{
	fake_two_roots(0, speed, speed, root_width, speed, speed, width);
}

/* The same, idle: Gen4 x16 links trained down to 2.5 GT/s, as idle NVIDIA GPUs do. */
static inline void fake_sysfs_idle(void)
{
	fake_two_roots(0, "2.5 GT/s PCIe", "16.0 GT/s PCIe", "16", "2.5 GT/s PCIe", "16.0 GT/s PCIe", "16");
}

/*
 * Both GPUs behind one Gen4 switch (upstream port 0000:0e:00.0, downstream
 * ports 0000:0f:00.0 and 0000:0f:01.0) whose uplink to root port
 * 0000:00:01.0 is Gen3 x@uplink_width: P2P turns in the switch. The GPUs'
 * links are Gen4 x16, but the second GPU's is @gpu1_width wide.
 */
static inline void fake_sysfs_switch(const char *uplink_width, const char *gpu1_width)
{
	fake_sysfs_begin(0);
	fake_dev("pci0000:00/0000:00:01.0", "8.0 GT/s PCIe", "8.0 GT/s PCIe", uplink_width, 0);
	fake_dev("pci0000:00/0000:00:01.0/0000:0e:00.0", "8.0 GT/s PCIe", "16.0 GT/s PCIe",
		 uplink_width, 0);
	fake_dev("pci0000:00/0000:00:01.0/0000:0e:00.0/0000:0f:00.0", "16.0 GT/s PCIe",
		 "16.0 GT/s PCIe", "16", 0);
	fake_dev("pci0000:00/0000:00:01.0/0000:0e:00.0/0000:0f:01.0", "16.0 GT/s PCIe",
		 "16.0 GT/s PCIe", gpu1_width, 0);
	fake_dev("pci0000:00/0000:00:01.0/0000:0e:00.0/0000:0f:00.0/0000:10:00.0", "16.0 GT/s PCIe",
		 "16.0 GT/s PCIe", "16", 1);
	fake_dev("pci0000:00/0000:00:01.0/0000:0e:00.0/0000:0f:01.0/0000:11:00.0", "16.0 GT/s PCIe",
		 "16.0 GT/s PCIe", gpu1_width, 1);
}

/* A VM (CPU flag "hypervisor") whose emulated root ports show Gen1 x1. */
static inline void fake_sysfs_vm(void)
{
	fake_two_roots(1, "2.5 GT/s PCIe", "2.5 GT/s PCIe", "1", "2.5 GT/s PCIe", "16.0 GT/s PCIe", "16");
}

static inline void fake_sysfs_rm(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", sysfs_dir);
	assert_int_equal(system(cmd), 0);
	unsetenv("P2PCTL_PROC");
}

#endif
