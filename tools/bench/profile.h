/* SPDX-License-Identifier: GPL-2.0 */
/* profile.c: where a call's instructions go, by function (perf samples) */
#ifndef PFM_BENCH_PROFILE_H
#define PFM_BENCH_PROFILE_H

#include <stdbool.h>

void prof_run(const char *label, void (*op)(void *arg), void *arg,
	      unsigned long n);
void prof_run_cpu_delta(const char *label, int cpu, void (*base)(void *arg),
			void (*with)(void *arg), void *arg, unsigned long units);

#endif
