// SPDX-License-Identifier: GPL-2.0
/*
 * The driver's BAR1 peer-read host rule (include/p2p-shim/readrule.h), as a
 * pure function: no state, no libc, no kernel-only calls.  Compiled into
 * libp2pshim (lib/Makefile) for `p2pctl doctor`, and written for the module
 * to compile unchanged, so both judge a host by the same rule.
 */
#include <p2p-shim/readrule.h>

bool p2ps_bar1_reads_allowed(enum p2ps_cpu_vendor vendor, unsigned int family,
			     unsigned int model, bool common_switch)
{
	if (common_switch)
		return true;
	switch (vendor) {
	case P2PS_CPU_AMD:
		return family >= P2PS_CPU_AMD_RYZEN_FAMILY;
	case P2PS_CPU_INTEL:
		return family == P2PS_CPU_INTEL_SPR_FAMILY && model == P2PS_CPU_INTEL_SPR_MODEL;
	default:
		return false;
	}
}
