// SPDX-License-Identifier: GPL-2.0
/*
 * The active set of a context on a CPU's PMU: loading it in (sched_in),
 * saving it out (sched_out), letting it count (resume) and stopping it
 * (halt).
 *
 * A context's set is "live" on at most one CPU (ctx->live_cpu): the CPU
 * where the monitored thread runs, or the monitored CPU.  Only that CPU
 * touches its PMU.  Everything else works on the saved copy in the set
 * (a call runs where the set is live: core/run.c).
 *
 * The set switch timer runs only while the set counts here: armed when
 * counting resumes, disarmed, its time left kept in the set, when it
 * halts.  So a set's timeout is measured in time it actually counted.
 * Stopping it never waits for a running callback (the callback takes
 * ctx->lock, which the stopper holds): a late callback finds the
 * context no longer live on its CPU and does nothing (set_switch.c).
 */
#include <linux/hrtimer.h>
#include <linux/lockdep.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>

#include "perfmon.h"
#include "upage.h"

/* The context live on each CPU's PMU; written by that CPU only. */
static DEFINE_PER_CPU(struct pfm_context *, pfm_cpu_ctx);

/**
 * pfm_ctx_current() - the context live on this CPU
 *
 * Context: interrupts disabled.
 * Return: the context or NULL.
 */
struct pfm_context *pfm_ctx_current(void)
{
	return this_cpu_read(pfm_cpu_ctx);
}

/**
 * pfm_pmu_priv_live() - is a virtual description's context live here?
 * @priv: the state its @ctx_alloc made for the context
 *
 * For what a description learns outside its register ops, which get
 * @priv: an overflow perf reports from its callback belongs to the
 * context only while the context's set is live on the CPU.
 *
 * Context: interrupts disabled.
 * Return: true when the context of @priv is live on this CPU.
 */
bool pfm_pmu_priv_live(const void *priv)
{
	struct pfm_context *ctx = this_cpu_read(pfm_cpu_ctx);

	lockdep_assert_irqs_disabled();
	/* Live here, so not freed: that needs this CPU first. */
	return ctx && ctx->vpmu == priv;
}
EXPORT_SYMBOL_GPL(pfm_pmu_priv_live);

/* Should the context's set be live on this CPU now? */
static bool pfm_ctx_wants_cpu(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	if (ctx->state != PFM_CTX_LOADED && ctx->state != PFM_CTX_MASKED)
		return false;
	if (pfm_ctx_is_system(ctx))
		return ctx->cpu == smp_processor_id();
	return ctx->hook && ctx->task == current && !ctx->task_ended;
}

/*
 * The value @set loads into PMD @i: the set's own where it uses the PMD,
 * else 0, within the counter width for a counter.  False for a read-only
 * PMD, which is never written.
 */
static __always_inline bool pfm_set_pmd_val(const struct pfm_pmu *pmu,
					    const struct pfm_event_set *set,
					    unsigned int i, u64 *v)
{
	if (pmu->map->pmd_desc[i].type & PFM_REGT_RO)
		return false;
	*v = test_bit(i, set->used_pmds) ? set->pmds[i].value : 0;
	if (test_bit(i, pmu->cnt_pmds))
		*v &= pmu->ovfl_mask;
	return true;
}

/*
 * Write the set into this CPU's PMU; unused counters start at zero.  The
 * ops, description and state in locals: the indirect calls would have
 * them loaded again for each register.
 */
static void pfm_set_load_hw(struct pfm_context *ctx, struct pfm_event_set *set)
{
	struct pfm_pmu *pmu = ctx->pmu;
	const struct pfm_pmu_ops *ops = pmu->ops;
	struct pfm_pmu_config *conf = pmu->conf;
	void *vpmu = ctx->vpmu;
	unsigned int i;
	u64 v;

	for_each_set_bit(i, pmu->impl_pmcs, pmu->max_pmc)
		ops->write_pmc(conf, vpmu, i, set->pmcs[i]);
	for_each_set_bit(i, pmu->impl_pmds, pmu->max_pmd)
		if (pfm_set_pmd_val(pmu, set, i, &v))
			ops->write_pmd(conf, vpmu, i, v);
}

/*
 * Write @next over @prev, whose registers this CPU's PMU holds (a set
 * switch): a PMC only where either set uses it or their values differ
 * (PMCs do not move by themselves), a PMD only where either set uses it
 * when the description is virtual (@ctx->vpmu: a PMD no counter backs
 * holds its value, the 0 the last load wrote), every PMD natively (an
 * unused counter may count: PMUv3's cycle counter at its default
 * filter).  Over pfm_perf each write is an indirect call taking the
 * engine's lock; the benchmark's four sets of one counter on a PMU of 7
 * PMCs and 7 PMDs wrote 14 registers a switch, now 2.
 */
static void pfm_set_load_over(struct pfm_context *ctx,
			      struct pfm_event_set *prev,
			      struct pfm_event_set *next)
{
	struct pfm_pmu *pmu = ctx->pmu;
	const struct pfm_pmu_ops *ops = pmu->ops;
	struct pfm_pmu_config *conf = pmu->conf;
	void *vpmu = ctx->vpmu;
	unsigned int i;
	u64 v;

	for_each_set_bit(i, pmu->impl_pmcs, pmu->max_pmc)
		if (test_bit(i, prev->used_pmcs) ||
		    test_bit(i, next->used_pmcs) ||
		    prev->pmcs[i] != next->pmcs[i])
			ops->write_pmc(conf, vpmu, i, next->pmcs[i]);
	for_each_set_bit(i, pmu->impl_pmds, pmu->max_pmd) {
		if (vpmu && !test_bit(i, prev->used_pmds) &&
		    !test_bit(i, next->used_pmds))
			continue;
		if (pfm_set_pmd_val(pmu, next, i, &v))
			ops->write_pmd(conf, vpmu, i, v);
	}
}

/* Read the used PMDs of this CPU's PMU into the set. */
static void pfm_set_save_hw(struct pfm_context *ctx, struct pfm_event_set *set)
{
	unsigned int i;

	for_each_set_bit(i, set->used_pmds, ctx->pmu->max_pmd)
		set->pmds[i].value = pfm_pmd_read_hw(ctx, set, i);
}

/* Is there a set other than the active one to switch to? */
static bool pfm_has_other_set(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	return !list_is_singular(&ctx->sets);
}

/* Arm the switch timer for the active set: counting starts here. */
static void pfm_switch_timer_start(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *set = ctx->active_set;

	if (!(set->flags & PFM_SETFL_TIME_SWITCH) || !pfm_has_other_set(ctx))
		return;
	hrtimer_start(&ctx->switch_timer, ns_to_ktime(set->timeleft),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/* Disarm it, keeping the time left in the set: counting stops here. */
static void pfm_switch_timer_stop(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *set = ctx->active_set;
	s64 left;

	if (!hrtimer_is_queued(&ctx->switch_timer))
		return;
	left = ktime_to_ns(hrtimer_get_remaining(&ctx->switch_timer));
	hrtimer_try_to_cancel(&ctx->switch_timer);
	/* Expired but not yet run: switch as soon as the set counts again. */
	set->timeleft = max_t(s64, left, 1);
}

/*
 * The set is live on this CPU from now, or no longer: the interrupt
 * path finds the context through pfm_cpu_ctx.  Inline: both switch
 * paths of every counting thread pass here.
 */
static __always_inline void pfm_ctx_mark_live(struct pfm_context *ctx,
					      bool live)
	__must_hold(&ctx->lock)
{
	ctx->live_cpu = live ? smp_processor_id() : -1;
	/* In parentheses: 6.1's x86 per-CPU casts put none around it. */
	this_cpu_write(pfm_cpu_ctx, (live ? ctx : NULL));
}

/* Counting runs when the context is started, not masked nor throttled. */
static __always_inline void pfm_ctx_resume_hw(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_pmu *pmu = ctx->pmu;

	if (ctx->counting || !ctx->started || ctx->state != PFM_CTX_LOADED ||
	    ctx->throttled)
		return;
	ctx->counting = true;
	ctx->live_since = local_clock();
	pmu->ops->start(pmu->conf, ctx->vpmu);
	pfm_switch_timer_start(ctx);
}

/**
 * pfm_ctx_resume() - let the live set count, if the context is started
 * @ctx: the context, locked, live on this CPU
 *
 * Counting runs when the context is started, not masked nor throttled.
 *
 * Context: interrupts disabled, on the live CPU.
 */
void pfm_ctx_resume(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	pfm_ctx_resume_hw(ctx);
}

/*
 * The switch in after pfm_ctx_switch_out(), no call since: the virtual
 * description holds the set; its start finds it still running (or
 * re-arms it: pfm_perf's pfp_start()).  One not to count here any more
 * (stopped, masked or throttled meanwhile) is stopped now.
 */
static noinline void pfm_ctx_switch_in(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_pmu *pmu = ctx->pmu;
	bool was = ctx->hw_counting;

	ctx->hw_kept = false;
	ctx->hw_counting = false;
	/* Its values were never pulled: the description holds them still. */
	ctx->hw_unsaved = false;
	pfm_ctx_mark_live(ctx, true);
	pfm_ctx_resume_hw(ctx);
	if (was && !ctx->counting)
		pmu->ops->stop(pmu->conf, ctx->vpmu);
	pfm_upage_update(ctx);
}

/**
 * pfm_ctx_sched_in() - make the active set live on this CPU
 * @ctx: the context, locked, not live anywhere
 *
 * Counting starts when the context is started and not masked
 * (pfm_ctx_resume()).
 *
 * Context: interrupts disabled, on the CPU to load.
 */
void pfm_ctx_sched_in(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_pmu *pmu = ctx->pmu;

	lockdep_assert_held(&ctx->lock);
	if (WARN_ON_ONCE(ctx->live_cpu >= 0 || this_cpu_read(pfm_cpu_ctx)))
		return;
	if (ctx->hw_kept) {
		pfm_ctx_switch_in(ctx);
		return;
	}
	/* Left counting at a switch out, then a call changed the set. */
	if (unlikely(ctx->hw_counting)) {
		pmu->ops->stop(pmu->conf, ctx->vpmu);
		ctx->hw_counting = false;
	}
	pfm_set_load_hw(ctx, ctx->active_set);
	if (pmu->cfg->num)
		pmu->ops->load_cfg(pmu->conf, ctx->vpmu, ctx->drv_cfg);
	pfm_ctx_mark_live(ctx, true);
	/* Inline: every context switch of a counting thread passes here. */
	pfm_ctx_resume_hw(ctx);
	pfm_upage_update(ctx);
}

/* The core's side of a halt: the set's time, the switch timer. */
static __always_inline void pfm_ctx_halted(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	u64 ran = local_clock() - ctx->live_since;

	ctx->active_set->duration += ran;
	ctx->sets_duration += ran;
	pfm_switch_timer_stop(ctx);
	ctx->counting = false;
}

/**
 * pfm_ctx_halt() - stop counting on this CPU; the set stays live
 * @ctx: the context, locked, live on this CPU
 *
 * Used to save the set and to mask the context after a notification.
 *
 * Context: interrupts disabled, on the live CPU.
 */
void pfm_ctx_halt(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_pmu *pmu = ctx->pmu;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->counting)
		return;
	pmu->ops->stop(pmu->conf, ctx->vpmu);
	pfm_ctx_halted(ctx);
}

/**
 * pfm_ctx_set_out() - halt and save the live set, for a set switch
 * @ctx: the context, locked, live on this CPU
 *
 * The context stays live here: pfm_ctx_set_in() follows in the same hold
 * of the lock, with the driver settings (the context's, not the set's)
 * left as they are.
 *
 * Context: interrupts disabled, on the live CPU.
 */
void pfm_ctx_set_out(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	pfm_ctx_halt(ctx);
	pfm_set_save_hw(ctx, ctx->active_set);
}

/**
 * pfm_ctx_set_in() - load the new active set over @prev and resume
 * @ctx: the context, locked, live on this CPU, its active set just
 *       changed from @prev (saved by pfm_ctx_set_out())
 * @prev: the set whose registers this CPU's PMU holds
 *
 * Context: interrupts disabled, on the live CPU.
 */
void pfm_ctx_set_in(struct pfm_context *ctx, struct pfm_event_set *prev)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	pfm_set_load_over(ctx, prev, ctx->active_set);
	pfm_ctx_resume_hw(ctx);
	pfm_upage_update(ctx);
}

/**
 * pfm_ctx_sched_out() - save the active set from this CPU's PMU
 * @ctx: the context, locked, live on this CPU
 *
 * Context: interrupts disabled, on the live CPU.
 */
void pfm_ctx_sched_out(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_pmu *pmu = ctx->pmu;

	lockdep_assert_held(&ctx->lock);
	if (WARN_ON_ONCE(ctx->live_cpu != smp_processor_id()))
		return;
	pfm_ctx_halt(ctx);
	pfm_set_save_hw(ctx, ctx->active_set);
	/* The next thread on this CPU must not inherit the settings. */
	if (pmu->cfg->num)
		pmu->ops->load_cfg(pmu->conf, ctx->vpmu, NULL);
	pfm_ctx_mark_live(ctx, false);
	pfm_upage_update(ctx);
}

/**
 * pfm_ctx_switch_out() - a thread's switch out, over a virtual description
 * @ctx: the context, locked, live on this CPU, with @ctx->vpmu; its
 *       thread runs again (it is not exiting)
 *
 * A virtual description (@ctx_alloc: pfm_perf) holds a per-thread
 * context's registers in the context's own state, and its counters are
 * the thread's perf counters, which perf has switched out before this
 * hook runs.  Nothing there need stop or be cleared, nor be read: perf's
 * switch out brought the counts up to date, and they stay as they are
 * until the thread runs again.  The values are pulled into the set only
 * when something reads it meanwhile (pfm_ctx_pull(): a call, a read),
 * or at once when a control page shows them, and the switch in writes
 * nothing back unless a call ran (pfm_run_here() drops @hw_kept).
 * Most switches have no reader in between: a save at each cost about
 * 190 instructions for one counter (Documentation/performance.rst).
 *
 * Context: interrupts disabled, on the live CPU, from the scheduler.
 */
void pfm_ctx_switch_out(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	if (WARN_ON_ONCE(ctx->live_cpu != smp_processor_id()))
		return;
	if (ctx->counting) {
		pfm_ctx_halted(ctx);
		ctx->hw_counting = true;
	}
	ctx->hw_kept = true;
	/* A control page shows the values: it has them now. */
	if (ctx->upage)
		pfm_set_save_hw(ctx, ctx->active_set);
	else
		ctx->hw_unsaved = true;
	pfm_ctx_mark_live(ctx, false);
	pfm_upage_update(ctx);
}

/**
 * pfm_ctx_pull() - read the values a lazy switch out left behind
 * @ctx: the context, locked, not live anywhere, @hw_unsaved
 *
 * After pfm_ctx_switch_out() the values are still in the virtual
 * description: each reader of the saved set's values that finds
 * @hw_unsaved calls this first (the test is the caller's, inline on its
 * path).  The description's read of a counter is valid on any CPU while
 * its thread is switched out: it takes perf's count as perf's switch
 * out left it (pfm_perf's pfp_count()).
 *
 * Context: interrupts disabled, any CPU.
 */
void pfm_ctx_pull(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	if (WARN_ON_ONCE(ctx->live_cpu >= 0))
		return;
	pfm_set_save_hw(ctx, ctx->active_set);
	ctx->hw_unsaved = false;
}

/**
 * pfm_ctx_sched_in_wanted() - make the set live here if it belongs here
 * @ctx: the context, locked, not live elsewhere
 *
 * Its thread runs here, or it monitors this CPU: after a call that saved
 * the set (pfm_run()), and for a system-wide context reaching its CPU.
 *
 * Context: interrupts disabled.
 */
void pfm_ctx_sched_in_wanted(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	if (ctx->live_cpu < 0 && pfm_ctx_wants_cpu(ctx))
		pfm_ctx_sched_in(ctx);
}

static void pfm_activate_ipi(void *info)
{
	struct pfm_context *ctx = info;

	raw_spin_lock(&ctx->lock);
	pfm_ctx_sched_in_wanted(ctx);
	raw_spin_unlock(&ctx->lock);
}

/**
 * pfm_ctx_activate_on() - make a system-wide context live on its CPU
 * @ctx: the context, loaded, not locked
 * @cpu: its CPU, kept online by the caller (cpus_read_lock())
 */
void pfm_ctx_activate_on(struct pfm_context *ctx, int cpu)
{
	smp_call_function_single(cpu, pfm_activate_ipi, ctx, 1);
}

/**
 * pfm_ctx_cpu_down() - save the context live on a CPU going offline
 * @ctx: the context, not locked
 *
 * Context: on the CPU going down (CPU hotplug teardown), interrupts
 * disabled.
 */
void pfm_ctx_cpu_down(struct pfm_context *ctx)
{
	raw_spin_lock(&ctx->lock);
	if (ctx->live_cpu == smp_processor_id())
		pfm_ctx_sched_out(ctx);
	raw_spin_unlock(&ctx->lock);
}

/**
 * pfm_ctx_cpu_up() - reload a system-wide context on its CPU back online
 * @ctx: the context, not locked
 *
 * Context: on the CPU coming up (CPU hotplug startup), interrupts
 * disabled.
 */
void pfm_ctx_cpu_up(struct pfm_context *ctx)
{
	pfm_activate_ipi(ctx);
}

/**
 * pfm_cpu_pm_save() - save the set live here before the PMU loses its state
 * @pmu: the description whose PMU is about to lose its registers
 *
 * For a CPU entering a power state that does not keep the PMU
 * (CPU_PM_ENTER).  Counting stops and the live set's registers are
 * saved in the set; the context stays live here, so that no other CPU
 * works on it meanwhile (a core call waits for this CPU, whose
 * interrupts are off) and it cannot be freed.  The core's view
 * (counting, durations, set switching) is left as it was: the power
 * state is invisible to it.  pfm_cpu_pm_restore() puts the set back.
 *
 * Context: interrupts disabled, on the CPU concerned, from its CPU PM
 * notifier.
 */
void pfm_cpu_pm_save(struct pfm_pmu_config *pmu)
{
	struct pfm_context *ctx = this_cpu_read(pfm_cpu_ctx);

	lockdep_assert_irqs_disabled();
	if (!ctx || ctx->pmu->conf != pmu)
		return;
	raw_spin_lock(&ctx->lock);
	if (ctx->counting)
		pmu->ops->stop(pmu, ctx->vpmu);
	pfm_set_save_hw(ctx, ctx->active_set);
	raw_spin_unlock(&ctx->lock);
}
EXPORT_SYMBOL_GPL(pfm_cpu_pm_save);

/**
 * pfm_cpu_pm_restore() - reload the set saved by pfm_cpu_pm_save()
 * @pmu: the description, its per-CPU setup (@cpu_setup's state) redone
 *
 * For a CPU back from a power state (CPU_PM_EXIT), or that failed to
 * enter it (CPU_PM_ENTER_FAILED): the live set's registers and driver
 * settings are written again and counting resumes if it ran.
 *
 * Context: interrupts disabled, on the CPU concerned, from its CPU PM
 * notifier.
 */
void pfm_cpu_pm_restore(struct pfm_pmu_config *pmu)
{
	struct pfm_context *ctx = this_cpu_read(pfm_cpu_ctx);

	lockdep_assert_irqs_disabled();
	if (!ctx || ctx->pmu->conf != pmu)
		return;
	raw_spin_lock(&ctx->lock);
	pfm_set_load_hw(ctx, ctx->active_set);
	if (ctx->pmu->cfg->num)
		pmu->ops->load_cfg(pmu, ctx->vpmu, ctx->drv_cfg);
	if (ctx->counting)
		pmu->ops->start(pmu, ctx->vpmu);
	raw_spin_unlock(&ctx->lock);
}
EXPORT_SYMBOL_GPL(pfm_cpu_pm_restore);
