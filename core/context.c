// SPDX-License-Identifier: GPL-2.0
/*
 * Contexts and their event sets: allocation, creation, lookup.
 */
#include <linux/lockdep.h>
#include <linux/slab.h>

#include "perfmon.h"

struct pfm_context *pfm_context_alloc(void)
{
	struct pfm_context *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return NULL;
	spin_lock_init(&ctx->lock);
	INIT_LIST_HEAD(&ctx->sets);
	ctx->state = PFM_CTX_NEW;
	return ctx;
}

/* Free a context that is no longer reachable from any thread or CPU. */
void pfm_context_free(struct pfm_context *ctx)
{
	struct pfm_event_set *set, *tmp;

	list_for_each_entry_safe(set, tmp, &ctx->sets, list) {
		list_del(&set->list);
		pfm_event_set_free(set);
	}
	if (ctx->pmu)
		pfm_pmu_put(ctx->pmu);
	kfree(ctx);
}

/*
 * Allocate a set sized for @pmu's registers, every PMC at its default
 * value.  May sleep: call without the context lock.
 */
struct pfm_event_set *pfm_event_set_alloc(const struct pfm_pmu_config *pmu,
					  u16 id)
{
	struct pfm_event_set *set;
	u16 i;

	set = kzalloc(sizeof(*set), GFP_KERNEL_ACCOUNT);
	if (!set)
		return NULL;
	set->pmcs = kcalloc(max_t(u16, pmu->max_pmc, 1), sizeof(*set->pmcs),
			    GFP_KERNEL_ACCOUNT);
	if (!set->pmcs)
		goto free_set;
	set->pmds = kcalloc(max_t(u16, pmu->max_pmd, 1), sizeof(*set->pmds),
			    GFP_KERNEL_ACCOUNT);
	if (!set->pmds)
		goto free_pmcs;

	set->id = id;
	for (i = 0; i < pmu->max_pmc; i++)
		set->pmcs[i] = pmu->pmc_desc[i].dfl_val;
	return set;

free_pmcs:
	kfree(set->pmcs);
free_set:
	kfree(set);
	return NULL;
}

void pfm_event_set_free(struct pfm_event_set *set)
{
	kfree(set->pmds);
	kfree(set->pmcs);
	kfree(set);
}

/**
 * pfm_find_set() - look up an event set of a context
 * @ctx: the context, locked
 * @id: set number
 *
 * Return: the set, or NULL.
 */
struct pfm_event_set *pfm_find_set(struct pfm_context *ctx, u16 id)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *set;

	lockdep_assert_held(&ctx->lock);
	list_for_each_entry(set, &ctx->sets, list) {
		if (set->id == id)
			return set;
		if (set->id > id)
			break;
	}
	return NULL;
}

/**
 * __pfm_create_context() - turn a NEW context into an UNLOADED one
 * @ctx: the context, locked
 * @req: flags (reserved fields already checked by the caller)
 * @pmu: description, referenced; the context keeps the reference
 * @set0: event set 0, allocated for @pmu
 *
 * Return: 0, -EBUSY when @ctx was already created, -EINVAL for unknown
 * flags.  On error the caller still owns @pmu and @set0.
 */
int __pfm_create_context(struct pfm_context *ctx, const struct pfarg_ctx *req,
			 struct pfm_pmu_config *pmu,
			 struct pfm_event_set *set0)
	__must_hold(&ctx->lock)
{
	const u32 known = PFM_FL_NOTIFY_BLOCK | PFM_FL_SYSTEM_WIDE |
			  PFM_FL_OVFL_NO_MSG;

	lockdep_assert_held(&ctx->lock);
	if (ctx->state != PFM_CTX_NEW)
		return -EBUSY;
	if (req->ctx_flags & ~known)
		return -EINVAL;
	/* A system-wide context has no thread to block. */
	if ((req->ctx_flags & PFM_FL_SYSTEM_WIDE) &&
	    (req->ctx_flags & PFM_FL_NOTIFY_BLOCK))
		return -EINVAL;

	ctx->flags = req->ctx_flags;
	ctx->pmu = pmu;
	list_add(&set0->list, &ctx->sets);
	ctx->state = PFM_CTX_UNLOADED;
	return 0;
}
