// SPDX-License-Identifier: GPL-2.0
/*
 * A module whose init hits WARN_ON(1): the rig's own test loads it to
 * prove that a kernel WARNING fails a guest run.  Never installed.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init rig_warn_init(void)
{
	WARN_ON(1);
	return 0;
}

static void __exit rig_warn_exit(void)
{
}

module_init(rig_warn_init);
module_exit(rig_warn_exit);

MODULE_DESCRIPTION("perfmon test rig: WARN_ON(1) at load");
MODULE_LICENSE("GPL");
