// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_perf: the PMU description over perf_events kernel counters
 * (perf_engine.c, in pfm_pmu_lib) with the architecture's register map.
 * The test module pfm_perf_x86sim runs the same engine and x86 map on a
 * simulated perf PMU (tools/selftests/perfmon/sim/perf_x86_sim.c).
 */
#include <linux/module.h>

#include "pfm_perf.h"

/*
 * Each (PMD, PMC value) of each set is a pinned perf kernel counter,
 * which perf allocates uncharged to any memory cgroup: bounded per
 * context (the contexts per user are, by perfmon's ctx_per_user_max).
 */
static unsigned int max_counters = 256;
module_param(max_counters, uint, 0644);
MODULE_PARM_DESC(max_counters, "perf counters one context may hold across its sets (default 256)");

static int __init pfm_perf_init(void)
{
	return pfp_init(THIS_MODULE, &pfp_arch_map, &max_counters);
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
MODULE_IMPORT_NS(PERFMON_PMU_LIB);
