// SPDX-License-Identifier: GPL-2.0
/*
 * BAR1 windows per shared allocation: the rules of docs/windows.md as pure
 * functions (include/p2p-shim/winrule.h).  Built into libp2pshim now; the
 * module takes the same file when its window hooks exist.
 */
#include <p2p-shim/ruleenv.h>

#include <p2p-shim/winrule.h>

/*
 * kbusDetermineBar1Force64KBMapping_IMPL (kern_bus.c L514-542 in
 * 595.45.04): the key decides when it is set (0 off, else on); otherwise
 * forced unless BAR1 in whole MiB (the BAR size shifted right by 20) is
 * above 256, so 256 MiB plus less than 1 MiB is still forced.
 */
bool p2ps_win_force64k(uint64_t pci_bar1, long key)
{
	if (key >= 0)
		return key != 0;
	return (pci_bar1 >> 20) <= (P2PS_WIN_FORCE64K_MAX >> 20);
}

/* dmaAllocMapping_GM107 (virt_mem_allocator_gm107.c L704-716 in 595.45.04). */
uint64_t p2ps_win_bar1_page(bool forced, uint64_t alloc_page)
{
	return forced && alloc_page > P2PS_WIN_BIG_PAGE ? P2PS_WIN_BIG_PAGE : alloc_page;
}

/* The mapped length is rounded up to the page size (same function, L722-723). */
uint64_t p2ps_win_cost(uint64_t size, uint64_t bar1_page)
{
	if (!bar1_page)
		return 0;
	return (size + bar1_page - 1) / bar1_page * bar1_page;
}

uint64_t p2ps_win_pte_size(uint64_t bus, uint64_t alloc_page)
{
	static const uint64_t sizes[] = { P2PS_WIN_PTE_2M, P2PS_WIN_PTE_64K, P2PS_WIN_PTE_4K };
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (sizes[i] <= alloc_page && bus % sizes[i] == 0)
			return sizes[i];
	return 0;
}

uint64_t p2ps_win_misalign(uint64_t bus, uint64_t pte)
{
	return pte ? bus % pte : 0;
}

/* Subtract @b from @a, stopping at 0. */
static uint64_t less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

uint64_t p2ps_win_budget(const struct p2ps_win_owner *o)
{
	uint64_t left = o->aperture;

	left = less(left, o->console);
	left = less(left, o->static_bar1);
	left = less(left, o->gdr);
	left = less(left, P2PS_WIN_RESERVE);
	return less(left, o->open);
}

enum p2ps_win_fit p2ps_win_fit(const struct p2ps_win_owner *o, uint64_t cost)
{
	if (!cost)
		return P2PS_WIN_EMPTY;
	if (cost > p2ps_win_budget(o))
		return P2PS_WIN_OVER_BUDGET;
	if (o->largest_free && cost > o->largest_free)
		return P2PS_WIN_FRAGMENTED;
	return P2PS_WIN_FITS;
}

const char *p2ps_win_fit_text(enum p2ps_win_fit f)
{
	switch (f) {
	case P2PS_WIN_FITS:
		return "fits";
	case P2PS_WIN_EMPTY:
		return "empty window";
	case P2PS_WIN_OVER_BUDGET:
		return "out of BAR1: the owner's window budget is spent";
	case P2PS_WIN_FRAGMENTED:
		return "out of BAR1: no single free range holds the window";
	}
	return "?";
}

/* 580-595 (gen B): the UVM build has the BAR1 branch the design relies on. */
bool p2ps_win_gen_ok(unsigned int major)
{
	return major >= 580 && major <= 595;
}

enum p2ps_win_dir p2ps_win_dir(unsigned int major, bool enabled, bool static_bar1)
{
	if (static_bar1)
		return P2PS_WIN_DIR_STATIC;
	if (enabled && p2ps_win_gen_ok(major))
		return P2PS_WIN_DIR_WINDOW;
	return P2PS_WIN_DIR_NONE;
}

enum p2ps_win_pair p2ps_win_pair(enum p2ps_win_dir a_to_b, enum p2ps_win_dir b_to_a, bool mixed)
{
	if (mixed)
		return P2PS_WIN_PAIR_MIXED;
	if (a_to_b == P2PS_WIN_DIR_NONE || b_to_a == P2PS_WIN_DIR_NONE)
		return P2PS_WIN_PAIR_NO_ROUTE;
	return P2PS_WIN_PAIR_OK;
}
