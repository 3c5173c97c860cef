// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching contexts to threads and CPUs (load), detaching them
 * (unload), the end of a monitored thread, and the close of a context.
 *
 * A load resolves and checks its target first, unlocked (core/perm.c),
 * then, under pfm_sessions_lock() (core/session.c), reserves the
 * session, commits the context as loaded under its lock, and publishes
 * the session; a failure at any step undoes the steps before it.
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

struct pfm_load_args {
	const struct pfarg_load *req;
	struct task_struct *task;
	struct pfm_hook *hook;
	u64 exec_id;
	int cpu;
};

/* Commit a load: the context is attached, the set ready to go live. */
static int pfm_load_commit(struct pfm_context *ctx, void *arg)
	__must_hold(&ctx->lock)
{
	struct pfm_load_args *a = arg;
	int ret;

	ret = pfm_load_check(ctx, a->req);
	if (ret)
		return ret;
	pfm_set_activate(ctx, pfm_find_set(ctx, a->req->load_set));
	ctx->started = false;
	ctx->task_ended = false;
	ctx->throttled = false;
	bitmap_zero(ctx->restart_pmds, PFM_MAX_PMDS);
	ctx->switch_pending = false;
	ctx->state = PFM_CTX_LOADED;
	if (a->task) {
		ctx->task = a->task;
		ctx->hook = a->hook;
		ctx->exec_id = a->exec_id;
		ctx->end_pid = task_tgid_nr_ns(a->task, ctx->pid_ns);
		ctx->end_tid = task_pid_nr_ns(a->task, ctx->pid_ns);
	} else {
		ctx->cpu = a->cpu;
	}
	return 0;
}

/* Resolve the target of a load: a thread (referenced) or an online CPU. */
static int pfm_load_target(struct pfm_context *ctx, const struct pfarg_load *req,
			   struct pfm_load_args *a)
{
	unsigned long flags;
	int ret;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	ret = pfm_load_check(ctx, req);
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	if (ret)
		return ret;

	a->req = req;
	if (pfm_ctx_is_system(ctx)) {
		/*
		 * A CPU's samples show every user's threads and addresses:
		 * the creator's privilege (kernel API contexts have it).
		 */
		if (!(ctx->priv & PFM_PMC_PRIV_CPU)) {
			pfm_perm_system_refused();
			return -EACCES;
		}
		a->cpu = req->load_pid;
		if (req->load_pid >= nr_cpu_ids || !cpu_online(a->cpu))
			return -EINVAL;
		return 0;
	}
	a->task = pfm_get_target(req->load_pid, ctx->kernel, &a->exec_id);
	if (IS_ERR(a->task))
		return PTR_ERR(a->task);
	/* Blocked on its own notification, who would restart it? */
	if ((ctx->flags & PFM_FL_NOTIFY_BLOCK) && a->task == current) {
		pr_info_ratelimited("a PFM_FL_NOTIFY_BLOCK context cannot monitor its own thread: drop the flag or load it on another thread\n");
		put_task_struct(a->task);
		return -EINVAL;
	}
	a->hook = pfm_hook_get(a->task);
	if (!a->hook) {
		put_task_struct(a->task);
		return -ENOMEM;
	}
	return 0;
}

/* Detach a context whose load could not be completed. */
static int pfm_load_undo(struct pfm_context *ctx, void *arg)
	__must_hold(&ctx->lock)
{
	ctx->state = PFM_CTX_UNLOADED;
	ctx->task = NULL;
	ctx->hook = NULL;
	ctx->cpu = -1;
	return 0;
}

/* One try of pfm_load_context(). */
static int pfm_load_once(struct pfm_context *ctx, const struct pfarg_load *req)
{
	struct pfm_load_args a = { .cpu = -1 };
	int ret;

	/*
	 * The end of the previous thread first (core/hook.c, "Exit racing
	 * a reload"): its PFM_MSG_END carries that thread's ids, which the
	 * commit below replaces.
	 */
	pfm_ctx_exit_flush(ctx);
	ret = pfm_load_target(ctx, req, &a);
	if (ret)
		return ret;

	pfm_sessions_lock();
	ret = pfm_session_acquire(ctx, a.task, a.cpu);
	if (ret)
		goto unlock_sessions;
	ret = pfm_ctx_call(ctx, pfm_load_commit, &a);
	if (ret)
		goto release_session;
	pfm_session_publish(ctx, a.task, a.cpu);
	if (a.task) {
		ret = pfm_hook_attach(a.hook, ctx);
		if (ret) {
			pfm_ctx_call(ctx, pfm_load_undo, NULL);
			goto release_session;
		}
	}
	pfm_sessions_unlock();
	if (a.hook)
		pfm_hook_put(a.hook);
	return 0;

release_session:
	pfm_session_release(ctx, a.task, a.cpu);
unlock_sessions:
	pfm_sessions_unlock();
	if (a.hook)
		pfm_hook_put(a.hook);
	if (a.task)
		put_task_struct(a.task);
	return ret;
}

/* An exec of the target between the check and the attach: try again. */
#define PFM_LOAD_TRIES	3

/**
 * pfm_load_context() - attach a context to a thread or a CPU
 * @ctx: the context, not locked
 * @req: load_pid (thread id, or CPU for a system-wide context), load_set
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADFD before creation; -EBUSY when loaded already, when
 * the thread carries a context, the CPU has one, or task and system
 * sessions would mix; -EINVAL bad set, CPU or reserved field, or a
 * PFM_FL_NOTIFY_BLOCK context on the caller's own thread; -EACCES
 * system-wide when the creator had neither CAP_PERFMON (or
 * CAP_SYS_ADMIN) nor paranoid level 0 or below; -ESRCH no
 * such thread (or exiting); -EPERM not allowed to monitor it; -ENOMEM;
 * -EAGAIN when the thread exec'd during each of PFM_LOAD_TRIES tries (core/exec.c).
 */
int pfm_load_context(struct pfm_context *ctx, const struct pfarg_load *req)
{
	int tries = PFM_LOAD_TRIES, ret;

	do {
		ret = pfm_load_once(ctx, req);
	} while (ret == -EAGAIN && --tries);
	return ret;
}

struct pfm_unload_args {
	struct task_struct *task;
	struct pfm_hook *hook;
	int cpu;
	bool was_loaded;
};

/* Detach: the set is saved (pfm_ctx_call) and will not go live again. */
static int pfm_unload_commit(struct pfm_context *ctx, void *arg)
	__must_hold(&ctx->lock)
{
	struct pfm_unload_args *u = arg;

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
 * pfm_unload_context() - detach a context from its thread or CPU
 * @ctx: the context, not locked
 *
 * The counts are saved and stay readable.  Unloading an unloaded
 * context does nothing.
 *
 * Context: process context; may sleep.
 * Return: 0, or -EBADFD before creation.
 */
int pfm_unload_context(struct pfm_context *ctx)
{
	struct pfm_unload_args u = { .cpu = -1 };
	int ret;

	pfm_sessions_lock();
	ret = pfm_ctx_call(ctx, pfm_unload_commit, &u);
	if (!ret && u.was_loaded) {
		/* Before the thread may take another context (its hook). */
		if (u.hook)
			pfm_hook_detach(u.hook);
		pfm_session_release(ctx, u.task, u.cpu);
	}
	pfm_sessions_unlock();
	/* A thread blocked on a notification runs on. */
	wake_up_interruptible_all(&ctx->restart_wait);
	if (u.task)
		put_task_struct(u.task);
	return ret;
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
