// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_perf's copy of the x86 vendor parts, register map and CPUID
 * accessors (arch/x86/): Kbuild links an object into one module only,
 * so this module compiles the sources again.
 */
#include "../x86/intel_arch.c"
#include "../x86/amd64.c"
#include "../x86/x86_map.c"
