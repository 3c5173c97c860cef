// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_perf's map on real x86 hardware: the x86 map (perf_x86.c, in
 * pfm_pmu_lib) probing with the CPU's own accessors (arch/x86/x86_hw.c),
 * the Intel or AMD one where perf drives the PMU CPUID describes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <asm/cpufeature.h>
#include <asm/perf_event.h>

#include "../x86/pfm_x86.h"
#include "pfm_perf.h"

/* Does perf drive the CPU's Intel or AMD PMU? */
static bool pfp_x86_perf_pmu(void)
{
	struct x86_pmu_capability cap;

	/* perf's capability call refuses (and warns) on hybrid CPUs. */
	if (boot_cpu_has(X86_FEATURE_HYBRID_CPU)) {
		pr_info("hybrid CPU: its core types count different events, so pfm_perf presents the software PMU's events\n");
		return false;
	}
	perf_get_x86_pmu_capability(&cap);
	if (cap.num_counters_gp)
		return true;
	pr_info("perf drives no x86 PMU here (a virtual machine without one?): pfm_perf presents the software PMU's events\n");
	return false;
}

/* The x86 map, probing the CPU itself. */
static const struct pfm_pmu_map *pfp_x86_hw_probe(void)
{
	return pfp_x86_probe(&pfm_x86_hw, pfp_x86_perf_pmu());
}

const struct pfp_map pfp_arch_map = {
	.probe	= pfp_x86_hw_probe,
	.pmc	= pfp_x86_pmc,
	.attr	= pfp_x86_attr,
};
