// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: who holds the PMU, and the CPU hotplug callbacks that follow
 * the system-wide ones.
 *
 * A loaded per-thread context is a task session, a loaded system-wide
 * context a system session on its CPU.  A monitored thread may run on
 * any CPU, so task and system sessions exclude each other; a CPU has at
 * most one system session and a thread at most one context.  The PMU is
 * acquired from the description for the first session and released
 * after the last.  Load and unload (core/load.c) reserve, publish and
 * release sessions under pfm_sessions_lock().
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

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/sched.h>

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
static struct pfm_pmu *pfm_pmu_live;

static void pfm_cpu_setup_ipi(void *info)
{
	struct pfm_pmu *pmu = info;

	pmu->ops->cpu_setup(pmu->conf);
}

static void pfm_cpu_teardown_ipi(void *info)
{
	struct pfm_pmu *pmu = info;

	pmu->ops->cpu_teardown(pmu->conf);
}

static int pfm_pmu_acquire(struct pfm_pmu *pmu)
{
	int ret;

	lockdep_assert_held(&pfm_sessions_mutex);
	if (pfm_task_sessions + pfm_sys_sessions)
		return 0;
	if (pmu->ops->acquire) {
		ret = pmu->ops->acquire(pmu->conf);
		if (ret) {
			pr_info_ratelimited("PMU %s busy (%d): see the description module's log line\n",
					    pmu->map->pmu_name, ret);
			return ret;
		}
	}
	cpus_read_lock();
	if (pmu->ops->cpu_setup)
		on_each_cpu(pfm_cpu_setup_ipi, pmu, 1);
	pfm_pmu_live = pmu;
	cpus_read_unlock();
	return 0;
}

static void pfm_pmu_release(struct pfm_pmu *pmu)
{
	lockdep_assert_held(&pfm_sessions_mutex);
	if (pfm_task_sessions + pfm_sys_sessions)
		return;
	cpus_read_lock();
	if (pmu->ops->cpu_teardown)
		on_each_cpu(pfm_cpu_teardown_ipi, pmu, 1);
	pfm_pmu_live = NULL;
	cpus_read_unlock();
	if (pmu->ops->release)
		pmu->ops->release(pmu->conf);
}

/**
 * pfm_sessions_lock() - take pfm_sessions_mutex
 *
 * Held from a session's reservation to its publication, so that a load
 * that fails half-way leaves no trace.
 *
 * Context: process context; may sleep.
 */
void pfm_sessions_lock(void)
{
	mutex_lock(&pfm_sessions_mutex);
}

/**
 * pfm_sessions_unlock() - drop pfm_sessions_mutex
 */
void pfm_sessions_unlock(void)
{
	mutex_unlock(&pfm_sessions_mutex);
}

/*
 * Name one holder, so that root can end what blocks it: a per-thread
 * session lasts until its monitor closes the context (fuser -v
 * /dev/perfmon lists them) or its thread exits.  Privilege does not
 * evict it: its monitor would lose counts it was promised, silently.
 */
static void pfm_task_sessions_refuse(int cpu)
{
	struct pfm_context *ctx;
	unsigned int bkt;

	lockdep_assert_held(&pfm_sessions_mutex);
	hash_for_each(pfm_task_ctxs, bkt, ctx, task_node) {
		pr_info_ratelimited("system-wide monitoring of CPU%d refused: %u per-thread session(s) loaded, one on thread %d (%s) by uid %u; each ends when its monitor closes it (fuser -v /dev/perfmon) or its thread exits\n",
				    cpu, pfm_task_sessions,
				    task_pid_nr(ctx->task), ctx->task->comm,
				    from_kuid_munged(&init_user_ns, ctx->uid));
		return;
	}
}

/**
 * pfm_session_acquire() - reserve the session for @ctx on @task or @cpu
 * @ctx: the context being loaded
 * @task: the thread it will monitor, or NULL for a system-wide context
 * @cpu: the CPU of a system-wide context
 *
 * The first session acquires the PMU from its description.
 *
 * Context: pfm_sessions_lock() held.
 * Return: 0; -EBUSY when the thread carries a context, the CPU has one,
 * or task and system sessions would mix; the description's acquire
 * error.
 */
int pfm_session_acquire(struct pfm_context *ctx, struct task_struct *task,
			int cpu)
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
			pfm_task_sessions_refuse(cpu);
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

/**
 * pfm_session_publish() - make a reserved session visible
 * @ctx: the context, committed as loaded
 * @task: its thread, or NULL for a system-wide context
 * @cpu: the CPU of a system-wide context
 *
 * A thread's context becomes the one pfm_session_acquire() finds for it;
 * a CPU's goes live there now, or when the CPU comes online.
 *
 * Context: pfm_sessions_lock() held.
 */
void pfm_session_publish(struct pfm_context *ctx, struct task_struct *task,
			 int cpu)
{
	lockdep_assert_held(&pfm_sessions_mutex);
	if (task) {
		hash_add(pfm_task_ctxs, &ctx->task_node, (unsigned long)task);
		return;
	}
	pfm_sys_ctx_set(cpu, ctx);
	cpus_read_lock();
	if (cpu_online(cpu))
		pfm_ctx_activate_on(ctx, cpu);
	cpus_read_unlock();
}

/**
 * pfm_session_withdraw() - undo pfm_session_publish()
 * @ctx: the context, published on @task or @cpu
 * @task: whether it monitors a thread
 * @cpu: the CPU of a system-wide context
 *
 * The session stays reserved: pfm_session_cancel() ends it.
 *
 * Context: pfm_sessions_lock() held.
 */
void pfm_session_withdraw(struct pfm_context *ctx, bool task, int cpu)
{
	lockdep_assert_held(&pfm_sessions_mutex);
	if (task)
		hash_del(&ctx->task_node);
	else
		pfm_sys_ctx_set(cpu, NULL);
}

/**
 * pfm_session_cancel() - give back a session reserved, not (or no
 * longer) published
 * @ctx: the context
 * @task: whether it was reserved on a thread
 *
 * Only the count changes: a load that lost a race with another load of
 * the same context reserved a session it never published, and the
 * thread or CPU it names belongs to that other load (or to nobody).
 * The last session releases the PMU.
 *
 * Context: pfm_sessions_lock() held.
 */
void pfm_session_cancel(struct pfm_context *ctx, bool task)
{
	lockdep_assert_held(&pfm_sessions_mutex);
	if (task)
		pfm_task_sessions--;
	else
		pfm_sys_sessions--;
	pfm_pmu_release(ctx->pmu);
}

/**
 * pfm_session_release() - end the published session of @ctx
 * @ctx: the context, published on @task or @cpu
 * @task: whether it monitors a thread
 * @cpu: the CPU of a system-wide context
 *
 * Context: pfm_sessions_lock() held.
 */
void pfm_session_release(struct pfm_context *ctx, bool task, int cpu)
{
	pfm_session_withdraw(ctx, task, cpu);
	pfm_session_cancel(ctx, task);
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

/* Reload; a virtual description makes again what perf dropped. */
static void pfm_ctx_cpu_up_resync(struct pfm_context *ctx)
{
	pfm_ctx_cpu_up(ctx);
	pfm_vpmu_resync_async(ctx);
}

static int pfm_cpu_online(unsigned int cpu)
{
	struct pfm_pmu *pmu = pfm_pmu_live;
	unsigned long flags;

	/* The PMU first: the context reloaded next relies on it. */
	if (pmu && pmu->ops->cpu_setup) {
		local_irq_save(flags);
		pmu->ops->cpu_setup(pmu->conf);
		local_irq_restore(flags);
	}
	return pfm_cpu_hotplug(cpu, pfm_ctx_cpu_up_resync);
}

static int pfm_cpu_offline(unsigned int cpu)
{
	struct pfm_pmu *pmu = pfm_pmu_live;
	unsigned long flags;

	pfm_cpu_hotplug(cpu, pfm_ctx_cpu_down);
	if (pmu && pmu->ops->cpu_teardown) {
		local_irq_save(flags);
		pmu->ops->cpu_teardown(pmu->conf);
		local_irq_restore(flags);
	}
	return 0;
}

/**
 * pfm_sessions_init() - install the CPU hotplug callbacks
 *
 * Return: 0 or the hotplug core's error.
 */
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

/**
 * pfm_sessions_exit() - remove the CPU hotplug callbacks
 */
void pfm_sessions_exit(void)
{
	cpuhp_remove_state_nocalls(pfm_cpuhp_state);
}
