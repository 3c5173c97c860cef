// SPDX-License-Identifier: GPL-2.0
/*
 * A module whose init makes two use-after-free reads, in two functions:
 * the rig's own test loads it in the debug kernel to prove that KASAN
 * reports both (kasan_multi_shot), not only the first of the boot, and
 * that each fails the run.  Never installed.
 */
#include <linux/module.h>
#include <linux/slab.h>

/* Where the freed values go, so that the reads stay. */
static long rig_uaf_sink;

/* A read of an object freed just before. */
static noinline int rig_uaf_first(void)
{
	int *p = kmalloc(sizeof(*p), GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	*p = 1;
	kfree(p);
	rig_uaf_sink += READ_ONCE(*p);
	return 0;
}

static noinline int rig_uaf_second(void)
{
	long *p = kmalloc(4 * sizeof(*p), GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	p[3] = 2;
	kfree(p);
	rig_uaf_sink += READ_ONCE(p[3]);
	return 0;
}

static int __init rig_uaf_init(void)
{
	int err = rig_uaf_first();

	return err ? err : rig_uaf_second();
}

static void __exit rig_uaf_exit(void)
{
}

module_init(rig_uaf_init);
module_exit(rig_uaf_exit);

MODULE_DESCRIPTION("perfmon test rig: two use-after-free reads at load");
MODULE_LICENSE("GPL");
