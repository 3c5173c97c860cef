// SPDX-License-Identifier: GPL-2.0
/*
 * Virtual descriptions: a PMU description whose counters are not the
 * CPU's registers but objects it must acquire in process context
 * (pfm_perf: perf_events kernel counters).  Its register ops run with
 * interrupts off like any description's and cannot acquire anything;
 * so after every call that changes what a context counts,
 * pfm_vpmu_sync() hands the description a copy of the context's target
 * and sets, and the description acquires what they need and lets go of
 * the rest (@ctx_sync of struct pfm_pmu).  Those calls end with
 * pfm_vpmu_finish(); a load syncs before it publishes the context
 * (core/load.c).
 */
#include <linux/bitmap.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "perfmon.h"

/* One set's copy: struct pfm_pmu_vset, its PMC values, its used PMDs. */
struct pfm_vpmu_set {
	struct pfm_pmu_vset vset;
	DECLARE_BITMAP(used_pmds, PFM_MAX_PMDS);
	u64 pmcs[];
};

static size_t pfm_vpmu_set_size(const struct pfm_pmu *pmu)
{
	return struct_size((struct pfm_vpmu_set *)NULL, pmcs, pmu->max_pmc);
}

/* The target of a loaded context (a thread referenced), under its lock. */
static void pfm_vpmu_target(struct pfm_context *ctx, struct pfm_pmu_vctx *vc)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	vc->task = NULL;
	vc->cpu = -1;
	if (ctx->state != PFM_CTX_LOADED && ctx->state != PFM_CTX_MASKED)
		return;
	if (pfm_ctx_is_system(ctx)) {
		vc->cpu = ctx->cpu;
	} else if (!ctx->task_ended) {
		vc->task = ctx->task;
		get_task_struct(vc->task);
	}
}

/* Copy the sets into @buf (@n entries, which the context has). */
static void pfm_vpmu_copy_sets(struct pfm_context *ctx, void *buf,
			       unsigned int n, struct pfm_pmu_vset *vsets,
			       unsigned int *active)
	__must_hold(&ctx->lock)
{
	size_t size = pfm_vpmu_set_size(ctx->pmu);
	struct pfm_event_set *set;
	struct pfm_vpmu_set *cp;
	unsigned int i = 0;

	list_for_each_entry(set, &ctx->sets, list) {
		cp = buf + i * size;
		memcpy(cp->pmcs, set->pmcs, ctx->pmu->max_pmc * sizeof(u64));
		bitmap_copy(cp->used_pmds, set->used_pmds, PFM_MAX_PMDS);
		vsets[i].pmcs = cp->pmcs;
		vsets[i].used_pmds = cp->used_pmds;
		if (set == ctx->active_set)
			*active = i;
		if (++i == n)
			break;
	}
}

/*
 * Take the context's target and a copy of its sets, as one snapshot
 * under its lock.  The copy is allocated unlocked, for as many sets as
 * the context had a moment before: when that changed, again.
 * Return: 0, with *@buf to kvfree(); -ENOMEM.
 */
static int pfm_vpmu_collect(struct pfm_context *ctx, struct pfm_pmu_vctx *vc,
			    void **buf)
{
	size_t size = pfm_vpmu_set_size(ctx->pmu);
	struct pfm_pmu_vset *vsets;
	unsigned long flags;
	unsigned int n;

	vc->active = 0;
	for (;;) {
		n = READ_ONCE(ctx->nr_sets);
		*buf = kvmalloc(n * (size + sizeof(*vsets)), GFP_KERNEL);
		if (!*buf)
			return -ENOMEM;
		vsets = *buf + n * size;
		raw_spin_lock_irqsave(&ctx->lock, flags);
		if (ctx->nr_sets == n) {
			pfm_vpmu_target(ctx, vc);
			if (vc->task || vc->cpu >= 0)
				pfm_vpmu_copy_sets(ctx, *buf, n, vsets,
						   &vc->active);
			memcpy(vc->cfg, ctx->drv_cfg, sizeof(vc->cfg));
			raw_spin_unlock_irqrestore(&ctx->lock, flags);
			vc->nr_sets = vc->task || vc->cpu >= 0 ? n : 0;
			vc->sets = vsets;
			return 0;
		}
		raw_spin_unlock_irqrestore(&ctx->lock, flags);
		kvfree(*buf);
	}
}

/* Run on the set saved and loaded again: the register ops see the new state. */
static int pfm_vpmu_reload(struct pfm_context *ctx, void *info)
{
	return 0;
}

/**
 * pfm_vpmu_sync() - let a virtual description follow what a context counts
 * @ctx: the context, not locked, created
 *
 * Serialized per context, so that the last sync sees the context's last
 * state.  When the description acquired something its register ops
 * must see, the live set is reloaded (saved and loaded again on its
 * CPU, values kept) and the description synced once more, to let go of
 * what the reload stopped using and start what it bound; when that
 * started something, the live set is reloaded once more.
 *
 * Context: process context; may sleep.
 * Return: 0, -ENOMEM, or the description's error (-EBUSY: perf has no
 * room for the counters).
 */
int pfm_vpmu_sync(struct pfm_context *ctx)
{
	struct pfm_pmu *pmu = ctx->pmu;
	struct pfm_pmu_vctx vc;
	void *buf;
	int ret;

	if (!ctx->vpmu)
		return 0;
	mutex_lock(&ctx->vpmu_mutex);
	ret = pfm_vpmu_collect(ctx, &vc, &buf);
	if (ret)
		goto unlock;
	ret = pmu->ops->ctx_sync(pmu->conf, ctx->vpmu, &vc);
	if (ret > 0) {
		pfm_run(ctx, pfm_vpmu_reload, NULL);
		ret = pmu->ops->ctx_sync(pmu->conf, ctx->vpmu, &vc);
		/*
		 * It started what the reload bound: reload again, so that
		 * the control page shows the counters' user-read indexes
		 * before the call returns, not at the next switch in.
		 */
		if (ret > 0) {
			pfm_run(ctx, pfm_vpmu_reload, NULL);
			ret = 0;
		}
	}
	if (vc.task)
		put_task_struct(vc.task);
	kvfree(buf);
unlock:
	mutex_unlock(&ctx->vpmu_mutex);
	return ret < 0 ? ret : 0;
}

/**
 * pfm_vpmu_finish() - the end of a call that changes what a context
 * counts: sync a virtual description
 * @ctx: the context, not locked
 * @ret: the call's result so far
 *
 * Also after a failure: an array call may have written a part.
 *
 * Context: process context; may sleep.
 * Return: @ret, or when it is 0 the sync's error.
 */
int pfm_vpmu_finish(struct pfm_context *ctx, int ret)
{
	int sync = pfm_vpmu_sync(ctx);

	return ret ? ret : sync;
}

/**
 * pfm_vpmu_resync_work() - pfm_vpmu_resync_async()'s work
 * @work: the context's @resync_work, which holds a reference
 */
void pfm_vpmu_resync_work(struct work_struct *work)
{
	struct pfm_context *ctx = container_of(work, struct pfm_context,
					       resync_work);

	pfm_vpmu_sync(ctx);
	pfm_ctx_put(ctx);
}

/**
 * pfm_vpmu_resync_async() - sync a virtual description from pfm_wq
 * @ctx: the context, a reference held by the caller
 *
 * For a system-wide context whose CPU came back online: perf detached
 * its CPU's events when it went down (perf_event_exit_cpu()), and the
 * hotplug callback may not make new ones (perf's calls take the
 * hotplug lock's read side).  What the CPU counts between its return
 * and the work is not counted.
 *
 * Context: any; the caller's locks may be raw.
 */
void pfm_vpmu_resync_async(struct pfm_context *ctx)
{
	if (!ctx->vpmu)
		return;
	pfm_ctx_get(ctx);
	if (!queue_work(pfm_wq, &ctx->resync_work))
		pfm_ctx_put_async(ctx);	/* queued already, with a reference */
}
