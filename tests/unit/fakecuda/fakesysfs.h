/* SPDX-License-Identifier: GPL-2.0 */
/* A fake sysfs for the PCIe line rate of tests/unit/test_cuda_*.c (include
 * after cmocka.h): GPUs 0000:10:00.0 and 0000:11:00.0 under one root port. */
#ifndef P2P_FAKESYSFS_H
#define P2P_FAKESYSFS_H

#include <stdio.h>
#include <stdlib.h>

/*
 * A fake sysfs under a temporary folder: root port 0000:00:01.0 and the
 * fake's GPUs 0000:10:00.0 and 0000:11:00.0 below it, every link at speed
 * (sysfs's current_link_speed) and width; P2PCTL_SYSFS points at it.
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

static inline void fake_sysfs(const char *speed, const char *width, const char *root_width)
{
	char d[512], cmd[1024];

	snprintf(sysfs_dir, sizeof(sysfs_dir), "/tmp/p2pctl-sysfs-XXXXXX");
	assert_non_null(mkdtemp(sysfs_dir));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/bus/pci/devices %s/devices/pci0000:00/0000:00:01.0/"
		 "0000:10:00.0 %s/devices/pci0000:00/0000:00:01.0/0000:11:00.0", sysfs_dir, sysfs_dir,
		 sysfs_dir);
	assert_int_equal(system(cmd), 0);
	snprintf(d, sizeof(d), "%s/devices/pci0000:00/0000:00:01.0", sysfs_dir);
	put(d, "current_link_speed", speed);
	put(d, "current_link_width", root_width);
	for (int g = 0; g < 2; g++) {
		snprintf(d, sizeof(d), "%s/devices/pci0000:00/0000:00:01.0/0000:%02x:00.0", sysfs_dir,
			 0x10 + g);
		put(d, "current_link_speed", speed);
		put(d, "current_link_width", width);
		snprintf(cmd, sizeof(cmd), "ln -s ../../../devices/pci0000:00/0000:00:01.0/0000:%02x:00.0 "
			 "%s/bus/pci/devices/0000:%02x:00.0", 0x10 + g, sysfs_dir, 0x10 + g);
		assert_int_equal(system(cmd), 0);
	}
	setenv("P2PCTL_SYSFS", sysfs_dir, 1);
}

static inline void fake_sysfs_rm(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", sysfs_dir);
	assert_int_equal(system(cmd), 0);
}

#endif
