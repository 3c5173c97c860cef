/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal declarations shared by the files of perfmon.ko.
 *
 * Locking:
 *  - pfm_pmu_mutex (core/pmu.c) guards the registered description pointer;
 *    a context holds a module reference on the description it uses, so
 *    the description cannot go away under it.
 *  - ctx->lock guards everything in a context and its event sets.  It is
 *    a spinlock taken irqsave from process context, because the overflow
 *    and set-switch paths take it from interrupt context.  Nothing that
 *    may sleep (allocation, copy_{from,to}_user, waiting) runs under it.
 */
#ifndef _PERFMON_CORE_H
#define _PERFMON_CORE_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <perfmon/pmu.h>

/**
 * enum pfm_ctx_state - context states (Documentation/uapi.rst has the table)
 * @PFM_CTX_NEW: opened, PFM_CREATE_CONTEXT not issued yet
 * @PFM_CTX_UNLOADED: created, not attached to a thread or CPU
 * @PFM_CTX_LOADED: attached
 * @PFM_CTX_MASKED: attached, monitoring masked until pfm_restart()
 * @PFM_CTX_ZOMBIE: attached thread or CPU still references a closed context
 */
enum pfm_ctx_state {
	PFM_CTX_NEW,
	PFM_CTX_UNLOADED,
	PFM_CTX_LOADED,
	PFM_CTX_MASKED,
	PFM_CTX_ZOMBIE,
};

/**
 * struct pfm_pmd - software state of one PMD in one event set
 * @value: 64-bit virtualized value
 * @lval: value last loaded by a reset (reg_last_reset_val)
 * @long_reset: reset value after a notification
 * @short_reset: reset value after an overflow without notification
 * @reset_pmds: PMDs reset when this one overflows
 * @smpl_pmds: PMDs recorded when this one overflows
 * @eventid: opaque id recorded in samples
 * @random_mask: randomized bits of the reset value
 * @ovflsw_thres: overflows before a set switch (0: none)
 * @ovflsw_left: overflows left before the switch
 * @flags: PFM_REGFL_* given at write
 */
struct pfm_pmd {
	u64 value;
	u64 lval;
	u64 long_reset;
	u64 short_reset;
	u64 reset_pmds[PFM_PMD_BV];
	u64 smpl_pmds[PFM_PMD_BV];
	u64 eventid;
	u64 random_mask;
	u64 ovflsw_thres;
	u64 ovflsw_left;
	u32 flags;
};

/**
 * struct pfm_event_set - one event set of a context
 * @list: in ctx->sets, sorted by @id
 * @id: set number
 * @flags: PFM_SETFL_*
 * @timeout: switch timeout in ns (PFM_SETFL_TIME_SWITCH)
 * @runs: times the set was activated
 * @duration: ns the set was active
 * @used_pmcs: PMCs written in this set
 * @used_pmds: PMDs written in this set
 * @no_emul64_pmcs: PMCs written with PFM_REGFL_NO_EMUL64
 * @pmcs: PMC values, indexed by PMC number (pmu->max_pmc entries)
 * @pmds: PMD state, indexed by PMD number (pmu->max_pmd entries)
 */
struct pfm_event_set {
	struct list_head list;
	u16 id;
	u32 flags;
	u64 timeout;
	u64 runs;
	u64 duration;
	DECLARE_BITMAP(used_pmcs, PFM_MAX_PMCS);
	DECLARE_BITMAP(used_pmds, PFM_MAX_PMDS);
	DECLARE_BITMAP(no_emul64_pmcs, PFM_MAX_PMCS);
	u64 *pmcs;
	struct pfm_pmd *pmds;
};

/**
 * struct pfm_context - one monitoring context (one open /dev/perfmon)
 * @lock: guards every field below
 * @state: enum pfm_ctx_state
 * @flags: PFM_FL_* given at creation
 * @pmu: description in use (module reference held), NULL while NEW
 * @sets: event sets sorted by id; set 0 exists from creation on
 */
struct pfm_context {
	spinlock_t lock;	/* irqsave: the overflow interrupt takes it */
	enum pfm_ctx_state state;
	u32 flags;
	struct pfm_pmu_config *pmu;
	struct list_head sets;
};

/* core/pmu.c */
struct pfm_pmu_config *pfm_pmu_get(void);
void pfm_pmu_put(struct pfm_pmu_config *pmu);
int pfm_pmu_info(struct pfarg_pmu_info *info);
int pfm_pmu_reg_info(struct pfarg_reg_info *req, unsigned int count);

/* core/context.c */
struct pfm_context *pfm_context_alloc(void);
void pfm_context_free(struct pfm_context *ctx);
struct pfm_event_set *pfm_event_set_alloc(const struct pfm_pmu_config *pmu,
					  u16 id);
void pfm_event_set_free(struct pfm_event_set *set);
int __pfm_create_context(struct pfm_context *ctx, const struct pfarg_ctx *req,
			 struct pfm_pmu_config *pmu,
			 struct pfm_event_set *set0);
struct pfm_event_set *pfm_find_set(struct pfm_context *ctx, u16 id);

/* core/regs.c */
int __pfm_write_pmcs(struct pfm_context *ctx, struct pfarg_pmc *req,
		     unsigned int count);
int __pfm_write_pmds(struct pfm_context *ctx, struct pfarg_pmd *req,
		     unsigned int count);
int __pfm_read_pmds(struct pfm_context *ctx, struct pfarg_pmd *req,
		    unsigned int count);

/* core/dev.c */
int pfm_dev_init(void);
void pfm_dev_exit(void);

#endif /* _PERFMON_CORE_H */
