// SPDX-License-Identifier: GPL-2.0
/*
 * The static-BAR1 rules and the caps guard's verdict, as pure functions:
 * no state, no locks, no kernel-only calls.  Compiled into the module and,
 * unchanged, into libp2pshim (lib/Makefile), as profile.c is, so that
 * `p2pctl doctor` predicts with the rules the module applies.
 *
 * kmod/static_bar1.c keeps the per-GPU record (what the hooks observed)
 * under its lock and asks p2ps_sb1_no_force() and p2ps_sb1_gate();
 * kmod/caps.c asks p2ps_caps_verdict() with what static_bar1.c gathered of
 * the set's records
 * (p2ps_caps_add()).  The doctor's predictions from the user's keys
 * (the driver's own rule, p2p-shim's forcing) are sb1predict.c's, which
 * only libp2pshim takes.
 * docs/cards.md has the driver's rules per version, with source lines.
 */
#include <p2p-shim/ruleenv.h>
#include <p2p-shim/uapi.h>

#include <p2p-shim/sb1rule.h>
#include <p2p-shim/gpurule.h>
#include <p2p-shim/sb1units.h>


uint64_t p2ps_sb1_va(uint64_t bar1_size)
{
	return bar1_size > SZ2M ? DOWN(bar1_size - 4 * P2PS_KiB - 1, SZ2M) : 0;
}

/*
 * kbusInitBar1_GM107 maps static BAR1 after the console and the mailbox:
 * 580+ at ALIGN_UP(console + mailbox, 512 MiB), 570-575 at the lowest free
 * 2 MiB-aligned address; 565 decides before either and maps at 0.
 */
uint64_t p2ps_sb1_offset(unsigned int major, uint64_t console, uint64_t mailbox)
{
	if (major < 570)
		return 0;
	return major >= 580 ? UP(console + mailbox, SZ512M) : UP(console + mailbox, SZ2M);
}

uint64_t p2ps_sb1_map_size(unsigned int major, uint64_t client_fb)
{
	return major >= 580 ? DOWN(client_fb, SZ2M) : UP(client_fb, SZ2M);
}

bool p2ps_sb1_p2p_usable(uint64_t offset)
{
	return offset % SZ512M == 0;
}

/*
 * kbusDetermineBar1ApertureLength (kern_bus.c L541-566 in 580.142, the same
 * from 550): RMBar1ApertureSizeMB shrinks BAR1's aperture, never grows it,
 * and 0 is ignored.  The static BAR1 rules then use the aperture, not the
 * PCI BAR (mappableLength).
 */
uint64_t p2ps_sb1_aperture(uint64_t bar1_size, uint64_t key)
{
	return key && key < bar1_size ? key : bar1_size;
}

/*
 * Forcing (kmod/static_bar1.c's header): where the decision says no for a GPU
 * whose user did not set RMForceStaticBar1 nor shrink BAR1 with
 * RMBar1ApertureSizeMB (the sizes below are the PCI BAR's), whose P2P type is BAR1 (no
 * mailbox), and where the placement can work (570-575: no console below
 * static BAR1, since the 2 MiB-aligned placement after it fails BAR1 P2P's
 * 512 MiB alignment check; 580+: any, at 512 MiB after a console).
 */
unsigned int p2ps_sb1_no_force(const struct p2ps_sb1_force_in *in, uint64_t *offset)
{
	uint64_t below = in->console + in->mailbox, va = p2ps_sb1_va(in->bar1_size);
	unsigned int no = 0;

	*offset = 0;
	if (in->major < 570)
		no |= P2PS_NF_OLD;
	if (!in->enabled)
		no |= P2PS_NF_DISABLED;
	if (in->user_key)
		no |= P2PS_NF_USER_KEY;
	if (p2ps_sb1_aperture(in->bar1_size, in->aperture) != in->bar1_size)
		no |= P2PS_NF_APERTURE;
	if (!in->bar1_size)
		no |= P2PS_NF_BAR1_UNKNOWN;
	else if (va < P2PS_SB1_MIN_VRAM + P2PS_SB1_DYNAMIC_RESERVE)
		no |= P2PS_NF_BAR1_SMALL;
	if (in->mailbox)
		no |= P2PS_NF_MAILBOX;
	if (in->major < 580 && below)
		no |= P2PS_NF_CONSOLE;
	if (in->major < 580 && !in->native_uvm)
		no |= P2PS_NF_NATIVE_UVM;
	*offset = in->major >= 580 ? UP(below, SZ512M) : 0;
	if (*offset + P2PS_SB1_DYNAMIC_RESERVE >= va)
		no |= P2PS_NF_NO_ROOM;
	return no;
}

const char *p2ps_sb1_no_force_text(unsigned int mask)
{
	if (mask & P2PS_NF_OLD)
		return "the driver's rule says no (565: not forced)";
	if (mask & P2PS_NF_DISABLED)
		return "the driver's rule says no; not forced (static_bar1=0)";
	if (mask & P2PS_NF_USER_KEY)
		return "the driver's rule says no; RMForceStaticBar1 was set by the user";
	if (mask & P2PS_NF_APERTURE)
		return "the driver's rule says no; not forced: the user's RMBar1ApertureSizeMB "
		       "makes BAR1 smaller than its PCI BAR";
	if (mask & P2PS_NF_BAR1_UNKNOWN)
		return "the driver's rule says no; BAR1 size unknown: not forced";
	if (mask & P2PS_NF_BAR1_SMALL)
		return "the driver's rule says no; BAR1 is smaller than any such GPU's memory "
		       "(Resizable BAR off?): not forced";
	if (mask & P2PS_NF_MAILBOX)
		return "the driver's rule says no; the P2P mailbox is reserved, so BAR1 P2P is not "
		       "this GPU's P2P type (RMForceP2PType / RMPcieP2PType): not forced";
	if (mask & P2PS_NF_CONSOLE)
		return "the driver's rule says no; not forced: the console below static BAR1 would put "
		       "it at an offset that fails BAR1 P2P's 512 MiB alignment check (before 580)";
	if (mask & P2PS_NF_NATIVE_UVM)
		return "the driver's rule says no; not forced before 580 without the UVM fix for "
		       "GPUs with native BAR1 slots (GB20x): CUDA peer mappings would be wrong";
	if (mask & P2PS_NF_NO_ROOM)
		return "the driver's rule says no; BAR1 too small to force";
	return NULL;
}

/*
 * In the forced enable: static BAR1 at @offset plus 64 MiB for dynamic
 * BAR1 mappings must fit BAR1; with more than 1 GiB to spare besides, the
 * driver's "no" was not about size.
 */
enum p2ps_sb1_gate p2ps_sb1_gate(unsigned int major, uint64_t offset, uint64_t client_fb,
				 uint64_t bar1_size)
{
	uint64_t map = p2ps_sb1_map_size(major, client_fb), va = p2ps_sb1_va(bar1_size);

	if (!map || offset + map + P2PS_SB1_DYNAMIC_RESERVE > va)
		return P2PS_GATE_TOO_SMALL;
	if (offset + map + P2PS_SB1_DYNAMIC_RESERVE + P2PS_SB1_NOT_SIZE_ROOM <= va)
		return P2PS_GATE_NOT_SIZE;
	return P2PS_GATE_FITS;
}

/*
 * _kp2pCapsGetStatusOverPcie (p2p_caps.c L421-443 in 570.148.08, L469-491
 * in 580.142): PCIe P2P is not forwarded between two Intel I/O hubs (X58 /
 * 5520 to Broadwell-EP, one per socket); GPUs below root ports of two such
 * hubs get IOH_TOPOLOGY_NOT_SUPPORTED.  ForceP2P returns before that check,
 * so the caps guard makes it.  The hub is the root port's bus.
 */
bool p2ps_intel_ioh_root_port(unsigned int dev)
{
	return (dev >= 0x3408 && dev <= 0x3411) || (dev >= 0x3c02 && dev <= 0x3c0b) ||
	       (dev >= 0x0e02 && dev <= 0x0e0b) || (dev >= 0x2f01 && dev <= 0x2f0b) ||
	       (dev >= 0x6f01 && dev <= 0x6f0b) || dev == 0x3420 || dev == 0x3421;
}

/*
 * _kp2pCapsCheckStatusOverridesForPcie (p2p_caps.c, every tag 550-595):
 * a field of 1 turns that status OK, 0 turns it DISABLED_BY_REGKEY, any
 * other value leaves it.  Only an OK read or write offers the pair a
 * PCIe path: the mailbox one unless the BAR1 check that follows says yes.
 */
bool p2ps_force_p2p_forces(uint32_t v)
{
	return (v & 0x3) == 1 || ((v >> 4) & 0x3) == 1;
}

/*
 * The caps guard (kmod/caps.c), for a GPU set with a GPU forced to P2P by
 * a ForceP2P (p2p-shim's or the user's): PCIE_PROPRIETARY (the mailbox path, broken on
 * GeForce) gets the stock answer; PCIE_BAR1 gets it where the driver's BAR1
 * P2P create would fail: 550-570 skipped the HAL check, which wants static
 * BAR1 on both GPUs and refuses loopback (one GPU); 575+ made it
 * themselves.  Every version: static BAR1 where BAR1 P2P's create cannot
 * use it (not 512 MiB aligned).  In the residual state (guard_only) every
 * forced BAR1 answer is refused.  Before all: GPUs below root ports of two
 * Intel I/O hubs (_kp2pCapsGetStatusOverPcie's IOH check, which ForceP2P
 * skips).
 */
bool p2ps_caps_guarded(uint32_t connectivity, bool forced)
{
	return forced && (connectivity == P2P_CONNECTIVITY_PCIE_PROPRIETARY ||
			  connectivity == P2P_CONNECTIVITY_PCIE_BAR1);
}

bool p2ps_sb1_mapped(uint32_t sb1_state)
{
	return sb1_state == P2PS_SB1_ON || sb1_state == P2PS_SB1_FORCED;
}

void p2ps_caps_add(struct p2ps_caps_set *s, uint32_t sb1_state, uint64_t offset, uint64_t ioh,
		   uint64_t sw, uint32_t pci_id)
{
	bool on = p2ps_sb1_mapped(sb1_state);

	p2ps_gpu_set_add(&s->gpus, pci_id);
	if (!s->nr)
		s->sw = sw;
	else if (!sw || sw != s->sw)
		s->sw_split = true;
	s->nr++;
	s->unmapped |= !on;
	s->unusable |= on && !p2ps_sb1_p2p_usable(offset);
	if (!ioh)
		return;
	if (!s->ioh)
		s->ioh = ioh;
	else if (ioh != s->ioh)
		s->ioh_split = true;
}

enum p2ps_caps_verdict p2ps_caps_verdict(const struct p2ps_caps_in *in)
{
	const struct p2ps_caps_set *s = &in->set;

	if (!p2ps_caps_guarded(in->connectivity, in->forced))
		return P2PS_CAPS_KEEP;
	if (s->ioh_split)
		return P2PS_CAPS_STOCK_IOH;
	switch (p2ps_gpu_set_verdict(&s->gpus)) {
	case P2PS_GPUS_MIXED:
		return P2PS_CAPS_STOCK_MIXED;
	case P2PS_GPUS_UNKNOWN:
		return P2PS_CAPS_STOCK_UNKNOWN;
	case P2PS_GPUS_ONE:
		break;
	}
	if (in->connectivity == P2P_CONNECTIVITY_PCIE_PROPRIETARY || in->guard_only)
		return P2PS_CAPS_STOCK;
	if ((in->watch_static_bar1 && (s->nr < 2 || s->unmapped)) || s->unusable)
		return P2PS_CAPS_STOCK;
	/* The driver's host rule (readrule.h), which the override skipped: below one switch. */
	if (in->reads_refused && (s->nr < 2 || !s->sw || s->sw_split))
		return P2PS_CAPS_STOCK_READS;
	return P2PS_CAPS_KEEP;
}
