// SPDX-License-Identifier: GPL-2.0
/*
 * Rules of rules/profile.c that the module applies to code it reads:
 * p2ps_calls_target(), the check that nvidia-uvm's copy function calls the
 * function the UVM peer set hooks (570-580), on code as a kernel with and
 * without call-depth tracking leaves it; and p2ps_driver_major(), the one
 * reading of a driver version's major.
 *
 * The bytes follow what the kernel does at module load with call-depth
 * tracking (arch/x86/kernel/callthunks.c, patch_call()/patch_dest()): each
 * direct call `e8 rel32` to a function is rewritten to the accounting thunk
 * written into the function's 16-byte padding, at dest - template size
 * (10 bytes for `sarq $5, %gs:off32`), which falls through into it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <p2p-shim/profile.h>

#define CALLER	0xffffffffc1000000ULL	/* where the copy function sits */
#define TARGET	0xffffffffc1020040ULL	/* the hooked function */

/* A caller body: some code, then `call` to @dest at offset 13, then ret. */
static void body(unsigned char *t, unsigned long long dest)
{
	static const unsigned char pre[13] = {
		0xf3, 0x0f, 0x1e, 0xfa,			/* endbr64 */
		0x55,					/* push %rbp */
		0x48, 0x89, 0xe5,			/* mov %rsp,%rbp */
		0x48, 0x8b, 0x7f, 0x08,			/* mov 0x8(%rdi),%rdi */
		0x90,
	};
	int32_t rel = (int32_t)(dest - (CALLER + 13 + 5));

	memcpy(t, pre, sizeof(pre));
	t[13] = 0xe8;
	memcpy(t + 14, &rel, 4);
	t[18] = 0x5d;	/* pop %rbp */
	t[19] = 0xc3;	/* ret */
}

static void test_direct_call(void **state)
{
	unsigned char t[20];

	(void)state;
	body(t, TARGET);
	assert_true(p2ps_calls_target(t, sizeof(t), CALLER, TARGET, false));
	assert_true(p2ps_calls_target(t, sizeof(t), CALLER, TARGET, true));
}

/* Call-depth tracking: the call lands on the thunk 10 bytes before. */
static void test_thunked_call(void **state)
{
	unsigned char t[20];

	(void)state;
	body(t, TARGET - 10);
	assert_true(p2ps_calls_target(t, sizeof(t), CALLER, TARGET, true));
	/* Without tracking, a call 10 bytes before is another function. */
	assert_false(p2ps_calls_target(t, sizeof(t), CALLER, TARGET, false));
}

/* Outside the padding window, or after the entry: not a call of it. */
static void test_other_calls(void **state)
{
	unsigned char t[20];

	(void)state;
	body(t, TARGET - P2PS_CALL_THUNK_WINDOW - 1);
	assert_false(p2ps_calls_target(t, sizeof(t), CALLER, TARGET, true));
	body(t, TARGET + 4);
	assert_false(p2ps_calls_target(t, sizeof(t), CALLER, TARGET, true));
	body(t, TARGET);
	t[13] = 0xe9;	/* a jmp, not a call */
	assert_false(p2ps_calls_target(t, sizeof(t), CALLER, TARGET, true));
	/* The call cut off by the end of what was read. */
	body(t, TARGET);
	assert_false(p2ps_calls_target(t, 17, CALLER, TARGET, true));
}

/*
 * A major only where the whole version is MAJOR.MINOR[.PATCH]: the leading
 * digits alone (strtol's reading) would take "5800abc" for 5800, "580." or
 * "580.142.x" for 580, and a comparison such as >= 580 would pass on them
 * while no profile serves them.
 */
static void test_driver_major(void **state)
{
	static const struct {
		const char *version;
		unsigned int major;
	} cases[] = {
		{ "595.45.04", 595 }, { "580.142", 580 }, { "550.163.01", 550 },
		{ "", 0 }, { "580", 0 }, { "580.", 0 }, { "abc", 0 }, { "580.142.x", 0 },
		{ "5800abc", 0 }, { "580..1", 0 }, { " 580.142", 0 }, { "580.142.1.1", 0 },
		{ "-580.142", 0 }, { "999999.1", 0 },
	};
	unsigned int i;

	(void)state;
	assert_int_equal(p2ps_driver_major(NULL), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *v = cases[i].version;

		if (p2ps_driver_major(v) != cases[i].major)
			fail_msg("'%s': major %u, expected %u", v, p2ps_driver_major(v), cases[i].major);
		/* The profile lookup reads the version the same way. */
		if (!cases[i].major && p2ps_profile_for_version(v))
			fail_msg("'%s': no major, yet a profile", v);
	}
	assert_true(p2ps_uvm_native_bar1("590.48.01"));
	assert_false(p2ps_uvm_native_bar1("5900abc"));
	assert_false(p2ps_uvm_native_bar1(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_driver_major),
		cmocka_unit_test(test_direct_call),
		cmocka_unit_test(test_thunked_call),
		cmocka_unit_test(test_other_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
