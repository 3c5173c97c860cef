// SPDX-License-Identifier: GPL-2.0
/*
 * Counting on a loaded context: start, stop, and restart after an
 * overflow notification masked it.
 */
#include <linux/sched.h>
#include <linux/wait.h>

#include "perfmon.h"

/**
 * __pfm_start() - start counting on a loaded context
 * @ctx: the context, locked, live here or saved (an in-place call)
 * @a: a->start: start_set, the set to count with
 *
 * Starting another set than the active one saves the live set first.
 *
 * Return: 0; -EBADFD before creation; -EINVAL unloaded, unknown set or
 * reserved field; -EBUSY masked (PFM_RESTART first).
 */
int __pfm_start(struct pfm_context *ctx, struct pfm_args *a)
	__must_hold(&ctx->lock)
{
	const struct pfarg_start *req = a->start;
	struct pfm_event_set *set;

	lockdep_assert_held(&ctx->lock);
	switch (ctx->state) {
	case PFM_CTX_NEW:
		return -EBADFD;
	case PFM_CTX_LOADED:
		break;
	case PFM_CTX_MASKED:
		return -EBUSY;
	default:
		return -EINVAL;
	}
	if (req->start_reserved1 || req->start_reserved2 ||
	    memchr_inv(req->reserved3, 0, sizeof(req->reserved3)))
		return -EINVAL;
	set = pfm_find_set(ctx, req->start_set);
	if (!set)
		return -EINVAL;
	if (set != ctx->active_set) {
		if (pfm_ctx_live_here(ctx))
			pfm_ctx_sched_out(ctx);
		pfm_set_activate(ctx, set);
	}
	ctx->started = true;
	if (pfm_ctx_live_here(ctx))
		pfm_ctx_resume(ctx);
	pfm_upage_update(ctx);
	return 0;
}

/**
 * __pfm_stop() - stop counting; the counts stay as they are
 * @ctx: the context, locked, live here or saved (an in-place call)
 * @a: none
 *
 * Return: 0; -EBADFD before creation; -EINVAL unloaded.
 */
int __pfm_stop(struct pfm_context *ctx, struct pfm_args *a)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	switch (ctx->state) {
	case PFM_CTX_NEW:
		return -EBADFD;
	case PFM_CTX_LOADED:
	case PFM_CTX_MASKED:
		ctx->started = false;
		if (pfm_ctx_live_here(ctx))
			pfm_ctx_halt(ctx);
		pfm_upage_update(ctx);
		return 0;
	default:
		return -EINVAL;
	}
}

/* Reload the notifying PMDs with their long reset values; switch if due. */
static void pfm_restart_masked(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *set = ctx->active_set;
	unsigned int i;

	for_each_set_bit(i, ctx->restart_pmds, ctx->pmu->max_pmd)
		pfm_pmd_reset(ctx, set, i, true, false);
	bitmap_zero(ctx->restart_pmds, PFM_MAX_PMDS);
	if (ctx->smpl && ctx->smpl->fmt->restart)
		ctx->smpl->fmt->restart(ctx->smpl);
	if (ctx->switch_pending) {
		ctx->switch_pending = false;
		pfm_set_activate(ctx, pfm_next_set(ctx));
		if (ctx->active_set != set)
			pfm_smpl_set_switch(ctx, set->id, ctx->active_set->id);
	}
}

/**
 * __pfm_restart() - resume monitoring masked after an overflow
 * @ctx: the context, locked, saved
 * @a: none
 *
 * The PMDs that notified (and their reg_reset_pmds) restart from their
 * long reset values; the sampling format empties its buffer if it
 * wants; a set switch that fell due while masked happens now.
 *
 * Return: 0; -EBADFD before creation; -EBUSY when not masked (nothing
 * to restart), unloaded included (after the monitored thread ended, as
 * perfmon2 v2.8); -EINVAL closing.
 */
int __pfm_restart(struct pfm_context *ctx, struct pfm_args *a)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	switch (ctx->state) {
	case PFM_CTX_NEW:
		return -EBADFD;
	case PFM_CTX_MASKED:
		pfm_restart_masked(ctx);
		ctx->state = PFM_CTX_LOADED;
		return 0;
	case PFM_CTX_LOADED:
	case PFM_CTX_UNLOADED:
		return -EBUSY;
	default:
		return -EINVAL;
	}
}

/**
 * pfm_restart_end() - let a thread blocked on the notification
 * (PFM_FL_NOTIFY_BLOCK) run, once __pfm_restart() succeeded
 * @ctx: the context, not locked
 * @a: the call
 * @ret: __pfm_restart()'s result
 *
 * Context: process context.
 * Return: @ret.
 */
int pfm_restart_end(struct pfm_context *ctx, struct pfm_args *a, int ret)
{
	if (!ret)
		wake_up_interruptible_all(&ctx->restart_wait);
	return ret;
}
