// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching contexts to threads and CPUs (load), detaching them
 * (unload), the end of a monitored thread, and the close of a context.
 *
 * A load resolves and checks its target first, unlocked (core/perm.c),
 * and, under pfm_sessions_lock() (core/session.c), reserves the session
 * (pfm_load_context_prepare()); commits the context as loaded under its
 * lock (__pfm_load_context()); then publishes the session and attaches
 * the thread's hook (pfm_load_context_end()).  A failure at any step
 * undoes the steps before it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/irq_work.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/workqueue.h>

#include "perfmon.h"

/* State and argument checks shared by the first look and the commit. */
static int pfm_load_check(struct pfm_context *ctx, const struct pfarg_load *req)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	switch (ctx->state) {
	case PFM_CTX_NEW:
		return -EBADFD;
	case PFM_CTX_UNLOADED:
		break;
	default:
		return -EBUSY;
	}
	if (req->load_reserved1 ||
	    memchr_inv(req->load_reserved2, 0, sizeof(req->load_reserved2)) ||
	    !pfm_find_set(ctx, req->load_set))
		return -EINVAL;
	return 0;
}

/* A load's target and session, in pfm_args.core. */
struct pfm_load_state {
	struct task_struct *task;
	struct pfm_hook *hook;
	u64 exec_id;
	int cpu;
};

/**
 * __pfm_load_context() - commit a load: the context is attached, the set
 * ready to go live
 * @ctx: the context, locked, saved
 * @a: a->load; the target pfm_load_context_prepare() resolved
 *
 * Return: 0, or as pfm_load_context_prepare()'s first checks.
 */
int __pfm_load_context(struct pfm_context *ctx, struct pfm_args *a)
	__must_hold(&ctx->lock)
{
	struct pfm_load_state *ls = pfm_args_core(a, struct pfm_load_state);
	int ret;

	ret = pfm_load_check(ctx, a->load);
	if (ret)
		return ret;
	pfm_set_activate(ctx, pfm_find_set(ctx, a->load->load_set));
	ctx->started = false;
	ctx->task_ended = false;
	ctx->throttled = false;
	bitmap_zero(ctx->restart_pmds, PFM_MAX_PMDS);
	ctx->switch_pending = false;
	ctx->state = PFM_CTX_LOADED;
	if (ls->task) {
		ctx->task = ls->task;
		ctx->hook = ls->hook;
		ctx->exec_id = ls->exec_id;
		ctx->end_pid = task_tgid_nr_ns(ls->task, ctx->pid_ns);
		ctx->end_tid = task_pid_nr_ns(ls->task, ctx->pid_ns);
	} else {
		ctx->cpu = ls->cpu;
	}
	return 0;
}

/* Resolve the target of a load: a thread (referenced) or an online CPU. */
static int pfm_load_target(struct pfm_context *ctx, const struct pfarg_load *req,
			   struct pfm_load_state *ls)
{
	unsigned long flags;
	int ret;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	ret = pfm_load_check(ctx, req);
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	if (ret)
		return ret;

	if (pfm_ctx_is_system(ctx)) {
		/*
		 * A CPU's samples show every user's threads and addresses:
		 * the creator's privilege (kernel API contexts have it).
		 */
		if (!(ctx->priv & PFM_PMC_PRIV_CPU)) {
			pfm_perm_system_refused();
			return -EACCES;
		}
		ls->cpu = req->load_pid;
		if (req->load_pid >= nr_cpu_ids || !cpu_online(ls->cpu))
			return -EINVAL;
		return 0;
	}
	ls->task = pfm_get_target(req->load_pid, ctx->kernel, &ls->exec_id);
	if (IS_ERR(ls->task))
		return PTR_ERR(ls->task);
	/* Blocked on its own notification, who would restart it? */
	if ((ctx->flags & PFM_FL_NOTIFY_BLOCK) && ls->task == current) {
		pr_info_ratelimited("a PFM_FL_NOTIFY_BLOCK context cannot monitor its own thread: drop the flag or load it on another thread\n");
		put_task_struct(ls->task);
		return -EINVAL;
	}
	ls->hook = pfm_hook_get(ls->task);
	if (!ls->hook) {
		put_task_struct(ls->task);
		return -ENOMEM;
	}
	return 0;
}

/* Drop what a load's target holds: the hook and the thread. */
static void pfm_load_put(struct pfm_load_state *ls)
{
	if (ls->hook)
		pfm_hook_put(ls->hook);
	if (ls->task)
		put_task_struct(ls->task);
}

/**
 * pfm_load_context_prepare() - resolve, check and reserve a load's target
 * @ctx: the context, not locked
 * @a: a->load: load_pid (thread id, or CPU for a system-wide context),
 *     load_set
 *
 * On success the sessions are locked (pfm_sessions_lock()) until
 * pfm_load_context_end().
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADFD before creation; -EBUSY when loaded already, when
 * the thread carries a context, the CPU has one, or task and system
 * sessions would mix; -EINVAL bad set, CPU or reserved field, or a
 * PFM_FL_NOTIFY_BLOCK context on the caller's own thread; -EACCES
 * system-wide when the creator had neither CAP_PERFMON (or
 * CAP_SYS_ADMIN) nor paranoid level 0 or below; -ESRCH no such thread
 * (or exiting); -EPERM not allowed to monitor it; -ENOMEM; -EAGAIN when
 * the thread exec'd (core/exec.c: the call tries PFM_LOAD_TRIES times).
 */
int pfm_load_context_prepare(struct pfm_context *ctx, struct pfm_args *a)
{
	struct pfm_load_state *ls = pfm_args_core(a, struct pfm_load_state);
	int ret;

	*ls = (struct pfm_load_state){ .cpu = -1 };
	/*
	 * The end of the previous thread first (core/hook.c, "Exit racing
	 * a reload"): its PFM_MSG_END carries that thread's ids, which the
	 * commit replaces.
	 */
	pfm_ctx_exit_flush(ctx);
	ret = pfm_load_target(ctx, a->load, ls);
	if (ret)
		return ret;
	pfm_sessions_lock();
	ret = pfm_session_acquire(ctx, ls->task, ls->cpu);
	if (ret) {
		pfm_sessions_unlock();
		pfm_load_put(ls);
	}
	return ret;
}

/* Detach a context whose load could not be completed. */
static int pfm_load_undo(struct pfm_context *ctx, struct pfm_args *a)
	__must_hold(&ctx->lock)
{
	ctx->state = PFM_CTX_UNLOADED;
	ctx->task = NULL;
	ctx->hook = NULL;
	ctx->cpu = -1;
	return 0;
}

static const struct pfm_op pfm_load_undo_op = { .fn = pfm_load_undo };

/**
 * pfm_load_context_end() - publish a committed load, or undo it
 * @ctx: the context, not locked
 * @a: the call
 * @ret: __pfm_load_context()'s result
 *
 * A per-thread context's hook is attached last: the thread's own
 * context switches count from then on.
 *
 * Context: process context; may sleep.
 * Return: @ret, or the attach's error (-ESRCH exiting, -EAGAIN exec'd),
 * or a virtual description's (-EBUSY: perf has no room for the counters).
 */
int pfm_load_context_end(struct pfm_context *ctx, struct pfm_args *a, int ret)
{
	struct pfm_load_state *ls = pfm_args_core(a, struct pfm_load_state);

	/*
	 * Refused by the commit: another load of this context may have won
	 * the race, and the session it published is not ours to withdraw.
	 */
	if (ret)
		goto cancel_session;
	/* A virtual description's counters, before anything counts. */
	ret = pfm_vpmu_sync(ctx);
	if (ret)
		goto undo_load;
	pfm_session_publish(ctx, ls->task, ls->cpu);
	if (ls->task) {
		ret = pfm_hook_attach(ls->hook, ctx);
		if (ret)
			goto withdraw_session;
	}
	pfm_sessions_unlock();
	if (ls->hook)
		pfm_hook_put(ls->hook);
	return 0;

withdraw_session:
	pfm_session_withdraw(ctx, ls->task, ls->cpu);
undo_load:
	pfm_call(ctx, &pfm_load_undo_op, a);
	pfm_vpmu_sync(ctx);
cancel_session:
	pfm_session_cancel(ctx, ls->task);
	pfm_sessions_unlock();
	pfm_load_put(ls);
	return ret;
}

/* What an unload detached, in pfm_args.core. */
struct pfm_unload_state {
	struct task_struct *task;
	struct pfm_hook *hook;
	int cpu;
	bool was_loaded;
};

/**
 * pfm_unload_context_prepare() - lock the sessions for an unload
 * @ctx: the context, not locked
 * @a: the call
 *
 * Context: process context; may sleep.
 * Return: 0.
 */
int pfm_unload_context_prepare(struct pfm_context *ctx, struct pfm_args *a)
{
	*pfm_args_core(a, struct pfm_unload_state) =
		(struct pfm_unload_state){ .cpu = -1 };
	pfm_sessions_lock();
	return 0;
}

/**
 * __pfm_unload_context() - detach: the set is saved and will not go
 * live again
 * @ctx: the context, locked, saved
 * @a: the call; what was detached goes to pfm_unload_context_end()
 *
 * Return: 0 (unloading an unloaded context does nothing), or -EBADFD
 * before creation.
 */
int __pfm_unload_context(struct pfm_context *ctx, struct pfm_args *a)
	__must_hold(&ctx->lock)
{
	struct pfm_unload_state *u = pfm_args_core(a, struct pfm_unload_state);

	lockdep_assert_held(&ctx->lock);
	switch (ctx->state) {
	case PFM_CTX_NEW:
		return -EBADFD;
	case PFM_CTX_LOADED:
	case PFM_CTX_MASKED:
		break;
	default:
		return 0;	/* nothing to do */
	}
	u->was_loaded = true;
	u->task = ctx->task;
	u->hook = ctx->hook;
	u->cpu = ctx->cpu;
	ctx->task = NULL;
	ctx->hook = NULL;
	ctx->cpu = -1;
	ctx->started = false;
	ctx->state = PFM_CTX_UNLOADED;
	return 0;
}

/**
 * pfm_unload_context_end() - release what the unload detached
 * @ctx: the context, not locked
 * @a: the call
 * @ret: __pfm_unload_context()'s result
 *
 * The counts are saved and stay readable.  A thread blocked on a
 * notification runs on.  A virtual description lets its counters go.
 *
 * Context: process context; may sleep.
 * Return: @ret.
 */
int pfm_unload_context_end(struct pfm_context *ctx, struct pfm_args *a,
			   int ret)
{
	struct pfm_unload_state *u = pfm_args_core(a, struct pfm_unload_state);

	if (!ret && u->was_loaded) {
		/* Before the thread may take another context (its hook). */
		if (u->hook)
			pfm_hook_detach(u->hook);
		pfm_session_release(ctx, u->task, u->cpu);
	}
	pfm_sessions_unlock();
	wake_up_interruptible_all(&ctx->restart_wait);
	if (u->task)
		put_task_struct(u->task);
	return pfm_vpmu_finish(ctx, a, ret);
}

/* PFM_UNLOAD_CONTEXT from the core itself: the end of a thread, a close. */
static void pfm_unload(struct pfm_context *ctx)
{
	static const struct pfm_op unload = {
		.prepare = pfm_unload_context_prepare,
		.fn = __pfm_unload_context,
		.finish = pfm_unload_context_end,
	};
	struct pfm_args a = {};

	pfm_call(ctx, &unload, &a);
}

/* The monitored thread ended: unload, then tell the monitor. */
static void pfm_ctx_exit_work(struct work_struct *work)
{
	struct pfm_context *ctx = container_of(work, struct pfm_context,
					       exit_work);
	unsigned long flags;
	pid_t pid, tid;

	bool ended;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	pid = ctx->end_pid;
	tid = ctx->end_tid;
	/* Unloaded (and maybe loaded again) by the monitor meanwhile? */
	ended = ctx->task_ended;
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	if (ended)
		pfm_unload(ctx);
	pfm_msg_end(ctx, pid, tid);
	pfm_ctx_put(ctx);
}

static void pfm_ctx_exit_irq(struct irq_work *iw)
{
	struct pfm_context *ctx = container_of(iw, struct pfm_context, exit_iw);

	/* Already queued: that work holds a reference, this one goes. */
	if (!queue_work(pfm_wq, &ctx->exit_work))
		refcount_dec(&ctx->refs);
}

/**
 * pfm_ctx_exit_flush() - let a queued end of the monitored thread finish
 * @ctx: the context, not locked
 *
 * Once the thread passed its last context switch with @ctx attached,
 * the exit work unloads @ctx and queues PFM_MSG_END with the ids saved
 * at load.  The monitor may unload first and load again; this waits
 * for that work, so that the message goes out with the ids of the
 * thread that ended, before a new load replaces them.  A context that
 * is unloaded cannot be ended again until the next load commits.
 *
 * Context: process context; may sleep.  Not from pfm_wq.
 */
void pfm_ctx_exit_flush(struct pfm_context *ctx)
{
	irq_work_sync(&ctx->exit_iw);
	flush_work(&ctx->exit_work);
}

/* Set up the exit path of a new context. */
void pfm_ctx_exit_init(struct pfm_context *ctx)
{
	init_irq_work(&ctx->exit_iw, pfm_ctx_exit_irq);
	INIT_WORK(&ctx->exit_work, pfm_ctx_exit_work);
}

/**
 * pfm_ctx_exit_queue() - hand the end of the monitored thread to pfm_wq
 * @ctx: the context, locked; ctx->task_ended just became true
 *
 * Context: any, including the scheduler's hooks.
 */
void pfm_ctx_exit_queue(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	pfm_ctx_get(ctx);
	if (!irq_work_queue(&ctx->exit_iw))
		refcount_dec(&ctx->refs);	/* pending: it holds one */
}

/**
 * pfm_ctx_release() - the file of a context is closed
 * @ctx: the context; the file's reference is dropped
 *
 * Context: process context.
 */
void pfm_ctx_release(struct pfm_context *ctx)
{
	unsigned long flags;

	pfm_unload(ctx);
	raw_spin_lock_irqsave(&ctx->lock, flags);
	ctx->state = PFM_CTX_ZOMBIE;
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	pfm_ctx_put(ctx);
}

/**
 * pfm_ctx_release_sync() - pfm_ctx_release(), then wait for the wake-ups
 * queued before the unload
 * @ctx: the context; the caller's reference is dropped
 *
 * For the kernel API, whose owner's completion (ctx->kcompl) may go
 * away once pfmk_close() returns: a file's wait queue lives in the
 * context, the completion does not.  Once unloaded, the context is on
 * no thread or CPU, so no end of a thread (exit_iw, exit_work) and no
 * overflow wake-up (wake_iw) is queued any more; those queued before
 * have run when this returns, and pfm_msg_end() queues nothing for the
 * ZOMBIE context.
 *
 * Context: process context; may sleep.  Not from pfm_wq.
 */
void pfm_ctx_release_sync(struct pfm_context *ctx)
{
	pfm_ctx_get(ctx);
	pfm_ctx_release(ctx);
	pfm_ctx_exit_flush(ctx);
	irq_work_sync(&ctx->wake_iw);
	pfm_ctx_put(ctx);
}
