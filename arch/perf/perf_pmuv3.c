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

/* perf opens PMUSERENR_EL0 for the thread's counters that ask for it. */
static void pfp_pmuv3_load_cfg(struct pfm_pmu_config *pmu, void *priv,
			       const u64 *cfg)
{
}

static u32 pfp_pmuv3_user_index(struct pfm_pmu_config *pmu, void *priv,
				const u64 *cfg, u16 cnum)
{
	struct perf_event *pe;

	if (!cfg[PMUV3_CFG_EL0_ACCESS])
		return 0;
	pe = pfp_live_event(priv, cnum);
	return pe ? pe->pmu->event_idx(pe) : 0;
}

/* The core read the PMD just now, and so did perf the counter. */
static u64 pfp_pmuv3_user_base(struct pfm_pmu_config *pmu, void *priv, u16 cnum,
			       u64 value)
{
	struct perf_event *pe = pfp_live_event(priv, cnum);

	return pe ? local64_read(&pe->hw.prev_count) & pfm_pmu_ovfl_mask(pmu) : 0;
}

/* The native description's name: programs written for it run as they are. */
static int pfp_pmuv3_probe(struct pfm_pmu_config *pmu)
{
	pmu->pmu_name = "armv8_pmuv3";
	pmu->load_cfg = pfp_pmuv3_load_cfg;
	pmu->user_index = pfp_pmuv3_user_index;
	pmu->user_base = pfp_pmuv3_user_base;
	pmuv3 = pmuv3_probe_map(pmu, long_counters);
	if (IS_ERR(pmuv3))
		return PTR_ERR(pmuv3);
	pfp_pmuv3_long = pmu->counter_width == 64;
	return 0;
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

const struct pfp_map pfp_arch_map = {
	.probe	= pfp_pmuv3_probe,
	.pmc	= pfp_pmuv3_pmc,
	.attr	= pfp_pmuv3_attr,
};
