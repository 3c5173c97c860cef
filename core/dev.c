// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/perfmon front end: a misc character device whose open files
 * are monitoring contexts.  Handlers only translate arguments (copy in,
 * take the context lock, call the __pfm_* core, copy out); the core
 * checks the state and does the work.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "perfmon.h"

static int pfm_open(struct inode *inode, struct file *filp)
{
	struct pfm_context *ctx = pfm_context_alloc();

	if (IS_ERR(ctx))
		return PTR_ERR(ctx);
	filp->private_data = ctx;
	return 0;
}

static int pfm_release(struct inode *inode, struct file *filp)
{
	pfm_ctx_release(filp->private_data);
	return 0;
}

static ssize_t pfm_read(struct file *filp, char __user *buf, size_t size,
			loff_t *ppos)
{
	return pfm_msg_read(filp->private_data, buf, size,
			    filp->f_flags & O_NONBLOCK);
}

static __poll_t pfm_poll(struct file *filp, poll_table *wait)
{
	return pfm_msg_poll(filp->private_data, filp, wait);
}

static int pfm_fasync(int fd, struct file *filp, int on)
{
	struct pfm_context *ctx = filp->private_data;

	return fasync_helper(fd, filp, on, &ctx->async_queue);
}

static int pfm_mmap(struct file *filp, struct vm_area_struct *vma)
{
	return pfm_smpl_mmap(filp->private_data, vma);
}

static long pfm_ioctl_version(void __user *uarg)
{
	struct pfarg_version ver = {
		.ver_major = PFM_VERSION_MAJ,
		.ver_minor = PFM_VERSION_MIN,
	};

	return copy_to_user(uarg, &ver, sizeof(ver)) ? -EFAULT : 0;
}

static bool pfm_create_reserved_ok(const struct pfarg_create *req)
{
	return !req->ctx.ctx_reserved1 &&
	       !memchr_inv(req->ctx.ctx_reserved2, 0,
			   sizeof(req->ctx.ctx_reserved2)) &&
	       !req->create_reserved1 &&
	       !memchr_inv(req->create_reserved2, 0,
			   sizeof(req->create_reserved2));
}

/* Largest sampling-format argument accepted. */
#define PFM_FMT_ARG_MAX		PAGE_SIZE

/* The sampling buffer a creation asks for: NULL for none, or an ERR_PTR. */
static struct pfm_smpl_buf *pfm_create_smpl(const struct pfarg_create *req)
{
	struct pfm_smpl_buf *buf;
	void *arg;

	if (!req->create_fmt_name[0])
		return req->create_fmt_arg || req->create_fmt_arg_size ?
		       ERR_PTR(-EINVAL) : NULL;
	if (req->create_fmt_arg_size > PFM_FMT_ARG_MAX)
		return ERR_PTR(-EINVAL);
	arg = memdup_user(u64_to_user_ptr(req->create_fmt_arg),
			  req->create_fmt_arg_size);
	if (IS_ERR(arg))
		return arg;
	buf = pfm_smpl_buf_create(req->create_fmt_name, arg,
				  req->create_fmt_arg_size, req->ctx.ctx_flags);
	kfree(arg);
	return buf;
}

static long pfm_ioctl_create(struct pfm_context *ctx, void __user *uarg)
{
	struct pfm_smpl_buf *smpl = NULL;
	struct pfm_pmu_config *pmu;
	struct pfm_event_set *set0;
	struct pfarg_create req;
	unsigned long flags;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (!pfm_create_reserved_ok(&req) ||
	    strnlen(req.create_fmt_name, PFM_NAME_LEN) == PFM_NAME_LEN)
		return -EINVAL;

	pmu = pfm_pmu_get();
	if (!pmu) {
		pr_info_ratelimited("no PMU description registered: load the module for this CPU, or pfm_soft\n");
		return -ENODEV;
	}
	set0 = pfm_event_set_alloc(pmu, 0);
	if (!set0) {
		ret = -ENOMEM;
		goto put_pmu;
	}
	smpl = pfm_create_smpl(&req);
	if (IS_ERR(smpl)) {
		ret = PTR_ERR(smpl);
		goto free_set0;
	}

	spin_lock_irqsave(&ctx->lock, flags);
	ret = __pfm_create_context(ctx, &req.ctx, pmu, set0, smpl);
	spin_unlock_irqrestore(&ctx->lock, flags);
	if (!ret)
		return 0;

	pfm_smpl_buf_free(smpl);
free_set0:
	pfm_event_set_free(set0);
put_pmu:
	pfm_pmu_put(pmu);
	return ret;
}

/*
 * Array calls: copy the array in, work on it, copy it back out (also on
 * -EINVAL, so that the caller sees which entry was refused and why).
 */
static void *pfm_array_in(void __user *uarg, size_t esize,
			  struct pfarg_array *arr)
{
	if (copy_from_user(arr, uarg, sizeof(*arr)))
		return ERR_PTR(-EFAULT);
	if (arr->arr_reserved || !arr->arr_count ||
	    arr->arr_count > PFM_MAX_ARRAY)
		return ERR_PTR(-EINVAL);
	return vmemdup_user(u64_to_user_ptr(arr->arr_ptr),
			    array_size(arr->arr_count, esize));
}

static long pfm_array_out(const struct pfarg_array *arr, size_t esize,
			  void *req, long ret)
{
	if ((!ret || ret == -EINVAL) &&
	    copy_to_user(u64_to_user_ptr(arr->arr_ptr), req,
			 array_size(arr->arr_count, esize)))
		ret = -EFAULT;
	kvfree(req);
	return ret;
}

/* The array of an array call, as passed to the core through a pfm_ctx_fn. */
struct pfm_array_args {
	void *req;
	unsigned int count;
	struct pfm_event_set **spare;
};

/*
 * An array call on a context: @fn runs under the context lock, on the
 * CPU where the context is live (pfm_ctx_call()).
 */
static long pfm_ioctl_array(struct pfm_context *ctx, void __user *uarg,
			    size_t esize, pfm_ctx_fn fn)
{
	struct pfm_array_args a;
	struct pfarg_array arr;
	int ret;

	a.req = pfm_array_in(uarg, esize, &arr);
	if (IS_ERR(a.req))
		return PTR_ERR(a.req);
	a.count = arr.arr_count;
	ret = pfm_ctx_call(ctx, fn, &a);
	return pfm_array_out(&arr, esize, a.req, ret);
}

static int pfm_array_write_pmcs(struct pfm_context *ctx, void *arg)
{
	struct pfm_array_args *a = arg;

	return __pfm_write_pmcs(ctx, a->req, a->count);
}

static int pfm_array_write_pmds(struct pfm_context *ctx, void *arg)
{
	struct pfm_array_args *a = arg;

	return __pfm_write_pmds(ctx, a->req, a->count);
}

static int pfm_array_read_pmds(struct pfm_context *ctx, void *arg)
{
	struct pfm_array_args *a = arg;

	return __pfm_read_pmds(ctx, a->req, a->count);
}

/*
 * Driver settings are checked in the caller's context before the core
 * takes the context lock (pfm_set_drv_config()), so they do not go
 * through pfm_ioctl_array()'s pfm_ctx_call().
 */
static long pfm_ioctl_drv_config(struct pfm_context *ctx, void __user *uarg,
				 bool set)
{
	struct pfarg_array arr;
	void *req;
	int ret;

	req = pfm_array_in(uarg, sizeof(struct pfarg_drv_cfg), &arr);
	if (IS_ERR(req))
		return PTR_ERR(req);
	if (set)
		ret = pfm_set_drv_config(ctx, req, arr.arr_count);
	else
		ret = pfm_get_drv_config(ctx, req, arr.arr_count);
	return pfm_array_out(&arr, sizeof(struct pfarg_drv_cfg), req, ret);
}

static int pfm_array_delete_evtsets(struct pfm_context *ctx, void *arg)
{
	struct pfm_array_args *a = arg;

	return __pfm_delete_evtsets(ctx, a->req, a->count);
}

static int pfm_array_getinfo_evtsets(struct pfm_context *ctx, void *arg)
{
	struct pfm_array_args *a = arg;

	return __pfm_getinfo_evtsets(ctx, a->req, a->count);
}

static int pfm_array_create_evtsets(struct pfm_context *ctx, void *arg)
{
	struct pfm_array_args *a = arg;

	return __pfm_create_evtsets(ctx, a->req, a->count, a->spare);
}

/* Sets named by @req that do not exist yet (a hint: rechecked later). */
static unsigned int pfm_count_new_sets(struct pfm_context *ctx,
				       const struct pfarg_setdesc *req,
				       unsigned int count)
{
	unsigned long flags;
	unsigned int i, n = 0;

	spin_lock_irqsave(&ctx->lock, flags);
	if (ctx->state != PFM_CTX_NEW)
		for (i = 0; i < count; i++)
			n += !pfm_find_set(ctx, req[i].set_id);
	spin_unlock_irqrestore(&ctx->lock, flags);
	return n;
}

static void pfm_free_spares(struct pfm_event_set **spare, unsigned int n)
{
	while (n--)
		if (spare[n])
			pfm_event_set_free(spare[n]);
	kfree(spare);
}

/*
 * PFM_CREATE_EVTSETS: sets are allocated before the lock is taken, then
 * the core takes what it needs.  A concurrent creation can make the
 * guess short: then allocate again.
 */
static long pfm_ioctl_create_evtsets(struct pfm_context *ctx,
				     void __user *uarg)
{
	const size_t esize = sizeof(struct pfarg_setdesc);
	struct pfm_array_args a;
	struct pfarg_array arr;
	unsigned int i, n;
	int ret;

	a.req = pfm_array_in(uarg, esize, &arr);
	if (IS_ERR(a.req))
		return PTR_ERR(a.req);
	a.count = arr.arr_count;
	do {
		n = pfm_count_new_sets(ctx, a.req, a.count);
		a.spare = kcalloc(n + 1, sizeof(*a.spare), GFP_KERNEL);
		ret = a.spare ? 0 : -ENOMEM;
		for (i = 0; !ret && i < n; i++) {
			a.spare[i] = pfm_event_set_alloc(ctx->pmu, 0);
			if (!a.spare[i])
				ret = -ENOMEM;
		}
		if (!ret)
			ret = pfm_ctx_call(ctx, pfm_array_create_evtsets, &a);
		if (a.spare)
			pfm_free_spares(a.spare, n);
	} while (ret == -EAGAIN);
	return pfm_array_out(&arr, esize, a.req, ret);
}

static long pfm_ioctl_delete_evtsets(struct pfm_context *ctx,
				     void __user *uarg)
{
	long ret;

	ret = pfm_ioctl_array(ctx, uarg, sizeof(struct pfarg_setdesc),
			      pfm_array_delete_evtsets);
	pfm_free_dead_sets(ctx);
	return ret;
}

static long pfm_ioctl_load(struct pfm_context *ctx, void __user *uarg)
{
	struct pfarg_load req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	return pfm_load_context(ctx, &req);
}

static int pfm_call_start(struct pfm_context *ctx, void *arg)
{
	return __pfm_start(ctx, arg);
}

static long pfm_ioctl_start(struct pfm_context *ctx, void __user *uarg)
{
	struct pfarg_start req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	return pfm_ctx_call(ctx, pfm_call_start, &req);
}

static int pfm_call_stop(struct pfm_context *ctx, void *arg)
{
	return __pfm_stop(ctx);
}

static long pfm_ioctl_pmu_info(void __user *uarg)
{
	struct pfarg_pmu_info info;
	int ret;

	ret = pfm_pmu_info(&info);
	if (ret)
		return ret;
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

/* Register introspection needs no context, so no lock. */
static long pfm_ioctl_reg_info(void __user *uarg)
{
	const size_t esize = sizeof(struct pfarg_reg_info);
	struct pfarg_array arr;
	void *req;

	req = pfm_array_in(uarg, esize, &arr);
	if (IS_ERR(req))
		return PTR_ERR(req);
	return pfm_array_out(&arr, esize, req,
			     pfm_pmu_reg_info(req, arr.arr_count));
}

static long pfm_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct pfm_context *ctx = filp->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case PFM_GET_VERSION:
		return pfm_ioctl_version(uarg);
	case PFM_GET_PMU_INFO:
		return pfm_ioctl_pmu_info(uarg);
	case PFM_GET_REG_INFO:
		return pfm_ioctl_reg_info(uarg);
	case PFM_CREATE_CONTEXT:
		return pfm_ioctl_create(ctx, uarg);
	case PFM_WRITE_PMCS:
		return pfm_ioctl_array(ctx, uarg, sizeof(struct pfarg_pmc),
				       pfm_array_write_pmcs);
	case PFM_WRITE_PMDS:
		return pfm_ioctl_array(ctx, uarg, sizeof(struct pfarg_pmd),
				       pfm_array_write_pmds);
	case PFM_READ_PMDS:
		return pfm_ioctl_array(ctx, uarg, sizeof(struct pfarg_pmd),
				       pfm_array_read_pmds);
	case PFM_LOAD_CONTEXT:
		return pfm_ioctl_load(ctx, uarg);
	case PFM_UNLOAD_CONTEXT:
		return pfm_unload_context(ctx);
	case PFM_START:
		return pfm_ioctl_start(ctx, uarg);
	case PFM_STOP:
		return pfm_ctx_call(ctx, pfm_call_stop, NULL);
	case PFM_RESTART:
		return pfm_restart(ctx);
	case PFM_CREATE_EVTSETS:
		return pfm_ioctl_create_evtsets(ctx, uarg);
	case PFM_DELETE_EVTSETS:
		return pfm_ioctl_delete_evtsets(ctx, uarg);
	case PFM_SET_DRV_CONFIG:
		return pfm_ioctl_drv_config(ctx, uarg, true);
	case PFM_GET_DRV_CONFIG:
		return pfm_ioctl_drv_config(ctx, uarg, false);
	case PFM_GETINFO_EVTSETS:
		return pfm_ioctl_array(ctx, uarg, sizeof(struct pfarg_setinfo),
				       pfm_array_getinfo_evtsets);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations pfm_fops = {
	.owner		= THIS_MODULE,
	.open		= pfm_open,
	.release	= pfm_release,
	.read		= pfm_read,
	.poll		= pfm_poll,
	.fasync		= pfm_fasync,
	.mmap		= pfm_mmap,
	.unlocked_ioctl	= pfm_ioctl,
	/* Every argument has one layout for 32-bit and 64-bit callers. */
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice pfm_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "perfmon",
	.fops	= &pfm_fops,
	.mode	= 0666,
};

int pfm_dev_init(void)
{
	return misc_register(&pfm_miscdev);
}

void pfm_dev_exit(void)
{
	misc_deregister(&pfm_miscdev);
}
