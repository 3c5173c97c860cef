// SPDX-License-Identifier: GPL-2.0
/*
 * The calls both front ends make, on arguments already in kernel memory:
 * the char device (core/dev.c) copies them in and out, the kernel API
 * (kapi/kapi.c) checks its descriptor.  Each one runs the __pfm_* core
 * under the context lock, where the context is live (pfm_ctx_call()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "perfmon.h"

/* The sampling buffer a creation asks for: NULL for none, or an ERR_PTR. */
static struct pfm_smpl_buf *pfm_create_smpl(const struct pfm_create_args *a,
					    u32 ctx_flags)
{
	if (!a->fmt_name || !a->fmt_name[0])
		return a->fmt_arg || a->fmt_arg_size ? ERR_PTR(-EINVAL) : NULL;
	return pfm_smpl_buf_create(a->fmt_name, a->fmt_arg, a->fmt_arg_size,
				   ctx_flags, a->charge);
}

/**
 * pfm_create() - PFM_CREATE_CONTEXT on arguments in kernel memory
 * @ctx: a context in state NEW, not locked
 * @req: the context's flags
 * @a: sampling format (name, argument, whether to charge the buffer to
 *     the caller's RLIMIT_MEMLOCK)
 *
 * Never loads a PMU description module: with none registered the call
 * fails (the kernel API runs where loading one could deadlock).  A user
 * context gets its creator's privileges now (pfm_perm_grant()), a kernel
 * API one all of them.
 *
 * Context: process context; may sleep.
 * Return: 0, or as __pfm_create_context() and pfm_smpl_buf_create();
 * -EACCES at paranoid level 3 without CAP_PERFMON; -ENODEV without a
 * PMU description; -ENOMEM.
 */
int pfm_create(struct pfm_context *ctx, const struct pfarg_ctx *req,
	       const struct pfm_create_args *a)
{
	u32 priv = PFM_PMC_PRIV_ALL;
	bool exec_priv = true;
	struct pfm_smpl_buf *smpl;
	struct pfm_pmu_config *pmu;
	struct pfm_event_set *set0;
	unsigned long flags;
	int ret;

	/* The creator's privileges, decided now (core/perm.c). */
	if (!ctx->kernel) {
		ret = pfm_perm_create();
		if (ret)
			return ret;
		priv = pfm_perm_grant();
		exec_priv = pfm_perm_exec();
	}
	pmu = pfm_pmu_get();
	if (!pmu) {
		pr_info_ratelimited("no PMU description registered: load the module for this CPU, or pfm_soft\n");
		return -ENODEV;
	}
	set0 = pfm_event_set_alloc(pmu, 0, priv);
	if (!set0) {
		ret = -ENOMEM;
		goto put_pmu;
	}
	smpl = pfm_create_smpl(a, req->ctx_flags);
	if (IS_ERR(smpl)) {
		ret = PTR_ERR(smpl);
		goto free_set0;
	}

	raw_spin_lock_irqsave(&ctx->lock, flags);
	ret = __pfm_create_context(ctx, req, pmu, set0, smpl);
	if (!ret) {
		ctx->priv = priv;
		ctx->kernel_ips = priv & PFM_PMC_PRIV_KERNEL;
		ctx->exec_priv = exec_priv;
	}
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	if (!ret)
		return 0;

	pfm_smpl_buf_free(smpl);
free_set0:
	pfm_event_set_free(set0);
put_pmu:
	pfm_pmu_put(pmu);
	return ret;
}

/* An array call's arguments, as passed to the core through a pfm_ctx_fn. */
struct pfm_array_args {
	void *req;
	unsigned int count;
	struct pfm_event_set **spare;
};

static int pfm_call_write_pmcs(struct pfm_context *ctx, void *arg)
{
	struct pfm_array_args *a = arg;

	return __pfm_write_pmcs(ctx, a->req, a->count);
}

static int pfm_call_write_pmds(struct pfm_context *ctx, void *arg)
{
	struct pfm_array_args *a = arg;

	return __pfm_write_pmds(ctx, a->req, a->count);
}

static int pfm_call_read_pmds(struct pfm_context *ctx, void *arg)
{
	struct pfm_array_args *a = arg;

	return __pfm_read_pmds(ctx, a->req, a->count);
}

static int pfm_call_delete_evtsets(struct pfm_context *ctx, void *arg)
{
	struct pfm_array_args *a = arg;

	return __pfm_delete_evtsets(ctx, a->req, a->count);
}

static int pfm_call_getinfo_evtsets(struct pfm_context *ctx, void *arg)
{
	struct pfm_array_args *a = arg;

	return __pfm_getinfo_evtsets(ctx, a->req, a->count);
}

static int pfm_call_create_evtsets(struct pfm_context *ctx, void *arg)
{
	struct pfm_array_args *a = arg;

	return __pfm_create_evtsets(ctx, a->req, a->count, a->spare);
}

static int pfm_array_call(struct pfm_context *ctx, pfm_ctx_fn fn, void *req,
			  unsigned int count)
{
	struct pfm_array_args a = { .req = req, .count = count };

	return pfm_ctx_call(ctx, fn, &a);
}

/**
 * pfm_write_pmcs() - PFM_WRITE_PMCS: __pfm_write_pmcs() where the context is
 * @ctx: the context, not locked
 * @req: the entries (kernel memory); refused ones get PFM_REG_RETFL_*
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Context: process context.
 * Return: as __pfm_write_pmcs().
 */
int pfm_write_pmcs(struct pfm_context *ctx, struct pfarg_pmc *req,
		   unsigned int count)
{
	return pfm_array_call(ctx, pfm_call_write_pmcs, req, count);
}

/**
 * pfm_write_pmds() - PFM_WRITE_PMDS, as pfm_write_pmcs()
 * @ctx: the context, not locked
 * @req: the entries
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Return: as __pfm_write_pmds().
 */
int pfm_write_pmds(struct pfm_context *ctx, struct pfarg_pmd *req,
		   unsigned int count)
{
	return pfm_array_call(ctx, pfm_call_write_pmds, req, count);
}

/**
 * pfm_read_pmds() - PFM_READ_PMDS, as pfm_write_pmcs()
 * @ctx: the context, not locked
 * @req: the entries
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Return: as __pfm_read_pmds().
 */
int pfm_read_pmds(struct pfm_context *ctx, struct pfarg_pmd *req,
		  unsigned int count)
{
	struct pfm_array_args a = { .req = req, .count = count };

	/* The live set is read in place: a read while counting is cheap. */
	return pfm_ctx_call_in_place(ctx, pfm_call_read_pmds, &a);
}

/**
 * pfm_getinfo_evtsets() - PFM_GETINFO_EVTSETS, as pfm_write_pmcs()
 * @ctx: the context, not locked
 * @req: the entries
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Return: as __pfm_getinfo_evtsets().
 */
int pfm_getinfo_evtsets(struct pfm_context *ctx, struct pfarg_setinfo *req,
			unsigned int count)
{
	return pfm_array_call(ctx, pfm_call_getinfo_evtsets, req, count);
}

/**
 * pfm_delete_evtsets() - PFM_DELETE_EVTSETS; the sets are freed after
 * @ctx: the context, not locked
 * @req: the entries
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Return: as __pfm_delete_evtsets().
 */
int pfm_delete_evtsets(struct pfm_context *ctx, struct pfarg_setdesc *req,
		       unsigned int count)
{
	int ret = pfm_array_call(ctx, pfm_call_delete_evtsets, req, count);

	pfm_free_dead_sets(ctx);
	return ret;
}

/*
 * Sets named by @req that do not exist yet (a hint: rechecked later),
 * and in *@priv the privileges their default PMC values follow.
 */
static unsigned int pfm_count_new_sets(struct pfm_context *ctx,
				       const struct pfarg_setdesc *req,
				       unsigned int count, u32 *priv)
{
	unsigned long flags;
	unsigned int i, n = 0;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	*priv = ctx->priv;
	if (ctx->state != PFM_CTX_NEW)
		for (i = 0; i < count; i++)
			n += !pfm_find_set(ctx, req[i].set_id);
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	return n;
}

static void pfm_free_spares(struct pfm_event_set **spare, unsigned int n)
{
	while (n--)
		if (spare[n])
			pfm_event_set_free(spare[n]);
	kfree(spare);
}

/**
 * pfm_create_evtsets() - PFM_CREATE_EVTSETS
 * @ctx: the context, not locked
 * @req: the entries
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Sets are allocated before the lock is taken, then the core takes what
 * it needs.  A concurrent creation can make the guess short: then
 * allocate again.
 *
 * Context: process context; may sleep.
 * Return: as __pfm_create_evtsets(); -ENOMEM.
 */
int pfm_create_evtsets(struct pfm_context *ctx, struct pfarg_setdesc *req,
		       unsigned int count)
{
	struct pfm_array_args a = { .req = req, .count = count };
	unsigned int i, n;
	u32 priv;
	int ret;

	do {
		n = pfm_count_new_sets(ctx, req, count, &priv);
		a.spare = kcalloc(n + 1, sizeof(*a.spare), GFP_KERNEL);
		ret = a.spare ? 0 : -ENOMEM;
		for (i = 0; !ret && i < n; i++) {
			a.spare[i] = pfm_event_set_alloc(ctx->pmu, 0, priv);
			if (!a.spare[i])
				ret = -ENOMEM;
		}
		if (!ret)
			ret = pfm_ctx_call(ctx, pfm_call_create_evtsets, &a);
		if (a.spare)
			pfm_free_spares(a.spare, n);
	} while (ret == -EAGAIN);
	return ret;
}

static int pfm_call_start(struct pfm_context *ctx, void *arg)
{
	return __pfm_start(ctx, arg);
}

/**
 * pfm_start() - PFM_START where the context is live
 * @ctx: the context, not locked
 * @req: the start set
 *
 * Context: process context.
 * Return: as __pfm_start().
 */
int pfm_start(struct pfm_context *ctx, const struct pfarg_start *req)
{
	return pfm_ctx_call_in_place(ctx, pfm_call_start, (void *)req);
}

static int pfm_call_stop(struct pfm_context *ctx, void *arg)
{
	return __pfm_stop(ctx);
}

/**
 * pfm_stop() - PFM_STOP where the context is live
 * @ctx: the context, not locked
 *
 * Context: process context.
 * Return: as __pfm_stop().
 */
int pfm_stop(struct pfm_context *ctx)
{
	return pfm_ctx_call_in_place(ctx, pfm_call_stop, NULL);
}

/*
 * pfm_array_<call>(): <call> taking its array as void *, so that a front
 * end drives every array call through one pfm_array_fn.
 */
#define PFM_ARRAY_FN(call, type)					\
int pfm_array_##call(struct pfm_context *ctx, void *req,		\
		     unsigned int count)				\
{									\
	return pfm_##call(ctx, (type *)req, count);			\
}

PFM_ARRAY_FN(write_pmcs, struct pfarg_pmc)
PFM_ARRAY_FN(write_pmds, struct pfarg_pmd)
PFM_ARRAY_FN(read_pmds, struct pfarg_pmd)
PFM_ARRAY_FN(create_evtsets, struct pfarg_setdesc)
PFM_ARRAY_FN(delete_evtsets, struct pfarg_setdesc)
PFM_ARRAY_FN(getinfo_evtsets, struct pfarg_setinfo)
PFM_ARRAY_FN(set_drv_config, struct pfarg_drv_cfg)
PFM_ARRAY_FN(get_drv_config, struct pfarg_drv_cfg)
