// SPDX-License-Identifier: GPL-2.0
/*
 * The active set of a context on a CPU's PMU: loading it in (sched_in),
 * saving it out (sched_out), and running a core call on a context
 * wherever its set is live.
 *
 * A context's set is "live" on at most one CPU (ctx->live_cpu): the CPU
 * where the monitored thread runs, or the monitored CPU.  Only that CPU
 * touches its PMU.  Everything else works on the saved copy in the set,
 * so a call that needs the registers first saves them: pfm_call() runs
 * the call's core entry point on the live CPU (by IPI when it is another
 * one) between a sched_out and a sched_in, with ctx->lock held
 * throughout.  The frequent calls a monitor makes while counting (read,
 * start, stop) run in place instead (struct pfm_op's in_place): on the
 * live CPU, the set left live, so they cost a few register accesses, not
 * a save and a reload of every register.
 */
#include <linux/lockdep.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>

#include "perfmon.h"

/* The context live on each CPU's PMU; written by that CPU only. */
static DEFINE_PER_CPU(struct pfm_context *, pfm_cpu_ctx);
/*
 * Its virtual description state (pfm_pmu_live_priv()): set before the
 * set is written in, so that the register ops find it, and cleared
 * with pfm_cpu_ctx.
 */
static DEFINE_PER_CPU(void *, pfm_cpu_vpmu);

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
 * pfm_pmu_live_priv() - a virtual description's state of the live context
 *
 * For the register ops of a description with @ctx_alloc: the state it
 * allocated for the context whose set is live on this CPU (from the
 * start of its sched in to the end of its sched out).
 *
 * Context: interrupts disabled.
 * Return: the state, or NULL when no context is live here.
 */
void *pfm_pmu_live_priv(void)
{
	return this_cpu_read(pfm_cpu_vpmu);
}
EXPORT_SYMBOL_GPL(pfm_pmu_live_priv);

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

/* Read the used PMDs of this CPU's PMU into the set. */
static void pfm_set_save_hw(struct pfm_context *ctx, struct pfm_event_set *set)
{
	unsigned int i;

	for_each_set_bit(i, set->used_pmds, ctx->pmu->max_pmd)
		set->pmds[i].value = pfm_pmd_read_hw(ctx, set, i);
}

/* Counting runs when the context is started, not masked nor throttled. */
static __always_inline void pfm_ctx_resume_hw(struct pfm_context *ctx)
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
	pfm_ctx_resume_hw(ctx);
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
	this_cpu_write(pfm_cpu_vpmu, ctx->vpmu);
	pfm_set_load_hw(ctx, ctx->active_set);
	if (pmu->num_cfg)
		pmu->load_cfg(pmu, ctx->drv_cfg);
	ctx->live_cpu = smp_processor_id();
	this_cpu_write(pfm_cpu_ctx, ctx);
	/* Inline: every context switch of a counting thread passes here. */
	pfm_ctx_resume_hw(ctx);
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
	this_cpu_write(pfm_cpu_vpmu, NULL);
	pfm_upage_update(ctx);
}

/* One run of a call's core entry point, where the context is live. */
struct pfm_run {
	struct pfm_context *ctx;
	const struct pfm_op *op;
	struct pfm_args *args;
	int ret;
	bool ran;
};

/*
 * Run @r here if the context is live here or nowhere (inline: it is the
 * path of every call, the IPI's copy aside).  A call in place
 * may save the set itself (pfm_ctx_sched_out()) when it needs to; the
 * set is made live again after any call that left it saved.
 */
static __always_inline void pfm_run_here(struct pfm_run *r)
{
	struct pfm_context *ctx = r->ctx;
	bool in_place = r->op->in_place;
	bool live = pfm_ctx_live_here(ctx);

	lockdep_assert_held(&ctx->lock);
	if (ctx->live_cpu >= 0 && !live)
		return;		/* moved: the caller tries again */
	if (live && !in_place)
		pfm_ctx_sched_out(ctx);
	r->ret = r->op->fn(ctx, r->args);
	r->ran = true;
	if (live && ctx->live_cpu < 0 && pfm_ctx_wants_cpu(ctx))
		pfm_ctx_sched_in(ctx);
	/*
	 * A saved call may have changed values or the set: unless sched_in
	 * made the set live again (and rewrote the page), show them.  Calls
	 * in place update the page themselves when they change something.
	 */
	if (!in_place && ctx->live_cpu < 0)
		pfm_upage_update(ctx);
}

static void pfm_run_ipi(void *info)
{
	struct pfm_run *r = info;

	raw_spin_lock(&r->ctx->lock);
	pfm_run_here(r);
	raw_spin_unlock(&r->ctx->lock);
}

/*
 * Run @op's core entry point where the context is live: here under
 * ctx->lock, or by IPI on the CPU where the set is; when the context
 * moved meanwhile (the thread migrated), try again.
 */
static int pfm_run(struct pfm_context *ctx, const struct pfm_op *op,
		   struct pfm_args *a)
{
	struct pfm_run r = { .ctx = ctx, .op = op, .args = a };
	unsigned long flags;
	int cpu;

	for (;;) {
		raw_spin_lock_irqsave(&ctx->lock, flags);
		cpu = ctx->live_cpu;
		if (cpu < 0 || cpu == smp_processor_id())
			pfm_run_here(&r);
		raw_spin_unlock_irqrestore(&ctx->lock, flags);
		if (r.ran)
			return r.ret;
		/* Fails only for an offline CPU, which saved the set first. */
		smp_call_function_single(cpu, pfm_run_ipi, &r, 1);
		if (r.ran)
			return r.ret;
	}
}

/**
 * pfm_call() - run a call on a context: prepare, core entry, finish
 * @ctx: the context, not locked
 * @op: the call (core/calls.c, or a core file's own)
 * @a: its arguments, in kernel memory
 *
 * @op->prepare runs first, unlocked.  Then @op->fn runs under ctx->lock
 * with interrupts off, on the CPU where the set is live (by IPI when it
 * is another one): between a sched_out and a sched_in, so on registers
 * saved in the set, or in place (@op->in_place: the set left live, so
 * that the frequent calls a monitor makes while counting cost a few
 * register accesses, not a save and a reload of every register).  A
 * call in place reads live registers through pfm_pmd_read_hw() and
 * updates the control page when it changes what the page shows.  Then
 * @op->finish, unlocked.  A result of -EAGAIN runs it all again, up to
 * @op->tries times in all.
 *
 * Context: process context, no lock held; may sleep when @op has a
 * prepare or finish step.
 * Return: what @op->finish returned, else @op->fn's or @op->prepare's
 * result.
 */
int pfm_call(struct pfm_context *ctx, const struct pfm_op *op,
	     struct pfm_args *a)
{
	unsigned int tries = 0;
	int ret;

	do {
		ret = op->prepare ? op->prepare(ctx, a) : 0;
		if (ret)
			continue;
		ret = pfm_run(ctx, op, a);
		if (op->finish)
			ret = op->finish(ctx, a, ret);
	} while (ret == -EAGAIN && ++tries < op->tries);
	return ret;
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
