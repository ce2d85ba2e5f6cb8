// SPDX-License-Identifier: GPL-2.0
/*
 * p2p-shim: PCIe BAR1 peer-to-peer for GeForce GPUs under NVIDIA's stock
 * open kernel driver.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

static int __init p2p_shim_init(void)
{
	pr_info("loaded\n");
	return 0;
}

static void __exit p2p_shim_exit(void)
{
	pr_info("unloaded\n");
}

module_init(p2p_shim_init);
module_exit(p2p_shim_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("PCIe BAR1 peer-to-peer for NVIDIA GeForce GPUs on the stock open driver");
