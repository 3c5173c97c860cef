/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PMU descriptions: what a per-architecture module tells the perfmon core
 * about the PMU it drives.  One description is registered at a time.
 */
#ifndef _PERFMON_PMU_H
#define _PERFMON_PMU_H

#include <linux/bitmap.h>
#include <linux/bits.h>
#include <linux/types.h>
#include <uapi/linux/perfmon.h>

struct module;
struct pt_regs;
struct task_struct;

/**
 * struct pfm_regmap_desc - one PMC, PMD or driver setting of a description
 * @type: PFM_REGT_* bits; a register without PFM_REGT_IMPL does not exist
 * @name: register name shown to users (at most PFM_NAME_LEN - 1 chars)
 * @dfl_val: PMC: value after reset; the reserved bits must keep it.
 *           Driver setting: its value when a context is created
 * @rsvd_msk: PMC: bits that are reserved; a write that changes them from
 *            @dfl_val is refused
 * @hw_addr: hardware address (MSR number, system register encoding)
 */
struct pfm_regmap_desc {
	u32 type;
	const char *name;
	u64 dfl_val;
	u64 rsvd_msk;
	unsigned long hw_addr;
};

/**
 * struct pfm_event_desc - an event a description names
 * @name: its name, lower case, perf's spelling where perf has one; it is
 *        a file name in sysfs (no '/')
 * @code: what the event field of a PMC holds to count it
 *
 * Tools resolve names through these when no event library knows the
 * PMU (the software PMU, a PMUv3 of unknown make).
 */
struct pfm_event_desc {
	const char *name;
	u64 code;
};

/**
 * struct pfm_pmu_vset - an event set as a virtual description sees it
 * @pmcs: the PMC values the set programs, indexed by PMC number
 *        (@max_pmc of the description entries)
 * @used_pmds: the PMDs the set uses (read, written or sampled)
 */
struct pfm_pmu_vset {
	const u64 *pmcs;
	const unsigned long *used_pmds;
};

/**
 * struct pfm_pmu_vctx - what a context needs from a virtual description
 * @task: per-thread: the monitored thread while loaded, else NULL
 * @cpu: system-wide: the monitored CPU while loaded, else -1
 * @nr_sets: entries of @sets; 0 when neither @task nor @cpu is set
 * @active: the entry of @sets that is active (counts when started)
 * @sets: every event set of the context
 * @cfg: the context's driver settings (@num of the map's settings)
 *
 * A copy taken under the context lock: it stays valid during the
 * @ctx_sync call it is passed to, and no longer.
 */
struct pfm_pmu_vctx {
	struct task_struct *task;
	int cpu;
	unsigned int nr_sets;
	unsigned int active;
	const struct pfm_pmu_vset *sets;
	u64 cfg[PFM_MAX_DRV_CFG];
};

/*
 * What a PMC value needs beyond user-level counting of the monitored
 * thread (@pmc_priv of struct pfm_pmu_checks); Documentation/security.rst.
 */
#define PFM_PMC_PRIV_KERNEL	0x1	/* counts at a kernel privilege level */
#define PFM_PMC_PRIV_CPU	0x2	/* counts other threads of the core (AnyThread) */
#define PFM_PMC_PRIV_ALL	(PFM_PMC_PRIV_KERNEL | PFM_PMC_PRIV_CPU)

struct pfm_pmu_map;
struct pfm_pmu_config;

/**
 * struct pfm_pmu_checks - a register map's checks of PMC values
 * @pmc_write: optional check of a PMC value beyond the reserved mask;
 *             returns 0 or -EINVAL.  Called with the context lock held;
 *             must not sleep.
 * @pmc_priv: optional; the PFM_PMC_PRIV_* bits PMC @cnum written with
 *            @value needs: KERNEL when it counts at a kernel privilege
 *            level (x86 OS, Arm EL1/EL2), CPU when it counts for other
 *            threads than the monitored one (x86 AnyThread).  The core
 *            only knows what the map says: without the hook no value
 *            needs a privilege (the software PMU's counters).  Called
 *            after the value passed the other checks, with the context
 *            lock held; must not sleep.  Defaults count too: the core
 *            also asks it about each PMC's @dfl_val.
 * @pmc_user_val: @value of PMC @cnum changed to need none of the
 *                PFM_PMC_PRIV_* bits (user level of the monitored
 *                thread only), its event and reserved bits kept.
 *                Required when @pmc_priv says a @dfl_val needs a
 *                privilege (checked at registration): a context whose
 *                creator lacks it starts its sets with this value
 *                instead of the default, so that a PMC it never writes
 *                does not count what a written one may not.  Called
 *                with the context lock held or none; must not sleep.
 *
 * Each gets the map it checks for (its @map_data: a map that two
 * descriptions present, the native one and pfm_perf, keeps its state
 * there).  A static const table in the map's own file.
 */
struct pfm_pmu_checks {
	int (*pmc_write)(const struct pfm_pmu_map *map, u16 cnum, u64 value);
	u32 (*pmc_priv)(const struct pfm_pmu_map *map, u16 cnum, u64 value);
	u64 (*pmc_user_val)(const struct pfm_pmu_map *map, u16 cnum,
			    u64 value);
};

/**
 * struct pfm_pmu_settings - the driver settings an engine implements
 * @desc: the settings (PFM_SET_DRV_CONFIG), indexed by setting number:
 *        name and default; type PFM_REGT_IMPL
 * @num: entries in @desc, at most PFM_MAX_DRV_CFG
 * @check: validates setting @num at @value for a context with
 *         @ctx_flags (PFM_FL_*); returns 0 or -EINVAL.  Runs in the
 *         caller's context, no lock held; may not rely on the PMU's
 *         state.
 *
 * A static const table beside the ops that put the settings in force
 * (@load_cfg of struct pfm_pmu_ops); the map points to it.
 */
struct pfm_pmu_settings {
	const struct pfm_regmap_desc *desc;
	u16 num;
	int (*check)(u16 num, u64 value, u32 ctx_flags);
};

/**
 * struct pfm_pmu_map - what a PMU's registers are
 * @pmu_name: name shown to users
 * @counter_width: bits implemented by the hardware counters
 * @pmc_desc: PMC table, indexed by PMC number
 * @num_pmc_entries: entries in @pmc_desc
 * @pmd_desc: PMD table, indexed by PMD number
 * @num_pmd_entries: entries in @pmd_desc
 * @events: optional events known by name, shown in
 *          /sys/kernel/perfmon/pmu_desc/events/
 * @num_events: entries in @events
 * @checks: optional checks of PMC values
 * @settings: optional driver settings
 * @map_data: optional; the map's own state, for @checks
 *
 * Filled in one place, the map's probe (which reads what the CPU has:
 * counters, widths, events), and read-only from then on: the core and
 * the engines see it as const.  What the core derives from it (the
 * implemented registers, the counters' mask) is its own (struct
 * pfm_pmu, core/perfmon.h).  It and all it points to must stay valid
 * while the description is registered.
 */
struct pfm_pmu_map {
	const char *pmu_name;
	unsigned int counter_width;
	const struct pfm_regmap_desc *pmc_desc;
	u16 num_pmc_entries;
	const struct pfm_regmap_desc *pmd_desc;
	u16 num_pmd_entries;
	const struct pfm_event_desc *events;
	u16 num_events;
	const struct pfm_pmu_checks *checks;
	const struct pfm_pmu_settings *settings;
	const void *map_data;
};

/**
 * struct pfm_pmu_ops - how an engine drives a PMU's registers
 * @acquire: optional; called in process context (may sleep) before the
 *           first context is loaded, to take the PMU (reserve counters,
 *           request interrupts).  Returns 0 or a negative errno.
 * @release: optional; undoes @acquire after the last context unloads.
 * @write_pmc: program PMC @cnum of this CPU's PMU.  This and the other
 *             ops that touch the live PMU (@write_pmd, @read_pmd,
 *             @start, @stop, @load_cfg, @user_index, @user_base) get
 *             @priv: the state @ctx_alloc made for the context whose
 *             set they work on (NULL without @ctx_alloc).
 * @write_pmd: set PMD @cnum of this CPU's PMU; for a counter, @value
 *             holds only the implemented bits (pfm_pmu_ovfl_mask()).
 * @read_pmd: read PMD @cnum of this CPU's PMU.  A counter that wrapped
 *            and whose interrupt was not taken yet must read as its
 *            highest value, never as the wrapped one, so that the core's
 *            64-bit value never goes backwards.  With @ctx_alloc it is
 *            also called on any CPU for a per-thread context the core
 *            has switched out (pfm_ctx_pull()): it then reads the
 *            count as the thread's switch out left it, or, where the
 *            thread is already back (on the caller's CPU too, before
 *            the core's switch in), as it is there.
 * @start: let the programmed counters of this CPU's PMU count.
 * @stop: freeze them.
 * @cpu_setup: optional; prepares this CPU's PMU (global enables, its
 *             interrupt) for the register ops.  Called on every online
 *             CPU after @acquire and on a CPU that comes online while
 *             the PMU is acquired, before any context is loaded there.
 * @cpu_teardown: optional; undoes @cpu_setup, on every online CPU before
 *                @release and on a CPU going offline, after its context
 *                was saved.  Both run with interrupts disabled.
 * @load_cfg: puts a context's settings (@cfg, the map's @settings->num
 *            values) in force on this CPU's PMU, or the defaults when
 *            @cfg is NULL.  Runs like the register ops; required when
 *            the map has settings.
 * @user_index: optional; for counter PMD @cnum of a context with settings
 *              @cfg, live on this CPU: the number the monitored thread's
 *              own read instruction takes, plus 1, or 0 when it may not
 *              read that counter itself (then PFM_READ_PMDS only).
 *              Fills the control page (Documentation/uapi.rst,
 *              "User-level reads"); the engine enables the instruction
 *              in @load_cfg.
 * @user_base: optional, with @user_index: for that counter, whose PMD
 *             just read @value, what the read instruction gave then;
 *             the control page's base (without it, @value's
 *             implemented bits: the counter is the PMD's low bits)
 * @pmc_write_reloads: a PMC value binds what the PMD writes after it
 *                     start from, so a PFM_WRITE_PMCS of the live set
 *                     saves and reloads every register of it; without,
 *                     the core stops counting, calls @write_pmc for
 *                     each PMC written and counts again
 *
 * Virtual descriptions (pfm_perf: counters that are perf_events kernel
 * counters) keep state per context, which the core hands them; all
 * three are set or none, in process context (may sleep):
 * @ctx_alloc: a context's state, at its creation; NULL when out of
 *             memory
 * @ctx_free: frees it, at the context's last reference
 * @ctx_sync: after each call that changes what the context counts (its
 *            target, PMCs, used PMDs, sets): acquire what @vc needs,
 *            let go of what it no longer does.  Returns 1 when the
 *            register ops must see new state: the core then reloads
 *            the live set on its CPU (write_pmc, write_pmd and start
 *            again, values kept) and calls @ctx_sync once more with
 *            the same @vc.  That call returns 1 when it started what
 *            the reload bound (perf counters it enabled, whose
 *            user-read index the control page must show before the
 *            call returns to the thread): the core reloads once more.
 *            Else 0 or a negative errno, which the call returns.
 *            Also called on the
 *            monitored thread after an exec into an image its owner
 *            may not read that the context follows, before the
 *            image's first instruction: perf detached the thread's
 *            perf events there (perf_event_exit_task()).
 * Their register ops get that state as @priv; an overflow reported
 * from elsewhere (perf's callback) asks pfm_pmu_priv_live() whether its
 * context is live on the CPU.
 *
 * Every op gets the description it was registered with (@pmu), which
 * an engine may embed in its own state.  The register ops run on the
 * CPU whose PMU they touch, with interrupts disabled and the context
 * lock held; they must not sleep.  A counter that wraps past the map's
 * @counter_width bits must call pfm_interrupt() on that CPU with
 * interrupts disabled: the core extends counters to 64 bits from those
 * wraps.  It passes the registers of the interrupted code
 * (get_irq_regs() in an interrupt handler) for samples and messages.
 *
 * A PMU that loses its registers in a CPU power state (CPU PM) calls
 * pfm_cpu_pm_save() on CPU_PM_ENTER and, after redoing its @cpu_setup
 * state, pfm_cpu_pm_restore() on CPU_PM_EXIT and CPU_PM_ENTER_FAILED.
 *
 * A static const table in the engine's file.
 */
struct pfm_pmu_ops {
	int (*acquire)(struct pfm_pmu_config *pmu);
	void (*release)(struct pfm_pmu_config *pmu);
	void (*write_pmc)(struct pfm_pmu_config *pmu, void *priv, u16 cnum,
			  u64 value);
	void (*write_pmd)(struct pfm_pmu_config *pmu, void *priv, u16 cnum,
			  u64 value);
	u64 (*read_pmd)(struct pfm_pmu_config *pmu, void *priv, u16 cnum);
	void (*start)(struct pfm_pmu_config *pmu, void *priv);
	void (*stop)(struct pfm_pmu_config *pmu, void *priv);
	void (*cpu_setup)(struct pfm_pmu_config *pmu);
	void (*cpu_teardown)(struct pfm_pmu_config *pmu);
	void (*load_cfg)(struct pfm_pmu_config *pmu, void *priv,
			 const u64 *cfg);
	u32 (*user_index)(struct pfm_pmu_config *pmu, void *priv,
			  const u64 *cfg, u16 cnum);
	u64 (*user_base)(struct pfm_pmu_config *pmu, void *priv, u16 cnum,
			 u64 value);
	void *(*ctx_alloc)(struct pfm_pmu_config *pmu);
	void (*ctx_free)(struct pfm_pmu_config *pmu, void *priv);
	int (*ctx_sync)(struct pfm_pmu_config *pmu, void *priv,
			const struct pfm_pmu_vctx *vc);
	bool pmc_write_reloads;
};

/**
 * struct pfm_pmu_config - a PMU description: a map and an engine's ops
 * @owner: module providing the description (THIS_MODULE)
 * @map: what the registers are, filled by the map's probe
 * @ops: how they are driven, the engine's const table
 *
 * The core never writes to the description.
 */
struct pfm_pmu_config {
	struct module *owner;
	const struct pfm_pmu_map *map;
	const struct pfm_pmu_ops *ops;
};

/**
 * pfm_pmu_ovfl_mask() - the bits a counter of @map implements
 * @map: the register map
 *
 * Return: a mask of @map->counter_width bits.
 */
static inline u64 pfm_pmu_ovfl_mask(const struct pfm_pmu_map *map)
{
	return GENMASK_ULL(map->counter_width - 1, 0);
}

/* Helpers for const description tables. */
#define PFM_PMC_D(_name, _dfl, _rsvd, _addr) {		\
	.type = PFM_REGT_IMPL, .name = (_name),		\
	.dfl_val = (_dfl), .rsvd_msk = (_rsvd), .hw_addr = (_addr) }
#define PFM_PMD_D(_type, _name, _addr) {		\
	.type = PFM_REGT_IMPL | (_type), .name = (_name), .hw_addr = (_addr) }
#define PFM_CFG_D(_name, _dfl) {			\
	.type = PFM_REGT_IMPL, .name = (_name), .dfl_val = (_dfl) }

int pfm_pmu_register(struct pfm_pmu_config *pmu);
void pfm_pmu_unregister(struct pfm_pmu_config *pmu);
void pfm_interrupt(const unsigned long *ovfl_pmds, struct pt_regs *regs);
void pfm_cpu_pm_save(struct pfm_pmu_config *pmu);
void pfm_cpu_pm_restore(struct pfm_pmu_config *pmu);
bool pfm_pmu_priv_live(const void *priv);

#endif /* _PERFMON_PMU_H */
