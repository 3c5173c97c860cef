// SPDX-License-Identifier: GPL-2.0
/*
 * A thread that execs an image its owner may not read (setuid, setgid,
 * file capabilities, an unreadable file, a security module's transition:
 * anything that leaves the new mm other than SUID_DUMP_USER) stops being
 * monitored before the image's first user instruction, unless the
 * context's creator had CAP_SYS_PTRACE, which would let it read the
 * image's memory anyway.  perf does the same in begin_new_exec()
 * (perf_event_exit_task()); the module cannot hook there, so it listens
 * to the sched_process_exec tracepoint, which fires once the new
 * credentials and dumpability are committed, on the exec'ing thread,
 * before it returns to user space.  The monitor gets the values counted
 * up to the exec and PFM_MSG_END.
 *
 * The thread's exec count (self_exec_id) closes the races with a load:
 * a load reads it before it checks the caller may monitor the thread,
 * and attaches only if it is unchanged (pfm_hook_attach()); a context
 * attached but whose thread has not yet linked its notifier is checked
 * by the sync work, which runs before that return to user space too.
 *
 * Whether an exec ends the monitoring is perm.c's to say
 * (pfm_exec_revokes()); this file finds the thread's hook and acts, and
 * has a virtual description's counters made again where perf dropped
 * them at the exec.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/binfmts.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/string.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>

#include "perfmon.h"
#include "hook.h"

static struct tracepoint *pfm_exec_tp;

/*
 * On the thread, before it returns to user space after an exec that
 * perf followed by detaching the thread's perf events (an image not
 * dumpable by its owner: perf_event_exit_task() in begin_new_exec()),
 * while the context stays (its creator had CAP_SYS_PTRACE): a
 * description over perf counters makes them again (@ctx_sync of
 * struct pfm_pmu), so that the image's first instruction counts.
 */
static void pfm_hook_resync_fn(struct callback_head *cb)
{
	struct pfm_hook *hook = container_of(cb, struct pfm_hook, resync_work);
	struct pfm_context *ctx;
	unsigned long flags;

	raw_spin_lock_irqsave(&hook->lock, flags);
	hook->resync_queued = false;
	ctx = hook->ctx;
	if (ctx)
		pfm_ctx_get(ctx);
	pfm_hook_maybe_free(hook);
	raw_spin_unlock_irqrestore(&hook->lock, flags);
	if (!ctx)
		return;
	if (!(current->flags & PF_EXITING))
		pfm_vpmu_sync(ctx);
	/* A task work: the last put's module_put() must not run here. */
	pfm_ctx_put_async(ctx);
}

/*
 * After pfm_hook_exec_check(): the context stays; did perf's go?  Then
 * @resync_work is reserved, for the caller to queue once it unlocks
 * (task_work_add() may allocate: pfm_block_queue(), core/ovfl.c).
 */
static bool pfm_hook_exec_resync(struct pfm_hook *hook)
	__must_hold(&hook->lock)
{
	struct pfm_context *ctx = hook->ctx;
	struct mm_struct *mm = current->mm;
	bool resync;

	lockdep_assert_held(&hook->lock);
	if (!ctx || !ctx->vpmu || hook->resync_queued ||
	    (mm && get_dumpable(mm) == SUID_DUMP_USER))
		return false;
	raw_spin_lock(&ctx->lock);
	resync = ctx->task == current && !ctx->task_ended;
	raw_spin_unlock(&ctx->lock);
	hook->resync_queued = resync;
	return resync;
}

/*
 * The current thread just exec'd a new image: the exec tracepoint, after
 * the new credentials and dumpability are in place and before the first
 * user instruction of the image.  A hook not linked yet has its sync
 * work queued, which makes the same check before the thread returns to
 * user space.  Atomic.
 */
static void pfm_hook_exec(void)
{
	struct preempt_notifier *pn;
	unsigned long flags;
	bool resync;

	/* Only the thread itself changes this list. */
	hlist_for_each_entry(pn, &current->preempt_notifiers, link) {
		struct pfm_hook *hook;

		hook = pfm_hook_of(pn);
		if (!hook)
			continue;
		raw_spin_lock_irqsave(&hook->lock, flags);
		pfm_hook_exec_check(hook);
		resync = pfm_hook_exec_resync(hook);
		raw_spin_unlock_irqrestore(&hook->lock, flags);
		if (!resync)
			return;
		/* Reserved: the hook stays until the work ran. */
		init_task_work(&hook->resync_work, pfm_hook_resync_fn);
		if (task_work_add(current, &hook->resync_work, TWA_RESUME)) {
			raw_spin_lock_irqsave(&hook->lock, flags);
			hook->resync_queued = false;
			pfm_hook_maybe_free(hook);
			raw_spin_unlock_irqrestore(&hook->lock, flags);
		}
		return;
	}
}

static void pfm_exec_probe(void *data, struct task_struct *p, pid_t old_pid,
			   struct linux_binprm *bprm)
{
	if (p == current)
		pfm_hook_exec();
}

static void pfm_exec_find(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_exec"))
		pfm_exec_tp = tp;
}

/**
 * pfm_exec_init() - start watching execs
 *
 * Context: module init.
 * Return: 0, or -ENOENT without the tracepoint (a kernel built without
 * CONFIG_TRACEPOINTS), whose execs the module could not see.
 */
int pfm_exec_init(void)
{
	int ret;

	for_each_kernel_tracepoint(pfm_exec_find, NULL);
	if (!pfm_exec_tp) {
		pr_err("no sched_process_exec tracepoint: perfmon needs a kernel built with CONFIG_TRACEPOINTS, to stop monitoring at the exec of setuid programs\n");
		return -ENOENT;
	}
	ret = tracepoint_probe_register(pfm_exec_tp, pfm_exec_probe, NULL);
	if (ret)
		pr_err("cannot register on the sched_process_exec tracepoint: %d\n",
		       ret);
	return ret;
}

/**
 * pfm_exec_exit() - stop watching execs; no probe runs after it returns
 *
 * Context: module exit.
 */
void pfm_exec_exit(void)
{
	tracepoint_probe_unregister(pfm_exec_tp, pfm_exec_probe, NULL);
	tracepoint_synchronize_unregister();
}
