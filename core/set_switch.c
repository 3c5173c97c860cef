// SPDX-License-Identifier: GPL-2.0
/*
 * Event set switching: round robin by increasing id, on a timeout or
 * after a number of overflows (the engine; the set calls are sets.c's).
 *
 * The switch timer is a per-context hrtimer pinned to the CPU where the
 * set is live, armed and disarmed with counting there (core/ctxsw.c), so
 * a set's timeout is measured in time it actually counted (for a
 * thread, its running time).  Its callback switches; a late one finds
 * the context no longer live on its CPU and does nothing.
 *
 * Bounds: switching (timer, overflow, restart) and the context switch
 * touch the active set and the next one only, never walk ctx->sets:
 * the next set is the list successor, the control page's total time is
 * kept in ctx->sets_duration.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/lockdep.h>
#include <linux/sched/clock.h>

#include "perfmon.h"

/* Longest ctx->lock section of a switch timer or an overflow, in ns. */
static atomic64_t pfm_irqoff_max = ATOMIC64_INIT(0);

/**
 * pfm_irqoff_note() - account an interrupts-off section of the switch path
 * @since: local_clock() before its lock was taken
 *
 * Keeps the longest for /sys/kernel/perfmon/switch_irqoff_max_ns.
 *
 * Context: interrupts disabled.
 */
void pfm_irqoff_note(u64 since)
{
	s64 d = local_clock() - since;
	s64 old = atomic64_read(&pfm_irqoff_max);

	while (d > old && !atomic64_try_cmpxchg(&pfm_irqoff_max, &old, d))
		;
}

/* The longest section noted since load or the last reset. */
u64 pfm_irqoff_max_ns(void)
{
	return atomic64_read(&pfm_irqoff_max);
}

void pfm_irqoff_reset(void)
{
	atomic64_set(&pfm_irqoff_max, 0);
}

static enum hrtimer_restart pfm_switch_timer_fn(struct hrtimer *timer)
{
	struct pfm_context *ctx = container_of(timer, struct pfm_context,
					       switch_timer);
	u64 t0 = local_clock();

	raw_spin_lock(&ctx->lock);
	if (ctx->live_cpu == smp_processor_id() && ctx->counting)
		pfm_switch_sets(ctx);
	raw_spin_unlock(&ctx->lock);
	pfm_irqoff_note(t0);
	return HRTIMER_NORESTART;
}

void pfm_switch_timer_init(struct pfm_context *ctx)
{
	hrtimer_init(&ctx->switch_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_PINNED_HARD);
	ctx->switch_timer.function = pfm_switch_timer_fn;
}

/* No switch timer callback runs after it returns (the context's free). */
void pfm_switch_timer_exit(struct pfm_context *ctx)
{
	hrtimer_cancel(&ctx->switch_timer);
}

/* Make @set the active set: counted as a run, with a full timeout. */
void pfm_set_activate(struct pfm_context *ctx, struct pfm_event_set *set)
	__must_hold(&ctx->lock)
{
	unsigned int i;

	ctx->active_set = set;
	set->runs++;
	set->timeleft = set->timeout;
	for_each_set_bit(i, set->used_pmds, ctx->pmu->max_pmd)
		set->pmds[i].ovflsw_left = set->pmds[i].ovflsw_thres;
}

/**
 * pfm_switch_sets() - switch a counting context to its next set
 * @ctx: the context, locked, live on this CPU
 *
 * Context: interrupts disabled, on the live CPU (switch timer or
 * overflow interrupt).
 */
void pfm_switch_sets(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *prev = ctx->active_set;
	struct pfm_event_set *next = pfm_next_set(ctx);

	lockdep_assert_held(&ctx->lock);
	if (next == prev)
		return;
	if (WARN_ON_ONCE(!pfm_ctx_live_here(ctx)))
		return;
	pfm_ctx_set_out(ctx);
	pfm_set_activate(ctx, next);
	pfm_smpl_set_switch(ctx, prev->id, next->id);
	pfm_ctx_set_in(ctx, prev);
}

/**
 * pfm_next_set() - the set after the active one, round robin by id
 * @ctx: the context, locked
 *
 * Return: the set; the active one when it is alone.
 */
struct pfm_event_set *pfm_next_set(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *next;

	lockdep_assert_held(&ctx->lock);
	next = list_next_entry(ctx->active_set, list);
	if (list_entry_is_head(next, &ctx->sets, list))
		next = list_first_entry(&ctx->sets, struct pfm_event_set, list);
	return next;
}
