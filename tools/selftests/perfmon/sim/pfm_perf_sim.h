/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulated x86 perf PMU of the tests (perf_sim_pmu.c), as the test
 * module pfm_perf_x86sim (perf_x86_sim.c) gives it to the vendor parts.
 */
#ifndef _PFM_PERF_SIM_H
#define _PFM_PERF_SIM_H

#include <linux/types.h>

/**
 * struct pfm_perf_sim_shape - the simulated PMU's counters
 * @intel: an Intel PMU (architectural perfmon version 4), else AMD
 * @counters: general counters, 48 bits wide
 * @fixed: Intel fixed counters, 48 bits wide
 */
struct pfm_perf_sim_shape {
	bool intel;
	unsigned int counters;
	unsigned int fixed;
};

int pfm_perf_sim_shape(struct pfm_perf_sim_shape *shape);

#endif /* _PFM_PERF_SIM_H */
