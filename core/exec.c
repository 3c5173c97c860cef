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
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/binfmts.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "perfmon.h"

static struct tracepoint *pfm_exec_tp;

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
