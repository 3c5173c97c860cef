/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pfm_perf's two halves: the engine (perf_engine.c), which backs each
 * counter a context uses with a perf_events kernel counter, and the
 * architecture's register map (perf_pmuv3.c on arm64; perf_x86.c on x86:
 * Intel's or AMD's, or the software PMU's of perf_soft.c where perf
 * drives no PMU), which says what the registers are and which perf event
 * a PMC value counts.
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
 * Each counter PMD has one PMC that controls it (pfp_map_pmc()).
 *
 * Return: 0, or -ENODEV when the CPU has nothing this map describes.
 */
int pfp_map_probe(struct pfm_pmu_config *pmu);

/**
 * pfp_map_pmc() - the PMC that controls counter PMD @pmd
 * @pmd: a PMD the map implements
 *
 * Return: @pmd itself, or a lower PMC that controls several PMDs (x86:
 * FIXED_CTR_CTRL, PMC16, controls the fixed counters PMD16 and up).
 */
u16 pfp_map_pmc(u16 pmd);

/**
 * pfp_map_attr() - the perf event counter PMD @cnum counts
 * @cnum: the PMD, one the map implements
 * @value: a value the core accepted for its PMC (pfp_map_pmc())
 * @cfg: the context's driver settings (the map's @num_cfg)
 * @attr: type, config and exclude_* bits to fill (zeroed by the caller)
 *
 * Return: 0; -ENOENT when the value counts nothing (no counter needed).
 */
int pfp_map_attr(u16 cnum, u64 value, const u64 *cfg,
		 struct perf_event_attr *attr);

/**
 * pfp_live_event() - the hardware perf event behind a PMD, where it runs
 * @priv: the state of the context live on this CPU (the op's @priv)
 * @cnum: the PMD
 *
 * Context: a register op of the description (interrupts off).  The
 * event stays valid until interrupts are on again: releasing it takes
 * an IPI to this CPU, where it runs, which cannot be taken before.
 * Return: the event, when it backs @cnum and perf has it on this CPU's
 * PMU now; else NULL.
 */
struct perf_event *pfp_live_event(void *priv, u16 cnum);

/* The engine's entry points, for the module (perf_mod.c, perf_x86_sim.c). */
int pfp_init(void);
void pfp_exit(void);

#ifdef CONFIG_X86
/* The software PMU's map (perf_soft.c), x86's when perf drives no PMU. */
void pfp_soft_probe(struct pfm_pmu_config *pmu);
int pfp_soft_attr(u64 value, struct perf_event_attr *attr);

/**
 * pfp_x86_perf_pmu() - does perf drive the CPU's PMU?
 *
 * Return: true when perf counts with an Intel or AMD PMU whose registers
 * CPUID describes (perf_x86_hw.c; the tests' simulated one in
 * perf_x86_sim.c).
 */
bool pfp_x86_perf_pmu(void);
#endif

#endif /* _PFM_PERF_H */
