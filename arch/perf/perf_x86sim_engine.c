// SPDX-License-Identifier: GPL-2.0
/*
 * The test module's own copy of pfm_perf's engine and its x86 map (the
 * vendor parts are in perf_x86sim_parts.c), on perf_x86_sim.c's simulated PMU and CPUID instead of
 * perf_x86_hw.c: Kbuild links an object into one module only, so this
 * test module compiles the sources again.
 */
#include "perf_engine.c"
#include "perf_x86.c"
#include "perf_soft.c"
