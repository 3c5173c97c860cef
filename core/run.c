// SPDX-License-Identifier: GPL-2.0
/*
 * Running a call on a context: its preparation, its core entry point
 * where the context's set is live, its end (pfm_call(), with the
 * call's struct pfm_op: core/calls.c, or a core file's own).
 *
 * Only the CPU where the set is live touches its PMU (core/ctxsw.c), so
 * a call that needs the registers first saves them: the core entry
 * point runs on the live CPU (by IPI when it is another one) between a
 * sched_out and a sched_in, with ctx->lock held throughout.  The
 * frequent calls a monitor makes while counting (read, start, stop) run
 * in place instead (struct pfm_op's in_place): on the live CPU, the set
 * left live, so they cost a few register accesses, not a save and a
 * reload of every register.
 */
#include <linux/lockdep.h>
#include <linux/smp.h>

#include "perfmon.h"

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
