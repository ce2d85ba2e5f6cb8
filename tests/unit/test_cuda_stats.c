// SPDX-License-Identifier: GPL-2.0
/* Statistics and option parsing of p2pctl verify/bench. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "opts.h"
#include "stats.h"

static void median_odd_even(void **st)
{
	const double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 };
	struct stats s;

	(void)st;
	assert_int_equal(stats_compute(odd, 3, &s), 0);
	assert_true(s.median == 3 && s.min == 1 && s.max == 5 && s.n == 3);
	assert_int_equal(stats_compute(even, 4, &s), 0);
	assert_true(s.median == 2.5 && s.min == 1 && s.max == 4);
	assert_true(s.mean == 2.5);
}

static void quartiles_type7(void **st)
{
	/* numpy.percentile([1..5], [25, 75]) = [2, 4]; [1..4] -> [1.75, 3.25] */
	const double a[] = { 5, 4, 3, 2, 1 }, b[] = { 1, 2, 3, 4 };
	struct stats s;

	(void)st;
	stats_compute(a, 5, &s);
	assert_true(s.q1 == 2 && s.q3 == 4);
	stats_compute(b, 4, &s);
	assert_true(s.q1 == 1.75 && s.q3 == 3.25);
}

static void single_and_empty(void **st)
{
	const double one[] = { 7.5 };
	struct stats s;

	(void)st;
	assert_int_equal(stats_compute(one, 1, &s), 0);
	assert_true(s.median == 7.5 && s.q1 == 7.5 && s.q3 == 7.5 && s.min == 7.5 && s.max == 7.5);
	assert_int_equal(stats_compute(one, 0, &s), -1);
	assert_int_equal(s.n, 0);
}

static void input_untouched(void **st)
{
	double v[] = { 3, 1, 2 };
	struct stats s;

	(void)st;
	stats_compute(v, 3, &s);
	assert_true(v[0] == 3 && v[1] == 1 && v[2] == 2);
}

static void sizes(void **st)
{
	uint64_t v;

	(void)st;
	assert_int_equal(parse_size("160000000", &v), 0);
	assert_true(v == 160000000);
	assert_int_equal(parse_size("64M", &v), 0);
	assert_true(v == 64ULL << 20);
	assert_int_equal(parse_size("64MiB", &v), 0);
	assert_true(v == 64ULL << 20);
	assert_int_equal(parse_size("64MB", &v), 0);
	assert_true(v == 64000000);
	assert_int_equal(parse_size("4k", &v), 0);
	assert_true(v == 4096);
	assert_int_equal(parse_size("1G", &v), 0);
	assert_true(v == 1ULL << 30);
	assert_int_equal(parse_size("12B", &v), 0);
	assert_true(v == 12);
	assert_int_equal(parse_size("0", &v), -1);
	assert_int_equal(parse_size("", &v), -1);
	assert_int_equal(parse_size("-5", &v), -1);
	assert_int_equal(parse_size("1e6", &v), -1);
	assert_int_equal(parse_size("64Mx", &v), -1);
	assert_int_equal(parse_size("99999999999999999999", &v), -1);
	assert_int_equal(parse_size("17179869184T", &v), -1);
}

static void pairs(void **st)
{
	static int sel[P2P_MAX_GPUS][P2P_MAX_GPUS];
	char msg[256];

	(void)st;
	assert_int_equal(parse_pairs("0-1,2-3", sel, msg, sizeof(msg)), 0);
	assert_true(sel[0][1] && sel[1][0] && sel[2][3] && sel[3][2]);
	assert_false(sel[0][2] || sel[0][0] || sel[1][2]);
	assert_int_equal(parse_pairs(NULL, sel, msg, sizeof(msg)), 0);
	assert_true(sel[0][5] && sel[15][14] && !sel[3][3]);
	assert_int_equal(parse_pairs("all", sel, msg, sizeof(msg)), 0);
	assert_true(sel[1][0]);
	assert_int_equal(parse_pairs("1-1", sel, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "1-1"));
	assert_int_equal(parse_pairs("0-16", sel, msg, sizeof(msg)), -1);
	assert_int_equal(parse_pairs("0-1,", sel, msg, sizeof(msg)), 0);
	assert_int_equal(parse_pairs("0-", sel, msg, sizeof(msg)), -1);
	assert_int_equal(parse_pairs("a-b", sel, msg, sizeof(msg)), -1);
	assert_int_equal(parse_pairs("0-1;2-3", sel, msg, sizeof(msg)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(median_odd_even),
		cmocka_unit_test(quartiles_type7),
		cmocka_unit_test(single_and_empty),
		cmocka_unit_test(input_untouched),
		cmocka_unit_test(sizes),
		cmocka_unit_test(pairs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
