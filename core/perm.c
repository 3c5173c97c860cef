// SPDX-License-Identifier: GPL-2.0
/*
 * Who may do what (Documentation/security.rst).
 *
 * The administrator sets a paranoid level in /sys/kernel/perfmon/paranoid,
 * with perf_event_paranoid's numbers and default; CAP_PERFMON (or
 * CAP_SYS_ADMIN) bypasses it:
 *   -1  no restriction; sampling buffers ignore RLIMIT_MEMLOCK
 *    0  system-wide contexts, AnyThread counting
 *    1  counting at kernel privilege levels, kernel addresses in samples
 *    2  per-thread, user-level counting only (the default)
 *    3  no context at all
 *
 * A context's privileges are decided once, when it is created, from its
 * creator's capabilities and the level then: perf decides at
 * perf_event_open() too, and a monitor that was allowed to start keeps
 * working when the knob moves.  They are enforced where they matter:
 * PMC writes (core/regs.c), the load of a system-wide context
 * (core/load.c) and the overflow path's instruction pointers
 * (core/ovfl.c).  Kernel API contexts get them all: their caller is the
 * kernel.
 *
 * Which thread a caller may monitor is checked at each load
 * (pfm_get_target()), below.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/pid.h>
#include <linux/printk.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>

#include "perfmon.h"

/* Written by sysfs (CAP_SYS_ADMIN), read once per decision. */
int pfm_paranoid = PFM_PARANOID_DFL;

/**
 * pfm_perm_grant() - the privileges of a user context created now
 *
 * The capability is asked about only when the level does not grant
 * everything, as perf does (a security module may log the question).
 *
 * Context: process context, the creator's.
 * Return: PFM_PMC_PRIV_* bits.
 */
u32 pfm_perm_grant(void)
{
	int level = READ_ONCE(pfm_paranoid);
	u32 priv = 0;

	if (level <= 1)
		priv |= PFM_PMC_PRIV_KERNEL;
	if (level <= 0)
		priv |= PFM_PMC_PRIV_CPU;
	if (priv != PFM_PMC_PRIV_ALL && perfmon_capable())
		priv = PFM_PMC_PRIV_ALL;
	return priv;
}

/**
 * pfm_perm_exec() - may a user context created now follow its thread
 * through the exec of an image the owner may not read (core/exec.c)?
 *
 * That is reading a non-dumpable process, which ptrace allows with
 * CAP_SYS_PTRACE.  Asked without an audit record: most creators lack
 * it, and that is no denial (they never try to watch such an image).
 *
 * Context: process context, the creator's.
 * Return: the creator has CAP_SYS_PTRACE in the initial user namespace.
 */
bool pfm_perm_exec(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_SYS_PTRACE);
}

/**
 * pfm_perm_create() - may the caller create a context at all?
 *
 * Context: process context.
 * Return: 0, or -EACCES at paranoid level 3 without CAP_PERFMON.
 */
int pfm_perm_create(void)
{
	int level = READ_ONCE(pfm_paranoid);

	if (level < 3 || perfmon_capable())
		return 0;
	pr_info_ratelimited("%s (uid %u) may not create contexts at paranoid level %d: give it CAP_PERFMON, or write 2 to /sys/kernel/perfmon/paranoid\n",
			    current->comm,
			    from_kuid_munged(&init_user_ns, current_uid()),
			    level);
	return -EACCES;
}

/**
 * pfm_perm_pmc_refused() - log why a PMC value was refused
 * @cnum: the PMC
 * @missing: the PFM_PMC_PRIV_* bits the context lacks
 */
void pfm_perm_pmc_refused(u16 cnum, u32 missing)
{
	if (missing & PFM_PMC_PRIV_CPU)
		pr_info_ratelimited("PMC%u counts other threads of the core (AnyThread): the context's creator needs CAP_PERFMON, or /sys/kernel/perfmon/paranoid at 0 or below (now %d) when it creates the context\n",
				    cnum, READ_ONCE(pfm_paranoid));
	else
		pr_info_ratelimited("PMC%u counts at a kernel privilege level: count at user level only, or the context's creator needs CAP_PERFMON, or /sys/kernel/perfmon/paranoid at 1 or below (now %d) when it creates the context\n",
				    cnum, READ_ONCE(pfm_paranoid));
}

/**
 * pfm_perm_system_refused() - log why a system-wide load was refused
 */
void pfm_perm_system_refused(void)
{
	pr_info_ratelimited("system-wide monitoring needs CAP_PERFMON (or CAP_SYS_ADMIN) when the context is created, or /sys/kernel/perfmon/paranoid at 0 or below (now %d); or monitor threads\n",
			    READ_ONCE(pfm_paranoid));
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

/**
 * pfm_get_target() - find the thread @tid and check the caller may monitor it
 * @tid: thread id, in the caller's pid namespace
 * @kernel: a kernel API caller, trusted
 * @exec_id: out: the thread's exec count as it was before the check
 *
 * A kernel thread, which never returns to user space to install a hook,
 * may only monitor itself.
 *
 * Context: process context.
 * Return: the thread, referenced; ERR_PTR(-ESRCH) no such thread or
 * exiting; ERR_PTR(-EPERM) not allowed.
 */
struct task_struct *pfm_get_target(pid_t tid, bool kernel, u64 *exec_id)
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

/**
 * pfm_exec_revokes() - does an exec of the current thread end @ctx?
 * @ctx: a per-thread context loaded on the current thread, locked
 *
 * Context: the monitored thread.
 * Return: the thread exec'd since the load, into an image not dumpable
 * by its owner, and the creator lacked CAP_SYS_PTRACE.
 */
bool pfm_exec_revokes(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct mm_struct *mm = current->mm;

	lockdep_assert_held(&ctx->lock);
	return !ctx->exec_priv && current->self_exec_id != ctx->exec_id &&
	       (!mm || get_dumpable(mm) != SUID_DUMP_USER);
}

/**
 * pfm_exec_log() - say why monitoring of the current thread ended
 * @ctx: the context, locked
 */
void pfm_exec_log(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	pr_info_ratelimited("thread %d exec'd an image its owner may not read (setuid, setgid or file capabilities): its monitoring ended; a monitor that must follow it needs CAP_SYS_PTRACE when it creates the context\n",
			    task_pid_nr(current));
}
