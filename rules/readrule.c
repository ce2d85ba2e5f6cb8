// SPDX-License-Identifier: GPL-2.0
/*
 * The driver's BAR1 peer-read host rule (include/p2p-shim/readrule.h), as a
 * pure function: no state, no libc, no kernel-only calls.  Compiled into
 * libp2pshim (lib/Makefile) for `p2pctl doctor`, and written for the module
 * to compile unchanged, so both judge a host by the same rule.
 */
#include <p2p-shim/readrule.h>

bool p2ps_bar1_reads_allowed(unsigned int major, enum p2ps_cpu_vendor vendor,
			     unsigned int family, unsigned int model, bool common_switch)
{
	if (common_switch)
		return true;
	switch (vendor) {
	case P2PS_CPU_AMD:
		/* cpu.c: 565.57.01 L1388-1410 names 0x17 and 0x19 only; 570+ assume new Ryzen */
		if (major && major < 570)
			return family == 0x17 || family == 0x19;
		return family >= P2PS_CPU_AMD_RYZEN_FAMILY;
	case P2PS_CPU_INTEL:
		return family == P2PS_CPU_INTEL_SPR_FAMILY && model == P2PS_CPU_INTEL_SPR_MODEL;
	default:
		return false;
	}
}

bool p2ps_pcie_switch_known(unsigned int vendor, unsigned int device)
{
	switch (vendor) {
	case 0x10de:	/* NVIDIA: BR03, BR04 */
		return device == 0x01b3 || (device >> 4) == (0x05b0 >> 4);
	case 0x10b5:	/* PLX (Broadcom) */
		return (device & 0xff00) == 0x8700 || (device & 0xff00) == 0x9700;
	case 0x11f8:	/* PMC-Sierra (Microchip) */
		return (device & 0xff00) == 0x8500 || (device & 0xff00) == 0x4000;
	case 0x15b3:	/* Mellanox */
		return device == 0x1976;
	default:
		return false;
	}
}
