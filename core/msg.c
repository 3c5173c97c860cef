// SPDX-License-Identifier: GPL-2.0
/*
 * The message queue of a context: what read() returns, one message at
 * a time, with poll() and O_ASYNC.  The ring is guarded by ctx->lock;
 * readers wait on ctx->msgq_wait, which is woken after ctx->lock is
 * dropped (a wake-up takes scheduler locks).
 */
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "perfmon.h"

static bool pfm_msgq_empty(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	return ctx->msgq_head == ctx->msgq_tail;
}

/* Queue @msg; false when the ring is full. */
static bool pfm_msgq_add(struct pfm_context *ctx, const union pfarg_msg *msg)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	if (ctx->msgq_tail - ctx->msgq_head >= PFM_MSGS_COUNT)
		return false;
	ctx->msgq[ctx->msgq_tail++ % PFM_MSGS_COUNT] = *msg;
	return true;
}

/* Wake readers and O_ASYNC owners.  Context: ctx->lock not held. */
static void pfm_msg_wake(struct pfm_context *ctx)
{
	wake_up_interruptible(&ctx->msgq_wait);
	kill_fasync(&ctx->async_queue, SIGIO, POLL_IN);
}

/**
 * pfm_msg_end() - tell the monitor that the monitored thread ended
 * @ctx: the context, not locked
 * @pid: the thread's process id
 * @tid: the thread id
 *
 * Context: process context.
 */
void pfm_msg_end(struct pfm_context *ctx, pid_t pid, pid_t tid)
{
	union pfarg_msg msg = {};
	unsigned long flags;
	bool queued = false;

	msg.pfm_ovfl_msg.msg_type = PFM_MSG_END;
	msg.pfm_ovfl_msg.msg_ovfl_pid = pid;
	msg.pfm_ovfl_msg.msg_ovfl_tid = tid;
	msg.pfm_ovfl_msg.msg_ovfl_cpu = raw_smp_processor_id();
	spin_lock_irqsave(&ctx->lock, flags);
	if (ctx->state != PFM_CTX_ZOMBIE)
		queued = pfm_msgq_add(ctx, &msg);
	spin_unlock_irqrestore(&ctx->lock, flags);
	if (queued)
		pfm_msg_wake(ctx);
}

/* Take the oldest message; false when there is none. */
static bool pfm_msgq_take(struct pfm_context *ctx, union pfarg_msg *msg)
{
	unsigned long flags;
	bool got = false;

	spin_lock_irqsave(&ctx->lock, flags);
	if (!pfm_msgq_empty(ctx)) {
		*msg = ctx->msgq[ctx->msgq_head++ % PFM_MSGS_COUNT];
		got = true;
	}
	spin_unlock_irqrestore(&ctx->lock, flags);
	return got;
}

static bool pfm_msgq_ready(struct pfm_context *ctx)
{
	unsigned long flags;
	bool ready;

	spin_lock_irqsave(&ctx->lock, flags);
	ready = !pfm_msgq_empty(ctx);
	spin_unlock_irqrestore(&ctx->lock, flags);
	return ready;
}

/**
 * pfm_msg_read() - read one message
 * @ctx: the context
 * @buf: user buffer
 * @size: its size; at least sizeof(union pfarg_msg)
 * @nonblock: O_NONBLOCK
 *
 * Return: the message size; -EINVAL for a short buffer; -EAGAIN when
 * none is queued and @nonblock; -ERESTARTSYS on a signal; -EFAULT.
 */
ssize_t pfm_msg_read(struct pfm_context *ctx, char __user *buf, size_t size,
		     bool nonblock)
{
	union pfarg_msg msg;
	int ret;

	if (size < sizeof(msg))
		return -EINVAL;
	while (!pfm_msgq_take(ctx, &msg)) {
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(ctx->msgq_wait,
					       pfm_msgq_ready(ctx));
		if (ret)
			return ret;
	}
	return copy_to_user(buf, &msg, sizeof(msg)) ? -EFAULT : sizeof(msg);
}

/**
 * pfm_msg_poll() - poll() of a context: readable when a message waits
 * @ctx: the context
 * @filp: its file
 * @wait: the poll table
 *
 * Return: EPOLLIN | EPOLLRDNORM when a message is queued, else 0.
 */
__poll_t pfm_msg_poll(struct pfm_context *ctx, struct file *filp,
		      poll_table *wait)
{
	poll_wait(filp, &ctx->msgq_wait, wait);
	return pfm_msgq_ready(ctx) ? EPOLLIN | EPOLLRDNORM : 0;
}
