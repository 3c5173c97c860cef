// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching contexts to threads and CPUs (load, unload), starting and
 * stopping them, and the sessions that keep the PMU's users apart.
 *
 * Sessions (pfm_sessions_mutex): a loaded per-thread context is a task
 * session, a loaded system-wide context a system session on its CPU.  A
 * monitored thread may run on any CPU, so task and system sessions
 * exclude each other; a CPU has at most one system session and a thread
 * at most one context.  The PMU is acquired from the description for
 * the first session and released after the last.
 *
 * Lock order: pfm_sessions_mutex, cpu hotplug lock, pfm_sys_lock, a
 * thread's hook lock, ctx->lock (core/hook.c's registry mutex is taken
 * before pfm_sessions_mutex, or alone).  The PMU's acquire may take the
 * hotplug lock (static keys), so the hotplug callbacks do not take
 * pfm_sessions_mutex: the per-CPU system-wide pointers they read are
 * also guarded by pfm_sys_lock.  The PMU's per-CPU setup runs on every
 * online CPU for the first session, and on a CPU coming online while any
 * session exists.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/irq_work.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>

#include "perfmon.h"

static DEFINE_MUTEX(pfm_sessions_mutex);
static unsigned int pfm_task_sessions;
static unsigned int pfm_sys_sessions;
static DEFINE_PER_CPU(struct pfm_context *, pfm_sys_ctx);
static DEFINE_RAW_SPINLOCK(pfm_sys_lock);	/* writers also hold the mutex */
static DEFINE_HASHTABLE(pfm_task_ctxs, 6);
static enum cpuhp_state pfm_cpuhp_state;

/* The context a thread carries, if any. */
static struct pfm_context *pfm_task_ctx(struct task_struct *task)
{
	struct pfm_context *ctx;

	lockdep_assert_held(&pfm_sessions_mutex);
	hash_for_each_possible(pfm_task_ctxs, ctx, task_node, (unsigned long)task)
		if (ctx->task == task)
			return ctx;
	return NULL;
}

/*
 * The description whose cpu_setup ran on every online CPU, from the
 * first session to the last.  Written under the hotplug read lock, read
 * by the hotplug callbacks (which run under its write side).
 */
static struct pfm_pmu_config *pfm_pmu_live;

static void pfm_cpu_setup_ipi(void *info)
{
	struct pfm_pmu_config *pmu = info;

	pmu->cpu_setup(pmu);
}

static void pfm_cpu_teardown_ipi(void *info)
{
	struct pfm_pmu_config *pmu = info;

	pmu->cpu_teardown(pmu);
}

static int pfm_pmu_acquire(struct pfm_pmu_config *pmu)
{
	int ret;

	lockdep_assert_held(&pfm_sessions_mutex);
	if (pfm_task_sessions + pfm_sys_sessions)
		return 0;
	if (pmu->acquire) {
		ret = pmu->acquire(pmu);
		if (ret) {
			pr_info_ratelimited("PMU %s busy (%d): see the description module's log line\n",
					    pmu->pmu_name, ret);
			return ret;
		}
	}
	cpus_read_lock();
	if (pmu->cpu_setup)
		on_each_cpu(pfm_cpu_setup_ipi, pmu, 1);
	pfm_pmu_live = pmu;
	cpus_read_unlock();
	return 0;
}

static void pfm_pmu_release(struct pfm_pmu_config *pmu)
{
	lockdep_assert_held(&pfm_sessions_mutex);
	if (pfm_task_sessions + pfm_sys_sessions)
		return;
	cpus_read_lock();
	if (pmu->cpu_teardown)
		on_each_cpu(pfm_cpu_teardown_ipi, pmu, 1);
	pfm_pmu_live = NULL;
	cpus_read_unlock();
	if (pmu->release)
		pmu->release(pmu);
}

/* Reserve the session for @ctx on @task or @cpu. */
static int pfm_session_acquire(struct pfm_context *ctx,
			       struct task_struct *task, int cpu)
{
	int ret;

	lockdep_assert_held(&pfm_sessions_mutex);
	if (task) {
		if (pfm_sys_sessions) {
			pr_info_ratelimited("per-thread monitoring refused: %u system-wide session(s) loaded; unload them first\n",
					    pfm_sys_sessions);
			return -EBUSY;
		}
		if (pfm_task_ctx(task))
			return -EBUSY;	/* one context per thread */
	} else {
		if (pfm_task_sessions) {
			pr_info_ratelimited("system-wide monitoring of CPU%d refused: %u per-thread session(s) loaded; unload them first\n",
					    cpu, pfm_task_sessions);
			return -EBUSY;
		}
		if (per_cpu(pfm_sys_ctx, cpu))
			return -EBUSY;	/* one system-wide context per CPU */
	}
	ret = pfm_pmu_acquire(ctx->pmu);
	if (ret)
		return ret;
	if (task)
		pfm_task_sessions++;
	else
		pfm_sys_sessions++;
	return 0;
}

/* Publish (or withdraw, @ctx NULL) the system-wide context of @cpu. */
static void pfm_sys_ctx_set(int cpu, struct pfm_context *ctx)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&pfm_sys_lock, flags);
	per_cpu(pfm_sys_ctx, cpu) = ctx;
	raw_spin_unlock_irqrestore(&pfm_sys_lock, flags);
}

static void pfm_session_release(struct pfm_context *ctx, bool task, int cpu)
{
	lockdep_assert_held(&pfm_sessions_mutex);
	if (task) {
		pfm_task_sessions--;
	} else {
		pfm_sys_sessions--;
		pfm_sys_ctx_set(cpu, NULL);
	}
	pfm_pmu_release(ctx->pmu);
}

/**
 * pfm_sessions_count() - loaded sessions, for sysfs
 * @system: system-wide ones, else per-thread ones
 *
 * Return: the count.
 */
unsigned int pfm_sessions_count(bool system)
{
	return READ_ONCE(*(system ? &pfm_sys_sessions : &pfm_task_sessions));
}

/* Is @task's memory image dumpable by its owner (not setuid-tainted)? */
static bool pfm_task_dumpable(struct task_struct *task)
{
	bool ok;

	task_lock(task);
	ok = task->mm && get_dumpable(task->mm) == SUID_DUMP_USER;
	task_unlock(task);
	return ok;
}

/* Does the caller's process trace @task (PTRACE_ATTACH or PTRACE_SEIZE)? */
static bool pfm_traced_by_caller(struct task_struct *task)
{
	struct task_struct *tracer;
	bool ok;

	rcu_read_lock();
	tracer = ptrace_parent(task);
	ok = tracer && same_thread_group(tracer, current);
	rcu_read_unlock();
	return ok;
}

/*
 * Same real and effective uid and gid as the target's, and a dumpable
 * target; or CAP_SYS_PTRACE over the target's user namespace: what
 * ptrace's own credential check asks, repeated at each load because the
 * thread may have changed since it was traced.
 */
static bool pfm_creds_allow(struct task_struct *task)
{
	const struct cred *cred = current_cred(), *tcred;
	bool ok;

	rcu_read_lock();
	tcred = __task_cred(task);
	ok = uid_eq(cred->uid, tcred->euid) && uid_eq(cred->uid, tcred->uid) &&
	     uid_eq(cred->euid, tcred->euid) && uid_eq(cred->uid, tcred->suid) &&
	     gid_eq(cred->gid, tcred->egid) && gid_eq(cred->gid, tcred->gid) &&
	     gid_eq(cred->gid, tcred->sgid);
	if (!ok)
		ok = ns_capable(tcred->user_ns, CAP_SYS_PTRACE);
	else
		ok = pfm_task_dumpable(task) ||
		     ns_capable(tcred->user_ns, CAP_SYS_PTRACE);
	rcu_read_unlock();
	return ok;
}

/*
 * May the caller monitor @task?  A thread of its own process, always.
 * Another process's thread only while the caller's process traces it,
 * perfmon2's rule: ptrace_may_access() is not exported, and the attach
 * that made the caller its tracer ran every check a ptrace attach runs,
 * Yama's ptrace_scope and the other security modules' included, which
 * a module cannot ask itself.  The tracer may detach once the context
 * is loaded.
 */
static bool pfm_may_monitor(struct task_struct *task)
{
	if (same_thread_group(task, current))
		return true;
	if (!pfm_traced_by_caller(task)) {
		pr_info_ratelimited("%s (pid %d) may not monitor pid %d: another process's thread is monitored only while the caller traces it; PTRACE_SEIZE it first (security modules and Yama's ptrace_scope decide), PTRACE_DETACH after the load\n",
				    current->comm, task_tgid_nr(current),
				    task_tgid_nr(task));
		return false;
	}
	return pfm_creds_allow(task);
}

/*
 * Find the thread @tid and check the caller may monitor it.  Kernel
 * callers (@kernel) are trusted; a kernel thread, which never returns to
 * user space to install a hook, may only monitor itself.  @exec_id gets
 * the thread's exec count as it was before the check.
 */
static struct task_struct *pfm_get_target(pid_t tid, bool kernel, u64 *exec_id)
{
	struct task_struct *task;
	struct pid *pid;

	pid = find_get_pid(tid);
	task = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
	put_pid(pid);
	if (!task)
		return ERR_PTR(-ESRCH);
	/* Before the check: an exec after it makes the load start over. */
	*exec_id = READ_ONCE(task->self_exec_id);
	smp_rmb();	/* the exec count, then the credentials and mm */
	if (kernel && !(task->flags & PF_EXITING) &&
	    (!(task->flags & PF_KTHREAD) || task == current))
		return task;
	if (task->flags & (PF_KTHREAD | PF_EXITING) || !pfm_may_monitor(task)) {
		int ret = task->flags & PF_EXITING ? -ESRCH : -EPERM;

		put_task_struct(task);
		return ERR_PTR(ret);
	}
	return task;
}

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
static int __pfm_load_context(struct pfm_context *ctx, void *arg)
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
static int __pfm_load_undo(struct pfm_context *ctx, void *arg)
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

	mutex_lock(&pfm_sessions_mutex);
	ret = pfm_session_acquire(ctx, a.task, a.cpu);
	if (ret)
		goto unlock_sessions;
	ret = pfm_ctx_call(ctx, __pfm_load_context, &a);
	if (ret)
		goto release_session;
	if (a.task) {
		hash_add(pfm_task_ctxs, &ctx->task_node, (unsigned long)a.task);
		ret = pfm_hook_attach(a.hook, ctx);
		if (ret) {
			hash_del(&ctx->task_node);
			pfm_ctx_call(ctx, __pfm_load_undo, NULL);
			goto release_session;
		}
	} else {
		/* Offline now: the CPU's online callback loads it later. */
		pfm_sys_ctx_set(a.cpu, ctx);
		cpus_read_lock();
		if (cpu_online(a.cpu))
			pfm_ctx_activate_on(ctx, a.cpu);
		cpus_read_unlock();
	}
	mutex_unlock(&pfm_sessions_mutex);
	if (a.hook)
		pfm_hook_put(a.hook);
	return 0;

release_session:
	pfm_session_release(ctx, a.task, a.cpu);
unlock_sessions:
	mutex_unlock(&pfm_sessions_mutex);
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
static int __pfm_unload_context(struct pfm_context *ctx, void *arg)
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

	mutex_lock(&pfm_sessions_mutex);
	ret = pfm_ctx_call(ctx, __pfm_unload_context, &u);
	if (!ret && u.was_loaded) {
		/* Before the thread may take another context (its hook). */
		if (u.hook)
			pfm_hook_detach(u.hook);
		if (u.task)
			hash_del(&ctx->task_node);
		pfm_session_release(ctx, u.task, u.cpu);
	}
	mutex_unlock(&pfm_sessions_mutex);
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

/**
 * __pfm_start() - start counting on a loaded context
 * @ctx: the context, locked, live here or saved (pfm_ctx_call_in_place())
 * @req: start_set: the set to count with
 *
 * Starting another set than the active one saves the live set first.
 *
 * Return: 0; -EBADFD before creation; -EINVAL unloaded, unknown set or
 * reserved field; -EBUSY masked (pfm_restart() first).
 */
int __pfm_start(struct pfm_context *ctx, const struct pfarg_start *req)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *set;

	lockdep_assert_held(&ctx->lock);
	switch (ctx->state) {
	case PFM_CTX_NEW:
		return -EBADFD;
	case PFM_CTX_LOADED:
		break;
	case PFM_CTX_MASKED:
		return -EBUSY;
	default:
		return -EINVAL;
	}
	if (req->start_reserved1 || req->start_reserved2 ||
	    memchr_inv(req->reserved3, 0, sizeof(req->reserved3)))
		return -EINVAL;
	set = pfm_find_set(ctx, req->start_set);
	if (!set)
		return -EINVAL;
	if (set != ctx->active_set) {
		if (pfm_ctx_live_here(ctx))
			pfm_ctx_sched_out(ctx);
		pfm_set_activate(ctx, set);
	}
	ctx->started = true;
	if (pfm_ctx_live_here(ctx))
		pfm_ctx_resume(ctx);
	pfm_upage_update(ctx);
	return 0;
}

/**
 * __pfm_stop() - stop counting; the counts stay as they are
 * @ctx: the context, locked, live here or saved (pfm_ctx_call_in_place())
 *
 * Return: 0; -EBADFD before creation; -EINVAL unloaded.
 */
int __pfm_stop(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	switch (ctx->state) {
	case PFM_CTX_NEW:
		return -EBADFD;
	case PFM_CTX_LOADED:
	case PFM_CTX_MASKED:
		ctx->started = false;
		if (pfm_ctx_live_here(ctx))
			pfm_ctx_halt(ctx);
		pfm_upage_update(ctx);
		return 0;
	default:
		return -EINVAL;
	}
}

/* Reload the notifying PMDs with their long reset values; switch if due. */
static void pfm_restart_masked(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *set = ctx->active_set;
	unsigned int i;

	for_each_set_bit(i, ctx->restart_pmds, ctx->pmu->max_pmd)
		pfm_pmd_reset(ctx, set, i, true, false);
	bitmap_zero(ctx->restart_pmds, PFM_MAX_PMDS);
	if (ctx->smpl && ctx->smpl->fmt->restart)
		ctx->smpl->fmt->restart(ctx->smpl);
	if (ctx->switch_pending) {
		ctx->switch_pending = false;
		pfm_set_activate(ctx, pfm_next_set(ctx));
		if (ctx->active_set != set)
			pfm_smpl_set_switch(ctx, set->id, ctx->active_set->id);
	}
}

/**
 * __pfm_restart() - resume monitoring masked after an overflow
 * @ctx: the context, locked, saved (called through pfm_ctx_call())
 *
 * The PMDs that notified (and their reg_reset_pmds) restart from their
 * long reset values; the sampling format empties its buffer if it
 * wants; a set switch that fell due while masked happens now.
 *
 * Return: 0; -EBADFD before creation; -EBUSY when not masked (nothing
 * to restart), unloaded included (after the monitored thread ended, as
 * perfmon2 v2.8); -EINVAL closing.
 */
int __pfm_restart(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	switch (ctx->state) {
	case PFM_CTX_NEW:
		return -EBADFD;
	case PFM_CTX_MASKED:
		pfm_restart_masked(ctx);
		ctx->state = PFM_CTX_LOADED;
		return 0;
	case PFM_CTX_LOADED:
	case PFM_CTX_UNLOADED:
		return -EBUSY;
	default:
		return -EINVAL;
	}
}

static int pfm_call_restart(struct pfm_context *ctx, void *arg)
{
	return __pfm_restart(ctx);
}

/**
 * pfm_restart() - __pfm_restart() where the context is live, then let a
 * thread blocked on the notification (PFM_FL_NOTIFY_BLOCK) run
 * @ctx: the context, not locked
 *
 * Context: process context.
 * Return: as __pfm_restart().
 */
int pfm_restart(struct pfm_context *ctx)
{
	int ret = pfm_ctx_call(ctx, pfm_call_restart, NULL);

	if (!ret)
		wake_up_interruptible_all(&ctx->restart_wait);
	return ret;
}

/*
 * CPU hotplug: a system-wide context's set leaves and returns with its
 * CPU.  The callbacks run on that CPU; pfm_sys_lock keeps the context
 * from being unloaded (and freed) meanwhile.
 */
static int pfm_cpu_hotplug(unsigned int cpu,
			   void (*fn)(struct pfm_context *ctx))
{
	struct pfm_context *ctx;
	unsigned long flags;

	raw_spin_lock_irqsave(&pfm_sys_lock, flags);
	ctx = per_cpu(pfm_sys_ctx, cpu);
	if (ctx)
		fn(ctx);
	raw_spin_unlock_irqrestore(&pfm_sys_lock, flags);
	return 0;
}

static int pfm_cpu_online(unsigned int cpu)
{
	struct pfm_pmu_config *pmu = pfm_pmu_live;
	unsigned long flags;

	/* The PMU first: the context reloaded next relies on it. */
	if (pmu && pmu->cpu_setup) {
		local_irq_save(flags);
		pmu->cpu_setup(pmu);
		local_irq_restore(flags);
	}
	return pfm_cpu_hotplug(cpu, pfm_ctx_cpu_up);
}

static int pfm_cpu_offline(unsigned int cpu)
{
	struct pfm_pmu_config *pmu = pfm_pmu_live;
	unsigned long flags;

	pfm_cpu_hotplug(cpu, pfm_ctx_cpu_down);
	if (pmu && pmu->cpu_teardown) {
		local_irq_save(flags);
		pmu->cpu_teardown(pmu);
		local_irq_restore(flags);
	}
	return 0;
}

int pfm_sessions_init(void)
{
	int ret;

	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "perfmon:online",
					pfm_cpu_online, pfm_cpu_offline);
	if (ret < 0)
		return ret;
	pfm_cpuhp_state = ret;
	return 0;
}

void pfm_sessions_exit(void)
{
	cpuhp_remove_state_nocalls(pfm_cpuhp_state);
}
