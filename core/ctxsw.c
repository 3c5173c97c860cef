// SPDX-License-Identifier: GPL-2.0
/*
 * The active set of a context on a CPU's PMU: loading it in (sched_in),
 * saving it out (sched_out), and running a core call on a context
 * wherever its set is live.
 *
 * A context's set is "live" on at most one CPU (ctx->live_cpu): the CPU
 * where the monitored thread runs, or the monitored CPU.  Only that CPU
 * touches its PMU.  Everything else works on the saved copy in the set,
 * so a call that needs the registers first saves them: pfm_ctx_call()
 * runs the call on the live CPU (by IPI when it is another one) between
 * a sched_out and a sched_in, with ctx->lock held throughout.  The
 * frequent calls a monitor makes while counting (read, start, stop) run
 * in place instead (pfm_ctx_call_in_place()): on the live CPU, the set
 * left live, so they cost a few register accesses, not a save and a
 * reload of every register.
 */
#include <linux/lockdep.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>

#include "perfmon.h"

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

/* Write the set into this CPU's PMU; unused counters start at zero. */
static void pfm_set_load_hw(struct pfm_context *ctx, struct pfm_event_set *set)
{
	struct pfm_pmu_config *pmu = ctx->pmu;
	unsigned int i;
	u64 v;

	for_each_set_bit(i, pmu->impl_pmcs, pmu->max_pmc)
		pmu->write_pmc(pmu, i, set->pmcs[i]);
	for_each_set_bit(i, pmu->impl_pmds, pmu->max_pmd) {
		if (pmu->pmd_desc[i].type & PFM_REGT_RO)
			continue;
		v = test_bit(i, set->used_pmds) ? set->pmds[i].value : 0;
		if (test_bit(i, pmu->cnt_pmds))
			v &= pmu->ovfl_mask;
		pmu->write_pmd(pmu, i, v);
	}
}

/**
 * pfm_pmd_read_hw() - the value of PMD @i of the set live on this CPU
 * @ctx: the context, locked, live on this CPU
 * @set: its active set
 * @i: a used PMD
 *
 * A counter's upper bits are the core's: only the implemented ones come
 * from the PMU.  A PMD held by a trigger keeps its saved value.
 *
 * Return: the 64-bit value.
 */
u64 pfm_pmd_read_hw(struct pfm_context *ctx, struct pfm_event_set *set,
		    unsigned int i)
	__must_hold(&ctx->lock)
{
	struct pfm_pmu_config *pmu = ctx->pmu;
	struct pfm_pmd *pmd = &set->pmds[i];
	u64 hw;

	if (test_bit(i, set->held_pmds))
		return pmd->value;
	hw = pmu->read_pmd(pmu, i);
	if (!test_bit(i, pmu->cnt_pmds))
		return hw;
	return (pmd->value & ~pmu->ovfl_mask) | (hw & pmu->ovfl_mask);
}

/* Read the used PMDs of this CPU's PMU into the set. */
static void pfm_set_save_hw(struct pfm_context *ctx, struct pfm_event_set *set)
{
	unsigned int i;

	for_each_set_bit(i, set->used_pmds, ctx->pmu->max_pmd)
		set->pmds[i].value = pfm_pmd_read_hw(ctx, set, i);
}

/* Counting runs when the context is started, not masked nor throttled. */
static __always_inline void __pfm_ctx_resume(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_pmu_config *pmu = ctx->pmu;

	if (ctx->counting || !ctx->started || ctx->state != PFM_CTX_LOADED ||
	    ctx->throttled)
		return;
	ctx->counting = true;
	ctx->live_since = local_clock();
	pmu->start(pmu);
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
	__pfm_ctx_resume(ctx);
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
	struct pfm_pmu_config *pmu = ctx->pmu;

	lockdep_assert_held(&ctx->lock);
	if (WARN_ON_ONCE(ctx->live_cpu >= 0 || this_cpu_read(pfm_cpu_ctx)))
		return;
	pfm_set_load_hw(ctx, ctx->active_set);
	if (pmu->num_cfg)
		pmu->load_cfg(pmu, ctx->drv_cfg);
	ctx->live_cpu = smp_processor_id();
	this_cpu_write(pfm_cpu_ctx, ctx);
	/* Inline: every context switch of a counting thread passes here. */
	__pfm_ctx_resume(ctx);
	pfm_upage_update(ctx);
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
	struct pfm_pmu_config *pmu = ctx->pmu;
	u64 ran;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->counting)
		return;
	pmu->stop(pmu);
	ran = local_clock() - ctx->live_since;
	ctx->active_set->duration += ran;
	ctx->sets_duration += ran;
	pfm_switch_timer_stop(ctx);
	ctx->counting = false;
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
	struct pfm_pmu_config *pmu = ctx->pmu;

	lockdep_assert_held(&ctx->lock);
	if (WARN_ON_ONCE(ctx->live_cpu != smp_processor_id()))
		return;
	pfm_ctx_halt(ctx);
	pfm_set_save_hw(ctx, ctx->active_set);
	/* The next thread on this CPU must not inherit the settings. */
	if (pmu->num_cfg)
		pmu->load_cfg(pmu, NULL);
	ctx->live_cpu = -1;
	this_cpu_write(pfm_cpu_ctx, NULL);
	pfm_upage_update(ctx);
}

/**
 * pfm_ctx_live_here() - is the context's active set live on this CPU?
 * @ctx: the context, locked
 *
 * Context: interrupts disabled.
 * Return: true when its registers are in this CPU's PMU, not in the set.
 */
bool pfm_ctx_live_here(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	return ctx->live_cpu == smp_processor_id();
}

/* One core call to run where the context is live. */
struct pfm_call {
	struct pfm_context *ctx;
	pfm_ctx_fn fn;
	void *arg;
	int ret;
	bool in_place;
	bool ran;
};

/*
 * Run @c here if the context is live here or nowhere.  A call in place
 * may save the set itself (pfm_ctx_sched_out()) when it needs to; the
 * set is made live again after any call that left it saved.
 */
static void pfm_call_here(struct pfm_call *c)
{
	struct pfm_context *ctx = c->ctx;
	bool live = pfm_ctx_live_here(ctx);

	lockdep_assert_held(&ctx->lock);
	if (ctx->live_cpu >= 0 && !live)
		return;		/* moved: the caller tries again */
	if (live && !c->in_place)
		pfm_ctx_sched_out(ctx);
	c->ret = c->fn(ctx, c->arg);
	c->ran = true;
	if (live && ctx->live_cpu < 0 && pfm_ctx_wants_cpu(ctx))
		pfm_ctx_sched_in(ctx);
	/*
	 * A saved call may have changed values or the set: unless sched_in
	 * made the set live again (and rewrote the page), show them.  Calls
	 * in place update the page themselves when they change something.
	 */
	if (!c->in_place && ctx->live_cpu < 0)
		pfm_upage_update(ctx);
}

static void pfm_call_ipi(void *info)
{
	struct pfm_call *c = info;

	raw_spin_lock(&c->ctx->lock);
	pfm_call_here(c);
	raw_spin_unlock(&c->ctx->lock);
}

static int pfm_ctx_run(struct pfm_context *ctx, pfm_ctx_fn fn, void *arg,
		       bool in_place)
{
	struct pfm_call c = {
		.ctx = ctx, .fn = fn, .arg = arg, .in_place = in_place,
	};
	unsigned long flags;
	int cpu;

	for (;;) {
		raw_spin_lock_irqsave(&ctx->lock, flags);
		cpu = ctx->live_cpu;
		if (cpu < 0 || cpu == smp_processor_id())
			pfm_call_here(&c);
		raw_spin_unlock_irqrestore(&ctx->lock, flags);
		if (c.ran)
			return c.ret;
		/* Fails only for an offline CPU, which saved the set first. */
		smp_call_function_single(cpu, pfm_call_ipi, &c, 1);
		if (c.ran)
			return c.ret;
	}
}

/**
 * pfm_ctx_call() - run a core call on a context, wherever it is live
 * @ctx: the context, not locked
 * @fn: the call; runs with ctx->lock held and interrupts disabled, on a
 *      context whose registers are saved in its set
 * @arg: passed to @fn
 *
 * When the set is live on another CPU, @fn runs there by IPI; when the
 * context moved meanwhile (the thread migrated), the call is retried.
 *
 * Context: process context, no lock held.
 * Return: what @fn returned.
 */
int pfm_ctx_call(struct pfm_context *ctx, pfm_ctx_fn fn, void *arg)
{
	return pfm_ctx_run(ctx, fn, arg, false);
}

/**
 * pfm_ctx_call_in_place() - run a core call where the context is live,
 * its set left live
 * @ctx: the context, not locked
 * @fn: the call; runs with ctx->lock held and interrupts disabled, on
 *      the CPU where the set is live (pfm_ctx_live_here()) or anywhere
 *      when it is saved.  It reads live registers through
 *      pfm_pmd_read_hw() and may save the set with pfm_ctx_sched_out()
 *      when it needs more; the set is then made live again after it.
 *      A call that changes what the control page shows updates it
 *      (pfm_upage_update()).
 * @arg: passed to @fn
 *
 * Context: process context, no lock held.
 * Return: what @fn returned.
 */
int pfm_ctx_call_in_place(struct pfm_context *ctx, pfm_ctx_fn fn, void *arg)
{
	return pfm_ctx_run(ctx, fn, arg, true);
}

static void pfm_activate_ipi(void *info)
{
	struct pfm_context *ctx = info;

	raw_spin_lock(&ctx->lock);
	if (ctx->live_cpu < 0 && pfm_ctx_wants_cpu(ctx))
		pfm_ctx_sched_in(ctx);
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
	if (!ctx || ctx->pmu != pmu)
		return;
	raw_spin_lock(&ctx->lock);
	if (ctx->counting)
		pmu->stop(pmu);
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
	if (!ctx || ctx->pmu != pmu)
		return;
	raw_spin_lock(&ctx->lock);
	pfm_set_load_hw(ctx, ctx->active_set);
	if (pmu->num_cfg)
		pmu->load_cfg(pmu, ctx->drv_cfg);
	if (ctx->counting)
		pmu->start(pmu);
	raw_spin_unlock(&ctx->lock);
}
EXPORT_SYMBOL_GPL(pfm_cpu_pm_restore);
