// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_perf's register map on arm64: the PMUv3 map of pfm_pmuv3
 * (arch/arm64/pmuv3_map.c, compiled again here: an object is linked
 * into one module only), its PMEVTYPER<n>_EL0 values turned into the
 * attributes perf's own PMUv3 driver programs the same register from.
 *
 * perf's driver sets PMEVTYPER from: the event number (config), P from
 * exclude_kernel, U from exclude_user, NSH from exclude_hv on a kernel
 * outside EL2 (from exclude_kernel at EL2, VHE).  NSK and NSU have no
 * perf attribute: a value that sets them counts as if they were clear
 * where they differ from P and U (Documentation/pmu-description.rst).
 * The cycle counter's PMC, PMCCFILTR_EL0, counts CPU_CYCLES, which perf
 * puts on the cycle counter when it is free.
 */
#include "../arm64/pmuv3_map.c"

#include <linux/module.h>

#include "pfm_perf.h"

static bool long_counters = true;
module_param(long_counters, bool, 0444);
MODULE_PARM_DESC(long_counters, "64-bit counters where PMUv3p5 has them, as pfm_pmuv3 (default true)");

/* The native description's name: programs written for it run as they are. */
int pfp_map_probe(struct pfm_pmu_config *pmu)
{
	pmu->pmu_name = "armv8_pmuv3";
	return pmuv3_probe_map(pmu, long_counters);
}

int pfp_map_attr(u16 cnum, u64 value, struct perf_event_attr *attr)
{
	attr->type = PERF_TYPE_RAW;
	attr->config = cnum == PMUV3_CYCLE_IDX ?
		       ARMV8_PMUV3_PERFCTR_CPU_CYCLES : value & pmuv3.evt_mask;
	attr->exclude_kernel = !!(value & ARMV8_PMU_EXCLUDE_EL1);
	attr->exclude_user = !!(value & ARMV8_PMU_EXCLUDE_EL0);
	attr->exclude_hv = !(value & ARMV8_PMU_INCLUDE_EL2);
	return 0;
}
