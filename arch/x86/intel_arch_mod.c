// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_intel_arch: PMU description for Intel architectural performance
 * monitoring (intel_arch.c on the x86 engine, x86_pmu.c).  Loaded
 * automatically on CPUs with the architectural perfmon feature.  Refuses
 * to load with -ENODEV where CPUID or the counters show no PMU to drive,
 * with -EBUSY while perf holds the counters; both logged.
 */
#include <linux/module.h>
#include <asm/cpu_device_id.h>

#include "pfm_x86.h"

static const struct x86_cpu_id pfm_intel_arch_ids[] = {
	X86_MATCH_VENDOR_FEATURE(INTEL, X86_FEATURE_ARCH_PERFMON, NULL),
	{}
};
MODULE_DEVICE_TABLE(x86cpu, pfm_intel_arch_ids);

static struct pfm_x86_pmu pfm_intel_arch;

static int __init pfm_intel_arch_init(void)
{
	return pfm_x86_init(&pfm_intel_arch, THIS_MODULE, pfm_intel_arch_probe);
}

static void __exit pfm_intel_arch_exit(void)
{
	pfm_x86_exit(&pfm_intel_arch);
}

module_init(pfm_intel_arch_init);
module_exit(pfm_intel_arch_exit);

MODULE_DESCRIPTION("perfmon: Intel architectural perfmon description");
MODULE_LICENSE("GPL");
/* perfmon.pmu=auto|native loads the CPU's own description (core/pmu.c). */
MODULE_ALIAS("pfm-pmu-native");
