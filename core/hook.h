/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A monitored thread's hook (core/hook.c), shared with the exec path
 * (core/exec.c) only: the rest of the core sees an opaque type.
 */
#ifndef _PFM_HOOK_H
#define _PFM_HOOK_H

#include <linux/irq_work.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/task_work.h>
#include <linux/workqueue.h>

/**
 * struct pfm_hook - a monitored thread's link to its context
 * @pn: the thread's preempt notifier
 * @sync_work: links or unlinks @pn from the thread to match @ctx
 * @resync_work: syncs @ctx's virtual description after an exec
 * @free_iw: takes the free out of the scheduler
 * @free_work: frees the hook on pfm_wq
 * @node: in the registry of hooks, keyed by @task (pfm_hooks_mutex)
 * @task: the thread (reference held)
 * @lock: guards the fields below; taken before ctx->lock; raw, as the
 *        scheduler's hooks take it under the runqueue lock
 * @ctx: the context attached, or NULL
 * @pins: loads in progress that hold the hook (pfm_hook_get())
 * @linked: @pn is on the thread's notifier list
 * @queued: @sync_work is queued on the thread
 * @resync_queued: @resync_work is queued on the thread
 * @dead: the thread passed its last context switch, or ended before it
 *        ever linked @pn: nothing may attach any more
 * @freeing: unused; @free_work owns it (the registry skips it)
 * @rcu: the free waits a grace period (pfm_hook_free_work())
 */
struct pfm_hook {
	struct preempt_notifier pn;
	struct callback_head sync_work;
	struct callback_head resync_work;
	struct irq_work free_iw;
	struct work_struct free_work;
	struct hlist_node node;
	struct task_struct *task;
	raw_spinlock_t lock;	/* irqsave: the scheduler's hooks take it */
	struct pfm_context *ctx;
	unsigned int pins;
	bool linked;
	bool queued;
	bool resync_queued;
	bool dead;
	bool freeing;
	struct rcu_head rcu;
};

void pfm_hook_maybe_free(struct pfm_hook *hook);
void pfm_hook_exec_check(struct pfm_hook *hook);
struct pfm_hook *pfm_hook_of(struct preempt_notifier *pn);

#endif /* _PFM_HOOK_H */
