// SPDX-License-Identifier: GPL-2.0
/*
 * The GPU generation rule (include/p2p-shim/gpurule.h), as pure functions:
 * no state, no libc, no kernel-only calls.  Compiled into libp2pshim
 * (lib/Makefile) and into the module unchanged.
 */
#include <p2p-shim/gpurule.h>

#define PCI_VENDOR_NVIDIA	0x10de

/*
 * NVIDIA allots device IDs by chip: the ranges below cover every ID of the
 * supported-GPU list in open-gpu-kernel-modules' README (595.45.04, 827
 * entries) by the chip's architecture, whatever the marketing name (an RTX
 * 2050 is a GA107, an "RTX 3050 A" laptop GPU an AD106/AD107).
 */
static const struct {
	unsigned short first, last;
	enum p2ps_gpu_arch arch;
} ranges[] = {
	{ 0x1e00, 0x1fff, P2PS_ARCH_TURING },		/* TU102, TU104, TU106, TU117 */
	{ 0x2080, 0x20ff, P2PS_ARCH_AMPERE },		/* GA100 */
	{ 0x2180, 0x21ff, P2PS_ARCH_TURING },		/* TU116 */
	{ 0x2200, 0x227f, P2PS_ARCH_AMPERE },		/* GA102 */
	{ 0x2300, 0x237f, P2PS_ARCH_HOPPER },		/* GH100 */
	{ 0x2400, 0x25ff, P2PS_ARCH_AMPERE },		/* GA103, GA104, GA106, GA107 */
	{ 0x2680, 0x28ff, P2PS_ARCH_ADA },		/* AD102-AD107 */
	{ 0x2900, 0x29ff, P2PS_ARCH_BLACKWELL },	/* GB100, GB102 */
	{ 0x2b80, 0x2fff, P2PS_ARCH_BLACKWELL },	/* GB202-GB207, GB10 */
	{ 0x3180, 0x31ff, P2PS_ARCH_BLACKWELL },	/* B300, GB300 */
};

enum p2ps_gpu_arch p2ps_gpu_arch(unsigned int vendor, unsigned int device)
{
	unsigned int i;

	if (vendor != PCI_VENDOR_NVIDIA)
		return P2PS_ARCH_UNKNOWN;
	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (device >= ranges[i].first && device <= ranges[i].last)
			return ranges[i].arch;
	return P2PS_ARCH_UNKNOWN;
}

const char *p2ps_gpu_arch_name(enum p2ps_gpu_arch arch)
{
	switch (arch) {
	case P2PS_ARCH_TURING:
		return "Turing";
	case P2PS_ARCH_AMPERE:
		return "Ampere";
	case P2PS_ARCH_HOPPER:
		return "Hopper";
	case P2PS_ARCH_ADA:
		return "Ada";
	case P2PS_ARCH_BLACKWELL:
		return "Blackwell";
	default:
		return "unknown";
	}
}

/*
 * A GPU whose ID the module does not have (0: attached before arming, or
 * no PCI function at the address its attach named), or whose function is
 * not NVIDIA's, is of unknown identity.
 */
void p2ps_gpu_set_add(struct p2ps_gpu_set *s, uint32_t pci_id)
{
	if (pci_id >> 16 != PCI_VENDOR_NVIDIA) {
		s->unknown = true;
		return;
	}
	s->nvidia = true;
	s->archs |= 1U << p2ps_gpu_arch(pci_id >> 16, pci_id & 0xffff);
	if (p2ps_gpu_arch(pci_id >> 16, pci_id & 0xffff) != P2PS_ARCH_UNKNOWN)
		return;
	/* Outside the table: only the same device ID is known to be the same chip. */
	if (s->newer && s->newer != (pci_id & 0xffff))
		s->unknown = true;
	s->newer = pci_id & 0xffff;
}

/*
 * Architectures are compared across the whole set, not against its first
 * GPU.  IDs outside the table (a newer chip, or a gap between ranges) are
 * taken as one generation only where they are one device ID; two that
 * differ may be two chips, so the set is of unknown identity.
 * A GPU of unknown identity fails closed: nothing says it is of its
 * partners' generation (issue 41: no set is taken for one generation
 * without IDs, and the test VM's stand-in GPUs have theirs).
 */
enum p2ps_gpu_set_verdict p2ps_gpu_set_verdict(const struct p2ps_gpu_set *s)
{
	if (s->archs & (s->archs - 1))
		return P2PS_GPUS_MIXED;
	if (s->unknown)
		return P2PS_GPUS_UNKNOWN;
	return P2PS_GPUS_ONE;
}

bool p2ps_gpus_mixed(unsigned int vendor_a, unsigned int device_a,
		     unsigned int vendor_b, unsigned int device_b)
{
	struct p2ps_gpu_set s = { 0 };

	if (vendor_a != PCI_VENDOR_NVIDIA || vendor_b != PCI_VENDOR_NVIDIA)
		return false;
	p2ps_gpu_set_add(&s, vendor_a << 16 | device_a);
	p2ps_gpu_set_add(&s, vendor_b << 16 | device_b);
	return p2ps_gpu_set_verdict(&s) == P2PS_GPUS_MIXED;
}
