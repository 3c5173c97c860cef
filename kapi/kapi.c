// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel API: pfmk_* calls for kernel threads and modules, over the
 * same locked core as /dev/perfmon (the calls of core/frontend.h).  Documentation/kapi.rst.
 *
 * A descriptor (struct pfmk_ctx) is what a file is to the ioctls: it
 * holds the context's creator reference, and its lifetime is counted in
 * users, as a file's is in the references of the calls in flight.  The
 * calls find it in the list of open descriptors (so a NULL or closed one
 * is refused with -EBADF, never dereferenced) and count themselves as a
 * user until they return.  pfmk_close() takes the descriptor out of the
 * list, so later calls get -EBADF, wakes the pfmk_read() calls waiting
 * on the caller's completion, drops the creator's use and waits for the
 * calls in flight to drop theirs; the last one lets it tear the context
 * down (unload, then the creator's reference).  Without that wait a load
 * in flight could attach the context after close() had unloaded it, and
 * the context was freed while the thread's hook still pointed to it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/err.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <perfmon/kapi.h>

#include "../core/frontend.h"

/**
 * struct pfmk_ctx - a kernel API descriptor
 * @node: in pfmk_ctxs while open
 * @ctx: the context; the descriptor holds its creator reference
 * @kcompl: the creator's completion, which the context completes at each
 *          wake-up
 * @users: the creator's use while open, plus one per call in flight
 * @readers: pfmk_read() calls waiting on the creator's completion
 * @idle: completed by the call that drops the last use after close
 *
 * @node, @users and @readers are guarded by pfmk_mutex; @ctx and
 * @kcompl are constant.  The descriptor is freed by pfmk_close() once
 * @users is 0.
 */
struct pfmk_ctx {
	struct list_head node;
	struct pfm_context *ctx;
	struct completion *kcompl;
	unsigned int users;
	unsigned int readers;
	struct completion idle;
};

static LIST_HEAD(pfmk_ctxs);
static DEFINE_MUTEX(pfmk_mutex);

/* @desc if it is open, with one more user; NULL otherwise. */
static struct pfmk_ctx *pfmk_get(struct pfmk_ctx *desc)
{
	struct pfmk_ctx *d, *found = NULL;

	if (!desc)
		return NULL;
	mutex_lock(&pfmk_mutex);
	list_for_each_entry(d, &pfmk_ctxs, node) {
		if (d == desc) {
			d->users++;
			found = d;
			break;
		}
	}
	mutex_unlock(&pfmk_mutex);
	return found;
}

/* Drop a use of pfmk_get(); the last one after close lets close go on. */
static void pfmk_put(struct pfmk_ctx *d)
{
	bool last;

	mutex_lock(&pfmk_mutex);
	last = !--d->users;
	mutex_unlock(&pfmk_mutex);
	/* pfmk_close() frees @d once woken: nothing touches it after this. */
	if (last)
		complete(&d->idle);
}

/*
 * Make the core's @call (frontend.h) on the open context of @desc, with
 * the rest of the arguments: the descriptor is held for the call's time
 * (pfmk_close() waits for it).  -EBADF for a descriptor not open.
 */
#define pfmk_call(desc, call, ...) ({					\
	struct pfmk_ctx *__d = pfmk_get(desc);				\
	int __ret = -EBADF;						\
									\
	if (__d) {							\
		__ret = call(__d->ctx, ##__VA_ARGS__);			\
		pfmk_put(__d);						\
	}								\
	__ret;								\
})

/* An array call's entries: PFM_MAX_ARRAY at most, as the device's. */
static bool pfmk_array_ok(const void *req, int count)
{
	return req && count >= 1 && count <= PFM_MAX_ARRAY;
}

/**
 * pfmk_create_context() - create a monitoring context for kernel code
 * @req: context flags (PFM_FL_*), reserved fields zero
 * @fmt_name: sampling format ("default", "ring"), or NULL for none
 * @fmt_arg: the format's argument, or NULL
 * @fmt_arg_size: its size
 * @c: the caller's completion, initialized; completed at every wake-up
 *     of the context (messages and wake-ups without one), see pfmk_read()
 * @desc: out: the descriptor for the other calls
 * @smpl: out: the sampling buffer's kernel address and size (required
 *        with a format, else may be NULL).  The buffer is never mapped
 *        to user space nor charged to a user's RLIMIT_MEMLOCK; it is
 *        valid until pfmk_close().
 *
 * Per-thread contexts may monitor any user thread, or the calling
 * kernel thread itself; system-wide ones any CPU.  The PMU description
 * is never loaded from here (that could deadlock inside a module's
 * init): load it first.
 *
 * Context: process context; may sleep.
 * Return: 0; -EINVAL bad argument, flag or format argument; -ENOENT no
 * such format; -ENODEV no PMU description registered; -EMFILE the
 * caller's uid holds too many contexts; -ENOMEM.
 */
int pfmk_create_context(const struct pfarg_ctx *req, const char *fmt_name,
			const void *fmt_arg, size_t fmt_arg_size,
			struct completion *c, struct pfmk_ctx **desc,
			struct pfmk_smpl *smpl)
{
	struct pfm_create_args fmt = {
		.fmt_name = fmt_name,
		.fmt_arg = fmt_arg,
		.fmt_arg_size = fmt_arg_size,
	};
	struct pfm_context *ctx;
	struct pfmk_ctx *d;
	int ret;

	if (!req || !c || !desc || (fmt_name && fmt_name[0] && !smpl))
		return -EINVAL;
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	ctx = pfm_context_alloc(c);
	if (IS_ERR(ctx)) {
		ret = PTR_ERR(ctx);
		goto free_desc;
	}
	ret = pfm_create_context(ctx, req, &fmt);
	if (ret)
		goto release_ctx;
	if (smpl)
		smpl->addr = pfm_smpl_area(ctx, &smpl->size);
	d->ctx = ctx;
	d->kcompl = c;
	d->users = 1;		/* the creator's, until pfmk_close() */
	init_completion(&d->idle);
	mutex_lock(&pfmk_mutex);
	list_add(&d->node, &pfmk_ctxs);
	mutex_unlock(&pfmk_mutex);
	*desc = d;
	return 0;

release_ctx:
	pfm_ctx_release(ctx);
free_desc:
	kfree(d);
	return ret;
}
EXPORT_SYMBOL_GPL(pfmk_create_context);

/**
 * pfmk_write_pmcs() - program PMCs, as PFM_WRITE_PMCS
 * @desc: the context
 * @req: the entries; a refused one gets PFM_REG_RETFL_* in reg_flags
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADF bad descriptor; -EINVAL bad array or a refused entry
 * (none applied).
 */
int pfmk_write_pmcs(struct pfmk_ctx *desc, struct pfarg_pmc *req, int count)
{
	if (!pfmk_array_ok(req, count))
		return -EINVAL;
	return pfmk_call(desc, pfm_write_pmcs, req, count);
}
EXPORT_SYMBOL_GPL(pfmk_write_pmcs);

/**
 * pfmk_write_pmds() - set PMDs and their overflow attributes, as
 * PFM_WRITE_PMDS
 * @desc: the context
 * @req: the entries
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Context: process context; may sleep.
 * Return: as pfmk_write_pmcs().
 */
int pfmk_write_pmds(struct pfmk_ctx *desc, struct pfarg_pmd *req, int count)
{
	if (!pfmk_array_ok(req, count))
		return -EINVAL;
	return pfmk_call(desc, pfm_write_pmds, req, count);
}
EXPORT_SYMBOL_GPL(pfmk_write_pmds);

/**
 * pfmk_read_pmds() - read PMDs (64-bit values), as PFM_READ_PMDS
 * @desc: the context
 * @req: the entries
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADF; -EINVAL bad array or an entry refused (the others
 * are answered).
 */
int pfmk_read_pmds(struct pfmk_ctx *desc, struct pfarg_pmd *req, int count)
{
	if (!pfmk_array_ok(req, count))
		return -EINVAL;
	return pfmk_call(desc, pfm_read_pmds, req, count);
}
EXPORT_SYMBOL_GPL(pfmk_read_pmds);

/**
 * pfmk_read_values() - read PMD values, 8 bytes each, as PFM_READ_VALUES
 * @desc: the context
 * @set: the event set
 * @first: the PMD of bit 0 of @pmds
 * @pmds: the PMDs to read, bit n for PMD @first + n (not 0)
 * @values: out: one value per bit set in @pmds, lowest PMD first
 *
 * All the PMDs are read in one pass under the context's lock.
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADF; -EINVAL no PMD asked for, no such set, or a PMD
 * not used in it (nothing written to @values).
 */
int pfmk_read_values(struct pfmk_ctx *desc, u16 set, u16 first, u64 pmds,
		     u64 *values)
{
	struct pfm_values v = {
		.pmds = pmds, .vals = values, .first = first, .set = set,
	};

	if (!pmds || !values)
		return -EINVAL;
	return pfmk_call(desc, pfm_read_values, &v);
}
EXPORT_SYMBOL_GPL(pfmk_read_values);

/**
 * pfmk_create_evtsets() - create or change event sets, as
 * PFM_CREATE_EVTSETS
 * @desc: the context
 * @req: the entries
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Context: process context; may sleep.
 * Return: as pfmk_write_pmcs(); -ENOMEM.
 */
int pfmk_create_evtsets(struct pfmk_ctx *desc, struct pfarg_setdesc *req,
			int count)
{
	if (!pfmk_array_ok(req, count))
		return -EINVAL;
	return pfmk_call(desc, pfm_create_evtsets, req, count);
}
EXPORT_SYMBOL_GPL(pfmk_create_evtsets);

/**
 * pfmk_delete_evtsets() - delete event sets, as PFM_DELETE_EVTSETS
 * @desc: the context
 * @req: the entries
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Context: process context; may sleep.
 * Return: as pfmk_write_pmcs(); -EBUSY the active set of a loaded context.
 */
int pfmk_delete_evtsets(struct pfmk_ctx *desc, struct pfarg_setdesc *req,
			int count)
{
	if (!pfmk_array_ok(req, count))
		return -EINVAL;
	return pfmk_call(desc, pfm_delete_evtsets, req, count);
}
EXPORT_SYMBOL_GPL(pfmk_delete_evtsets);

/**
 * pfmk_getinfo_evtsets() - describe event sets, as PFM_GETINFO_EVTSETS
 * @desc: the context
 * @req: the entries
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Context: process context; may sleep.
 * Return: as pfmk_read_pmds().
 */
int pfmk_getinfo_evtsets(struct pfmk_ctx *desc, struct pfarg_setinfo *req,
			 int count)
{
	if (!pfmk_array_ok(req, count))
		return -EINVAL;
	return pfmk_call(desc, pfm_getinfo_evtsets, req, count);
}
EXPORT_SYMBOL_GPL(pfmk_getinfo_evtsets);

/**
 * pfmk_set_drv_config() - PMU driver settings, as PFM_SET_DRV_CONFIG
 * @desc: the context
 * @req: the entries
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Context: process context; may sleep.
 * Return: as pfmk_write_pmcs().
 */
int pfmk_set_drv_config(struct pfmk_ctx *desc, struct pfarg_drv_cfg *req,
			int count)
{
	if (!pfmk_array_ok(req, count))
		return -EINVAL;
	return pfmk_call(desc, pfm_set_drv_config, req, count);
}
EXPORT_SYMBOL_GPL(pfmk_set_drv_config);

/**
 * pfmk_get_drv_config() - read PMU driver settings, as PFM_GET_DRV_CONFIG
 * @desc: the context
 * @req: the entries
 * @count: 1 to PFM_MAX_ARRAY
 *
 * Context: process context; may sleep.
 * Return: as pfmk_read_pmds().
 */
int pfmk_get_drv_config(struct pfmk_ctx *desc, struct pfarg_drv_cfg *req,
			int count)
{
	if (!pfmk_array_ok(req, count))
		return -EINVAL;
	return pfmk_call(desc, pfm_get_drv_config, req, count);
}
EXPORT_SYMBOL_GPL(pfmk_get_drv_config);

/**
 * pfmk_load_context() - attach to a thread or a CPU, as PFM_LOAD_CONTEXT
 * @desc: the context
 * @req: load_pid: a user thread's id, the calling kernel thread's own id
 *       (task_pid_nr(current)), or the CPU of a system-wide context
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADF; -EINVAL bad argument; -EPERM another kernel
 * thread; otherwise as PFM_LOAD_CONTEXT.
 */
int pfmk_load_context(struct pfmk_ctx *desc, const struct pfarg_load *req)
{
	if (!req)
		return -EINVAL;
	return pfmk_call(desc, pfm_load_context, req);
}
EXPORT_SYMBOL_GPL(pfmk_load_context);

/**
 * pfmk_unload_context() - detach, as PFM_UNLOAD_CONTEXT
 * @desc: the context
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADF.
 */
int pfmk_unload_context(struct pfmk_ctx *desc)
{
	return pfmk_call(desc, pfm_unload_context);
}
EXPORT_SYMBOL_GPL(pfmk_unload_context);

/**
 * pfmk_start() - start counting, as PFM_START
 * @desc: the context
 * @req: the set to start with
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADF; -EINVAL unloaded, unknown set, reserved field;
 * -EBUSY masked.
 */
int pfmk_start(struct pfmk_ctx *desc, const struct pfarg_start *req)
{
	if (!req)
		return -EINVAL;
	return pfmk_call(desc, pfm_start, req);
}
EXPORT_SYMBOL_GPL(pfmk_start);

/**
 * pfmk_stop() - stop counting, as PFM_STOP
 * @desc: the context
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADF; -EINVAL unloaded.
 */
int pfmk_stop(struct pfmk_ctx *desc)
{
	return pfmk_call(desc, pfm_stop);
}
EXPORT_SYMBOL_GPL(pfmk_stop);

/**
 * pfmk_restart() - resume after a notification, as PFM_RESTART
 * @desc: the context
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADF; -EINVAL unloaded; -EBUSY not masked.
 */
int pfmk_restart(struct pfmk_ctx *desc)
{
	return pfmk_call(desc, pfm_restart);
}
EXPORT_SYMBOL_GPL(pfmk_restart);

/*
 * Count a pfmk_read() about to wait on the creator's completion, so that
 * pfmk_close() wakes it; false when the descriptor is closed already.
 */
static bool pfmk_wait_begin(struct pfmk_ctx *d)
{
	bool open;

	mutex_lock(&pfmk_mutex);
	open = !list_empty(&d->node);
	if (open)
		d->readers++;
	mutex_unlock(&pfmk_mutex);
	return open;
}

/* The wait is over; true when pfmk_close() was called meanwhile. */
static bool pfmk_wait_end(struct pfmk_ctx *d)
{
	bool closed;

	mutex_lock(&pfmk_mutex);
	d->readers--;
	closed = list_empty(&d->node);
	mutex_unlock(&pfmk_mutex);
	return closed;
}

/**
 * pfmk_read() - take one message of the context
 * @desc: the context
 * @msg: where the message goes
 * @size: at least sizeof(*@msg)
 * @noblock: do not wait
 *
 * Without a message queued, waits on the completion given at creation:
 * the context completes it at every wake-up, and the caller may
 * complete it too (to stop a kernel thread that waits here).  Each
 * completion is counted, so a 0 may follow a message already taken.
 * pfmk_close() from another thread ends the wait with -EBADF.
 *
 * Context: process context; may sleep unless @noblock.
 * Return: sizeof(*@msg) with one message; 0 woken without a message (a
 * wake-up without one, or the completion completed by someone else);
 * -EAGAIN with @noblock and nothing pending; -ERESTARTSYS on a signal;
 * -EBADF, also when the descriptor was closed during the wait; -EINVAL
 * @msg NULL or @size too small.
 */
ssize_t pfmk_read(struct pfmk_ctx *desc, union pfarg_msg *msg, size_t size,
		  bool noblock)
{
	struct pfmk_ctx *d;
	ssize_t ret;

	if (!msg || size < sizeof(*msg))
		return -EINVAL;
	d = pfmk_get(desc);
	if (!d)
		return -EBADF;
	ret = pfm_msg_take(d->ctx, msg);
	if (ret == -EAGAIN && !noblock) {
		ret = -EBADF;
		if (!pfmk_wait_begin(d))
			goto put_desc;
		ret = 0;
		if (wait_for_completion_interruptible(d->kcompl))
			ret = -ERESTARTSYS;
		if (pfmk_wait_end(d)) {
			ret = -EBADF;
		} else if (!ret) {
			ret = pfm_msg_take(d->ctx, msg);
			if (ret == -EAGAIN)
				ret = 0;	/* woken, no message */
		}
	}
put_desc:
	pfmk_put(d);
	return ret;
}
EXPORT_SYMBOL_GPL(pfmk_read);

/**
 * pfmk_smpl_copy() - hand a byte range of the sampling buffer to @fn
 * @desc: the context
 * @pos: default format: offset in the buffer; ring: a free-running data
 *       offset (as data_tail and data_head), taken modulo the data size
 * @len: bytes: within the buffer; for a ring at most its data size
 * @fn: receives the bytes in order, in chunks of at most PAGE_SIZE split
 *      at page boundaries and at the ring's wrap
 * @priv: passed to @fn
 *
 * The bytes are not locked against the writer: copy a ring's bytes from
 * data_tail to data_head (the writer leaves them alone until the tail
 * moves), or those of a stopped context.
 *
 * Context: process context, or wherever @fn may run; takes a mutex.
 * Return: 0; -EBADF; -EINVAL bad range or @fn NULL; -ENODEV no buffer;
 * else @fn's error.
 */
int pfmk_smpl_copy(struct pfmk_ctx *desc, u64 pos, size_t len,
		   pfmk_copy_fn fn, void *priv)
{
	struct pfmk_ctx *d;
	int ret;

	if (!fn)
		return -EINVAL;
	d = pfmk_get(desc);
	if (!d)
		return -EBADF;
	ret = pfm_smpl_copy(d->ctx, pos, len, fn, priv);
	pfmk_put(d);
	return ret;
}
EXPORT_SYMBOL_GPL(pfmk_smpl_copy);

/**
 * pfmk_close() - close a descriptor: unload and free its context
 * @desc: the context; invalid afterwards, and so is its buffer
 *
 * From the start of the call, other calls on @desc return -EBADF, and
 * pfmk_read() calls waiting on the completion are woken (the completion
 * is completed once for each) and return -EBADF.  Calls in flight on
 * other threads finish first: pfmk_close() waits for them, then unloads
 * the context (a load that raced the close is undone here) and drops
 * the descriptor's reference.  When it returns, no call is running on
 * @desc and the context no longer touches the completion.  Safe while a
 * sampling buffer is in use by the PMU: the buffer goes with the last
 * reference.
 *
 * Must not be called from a pfmk_smpl_copy() callback on the same
 * descriptor (it would wait for itself).
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADF NULL or closed already.
 */
int pfmk_close(struct pfmk_ctx *desc)
{
	struct pfmk_ctx *d, *found = NULL;
	unsigned int readers = 0;
	bool last = false;

	if (!desc)
		return -EBADF;
	mutex_lock(&pfmk_mutex);
	list_for_each_entry(d, &pfmk_ctxs, node) {
		if (d == desc) {
			/* Lookups fail from now on: -EBADF. */
			list_del_init(&d->node);
			readers = d->readers;
			last = !--d->users;
			found = d;
			break;
		}
	}
	mutex_unlock(&pfmk_mutex);
	if (!found)
		return -EBADF;
	d = found;
	/* Each waiting reader takes one and sees the descriptor closed. */
	while (readers--)
		complete(d->kcompl);
	if (!last)
		wait_for_completion(&d->idle);
	pfm_ctx_release_sync(d->ctx);
	kfree(d);
	return 0;
}
EXPORT_SYMBOL_GPL(pfmk_close);
