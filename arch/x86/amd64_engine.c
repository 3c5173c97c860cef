// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_amd64's own copy of the x86 engine, register map and hardware
 * accessors: Kbuild links an object into one module only (pfm_intel_arch
 * links x86_pmu.o, x86_map.o, x86_hw.o and x86_cpu.o), so this module
 * compiles the sources again.
 */
#include "x86_pmu.c"
#include "x86_map.c"
#include "x86_hw.c"
#include "x86_cpu.c"
