/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The static-BAR1 rules and the caps guard's verdict, as pure functions of
 * their inputs.  rules/sb1rule.c is compiled into the module
 * (kmod/static_bar1.c and kmod/caps.c feed it what the hooks observed)
 * and, unchanged, into libp2pshim (lib/doctor_static_bar1.c feeds it what a
 * host's sysfs and modprobe options predict), so the module and `p2pctl
 * doctor` cannot drift apart.
 * docs/cards.md has the driver's rules per version, with source lines.
 */
#ifndef _P2P_SHIM_SB1RULE_H
#define _P2P_SHIM_SB1RULE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

#include <p2p-shim/gpurule.h>

#define P2PS_KiB		((uint64_t)1 << 10)
#define P2PS_MiB		((uint64_t)1 << 20)
#define P2PS_GiB		((uint64_t)1 << 30)

/* BAR1 left for dynamic mappings after static BAR1 (USERD, doorbells). */
#define P2PS_SB1_DYNAMIC_RESERVE	(64 * P2PS_MiB)
/*
 * Forcing is for a "no" about size.  With this much room left the rule
 * would have said yes on size alone, so its "no" came from elsewhere (vGPU
 * host PF, confidential computing: kbusIsStaticBar1Supported_TU102 in 580+).
 */
#define P2PS_SB1_NOT_SIZE_ROOM		P2PS_GiB
/* No Turing or later GPU has less VRAM: a smaller BAR1 can never hold it. */
#define P2PS_SB1_MIN_VRAM		(2 * P2PS_GiB)
/* The P2P mailbox: 8 x 64 KiB (_kbusRequiresP2PMailboxBar1_GM107). */
#define P2PS_SB1_MAILBOX		(8 * 64 * P2PS_KiB)

/* P2P_CONNECTIVITY values (the caps query's answer). */
#define P2P_CONNECTIVITY_UNKNOWN		0
#define P2P_CONNECTIVITY_PCIE_PROPRIETARY	1
#define P2P_CONNECTIVITY_PCIE_BAR1		2

/* RMForceStaticBar1 values. */
#define P2PS_SB_DISABLE		0
#define P2PS_SB_ENABLE		1
#define P2PS_SB_AUTO		2
#define P2PS_SB_ONLY_GPU	3

/* BAR1's aperture: the PCI BAR @bar1_size, shrunk by RMBar1ApertureSizeMB @key (bytes; 0: not set). */
uint64_t p2ps_sb1_aperture(uint64_t bar1_size, uint64_t key);
/* BAR1's usable VA as the rules see it: size - 4 KiB - 1, down to 2 MiB. */
uint64_t p2ps_sb1_va(uint64_t bar1_size);
/* Where the driver maps static BAR1 when its rule says yes (565: at 0). */
uint64_t p2ps_sb1_offset(unsigned int major, uint64_t console, uint64_t mailbox);
/* What a (forced) enable maps of @client_fb: 570-575 round up to 2 MiB, 580+ down. */
uint64_t p2ps_sb1_map_size(unsigned int major, uint64_t client_fb);
/* Whether static BAR1 at @offset passes BAR1 P2P's 512 MiB alignment check. */
bool p2ps_sb1_p2p_usable(uint64_t offset);

/*
 * p2p-shim's forcing rule, at the decision: every reason that forbids
 * forcing static BAR1 on a GPU the driver's rule said no to.  The bits are
 * in the order the module reports them (the lowest set bit is its reason).
 */
struct p2ps_sb1_force_in {
	unsigned int major;		/* driver major version */
	bool enabled;			/* the module's static_bar1 parameter */
	bool user_key;			/* the user set RMForceStaticBar1 */
	bool native_uvm;		/* the profile has gen A's UVM fix for native-slot pairs */
	uint64_t bar1_size;		/* the PCI BAR; 0: unknown */
	uint64_t aperture;		/* the user's RMBar1ApertureSizeMB in bytes; 0: not set */
	uint64_t console, mailbox;	/* BAR1 reserved before static BAR1 */
};

#define P2PS_NF_OLD		(1U << 0)	/* before 570: observed only */
#define P2PS_NF_DISABLED	(1U << 1)	/* static_bar1=0 */
#define P2PS_NF_USER_KEY	(1U << 2)	/* RMForceStaticBar1 set by the user */
#define P2PS_NF_APERTURE	(1U << 3)	/* the user's RMBar1ApertureSizeMB shrinks BAR1 */
#define P2PS_NF_BAR1_UNKNOWN	(1U << 4)
#define P2PS_NF_BAR1_SMALL	(1U << 5)	/* BAR1 smaller than any such GPU's memory */
#define P2PS_NF_MAILBOX		(1U << 6)	/* the P2P type is not BAR1 P2P */
#define P2PS_NF_CONSOLE		(1U << 7)	/* 570-575: console first, unaligned placement */
#define P2PS_NF_NATIVE_UVM	(1U << 8)	/* 570-575 without the UVM fix for GB20x */
#define P2PS_NF_NO_ROOM		(1U << 9)	/* the offset leaves no room */

/* The reasons (P2PS_NF_*) not to force; 0: force, at *@offset. */
unsigned int p2ps_sb1_no_force(const struct p2ps_sb1_force_in *in, uint64_t *offset);
/* The module's text for the lowest reason of @mask. */
const char *p2ps_sb1_no_force_text(unsigned int mask);

/* At a forced enable, what the client FB's size says. */
enum p2ps_sb1_gate {
	P2PS_GATE_FITS,		/* static BAR1 at @offset plus the dynamic reserve fit */
	P2PS_GATE_TOO_SMALL,	/* BAR1 cannot hold it: the enable is made to fail */
	P2PS_GATE_NOT_SIZE,	/* so much room that the "no" was not about size */
};
enum p2ps_sb1_gate p2ps_sb1_gate(unsigned int major, uint64_t offset, uint64_t client_fb,
				 uint64_t bar1_size);

/*
 * The driver's own rule, predicted for a host (the doctor): the user's and
 * p2p-shim's registry keys, and the GPU's sizes.  These predictions, down
 * to p2ps_sb1_shim_rule(), are rules/sb1predict.c's, in libp2pshim only:
 * the module, which does not link them, does not see them.
 */
#ifndef __KERNEL__
/* The driver generations, as far as static BAR1 goes. */
enum p2ps_sb1_gen {
	P2PS_GEN_UNSERVED,	/* < 550, or the proprietary module */
	P2PS_GEN_0,		/* 550/560: kbusIsBar1P2PCapable, RMForceP2PType=2 only */
	P2PS_GEN_A0,		/* 565: default 3 (ONLY_GPU), decided before the console */
	P2PS_GEN_A1,		/* 570: default 3 (ONLY_GPU) */
	P2PS_GEN_A2,		/* 575: default 0 (DISABLE) */
	P2PS_GEN_B,		/* 580+: default 2 (AUTO), console offset padded to 512 MiB */
};
/* The generation of driver major @major (0: unknown, as < 550); sb1predict.c. */
enum p2ps_sb1_gen p2ps_sb1_gen_of(unsigned int major);

struct p2ps_sb1_keys {
	enum p2ps_sb1_gen gen;
	long user_force_sb, user_pcie_type, user_force_p2p_type;	/* -1: not set */
	long user_bar1_aperture_mb;	/* RMBar1ApertureSizeMB; -1: not set */
	bool shim_keys;			/* p2p-shim supplies its registry defaults */
	bool shim_force;		/* p2p-shim forces static BAR1 where it fits (570+) */
};

/* The same values as the library's enum p2ps_static_bar1. */
enum p2ps_sb1_pred {
	P2PS_PRED_UNKNOWN = 0,
	P2PS_PRED_YES,
	P2PS_PRED_NO,
	P2PS_PRED_UNALIGNED,		/* on, but after the console: peers can't map it */
	P2PS_PRED_INIT_FAILS,		/* forced where it can't fit: GPU initialisation fails */
};

struct p2ps_sb1_pred_out {
	enum p2ps_sb1_pred v;
	char why[200];
};

/* The user's RMBar1ApertureSizeMB in bytes; 0 where not set (or set to 0). */
uint64_t p2ps_sb1_key_aperture(const struct p2ps_sb1_keys *k);
/* The effective RMForceStaticBar1 of a generation. */
long p2ps_sb1_force_type(const struct p2ps_sb1_keys *k);
/* Is the P2P mailbox reserved in BAR1 (_kbusRequiresP2PMailboxBar1_GM107)? */
bool p2ps_sb1_mailbox(const struct p2ps_sb1_keys *k);
/* Is RMForceP2PType=2 (BAR1P2P) in effect (550-570)? */
bool p2ps_sb1_bar1p2p_type(const struct p2ps_sb1_keys *k);
/* The console's estimated size in BAR1 (a 3840x2160x4 framebuffer). */
#define P2PS_SB1_CONSOLE_EST	(32 * P2PS_MiB)
/*
 * The driver's decision with RMForceStaticBar1 = @force: @pci_bar1 the PCI
 * BAR's size (the user's RMBar1ApertureSizeMB in @k may shrink it), @fb the
 * VRAM address space, @cfb the client-visible VRAM, @console whether the
 * boot console is in BAR1.
 */
void p2ps_sb1_driver_rule(const struct p2ps_sb1_keys *k, long force, uint64_t pci_bar1, uint64_t fb,
			  uint64_t cfb, bool console, struct p2ps_sb1_pred_out *o);
/*
 * Then p2p-shim's forcing where that rule said no (kmod/static_bar1.c runs the
 * same p2ps_sb1_no_force() and p2ps_sb1_gate()): turns @o into YES, or
 * appends why not.
 */
void p2ps_sb1_shim_rule(const struct p2ps_sb1_keys *k, uint64_t bar1, uint64_t cfb, bool console,
			struct p2ps_sb1_pred_out *o);
#endif /* !__KERNEL__: rules/sb1predict.c */

/* Whether static BAR1 in state @sb1_state (enum p2ps_sb1_state) is mapped. */
bool p2ps_sb1_mapped(uint32_t sb1_state);

/*
 * The caps guard's verdict on one caps query that returned NV_OK: whether
 * the pair (the GPU set) keeps the driver's answer or gets the stock one.
 * What it needs of the set is gathered one GPU at a time, as the records
 * are read (kmod/static_bar1.c, under its lock): a few flags, not the records.
 */
struct p2ps_caps_set {
	unsigned int nr;		/* GPUs added */
	bool unmapped;			/* one has no static BAR1 mapped */
	bool unusable;			/* one's static BAR1 is where BAR1 P2P cannot use it */
	bool ioh_split;			/* they sit below root ports of two Intel I/O hubs */
	uint64_t ioh;			/* the first hub seen; 0: none yet */
	uint64_t sw;			/* the first GPU's PCIe switch; 0: none */
	bool sw_split;			/* a GPU below another switch, or none */
	struct p2ps_gpu_set gpus;	/* the GPUs' identities (gpurule.h) */
};
/*
 * Add a GPU: its static BAR1 state (enum p2ps_sb1_state) and offset,
 * @ioh, 0 if it is not below an Intel IOH root port, else the hub, and
 * @sw, 0 if it is below no PCIe switch, else the switch (its upstream port),
 * and @pci_id, its PCI vendor << 16 | device, 0 if unknown.
 */
void p2ps_caps_add(struct p2ps_caps_set *s, uint32_t sb1_state, uint64_t offset, uint64_t ioh,
		   uint64_t sw, uint32_t pci_id);

struct p2ps_caps_in {
	uint32_t connectivity;		/* P2P_CONNECTIVITY_* the driver answered */
	bool forced;			/* a GPU of the set carries a ForceP2P that forces P2P */
	bool guard_only;		/* residual state: nothing but the guard is armed */
	bool watch_static_bar1;		/* 550-570: the driver skipped the HAL check */
	bool reads_refused;		/* the CPU fails the driver's read rule (readrule.h), no opt-in */
	struct p2ps_caps_set set;	/* the set's GPUs */
};

enum p2ps_caps_verdict {
	P2PS_CAPS_KEEP,			/* the driver's answer stands */
	P2PS_CAPS_STOCK,		/* the stock answer: no P2P */
	P2PS_CAPS_STOCK_IOH,		/* the same, for the I/O-hub split */
	P2PS_CAPS_STOCK_READS,		/* the same: the driver's rule gives this host no peer reads */
	P2PS_CAPS_STOCK_MIXED,		/* the same: GPUs of different generations (gpurule.h) */
	P2PS_CAPS_STOCK_UNKNOWN,	/* the same: a GPU whose identity the module does not know */
};
enum p2ps_caps_verdict p2ps_caps_verdict(const struct p2ps_caps_in *in);
/* Whether the verdict can be other than KEEP, from the answer alone (no records needed). */
bool p2ps_caps_guarded(uint32_t connectivity, bool forced);
/* Whether Intel root port device @dev sits on an I/O hub that forwards no P2P to another. */
bool p2ps_intel_ioh_root_port(unsigned int dev);
/*
 * Whether a GPU's ForceP2P value @v (whoever set it: p2p-shim's registry
 * default or the user's key) forces PCIe P2P on: its READ (bits 1:0) or
 * WRITE (5:4) field says ENABLE.  Such a GPU needs the caps guard.
 */
bool p2ps_force_p2p_forces(uint32_t v);


#endif
