// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only: lets NVIDIA's real nvidia.ko load in a machine with no GPU.
 *
 * nvidia's module init (nvidia_init_module) ends with "NVRM: No NVIDIA GPU
 * found." and -ENODEV when no GPU probed, unless os_is_nvswitch_present()
 * says the host is an NVSwitch-only system.  When the module "nvidia"
 * arrives (MODULE_STATE_COMING, before its init runs) this module puts a
 * kretprobe on that function that makes it return 1; when nvidia goes the
 * probe is removed.  Nothing else of nvidia's is touched, and no GPU object
 * ever exists: the RM core initialises (g_pSys and its GPU manager exist)
 * with zero GPUs attached.
 *
 * Never for a production machine: the kernel log names every forced call.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ptrace.h>
#include <linux/string.h>

#define TARGET "nvidia:os_is_nvswitch_present"

static DEFINE_MUTEX(lock);
static bool probed;
static atomic_t calls = ATOMIC_INIT(0);

static int ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	/* NvBool: only the low byte counts; make the whole register 1. */
	regs_set_return_value(regs, 1);
	atomic_inc(&calls);
	return 0;
}

static struct kretprobe rp;

static void probe_add(void)
{
	int ret;

	memset(&rp, 0, sizeof(rp));
	rp.kp.symbol_name = TARGET;
	rp.handler = ret_handler;
	rp.maxactive = 4;
	ret = register_kretprobe(&rp);
	if (ret) {
		pr_err("cannot probe %s: %d; nvidia will not load without a GPU\n", TARGET, ret);
		return;
	}
	probed = true;
	pr_info("%s now returns 1 (GPU-less load of nvidia)\n", TARGET);
}

static void probe_remove(void)
{
	if (!probed)
		return;
	unregister_kretprobe(&rp);
	probed = false;
	pr_info("probe on %s removed (%d forced calls)\n", TARGET, atomic_read(&calls));
	atomic_set(&calls, 0);
}

static int notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, "nvidia"))
		return NOTIFY_DONE;
	mutex_lock(&lock);
	if (action == MODULE_STATE_COMING)
		probe_add();
	else if (action == MODULE_STATE_GOING)
		probe_remove();
	mutex_unlock(&lock);
	return NOTIFY_DONE;
}

static struct notifier_block nb = {
	.notifier_call = notify,
	/* Before other watchers of nvidia's arrival (p2p-shim): order only. */
	.priority = 1,
};

static int __init gpuless_init(void)
{
	struct kobject *kobj;

	/* Refuse if nvidia is already there: its init is over. */
	kobj = kset_find_obj(THIS_MODULE->mkobj.kobj.kset, "nvidia");
	if (kobj) {
		kobject_put(kobj);
		pr_err("load me before nvidia\n");
		return -EBUSY;
	}
	return register_module_notifier(&nb);
}

static void __exit gpuless_exit(void)
{
	unregister_module_notifier(&nb);
	mutex_lock(&lock);
	probe_remove();
	mutex_unlock(&lock);
}

module_init(gpuless_init);
module_exit(gpuless_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("p2p-shim tests: load NVIDIA's nvidia.ko without a GPU");
