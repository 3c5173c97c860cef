// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon.ko: module entry points.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <uapi/linux/perfmon.h>

#include "perfmon.h"

static int __init pfm_init(void)
{
	int ret;

	ret = pfm_dev_init();
	if (ret)
		return ret;

	pr_info("loaded: /dev/perfmon ready, ABI %u.%u\n",
		PFM_VERSION_MAJ, PFM_VERSION_MIN);
	return 0;
}

static void __exit pfm_exit(void)
{
	pfm_dev_exit();
	pr_info("unloaded\n");
}

module_init(pfm_init);
module_exit(pfm_exit);

MODULE_DESCRIPTION("perfmon: performance monitoring core (/dev/perfmon)");
MODULE_LICENSE("GPL");
