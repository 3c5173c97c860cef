// SPDX-License-Identifier: GPL-2.0
/*
 * Overflow interrupt throttling, perfmon's answer to a counter reloaded
 * with a tiny period (perf's perf_event_max_sample_rate).  Each CPU
 * counts the overflow interrupts it handled in the current tick.  Past
 * max_ovfl_rate / HZ interrupts the context whose interrupt went over is
 * throttled: its counters stop (here, and
 * wherever its thread runs next), the monitor reads PFM_MSG_THROTTLE,
 * and a tick later counting resumes by itself.  A throttled context
 * then costs at most about one tick's worth of interrupts per two
 * ticks, whoever its creator is; its periods and values are untouched,
 * and the events of the throttled tick are not counted (as with perf),
 * nor is its time in the set's duration.
 *
 * Only one context is live on a CPU at a time, so a per-CPU bound is a
 * bound on that context.  The interrupts are counted, not timed (perf
 * also bounds their share of the CPU, perf_cpu_time_max_percent): under
 * emulation a handler's time says little, and a bound by time would
 * throttle ordinary sampling there.  On x86 the interrupt is an NMI, where no
 * hrtimer may be started: a hard irq_work on the same CPU starts it.
 */
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/percpu.h>
#include <linux/smp.h>

#include "perfmon.h"

/* Interrupts per second per CPU (sysfs max_ovfl_rate); 0: no limit. */
unsigned int pfm_max_ovfl_rate = 100000;

/* This CPU's overflow interrupts in the tick @tick. */
struct pfm_throttle_cpu {
	unsigned long tick;
	unsigned int count;
};

static DEFINE_PER_CPU(struct pfm_throttle_cpu, pfm_throttle_cpu);

/* Account one interrupt; true when this CPU is past the rate. */
static bool pfm_throttle_count(void)
{
	struct pfm_throttle_cpu *t = this_cpu_ptr(&pfm_throttle_cpu);
	unsigned int rate = READ_ONCE(pfm_max_ovfl_rate);
	unsigned long now = jiffies;

	if (!rate)
		return false;
	if (t->tick != now) {
		t->tick = now;
		t->count = 0;
	}
	return ++t->count > DIV_ROUND_UP(rate, HZ);
}

/**
 * pfm_throttle_check() - throttle @ctx if this CPU takes too many
 *                        overflow interrupts
 * @ctx: the context whose interrupt this was, locked, live here
 *
 * Context: the overflow interrupt (an NMI on x86).
 * Return: a message was queued: the caller wakes the readers.
 */
bool pfm_throttle_check(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	if (!pfm_throttle_count() || ctx->throttled)
		return false;
	ctx->throttled = true;
	ctx->throttles++;
	pfm_ctx_halt(ctx);
	/* Runs on this CPU before the context can be freed (irq_work_sync). */
	irq_work_queue(&ctx->throttle_iw);
	return pfm_msg_post_throttle(ctx);
}

/* After the NMI: the tick of throttling starts here. */
static void pfm_throttle_arm(struct irq_work *iw)
{
	struct pfm_context *ctx = container_of(iw, struct pfm_context,
					       throttle_iw);

	hrtimer_start(&ctx->throttle_timer, ns_to_ktime(TICK_NSEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/* Resume here if the context is live here (pfm_ctx_resume() decides). */
static void pfm_unthrottle_here(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	if (ctx->live_cpu == smp_processor_id())
		pfm_ctx_resume(ctx);
}

/* The IPI of pfm_unthrottle_fn(), on the CPU the set was live on. */
static void pfm_unthrottle_ipi(void *arg)
{
	struct pfm_context *ctx = arg;

	raw_spin_lock(&ctx->lock);
	pfm_unthrottle_here(ctx);
	raw_spin_unlock(&ctx->lock);
	pfm_ctx_put_async(ctx);
}

/*
 * A tick has passed: count again, on the CPU the set is live on.  The
 * timer fires where the interrupt was; a thread may have moved since,
 * and a thread alone on its CPU switches no more: an IPI resumes it
 * there, holding a reference (the free of a context cancels this
 * timer first, so a context found here with none left is going).
 */
static enum hrtimer_restart pfm_unthrottle_fn(struct hrtimer *timer)
{
	struct pfm_context *ctx = container_of(timer, struct pfm_context,
					       throttle_timer);
	unsigned int throttles;
	int cpu;

	raw_spin_lock(&ctx->lock);
	ctx->throttled = false;
	throttles = ctx->throttles;
	cpu = ctx->live_cpu;
	if (cpu == smp_processor_id()) {
		pfm_unthrottle_here(ctx);
	} else if (cpu >= 0 && refcount_inc_not_zero(&ctx->refs)) {
		/* -EBUSY: one is on its way with its reference; -ENXIO: offline. */
		if (smp_call_function_single_async(cpu, &ctx->unthrottle_csd))
			pfm_ctx_put_async(ctx);
	}
	raw_spin_unlock(&ctx->lock);
	if (throttles == 1)
		pr_info_ratelimited("perfmon: a context took over max_ovfl_rate (%u/s) overflow interrupts on CPU %d and paused for a tick; for more, write a higher rate (or 0) to /sys/kernel/perfmon/max_ovfl_rate\n",
				    READ_ONCE(pfm_max_ovfl_rate),
				    smp_processor_id());
	return HRTIMER_NORESTART;
}

/**
 * pfm_throttle_init() - set up the throttling of a new context
 * @ctx: the context
 */
void pfm_throttle_init(struct pfm_context *ctx)
{
	hrtimer_init(&ctx->throttle_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_PINNED_HARD);
	ctx->throttle_timer.function = pfm_unthrottle_fn;
	ctx->throttle_iw = IRQ_WORK_INIT_HARD(pfm_throttle_arm);
	INIT_CSD(&ctx->unthrottle_csd, pfm_unthrottle_ipi, ctx);
}

/**
 * pfm_throttle_exit() - no throttling callback runs after it returns
 * @ctx: the context, being freed (no reference left: no IPI queued)
 *
 * Context: process context.
 */
void pfm_throttle_exit(struct pfm_context *ctx)
{
	irq_work_sync(&ctx->throttle_iw);
	hrtimer_cancel(&ctx->throttle_timer);
}
