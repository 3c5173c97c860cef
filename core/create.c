// SPDX-License-Identifier: GPL-2.0
/*
 * A context's life above its object: the parts set up at open and
 * released at the last reference (struct pfm_ctx_ops), and
 * PFM_CREATE_CONTEXT, which gives it the creator's privileges, the PMU
 * description, set 0 and a sampling buffer.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/lockdep.h>
#include <linux/string.h>

#include "perfmon.h"

/* Release the parts of a context no thread or CPU reaches any more. */
static void pfm_ctx_parts_free(struct pfm_context *ctx)
{
	pfm_switch_timer_exit(ctx);
	pfm_throttle_exit(ctx);
	pfm_smpl_buf_free(ctx->smpl);
	pfm_upage_free(ctx);
	if (ctx->vpmu)
		ctx->pmu->ops->ctx_free(ctx->pmu->conf, ctx->vpmu);
}

static const struct pfm_ctx_ops pfm_ctx_parts = {
	.thread_end = pfm_ctx_exit_queue,
	.free = pfm_ctx_parts_free,
};

/**
 * pfm_context_alloc() - allocate a context in state NEW, with its parts
 * @kcompl: NULL for a user's context (an open file); for the kernel
 *          API's, its owner's completion, completed at each wake-up
 *
 * Return: the context (one reference), or an ERR_PTR: -ENOMEM, or
 * -EMFILE when the caller's uid reached the per-user limit.
 */
struct pfm_context *pfm_context_alloc(struct completion *kcompl)
{
	struct pfm_context *ctx = pfm_ctx_alloc(&pfm_ctx_parts, kcompl);

	if (IS_ERR(ctx))
		return ctx;
	pfm_msg_init(ctx);
	pfm_block_init(ctx);
	pfm_switch_timer_init(ctx);
	pfm_throttle_init(ctx);
	pfm_ctx_exit_init(ctx);
	return ctx;
}

/*
 * What PFM_CREATE_CONTEXT prepares before the lock, for the commit to
 * take (what it leaves, the call frees), and the request.
 */
struct pfm_create_state {
	const struct pfarg_ctx *req;
	struct pfm_pmu *pmu;
	struct pfm_event_set *set0;
	struct pfm_smpl_buf *smpl;
	void *vpmu;
	u32 priv;
	bool exec_priv;
};

/* The sampling buffer a creation asks for: NULL for none, or an ERR_PTR. */
static struct pfm_smpl_buf *pfm_create_smpl(const struct pfm_create_args *c,
					    u32 ctx_flags)
{
	if (!c || !c->fmt_name || !c->fmt_name[0])
		return c && (c->fmt_arg || c->fmt_arg_size) ?
		       ERR_PTR(-EINVAL) : NULL;
	return pfm_smpl_buf_create(c->fmt_name, c->fmt_arg, c->fmt_arg_size,
				   ctx_flags, c->charge);
}

/* Free what a creation prepared and the commit did not take. */
static void pfm_create_state_free(struct pfm_create_state *cs)
{
	pfm_smpl_buf_free(cs->smpl);
	if (cs->set0)
		pfm_event_set_free(cs->set0);
	if (cs->vpmu)
		cs->pmu->ops->ctx_free(cs->pmu->conf, cs->vpmu);
	if (cs->pmu)
		pfm_pmu_put(cs->pmu);
}

/* The dmesg line of a creation that found no PMU description. */
static void pfm_create_no_pmu(const struct pfm_context *ctx)
{
	if (ctx->kernel)
		pr_info_ratelimited("pfmk_create_context: no PMU description registered, and the kernel API loads none: load the module for this CPU, pfm_perf or pfm_soft first\n");
	else
		pr_info_ratelimited("no PMU description registered, none loaded (perfmon.pmu=%s): load the module for this CPU, pfm_perf or pfm_soft\n",
				    pfm_pmu_choice_name());
}

/**
 * pfm_create_prepare() - the creator's privileges, the PMU description,
 * set 0, a virtual description's state and the sampling buffer of a
 * creation
 * @ctx: the context, not locked
 * @cs: the state: req in (the flags), the rest out; freed by the caller
 *      (pfm_create_state_free()), also on failure
 * @fmt: the sampling format; NULL: none
 *
 * With no PMU description registered, a user context loads the one
 * perfmon.pmu names (pfm_pmu_get_or_load()); a kernel API one never
 * loads a module and fails (it may run in a module's init, where loading
 * one can deadlock).  A user context gets its creator's privileges now
 * (pfm_perm_grant()), a kernel API one all of them.
 *
 * Context: process context; may sleep.
 * Return: 0; -EACCES at paranoid level 3 without CAP_PERFMON; -ENODEV
 * without a PMU description; -ENOMEM; as pfm_smpl_buf_create().
 */
static int pfm_create_prepare(struct pfm_context *ctx,
			      struct pfm_create_state *cs,
			      const struct pfm_create_args *fmt)
{
	struct pfm_smpl_buf *smpl;
	int ret;

	/* The creator's privileges, decided now (core/perm.c). */
	if (!ctx->kernel) {
		ret = pfm_perm_create();
		if (ret)
			return ret;
		cs->priv = pfm_perm_grant();
		cs->exec_priv = pfm_perm_exec();
	}
	/* A module's init may create: loading a module there can deadlock. */
	cs->pmu = ctx->kernel ? pfm_pmu_get() : pfm_pmu_get_or_load();
	if (!cs->pmu) {
		pfm_create_no_pmu(ctx);
		return -ENODEV;
	}
	cs->set0 = pfm_event_set_alloc(cs->pmu, 0, cs->priv);
	if (!cs->set0)
		return -ENOMEM;
	if (cs->pmu->ops->ctx_alloc) {
		cs->vpmu = cs->pmu->ops->ctx_alloc(cs->pmu->conf);
		if (!cs->vpmu)
			return -ENOMEM;
	}
	smpl = pfm_create_smpl(fmt, cs->req->ctx_flags);
	if (IS_ERR(smpl))
		return PTR_ERR(smpl);
	cs->smpl = smpl;
	return 0;
}

/**
 * __pfm_create_context() - turn a NEW context into an UNLOADED one
 * @ctx: the context, locked
 * @info: the struct pfm_create_state: the request (the flags); the
 *        description, set 0, its state and buffer prepared, which the
 *        context takes on success
 *
 * Return: 0, -EBUSY when @ctx was already created, -EINVAL for unknown
 * flags or a non-zero reserved field.
 */
static int __pfm_create_context(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	struct pfm_create_state *cs = info;
	const u32 known = PFM_FL_NOTIFY_BLOCK | PFM_FL_SYSTEM_WIDE |
			  PFM_FL_OVFL_NO_MSG;
	const struct pfarg_ctx *req = cs->req;

	lockdep_assert_held(&ctx->lock);
	if (ctx->state != PFM_CTX_NEW)
		return -EBUSY;
	if ((req->ctx_flags & ~known) || req->ctx_reserved1 ||
	    memchr_inv(req->ctx_reserved2, 0, sizeof(req->ctx_reserved2)))
		return -EINVAL;
	/* A system-wide context has no thread to block. */
	if ((req->ctx_flags & PFM_FL_SYSTEM_WIDE) &&
	    (req->ctx_flags & PFM_FL_NOTIFY_BLOCK))
		return -EINVAL;

	ctx->flags = req->ctx_flags;
	ctx->pmu = cs->pmu;
	ctx->smpl = cs->smpl;
	ctx->vpmu = cs->vpmu;
	INIT_WORK(&ctx->resync_work, pfm_vpmu_resync_work);
	list_add(&cs->set0->list, &ctx->sets);
	ctx->nr_sets = 1;
	ctx->sets_duration = 0;
	ctx->active_set = cs->set0;
	ctx->priv = cs->priv;
	ctx->kernel_ips = cs->priv & PFM_PMC_PRIV_KERNEL;
	ctx->exec_priv = cs->exec_priv;
	pfm_cfg_init(ctx);
	ctx->state = PFM_CTX_UNLOADED;
	/* Taken: nothing for pfm_create_state_free() to free. */
	cs->pmu = NULL;
	cs->set0 = NULL;
	cs->smpl = NULL;
	cs->vpmu = NULL;
	return 0;
}

/**
 * pfm_create_context() - PFM_CREATE_CONTEXT: turn a NEW context into an
 * UNLOADED one
 * @ctx: the context, not locked
 * @req: the flags, in kernel memory
 * @fmt: the sampling format; NULL: none
 *
 * What may sleep is prepared first, unlocked; the context takes it
 * under its lock.
 *
 * Context: process context; may sleep.
 * Return: 0; as pfm_create_prepare() and __pfm_create_context().
 */
int pfm_create_context(struct pfm_context *ctx, const struct pfarg_ctx *req,
		       const struct pfm_create_args *fmt)
{
	struct pfm_create_state cs = {
		.req = req,
		.priv = PFM_PMC_PRIV_ALL,
		.exec_priv = true,
	};
	int ret;

	ret = pfm_create_prepare(ctx, &cs, fmt);
	if (!ret)
		ret = pfm_run(ctx, __pfm_create_context, &cs);
	pfm_create_state_free(&cs);
	return ret;
}
