// SPDX-License-Identifier: GPL-2.0
/*
 * p2p-shim: PCIe BAR1 peer-to-peer for GeForce GPUs under NVIDIA's stock
 * open kernel driver.
 *
 * The module: its parameters, init and exit.  The state machine is
 * lifecycle.c; the hooks' policies are walked through policy.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include <p2p-shim/uapi.h>

#include "control.h"
#include "events.h"
#include "hook.h"
#include "lifecycle.h"
#include "netlink.h"
#include "pcifns.h"

static bool enable;
module_param(enable, bool, 0444);
MODULE_PARM_DESC(enable, "Arm as soon as nvidia is loaded (default: wait for p2pctl enable)");

static bool dry_run;
module_param(dry_run, bool, 0444);
MODULE_PARM_DESC(dry_run, "With enable=1: install counting probes only");

static bool force;
module_param(force, bool, 0444);
MODULE_PARM_DESC(force, "With enable=1: use the newest profile for an unknown driver version");

static int __init p2p_shim_init(void)
{
	struct p2ps_arm_error err = {};
	int ret;

	/* Before any GPU can attach under our hooks: the PCI functions they may name. */
	ret = p2ps_pcifns_start();
	if (ret)
		return ret;
	ret = p2ps_netlink_init();
	if (ret)
		goto err_pcifns;
	/* Events (state changes, mappings) leave through netlink. */
	p2ps_sink_set(&p2ps_netlink_sink);
	ret = p2ps_control_init();
	if (ret)
		goto err_netlink;
	ret = p2ps_life_start();
	if (ret)
		goto err_control;
	pr_info("loaded, version " P2PS_MODULE_VERSION "\n");
	if (enable)
		p2ps_life_enable((dry_run ? P2PS_ENABLE_DRY_RUN : 0) |
				 (force ? P2PS_ENABLE_FORCE : 0), &err);
	return 0;

err_control:
	p2ps_control_exit();
err_netlink:
	p2ps_sink_set(NULL);
	p2ps_netlink_exit();
err_pcifns:
	p2ps_pcifns_stop();
	return ret;
}

static void __exit p2p_shim_exit(void)
{
	p2ps_life_stop();
	p2ps_control_exit();
	p2ps_life_rmmod();
	p2ps_sink_set(NULL);
	p2ps_netlink_exit();
	/* After the hooks (p2ps_life_rmmod()): no attach reads the table now. */
	p2ps_pcifns_stop();
	pr_info("unloaded\n");
}

module_init(p2p_shim_init);
module_exit(p2p_shim_exit);
MODULE_LICENSE("GPL");
MODULE_VERSION(P2PS_MODULE_VERSION);
MODULE_DESCRIPTION("PCIe BAR1 peer-to-peer for NVIDIA GeForce GPUs on the stock open driver");
