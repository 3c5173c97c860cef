// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon.ko: module entry points.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/workqueue.h>
#include <uapi/linux/perfmon.h>

#include "perfmon.h"

static int __init pfm_init(void)
{
	int ret;

	pfm_smpl_mem_init();
	/* Frees contexts and hooks whose last reference dropped in atomic context. */
	pfm_wq = alloc_workqueue("perfmon", 0, 0);
	if (!pfm_wq)
		return -ENOMEM;
	ret = pfm_sessions_init();
	if (ret)
		goto destroy_wq;
	/* Preempt notifiers cost a branch per context switch once enabled. */
	preempt_notifier_inc();
	ret = pfm_exec_init();
	if (ret)
		goto dec_notifiers;
	ret = pfm_sysfs_init();
	if (ret)
		goto exit_exec;
	ret = pfm_dev_init();
	if (ret)
		goto remove_sysfs;

	pr_info("loaded: /dev/perfmon ready, ABI %u.%u\n",
		PFM_VERSION_MAJ, PFM_VERSION_MIN);
	return 0;

remove_sysfs:
	pfm_sysfs_exit();
exit_exec:
	pfm_exec_exit();
dec_notifiers:
	preempt_notifier_dec();
	pfm_sessions_exit();
destroy_wq:
	destroy_workqueue(pfm_wq);
	return ret;
}

/*
 * Runs once no context exists: each holds a module reference until it
 * is freed (from pfm_wq, which is drained here).
 */
static void __exit pfm_exit(void)
{
	pfm_dev_exit();
	pfm_sysfs_exit();
	pfm_exec_exit();
	preempt_notifier_dec();
	pfm_sessions_exit();
	destroy_workqueue(pfm_wq);
	pr_info("unloaded\n");
}

module_init(pfm_init);
module_exit(pfm_exit);

MODULE_DESCRIPTION("perfmon: performance monitoring core (/dev/perfmon)");
MODULE_LICENSE("GPL");
