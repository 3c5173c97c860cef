/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The software PMU's register map (soft_map.c, in pfm_pmu_lib.ko),
 * shared by the two descriptions that present it: pfm_soft on its own
 * clock and scheduler counters (soft_pmu.c) and pfm_perf on perf's
 * software events (arch/perf/perf_soft.c).
 */
#ifndef _PFM_SOFT_MAP_H
#define _PFM_SOFT_MAP_H

#include <linux/bits.h>
#include <perfmon/pmu.h>

#define SOFT_NUM_CTRS		4
#define SOFT_CTR_WIDTH		32

#define SOFT_EVTSEL_EVENT	GENMASK_ULL(7, 0)
#define SOFT_EVTSEL_RSVD	(~SOFT_EVTSEL_EVENT)

/* Event codes of SOFT_EVTSEL_EVENT. */
enum pfm_soft_event {
	SOFT_EV_NONE		= 0,	/* counter off */
	SOFT_EV_TASK_CLOCK	= 1,	/* ns the monitored thread ran */
	SOFT_EV_CPU_CLOCK	= 2,	/* ns of wall clock while counting */
	SOFT_EV_CTX_SWITCHES	= 3,	/* context switches */
	SOFT_EV_SYSCALLS	= 4,	/* system calls entered */
	SOFT_EV_MAX		= SOFT_EV_SYSCALLS,
};

/* In pfm_pmu_lib: the importing module says MODULE_IMPORT_NS(PERFMON_PMU_LIB). */
void soft_probe_map(struct pfm_pmu_map *map,
		    const struct pfm_pmu_settings *settings);

#endif /* _PFM_SOFT_MAP_H */
