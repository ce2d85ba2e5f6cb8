/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BAR1 windows per shared allocation: the pure rules the module
 * and `p2pctl doctor` share.  No state, no locks, no kernel-only calls.
 * For now rules/winrule.c is built into libp2pshim only (lib/Makefile);
 * the module takes it when the window hooks are written.
 *
 * docs/windows.md has the design and the driver source behind each rule:
 * the 64 KiB forcing of BAR1 pages (kbusDetermineBar1Force64KBMapping_IMPL,
 * dmaAllocMapping_GM107), the peer PTE size a window allows, the budget of
 * an owner GPU's BAR1 across all its peers, the one-range refusal, and the
 * decision per direction for a pair.
 */
#ifndef _P2P_SHIM_WINRULE_H
#define _P2P_SHIM_WINRULE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stdint.h>
#endif

/* Without the registry key, RM forces 64 KiB BAR1 pages at a PCI BAR1 up to this. */
#define P2PS_WIN_FORCE64K_MAX		((uint64_t)256 << 20)
/* The big page size BAR1 pages are lowered to when forced (vaspaceBigPageSize). */
#define P2PS_WIN_BIG_PAGE		((uint64_t)64 << 10)
/* GMMU PTE sizes a peer mapping can use, largest first. */
#define P2PS_WIN_PTE_2M			((uint64_t)2 << 20)
#define P2PS_WIN_PTE_64K		((uint64_t)64 << 10)
#define P2PS_WIN_PTE_4K			((uint64_t)4 << 10)
/*
 * BAR1 kept free of windows: the fork's 64 MiB margin, which also keeps
 * GPUDirect RDMA's own rule satisfiable (it maps only while 36 MiB,
 * CLI_THIRD_PARTY_P2P_BAR1_RESERVE, would stay free: p2p.c
 * _isSpaceAvailableForBar1P2PMapping).
 */
#define P2PS_WIN_RESERVE		((uint64_t)64 << 20)
#define P2PS_WIN_GDR_RESERVE		((uint64_t)36 << 20)

/*
 * Whether RM forces 64 KiB BAR1 pages on a GPU whose PCI BAR1 is @pci_bar1
 * bytes; @key is the RM64KBBAR1Mappings registry value, -1 when not set
 * (0 turns forcing off, any other value on).
 */
bool p2ps_win_force64k(uint64_t pci_bar1, long key);

/*
 * The page size of a window in BAR1: an allocation's page size
 * @alloc_page, lowered to the big page size when forcing is on and the
 * page is larger (dmaAllocMapping_GM107).
 */
uint64_t p2ps_win_bar1_page(bool forced, uint64_t alloc_page);

/* BAR1 one window of @size bytes consumes: rounded up to @bar1_page. */
uint64_t p2ps_win_cost(uint64_t size, uint64_t bar1_page);

/*
 * The largest peer PTE size (2 MiB, 64 KiB or 4 KiB) not above
 * @alloc_page that a window at bus address @bus allows: a PTE takes an
 * address aligned to its size.  0 when not even 4 KiB fits (a bus address
 * not page aligned: refuse).
 */
uint64_t p2ps_win_pte_size(uint64_t bus, uint64_t alloc_page);

/*
 * How far below the window's data a PTE of size @pte at bus address @bus
 * points (bus % pte): 0 when the PTE is safe.
 */
uint64_t p2ps_win_misalign(uint64_t bus, uint64_t pte);

/* One owner GPU's BAR1, as far as windows go (bytes). */
struct p2ps_win_owner {
	uint64_t aperture;	/* BAR1 aperture (RMBar1ApertureSizeMB applied) */
	uint64_t console;	/* console / desktop mappings */
	uint64_t static_bar1;	/* static BAR1 mapped length (0: none) */
	uint64_t gdr;		/* BAR1 mapped for GPUDirect RDMA now */
	uint64_t open;		/* windows open to all peers, by p2ps_win_cost() */
	uint64_t largest_free;	/* largest free BAR1 range if known, else 0 */
};

/* What windows may still take of the owner's BAR1 (0 when nothing). */
uint64_t p2ps_win_budget(const struct p2ps_win_owner *o);

enum p2ps_win_fit {
	P2PS_WIN_FITS,
	P2PS_WIN_EMPTY,		/* a window of no bytes */
	P2PS_WIN_OVER_BUDGET,	/* beyond the budget: out of memory, nothing mapped */
	P2PS_WIN_FRAGMENTED,	/* within budget but no one free range holds it */
};
/* Whether a window costing @cost bytes may be opened on @o. */
enum p2ps_win_fit p2ps_win_fit(const struct p2ps_win_owner *o, uint64_t cost);
const char *p2ps_win_fit_text(enum p2ps_win_fit f);

/* The driver generations windows are designed for (docs/windows.md, section 10). */
bool p2ps_win_gen_ok(unsigned int major);

/* One direction of a pair: how the mapping GPU reaches the owner's memory. */
enum p2ps_win_dir {
	P2PS_WIN_DIR_NONE,	/* neither: the direction has no BAR1 P2P */
	P2PS_WIN_DIR_STATIC,	/* the owner's static BAR1 (today's path) */
	P2PS_WIN_DIR_WINDOW,	/* a window per allocation */
};
/*
 * @static_bar1: the owner has static BAR1 mapped where BAR1 P2P can use it;
 * @enabled: the windows option is on; @major: the driver.
 */
enum p2ps_win_dir p2ps_win_dir(unsigned int major, bool enabled, bool static_bar1);

enum p2ps_win_pair {
	P2PS_WIN_PAIR_OK,	/* both directions have a route */
	P2PS_WIN_PAIR_NO_ROUTE,	/* a direction has none: stock answer */
	P2PS_WIN_PAIR_MIXED,	/* GPUs of two generations (gpurule.h): stock answer */
};
/* A pair of GPUs a and b, each direction decided by p2ps_win_dir(). */
enum p2ps_win_pair p2ps_win_pair(enum p2ps_win_dir a_to_b, enum p2ps_win_dir b_to_a, bool mixed);

#endif
