// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/p2p-shim: the actions.  Version and status are open to everyone
 * (the node is 0644); enable and disable need CAP_SYS_ADMIN.  Every
 * argument starts with its size, which must be exactly ours, and every
 * field the caller supplies is checked; a refused call changes nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/uaccess.h>

#include <p2p-shim/uapi.h>

#include "control.h"
#include "hook.h"
#include "ledger.h"
#include "lifecycle.h"

/* Copy in a struct whose first member is its size, and check that size. */
static int copy_arg_in(void *arg, size_t size, const void __user *uarg)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize != size)
		return -EINVAL;
	if (copy_from_user(arg, uarg, size))
		return -EFAULT;
	return 0;
}

static long ioctl_version(void __user *uarg)
{
	struct p2ps_version v;
	int ret = copy_arg_in(&v, sizeof(v), uarg);

	if (ret)
		return ret;
	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	v.abi = P2PS_ABI_VERSION;
	strscpy(v.module, P2PS_MODULE_VERSION, sizeof(v.module));
	return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
}

static long ioctl_status(void __user *uarg)
{
	struct p2ps_status_snapshot snap;
	struct p2ps_status s;
	int ret = copy_arg_in(&s, sizeof(s), uarg);

	if (ret)
		return ret;
	memset(&s, 0, sizeof(s));
	ret = p2ps_snapshot(&snap, &s.hooks, &s.hits);
	if (ret)
		return ret;
	s.size = sizeof(s);
	s.state = snap.state;
	s.flags = snap.flags;
	s.stale_gpus = snap.stale_gpus;
	s.live_mappings = p2ps_ledger_live();
	strscpy(s.driver_version, snap.driver_version, sizeof(s.driver_version));
	strscpy(s.profile, snap.profile, sizeof(s.profile));
	return copy_to_user(uarg, &s, sizeof(s)) ? -EFAULT : 0;
}

static long ioctl_enable(void __user *uarg)
{
	struct p2ps_status_snapshot snap;
	struct p2ps_arm_error err = {};
	struct p2ps_enable e;
	u32 hooks;
	u64 hits;
	int ret = copy_arg_in(&e, sizeof(e), uarg);

	if (ret)
		return ret;
	if ((e.flags & ~P2PS_ENABLE_FLAGS) || e.pad)
		return -EINVAL;
	/* Make sure the answer can be delivered before acting on the request. */
	if (copy_to_user(uarg, &e, sizeof(e)))
		return -EFAULT;
	ret = p2ps_life_enable(e.flags, &err);
	if (p2ps_snapshot(&snap, &hooks, &hits))
		return ret ?: -EINTR;
	e.state = snap.state;
	strscpy(e.target, err.target, sizeof(e.target));
	strscpy(e.reason, err.reason, sizeof(e.reason));
	/* The outcome is reported even when enabling failed. */
	if (copy_to_user(uarg, &e, sizeof(e)))
		return -EFAULT;
	return ret;
}

static long ioctl_disable(void __user *uarg)
{
	struct p2ps_disable d;
	int ret = copy_arg_in(&d, sizeof(d), uarg);

	if (ret)
		return ret;
	if (d.flags)
		return -EINVAL;
	memset(d.reason, 0, sizeof(d.reason));
	if (copy_to_user(uarg, &d, sizeof(d)))
		return -EFAULT;
	ret = p2ps_life_disable(d.reason, sizeof(d.reason));
	if (copy_to_user(uarg, &d, sizeof(d)))
		return -EFAULT;
	return ret;
}

static long p2ps_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case P2PS_IOC_VERSION:
		return ioctl_version(uarg);
	case P2PS_IOC_STATUS:
		return ioctl_status(uarg);
	case P2PS_IOC_ENABLE:
		if (!capable(CAP_SYS_ADMIN))
			return -EPERM;
		return ioctl_enable(uarg);
	case P2PS_IOC_DISABLE:
		if (!capable(CAP_SYS_ADMIN))
			return -EPERM;
		return ioctl_disable(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations p2ps_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = p2ps_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice p2ps_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = P2PS_DEVICE_NAME,
	.fops = &p2ps_fops,
	.mode = 0644,
};

int p2ps_control_init(void)
{
	return misc_register(&p2ps_misc);
}

void p2ps_control_exit(void)
{
	misc_deregister(&p2ps_misc);
}
