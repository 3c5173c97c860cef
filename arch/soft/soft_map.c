// SPDX-License-Identifier: GPL-2.0
/*
 * The software PMU's register map: four event selects (PMC0-3), four
 * 32-bit counters (PMD0-3), the events perf's software events name the
 * same way.  Part of pfm_pmu_lib (arch/Kbuild), shared by pfm_soft and
 * pfm_perf (arch/perf/perf_soft.c).
 */
#include <linux/kernel.h>
#include <linux/module.h>

#include "soft_map.h"

static const struct pfm_regmap_desc soft_pmc_desc[SOFT_NUM_CTRS] = {
	PFM_PMC_D("SOFT_EVTSEL0", 0, SOFT_EVTSEL_RSVD, 0),
	PFM_PMC_D("SOFT_EVTSEL1", 0, SOFT_EVTSEL_RSVD, 1),
	PFM_PMC_D("SOFT_EVTSEL2", 0, SOFT_EVTSEL_RSVD, 2),
	PFM_PMC_D("SOFT_EVTSEL3", 0, SOFT_EVTSEL_RSVD, 3),
};

static const struct pfm_regmap_desc soft_pmd_desc[SOFT_NUM_CTRS] = {
	PFM_PMD_D(PFM_REGT_CNTR | PFM_REGT_INTR, "SOFT_CTR0", 0),
	PFM_PMD_D(PFM_REGT_CNTR | PFM_REGT_INTR, "SOFT_CTR1", 1),
	PFM_PMD_D(PFM_REGT_CNTR | PFM_REGT_INTR, "SOFT_CTR2", 2),
	PFM_PMD_D(PFM_REGT_CNTR | PFM_REGT_INTR, "SOFT_CTR3", 3),
};

/* perf's names for the same software events. */
static const struct pfm_event_desc soft_events[] = {
	{ "task-clock",		SOFT_EV_TASK_CLOCK },
	{ "cpu-clock",		SOFT_EV_CPU_CLOCK },
	{ "context-switches",	SOFT_EV_CTX_SWITCHES },
	{ "syscalls",		SOFT_EV_SYSCALLS },
};

/* The reserved mask lets through every event code; refuse unknown ones. */
static int soft_pmc_check(const struct pfm_pmu_map *map, u16 cnum, u64 value)
{
	return (value & SOFT_EVTSEL_EVENT) > SOFT_EV_MAX ? -EINVAL : 0;
}

/* Every counter counts the monitored thread's events alone. */
static const struct pfm_pmu_checks soft_checks = {
	.pmc_write	= soft_pmc_check,
};

/**
 * soft_probe_map() - fill the software PMU's register map
 * @map: to fill: name, counter width, register tables, PMC check, events
 * @settings: the driver settings of the engine presenting the map, or
 *            NULL (perf's software events have none)
 */
void soft_probe_map(struct pfm_pmu_map *map,
		    const struct pfm_pmu_settings *settings)
{
	*map = (struct pfm_pmu_map) {
		.pmu_name	 = "soft",
		.counter_width	 = SOFT_CTR_WIDTH,
		.pmc_desc	 = soft_pmc_desc,
		.num_pmc_entries = ARRAY_SIZE(soft_pmc_desc),
		.pmd_desc	 = soft_pmd_desc,
		.num_pmd_entries = ARRAY_SIZE(soft_pmd_desc),
		.events		 = soft_events,
		.num_events	 = ARRAY_SIZE(soft_events),
		.checks		 = &soft_checks,
		.settings	 = settings,
	};
}
EXPORT_SYMBOL_NS_GPL(soft_probe_map, PERFMON_PMU_LIB);
