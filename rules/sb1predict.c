// SPDX-License-Identifier: GPL-2.0
/*
 * The doctor's static-BAR1 predictions (lib/doctor_static_bar1.c): from the
 * user's registry keys and a card's sizes, what the driver itself decides
 * at BAR1 initialisation (p2ps_sb1_driver_rule()) and whether p2p-shim
 * would force a "no" (p2ps_sb1_shim_rule(), with sb1rule.c's rules).
 * Pure functions, as sb1rule.c's, built into libp2pshim only: the module
 * predicts nothing, it applies sb1rule.c to what its hooks observe.
 * docs/cards.md has the driver's rules per version, with source lines.
 */
#include <p2p-shim/ruleenv.h>

#include <p2p-shim/sb1rule.h>
#include <p2p-shim/sb1units.h>

enum p2ps_sb1_gen p2ps_sb1_gen_of(unsigned int major)
{
	if (major < 550)
		return P2PS_GEN_UNSERVED;
	return major < 565 ? P2PS_GEN_0 : major < 570 ? P2PS_GEN_A0 : major < 575 ? P2PS_GEN_A1 :
	       major < 580 ? P2PS_GEN_A2 : P2PS_GEN_B;
}

/* ------------------------------------------------ the driver's rule, predicted */

long p2ps_sb1_force_type(const struct p2ps_sb1_keys *k)
{
	long max = k->gen <= P2PS_GEN_A1 ? 4 : 3;

	if (k->user_force_sb >= 0 && k->user_force_sb < max)
		return k->user_force_sb;
	switch (k->gen) {
	case P2PS_GEN_A0:
	case P2PS_GEN_A1: return P2PS_SB_ONLY_GPU;
	case P2PS_GEN_A2: return k->shim_keys ? P2PS_SB_AUTO : P2PS_SB_DISABLE;
	default: return P2PS_SB_AUTO;
	}
}

bool p2ps_sb1_mailbox(const struct p2ps_sb1_keys *k)
{
	if (k->gen == P2PS_GEN_0 || k->gen == P2PS_GEN_A0 || k->gen == P2PS_GEN_A1) {
		long t = k->user_force_p2p_type >= 0 ? k->user_force_p2p_type :
			 k->shim_keys ? 2 : 0;

		return t != 2;		/* RMForceP2PType 2 = BAR1P2P there */
	}
	return (k->user_pcie_type >= 0 ? k->user_pcie_type : k->shim_keys ? 1 : 0) != 1;
}

bool p2ps_sb1_bar1p2p_type(const struct p2ps_sb1_keys *k)
{
	return (k->gen == P2PS_GEN_0 || k->gen == P2PS_GEN_A0 || k->gen == P2PS_GEN_A1) &&
	       !p2ps_sb1_mailbox(k);
}

/*
 * The driver's static-BAR1 decision at BAR1 initialisation, per generation:
 * kbusInitBar1_GM107 maps the boot console at BAR1 offset 0, reserves the
 * P2P mailbox (8 x 64 KiB) unless the PCIe P2P type is BAR1, asks
 * kbusIsStaticBar1Supported_TU102 and maps the client-visible VRAM: from
 * 580 at ALIGN_UP(console + mailbox, 512 MiB), in 570-575 wherever the
 * BAR1 heap has room (2 MiB aligned).  565 decides before the console and
 * mailbox and maps at 0.  Peers take the static BAR1 only at a 512
 * MiB-aligned DMA address (_kbusCreateStaticBar1IOMMUMapping).  550/560
 * (gen-0) have no RMForceStaticBar1: kbusInitBar1_GM107 asks the HAL
 * kbusIsBar1P2PCapable (550.163.01 kern_bus_gm107.c L1011), which
 * p2p-shim's hook Z1 points at _GH100 (kern_bus_gh100.c L1119-1149): yes
 * when RMForceP2PType=2 and BAR1 VA - 128 KiB holds the usable VRAM
 * (Ram.fbUsableMemSize, L1129: VRAM less GSP-RM's reserved regions)
 * rounded up to 2 MiB; the mapping then goes at BAR1 offset 0 (Z2), as in 565 before the
 * console (docs/hooks.md, Gen 0): kbusInitBar1_GM107 asks before it maps
 * the console and preserves the console mapping only when the answer is no
 * (as read in the 550.54.15-based tinygrad fork's kern_bus_gm107.c, which
 * differs there only by calling _GH100 directly).
 */
/* @o's verdict @v, and why. */
static __attribute__((format(printf, 3, 4)))
void say(struct p2ps_sb1_pred_out *o, enum p2ps_sb1_pred v, const char *fmt, ...)
{
	va_list ap;

	o->v = v;
	va_start(ap, fmt);
	vsnprintf(o->why, sizeof(o->why), fmt, ap);
	va_end(ap);
}

uint64_t p2ps_sb1_key_aperture(const struct p2ps_sb1_keys *k)
{
	return k->user_bar1_aperture_mb > 0 ? (uint64_t)k->user_bar1_aperture_mb * P2PS_MiB : 0;
}

/*
 * Whether BAR1 VA @va less the 128 KiB the driver keeps for SYSMEM doorbell
 * mappings holds @size: kbusIsBar1P2PCapable_GH100's check (550/560), and
 * RMForceStaticBar1=3's (565, 570).
 */
static bool holds_with_doorbell(uint64_t va, uint64_t size)
{
	return va >= 128 * P2PS_KiB && va - 128 * P2PS_KiB >= size;
}

void p2ps_sb1_driver_rule(const struct p2ps_sb1_keys *k, long force, uint64_t pci_bar1, uint64_t fb,
			  uint64_t cfb, bool console, struct p2ps_sb1_pred_out *o)
{
	uint64_t bar1 = p2ps_sb1_aperture(pci_bar1, p2ps_sb1_key_aperture(k));
	uint64_t va = bar1 - 4 * P2PS_KiB - 1;	/* mappableLength: last 4 KiB cut off */
	uint64_t va_al = DOWN(va, SZ2M);
	uint64_t fb_al = UP(fb, SZ2M);
	uint64_t con = console ? P2PS_SB1_CONSOLE_EST : 0;
	uint64_t mbox = p2ps_sb1_mailbox(k) ? P2PS_SB1_MAILBOX : 0;
	uint64_t need = fb_al, off, req;
	bool b = k->gen == P2PS_GEN_B;

	if (k->gen == P2PS_GEN_0) {
		/*
		 * 550/560: kbusIsBar1P2PCapable_GH100 through p2p-shim's hook;
		 * no registry key forces or disables it, and the mapping sits at
		 * BAR1 offset 0 whatever the console (decided before it).
		 */
		if (!p2ps_sb1_bar1p2p_type(k)) {
			say(o, P2PS_PRED_NO,
			    "550/560 map it only with RMForceP2PType=2, which is not in effect");
			return;
		}
		if (!holds_with_doorbell(va, fb_al)) {
			/*
			 * The driver compares Ram.fbUsableMemSize: VRAM less
			 * what GSP-RM reserves, which only it knows.  Where
			 * BAR1 holds the client FB (about the usable size) but
			 * not the whole VRAM, as on a 16 GiB card with a
			 * 16 GiB BAR1, the answer is its own.
			 */
			if (holds_with_doorbell(va, UP(cfb, SZ2M))) {
				say(o, P2PS_PRED_UNKNOWN,
				    "550/560 rule: BAR1 (%llu MiB) minus 128 KiB holds VRAM (%llu MiB) only less what GSP-RM reserves, which decides (p2pctl status shows the answer)",
				    MB(bar1), MB(fb_al));
				return;
			}
			say(o, P2PS_PRED_NO,
			    "550/560 rule: BAR1 (%llu MiB) minus 128 KiB can't hold VRAM (%llu MiB)",
			    MB(bar1), MB(fb_al));
			return;
		}
		say(o, P2PS_PRED_YES,
		    "550/560 rule (RMForceP2PType=2, p2p-shim's hooks): BAR1 %llu MiB holds VRAM %llu MiB from offset 0%s",
		    MB(bar1), MB(fb_al), con ? " (decided before the console)" : "");
		return;
	}
	if (k->gen == P2PS_GEN_A0) {
		/*
		 * 565: decided before the console and the mailbox; with static
		 * BAR1 the console is not preserved (static BAR1 maps FB 0 at
		 * BAR1 0, where the console already was) and nothing precedes it.
		 * ENABLE has no size check, AUTO wants twice the FB.
		 */
		need = UP(cfb, SZ2M);
		if (force == P2PS_SB_DISABLE) {
			say(o, P2PS_PRED_NO, "RMForceStaticBar1=0 (set by the user)");
			return;
		}
		if (force == P2PS_SB_ONLY_GPU && !p2ps_sb1_bar1p2p_type(k)) {
			say(o, P2PS_PRED_NO,
			    "565 default (RMForceStaticBar1=3) maps it only with RMForceP2PType=2, which is not in effect");
			return;
		}
		if ((force == P2PS_SB_ONLY_GPU && !holds_with_doorbell(va, fb_al)) ||
		    (force == P2PS_SB_AUTO && va_al < 2 * fb_al)) {
			say(o, P2PS_PRED_NO, "%s: BAR1 (%llu MiB) can't hold %sVRAM (%llu MiB)",
			    force == P2PS_SB_AUTO ? "565 automatic rule" : "565 rule", MB(bar1),
			    force == P2PS_SB_AUTO ? "twice " : "", MB(fb_al));
			return;
		}
		if (need > va_al) {
			say(o, P2PS_PRED_INIT_FAILS,
			    "RMForceStaticBar1=1 (565 checks no size): VRAM (%llu MiB) overruns BAR1 (%llu MiB): the GPU fails to initialise",
			    MB(need), MB(va_al));
			return;
		}
		say(o, P2PS_PRED_YES, "565 rule: BAR1 %llu MiB holds VRAM %llu MiB from offset 0%s",
		    MB(bar1), MB(need), con ? " (565 then reserves no console mapping)" : "");
		return;
	}
	switch (force) {
	case P2PS_SB_DISABLE:
		say(o, P2PS_PRED_NO, "RMForceStaticBar1=0 (%s)",
		    k->user_force_sb == 0 ? "set by the user" : "the 575 default");
		return;
	case P2PS_SB_ENABLE:
		need = b ? DOWN(cfb, SZ2M) : UP(cfb, SZ2M);
		if (va_al < need) {
			say(o, P2PS_PRED_INIT_FAILS,
			    "RMForceStaticBar1=1 but BAR1 (%llu MiB usable) can't hold VRAM (%llu MiB): BAR1 init fails, so does the GPU",
			    MB(va_al), MB(need));
			return;
		}
		off = b ? UP(con + mbox, SZ512M) : UP(con + mbox, SZ2M);
		if (off + need > va_al) {
			say(o, P2PS_PRED_INIT_FAILS,
			    "RMForceStaticBar1=1: VRAM (%llu MiB) mapped after the %s at %llu MiB overruns BAR1 (%llu MiB): the GPU fails to initialise",
			    MB(need), con ? "console" : "P2P mailbox", MB(off), MB(va_al));
			return;
		}
		break;
	case P2PS_SB_ONLY_GPU:
		if (!p2ps_sb1_bar1p2p_type(k)) {
			say(o, P2PS_PRED_NO,
			    "570 default (RMForceStaticBar1=3) maps it only with RMForceP2PType=2, which is not in effect");
			return;
		}
		if (!holds_with_doorbell(va, fb_al)) {
			say(o, P2PS_PRED_NO,
			    "BAR1 (%llu MiB) minus 128 KiB can't hold VRAM (%llu MiB)",
			    MB(bar1), MB(fb_al));
			return;
		}
		/* the check ignores the console; the mapping goes after it */
		need = UP(cfb, SZ2M);
		off = UP(con, SZ2M);
		if (off + need > va_al) {
			say(o, P2PS_PRED_INIT_FAILS,
			    "VRAM (%llu MiB) mapped after the console overruns BAR1 (%llu MiB): the GPU fails to initialise",
			    MB(need), MB(va_al));
			return;
		}
		break;
	case P2PS_SB_AUTO:
	default:
		req = fb_al + 128 * P2PS_KiB + con + mbox;
		if (b && (con || mbox))
			req += SZ512M - (con + mbox) % SZ512M;
		if (va_al < req) {
			say(o, P2PS_PRED_NO,
			    "automatic rule: BAR1 (%llu MiB usable) < VRAM %llu MiB + USERD + 128 KiB%s%s%s",
			    MB(va_al), MB(fb_al), con ? " + console" : "",
			    mbox ? " + P2P mailbox" : "",
			    b && (con || mbox) ? " + padding to 512 MiB" : "");
			return;
		}
		if (va_al < req + USERD_MAX) {
			say(o, P2PS_PRED_UNKNOWN,
			    "automatic rule: BAR1 exceeds VRAM + reserves by only %llu MiB; the USERD reserve (512 bytes per channel) decides",
			    MB(va_al - req));
			return;
		}
		off = b ? UP(con + mbox, SZ512M) : UP(con + mbox, SZ2M);
		need = UP(cfb, SZ2M);	/* what gets mapped: the client-visible VRAM */
		break;
	}
	if (!p2ps_sb1_p2p_usable(off)) {
		say(o, P2PS_PRED_UNALIGNED,
		    "mapped after the %s at a 2 MiB boundary: peers need a 512 MiB-aligned address (570-575), so BAR1 P2P mappings fail",
		    con ? "boot console" : "P2P mailbox");
		return;
	}
	say(o, P2PS_PRED_YES, "%s: BAR1 %llu MiB holds VRAM %llu MiB%s",
	    force == P2PS_SB_ENABLE ? "RMForceStaticBar1=1" :
	    force == P2PS_SB_ONLY_GPU ? "RMForceP2PType=2 with the 570 default" : "automatic rule",
	    MB(bar1), MB(need), !off ? "" :
	    con ? " from offset 512 MiB, after the console" : " from offset 512 MiB, after the P2P mailbox");
}

/* A driver major of generation @gen, for the rules keyed on the major. */
static unsigned int major_of(enum p2ps_sb1_gen gen)
{
	switch (gen) {
	case P2PS_GEN_0: return 550;
	case P2PS_GEN_A0: return 565;
	case P2PS_GEN_A1: return 570;
	case P2PS_GEN_A2: return 575;
	case P2PS_GEN_B: return 580;
	default: return 0;
	}
}

void p2ps_sb1_shim_rule(const struct p2ps_sb1_keys *k, uint64_t bar1, uint64_t cfb, bool console,
			struct p2ps_sb1_pred_out *o)
{
	struct p2ps_sb1_force_in in = {
		.major = major_of(k->gen),
		.enabled = k->shim_force,
		.user_key = k->user_force_sb >= 0,
		/* the profiles of 570-575 have it (docs/hooks.md, A5) */
		.native_uvm = true,
		.bar1_size = bar1,
		.aperture = p2ps_sb1_key_aperture(k),
		.console = console ? P2PS_SB1_CONSOLE_EST : 0,
		.mailbox = p2ps_sb1_mailbox(k) ? P2PS_SB1_MAILBOX : 0,
	};
	size_t n = strlen(o->why);
	enum p2ps_sb1_gate gate;
	uint64_t off;
	unsigned int no;

	if (o->v != P2PS_PRED_NO || k->gen == P2PS_GEN_UNSERVED)
		return;
	no = p2ps_sb1_no_force(&in, &off);
	/* not p2p-shim's to force: nothing to add */
	if (no & (P2PS_NF_OLD | P2PS_NF_DISABLED | P2PS_NF_USER_KEY | P2PS_NF_MAILBOX))
		return;
	if (no & P2PS_NF_APERTURE) {
		snprintf(o->why + n, sizeof(o->why) - n,
			 "; p2p-shim does not force it: RMBar1ApertureSizeMB shrinks BAR1");
		return;
	}
	if (no & P2PS_NF_CONSOLE) {
		snprintf(o->why + n, sizeof(o->why) - n,
			 "; p2p-shim does not force it: the console comes first (570-575)");
		return;
	}
	gate = no ? P2PS_GATE_TOO_SMALL : p2ps_sb1_gate(in.major, off, cfb, bar1);
	if (gate == P2PS_GATE_NOT_SIZE) {
		snprintf(o->why + n, sizeof(o->why) - n,
			 "; p2p-shim does not force it: BAR1 holds the client FB with more than 1 GiB to spare, so the no is not about size");
		return;
	}
	if (gate != P2PS_GATE_FITS) {
		snprintf(o->why + n, sizeof(o->why) - n, "; too little room for p2p-shim to force it");
		return;
	}
	say(o, P2PS_PRED_YES,
	    "forced by p2p-shim (the driver's rule says no): BAR1 %llu MiB holds VRAM %llu MiB%s",
	    MB(bar1), MB(p2ps_sb1_map_size(in.major, cfb)),
	    off ? " from offset 512 MiB, after the console" : "");
}
