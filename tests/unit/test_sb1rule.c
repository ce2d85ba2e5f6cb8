// SPDX-License-Identifier: GPL-2.0
/*
 * rules/sb1rule.c, the rules the module and `p2pctl doctor` share: the
 * cards of docs/cards.md (section 3) and README's card table, per driver
 * generation (550, 565, 570, 575, 580, 590/595), through the driver's
 * rule, p2p-shim's forcing (decision and enable) and the caps guard.
 *
 * Every expectation is written from docs/cards.md's tables, as numbers
 * and verdicts; none is computed with the code under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <p2p-shim/sb1rule.h>
#include <p2p-shim/gpurule.h>
#include <p2p-shim/uapi.h>

#define MiB P2PS_MiB
#define GiB P2PS_GiB

/* The cards (docs/cards.md section 3): BAR1, FB address space, client FB. */
struct card {
	const char *name;
	uint64_t bar1, fb, cfb;
};

static const struct card rtx5090 = { "RTX 5090", 32768 * MiB, 32768 * MiB, 32607 * MiB };
static const struct card rtx4090 = { "RTX 4090", 32 * GiB, 24576 * MiB, 24564 * MiB };
static const struct card rtx3090 = { "RTX 3090", 32 * GiB, 24576 * MiB, 24576 * MiB };
static const struct card rtx4090d48 = { "RTX 4090 D 48 GiB", 32 * GiB, 49152 * MiB, 49152 * MiB };
static const struct card small_bar = { "256 MiB BAR1", 256 * MiB, 24576 * MiB, 24564 * MiB };
/* a 16 GiB card with Resizable BAR (nvidia-smi's total as client FB: an estimate) */
static const struct card bar1_is_vram = { "16 GiB, BAR1 16 GiB", 16 * GiB, 16384 * MiB, 16376 * MiB };

static const unsigned int majors[] = { 550, 565, 570, 575, 580, 590, 595 };

/* p2p-shim's registry keys, nothing set by the user. */
static struct p2ps_sb1_keys keys(unsigned int major)
{
	struct p2ps_sb1_keys k = {
		.gen = p2ps_sb1_gen_of(major),
		.user_force_sb = -1, .user_pcie_type = -1, .user_force_p2p_type = -1,
		.shim_keys = true, .shim_force = true,
	};
	return k;
}

static enum p2ps_sb1_pred predict(unsigned int major, const struct card *c, bool console,
				  const struct p2ps_sb1_keys *kp)
{
	struct p2ps_sb1_keys k = kp ? *kp : keys(major);
	struct p2ps_sb1_pred_out o = { 0 };

	p2ps_sb1_driver_rule(&k, p2ps_sb1_force_type(&k), c->bar1, c->fb, c->cfb, console, &o);
	p2ps_sb1_shim_rule(&k, c->bar1, c->cfb, console, &o);
	return o.v;
}

static void test_generations(void **state)
{
	(void)state;
	assert_int_equal(p2ps_sb1_gen_of(535), P2PS_GEN_UNSERVED);
	assert_int_equal(p2ps_sb1_gen_of(550), P2PS_GEN_0);
	assert_int_equal(p2ps_sb1_gen_of(560), P2PS_GEN_0);
	assert_int_equal(p2ps_sb1_gen_of(565), P2PS_GEN_A0);
	assert_int_equal(p2ps_sb1_gen_of(570), P2PS_GEN_A1);
	assert_int_equal(p2ps_sb1_gen_of(575), P2PS_GEN_A2);
	assert_int_equal(p2ps_sb1_gen_of(580), P2PS_GEN_B);
	assert_int_equal(p2ps_sb1_gen_of(595), P2PS_GEN_B);
	/* section 2: VA = size - 4 KiB - 1, down to 2 MiB: 32766 MiB of 32 GiB, 254 of 256 */
	assert_int_equal(p2ps_sb1_va(32768 * MiB), 32766 * MiB);
	assert_int_equal(p2ps_sb1_va(256 * MiB), 254 * MiB);
}

/*
 * RTX 5090: the driver's rule says no in 570-595; p2p-shim forces it
 * without a display: 32608 MiB at offset 0 (570/575, 94 MiB left), 32606
 * MiB at offset 0 (580-595, 160 MiB left).  565 does not support GB20x.
 */
static void test_5090(void **state)
{
	static const unsigned int forced[] = { 570, 575, 580, 590, 595 };
	struct p2ps_sb1_keys k;
	struct p2ps_sb1_pred_out o;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(forced) / sizeof(forced[0]); i++) {
		unsigned int m = forced[i];
		struct p2ps_sb1_force_in in = {
			.major = m, .enabled = true, .native_uvm = true,
			.bar1_size = rtx5090.bar1,
		};
		uint64_t off = 1;

		k = keys(m);
		memset(&o, 0, sizeof(o));
		p2ps_sb1_driver_rule(&k, p2ps_sb1_force_type(&k), rtx5090.bar1, rtx5090.fb,
				     rtx5090.cfb, false, &o);
		assert_int_equal(o.v, P2PS_PRED_NO);
		assert_int_equal(predict(m, &rtx5090, false, NULL), P2PS_PRED_YES);
		/* the module, at the decision and at the enable */
		assert_int_equal(p2ps_sb1_no_force(&in, &off), 0);
		assert_int_equal(off, 0);
		assert_int_equal(p2ps_sb1_map_size(m, rtx5090.cfb), m >= 580 ? 32606 * MiB : 32608 * MiB);
		/* VA 32766 MiB less the map: 160 MiB (580+); 158 (570: 94 after the 64 MiB reserve) */
		assert_int_equal(p2ps_sb1_va(rtx5090.bar1) - p2ps_sb1_map_size(m, rtx5090.cfb),
				 m >= 580 ? 160 * MiB : 158 * MiB);
		assert_int_equal(p2ps_sb1_gate(m, 0, rtx5090.cfb, rtx5090.bar1), P2PS_GATE_FITS);
		/* static_bar1=N: all rows say none */
		in.enabled = false;
		assert_int_not_equal(p2ps_sb1_no_force(&in, &off) & P2PS_NF_DISABLED, 0);
		k.shim_force = false;
		assert_int_equal(predict(m, &rtx5090, false, &k), P2PS_PRED_NO);
		/* driving the boot display: not forced (570-575 console first; 580+ no room) */
		assert_int_equal(predict(m, &rtx5090, true, NULL), P2PS_PRED_NO);
		in.enabled = true;
		in.console = 32 * MiB;
		if (m < 580) {
			assert_int_not_equal(p2ps_sb1_no_force(&in, &off) & P2PS_NF_CONSOLE, 0);
		} else {
			assert_int_equal(p2ps_sb1_no_force(&in, &off), 0);
			assert_int_equal(off, 512 * MiB);
			assert_int_equal(p2ps_sb1_gate(m, off, rtx5090.cfb, rtx5090.bar1),
					 P2PS_GATE_TOO_SMALL);
		}
		/* before 580, only with the native-slot UVM fix in the profile */
		in.console = 0;
		in.native_uvm = false;
		assert_int_equal(p2ps_sb1_no_force(&in, &off), m < 580 ? P2PS_NF_NATIVE_UVM : 0);
		/* RMForceStaticBar1 set by the user: p2p-shim leaves the GPU to it */
		in.native_uvm = true;
		in.user_key = true;
		assert_int_equal(p2ps_sb1_no_force(&in, &off), P2PS_NF_USER_KEY);
		/* with the mailbox (registry_defaults=0): not BAR1 P2P's type */
		in.user_key = false;
		in.mailbox = P2PS_SB1_MAILBOX;
		assert_int_not_equal(p2ps_sb1_no_force(&in, &off) & P2PS_NF_MAILBOX, 0);
	}
	/* 580+, RMForceStaticBar1=1 with the display: 512 + 32606 > 32766, init fails */
	k = keys(580);
	k.user_force_sb = 1;
	assert_int_equal(predict(580, &rtx5090, true, &k), P2PS_PRED_INIT_FAILS);
	/* ... and without p2p-shim's RMPcieP2PType=1: the mailbox moves it to 512 MiB */
	k.shim_keys = false;
	assert_int_equal(predict(580, &rtx5090, false, &k), P2PS_PRED_INIT_FAILS);
	/* the 565 decision is observed only */
	{
		struct p2ps_sb1_force_in in = { .major = 565, .enabled = true, .native_uvm = true,
						.bar1_size = rtx5090.bar1 };
		uint64_t off;

		assert_int_not_equal(p2ps_sb1_no_force(&in, &off) & P2PS_NF_OLD, 0);
	}
}

/* RTX 4090 and 3090 (24 GiB, BAR1 32 GiB): yes in every generation. */
static void test_4090_3090(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(majors) / sizeof(majors[0]); i++) {
		assert_int_equal(predict(majors[i], &rtx4090, false, NULL), P2PS_PRED_YES);
		assert_int_equal(predict(majors[i], &rtx3090, false, NULL), P2PS_PRED_YES);
		/* the driver's own "yes": at offset 0, usable for BAR1 P2P */
		assert_true(p2ps_sb1_p2p_usable(p2ps_sb1_offset(majors[i], 0, 0)));
	}
}

/*
 * RTX 4090 driving the boot display: 565 at offset 0; 570 and 575 after
 * the console (2 MiB aligned, below 512 MiB: unusable, the caps guard gives
 * the stock answer); 580-595 at 512 MiB.
 */
static void test_4090_display(void **state)
{
	(void)state;
	assert_int_equal(predict(550, &rtx4090, true, NULL), P2PS_PRED_YES);
	assert_int_equal(predict(565, &rtx4090, true, NULL), P2PS_PRED_YES);
	assert_int_equal(predict(570, &rtx4090, true, NULL), P2PS_PRED_UNALIGNED);
	assert_int_equal(predict(575, &rtx4090, true, NULL), P2PS_PRED_UNALIGNED);
	assert_int_equal(predict(580, &rtx4090, true, NULL), P2PS_PRED_YES);
	assert_int_equal(predict(595, &rtx4090, true, NULL), P2PS_PRED_YES);
	/* the module's record of the driver's yes, from the decision's arguments */
	assert_int_equal(p2ps_sb1_offset(565, 32 * MiB, 0), 0);
	assert_int_equal(p2ps_sb1_offset(570, 32 * MiB, 0), 32 * MiB);
	assert_int_equal(p2ps_sb1_offset(575, 33 * MiB, 0), 34 * MiB);
	assert_int_equal(p2ps_sb1_offset(580, 32 * MiB, 0), 512 * MiB);
	assert_int_equal(p2ps_sb1_offset(595, 32 * MiB, 512 * 1024), 512 * MiB);
	assert_false(p2ps_sb1_p2p_usable(32 * MiB));
	assert_true(p2ps_sb1_p2p_usable(512 * MiB));
}

/* RTX 4090 D modded to 48 GiB: no in every generation; forcing finds it too small. */
static void test_4090d_48(void **state)
{
	struct p2ps_sb1_keys k;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(majors) / sizeof(majors[0]); i++) {
		unsigned int m = majors[i];

		assert_int_equal(predict(m, &rtx4090d48, false, NULL), P2PS_PRED_NO);
		if (m >= 570) {
			struct p2ps_sb1_force_in in = { .major = m, .enabled = true, .native_uvm = true,
							.bar1_size = rtx4090d48.bar1 };
			uint64_t off;

			/* the decision is forced; the enable finds the client FB too large */
			assert_int_equal(p2ps_sb1_no_force(&in, &off), 0);
			assert_int_equal(p2ps_sb1_gate(m, off, rtx4090d48.cfb, rtx4090d48.bar1),
					 P2PS_GATE_TOO_SMALL);
			/* RMForceStaticBar1=1 fails GPU initialisation */
			k = keys(m);
			k.user_force_sb = 1;
			assert_int_equal(predict(m, &rtx4090d48, false, &k), P2PS_PRED_INIT_FAILS);
		}
	}
}

/* 256 MiB BAR1: no, every generation; never forced; the key fails init. */
static void test_small_bar(void **state)
{
	struct p2ps_sb1_keys k;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(majors) / sizeof(majors[0]); i++) {
		unsigned int m = majors[i];
		struct p2ps_sb1_force_in in = { .major = m, .enabled = true, .native_uvm = true,
						.bar1_size = small_bar.bar1 };
		uint64_t off;

		assert_int_equal(predict(m, &small_bar, false, NULL), P2PS_PRED_NO);
		assert_int_not_equal(p2ps_sb1_no_force(&in, &off) & P2PS_NF_BAR1_SMALL, 0);
		if (m >= 570) {
			k = keys(m);
			k.user_force_sb = 1;
			assert_int_equal(predict(m, &small_bar, false, &k), P2PS_PRED_INIT_FAILS);
		}
	}
}

/*
 * 550/560 (gen-0): static BAR1 only with RMForceP2PType=2 (p2p-shim's key),
 * then BAR1 VA - 128 KiB must hold VRAM; at offset 0, console or not.
 */
static void test_gen0(void **state)
{
	struct p2ps_sb1_keys k = keys(550);

	(void)state;
	assert_int_equal(predict(560, &rtx4090, false, NULL), P2PS_PRED_YES);
	assert_int_equal(predict(560, &rtx4090, true, NULL), P2PS_PRED_YES);
	k.shim_keys = false;
	assert_int_equal(predict(550, &rtx4090, false, &k), P2PS_PRED_NO);
	k = keys(550);
	k.user_force_p2p_type = 0;
	assert_int_equal(predict(550, &rtx4090, false, &k), P2PS_PRED_NO);
	/* no RMForceStaticBar1 on 550/560, no forcing by p2p-shim */
	assert_int_equal(predict(550, &rtx4090d48, false, NULL), P2PS_PRED_NO);
	assert_int_equal(predict(550, &small_bar, false, NULL), P2PS_PRED_NO);
	/*
	 * BAR1 the size of VRAM: the driver compares its usable VRAM (less
	 * GSP-RM's reserve), which doctor cannot know: not a no.
	 */
	assert_int_equal(predict(550, &bar1_is_vram, false, NULL), P2PS_PRED_UNKNOWN);
	assert_int_equal(predict(560, &rtx5090, false, NULL), P2PS_PRED_UNKNOWN);
}

/* A GPU's record: static BAR1 state and offset, its Intel I/O hub and PCIe switch (0: none). */
/* An RTX 4090's PCI ID: the rules other than the generation rule, on GPUs it names. */
#define ADA	0x10de2684

struct rec {
	uint32_t state;
	uint64_t offset, ioh, sw;
	uint32_t pci_id;
};

/* The first @n GPUs of @g, as static_bar1.c gathers them. */
static struct p2ps_caps_set set_of(const struct rec *g, unsigned int n)
{
	struct p2ps_caps_set s = { 0 };
	unsigned int i;

	for (i = 0; i < n; i++)
		p2ps_caps_add(&s, g[i].state, g[i].offset, g[i].ioh, g[i].sw, g[i].pci_id);
	return s;
}

/* A caps query that returned PCIE_BAR1 (or PROPRIETARY) for the set of @n GPUs @g. */
static enum p2ps_caps_verdict caps(uint32_t conn, bool forced, bool watch,
				   const struct rec *g, unsigned int n)
{
	struct p2ps_caps_in in = {
		.connectivity = conn, .forced = forced, .watch_static_bar1 = watch,
		.set = set_of(g, n),
	};
	return p2ps_caps_verdict(&in);
}

/*
 * The caps guard on the cards' pairs: 4090 + 3090 and 5090 (forced) + 4090
 * keep BAR1 P2P; a display 4090 on 570-575 (offset 32 MiB) gets the stock
 * answer, on 580+ (512 MiB) it keeps it; 550-570 watch static BAR1 on both
 * and refuse loopback; two Intel I/O hubs get the stock answer.
 */
static void test_caps(void **state)
{
	const struct rec both[2] = { { P2PS_SB1_ON, 0, 0, 0, ADA }, { P2PS_SB1_ON, 0, 0, 0, ADA } };
	const struct rec mixed[2] = { { P2PS_SB1_FORCED, 0, 0, 0, ADA }, { P2PS_SB1_ON, 0, 0, 0, ADA } };
	const struct rec disp570[2] = { { P2PS_SB1_ON, 32 * MiB, 0, 0, ADA }, { P2PS_SB1_ON, 0, 0, 0, ADA } };
	const struct rec disp580[2] = { { P2PS_SB1_ON, 512 * MiB, 0, 0, ADA }, { P2PS_SB1_ON, 0, 0, 0, ADA } };
	const struct rec one_off[2] = { { P2PS_SB1_OFF, 0, 0, 0, ADA }, { P2PS_SB1_ON, 0, 0, 0, ADA } };
	const struct rec ioh2[2] = { { P2PS_SB1_ON, 0, 1, 0, ADA }, { P2PS_SB1_ON, 0, 0x81, 0, ADA } };
	const struct rec ioh1[2] = { { P2PS_SB1_ON, 0, 1, 0, ADA }, { P2PS_SB1_ON, 0, 1, 0, ADA } };
	const uint32_t bar1 = P2P_CONNECTIVITY_PCIE_BAR1, prop = P2P_CONNECTIVITY_PCIE_PROPRIETARY;
	struct p2ps_caps_in in;

	(void)state;
	assert_int_equal(caps(bar1, true, true, both, 2), P2PS_CAPS_KEEP);
	assert_int_equal(caps(bar1, true, false, mixed, 2), P2PS_CAPS_KEEP);
	assert_int_equal(caps(bar1, true, true, disp570, 2), P2PS_CAPS_STOCK);
	assert_int_equal(caps(bar1, true, false, disp570, 2), P2PS_CAPS_STOCK);
	assert_int_equal(caps(bar1, true, false, disp580, 2), P2PS_CAPS_KEEP);
	/* 550-570 (watch): static BAR1 missing on one, or loopback */
	assert_int_equal(caps(bar1, true, true, one_off, 2), P2PS_CAPS_STOCK);
	assert_int_equal(caps(bar1, true, false, one_off, 2), P2PS_CAPS_KEEP);
	assert_int_equal(caps(bar1, true, true, both, 1), P2PS_CAPS_STOCK);
	assert_int_equal(caps(bar1, true, false, both, 1), P2PS_CAPS_KEEP);
	/* not forced by p2p-shim: the driver's answer, whatever it is */
	assert_int_equal(caps(bar1, false, true, disp570, 2), P2PS_CAPS_KEEP);
	assert_int_equal(caps(prop, false, true, both, 2), P2PS_CAPS_KEEP);
	/* the mailbox path with ForceP2P: stock */
	assert_int_equal(caps(prop, true, false, both, 2), P2PS_CAPS_STOCK);
	assert_int_equal(caps(P2P_CONNECTIVITY_UNKNOWN, true, true, ioh2, 2), P2PS_CAPS_KEEP);
	/* two Intel I/O hubs */
	assert_int_equal(caps(bar1, true, false, ioh2, 2), P2PS_CAPS_STOCK_IOH);
	assert_int_equal(caps(prop, true, false, ioh2, 2), P2PS_CAPS_STOCK_IOH);
	assert_int_equal(caps(bar1, true, false, ioh1, 2), P2PS_CAPS_KEEP);
	/* what bar1.c asks before it gathers the records */
	assert_true(p2ps_caps_guarded(bar1, true));
	assert_true(p2ps_caps_guarded(prop, true));
	assert_false(p2ps_caps_guarded(bar1, false));
	assert_false(p2ps_caps_guarded(P2P_CONNECTIVITY_UNKNOWN, true));
	/* the residual state: every forced BAR1 answer gets the stock one */
	in = (struct p2ps_caps_in){ .connectivity = bar1, .forced = true, .guard_only = true,
				    .set = set_of(both, 2) };
	assert_int_equal(p2ps_caps_verdict(&in), P2PS_CAPS_STOCK);
}

/*
 * The driver's host rule for BAR1 peer reads, which every ForceP2P skips:
 * reads (and so BAR1 P2P) only below a common PCIe switch, or with an AMD
 * CPU or a Sapphire Rapids Xeon.  Where the host fails it and the user has
 * not opted in (reads_refused), a forced pair not below one switch gets
 * the stock answer.
 */
static void test_caps_reads(void **state)
{
	const struct rec apart[2] = { { P2PS_SB1_ON, 0, 0, 0, ADA }, { P2PS_SB1_ON, 0, 0, 0, ADA } };
	const struct rec one_sw[2] = { { P2PS_SB1_ON, 0, 0, 0x101, ADA }, { P2PS_SB1_ON, 0, 0, 0x101, ADA } };
	const struct rec two_sw[2] = { { P2PS_SB1_ON, 0, 0, 0x101, ADA }, { P2PS_SB1_ON, 0, 0, 0x201, ADA } };
	const struct rec half_sw[2] = { { P2PS_SB1_ON, 0, 0, 0x101, ADA }, { P2PS_SB1_ON, 0, 0, 0, ADA } };
	const uint32_t bar1 = P2P_CONNECTIVITY_PCIE_BAR1;
	struct p2ps_caps_in in = { .connectivity = bar1, .forced = true, .reads_refused = true };

	(void)state;
	in.set = set_of(apart, 2);
	assert_int_equal(p2ps_caps_verdict(&in), P2PS_CAPS_STOCK_READS);
	in.set = set_of(two_sw, 2);
	assert_int_equal(p2ps_caps_verdict(&in), P2PS_CAPS_STOCK_READS);
	in.set = set_of(half_sw, 2);
	assert_int_equal(p2ps_caps_verdict(&in), P2PS_CAPS_STOCK_READS);
	in.set = set_of(one_sw, 1);
	assert_int_equal(p2ps_caps_verdict(&in), P2PS_CAPS_STOCK_READS);
	in.set = set_of(one_sw, 2);
	assert_int_equal(p2ps_caps_verdict(&in), P2PS_CAPS_KEEP);
	/* a host that passes, or the user's opt-in */
	in.reads_refused = false;
	in.set = set_of(apart, 2);
	assert_int_equal(p2ps_caps_verdict(&in), P2PS_CAPS_KEEP);
	/* not forced: the driver applied its own rule */
	in = (struct p2ps_caps_in){ .connectivity = bar1, .reads_refused = true, .set = set_of(apart, 2) };
	assert_int_equal(p2ps_caps_verdict(&in), P2PS_CAPS_KEEP);
}

/*
 * rules/gpurule.c's table, on IDs from open-gpu-kernel-modules' README
 * (595.45.04): by chip, not by name (an RTX 2050 is a GA107, an RTX 3050 A
 * laptop GPU an AD106), and nothing for another vendor.
 */
static void test_gpu_arch(void **state)
{
	static const struct {
		unsigned int device;
		enum p2ps_gpu_arch arch;
	} ids[] = {
		{ 0x1e04, P2PS_ARCH_TURING },		/* RTX 2080 Ti */
		{ 0x2182, P2PS_ARCH_TURING },		/* GTX 1660 Ti */
		{ 0x2204, P2PS_ARCH_AMPERE },		/* RTX 3090 */
		{ 0x20b0, P2PS_ARCH_AMPERE },		/* A100 */
		{ 0x25a9, P2PS_ARCH_AMPERE },		/* RTX 2050 */
		{ 0x2330, P2PS_ARCH_HOPPER },		/* H100 SXM5 */
		{ 0x2335, P2PS_ARCH_HOPPER },		/* H200 */
		{ 0x2684, P2PS_ARCH_ADA },		/* RTX 4090 */
		{ 0x2822, P2PS_ARCH_ADA },		/* RTX 3050 A Laptop */
		{ 0x2b85, P2PS_ARCH_BLACKWELL },	/* RTX 5090 */
		{ 0x2f04, P2PS_ARCH_BLACKWELL },	/* RTX 5070 */
		{ 0x2901, P2PS_ARCH_BLACKWELL },	/* B200 */
		{ 0x1b06, P2PS_ARCH_UNKNOWN },		/* GTX 1080 Ti: Pascal, not in the table */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		assert_int_equal(p2ps_gpu_arch(0x10de, ids[i].device), ids[i].arch);
	assert_int_equal(p2ps_gpu_arch(0x8086, 0x2684), P2PS_ARCH_UNKNOWN);
	assert_string_equal(p2ps_gpu_arch_name(p2ps_gpu_arch(0x10de, 0x2b85)), "Blackwell");
	assert_true(p2ps_gpus_mixed(0x10de, 0x2684, 0x10de, 0x2b85));
	assert_false(p2ps_gpus_mixed(0x10de, 0x2684, 0x10de, 0x2704));
	assert_false(p2ps_gpus_mixed(0x10de, 0x1b06, 0x10de, 0x1b80));
	assert_false(p2ps_gpus_mixed(0x10de, 0x2684, 0x8086, 0x10d3));
}

/*
 * Correctness III item 6: a forced pair of two generations (an RTX 4090,
 * 0x2684, with an RTX 5090, 0x2b85) gets the stock answer, in either
 * order and before the other rules; two of one generation do not.  A GPU
 * the module cannot name beside NVIDIA ones gets the stock answer too
 * (review F2: fail closed), and so does a set with no NVIDIA ID at all
 * (issue 41: no function found at its address, or another vendor's).
 */
static void test_caps_mixed(void **state)
{
	const uint32_t ada = 0x10de2684, blackwell = 0x10de2b85, ada2 = 0x10de2704;
	const struct rec mixed[2] = { { P2PS_SB1_ON, 0, 0, 0, ada }, { P2PS_SB1_ON, 0, 0, 0, blackwell } };
	const struct rec rev[2] = { { P2PS_SB1_ON, 0, 0, 0, blackwell }, { P2PS_SB1_ON, 0, 0, 0, ada } };
	const struct rec same[2] = { { P2PS_SB1_ON, 0, 0, 0, ada }, { P2PS_SB1_ON, 0, 0, 0, ada2 } };
	const struct rec unknown[2] = { { P2PS_SB1_ON, 0, 0, 0, ada }, { P2PS_SB1_ON, 0, 0, 0, 0 } };
	const struct rec newer[2] = { { P2PS_SB1_ON, 0, 0, 0, ada }, { P2PS_SB1_ON, 0, 0, 0, 0x10de3f00 } };
	const struct rec three[3] = { { P2PS_SB1_ON, 0, 0, 0, ada }, { P2PS_SB1_ON, 0, 0, 0, ada2 },
				      { P2PS_SB1_ON, 0, 0, 0, blackwell } };
	const struct rec three_unknown[3] = { { P2PS_SB1_ON, 0, 0, 0, 0 }, { P2PS_SB1_ON, 0, 0, 0, blackwell },
					      { P2PS_SB1_ON, 0, 0, 0, ada } };
	const struct rec qemu[2] = { { P2PS_SB1_ON, 0, 0, 0, 0x808610d3 }, { P2PS_SB1_ON, 0, 0, 0, 0 } };
	const struct rec none[2] = { { P2PS_SB1_ON, 0, 0, 0, 0 }, { P2PS_SB1_ON, 0, 0, 0, 0 } };
	/* outside the table: two future chips, two IDs in a gap, one chip twice */
	const struct rec future[2] = { { P2PS_SB1_ON, 0, 0, 0, 0x10de3300 }, { P2PS_SB1_ON, 0, 0, 0, 0x10de3400 } };
	const struct rec gap[2] = { { P2PS_SB1_ON, 0, 0, 0, 0x10de2000 }, { P2PS_SB1_ON, 0, 0, 0, 0x10de2001 } };
	const struct rec twin[2] = { { P2PS_SB1_ON, 0, 0, 0, 0x10de3300 }, { P2PS_SB1_ON, 0, 0, 0, 0x10de3300 } };
	const uint32_t bar1 = P2P_CONNECTIVITY_PCIE_BAR1;

	(void)state;
	assert_int_equal(caps(bar1, true, false, mixed, 2), P2PS_CAPS_STOCK_MIXED);
	assert_int_equal(caps(bar1, true, false, rev, 2), P2PS_CAPS_STOCK_MIXED);
	assert_int_equal(caps(bar1, true, false, newer, 2), P2PS_CAPS_STOCK_MIXED);
	assert_int_equal(caps(bar1, true, false, same, 2), P2PS_CAPS_KEEP);
	/* a GPU the module never saw (attached before arming): fail closed */
	assert_int_equal(caps(bar1, true, false, unknown, 2), P2PS_CAPS_STOCK_UNKNOWN);
	/* every pair of the set, not each against the first */
	assert_int_equal(caps(bar1, true, false, three, 3), P2PS_CAPS_STOCK_MIXED);
	assert_int_equal(caps(bar1, true, false, three_unknown, 3), P2PS_CAPS_STOCK_MIXED);
	/* no NVIDIA ID at all (a function not NVIDIA's, or none looked up): fail closed (issue 41) */
	assert_int_equal(caps(bar1, true, false, qemu, 2), P2PS_CAPS_STOCK_UNKNOWN);
	assert_int_equal(caps(bar1, true, false, none, 2), P2PS_CAPS_STOCK_UNKNOWN);
	assert_int_equal(caps(bar1, true, false, qemu, 1), P2PS_CAPS_STOCK_UNKNOWN);
	assert_int_equal(caps(bar1, true, false, mixed, 1), P2PS_CAPS_KEEP);
	/* IDs outside the table are one generation only as one device ID (review of k41c, F3) */
	assert_int_equal(caps(bar1, true, false, future, 2), P2PS_CAPS_STOCK_UNKNOWN);
	assert_int_equal(caps(bar1, true, false, gap, 2), P2PS_CAPS_STOCK_UNKNOWN);
	assert_int_equal(caps(bar1, true, false, twin, 2), P2PS_CAPS_KEEP);
	/* the driver's own answer, not forced, stands */
	assert_int_equal(caps(bar1, false, false, mixed, 2), P2PS_CAPS_KEEP);
}

/*
 * The user's RMBar1ApertureSizeMB (kbusDetermineBar1ApertureLength): it
 * shrinks BAR1, never grows it, 0 is ignored; the driver's rules then use
 * the aperture, and p2p-shim, which sees only the PCI BAR, does not force.
 * 32660 MiB holds a 5090's client FB with 52 MiB to spare, under the 64 MiB
 * that dynamic BAR1 mappings need (tests/vm/cases/shim-cards.sh).
 */
static void test_aperture_key(void **state)
{
	size_t i;

	(void)state;
	assert_int_equal(p2ps_sb1_aperture(32 * GiB, 0), 32 * GiB);
	assert_int_equal(p2ps_sb1_aperture(32 * GiB, 64 * GiB), 32 * GiB);
	assert_int_equal(p2ps_sb1_aperture(32 * GiB, 32 * GiB), 32 * GiB);
	assert_int_equal(p2ps_sb1_aperture(32 * GiB, 32660 * MiB), 32660 * MiB);
	for (i = 0; i < sizeof(majors) / sizeof(majors[0]); i++) {
		unsigned int m = majors[i];
		struct p2ps_sb1_force_in in = { .major = m, .enabled = true, .native_uvm = true,
						.bar1_size = rtx5090.bar1, .aperture = 32660 * MiB };
		struct p2ps_sb1_keys k = keys(m);
		uint64_t off;

		/* forcing: refused for a smaller aperture only */
		if (m >= 570) {
			assert_int_equal(p2ps_sb1_no_force(&in, &off), P2PS_NF_APERTURE);
			in.aperture = rtx5090.bar1;
			assert_int_equal(p2ps_sb1_no_force(&in, &off), 0);
		}
		/*
		 * the 5090: forced by p2p-shim without the key (570+), not with
		 * it; 550/560 compare the usable VRAM, which only GSP-RM knows
		 */
		k.user_bar1_aperture_mb = 32660;
		assert_int_equal(predict(m, &rtx5090, false, &k),
				 m < 565 ? P2PS_PRED_UNKNOWN : P2PS_PRED_NO);
		if (m >= 570)
			assert_int_equal(predict(m, &rtx5090, false, NULL), P2PS_PRED_YES);
		k.user_bar1_aperture_mb = 40000;	/* above the BAR: no effect */
		assert_int_equal(predict(m, &rtx5090, false, &k), predict(m, &rtx5090, false, NULL));
		k.user_bar1_aperture_mb = 0;		/* ignored */
		assert_int_equal(predict(m, &rtx5090, false, &k), predict(m, &rtx5090, false, NULL));
		/* the 4090: its 24 GiB still fits 32660 MiB, on by the driver's rule (570+) */
		k.user_bar1_aperture_mb = 32660;
		assert_int_equal(predict(m, &rtx4090, false, &k), predict(m, &rtx4090, false, NULL));
		/* ... but not 16 GiB: the driver's rule now says no, and nobody forces */
		k.user_bar1_aperture_mb = 16384;
		assert_int_equal(predict(m, &rtx4090, false, &k), P2PS_PRED_NO);
	}
	assert_string_equal(p2ps_sb1_no_force_text(P2PS_NF_APERTURE | P2PS_NF_NO_ROOM),
			    "the driver's rule says no; not forced: the user's RMBar1ApertureSizeMB "
			    "makes BAR1 smaller than its PCI BAR");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generations),
		cmocka_unit_test(test_5090),
		cmocka_unit_test(test_4090_3090),
		cmocka_unit_test(test_4090_display),
		cmocka_unit_test(test_4090d_48),
		cmocka_unit_test(test_small_bar),
		cmocka_unit_test(test_gen0),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_caps_reads),
		cmocka_unit_test(test_gpu_arch),
		cmocka_unit_test(test_caps_mixed),
		cmocka_unit_test(test_aperture_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
