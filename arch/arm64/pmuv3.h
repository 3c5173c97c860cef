/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PMUv3 register map (pmuv3_map.c, in pfm_pmu_lib.ko), shared by
 * the two descriptions that present it: pfm_pmuv3 on the registers themselves (pmuv3_hw.c)
 * and pfm_perf on perf_events kernel counters (arch/perf/).
 *
 * Register fields are the kernel's own (asm/sysreg.h, the generated
 * sysreg-defs.h, and the PMUv3 header include/perfmon/compat.h picks):
 * ID_AA64DFR0_EL1_PMUVer*, ARMV8_PMU_EXCLUDE_* and _INCLUDE_EL2,
 * ARMV8_PMU_EVTYPE_EVENT, SYS_PMEVTYPERn_EL0() and SYS_PMEVCNTRn_EL0().
 */
#ifndef _PFM_ARM64_PMUV3_H
#define _PFM_ARM64_PMUV3_H

#include <linux/bits.h>
#include <linux/types.h>
#include <perfmon/compat.h>
#include <perfmon/pmu.h>

#define PMUV3_CYCLE_IDX		31	/* PMC/PMD index of the cycle counter */
#define PMUV3_NUM_REGS		32

/* PMEVTYPERn_EL0 / PMCCFILTR_EL0: the filters a PMC may set */
#define PMUV3_FILTERS	((u64)(ARMV8_PMU_EXCLUDE_EL1 | ARMV8_PMU_EXCLUDE_EL0 | \
			       ARMV8_PMU_EXCLUDE_NS_EL1 | \
			       ARMV8_PMU_EXCLUDE_NS_EL0 | ARMV8_PMU_INCLUDE_EL2))
/* NSK and NSH: either, set, counts a privileged level (pmuv3_pmc_priv()) */
#define PMUV3_KERNEL_FILTERS	((u64)(ARMV8_PMU_EXCLUDE_NS_EL1 | \
				       ARMV8_PMU_INCLUDE_EL2))
/* PMEVTYPERn_EL0.evtCount before PMUv3p1: 10 bits (the kernel has none) */
#define PMUV3_EVTYPE_EVENT_V3	GENMASK(9, 0)

/**
 * struct pmuv3_info - what the probe found
 * @pmuver: ID_AA64DFR0_EL1.PMUVer
 * @num_ctrs: event counters (PMCR_EL0.N)
 * @has_long_ctrs: the counters can be 64-bit (PMUv3p5); a description
 *                 uses them so when its counter_width is 64
 * @ctr_mask: PMCNTEN/PMINTEN/PMOVS bits of the implemented counters
 * @pmceid: PMCEID0_EL0 (low) and PMCEID1_EL0 (high): common events
 * @evt_mask: the event field of PMEVTYPERn_EL0 (10 bits before PMUv3p1)
 * @num_events: common events implemented, named in the map's events
 */
struct pmuv3_info {
	unsigned int pmuver;
	unsigned int num_ctrs;
	bool has_long_ctrs;
	u32 ctr_mask;
	u64 pmceid[2];
	u64 evt_mask;
	u16 num_events;
};

/* Driver setting 0: the monitored thread reads its counters (mrs). */
#define PMUV3_CFG_EL0_ACCESS	0

/* In pfm_pmu_lib: the importing module says MODULE_IMPORT_NS(PERFMON_PMU_LIB). */
const struct pmuv3_info *pmuv3_probe_map(struct pfm_pmu_map *map,
					 bool long_counters);

#endif /* _PFM_ARM64_PMUV3_H */
