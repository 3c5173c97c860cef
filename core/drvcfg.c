// SPDX-License-Identifier: GPL-2.0
/*
 * Driver settings (PFM_SET_DRV_CONFIG, PFM_GET_DRV_CONFIG): PMU-specific
 * values that do not fit a PMC, carried by the context.
 *
 * The description validates every entry in the caller's context, before
 * anything changes; then the values are applied at once under the
 * context lock, where the context is live (pfm_run() saves and
 * reloads it, and the reload puts them in force).  No generation count
 * is needed: the context lock already orders the change against every
 * sched in.  A refused entry leaves all settings as they were.
 */
#include <linux/lockdep.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "perfmon.h"

/* The description and flags of a created context, or -EBADFD. */
static int pfm_cfg_ctx(struct pfm_context *ctx,
		       struct pfm_pmu **pmu, u32 *ctx_flags)
{
	unsigned long flags;
	int ret;

	/* Both are fixed once the context is created. */
	raw_spin_lock_irqsave(&ctx->lock, flags);
	ret = pfm_check_created(ctx);
	*pmu = ctx->pmu;
	*ctx_flags = ctx->flags;
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	return ret;
}

static u32 pfm_cfg_entry_check(const struct pfm_pmu *pmu,
			       const struct pfarg_drv_cfg *req, bool set,
			       u32 ctx_flags)
{
	if (req->cfg_reserved1 || (req->cfg_flags & ~PFM_REG_RETFL_MASK) ||
	    memchr_inv(req->cfg_reserved2, 0, sizeof(req->cfg_reserved2)))
		return PFM_REG_RETFL_EFLAGS;
	if (req->cfg_num >= pmu->cfg->num)
		return PFM_REG_RETFL_NOTAVAIL;
	if (set && pmu->cfg->check(req->cfg_num, req->cfg_value, ctx_flags))
		return PFM_REG_RETFL_EINVAL;
	return 0;
}

/* Check every entry; a refused one gets its flag and fails the call. */
static int pfm_cfg_check_all(struct pfm_context *ctx,
			     struct pfarg_drv_cfg *req, unsigned int count,
			     bool set)
{
	struct pfm_pmu *pmu;
	unsigned int i;
	u32 flags, err;
	int ret;

	ret = pfm_cfg_ctx(ctx, &pmu, &flags);
	if (ret)
		return ret;
	for (i = 0; i < count; i++) {
		err = pfm_cfg_entry_check(pmu, &req[i], set, flags);
		req[i].cfg_flags = err;
		if (err)
			return -EINVAL;
	}
	return 0;
}

/* Apply the checked settings of a struct pfm_array, on the set saved. */
static int __pfm_set_drv_config(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	const struct pfm_array *arr = info;
	struct pfarg_drv_cfg *req = arr->req;
	unsigned int i;

	lockdep_assert_held(&ctx->lock);
	for (i = 0; i < arr->count; i++)
		ctx->drv_cfg[req[i].cfg_num] = req[i].cfg_value;
	return 0;
}

/**
 * pfm_set_drv_config() - PFM_SET_DRV_CONFIG: change driver settings of
 * a context
 * @ctx: the context, not locked
 * @req: the settings, in kernel memory; cfg_flags of a refused entry
 *       gets PFM_REG_RETFL_*
 * @count: how many, at least 1
 *
 * Every setting is checked before any applies; they apply on the set
 * saved, so that its reload puts them in force; then a virtual
 * description follows.
 *
 * Context: process context; may sleep.
 * Return: 0; -EINVAL when an entry was refused; -EBADFD before
 * PFM_CREATE_CONTEXT; or the description's error.
 */
int pfm_set_drv_config(struct pfm_context *ctx, struct pfarg_drv_cfg *req,
		       unsigned int count)
{
	struct pfm_array arr = { .req = req, .count = count };
	int ret;

	ret = pfm_cfg_check_all(ctx, req, count, true);
	if (ret)
		return ret;
	return pfm_vpmu_finish(ctx, pfm_run(ctx, __pfm_set_drv_config, &arr));
}

/* Read the settings of a struct pfm_array (cfg_num in, cfg_value out). */
static int __pfm_get_drv_config(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	const struct pfm_array *arr = info;
	struct pfarg_drv_cfg *req = arr->req;
	unsigned int i;

	lockdep_assert_held(&ctx->lock);
	for (i = 0; i < arr->count; i++)
		req[i].cfg_value = ctx->drv_cfg[req[i].cfg_num];
	return 0;
}

/**
 * pfm_get_drv_config() - PFM_GET_DRV_CONFIG: read driver settings of a
 * context
 * @ctx: the context, not locked
 * @req: the settings, in kernel memory (cfg_num in, cfg_value out); an
 *       unknown setting is flagged in its entry
 * @count: how many, at least 1
 *
 * In place: the values are the context's, not the PMU's.
 *
 * Context: process context, no lock held.
 * Return: 0; -EINVAL for an unknown setting; -EBADFD before
 * PFM_CREATE_CONTEXT.
 */
int pfm_get_drv_config(struct pfm_context *ctx, struct pfarg_drv_cfg *req,
		       unsigned int count)
{
	struct pfm_array arr = { .req = req, .count = count };
	int ret;

	ret = pfm_cfg_check_all(ctx, req, count, false);
	if (ret)
		return ret;
	return pfm_run_in_place(ctx, __pfm_get_drv_config, &arr);
}

/**
 * pfm_cfg_init() - give a new context the description's default settings
 * @ctx: the context, locked, being created
 */
void pfm_cfg_init(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	const struct pfm_pmu *pmu = ctx->pmu;
	u16 i;

	lockdep_assert_held(&ctx->lock);
	for (i = 0; i < pmu->cfg->num; i++)
		ctx->drv_cfg[i] = pmu->cfg->desc[i].dfl_val;
}
