// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_amd64: PMU description for the AMD64 performance counters (amd64.c
 * on the x86 engine, x86_pmu.c).  Loaded automatically on AMD and Hygon
 * CPUs.  Refuses to load with -ENODEV where the counters do not work (a
 * virtual machine without a virtual PMU), with -EBUSY while perf holds
 * them; both logged.
 */
#include <linux/module.h>
#include <asm/cpu_device_id.h>

#include "pfm_x86.h"

static const struct x86_cpu_id pfm_amd64_ids[] = {
	X86_MATCH_VENDOR_FAM(AMD, X86_FAMILY_ANY, NULL),
	X86_MATCH_VENDOR_FAM(HYGON, X86_FAMILY_ANY, NULL),
	{}
};
MODULE_DEVICE_TABLE(x86cpu, pfm_amd64_ids);

static struct pfm_x86_pmu pfm_amd64;

static int __init pfm_amd64_init(void)
{
	return pfm_x86_init(&pfm_amd64, THIS_MODULE, pfm_amd64_probe);
}

static void __exit pfm_amd64_exit(void)
{
	pfm_x86_exit(&pfm_amd64);
}

module_init(pfm_amd64_init);
module_exit(pfm_amd64_exit);

MODULE_DESCRIPTION("perfmon: AMD64 PMU description");
MODULE_LICENSE("GPL");
/* perfmon.pmu=auto|native loads the CPU's own description (core/pmu.c). */
MODULE_ALIAS("pfm-pmu-native");
