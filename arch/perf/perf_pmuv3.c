// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_perf's register map on arm64: the PMUv3 map of pfm_pmuv3
 * (arch/arm64/pmuv3_map.c, in pfm_pmu_lib), its PMEVTYPER<n>_EL0 values
 * turned into the attributes perf's own PMUv3 driver programs the same
 * register from.
 *
 * perf's driver sets PMEVTYPER from: the event number (config), P from
 * exclude_kernel, U from exclude_user, NSH from exclude_hv on a kernel
 * outside EL2 (from exclude_kernel at EL2, VHE).  NSK and NSU have no
 * perf attribute: a value that sets them counts as if they were clear
 * where they differ from P and U (Documentation/pmu-description.rst).
 * The cycle counter's PMC, PMCCFILTR_EL0, counts CPU_CYCLES, which perf
 * puts on the cycle counter when it is free.
 *
 * el0_access (driver setting 0, as pfm_pmuv3's): the thread's counters
 * ask perf for user-level reads (config1 bit 1; 64-bit ones, bit 0,
 * where the PMDs are), which perf grants with kernel.perf_user_access=1
 * by opening PMUSERENR_EL0 while the thread runs, after zeroing the
 * counters it does not use.  perf's event_idx() is then the counter
 * number + 1, the control page's index, and hw.prev_count the counter's
 * value at perf's last read of it, the page's base.
 */
#include <linux/err.h>
#include <linux/module.h>
#include <linux/perf/arm_pmu.h>

#include "../arm64/pmuv3.h"
#include "pfm_perf.h"

static bool long_counters = true;
module_param(long_counters, bool, 0444);
MODULE_PARM_DESC(long_counters, "64-bit counters where PMUv3p5 has them, as pfm_pmuv3 (default true)");

#define PFP_PMUV3_64BIT		BIT(0)	/* config1: a 64-bit counter */
#define PFP_PMUV3_USER_READ	BIT(1)	/* config1: user-level reads */

/* What pmuv3_probe_map() found (read-only), and the width chosen. */
static const struct pmuv3_info *pmuv3;
static bool pfp_pmuv3_long;

/* Filled by pmuv3_probe_map() (pmuv3_map.c). */
static struct pfm_pmu_map pfp_pmuv3_map;

static const struct pfm_pmu_map *pfp_pmuv3_probe(void)
{
	pmuv3 = pmuv3_probe_map(&pfp_pmuv3_map, long_counters);
	if (IS_ERR(pmuv3))
		return ERR_CAST(pmuv3);
	pfp_pmuv3_long = pfp_pmuv3_map.counter_width == 64;
	return &pfp_pmuv3_map;
}

/* el0_access: the counters asked perf for user-level reads (attr). */
static bool pfp_pmuv3_user_read(const u64 *cfg)
{
	return cfg[PMUV3_CFG_EL0_ACCESS];
}

/* PMC n is PMEVTYPER<n>_EL0 (PMCCFILTR_EL0 for 31), of PMD n alone. */
static u16 pfp_pmuv3_pmc(u16 pmd)
{
	return pmd;
}

static int pfp_pmuv3_attr(u16 cnum, u64 value, const u64 *cfg,
			  struct perf_event_attr *attr)
{
	attr->type = PERF_TYPE_RAW;
	attr->config = cnum == PMUV3_CYCLE_IDX ?
		       ARMV8_PMUV3_PERFCTR_CPU_CYCLES : value & pmuv3->evt_mask;
	attr->exclude_kernel = !!(value & ARMV8_PMU_EXCLUDE_EL1);
	attr->exclude_user = !!(value & ARMV8_PMU_EXCLUDE_EL0);
	attr->exclude_hv = !(value & ARMV8_PMU_INCLUDE_EL2);
	if (cfg[PMUV3_CFG_EL0_ACCESS])
		attr->config1 = PFP_PMUV3_USER_READ |
				(pfp_pmuv3_long ? PFP_PMUV3_64BIT : 0);
	return 0;
}

#ifdef CONFIG_ARM_PMU
/*
 * A reload in perf's interrupt, as armpmu_event_set_period() does it
 * (drivers/perf/arm_pmu.c, not exported): at most half the counter's
 * range at a time (perf reloads the rest itself), the counter written
 * through the driver's own write_counter(), which biases a 32-bit event
 * on a 64-bit counter.  One counter write, where perf's stop and start
 * of the event also disable, read, and enable it and rewrite its type.
 */
static void pfp_pmuv3_reload(struct perf_event *pe, u64 left)
{
	struct arm_pmu *pmu = to_arm_pmu(pe->pmu);
	u64 max = pe->hw.flags & ARMPMU_EVT_64BIT ? U64_MAX : U32_MAX;

	left = min(left, max >> 1);
	local64_set(&pe->hw.prev_count, -left);
	pmu->write_counter(pe, -left & max);
}

#define PFP_PMUV3_RELOAD	pfp_pmuv3_reload
#else
/* No arm_pmu driver (the debug gate's kernel): the engine stops and starts. */
#define PFP_PMUV3_RELOAD	NULL
#endif

const struct pfp_map pfp_arch_map = {
	.probe	= pfp_pmuv3_probe,
	.pmc	= pfp_pmuv3_pmc,
	.attr	= pfp_pmuv3_attr,
	.user_read = pfp_pmuv3_user_read,
	.reload	= PFP_PMUV3_RELOAD,
};
