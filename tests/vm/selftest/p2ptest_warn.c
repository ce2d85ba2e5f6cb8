// SPDX-License-Identifier: GPL-2.0
/* A module that WARNs on load: proves the VM harness catches kernel warnings. */
#include <linux/module.h>
#include <linux/bug.h>

static int __init p2ptest_warn_init(void)
{
	WARN(1, "p2ptest_warn: deliberate warning for the harness self-test\n");
	return 0;
}

static void __exit p2ptest_warn_exit(void)
{
}

module_init(p2ptest_warn_init);
module_exit(p2ptest_warn_exit);
MODULE_LICENSE("GPL");
