// SPDX-License-Identifier: GPL-2.0
/*
 * The message queue of a context: what read() returns, one message at
 * a time, with poll() and O_ASYNC.  The ring is guarded by ctx->lock;
 * readers wait on ctx->msgq_wait, which is woken after ctx->lock is
 * dropped (a wake-up takes scheduler locks, and the scheduler's
 * preempt notifiers take ctx->lock), and by an irq_work after an
 * overflow interrupt (the wait queue's lock sleeps on PREEMPT_RT).
 *
 * Wake-ups without a message (PFM_FL_OVFL_NO_MSG, a format's wake-up)
 * are counted in ctx->nomsg_wakes: poll() reports EPOLLIN while any is
 * pending, read() returns 0 and takes them all.
 */
#include <linux/bitmap.h>
#include <linux/completion.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
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

/**
 * pfm_msg_wake() - wake readers and pollers, signal O_ASYNC owners
 * @ctx: the context, not locked
 *
 * Context: process context or an irq_work; not under ctx->lock (on
 * PREEMPT_RT not in hard interrupt context: pfm_msg_wake_irq()).
 */
void pfm_msg_wake(struct pfm_context *ctx)
{
	/* A kernel context's owner waits on its own completion. */
	if (ctx->kcompl)
		complete(ctx->kcompl);
	wake_up_interruptible(&ctx->msgq_wait);
	kill_fasync(&ctx->async_queue, SIGIO, POLL_IN);
}

static void pfm_msg_wake_fn(struct irq_work *iw)
{
	struct pfm_context *ctx = container_of(iw, struct pfm_context, wake_iw);

	pfm_msg_wake(ctx);
	pfm_ctx_put_async(ctx);
}

/**
 * pfm_msg_wake_irq() - pfm_msg_wake() for the overflow interrupt
 * @ctx: the context, not locked, live on this CPU (so not freed yet)
 *
 * Wait queues, completions' owners and fasync take spinlock_t and
 * rwlock_t, which sleep on PREEMPT_RT, where the overflow interrupt runs
 * in hard interrupt context: an irq_work does the wake-up, in a thread
 * there, at the end of the interrupt elsewhere.  It holds a reference
 * until it ran.
 *
 * Context: interrupts disabled; not from NMI.
 */
void pfm_msg_wake_irq(struct pfm_context *ctx)
{
	pfm_ctx_get(ctx);
	if (!irq_work_queue(&ctx->wake_iw))
		refcount_dec(&ctx->refs);	/* pending: it holds one */
}

/* Set up the wake-ups of a new context. */
void pfm_msg_init(struct pfm_context *ctx)
{
	init_waitqueue_head(&ctx->msgq_wait);
	init_irq_work(&ctx->wake_iw, pfm_msg_wake_fn);
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
	raw_spin_lock_irqsave(&ctx->lock, flags);
	if (ctx->state != PFM_CTX_ZOMBIE)
		queued = pfm_msgq_add(ctx, &msg);
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	if (queued)
		pfm_msg_wake(ctx);
}

/**
 * pfm_msg_post_ovfl() - queue the overflow message of an interrupt
 * @ctx: the context, locked, live on this CPU
 * @pmds: the PMDs to report
 * @ip: instruction pointer at the interrupt, or 0
 *
 * With PFM_FL_OVFL_NO_MSG only a wake-up is recorded.  A message that
 * finds the queue full is dropped: the context masks at each one, so
 * the queue fills only when the monitor restarts without reading.  The
 * caller wakes readers with pfm_msg_wake_irq() after dropping the lock.
 */
void pfm_msg_post_ovfl(struct pfm_context *ctx, const unsigned long *pmds,
		       u64 ip)
	__must_hold(&ctx->lock)
{
	union pfarg_msg msg = {};
	struct pfarg_ovfl_msg *m = &msg.pfm_ovfl_msg;

	lockdep_assert_held(&ctx->lock);
	if (ctx->flags & PFM_FL_OVFL_NO_MSG) {
		pfm_msg_post_wake(ctx);
		return;
	}
	m->msg_type = PFM_MSG_OVFL;
	pfm_current_ids(ctx, &m->msg_ovfl_pid, &m->msg_ovfl_tid);
	m->msg_active_set = ctx->active_set->id;
	m->msg_ovfl_cpu = smp_processor_id();
	m->msg_ovfl_ip = ip;
	bitmap_to_arr64(m->msg_ovfl_pmds, pmds, PFM_MAX_PMDS);
	pfm_msgq_add(ctx, &msg);
}

/**
 * pfm_msg_post_throttle() - queue the message of a throttled context
 * @ctx: the context, locked, live on this CPU
 *
 * With PFM_FL_OVFL_NO_MSG nothing is queued: that monitor reads no
 * messages but PFM_MSG_END.
 *
 * Return: a message was queued: the caller wakes readers with
 * pfm_msg_wake_irq() after dropping the lock.
 */
bool pfm_msg_post_throttle(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	union pfarg_msg msg = {};
	struct pfarg_ovfl_msg *m = &msg.pfm_ovfl_msg;

	lockdep_assert_held(&ctx->lock);
	if (ctx->flags & PFM_FL_OVFL_NO_MSG)
		return false;
	m->msg_type = PFM_MSG_THROTTLE;
	pfm_current_ids(ctx, &m->msg_ovfl_pid, &m->msg_ovfl_tid);
	m->msg_active_set = ctx->active_set->id;
	m->msg_ovfl_cpu = smp_processor_id();
	return pfm_msgq_add(ctx, &msg);
}

/**
 * pfm_msg_post_wake() - record a wake-up without a message
 * @ctx: the context, locked
 *
 * The caller wakes readers with pfm_msg_wake_irq() after dropping the lock.
 */
void pfm_msg_post_wake(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	ctx->nomsg_wakes++;
}

/*
 * Take the oldest message (true), or every pending wake-up without a
 * message (false, *@woken set); false and !*@woken when there is neither.
 */
static bool pfm_msgq_take(struct pfm_context *ctx, union pfarg_msg *msg,
			  bool *woken)
{
	unsigned long flags;
	bool got = false;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	if (!pfm_msgq_empty(ctx)) {
		*msg = ctx->msgq[ctx->msgq_head++ % PFM_MSGS_COUNT];
		got = true;
	} else if (ctx->nomsg_wakes) {
		ctx->nomsg_wakes = 0;
		*woken = true;
	}
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	return got;
}

static bool pfm_msgq_ready(struct pfm_context *ctx)
{
	unsigned long flags;
	bool ready;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	ready = !pfm_msgq_empty(ctx) || ctx->nomsg_wakes;
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	return ready;
}

/**
 * pfm_msg_take() - take one message, or the wake-ups without one
 * @ctx: the context, not locked
 * @msg: where the message goes
 *
 * Return: sizeof(*@msg) with a message; 0 when only wake-ups without a
 * message were pending (all taken); -EAGAIN when nothing was.
 */
ssize_t pfm_msg_take(struct pfm_context *ctx, union pfarg_msg *msg)
{
	bool woken = false;

	if (pfm_msgq_take(ctx, msg, &woken))
		return sizeof(*msg);
	return woken ? 0 : -EAGAIN;
}

/**
 * pfm_msg_read() - read one message
 * @ctx: the context
 * @buf: user buffer
 * @size: its size; at least sizeof(union pfarg_msg)
 * @nonblock: O_NONBLOCK
 *
 * Return: the message size; 0 for wake-ups without a message (all
 * pending ones are taken); -EINVAL for a short buffer; -EAGAIN when
 * nothing is pending and @nonblock; -ERESTARTSYS on a signal; -EFAULT.
 */
ssize_t pfm_msg_read(struct pfm_context *ctx, char __user *buf, size_t size,
		     bool nonblock)
{
	union pfarg_msg msg;
	ssize_t ret;

	if (size < sizeof(msg))
		return -EINVAL;
	while ((ret = pfm_msg_take(ctx, &msg)) == -EAGAIN) {
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(ctx->msgq_wait,
					       pfm_msgq_ready(ctx));
		if (ret)
			return ret;
	}
	if (ret <= 0)
		return ret;
	return copy_to_user(buf, &msg, sizeof(msg)) ? -EFAULT : sizeof(msg);
}

/**
 * pfm_msg_poll() - poll() of a context: readable when a message waits
 * @ctx: the context
 * @filp: its file
 * @wait: the poll table
 *
 * Return: EPOLLIN | EPOLLRDNORM when a message or a wake-up without
 * message is pending, else 0.
 */
__poll_t pfm_msg_poll(struct pfm_context *ctx, struct file *filp,
		      poll_table *wait)
{
	poll_wait(filp, &ctx->msgq_wait, wait);
	return pfm_msgq_ready(ctx) ? EPOLLIN | EPOLLRDNORM : 0;
}

/**
 * pfm_msg_fasync() - fasync() of a context: SIGIO at each wake-up
 * @ctx: the context
 * @fd: the file descriptor
 * @filp: its file
 * @on: add or remove
 *
 * Return: as fasync_helper().
 */
int pfm_msg_fasync(struct pfm_context *ctx, int fd, struct file *filp, int on)
{
	return fasync_helper(fd, filp, on, &ctx->async_queue);
}
