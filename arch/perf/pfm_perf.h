/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pfm_perf's two halves: the engine (perf_engine.c), which backs each
 * counter a context uses with a perf_events kernel counter, and the
 * architecture's register map (perf_pmuv3.c on arm64, perf_soft.c, the
 * software PMU's, on x86), which says what
 * the registers are and which perf event a PMC value counts.
 */
#ifndef _PFM_PERF_H
#define _PFM_PERF_H

#include <linux/perf_event.h>
#include <perfmon/pmu.h>

/**
 * pfp_map_probe() - fill the register map part of a description
 * @pmu: the description: its register tables, checks, events and
 *       counter width; the engine fills the rest
 *
 * Each PMC n controls counter PMD n.
 *
 * Return: 0, or -ENODEV when the CPU has nothing this map describes.
 */
int pfp_map_probe(struct pfm_pmu_config *pmu);

/**
 * pfp_map_attr() - the perf event PMC @cnum with @value counts
 * @cnum: the PMC, one the map implements
 * @value: a value the core accepted for it
 * @cfg: the context's driver settings (the map's @num_cfg)
 * @attr: type, config and exclude_* bits to fill (zeroed by the caller)
 *
 * Return: 0; -ENOENT when the value counts nothing (no counter needed).
 */
int pfp_map_attr(u16 cnum, u64 value, const u64 *cfg,
		 struct perf_event_attr *attr);

/**
 * pfp_live_event() - the hardware perf event behind a PMD, where it runs
 * @cnum: the PMD, of the context live on this CPU
 *
 * Context: a register op of the description (interrupts off).
 * Return: the event, when it backs @cnum and perf has it on this CPU's
 * PMU now; else NULL.
 */
struct perf_event *pfp_live_event(u16 cnum);

#endif /* _PFM_PERF_H */
