// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_x86: the x86 PMU descriptions, Intel architectural perfmon
 * (intel_arch.c) and AMD64 (amd64.c, also Hygon), on the engine
 * (x86_pmu.c) and the CPU's own registers (x86_hw.c), all in
 * pfm_pmu_lib.  Loaded automatically on CPUs with either PMU; the
 * module names of the two descriptions it replaces, pfm_intel_arch and
 * pfm_amd64, load it too.  Refuses to load with -ENODEV where CPUID or
 * the counters show no PMU to drive, with -EBUSY while perf holds the
 * counters; both logged.
 */
#include <linux/module.h>
#include <asm/cpu_device_id.h>

#include "pfm_x86.h"

static const struct x86_cpu_id pfm_x86_ids[] = {
	X86_MATCH_VENDOR_FEATURE(INTEL, X86_FEATURE_ARCH_PERFMON, NULL),
	X86_MATCH_VENDOR_FAM(AMD, X86_FAMILY_ANY, NULL),
	X86_MATCH_VENDOR_FAM(HYGON, X86_FAMILY_ANY, NULL),
	{}
};
MODULE_DEVICE_TABLE(x86cpu, pfm_x86_ids);

static struct pfm_x86_pmu pfm_x86_desc;

static int __init pfm_x86_mod_init(void)
{
	return pfm_x86_init(&pfm_x86_desc, THIS_MODULE, &pfm_x86_hw,
			    pfm_x86_probe_cpu);
}

static void __exit pfm_x86_mod_exit(void)
{
	pfm_x86_exit(&pfm_x86_desc);
}

module_init(pfm_x86_mod_init);
module_exit(pfm_x86_mod_exit);

MODULE_DESCRIPTION("perfmon: Intel architectural perfmon and AMD64 PMU descriptions");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(PERFMON_PMU_LIB);
/* perfmon.pmu=auto|native loads the CPU's own description (core/pmu.c). */
MODULE_ALIAS("pfm-pmu-native");
/* The two modules it replaces. */
MODULE_ALIAS("pfm_intel_arch");
MODULE_ALIAS("pfm_amd64");
