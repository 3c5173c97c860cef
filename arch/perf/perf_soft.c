// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_perf's register map on x86 where perf drives no PMU (a virtual
 * machine without a virtual PMU, the x86_64 test guest under TCG; see
 * perf_x86.c): the software PMU's map of pfm_soft (arch/soft/soft_map.c,
 * in pfm_pmu_lib), its events turned into perf's software events of
 * the same meaning:
 *   task-clock        PERF_COUNT_SW_TASK_CLOCK
 *   cpu-clock         PERF_COUNT_SW_CPU_CLOCK
 *   context-switches  PERF_COUNT_SW_CONTEXT_SWITCHES
 *   syscalls          the raw_syscalls:sys_enter tracepoint
 * pfm_soft's driver setting (clock_unit_ns) has no perf equivalent:
 * the clock counters count ns.
 */
#include <linux/err.h>
#include <linux/trace_events.h>

#include "../soft/soft_map.h"
#include "pfm_perf.h"

/* perf's id of raw_syscalls:sys_enter, 0 when the kernel has none. */
static u64 soft_sys_enter_id;

/* The tracepoint's id is fixed for the kernel's life: keep no reference. */
static void soft_find_sys_enter(void)
{
	struct trace_event_file *file;

	file = trace_get_event_file(NULL, "raw_syscalls", "sys_enter");
	if (IS_ERR(file)) {
		pr_info("no raw_syscalls:sys_enter tracepoint (%ld): the syscalls event counts nothing\n",
			PTR_ERR(file));
		return;
	}
	soft_sys_enter_id = file->event_call->event.type;
	trace_put_event_file(file);
}

/* The software PMU's map, without pfm_soft's setting. */
static struct pfm_pmu_map pfp_soft_map;

const struct pfm_pmu_map *pfp_soft_probe(void)
{
	soft_probe_map(&pfp_soft_map, NULL);
	soft_find_sys_enter();
	return &pfp_soft_map;
}

int pfp_soft_attr(u64 value, struct perf_event_attr *attr)
{
	attr->type = PERF_TYPE_SOFTWARE;
	switch (value & SOFT_EVTSEL_EVENT) {
	case SOFT_EV_TASK_CLOCK:
		attr->config = PERF_COUNT_SW_TASK_CLOCK;
		return 0;
	case SOFT_EV_CPU_CLOCK:
		attr->config = PERF_COUNT_SW_CPU_CLOCK;
		return 0;
	case SOFT_EV_CTX_SWITCHES:
		attr->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
		return 0;
	case SOFT_EV_SYSCALLS:
		if (!soft_sys_enter_id)
			return -ENOENT;
		attr->type = PERF_TYPE_TRACEPOINT;
		attr->config = soft_sys_enter_id;
		return 0;
	default:
		return -ENOENT;
	}
}
