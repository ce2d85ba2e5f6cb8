/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether we run in a virtual machine, from what /proc/cpuinfo and DMI say:
 * the one test of `p2pctl doctor` (lib/doctor_host.c, its "vm" check) and
 * `p2pctl verify`/`bench` (tools/cuda/linkrate.c, which then judges no line
 * rate by the emulated bridges' links).  Userspace only.
 *
 * Static inline here for the reason strutil.h gives: p2pctl reaches the
 * library only through its public header, and the unit tests link the
 * library's and p2pctl's objects together.  Each side reads the files its
 * own way (doctor under its root); these judge the text.
 */
#ifndef _P2P_SHIM_VMGUESS_H
#define _P2P_SHIM_VMGUESS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* Whether the first "flags" line of /proc/cpuinfo's text names "hypervisor". */
static inline bool p2ps_vm_cpu_flag(const char *cpuinfo)
{
	static const char flag[] = " hypervisor";
	const char *fl = strstr(cpuinfo, "\nflags"), *e, *p;

	if (!fl)
		return false;
	e = strchr(fl + 1, '\n');
	if (!e)
		e = fl + strlen(fl);
	for (p = fl; (size_t)(e - p) >= sizeof(flag) - 1; p++)
		if (!strncmp(p, flag, sizeof(flag) - 1))
			return true;
	return false;
}

/*
 * The hypervisor's vendor that a DMI string (sys_vendor, product_name)
 * names, or NULL.
 */
static inline const char *p2ps_vm_vendor(const char *dmi)
{
	static const char *const vendors[] = {
		"QEMU", "KVM", "VMware", "Xen", "innotek", "VirtualBox", "Amazon EC2",
		"Google Compute Engine", "Parallels", "Bochs", "OpenStack", "Virtual Machine",
		"Cloud Hypervisor", "Firecracker",
	};

	for (size_t j = 0; j < sizeof(vendors) / sizeof(vendors[0]); j++)
		if (strstr(dmi, vendors[j]))
			return vendors[j];
	return NULL;
}

#endif
