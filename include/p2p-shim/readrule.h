/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The driver's BAR1 peer-read host rule, as a pure function.  rules/readrule.c
 * is compiled into libp2pshim (lib/doctor_read.c feeds it /proc/cpuinfo and
 * the PCIe path) and is written so that the module can compile it unchanged
 * (feeding it boot_cpu_data and its own topology), as sb1rule.c is.
 *
 * _p2pCapsGetHostSystemStatusOverPcieBar1 (p2p_caps.c, 580.142 L643-667,
 * 595.45.04 L643-663): peer writes over BAR1 are always allowed; peer reads
 * only with a common PCIe switch, a CPU of type RYZEN or a Sapphire Rapids
 * Xeon (XEON_SPR: Intel family 6, model 143), and the driver offers BAR1
 * P2P only where both are.  cpu.c (595.45.04 L1411-1440) makes every AMD
 * family from 0x12 on RYZEN (Zen's 0x17, 0x19, 0x1a by name, the rest as
 * "Assuming new Ryzen"); K8, K10 and K11 (0xf-0x11) are not.  Intel Core
 * and Emerald/Granite Rapids Xeons fail it.  Every ForceP2P skips the
 * check, so p2p-shim's caps guard applies it (rules/sb1rule.c
 * p2ps_caps_verdict) and doctor predicts it (lib/doctor_read.c).
 */
#ifndef _P2P_SHIM_READRULE_H
#define _P2P_SHIM_READRULE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#endif

/* The CPU vendor, as the rule tells them apart. */
enum p2ps_cpu_vendor {
	P2PS_CPU_OTHER = 0,	/* unknown, Hygon, Zhaoxin, ... */
	P2PS_CPU_INTEL,		/* GenuineIntel */
	P2PS_CPU_AMD,		/* AuthenticAMD */
};

#define P2PS_CPU_AMD_RYZEN_FAMILY	0x12	/* cpu.c 570+: from here on RYZEN */
#define P2PS_CPU_INTEL_SPR_FAMILY	6
#define P2PS_CPU_INTEL_SPR_MODEL	143	/* 0x8f, Sapphire Rapids */

/*
 * Does driver @major's own rule allow BAR1 peer reads between two GPUs on
 * this host?  @vendor, @family and @model: the CPU (x86 family and model,
 * as /proc/cpuinfo or boot_cpu_data give them); @common_switch: both GPUs
 * below one PCIe switch the driver knows (p2ps_pcie_switch_known()).
 * 550-565 know AMD families 0x17 and 0x19 as RYZEN only; 570 and later
 * every family from 0x12 on.
 */
bool p2ps_bar1_reads_allowed(unsigned int major, enum p2ps_cpu_vendor vendor,
			     unsigned int family, unsigned int model, bool common_switch);

/*
 * Whether the driver counts a PCIe switch port @vendor:@device as a switch
 * for that rule (pcie_switch_ref.h IS_SUPPORTED_PCIE_SWITCH, every tag
 * 550-595): NVIDIA BR03/BR04, PLX 87xx/97xx, PMC-Sierra 85xx/40xx,
 * Mellanox 0x1976.  Any other switch is no common switch to it.
 */
bool p2ps_pcie_switch_known(unsigned int vendor, unsigned int device);

#endif
