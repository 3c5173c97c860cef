// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel API: pfmk_* calls for kernel threads and modules, over the
 * same locked core as /dev/perfmon (core/calls.c).  A descriptor is a
 * context created here; the calls find it in the list of open kernel
 * contexts (holding a reference while they run), so a NULL or closed
 * descriptor is refused with -EBADF instead of being dereferenced.
 * Documentation/kapi.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/err.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <perfmon/kapi.h>

#include "../core/perfmon.h"

static LIST_HEAD(pfmk_ctxs);
static DEFINE_MUTEX(pfmk_mutex);

/* The context behind @desc, referenced, or NULL when it is not open. */
static struct pfm_context *pfmk_get(struct pfmk_ctx *desc)
{
	struct pfm_context *ctx, *found = NULL;

	if (!desc)
		return NULL;
	mutex_lock(&pfmk_mutex);
	list_for_each_entry(ctx, &pfmk_ctxs, kapi_node) {
		if ((struct pfmk_ctx *)ctx == desc) {
			pfm_ctx_get(ctx);
			found = ctx;
			break;
		}
	}
	mutex_unlock(&pfmk_mutex);
	return found;
}

/* An array call: the array checked, then @fn on the open context. */
static int pfmk_array(struct pfmk_ctx *desc, void *req, int count,
		      pfm_array_fn fn)
{
	struct pfm_context *ctx;
	int ret;

	if (!req || count < 1 || count > PFM_MAX_ARRAY)
		return -EINVAL;
	ctx = pfmk_get(desc);
	if (!ctx)
		return -EBADF;
	ret = fn(ctx, req, count);
	pfm_ctx_put(ctx);
	return ret;
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
	struct pfm_create_args a = {
		.fmt_name = fmt_name,
		.fmt_arg = fmt_arg,
		.fmt_arg_size = fmt_arg_size,
	};
	struct pfm_context *ctx;
	int ret;

	if (!req || !c || !desc || (fmt_name && fmt_name[0] && !smpl))
		return -EINVAL;
	ctx = pfm_context_alloc();
	if (IS_ERR(ctx))
		return PTR_ERR(ctx);
	ctx->kernel = true;
	ctx->kcompl = c;
	ret = pfm_create(ctx, req, &a);
	if (ret) {
		pfm_ctx_release(ctx);
		return ret;
	}
	if (smpl) {
		smpl->addr = ctx->smpl ? ctx->smpl->addr : NULL;
		smpl->size = ctx->smpl ? ctx->smpl->size : 0;
	}
	mutex_lock(&pfmk_mutex);
	list_add(&ctx->kapi_node, &pfmk_ctxs);
	mutex_unlock(&pfmk_mutex);
	*desc = (struct pfmk_ctx *)ctx;
	return 0;
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
	return pfmk_array(desc, req, count, pfm_array_write_pmcs);
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
	return pfmk_array(desc, req, count, pfm_array_write_pmds);
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
	return pfmk_array(desc, req, count, pfm_array_read_pmds);
}
EXPORT_SYMBOL_GPL(pfmk_read_pmds);

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
	return pfmk_array(desc, req, count, pfm_array_create_evtsets);
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
	return pfmk_array(desc, req, count, pfm_array_delete_evtsets);
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
	return pfmk_array(desc, req, count, pfm_array_getinfo_evtsets);
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
	return pfmk_array(desc, req, count, pfm_array_set_drv_config);
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
	return pfmk_array(desc, req, count, pfm_array_get_drv_config);
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
	struct pfm_context *ctx;
	int ret;

	if (!req)
		return -EINVAL;
	ctx = pfmk_get(desc);
	if (!ctx)
		return -EBADF;
	ret = pfm_load_context(ctx, req);
	pfm_ctx_put(ctx);
	return ret;
}
EXPORT_SYMBOL_GPL(pfmk_load_context);

/* A call that takes only the context. */
static int pfmk_call(struct pfmk_ctx *desc,
		     int (*fn)(struct pfm_context *ctx))
{
	struct pfm_context *ctx = pfmk_get(desc);
	int ret;

	if (!ctx)
		return -EBADF;
	ret = fn(ctx);
	pfm_ctx_put(ctx);
	return ret;
}

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
	struct pfm_context *ctx;
	int ret;

	if (!req)
		return -EINVAL;
	ctx = pfmk_get(desc);
	if (!ctx)
		return -EBADF;
	ret = pfm_start(ctx, req);
	pfm_ctx_put(ctx);
	return ret;
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
 *
 * Context: process context; may sleep unless @noblock.
 * Return: sizeof(*@msg) with one message; 0 woken without a message (a
 * wake-up without one, or the completion completed by someone else);
 * -EAGAIN with @noblock and nothing pending; -ERESTARTSYS on a signal;
 * -EBADF; -EINVAL @msg NULL or @size too small.
 */
ssize_t pfmk_read(struct pfmk_ctx *desc, union pfarg_msg *msg, size_t size,
		  bool noblock)
{
	struct pfm_context *ctx;
	ssize_t ret;

	if (!msg || size < sizeof(*msg))
		return -EINVAL;
	ctx = pfmk_get(desc);
	if (!ctx)
		return -EBADF;
	ret = pfm_msg_take(ctx, msg);
	if (ret == -EAGAIN && !noblock) {
		ret = -ERESTARTSYS;
		if (!wait_for_completion_interruptible(ctx->kcompl)) {
			ret = pfm_msg_take(ctx, msg);
			if (ret == -EAGAIN)
				ret = 0;	/* woken, no message */
		}
	}
	pfm_ctx_put(ctx);
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
	struct pfm_context *ctx;
	int ret;

	if (!fn)
		return -EINVAL;
	ctx = pfmk_get(desc);
	if (!ctx)
		return -EBADF;
	ret = pfm_smpl_copy(ctx, pos, len, fn, priv);
	pfm_ctx_put(ctx);
	return ret;
}
EXPORT_SYMBOL_GPL(pfmk_smpl_copy);

/**
 * pfmk_close() - unload and free a context
 * @desc: the context; invalid afterwards, and so is its buffer
 *
 * Safe while a sampling buffer is in use by the PMU: the context is
 * unloaded first, and the buffer goes with the last reference.
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADF NULL or closed already.
 */
int pfmk_close(struct pfmk_ctx *desc)
{
	struct pfm_context *ctx, *found = NULL;

	if (!desc)
		return -EBADF;
	mutex_lock(&pfmk_mutex);
	list_for_each_entry(ctx, &pfmk_ctxs, kapi_node) {
		if ((struct pfmk_ctx *)ctx == desc) {
			list_del(&ctx->kapi_node);
			found = ctx;
			break;
		}
	}
	mutex_unlock(&pfmk_mutex);
	if (!found)
		return -EBADF;
	pfm_ctx_release(found);
	return 0;
}
EXPORT_SYMBOL_GPL(pfmk_close);
