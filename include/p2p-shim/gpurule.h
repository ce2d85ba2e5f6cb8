/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which GPUs p2p-shim pairs: the GPU generation rule, as pure functions.
 * rules/gpurule.c is compiled into the module (the caps guard,
 * rules/sb1rule.c p2ps_caps_verdict) and into libp2pshim (`p2pctl doctor`,
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
#include <stdint.h>
#endif

enum p2ps_gpu_arch {
	P2PS_ARCH_UNKNOWN = 0,	/* not NVIDIA, or a device ID outside the table */
	P2PS_ARCH_TURING,
	P2PS_ARCH_AMPERE,
	P2PS_ARCH_HOPPER,
	P2PS_ARCH_ADA,
	P2PS_ARCH_BLACKWELL,
};

/* The architecture of PCI function @vendor:@device (rules/gpurule.c's table). */
enum p2ps_gpu_arch p2ps_gpu_arch(unsigned int vendor, unsigned int device);
const char *p2ps_gpu_arch_name(enum p2ps_gpu_arch arch);

/*
 * A set of GPUs (the caps guard's GPU mask), each added by its PCI
 * vendor << 16 | device, 0 where the module does not know it (a GPU
 * attached before arming, or no PCI function at the address its attach
 * named).
 */
struct p2ps_gpu_set {
	unsigned int archs;		/* bit per enum p2ps_gpu_arch seen (NVIDIA only) */
	bool nvidia;			/* an NVIDIA GPU is in it */
	bool unknown;			/* a GPU of unknown identity is in it */
	unsigned short newer;		/* the device ID of its GPUs outside the table; 0: none */
};
void p2ps_gpu_set_add(struct p2ps_gpu_set *s, uint32_t pci_id);

enum p2ps_gpu_set_verdict {
	P2PS_GPUS_ONE,			/* one generation, every GPU's NVIDIA ID known */
	P2PS_GPUS_MIXED,		/* two generations, or a known one and one not in the table */
	/* (two IDs outside the table that differ: UNKNOWN) */
	P2PS_GPUS_UNKNOWN,		/* a GPU the module cannot name (no ID, not NVIDIA's): fail closed */
};
enum p2ps_gpu_set_verdict p2ps_gpu_set_verdict(const struct p2ps_gpu_set *s);

/* Whether two GPUs, by PCI ID, are of two generations (the set's MIXED). */
bool p2ps_gpus_mixed(unsigned int vendor_a, unsigned int device_a,
		     unsigned int vendor_b, unsigned int device_b);

#endif
