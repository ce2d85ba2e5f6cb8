// SPDX-License-Identifier: GPL-2.0
/*
 * rules/winrule.c, the BAR1 window rules of docs/windows.md.  Every
 * expectation is a number worked out by hand from the driver source cited
 * there (kern_bus.c kbusDetermineBar1Force64KBMapping_IMPL,
 * virt_mem_allocator_gm107.c dmaAllocMapping_GM107, p2p.c's GDR reserve)
 * and the field reports docs/windows.md cites; none is computed with the
 * code under test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <p2p-shim/winrule.h>

#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)

/* A BAR1 bus address, as a 256 MiB BAR below 4 GiB would have. */
#define BAR1_BUS 0xe0000000ull

static void test_force64k(void **state)
{
	(void)state;
	/* no key: forced while (BAR1 >> 20) <= 256 */
	assert_true(p2ps_win_force64k(256 * MiB, -1));
	assert_true(p2ps_win_force64k(128 * MiB, -1));
	assert_false(p2ps_win_force64k(512 * MiB, -1));
	assert_false(p2ps_win_force64k(32 * GiB, -1));
	/*
	 * The driver compares whole MiB: 256 MiB + 64 KiB is still 256 MiB
	 * to it, so still forced.
	 */
	assert_true(p2ps_win_force64k(256 * MiB + 64 * KiB, -1));
	assert_false(p2ps_win_force64k(257 * MiB, -1));
	/* RM64KBBAR1Mappings: 0 turns it off, any other value on, at any size */
	assert_false(p2ps_win_force64k(256 * MiB, 0));
	assert_true(p2ps_win_force64k(32 * GiB, 1));
	assert_true(p2ps_win_force64k(32 * GiB, 7));
}

static void test_bar1_page(void **state)
{
	(void)state;
	assert_int_equal(p2ps_win_bar1_page(true, 2 * MiB), 64 * KiB);
	assert_int_equal(p2ps_win_bar1_page(false, 2 * MiB), 2 * MiB);
	/* only lowered, never raised */
	assert_int_equal(p2ps_win_bar1_page(true, 4 * KiB), 4 * KiB);
	assert_int_equal(p2ps_win_bar1_page(true, 64 * KiB), 64 * KiB);
}

static void test_cost(void **state)
{
	(void)state;
	/* a 1 MiB allocation with 2 MiB pages costs 2 MiB of a big BAR1, 1 MiB of a small one */
	assert_int_equal(p2ps_win_cost(1 * MiB, 2 * MiB), 2 * MiB);
	assert_int_equal(p2ps_win_cost(1 * MiB, 64 * KiB), 1 * MiB);
	assert_int_equal(p2ps_win_cost(1 * MiB + 1, 64 * KiB), 1 * MiB + 64 * KiB);
	assert_int_equal(p2ps_win_cost(0, 64 * KiB), 0);
}

/*
 * The small-BAR case: a window the forced 64 KiB pages put at BAR1 offset
 * 0x1910000 (64 KiB aligned, not 2 MiB).  A 2 MiB PTE there would drop
 * the low 21 bits and point 0x110000 bytes below the data.
 */
static void test_pte_size(void **state)
{
	uint64_t w = BAR1_BUS + 0x1910000;

	(void)state;
	assert_int_equal(p2ps_win_pte_size(w, 2 * MiB), 64 * KiB);
	assert_int_equal(p2ps_win_misalign(w, 2 * MiB), 0x110000);
	assert_int_equal(p2ps_win_misalign(w, 64 * KiB), 0);
	/* on a 2 MiB boundary the big PTE is fine */
	assert_int_equal(p2ps_win_pte_size(BAR1_BUS + 0x1a00000, 2 * MiB), 2 * MiB);
	/* never above the allocation's own page size */
	assert_int_equal(p2ps_win_pte_size(BAR1_BUS + 0x1a00000, 64 * KiB), 64 * KiB);
	/* 4 KiB aligned only */
	assert_int_equal(p2ps_win_pte_size(BAR1_BUS + 0x1911000, 2 * MiB), 4 * KiB);
	/* not page aligned: refuse */
	assert_int_equal(p2ps_win_pte_size(BAR1_BUS + 0x1911800, 2 * MiB), 0);
}

static void test_budget(void **state)
{
	struct p2ps_win_owner small = { .aperture = 256 * MiB };
	struct p2ps_win_owner big = { .aperture = 32 * GiB };

	(void)state;
	/* 256 MiB less the 64 MiB reserve: the ~190 MiB 256 MiB-BAR users report */
	assert_int_equal(p2ps_win_budget(&small), 192 * MiB);
	/* 32 GiB BAR1 of a 48 GB 4090: 31.94 GiB (the field measured 31.75 usable) */
	assert_int_equal(p2ps_win_budget(&big), 32704 * MiB);
	/* a 16 MiB console, 20 MiB of GDR, 100 MiB of windows */
	small.console = 16 * MiB;
	small.gdr = 20 * MiB;
	small.open = 100 * MiB;
	assert_int_equal(p2ps_win_budget(&small), 56 * MiB);
	/* spent beyond zero stays zero */
	small.open = 300 * MiB;
	assert_int_equal(p2ps_win_budget(&small), 0);
	/* static BAR1 takes its length */
	big.static_bar1 = 24 * GiB;
	assert_int_equal(p2ps_win_budget(&big), 8 * GiB - 64 * MiB);
}

static void test_fit(void **state)
{
	struct p2ps_win_owner o = { .aperture = 256 * MiB };

	(void)state;
	assert_int_equal(p2ps_win_fit(&o, 192 * MiB), P2PS_WIN_FITS);
	/* one 64 KiB page more than the budget: refused whole, never in part */
	assert_int_equal(p2ps_win_fit(&o, 192 * MiB + 64 * KiB), P2PS_WIN_OVER_BUDGET);
	assert_int_equal(p2ps_win_fit(&o, 0), P2PS_WIN_EMPTY);
	/* within budget, but the largest free range is smaller: refused the same way */
	o.largest_free = 96 * MiB;
	assert_int_equal(p2ps_win_fit(&o, 128 * MiB), P2PS_WIN_FRAGMENTED);
	assert_int_equal(p2ps_win_fit(&o, 96 * MiB), P2PS_WIN_FITS);
	/* a 40 GiB cuMem allocation cannot fit a 32 GiB BAR1 */
	o = (struct p2ps_win_owner){ .aperture = 32 * GiB };
	assert_int_equal(p2ps_win_fit(&o, p2ps_win_cost(40 * GiB, 2 * MiB)), P2PS_WIN_OVER_BUDGET);
	assert_string_equal(p2ps_win_fit_text(P2PS_WIN_OVER_BUDGET),
			    "out of BAR1: the owner's window budget is spent");
}

/* 4090 48 GB (no static BAR1: BAR1 < VRAM) with a 4090 24 GB (static BAR1). */
static void test_pair(void **state)
{
	(void)state;
	assert_int_equal(p2ps_win_dir(595, true, false), P2PS_WIN_DIR_WINDOW);
	assert_int_equal(p2ps_win_dir(595, true, true), P2PS_WIN_DIR_STATIC);
	assert_int_equal(p2ps_win_pair(p2ps_win_dir(595, true, false), p2ps_win_dir(595, true, true), false),
			 P2PS_WIN_PAIR_OK);
	/* off by default: the 48 GB card has no route */
	assert_int_equal(p2ps_win_pair(p2ps_win_dir(595, false, false), p2ps_win_dir(595, false, true), false),
			 P2PS_WIN_PAIR_NO_ROUTE);
	/* gen A (570/575) is designed, not built; 565 and gen 0 not designed */
	assert_int_equal(p2ps_win_dir(575, true, false), P2PS_WIN_DIR_NONE);
	assert_int_equal(p2ps_win_dir(550, true, false), P2PS_WIN_DIR_NONE);
	assert_int_equal(p2ps_win_dir(580, true, false), P2PS_WIN_DIR_WINDOW);
	/* mixed generations: refused even with a route each way */
	assert_int_equal(p2ps_win_pair(P2PS_WIN_DIR_WINDOW, P2PS_WIN_DIR_STATIC, true), P2PS_WIN_PAIR_MIXED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_force64k),
		cmocka_unit_test(test_bar1_page),
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_pte_size),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_pair),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
