// SPDX-License-Identifier: GPL-2.0
/*
 * The test module's own copy of the x86 vendor parts and register map
 * (perf_x86_parts.c): one object per module, and these set their own
 * pr_fmt.
 */
#include "perf_x86_parts.c"
