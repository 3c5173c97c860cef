// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_perf: the PMU description over perf_events kernel counters
 * (perf_engine.c) with the architecture's register map.  The module's
 * identity lives here: the test module pfm_perf_x86sim links the same
 * engine and map to a simulated perf PMU (perf_x86_sim.c).
 */
#include <linux/module.h>

#include "pfm_perf.h"

static int __init pfm_perf_init(void)
{
	return pfp_init();
}

static void __exit pfm_perf_exit(void)
{
	pfp_exit();
}

module_init(pfm_perf_init);
module_exit(pfm_perf_exit);

MODULE_DESCRIPTION("perfmon: PMU description over perf_events kernel counters");
MODULE_LICENSE("GPL");
/* perfmon.pmu=auto (when the native one cannot load) or perf (core/pmu.c). */
MODULE_ALIAS("pfm-pmu-perf");
