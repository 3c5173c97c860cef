// SPDX-License-Identifier: GPL-2.0
/*
 * Contexts and their event sets: allocation, reference counting, the
 * per-user limit, creation, lookup.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/irq_work.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/pid_namespace.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "perfmon.h"

struct workqueue_struct *pfm_wq;

/*
 * Per-user context limit: contexts counted per real uid in an xarray
 * (its own lock).  Root may raise the limit in /sys/kernel/perfmon.
 */
static DEFINE_XARRAY(pfm_user_ctxs);
unsigned int pfm_ctx_per_user_max = 256;

static int pfm_user_charge(kuid_t uid)
{
	unsigned long idx = from_kuid(&init_user_ns, uid);
	unsigned long n;
	int ret = 0;

	xa_lock(&pfm_user_ctxs);
	n = xa_to_value(xa_load(&pfm_user_ctxs, idx) ?: xa_mk_value(0));
	if (n >= READ_ONCE(pfm_ctx_per_user_max))
		ret = -EMFILE;
	else
		ret = xa_err(__xa_store(&pfm_user_ctxs, idx, xa_mk_value(n + 1),
					GFP_ATOMIC));
	xa_unlock(&pfm_user_ctxs);
	if (ret == -EMFILE)
		pr_info_ratelimited("uid %lu reached %lu contexts: close some or raise /sys/kernel/perfmon/ctx_per_user_max\n",
				    idx, n);
	return ret;
}

static void pfm_user_uncharge(kuid_t uid)
{
	unsigned long idx = from_kuid(&init_user_ns, uid);
	unsigned long n;

	xa_lock(&pfm_user_ctxs);
	n = xa_to_value(xa_load(&pfm_user_ctxs, idx) ?: xa_mk_value(1));
	if (n <= 1)
		__xa_erase(&pfm_user_ctxs, idx);
	else
		__xa_store(&pfm_user_ctxs, idx, xa_mk_value(n - 1), GFP_ATOMIC);
	xa_unlock(&pfm_user_ctxs);
}

static void pfm_context_free_work(struct work_struct *work);

/**
 * pfm_ctx_alloc() - allocate a context object in state NEW
 * @ops: what the layers above do at its thread's end and at its free
 * @kcompl: NULL for a user's context (an open file); for the kernel
 *          API's, its owner's completion, completed at each wake-up
 *
 * The context holds a reference on perfmon.ko until it is freed, because
 * a monitored thread may keep it after its file is closed.  The parts
 * above the objects set themselves up after (pfm_context_alloc()).
 *
 * Return: the context (one reference), or an ERR_PTR: -ENOMEM, or
 * -EMFILE when the caller's uid reached the per-user limit.
 */
struct pfm_context *pfm_ctx_alloc(const struct pfm_ctx_ops *ops,
				  struct completion *kcompl)
{
	struct pfm_context *ctx;
	kuid_t uid = current_uid();
	int ret;

	ret = pfm_user_charge(uid);
	if (ret)
		return ERR_PTR(ret);
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx) {
		pfm_user_uncharge(uid);
		return ERR_PTR(-ENOMEM);
	}
	raw_spin_lock_init(&ctx->lock);
	mutex_init(&ctx->vpmu_mutex);
	refcount_set(&ctx->refs, 1);
	INIT_LIST_HEAD(&ctx->sets);
	INIT_LIST_HEAD(&ctx->dead_sets);
	ctx->state = PFM_CTX_NEW;
	ctx->kernel = !!kcompl;
	ctx->kcompl = kcompl;
	ctx->ops = ops;
	ctx->live_cpu = -1;
	ctx->cpu = -1;
	ctx->uid = uid;
	ctx->pid_ns = get_pid_ns(task_active_pid_ns(current));
	prandom_seed_state(&ctx->rnd, get_random_u64());
	INIT_WORK(&ctx->free_work, pfm_context_free_work);
	__module_get(THIS_MODULE);
	return ctx;
}

void pfm_ctx_get(struct pfm_context *ctx)
{
	refcount_inc(&ctx->refs);
}

/* Free a context that is no longer reachable from any thread or CPU. */
static void pfm_context_free(struct pfm_context *ctx)
{
	struct pfm_event_set *set, *tmp;

	WARN_ON_ONCE(ctx->live_cpu >= 0 || ctx->task || ctx->hook);
	ctx->ops->free(ctx);
	list_splice_init(&ctx->dead_sets, &ctx->sets);
	list_for_each_entry_safe(set, tmp, &ctx->sets, list) {
		list_del(&set->list);
		pfm_event_set_free(set);
	}
	if (ctx->pmu)
		pfm_pmu_put(ctx->pmu);
	pfm_user_uncharge(ctx->uid);
	put_pid_ns(ctx->pid_ns);
	/*
	 * After a grace period: an irq_work callback that dropped the last
	 * reference (pfm_msg_wake_irq()) returns to irq_work code that still
	 * writes its flags, inside an RCU read-side section.  Not
	 * irq_work_sync(), which waits a grace period at every close on
	 * PREEMPT_RT.
	 */
	kfree_rcu(ctx, rcu);
	/* Callers run from the file's release or from pfm_wq, both of
	 * which keep the module text alive past this return.
	 */
	module_put(THIS_MODULE);
}

static void pfm_context_free_work(struct work_struct *work)
{
	pfm_context_free(container_of(work, struct pfm_context, free_work));
}

/**
 * pfm_ctx_put_async() - drop a reference; the last one frees on pfm_wq
 * @ctx: the context
 *
 * For code of perfmon.ko that runs outside its file operations and
 * pfm_wq (a task work): freeing drops the module reference, and the
 * module must not go away before that code has returned.
 */
void pfm_ctx_put_async(struct pfm_context *ctx)
{
	if (refcount_dec_and_test(&ctx->refs))
		queue_work(pfm_wq, &ctx->free_work);
}

/**
 * pfm_ctx_put() - drop a context reference, freeing it on the last one
 * @ctx: the context
 *
 * Context: process context (the last reference is dropped by close() or
 * by a work item on pfm_wq).
 */
void pfm_ctx_put(struct pfm_context *ctx)
{
	if (refcount_dec_and_test(&ctx->refs))
		pfm_context_free(ctx);
}

/**
 * pfm_free_dead_sets() - free the sets __pfm_delete_evtsets() unlinked
 * @ctx: the context, not locked
 */
void pfm_free_dead_sets(struct pfm_context *ctx)
{
	struct pfm_event_set *set, *tmp;
	unsigned long flags;
	LIST_HEAD(dead);

	raw_spin_lock_irqsave(&ctx->lock, flags);
	list_splice_init(&ctx->dead_sets, &dead);
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	list_for_each_entry_safe(set, tmp, &dead, list)
		pfm_event_set_free(set);
}

/*
 * PMC @i's value in a new set of a context with privileges @priv: the
 * default, or its user-level variant when the default counts what the
 * context may not (Documentation/security.rst, "Default PMC values").
 * A PMC the program never writes is still loaded on the PMU: it obeys
 * the rule written values obey.  pfm_pmu_register() made sure the
 * variant exists and needs nothing.
 */
static u64 pfm_pmc_start_val(const struct pfm_pmu *pmu, u16 i,
			     u32 priv)
{
	u64 v = pmu->map->pmc_desc[i].dfl_val;

	if (pmu->checks->pmc_priv && test_bit(i, pmu->impl_pmcs) &&
	    (pmu->checks->pmc_priv(pmu->map, i, v) & ~priv))
		v = pmu->checks->pmc_user_val(pmu->map, i, v);
	return v;
}

/*
 * Allocate a set sized for @pmu's registers, every PMC at its default
 * value for a context with privileges @priv (PFM_PMC_PRIV_*).  May
 * sleep: call without the context lock.
 */
struct pfm_event_set *pfm_event_set_alloc(const struct pfm_pmu *pmu,
					  u16 id, u32 priv)
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
		set->pmcs[i] = pfm_pmc_start_val(pmu, i, priv);
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
 * pfm_check_created() - refuse a context that PFM_CREATE_CONTEXT did not make
 * @ctx: the context, locked
 *
 * Register and event-set calls work in every later state: loaded
 * contexts come to them through pfm_run(), with their registers
 * saved in the set and reloaded afterwards.
 *
 * Return: 0, or -EBADFD while the context is NEW.
 */
int pfm_check_created(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	return ctx->state == PFM_CTX_NEW ? -EBADFD : 0;
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
