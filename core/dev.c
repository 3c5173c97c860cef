// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/perfmon front end: a misc character device whose open files
 * are monitoring contexts.  Handlers only translate arguments; the work
 * is done by the core.
 */
#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <uapi/linux/perfmon.h>

#include "perfmon.h"

static int pfm_open(struct inode *inode, struct file *filp)
{
	struct pfm_context *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;

	spin_lock_init(&ctx->lock);
	filp->private_data = ctx;
	return 0;
}

static int pfm_release(struct inode *inode, struct file *filp)
{
	kfree(filp->private_data);
	return 0;
}

static long pfm_ioctl_version(void __user *uarg)
{
	struct pfarg_version ver = {
		.ver_major = PFM_VERSION_MAJOR,
		.ver_minor = PFM_VERSION_MINOR,
	};

	return copy_to_user(uarg, &ver, sizeof(ver)) ? -EFAULT : 0;
}

static long pfm_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case PFM_GET_VERSION:
		return pfm_ioctl_version(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations pfm_fops = {
	.owner		= THIS_MODULE,
	.open		= pfm_open,
	.release	= pfm_release,
	.unlocked_ioctl	= pfm_ioctl,
	/* Every argument has one layout for 32-bit and 64-bit callers. */
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice pfm_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "perfmon",
	.fops	= &pfm_fops,
	.mode	= 0666,
};

int pfm_dev_init(void)
{
	return misc_register(&pfm_miscdev);
}

void pfm_dev_exit(void)
{
	misc_deregister(&pfm_miscdev);
}
