// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread monitoring follows the thread: a preempt notifier on the
 * monitored thread loads the context's set into the PMU of the CPU the
 * thread is switched in on, and saves it when the thread is switched out.
 *
 * A thread's notifier list may only be changed by the thread itself, so
 * the notifier is linked and unlinked from the thread's own context:
 * directly for self-monitoring, else by a task work that runs on the
 * thread's next return to user space.  The kernel does not export
 * task_work_cancel(), and a thread may sleep in the kernel for as long
 * as it likes (init in wait(), a daemon in select()), so a queued work
 * must never hold anything its monitor lets go of.  Hence one hook per
 * thread, not per load: the context points to it and it points to the
 * context only while attached (@ctx, under @lock, which nests outside
 * ctx->lock).  Detaching clears @ctx at once, whether or not the thread
 * has run since, so a closed context is freed without waiting for its
 * thread; the hook itself stays, inert, until the thread runs its work
 * or ends, and the next load on that thread reuses it.  A thread thus
 * holds at most one hook and one queued work, however many contexts are
 * loaded on it and closed while it sleeps.
 *
 * The hook is freed once nothing uses it (no context, not linked, no
 * work queued, no load in progress), from pfm_wq, because that may be
 * found by the scheduler's hooks.  It holds a reference on its thread
 * (the registry's key) and on perfmon.ko (its notifier and work run
 * module code).
 *
 * Exit racing a reload.  A monitor may unload a context and load it
 * again on a thread that is exiting; the thread's end is ordered
 * against each step by @lock and @dead:
 *
 *  - the thread sets PF_EXITING, runs its task works (exit_task_work(),
 *    after which task_work_add() fails with -ESRCH), then passes its
 *    last context switch (TASK_DEAD, in pfm_hook_sched_out()), which
 *    sets @dead.  A thread that never linked @pn is dead as soon as its
 *    work runs in do_exit() (pfm_hook_exiting()).
 *  - pfm_get_target() refuses a thread with PF_EXITING (-ESRCH).  A load
 *    that passed it before the flag was set reaches pfm_hook_attach(),
 *    which refuses a @dead hook, and a hook whose thread can no longer
 *    take the work that would link @pn (-ESRCH from
 *    pfm_hook_kick_queue()); the load is then undone, session included.
 *    Every other attach happens before the last switch: the notifier is
 *    linked, or its work is queued and runs in do_exit(), so the last
 *    switch (or pfm_hook_exiting()) finds the context in @ctx and ends
 *    it.  A load that returned 0 is thus always followed by PFM_MSG_END
 *    if the thread exits while it is loaded, and a load never leaves a
 *    context on a thread that will not switch again.
 *  - the end hands the unload to the context's exit work, which runs
 *    after the last switch; the monitor may unload first (the work then
 *    only queues PFM_MSG_END) and load again.  A load waits
 *    for that work (pfm_ctx_exit_flush()) before it looks at its target,
 *    so the message carries the ended thread's ids and is queued before
 *    a load on another thread returns.  A reload on the dead thread
 *    itself fails with -ESRCH.
 *  - detaching from a dying thread whose work can no longer be queued
 *    leaves @pn linked until the last switch, which unlinks it and frees
 *    the hook (pfm_hook_maybe_free()); a load in between pins the hook
 *    or, once it is @freeing, gets a new one that the failed attach
 *    frees again.  No hook outlives its thread's end, and none is used
 *    after it is freed: the registry's lookup skips @freeing hooks.
 */
#include <linux/hashtable.h>
#include <linux/irq_work.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/task_work.h>

#include "perfmon.h"
#include "hook.h"

static DEFINE_MUTEX(pfm_hooks_mutex);
static DEFINE_HASHTABLE(pfm_hooks, 6);

static void pfm_hook_free_work(struct work_struct *work)
{
	struct pfm_hook *hook = container_of(work, struct pfm_hook, free_work);

	mutex_lock(&pfm_hooks_mutex);
	hash_del(&hook->node);
	mutex_unlock(&pfm_hooks_mutex);
	put_task_struct(hook->task);
	/* free_iw's irq_work code may still write its flags: a grace period. */
	kfree_rcu(hook, rcu);
	/* pfm_wq is drained by the module's exit: this work returns first. */
	module_put(THIS_MODULE);
}

static void pfm_hook_free_irq(struct irq_work *iw)
{
	struct pfm_hook *hook = container_of(iw, struct pfm_hook, free_iw);

	queue_work(pfm_wq, &hook->free_work);
}

/**
 * pfm_hook_maybe_free() - free the hook once unused
 * @hook: the hook, locked
 *
 * Context: any, the scheduler's hooks included: the free is handed on.
 */
void pfm_hook_maybe_free(struct pfm_hook *hook)
	__must_hold(&hook->lock)
{
	lockdep_assert_held(&hook->lock);
	if (hook->ctx || hook->pins || hook->linked || hook->queued ||
	    hook->resync_queued || hook->freeing)
		return;
	hook->freeing = true;
	irq_work_queue(&hook->free_iw);
}

/* Load the set on this CPU (the thread's) if it should count here. */
static void pfm_hook_load_here(struct pfm_hook *hook)
	__must_hold(&hook->lock)
{
	struct pfm_context *ctx = hook->ctx;

	if (!ctx)
		return;
	raw_spin_lock(&ctx->lock);
	if (ctx->hook == hook && ctx->task == current && ctx->live_cpu < 0 &&
	    !ctx->task_ended &&
	    (ctx->state == PFM_CTX_LOADED || ctx->state == PFM_CTX_MASKED))
		pfm_ctx_sched_in(ctx);
	raw_spin_unlock(&ctx->lock);
}

static void pfm_hook_sched_in(struct preempt_notifier *pn, int cpu)
{
	struct pfm_hook *hook = container_of(pn, struct pfm_hook, pn);
	unsigned long flags;

	raw_spin_lock_irqsave(&hook->lock, flags);
	pfm_hook_load_here(hook);
	raw_spin_unlock_irqrestore(&hook->lock, flags);
}

/* The attached context's thread ended: hand the unload to pfm_wq. */
static void pfm_hook_end_ctx(struct pfm_hook *hook)
	__must_hold(&hook->lock)
{
	struct pfm_context *ctx = hook->ctx;

	if (!ctx)
		return;
	raw_spin_lock(&ctx->lock);
	if (!ctx->task_ended) {
		ctx->task_ended = true;
		ctx->ops->thread_end(ctx);
	}
	raw_spin_unlock(&ctx->lock);
}

/*
 * Runs with the runqueue lock held: nothing here may wake a task, so the
 * end of the thread and the free are handed on through irq_work.
 */
static void pfm_hook_sched_out(struct preempt_notifier *pn,
			       struct task_struct *next)
{
	struct pfm_hook *hook = container_of(pn, struct pfm_hook, pn);
	bool dead = READ_ONCE(current->__state) == TASK_DEAD;
	struct pfm_context *ctx;
	unsigned long flags;

	raw_spin_lock_irqsave(&hook->lock, flags);
	ctx = hook->ctx;
	if (ctx) {
		raw_spin_lock(&ctx->lock);
		/* A virtual description keeps its state; not past the end. */
		if (ctx->live_cpu == smp_processor_id() && ctx->vpmu && !dead)
			pfm_ctx_switch_out(ctx);
		else if (ctx->live_cpu == smp_processor_id())
			pfm_ctx_sched_out(ctx);
		raw_spin_unlock(&ctx->lock);
	}
	if (dead) {
		pfm_hook_end_ctx(hook);
		/*
		 * The list walk that called us continues from pn->link.next:
		 * unlink without poisoning it.  The memory stays until
		 * pfm_wq runs, long after this walk.
		 */
		__hlist_del(&pn->link);
		hook->linked = false;
		hook->dead = true;
		pfm_hook_maybe_free(hook);
	}
	raw_spin_unlock_irqrestore(&hook->lock, flags);
}

static struct preempt_ops pfm_hook_ops = {
	.sched_in	= pfm_hook_sched_in,
	.sched_out	= pfm_hook_sched_out,
};

/**
 * pfm_hook_of() - the hook a preempt notifier belongs to
 * @pn: a notifier on some thread's list
 *
 * Return: the hook, or NULL when @pn is not perfmon's.
 */
struct pfm_hook *pfm_hook_of(struct preempt_notifier *pn)
{
	return pn->ops == &pfm_hook_ops ?
	       container_of(pn, struct pfm_hook, pn) : NULL;
}

/*
 * On the thread: link the notifier while a context is attached, unlink
 * it while none is, and load the set here.  Interrupts are off (@lock),
 * so no context switch of this thread walks the list meanwhile.
 */
static void pfm_hook_sync(struct pfm_hook *hook)
	__must_hold(&hook->lock)
{
	lockdep_assert_held(&hook->lock);
	if (hook->ctx && !hook->linked) {
		preempt_notifier_register(&hook->pn);
		hook->linked = true;
	} else if (!hook->ctx && hook->linked) {
		preempt_notifier_unregister(&hook->pn);
		hook->linked = false;
	}
	pfm_hook_load_here(hook);
}

/**
 * pfm_hook_exec_check() - end the context of a thread that exec'd
 * @hook: the current thread's hook, locked
 *
 * On the thread, before it returns to user space after an exec: end the
 * attached context if the new image is not its owner's to watch
 * (pfm_exec_revokes()).  The values counted up to here are saved, and
 * the context never goes live on this thread again; pfm_wq unloads it
 * and tells the monitor (PFM_MSG_END).
 */
void pfm_hook_exec_check(struct pfm_hook *hook)
	__must_hold(&hook->lock)
{
	struct pfm_context *ctx = hook->ctx;

	lockdep_assert_held(&hook->lock);
	if (!ctx)
		return;
	raw_spin_lock(&ctx->lock);
	if (ctx->task == current && !ctx->task_ended &&
	    pfm_exec_revokes(ctx)) {
		if (ctx->live_cpu == smp_processor_id())
			pfm_ctx_sched_out(ctx);
		ctx->task_ended = true;
		ctx->ops->thread_end(ctx);
		pfm_exec_log(ctx);
	}
	raw_spin_unlock(&ctx->lock);
}

/* On the thread, in do_exit(): it will never link the notifier now. */
static void pfm_hook_exiting(struct pfm_hook *hook)
	__must_hold(&hook->lock)
{
	if (hook->linked)
		return;		/* its last switch ends the context */
	hook->dead = true;
	pfm_hook_end_ctx(hook);
}

static void pfm_hook_sync_fn(struct callback_head *cb)
{
	struct pfm_hook *hook = container_of(cb, struct pfm_hook, sync_work);
	unsigned long flags;

	raw_spin_lock_irqsave(&hook->lock, flags);
	hook->queued = false;
	if (current->flags & PF_EXITING) {
		pfm_hook_exiting(hook);
	} else {
		/* An exec since the load may have ended the monitoring. */
		pfm_hook_exec_check(hook);
		pfm_hook_sync(hook);
	}
	pfm_hook_maybe_free(hook);
	raw_spin_unlock_irqrestore(&hook->lock, flags);
}

/*
 * Have the thread sync its notifier on its next return to user space (at
 * once when it is the caller).  Return: true when @sync_work is reserved
 * (@queued) for the caller to queue with pfm_hook_kick_queue() once it
 * unlocks: task_work_add() may allocate (KASAN's record of the caller's
 * stack), which a raw lock with interrupts off does not allow.
 */
static bool pfm_hook_kick_reserve(struct pfm_hook *hook)
	__must_hold(&hook->lock)
{
	lockdep_assert_held(&hook->lock);
	if (hook->task == current) {
		pfm_hook_sync(hook);
		return false;
	}
	if (hook->queued)
		return false;
	hook->queued = true;
	return true;
}

/*
 * Queue the work pfm_hook_kick_reserve() reserved; @lock not held.  When
 * the thread is past running task works (exiting) the reservation goes.
 * A notifier that was linked then sees the thread's last switch, which
 * ends the context attached (or did already): nothing to undo.  One that
 * was not never will: the attach is undone, and nothing else touched it
 * meanwhile (the work that links it was not queued, and only the thread
 * itself or its last switch change it).
 * Return: 0, or -ESRCH when the context attached was taken back.
 */
static int pfm_hook_kick_queue(struct pfm_hook *hook, bool was_linked)
{
	unsigned long flags;
	int ret = 0;

	if (!task_work_add(hook->task, &hook->sync_work, TWA_RESUME))
		return 0;
	raw_spin_lock_irqsave(&hook->lock, flags);
	hook->queued = false;
	if (!was_linked && hook->ctx) {
		hook->ctx = NULL;
		ret = -ESRCH;
	}
	pfm_hook_maybe_free(hook);
	raw_spin_unlock_irqrestore(&hook->lock, flags);
	return ret;
}

/* The thread's hook, pinned, if it has one that is not being freed. */
static struct pfm_hook *pfm_hook_lookup_pin(struct task_struct *task)
{
	struct pfm_hook *hook;
	unsigned long flags;
	bool found;

	lockdep_assert_held(&pfm_hooks_mutex);
	hash_for_each_possible(pfm_hooks, hook, node, (unsigned long)task) {
		if (hook->task != task)
			continue;
		raw_spin_lock_irqsave(&hook->lock, flags);
		found = !hook->freeing;
		if (found)
			hook->pins++;
		raw_spin_unlock_irqrestore(&hook->lock, flags);
		if (found)
			return hook;
	}
	return NULL;
}

/* A new hook for @task, pinned once, in the registry. */
static struct pfm_hook *pfm_hook_alloc(struct task_struct *task)
{
	struct pfm_hook *hook = kzalloc(sizeof(*hook), GFP_KERNEL_ACCOUNT);

	if (!hook)
		return NULL;
	preempt_notifier_init(&hook->pn, &pfm_hook_ops);
	init_task_work(&hook->sync_work, pfm_hook_sync_fn);
	init_irq_work(&hook->free_iw, pfm_hook_free_irq);
	INIT_WORK(&hook->free_work, pfm_hook_free_work);
	raw_spin_lock_init(&hook->lock);
	get_task_struct(task);
	hook->task = task;
	hook->pins = 1;
	__module_get(THIS_MODULE);
	hash_add(pfm_hooks, &hook->node, (unsigned long)task);
	return hook;
}

/**
 * pfm_hook_get() - the hook of a thread about to be loaded, pinned
 * @task: the thread
 *
 * Finds the thread's hook, or allocates one.  The pin keeps it until
 * pfm_hook_put().
 *
 * Context: process context; may sleep.
 * Return: the hook, or NULL when out of memory.
 */
struct pfm_hook *pfm_hook_get(struct task_struct *task)
{
	struct pfm_hook *hook;

	mutex_lock(&pfm_hooks_mutex);
	hook = pfm_hook_lookup_pin(task);
	if (!hook)
		hook = pfm_hook_alloc(task);
	mutex_unlock(&pfm_hooks_mutex);
	return hook;
}

/**
 * pfm_hook_put() - drop the pin of pfm_hook_get()
 * @hook: the hook
 */
void pfm_hook_put(struct pfm_hook *hook)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&hook->lock, flags);
	hook->pins--;
	pfm_hook_maybe_free(hook);
	raw_spin_unlock_irqrestore(&hook->lock, flags);
}

/**
 * pfm_hook_attach() - follow @ctx's set on the hook's thread
 * @hook: the thread's hook, pinned
 * @ctx: the context, just loaded (ctx->hook is @hook); no other context
 *       is attached (one context per thread)
 *
 * Self-monitoring takes effect now; another thread links the notifier
 * and loads the set on its next return to user space.
 *
 * The thread's exec count is compared with the one read before the
 * caller's permission was checked (ctx->exec_id), under @lock, which the
 * exec tracepoint also takes: an exec in between, whose new image the
 * check did not see, makes the load start over; an exec after it finds
 * the context attached (pfm_hook_exec()).
 *
 * Context: process context.
 * Return: 0, -ESRCH when the thread is exiting, -EAGAIN when it exec'd
 * since its permission was checked.
 */
int pfm_hook_attach(struct pfm_hook *hook, struct pfm_context *ctx)
{
	bool kick = false, was_linked = false;
	unsigned long flags;
	int ret = -ESRCH;

	raw_spin_lock_irqsave(&hook->lock, flags);
	if (READ_ONCE(hook->task->self_exec_id) != ctx->exec_id) {
		ret = -EAGAIN;
	} else if (!hook->dead && !WARN_ON_ONCE(hook->ctx)) {
		hook->ctx = ctx;
		was_linked = hook->linked;
		kick = pfm_hook_kick_reserve(hook);
		ret = 0;
	}
	raw_spin_unlock_irqrestore(&hook->lock, flags);
	if (kick)
		ret = pfm_hook_kick_queue(hook, was_linked);
	return ret;
}

/**
 * pfm_hook_detach() - stop following a context (it was unloaded)
 * @hook: the hook the context was attached to
 *
 * From now on the hook does not touch the context, which may be freed.
 * The thread unlinks its notifier on its next return to user space (at
 * once when it is the caller), or at its last context switch.
 *
 * Context: process context.
 */
void pfm_hook_detach(struct pfm_hook *hook)
{
	unsigned long flags;
	bool kick;

	raw_spin_lock_irqsave(&hook->lock, flags);
	hook->ctx = NULL;
	kick = hook->linked && pfm_hook_kick_reserve(hook);
	pfm_hook_maybe_free(hook);
	raw_spin_unlock_irqrestore(&hook->lock, flags);
	/* Reserved, the hook stays; an exiting thread unlinks at its last switch. */
	if (kick)
		pfm_hook_kick_queue(hook, true);
}
