/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which GPUs p2p-shim pairs: the GPU generation rule, as pure functions.
 * kmod/gpurule.c is compiled into the module (the caps guard,
 * kmod/sb1rule.c p2ps_caps_verdict) and into libp2pshim (`p2pctl doctor`,
 * lib/doctor_topo.c), so both judge a pair alike.
 *
 * Correctness III item 6: from 580.65.06 the driver decides a BAR1 peer
 * mapping's coherence and PCIe atomics from the memory owner's
 * architecture alone (_nvGpuOpsIsBar1P2pAtomicEnabled, 590.48.01
 * nv_gpu_ops.c L3148, 595.45.04 L3146; inline in 580's
 * nvGpuOpsGetExternalAllocAperture), so an Ada or Ampere GPU mapping an
 * RTX 50xx's memory gets a coherent mapping with atomics enabled, which
 * the older GPU is never set up to send (kbifProbePcieReqAtomicCaps is a
 * stub before GH100).  libcuda refuses peer access between generations on
 * its own (FIELD F12).  Until a mixed pair is shown right, p2p-shim gives
 * it the stock answer: no P2P.
 */
#ifndef _P2P_SHIM_GPURULE_H
#define _P2P_SHIM_GPURULE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#endif

enum p2ps_gpu_arch {
	P2PS_ARCH_UNKNOWN = 0,	/* not NVIDIA, or a device ID outside the table */
	P2PS_ARCH_TURING,
	P2PS_ARCH_AMPERE,
	P2PS_ARCH_HOPPER,
	P2PS_ARCH_ADA,
	P2PS_ARCH_BLACKWELL,
};

/* The architecture of PCI function @vendor:@device (kmod/gpurule.c's table). */
enum p2ps_gpu_arch p2ps_gpu_arch(unsigned int vendor, unsigned int device);
const char *p2ps_gpu_arch_name(enum p2ps_gpu_arch arch);

/*
 * Whether two GPUs, by PCI ID, are of different generations: both NVIDIA,
 * and either of two known architectures that differ, or one known and one
 * not in the table (a newer chip).  A GPU whose ID is not known at all
 * (vendor 0) is no evidence either way.
 */
bool p2ps_gpus_mixed(unsigned int vendor_a, unsigned int device_a,
		     unsigned int vendor_b, unsigned int device_b);

#endif
