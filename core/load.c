// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching contexts to threads and CPUs (load), detaching them
 * (unload), the end of a monitored thread, and the close of a context.
 *
 * A load (pfm_load_context()) resolves and checks its target first,
 * unlocked (core/perm.c); under pfm_sessions_lock() (core/session.c) it
 * reserves the session, commits the context as loaded under its lock
 * (__pfm_load_context()), then publishes the session and attaches the
 * thread's hook.  A failure at any step undoes the steps before it.
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

/* Runs of a load while the thread exec'd meanwhile (core/exec.c). */
#define PFM_LOAD_TRIES	3

/* A load's request, and its target and session. */
struct pfm_load_state {
	const struct pfarg_load *req;
	struct task_struct *task;
	struct pfm_hook *hook;
	u64 exec_id;
	int cpu;
};

/**
 * __pfm_load_context() - commit a load: the context is attached, the set
 * ready to go live
 * @ctx: the context, locked, saved
 * @info: the struct pfm_load_state: the request, the target resolved
 *
 * Return: 0, or as the first checks (pfm_load_check()).
 */
static int __pfm_load_context(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	struct pfm_load_state *ls = info;
	int ret;

	ret = pfm_load_check(ctx, ls->req);
	if (ret)
		return ret;
	pfm_set_activate(ctx, pfm_find_set(ctx, ls->req->load_set));
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

/* Detach a context whose load could not be completed. */
static int pfm_load_undo(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	ctx->state = PFM_CTX_UNLOADED;
	ctx->task = NULL;
	ctx->hook = NULL;
	ctx->cpu = -1;
	return 0;
}

/*
 * One try of a load: reserve the session, commit the load, publish the
 * session and attach the thread's hook, all under pfm_sessions_lock().
 * Refused by the commit, another load of this context may have won the
 * race: the session it published is not ours to withdraw.
 */
static int pfm_load_try(struct pfm_context *ctx, const struct pfarg_load *req)
{
	struct pfm_load_state ls = { .req = req, .cpu = -1 };
	int ret;

	/*
	 * The end of the previous thread first (core/hook.c, "Exit racing
	 * a reload"): its PFM_MSG_END carries that thread's ids, which the
	 * commit replaces.
	 */
	pfm_ctx_exit_flush(ctx);
	ret = pfm_load_target(ctx, req, &ls);
	if (ret)
		return ret;
	pfm_sessions_lock();
	ret = pfm_session_acquire(ctx, ls.task, ls.cpu);
	if (ret)
		goto unlock_sessions;
	ret = pfm_run(ctx, __pfm_load_context, &ls);
	if (ret)
		goto cancel_session;
	/* A virtual description's counters, before anything counts. */
	ret = pfm_vpmu_sync(ctx);
	if (ret)
		goto undo_load;
	pfm_session_publish(ctx, ls.task, ls.cpu);
	/* Last: the thread's own context switches count from then on. */
	if (ls.task) {
		ret = pfm_hook_attach(ls.hook, ctx);
		if (ret)
			goto withdraw_session;
	}
	pfm_sessions_unlock();
	if (ls.hook)
		pfm_hook_put(ls.hook);
	return 0;

withdraw_session:
	pfm_session_withdraw(ctx, ls.task, ls.cpu);
undo_load:
	pfm_run(ctx, pfm_load_undo, NULL);
	pfm_vpmu_sync(ctx);
cancel_session:
	pfm_session_cancel(ctx, ls.task);
unlock_sessions:
	pfm_sessions_unlock();
	pfm_load_put(&ls);
	return ret;
}

/**
 * pfm_load_context() - PFM_LOAD_CONTEXT: attach a context to a thread
 * or a CPU
 * @ctx: the context, not locked
 * @req: load_pid (thread id, or CPU for a system-wide context) and
 *       load_set, in kernel memory
 *
 * A thread that exec'd between the check and the attach is checked
 * again, PFM_LOAD_TRIES times in all.
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADFD before creation; -EBUSY when loaded already, when
 * the thread carries a context, the CPU has one, or task and system
 * sessions would mix, or a virtual description's counters find no room
 * in perf; -EINVAL bad set, CPU or reserved field, or a
 * PFM_FL_NOTIFY_BLOCK context on the caller's own thread; -EACCES
 * system-wide when the creator had neither CAP_PERFMON (or
 * CAP_SYS_ADMIN) nor paranoid level 0 or below; -ESRCH no such thread
 * (or exiting); -EPERM not allowed to monitor it; -ENOMEM; -EAGAIN when
 * the thread exec'd at every try.
 */
int pfm_load_context(struct pfm_context *ctx, const struct pfarg_load *req)
{
	unsigned int tries = 0;
	int ret;

	do {
		ret = pfm_load_try(ctx, req);
	} while (ret == -EAGAIN && ++tries < PFM_LOAD_TRIES);
	return ret;
}

/* What an unload detached. */
struct pfm_unload_state {
	struct task_struct *task;
	struct pfm_hook *hook;
	int cpu;
	bool was_loaded;
};

/**
 * __pfm_unload_context() - detach: the set is saved and will not go
 * live again
 * @ctx: the context, locked, saved
 * @info: the struct pfm_unload_state: out, what was detached
 *
 * Return: 0 (unloading an unloaded context does nothing), or -EBADFD
 * before creation.
 */
static int __pfm_unload_context(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	struct pfm_unload_state *u = info;

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
 * pfm_unload_context() - PFM_UNLOAD_CONTEXT: detach a context
 * @ctx: the context, not locked
 *
 * Under pfm_sessions_lock(): the set is saved, the thread's hook
 * detached and the session released.  The counts are saved and stay
 * readable.  A thread blocked on a notification runs on.  A virtual
 * description lets its counters go.  Also the core's own unload, at
 * the end of a monitored thread and at close.
 *
 * Context: process context; may sleep.
 * Return: as __pfm_unload_context(), or the description's error.
 */
int pfm_unload_context(struct pfm_context *ctx)
{
	struct pfm_unload_state u = { .cpu = -1 };
	int ret;

	pfm_sessions_lock();
	ret = pfm_run(ctx, __pfm_unload_context, &u);
	if (!ret && u.was_loaded) {
		/* Before the thread may take another context (its hook). */
		if (u.hook)
			pfm_hook_detach(u.hook);
		pfm_session_release(ctx, u.task, u.cpu);
	}
	pfm_sessions_unlock();
	wake_up_interruptible_all(&ctx->restart_wait);
	if (u.task)
		put_task_struct(u.task);
	return pfm_vpmu_finish(ctx, ret);
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
		pfm_unload_context(ctx);
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

	pfm_unload_context(ctx);
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
