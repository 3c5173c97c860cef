// SPDX-License-Identifier: GPL-2.0
/*
 * Counting on a loaded context: start, stop, and restart after an
 * overflow notification masked it.
 */
#include <linux/sched.h>
#include <linux/wait.h>

#include "perfmon.h"
#include "upage.h"

/**
 * __pfm_start() - start counting on a loaded context
 * @ctx: the context, locked, live here or saved (an in-place call)
 * @info: the struct pfarg_start: start_set, the set to count with
 *
 * Starting another set than the active one saves the live set first.
 *
 * Return: 0; -EBADFD before creation; -EINVAL unloaded, unknown set or
 * reserved field; -EBUSY masked (PFM_RESTART first).
 */
static int __pfm_start(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	const struct pfarg_start *req = info;
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
 * pfm_start() - PFM_START: start counting on a loaded context
 * @ctx: the context, not locked
 * @req: start_set, the set to count with, in kernel memory; only read
 *
 * In place: the live set starts where it is.
 *
 * Context: process context.
 * Return: as __pfm_start().
 */
int pfm_start(struct pfm_context *ctx, const struct pfarg_start *req)
{
	return pfm_run_in_place(ctx, __pfm_start, (void *)req);
}

/**
 * __pfm_stop() - stop counting; the counts stay as they are
 * @ctx: the context, locked, live here or saved (an in-place call)
 * @info: none
 *
 * Return: 0; -EBADFD before creation; -EINVAL unloaded.
 */
static int __pfm_stop(struct pfm_context *ctx, void *info)
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

/**
 * pfm_stop() - PFM_STOP: stop counting; the counts stay as they are
 * @ctx: the context, not locked
 *
 * In place, as pfm_start().
 *
 * Context: process context.
 * Return: as __pfm_stop().
 */
int pfm_stop(struct pfm_context *ctx)
{
	return pfm_run_in_place(ctx, __pfm_stop, NULL);
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
 * @info: none
 *
 * The PMDs that notified (and their reg_reset_pmds) restart from their
 * long reset values; the sampling format empties its buffer if it
 * wants; a set switch that fell due while masked happens now.
 *
 * Return: 0; -EBADFD before creation; -EBUSY when not masked (nothing
 * to restart), unloaded included (after the monitored thread ended, as
 * perfmon2 v2.8); -EINVAL closing.
 */
static int __pfm_restart(struct pfm_context *ctx, void *info)
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
 * pfm_restart() - PFM_RESTART: resume monitoring masked after an overflow
 * @ctx: the context, not locked
 *
 * On the set saved (the PMDs that notified are reset); then a thread
 * blocked on the notification (PFM_FL_NOTIFY_BLOCK) may run.
 *
 * Context: process context.
 * Return: as __pfm_restart().
 */
int pfm_restart(struct pfm_context *ctx)
{
	int ret = pfm_run(ctx, __pfm_restart, NULL);

	if (!ret)
		wake_up_interruptible_all(&ctx->restart_wait);
	return ret;
}
