// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's own copy of the engine, the register map and both
 * vendors' code, on x86_sim.c's register file instead of x86_hw.c and
 * x86_cpu.c: Kbuild links an object into one module only, so this test
 * module compiles the sources again.
 */
#include "intel_arch.c"
#include "amd64.c"
#include "x86_pmu.c"
#include "x86_map.c"
