// SPDX-License-Identifier: GPL-2.0
/*
 * Counter overflows: the PMU reports each hardware counter wrap, the
 * core extends the counter to 64 bits and acts on a 64-bit overflow:
 * reset values, overflow-driven set switching.  (Notification and
 * sampling build on this path.)
 */
#include <linux/bitmap.h>
#include <linux/lockdep.h>

#include "perfmon.h"

/* Reload PMD @i of the live set with its short reset value. */
static void pfm_pmd_reset(struct pfm_context *ctx, struct pfm_event_set *set,
			  unsigned int i)
{
	struct pfm_pmu_config *pmu = ctx->pmu;
	struct pfm_pmd *pmd = &set->pmds[i];

	pmd->value = pmd->short_reset;
	pmd->lval = pmd->short_reset;
	pmu->write_pmd(pmu, i, pmd->value & pmu->ovfl_mask);
}

/*
 * Carry one hardware wrap into the 64-bit value of PMD @i.
 * Return: true when the 64-bit value overflowed.
 */
static bool pfm_pmd_carry(struct pfm_context *ctx, struct pfm_event_set *set,
			  unsigned int i)
{
	struct pfm_pmu_config *pmu = ctx->pmu;
	struct pfm_pmd *pmd = &set->pmds[i];
	u64 upper;

	/* For a 64-bit wide counter, ovfl_mask + 1 is 0: every wrap counts. */
	upper = (pmd->value & ~pmu->ovfl_mask) + pmu->ovfl_mask + 1;
	pmd->value = upper | (pmu->read_pmd(pmu, i) & pmu->ovfl_mask);
	return !upper;
}

/* Act on the 64-bit overflows in @ovfl; true when the set must switch. */
static bool pfm_overflow_actions(struct pfm_context *ctx,
				 struct pfm_event_set *set,
				 const unsigned long *ovfl)
{
	DECLARE_BITMAP(reset, PFM_MAX_PMDS);
	DECLARE_BITMAP(more, PFM_MAX_PMDS);
	struct pfm_pmd *pmd;
	bool do_switch = false;
	unsigned int i;

	bitmap_copy(reset, ovfl, PFM_MAX_PMDS);
	for_each_set_bit(i, ovfl, ctx->pmu->max_pmd) {
		pmd = &set->pmds[i];
		bitmap_from_arr64(more, pmd->reset_pmds, PFM_MAX_PMDS);
		bitmap_or(reset, reset, more, PFM_MAX_PMDS);
		if ((set->flags & PFM_SETFL_OVFL_SWITCH) && pmd->ovflsw_thres &&
		    pmd->ovflsw_left && !--pmd->ovflsw_left)
			do_switch = true;
	}
	bitmap_and(reset, reset, set->used_pmds, PFM_MAX_PMDS);
	for_each_set_bit(i, reset, ctx->pmu->max_pmd)
		pfm_pmd_reset(ctx, set, i);
	return do_switch;
}

/**
 * pfm_interrupt() - a PMU reports counter wraps on this CPU
 * @ovfl_pmds: bitmap of the PMDs (PFM_MAX_PMDS bits) that wrapped
 *
 * Called by PMU descriptions from their overflow interrupt (or its
 * emulation), on the CPU whose counters wrapped.
 *
 * Context: interrupts disabled; not from NMI.
 */
void pfm_interrupt(const unsigned long *ovfl_pmds)
{
	DECLARE_BITMAP(ovfl64, PFM_MAX_PMDS);
	struct pfm_event_set *set;
	struct pfm_context *ctx;
	unsigned int i;

	lockdep_assert_irqs_disabled();
	/* Live here, so it cannot be freed: that needs this CPU first. */
	ctx = pfm_ctx_current();
	if (!ctx)
		return;
	spin_lock(&ctx->lock);
	if (ctx->live_cpu != smp_processor_id())
		goto unlock;
	set = ctx->active_set;
	bitmap_zero(ovfl64, PFM_MAX_PMDS);
	for_each_set_bit(i, ovfl_pmds, ctx->pmu->max_pmd) {
		if (test_bit(i, set->used_pmds) &&
		    test_bit(i, ctx->pmu->cnt_pmds) && pfm_pmd_carry(ctx, set, i))
			__set_bit(i, ovfl64);
	}
	if (!bitmap_empty(ovfl64, PFM_MAX_PMDS)) {
		bitmap_copy(set->ovfl_pmds, ovfl64, PFM_MAX_PMDS);
		if (pfm_overflow_actions(ctx, set, ovfl64) && ctx->counting)
			pfm_switch_sets(ctx);
	}
unlock:
	spin_unlock(&ctx->lock);
}
EXPORT_SYMBOL_GPL(pfm_interrupt);
