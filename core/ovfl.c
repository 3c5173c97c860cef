// SPDX-License-Identifier: GPL-2.0
/*
 * Counter overflows: the PMU reports each hardware counter wrap, the
 * core extends the counter to 64 bits and acts on a 64-bit overflow
 * (perfmon2's model, Documentation/sampling.rst):
 *  - a PMD without PFM_REGFL_OVFL_NOTIFY is reloaded with its short
 *    reset value (and so are its reg_reset_pmds) and counting goes on;
 *  - a PMD with it is handed to the sampling format when there is one,
 *    which records a sample and says whether to reset, notify or wake;
 *    without a format it notifies;
 *  - a notification queues a PFM_MSG_OVFL (or a wake-up without message)
 *    and masks the context: counting stops until PFM_RESTART, which
 *    reloads the notifying PMDs with their long reset values.  With
 *    PFM_FL_NOTIFY_BLOCK the monitored thread also waits, on its way back
 *    to user space, for that restart;
 *  - triggers start and stop other PMDs; overflow-driven set switching
 *    counts down, and switches (at restart when the context masked).
 */
#include <linux/bitmap.h>
#include <linux/lockdep.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/task_work.h>
#include <linux/timekeeping.h>
#include <asm/ptrace.h>

#include "perfmon.h"
#include "upage.h"

/* The value PMD @pmd is reloaded with, randomized when it asks for it. */
static u64 pfm_pmd_reset_val(struct pfm_context *ctx, const struct pfm_pmd *pmd,
			     bool long_reset)
	__must_hold(&ctx->lock)
{
	u64 val = long_reset ? pmd->long_reset : pmd->short_reset;
	u64 rnd;

	/* perfmon2: randomization lengthens the period by up to the mask. */
	if ((pmd->flags & PFM_REGFL_RANDOM) && pmd->random_mask) {
		rnd = (u64)prandom_u32_state(&ctx->rnd) << 32 |
		      prandom_u32_state(&ctx->rnd);
		val -= rnd & pmd->random_mask;
	}
	return val;
}

/**
 * pfm_pmd_reset() - reload PMD @i and its reg_reset_pmds
 * @ctx: the context, locked
 * @set: the set holding the PMDs
 * @i: the PMD that overflowed
 * @long_reset: long reset values (a restart), else short ones
 * @live: @set is live on this CPU: write the hardware too
 */
void pfm_pmd_reset(struct pfm_context *ctx, struct pfm_event_set *set,
		   unsigned int i, bool long_reset, bool live)
	__must_hold(&ctx->lock)
{
	struct pfm_pmu *pmu = ctx->pmu;
	DECLARE_BITMAP(reset, PFM_MAX_PMDS);
	struct pfm_pmd *pmd;
	unsigned int j;

	lockdep_assert_held(&ctx->lock);
	bitmap_from_arr64(reset, set->pmds[i].reset_pmds, PFM_MAX_PMDS);
	__set_bit(i, reset);
	bitmap_and(reset, reset, set->used_pmds, PFM_MAX_PMDS);
	for_each_set_bit(j, reset, pmu->max_pmd) {
		pmd = &set->pmds[j];
		pmd->value = pfm_pmd_reset_val(ctx, pmd, long_reset);
		pmd->lval = pmd->value;
		/* A held counter takes its value when a trigger releases it. */
		if (live && !test_bit(j, set->held_pmds))
			pmu->ops->write_pmd(pmu->conf, ctx->vpmu, j, pmd->value & pmu->ovfl_mask);
	}
}

/**
 * pfm_rearm_triggers() - hold every PMD named in a start mask of @set
 * @ctx: the context, locked, saved (not live)
 * @set: the set whose PMDs were written
 */
void pfm_rearm_triggers(struct pfm_context *ctx, struct pfm_event_set *set)
	__must_hold(&ctx->lock)
{
	unsigned int i;
	u64 held = 0;

	lockdep_assert_held(&ctx->lock);
	for_each_set_bit(i, set->used_pmds, ctx->pmu->max_pmd)
		held |= set->pmds[i].start_pmds;
	bitmap_from_arr64(set->held_pmds, &held, 64);
}

/* Apply the start and stop masks of the PMDs that overflowed. */
static void pfm_triggers(struct pfm_context *ctx, struct pfm_event_set *set,
			 const unsigned long *ovfl)
	__must_hold(&ctx->lock)
{
	struct pfm_pmu *pmu = ctx->pmu;
	DECLARE_BITMAP(start, 64);
	DECLARE_BITMAP(stop, 64);
	u64 start64 = 0, stop64 = 0;
	unsigned int i;

	for_each_set_bit(i, ovfl, pmu->max_pmd) {
		start64 |= set->pmds[i].start_pmds;
		stop64 |= set->pmds[i].stop_pmds;
	}
	if (!start64 && !stop64)
		return;
	bitmap_from_arr64(start, &start64, 64);
	bitmap_from_arr64(stop, &stop64, 64);
	/* Stops first: a PMD may stop and restart a counter it names. */
	for_each_set_bit(i, stop, 64) {
		if (test_bit(i, set->used_pmds) && !test_bit(i, set->held_pmds)) {
			set->pmds[i].value = pfm_pmd_read_hw(ctx, set, i);
			__set_bit(i, set->held_pmds);
		}
	}
	for_each_set_bit(i, start, 64) {
		if (test_and_clear_bit(i, set->held_pmds))
			pmu->ops->write_pmd(pmu->conf, ctx->vpmu, i,
				       set->pmds[i].value & pmu->ovfl_mask);
	}
}

/*
 * Carry one hardware wrap into the 64-bit value of PMD @i.
 * Return: true when the 64-bit value overflowed.
 */
static bool pfm_pmd_carry(struct pfm_context *ctx, struct pfm_event_set *set,
			  unsigned int i)
{
	struct pfm_pmu *pmu = ctx->pmu;
	struct pfm_pmd *pmd = &set->pmds[i];
	u64 upper;

	/* For a 64-bit wide counter, ovfl_mask + 1 is 0: every wrap counts. */
	upper = (pmd->value & ~pmu->ovfl_mask) + pmu->ovfl_mask + 1;
	pmd->value = upper | (pmu->ops->read_pmd(pmu->conf, ctx->vpmu, i) & pmu->ovfl_mask);
	return !upper;
}

/* Must current, the monitored thread, wait for PFM_RESTART? */
static bool pfm_must_block(struct pfm_context *ctx)
{
	unsigned long flags;
	bool block;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	block = ctx->state == PFM_CTX_MASKED && ctx->task == current;
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	return block;
}

/*
 * Task work of the monitored thread: wait for the restart.  A signal
 * ends the wait (the thread then runs on, masked); an exiting thread
 * never waits.
 */
static void pfm_block_fn(struct callback_head *cb)
{
	struct pfm_context *ctx = container_of(cb, struct pfm_context,
					       block_work);
	unsigned long flags;

	if (!(current->flags & PF_EXITING))
		wait_event_interruptible(ctx->restart_wait,
					 !pfm_must_block(ctx));
	raw_spin_lock_irqsave(&ctx->lock, flags);
	ctx->block_queued = false;
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	pfm_ctx_put_async(ctx);
}

void pfm_block_init(struct pfm_context *ctx)
{
	init_waitqueue_head(&ctx->restart_wait);
	init_task_work(&ctx->block_work, pfm_block_fn);
}

/*
 * PFM_FL_NOTIFY_BLOCK: stop the monitored thread on its way to user
 * space.  Decided here, queued by pfm_block_add() once the lock is
 * dropped: task_work_add() records its caller's stack for KASAN, which
 * may allocate (6.1), and an allocation under a raw lock is invalid
 * (PREEMPT_RT; lockdep's raw lock nesting check says so).
 */
static void pfm_block_queue(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	if (!(ctx->flags & PFM_FL_NOTIFY_BLOCK) || ctx->block_queued ||
	    ctx->task != current || (current->flags & PF_KTHREAD))
		return;
	/* Live here: another reference holds it, this one cannot be last. */
	pfm_ctx_get(ctx);
	ctx->block_queued = true;
	ctx->block_add = true;
}

/* The queue pfm_block_queue() decided; @ctx live here, unlocked. */
static void pfm_block_add(struct pfm_context *ctx)
{
	if (!task_work_add(current, &ctx->block_work, TWA_RESUME))
		return;
	raw_spin_lock(&ctx->lock);	/* exiting: nothing to block */
	ctx->block_queued = false;
	raw_spin_unlock(&ctx->lock);
	refcount_dec(&ctx->refs);
}

/* Notify the monitor about @notify and mask the context until restart. */
static void pfm_notify(struct pfm_context *ctx, const unsigned long *notify,
		       const unsigned long *restart, u64 ip)
	__must_hold(&ctx->lock)
{
	pfm_msg_post_ovfl(ctx, notify, ip);
	bitmap_or(ctx->restart_pmds, ctx->restart_pmds, restart, PFM_MAX_PMDS);
	if (ctx->state == PFM_CTX_LOADED) {
		ctx->state = PFM_CTX_MASKED;
		pfm_ctx_halt(ctx);
	}
	pfm_block_queue(ctx);
}

/* The per-overflow decisions of one interrupt. */
struct pfm_ovfl_plan {
	DECLARE_BITMAP(reset, PFM_MAX_PMDS);	/* short reset now */
	DECLARE_BITMAP(notify, PFM_MAX_PMDS);	/* in the message */
	DECLARE_BITMAP(restart, PFM_MAX_PMDS);	/* long reset at restart */
	bool wake;
};

/* Decide what each overflowed PMD needs; the format records samples. */
static void pfm_ovfl_plan(struct pfm_context *ctx, struct pfm_event_set *set,
			  const unsigned long *ovfl, u64 ip,
			  struct pt_regs *regs, struct pfm_ovfl_plan *p)
	__must_hold(&ctx->lock)
{
	/* CLOCK_MONOTONIC, the control page's clock, NMI-safe and cheap. */
	u64 now = ctx->smpl ? ktime_get_mono_fast_ns() : 0;
	unsigned int i;
	u32 ctl;

	for_each_set_bit(i, ovfl, ctx->pmu->max_pmd) {
		if (!(set->pmds[i].flags & PFM_REGFL_OVFL_NOTIFY))
			ctl = PFM_FMT_RESET;
		else if (ctx->smpl)
			ctl = pfm_smpl_record(ctx, set, i, ip, regs, now);
		else
			ctl = PFM_FMT_NOTIFY;
		if (ctl & PFM_FMT_RESET)
			__set_bit(i, p->reset);
		if (ctl & PFM_FMT_NOTIFY) {
			__set_bit(i, p->notify);
			if (!(ctl & PFM_FMT_RESET))
				__set_bit(i, p->restart);
		}
		if (ctl & PFM_FMT_WAKE)
			p->wake = true;
	}
}

/* The longest period a frequency asks for: 2^62 events. */
#define PFM_FREQ_PERIOD_MAX	BIT_ULL(62)

/*
 * The period after @period, whose overflows came at @want's rate.  Until
 * settled, a factor of 8 a step at most: one period's time can be as
 * wrong as local_clock() between two ticks (see pfm_freq_untimed()), and
 * a first guess of 1 still settles in a few overflows.  Settled, an
 * eighth of the way (down, that is under an eighth of the period), up
 * by an eighth of the period at most, or by the period at most when the
 * period before asked for at least twice itself too.
 */
static u64 pfm_freq_step(struct pfm_pmd *pmd, u64 period, u64 want)
{
	u64 step, max_step;

	if (period && want / 2 <= period && want >= period / 2)
		pmd->freq_settled = true;
	if (!period)
		return want;
	if (!pmd->freq_settled)
		return clamp(want, max(period / 8, 1ULL),
			     min(period, PFM_FREQ_PERIOD_MAX / 8) * 8);
	/* An eighth of the way, rounded up: a short period must move too. */
	if (want <= period) {
		pmd->freq_high = false;
		return period - DIV_ROUND_UP(period - want, 8);
	}
	step = DIV_ROUND_UP(want - period, 8);
	/*
	 * Up by an eighth of the period at most, unless the period before
	 * asked for at least twice itself too: a period timed short by a
	 * clock that stood still partway (its few ns ask for any number of
	 * events) must move it up no further than the next, timed long
	 * across the clock's jump, moves it down.  Two in a row are a rate:
	 * up to a doubling.
	 */
	max_step = pmd->freq_high ? period : DIV_ROUND_UP(period, 8);
	pmd->freq_high = want / 2 >= period;
	return period + min(step, max_step);
}

/* @period as PMD @pmd's next: both reset values. */
static void pfm_freq_set(struct pfm_pmd *pmd, u64 period)
{
	pmd->long_reset = -period;
	pmd->short_reset = pmd->long_reset;
}

/*
 * The overflow of a period the set's clock did not see pass: it is
 * timed with the next one.  local_clock() stands still when its CPU's
 * tick is late: x86 without a stable TSC (QEMU's) holds it at the last
 * tick's time plus one tick until the next.  A first guess grows
 * meanwhile, or a period of 1 would take a sample per event until the
 * tick came (up to 800 a ms of system calls under TCG).
 */
static void pfm_freq_untimed(struct pfm_pmd *pmd, u64 period, u64 events)
{
	pmd->freq_events += events;
	if (pmd->freq_settled || !period || period > PFM_FREQ_PERIOD_MAX / 2)
		return;
	pfm_freq_set(pmd, period * 2);
}

/*
 * PFM_REGFL_FREQ: choose PMD @i's next period from the events since the
 * last timed overflow (the reset values', plus those counted past each
 * wrap before its interrupt) and the ns its set counted meanwhile, so
 * that overflows come at pmd->freq per second of counting.  The first
 * overflow only sets the clock's mark.  Until a new period falls within
 * a factor of 2 of the current one, it moves by up to a factor of 8 a
 * step, so that a first guess of 1 settles in a few overflows.  From
 * then on, as perf's perf_adjust_period(), the period moves an eighth
 * of the way (pfm_freq_step() says how far at most): one period's
 * timing is noisy, and a period timed across a stall of the counting
 * thread (33 ms under TCG, 66 periods at 2000 Hz) must not set the next
 * one to a 66th.
 */
static void pfm_freq_adjust(struct pfm_context *ctx, struct pfm_event_set *set,
			    unsigned int i)
	__must_hold(&ctx->lock)
{
	struct pfm_pmd *pmd = &set->pmds[i];
	u64 now = set->duration, period = -pmd->short_reset;
	u64 events = pmd->value - pmd->lval, ns, div, want;

	lockdep_assert_held(&ctx->lock);
	if (ctx->counting)
		now += local_clock() - ctx->live_since;
	if (!pmd->freq_stamp) {
		pmd->freq_stamp = now ?: 1;
		return;
	}
	if (now <= pmd->freq_stamp) {
		pfm_freq_untimed(pmd, period, events);
		return;
	}
	events += pmd->freq_events;
	pmd->freq_events = 0;
	ns = now - pmd->freq_stamp;
	pmd->freq_stamp = now;
	/* Days without an overflow: too long a time to learn a rate from. */
	if (ns > div_u64(U64_MAX, pmd->freq))
		return;
	div = ns * pmd->freq;
	/* x86's mul_u64_u64_div_u64() traps on a quotient above 64 bits. */
	if (div64_u64(events, div) >= U64_MAX / NSEC_PER_SEC)
		want = PFM_FREQ_PERIOD_MAX;
	else
		want = mul_u64_u64_div_u64(events, NSEC_PER_SEC, div);
	want = clamp_t(u64, want, 1, PFM_FREQ_PERIOD_MAX);
	pfm_freq_set(pmd, pfm_freq_step(pmd, period, want));
}

/* Count down overflow-driven set switching; true when it falls due. */
static bool pfm_ovfl_switch_due(struct pfm_event_set *set,
				const unsigned long *ovfl, unsigned int max)
{
	struct pfm_pmd *pmd;
	bool due = false;
	unsigned int i;

	if (!(set->flags & PFM_SETFL_OVFL_SWITCH))
		return false;
	for_each_set_bit(i, ovfl, max) {
		pmd = &set->pmds[i];
		if (pmd->ovflsw_thres && pmd->ovflsw_left && !--pmd->ovflsw_left)
			due = true;
	}
	return due;
}

/*
 * Act on the 64-bit overflows @ovfl of the live set; @ip is what samples
 * and messages show, @regs (or NULL) where call chains start.
 * Return: true when readers must be woken (after the lock is dropped).
 */
static bool pfm_overflow(struct pfm_context *ctx, struct pfm_event_set *set,
			 const unsigned long *ovfl, u64 ip,
			 struct pt_regs *regs)
	__must_hold(&ctx->lock)
{
	struct pfm_ovfl_plan p = {};
	unsigned int i;
	bool masked;

	bitmap_copy(set->ovfl_pmds, ovfl, PFM_MAX_PMDS);
	pfm_ovfl_plan(ctx, set, ovfl, ip, regs, &p);
	for_each_set_bit(i, ovfl, ctx->pmu->max_pmd)
		if (set->pmds[i].flags & PFM_REGFL_FREQ)
			pfm_freq_adjust(ctx, set, i);
	for_each_set_bit(i, p.reset, ctx->pmu->max_pmd)
		pfm_pmd_reset(ctx, set, i, false, true);
	pfm_triggers(ctx, set, ovfl);
	if (!bitmap_empty(p.notify, PFM_MAX_PMDS)) {
		pfm_notify(ctx, p.notify, p.restart, ip);
		p.wake = true;
	} else if (p.wake) {
		pfm_msg_post_wake(ctx);
	}
	masked = ctx->state == PFM_CTX_MASKED;
	if (pfm_ovfl_switch_due(set, ovfl, ctx->pmu->max_pmd)) {
		if (masked)
			ctx->switch_pending = true;
		else if (ctx->counting)
			pfm_switch_sets(ctx);
	}
	return p.wake;
}

/*
 * The instruction pointer a sample or message shows: a kernel address
 * only to a monitor that may see them (as perf's exclude_kernel rule).
 */
static u64 pfm_sample_ip(struct pfm_context *ctx, struct pt_regs *regs)
{
	if (!regs || (!user_mode(regs) && !ctx->kernel_ips))
		return 0;
	return instruction_pointer(regs);
}

/**
 * pfm_interrupt() - a PMU reports counter wraps on this CPU
 * @ovfl_pmds: bitmap of the PMDs that wrapped, as many bits as the
 *             description has PMD entries (PFM_MAX_PMDS at most; none
 *             past its last is read); empty when the interrupt only
 *             reprogrammed counters under the PMDs (pfm_perf): the
 *             control page is rewritten all the same
 * @regs: registers at the interrupt (samples and messages take the
 *        instruction pointer from them), or NULL when not known
 *
 * Called by PMU descriptions from their overflow interrupt (or its
 * emulation), on the CPU whose counters wrapped.
 *
 * Context: interrupts disabled; not from NMI.
 */
void pfm_interrupt(const unsigned long *ovfl_pmds, struct pt_regs *regs)
{
	DECLARE_BITMAP(ovfl64, PFM_MAX_PMDS);
	struct pfm_event_set *set;
	struct pfm_context *ctx;
	bool wake = false, block;
	unsigned int i;
	u64 t0;

	lockdep_assert_irqs_disabled();
	/*
	 * Live here, so it cannot be freed: that needs this CPU first (an
	 * IPI, or the thread switched out), and interrupts are off.
	 */
	ctx = pfm_ctx_current();
	if (!ctx)
		return;
	t0 = local_clock();
	raw_spin_lock(&ctx->lock);
	if (ctx->live_cpu != smp_processor_id())
		goto unlock;
	set = ctx->active_set;
	bitmap_zero(ovfl64, PFM_MAX_PMDS);
	for_each_set_bit(i, ovfl_pmds, ctx->pmu->max_pmd) {
		if (test_bit(i, set->used_pmds) &&
		    test_bit(i, ctx->pmu->cnt_pmds) &&
		    !test_bit(i, set->held_pmds) && pfm_pmd_carry(ctx, set, i))
			__set_bit(i, ovfl64);
	}
	if (!bitmap_empty(ovfl64, PFM_MAX_PMDS))
		wake = pfm_overflow(ctx, set, ovfl64, pfm_sample_ip(ctx, regs),
				    regs);
	if (pfm_throttle_check(ctx))
		wake = true;
	/* Carried upper bits, reloaded counters, a halt: all in the page. */
	pfm_upage_update(ctx);
unlock:
	block = ctx->block_add;
	ctx->block_add = false;
	raw_spin_unlock(&ctx->lock);
	if (block)
		pfm_block_add(ctx);
	pfm_irqoff_note(t0);
	/* Not here: wake-ups take locks that sleep on PREEMPT_RT. */
	if (wake)
		pfm_msg_wake_irq(ctx);
}
EXPORT_SYMBOL_GPL(pfm_interrupt);
