// SPDX-License-Identifier: GPL-2.0
/*
 * Running a call's __pfm_* core entry point where the context is live
 * (pfm_run(), pfm_run_in_place(): core/perfmon.h).  Each call is a
 * named function beside its entry point (frontend.h lists them), which
 * does what must sleep before and after the run itself.
 *
 * Only the CPU where the set is live touches its PMU (core/ctxsw.c), so
 * a call that needs the registers first saves them: the entry point
 * runs on the live CPU (by IPI when it is another one) between a
 * sched_out and a sched_in, with ctx->lock held throughout.  The
 * frequent calls a monitor makes while counting (read, start, stop, a
 * PMC write) run in place instead: on the live CPU, the set left live,
 * so they cost a few register accesses, not a save and a reload of
 * every register.
 */
#include <linux/lockdep.h>
#include <linux/smp.h>

#include "perfmon.h"
#include "upage.h"

/* One run of a call's core entry point, where the context is live. */
struct pfm_run {
	struct pfm_context *ctx;
	int (*fn)(struct pfm_context *ctx, void *info);
	void *info;
	int ret;
	bool in_place;
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
	bool in_place = r->in_place;
	bool live = pfm_ctx_live_here(ctx);

	lockdep_assert_held(&ctx->lock);
	if (ctx->live_cpu >= 0 && !live)
		return;		/* moved: the caller tries again */
	if (live && !in_place)
		pfm_ctx_sched_out(ctx);
	if (!live && ctx->hw_unsaved)
		pfm_ctx_pull(ctx);
	/* It may change the saved set: the switch in writes it all. */
	ctx->hw_kept = false;
	r->ret = r->fn(ctx, r->info);
	r->ran = true;
	/* A call in place leaves the set live: no call out on its path. */
	if (live && ctx->live_cpu < 0)
		pfm_ctx_sched_in_wanted(ctx);
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
 * Run @fn where the context is live: here under ctx->lock, or by IPI on
 * the CPU where the set is; when the context moved meanwhile (the
 * thread migrated), again.  Inline in its two callers, so that each
 * has its own pfm_run_here() with @in_place a constant.
 */
static __always_inline int __pfm_run(struct pfm_context *ctx,
				     int (*fn)(struct pfm_context *ctx,
					       void *info),
				     void *info, bool in_place)
{
	struct pfm_run r = {
		.ctx = ctx, .fn = fn, .info = info, .in_place = in_place,
	};
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
 * pfm_run() - run a call's core entry point on the set saved
 * @ctx: the context, not locked
 * @fn: the entry point: ctx->lock held, interrupts off
 * @info: its argument
 *
 * Where the set is live, @fn runs between a pfm_ctx_sched_out() and a
 * pfm_ctx_sched_in(): it works on the registers' values in memory, and
 * the reload writes every register of the set.
 *
 * Context: process context, no lock held.
 * Return: what @fn returned.
 */
int pfm_run(struct pfm_context *ctx,
	    int (*fn)(struct pfm_context *ctx, void *info), void *info)
{
	return __pfm_run(ctx, fn, info, false);
}

/**
 * pfm_run_in_place() - run a call's core entry point on the set as it is
 * @ctx: the context, not locked
 * @fn: the entry point: ctx->lock held, interrupts off
 * @info: its argument
 *
 * The calls a monitor makes while counting (a read, a start, a stop, a
 * PMC write): @fn reads or writes live registers itself (a read through
 * pfm_pmd_read_hw()) and updates the control page when it changes what
 * the page shows; one that needs the set saved saves it
 * (pfm_ctx_sched_out()), and the set is loaded again after it.
 *
 * Context: process context, no lock held.
 * Return: what @fn returned.
 */
int pfm_run_in_place(struct pfm_context *ctx,
		     int (*fn)(struct pfm_context *ctx, void *info),
		     void *info)
{
	return __pfm_run(ctx, fn, info, true);
}
