// SPDX-License-Identifier: GPL-2.0
/*
 * Event set switching: round robin by increasing id, on a timeout or
 * after a number of overflows (the engine; the set calls are sets.c's).
 *
 * The switch timer is a per-context hrtimer pinned to the CPU where the
 * set is live: it runs only while the set counts there, so a set's
 * timeout is measured in time it actually counted (for a thread, its
 * running time).  Stopping it never waits for a running callback (the
 * callback takes ctx->lock, which the stopper holds): a late callback
 * finds the context no longer live on its CPU and does nothing.
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

/* Is there a set other than the active one to switch to? */
bool pfm_has_other_set(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	return !list_is_singular(&ctx->sets);
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

/**
 * pfm_switch_timer_start() - arm the switch timer for the active set
 * @ctx: the context, locked, counting on this CPU
 */
void pfm_switch_timer_start(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *set = ctx->active_set;

	lockdep_assert_held(&ctx->lock);
	if (!(set->flags & PFM_SETFL_TIME_SWITCH) || !pfm_has_other_set(ctx))
		return;
	hrtimer_start(&ctx->switch_timer, ns_to_ktime(set->timeleft),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/**
 * pfm_switch_timer_stop() - disarm it, keeping the time left in the set
 * @ctx: the context, locked, counting on this CPU
 */
void pfm_switch_timer_stop(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *set = ctx->active_set;
	s64 left;

	lockdep_assert_held(&ctx->lock);
	if (!hrtimer_is_queued(&ctx->switch_timer))
		return;
	left = ktime_to_ns(hrtimer_get_remaining(&ctx->switch_timer));
	hrtimer_try_to_cancel(&ctx->switch_timer);
	/* Expired but not yet run: switch as soon as the set counts again. */
	set->timeleft = max_t(s64, left, 1);
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
	pfm_ctx_sched_out(ctx);
	pfm_set_activate(ctx, next);
	pfm_smpl_set_switch(ctx, prev->id, next->id);
	pfm_ctx_sched_in(ctx);
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
