// SPDX-License-Identifier: GPL-2.0
/*
 * The choice of vendor part for the CPU: above the vendor parts
 * (intel_arch.c, amd64.c), which describe with the register map
 * (x86_map.c) below them.  In pfm_pmu_lib; pfm_x86, pfm_perf's x86 map
 * and the simulator's test module all probe through it.
 */
#include <linux/module.h>
#include <asm/processor.h>

#include "pfm_x86.h"

/**
 * pfm_x86_probe_cpu() - describe the PMU of the CPU @xp->hw reads
 * @xp: zeroed description to fill, @hw set
 *
 * Intel's vendor part on an Intel CPU, AMD's on any other (it refuses,
 * logged, what is not AMD or Hygon).
 *
 * Return: 0, or the vendor part's -ENODEV.
 */
int pfm_x86_probe_cpu(struct pfm_x86_pmu *xp)
{
	if (xp->hw->vendor() == X86_VENDOR_INTEL)
		return pfm_intel_arch_probe(xp);
	return pfm_amd64_probe(xp);
}
EXPORT_SYMBOL_NS_GPL(pfm_x86_probe_cpu, PERFMON_PMU_LIB);
