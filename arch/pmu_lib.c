// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_pmu_lib: the code several PMU description modules share, compiled
 * once (arch/Kbuild lists it):
 *   - the register maps a description on the hardware and pfm_perf both
 *     present: soft/soft_map.c; arm64/pmuv3_map.c; x86/x86_map.c with
 *     the vendor parts intel_arch.c and amd64.c;
 *   - the x86 engine (x86/x86_pmu.c) and the CPU's accessors it runs on
 *     (x86/x86_hw.c), for pfm_x86 and the test module pfm_x86_sim;
 *   - pfm_perf's engine (perf/perf_engine.c) and its x86 map
 *     (perf/perf_x86.c, perf/perf_soft.c), for pfm_perf and the test
 *     module pfm_perf_x86sim.
 * Exported in the PERFMON_PMU_LIB namespace.  It registers nothing and
 * touches no hardware when it loads, so a description that depends on
 * it loads or refuses to load for its own reasons alone; each engine
 * serves one description at a time, and a second that asks is refused
 * with -EBUSY and a log line.
 */
#include <linux/module.h>

MODULE_DESCRIPTION("perfmon: code shared by the PMU description modules");
MODULE_LICENSE("GPL");
