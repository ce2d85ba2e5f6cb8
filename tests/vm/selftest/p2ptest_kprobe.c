// SPDX-License-Identifier: GPL-2.0
/*
 * Someone else's kprobe, for the lifecycle cases (docs/lifecycle.md): on
 * load, a kprobe on the function named by symbol= (in any module), which
 * writes a breakpoint into its first instruction.  On a stub p2p-shim
 * checks byte by byte, an arming then fails at that check: the way the
 * cases make an enable from the residual state fail.  The probe does
 * nothing; its post_handler keeps the kernel from jump-optimising it, so
 * it is gone at once on unload.
 */
#include <linux/kprobes.h>
#include <linux/module.h>

static char *symbol = "";
module_param(symbol, charp, 0444);
MODULE_PARM_DESC(symbol, "The function to put a kprobe on");

static int pre(struct kprobe *kp, struct pt_regs *regs)
{
	return 0;
}

static void post(struct kprobe *kp, struct pt_regs *regs, unsigned long flags)
{
}

static struct kprobe probe = {
	.pre_handler = pre,
	.post_handler = post,
};

static int __init p2ptest_kprobe_init(void)
{
	int ret;

	probe.symbol_name = symbol;
	ret = register_kprobe(&probe);
	if (ret)
		pr_err("p2ptest_kprobe: no kprobe on %s: %d\n", symbol, ret);
	else
		pr_info("p2ptest_kprobe: kprobe on %s at %px\n", symbol, probe.addr);
	return ret;
}

static void __exit p2ptest_kprobe_exit(void)
{
	unregister_kprobe(&probe);
}

module_init(p2ptest_kprobe_init);
module_exit(p2ptest_kprobe_exit);
MODULE_LICENSE("GPL");
