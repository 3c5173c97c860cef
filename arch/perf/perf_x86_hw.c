// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_perf on real x86 hardware: CPUID through arch/x86/x86_cpu.c, and
 * whether perf drives the PMU CPUID describes.
 */
#include "../x86/x86_cpu.c"

#include <asm/cpufeature.h>
#include <asm/perf_event.h>

#include "pfm_perf.h"

bool pfp_x86_perf_pmu(void)
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
