/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pfm_perf's two halves: the engine (perf_engine.c), which backs each
 * counter a context uses with a perf_events kernel counter, and the
 * architecture's register map (struct pfp_map: perf_pmuv3.c on arm64;
 * perf_x86.c on x86, Intel's or AMD's, or the software PMU's of
 * perf_soft.c where perf drives no PMU), which says what the registers
 * are and which perf event a PMC value counts.  The engine and the x86
 * map are in pfm_pmu_lib, compiled once: pfm_perf and the test module
 * pfm_perf_x86sim each give the engine a map.
 */
#ifndef _PFM_PERF_H
#define _PFM_PERF_H

#include <linux/perf_event.h>
#include <perfmon/pmu.h>

struct pfm_x86_hw;

/**
 * struct pfp_map - a register map over perf events, as the engine uses it
 * @probe: the register map: its register tables, checks, events,
 *         counter width and settings, filled once, valid until the
 *         engine's exit.  Each counter PMD has one PMC that controls it
 *         (@pmc).  Returns ERR_PTR(-ENODEV) when the CPU has nothing
 *         this map describes.
 * @pmc: the PMC that controls counter PMD @pmd, one the map implements:
 *       @pmd itself, or a lower PMC that controls several PMDs (x86:
 *       FIXED_CTR_CTRL, PMC16, controls the fixed counters PMD16 and up)
 * @attr: the perf event counter PMD @cnum counts when its PMC (@pmc)
 *        holds @value, a value the core accepted, with the context's
 *        driver settings @cfg: fills type, config and exclude_* of
 *        @attr (zeroed by the caller).  Returns 0; -ENOENT when the
 *        value counts nothing (no counter needed).
 * @user_read: optional; the context's settings @cfg let the monitored
 *             thread read its counters itself (@attr asked perf for it):
 *             the control page then shows perf's index and base.
 * @reload: optional; in perf's overflow interrupt for hardware counter
 *          @pe (the PMU stopped, the count just brought up to date, and
 *          @pe's hw.period_left set to @left), program the counter to
 *          end its period @left events from now, as perf's driver does
 *          at a reload there; without it the engine stops and starts
 *          the counter.
 *
 * Called by the engine only, after pfp_init() claimed it for the map:
 * a map's own state has one user at a time.
 */
struct pfp_map {
	const struct pfm_pmu_map *(*probe)(void);
	u16 (*pmc)(u16 pmd);
	int (*attr)(u16 cnum, u64 value, const u64 *cfg,
		    struct perf_event_attr *attr);
	bool (*user_read)(const u64 *cfg);
	void (*reload)(struct perf_event *pe, u64 left);
};

/*
 * The engine (perf_engine.c), in pfm_pmu_lib: a module that calls it says
 * MODULE_IMPORT_NS(PERFMON_PMU_LIB).
 */
int pfp_init(struct module *owner, const struct pfp_map *map,
	     const unsigned int *max_counters);
void pfp_exit(void);

/* pfm_perf's map: perf_pmuv3.c on arm64, perf_x86_hw.c on x86. */
extern const struct pfp_map pfp_arch_map;

#ifdef CONFIG_X86
/*
 * The x86 map (perf_x86.c, in pfm_pmu_lib): Intel's or AMD's as the
 * vendor parts probe it with @cpu (the CPU's own accessors, or the
 * tests' simulated PMU's), or the software PMU's (perf_soft.c) where
 * @perf_pmu says perf drives no PMU.  The map's @probe calls it.
 */
const struct pfm_pmu_map *pfp_x86_probe(const struct pfm_x86_hw *cpu,
					bool perf_pmu);
u16 pfp_x86_pmc(u16 pmd);
int pfp_x86_attr(u16 cnum, u64 value, const u64 *cfg,
		 struct perf_event_attr *attr);

/* The software PMU's map (perf_soft.c), x86's when perf drives no PMU. */
const struct pfm_pmu_map *pfp_soft_probe(void);
int pfp_soft_attr(u64 value, struct perf_event_attr *attr);
#endif

#endif /* _PFM_PERF_H */
