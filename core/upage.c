// SPDX-License-Identifier: GPL-2.0
/*
 * The control page of a per-thread context: what its monitored thread
 * needs to read its own counters without a system call
 * (Documentation/uapi.rst, "User-level reads").
 *
 * Allocated at the first mmap() of PFM_USER_PAGE_OFFSET (core/upage_map.c),
 * mapped read-only, freed with the context.  It is rewritten under ctx->lock,
 * on the CPU where the set is live, whenever what a reader computes from
 * it changes: the set made live or saved (context switch, set switch,
 * every saved call), counting started or halted, an overflow carried
 * into a counter's upper bits or a counter reloaded.  A seqcount in the
 * page tells the reader to retry when an update came between its reads;
 * a reader interrupted by one of these (they all run on the monitored
 * thread's CPU, in the kernel) always sees the count change.
 */
#include <linux/bitops.h>
#include <linux/gfp.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/sched/clock.h>
#include <linux/timekeeping.h>
#include <perfmon/compat.h>

#include "perfmon.h"

/* Describe PMD @i of the active set as a reader finds it now. */
static void pfm_upage_pmd(struct pfm_context *ctx, struct pfm_event_set *set,
			  unsigned int i, bool counting,
			  struct pfm_user_pmd *up)
	__must_hold(&ctx->lock)
{
	struct pfm_pmu *pmu = ctx->pmu;
	u32 index = 0;
	u64 v;

	if (!test_bit(i, set->used_pmds)) {
		memset(up, 0, sizeof(*up));
		return;
	}
	v = pfm_ctx_live_here(ctx) ? pfm_pmd_read_hw(ctx, set, i) :
				     set->pmds[i].value;
	up->flags = PFM_UPMD_USED;
	up->offset = v;
	up->base = 0;
	/* A held PMD keeps its value: nothing to add to it. */
	if (!counting || test_bit(i, set->held_pmds)) {
		up->index = 0;
		return;
	}
	if (test_bit(i, pmu->cnt_pmds) && pmu->ops->user_index)
		index = pmu->ops->user_index(pmu->conf, ctx->vpmu, ctx->drv_cfg, i);
	up->index = index;
	if (!index)
		up->flags |= PFM_UPMD_STALE;
	else if (pmu->ops->user_base)
		up->base = pmu->ops->user_base(pmu->conf, ctx->vpmu, i, v);
	else
		up->base = v & pmu->ovfl_mask;
}

/**
 * pfm_upage_rewrite() - rewrite the control page
 * @ctx: the context, locked, live on this CPU or saved, with a page
 *
 * Called through pfm_upage_update(), which skips contexts without one.
 *
 * Context: interrupts disabled.
 */
void pfm_upage_rewrite(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_user_page *pg = ctx->upage;
	struct pfm_event_set *set = ctx->active_set;
	bool counting;
	unsigned int i;
	u64 run;

	lockdep_assert_held(&ctx->lock);
	/* A lazy switch out saves at once for a page (pfm_ctx_switch_out()). */
	WARN_ON_ONCE(ctx->hw_unsaved);
	counting = ctx->counting && pfm_ctx_live_here(ctx);
	WRITE_ONCE(pg->seq, pg->seq + 1);
	smp_wmb();	/* odd before any field changes */
	run = counting ? local_clock() - ctx->live_since : 0;
	pg->set_id = set->id;
	pg->counting = counting;
	pg->time_running = set->duration + run;
	/* Kept as a sum: a walk of the sets here would run on every switch. */
	pg->time_enabled = ctx->sets_duration + run;
	pg->time_stamp = counting ? ktime_get_mono_fast_ns() : 0;
	for (i = 0; i < pg->num_pmds; i++)
		pfm_upage_pmd(ctx, set, i, counting, &pg->pmds[i]);
	smp_wmb();	/* every field before even again */
	WRITE_ONCE(pg->seq, pg->seq + 1);
}

/**
 * pfm_upage_free() - drop the context's reference to its control page
 * @ctx: the context, being freed
 *
 * A mapping keeps the page (and the file, so the context) alive: this
 * runs once every mapping is gone.
 */
void pfm_upage_free(struct pfm_context *ctx)
{
	if (ctx->upage)
		free_page((unsigned long)ctx->upage);
}
