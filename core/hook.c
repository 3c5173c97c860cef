// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread monitoring follows the thread: a preempt notifier on the
 * monitored thread loads the context's set into the PMU of the CPU the
 * thread is switched in on, and saves it when the thread is switched out.
 *
 * A thread's notifier list may only be changed by the thread itself, so
 * a hook is installed and removed from the thread's own context: directly
 * for self-monitoring, else by task_work on the thread's next return to
 * user space.  The kernel does not export task_work_cancel(), so a hook
 * whose context was unloaded before the install ran is simply inert and
 * freed by whichever of its works runs last.  The final context switch of
 * an exiting thread unlinks the hook too (nothing walks the list after).
 *
 * ctx->hook points to the current hook (under ctx->lock); every other
 * hook of the context is stale and does nothing.  References (@refs):
 * one for the context while the hook is current, one for the install
 * work or the link, one per pending removal work.  The last one frees
 * the hook from pfm_wq, because it may drop from the scheduler.
 */
#include <linux/irq_work.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/task_work.h>

#include "perfmon.h"

/**
 * struct pfm_hook - a monitored thread's link to its context
 * @pn: the thread's preempt notifier
 * @install_work: installs @pn from the thread
 * @remove_work: removes @pn from the thread
 * @put_iw: takes the last reference out of the scheduler
 * @put_work: frees the hook on pfm_wq
 * @ctx: the context (reference held)
 * @refs: see the file comment
 * @linked: @pn is on the thread's list (thread side only)
 * @cancelled: removal ran before the install (thread side only)
 */
struct pfm_hook {
	struct preempt_notifier pn;
	struct callback_head install_work;
	struct callback_head remove_work;
	struct irq_work put_iw;
	struct work_struct put_work;
	struct pfm_context *ctx;
	refcount_t refs;
	bool linked;
	bool cancelled;
};

static void pfm_hook_free_work(struct work_struct *work)
{
	struct pfm_hook *hook = container_of(work, struct pfm_hook, put_work);

	pfm_ctx_put(hook->ctx);
	kfree(hook);
}

static void pfm_hook_put_irq(struct irq_work *iw)
{
	struct pfm_hook *hook = container_of(iw, struct pfm_hook, put_iw);

	queue_work(pfm_wq, &hook->put_work);
}

/* Drop a hook reference; safe from the scheduler's hooks. */
static void pfm_hook_put(struct pfm_hook *hook)
{
	if (refcount_dec_and_test(&hook->refs))
		irq_work_queue(&hook->put_iw);
}

/* Load the set on this CPU if @hook is the context's current hook. */
static void pfm_hook_load_here(struct pfm_hook *hook)
	__must_hold(&hook->ctx->lock)
{
	struct pfm_context *ctx = hook->ctx;

	if (ctx->hook == hook && ctx->live_cpu < 0 && !ctx->task_ended &&
	    (ctx->state == PFM_CTX_LOADED || ctx->state == PFM_CTX_MASKED))
		pfm_ctx_sched_in(ctx);
}

static void pfm_hook_sched_in(struct preempt_notifier *pn, int cpu)
{
	struct pfm_hook *hook = container_of(pn, struct pfm_hook, pn);
	unsigned long flags;

	spin_lock_irqsave(&hook->ctx->lock, flags);
	pfm_hook_load_here(hook);
	spin_unlock_irqrestore(&hook->ctx->lock, flags);
}

/*
 * Runs with the runqueue lock held: nothing here may wake a task, so the
 * end of the thread is handed on through irq_work.
 */
static void pfm_hook_sched_out(struct preempt_notifier *pn,
			       struct task_struct *next)
{
	struct pfm_hook *hook = container_of(pn, struct pfm_hook, pn);
	struct pfm_context *ctx = hook->ctx;
	bool dead = READ_ONCE(current->__state) == TASK_DEAD;
	unsigned long flags;

	spin_lock_irqsave(&ctx->lock, flags);
	if (ctx->live_cpu == smp_processor_id())
		pfm_ctx_sched_out(ctx);
	if (dead && ctx->hook == hook && !ctx->task_ended) {
		ctx->task_ended = true;
		pfm_ctx_exit_queue(ctx);
	}
	spin_unlock_irqrestore(&ctx->lock, flags);

	if (dead) {
		/*
		 * The list walk that called us continues from pn->link.next:
		 * unlink without poisoning it.  The memory stays until
		 * pfm_wq runs, long after this walk.
		 */
		__hlist_del(&pn->link);
		hook->linked = false;
		pfm_hook_put(hook);
	}
}

static struct preempt_ops pfm_hook_ops = {
	.sched_in	= pfm_hook_sched_in,
	.sched_out	= pfm_hook_sched_out,
};

/* Link the hook to current and load the set here. */
static bool pfm_hook_link(struct pfm_hook *hook)
{
	struct pfm_context *ctx = hook->ctx;
	unsigned long flags;
	bool linked = false;

	preempt_disable();
	spin_lock_irqsave(&ctx->lock, flags);
	if (ctx->hook == hook) {
		preempt_notifier_register(&hook->pn);
		hook->linked = true;
		linked = true;
		pfm_hook_load_here(hook);
	}
	spin_unlock_irqrestore(&ctx->lock, flags);
	preempt_enable();
	return linked;
}

/* The thread ends before it ran its install work. */
static void pfm_hook_exiting(struct pfm_hook *hook)
{
	struct pfm_context *ctx = hook->ctx;
	unsigned long flags;

	spin_lock_irqsave(&ctx->lock, flags);
	if (ctx->hook == hook && !ctx->task_ended) {
		ctx->task_ended = true;
		pfm_ctx_exit_queue(ctx);
	}
	spin_unlock_irqrestore(&ctx->lock, flags);
}

static void pfm_hook_install_fn(struct callback_head *cb)
{
	struct pfm_hook *hook = container_of(cb, struct pfm_hook, install_work);

	if (current->flags & PF_EXITING)
		pfm_hook_exiting(hook);
	else if (!hook->cancelled && pfm_hook_link(hook))
		return;		/* the reference is now the link's */
	pfm_hook_put(hook);
}

static void pfm_hook_unlink(struct pfm_hook *hook)
{
	if (hook->linked) {
		preempt_notifier_unregister(&hook->pn);
		hook->linked = false;
		pfm_hook_put(hook);
	} else {
		hook->cancelled = true;
	}
}

static void pfm_hook_remove_fn(struct callback_head *cb)
{
	struct pfm_hook *hook = container_of(cb, struct pfm_hook, remove_work);

	pfm_hook_unlink(hook);
	pfm_hook_put(hook);
}

/**
 * pfm_hook_alloc() - allocate a hook for a context about to be loaded
 * @ctx: the context; the hook takes a reference
 *
 * Return: the hook or NULL.
 */
struct pfm_hook *pfm_hook_alloc(struct pfm_context *ctx)
{
	struct pfm_hook *hook = kzalloc(sizeof(*hook), GFP_KERNEL_ACCOUNT);

	if (!hook)
		return NULL;
	preempt_notifier_init(&hook->pn, &pfm_hook_ops);
	init_irq_work(&hook->put_iw, pfm_hook_put_irq);
	INIT_WORK(&hook->put_work, pfm_hook_free_work);
	refcount_set(&hook->refs, 2);	/* the context's, the install's */
	pfm_ctx_get(ctx);
	hook->ctx = ctx;
	return hook;
}

/**
 * pfm_hook_free() - free a hook that was never installed
 * @hook: the hook
 */
void pfm_hook_free(struct pfm_hook *hook)
{
	pfm_hook_put(hook);	/* the install's */
	pfm_hook_put(hook);	/* the context's */
}

/**
 * pfm_hook_install() - attach a hook (ctx->hook already points to it)
 * @hook: the hook
 * @task: the monitored thread
 *
 * For another thread the install runs on its next return to user space.
 *
 * Return: 0, or -ESRCH when the thread is exiting (the hook is then the
 * caller's to free).
 */
int pfm_hook_install(struct pfm_hook *hook, struct task_struct *task)
{
	if (task == current) {
		if (!pfm_hook_link(hook))
			pfm_hook_put(hook);	/* unloaded meanwhile */
		return 0;
	}
	init_task_work(&hook->install_work, pfm_hook_install_fn);
	return task_work_add(task, &hook->install_work, TWA_RESUME);
}

/**
 * pfm_hook_remove() - detach a hook that is no longer ctx->hook
 * @hook: the hook; the context's reference is dropped
 * @task: the thread it was installed on
 * @ended: the thread passed its last context switch (nothing to remove)
 *
 * Context: process context.  The hook is freed once the thread has run
 * the removal (or exited).
 */
void pfm_hook_remove(struct pfm_hook *hook, struct task_struct *task,
		     bool ended)
{
	if (ended) {
		/* Unlinked by its last switch, or never installed. */
	} else if (task == current) {
		pfm_hook_unlink(hook);
	} else {
		refcount_inc(&hook->refs);
		init_task_work(&hook->remove_work, pfm_hook_remove_fn);
		/* An exiting thread unlinks at its last switch instead. */
		if (task_work_add(task, &hook->remove_work, TWA_RESUME))
			pfm_hook_put(hook);
	}
	pfm_hook_put(hook);	/* the context's */
}
