// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/perfmon front end: a misc character device whose open files
 * are monitoring contexts.  Handlers only translate arguments: copy in,
 * make the call (its named function, frontend.h), copy out; the core
 * checks the state and does the work.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/instrumented.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "frontend.h"

static int pfm_open(struct inode *inode, struct file *filp)
{
	struct pfm_context *ctx = pfm_context_alloc(NULL);

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

	return pfm_msg_fasync(ctx, fd, filp, on);
}

static int pfm_mmap(struct file *filp, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff == PFM_USER_PAGE_OFFSET >> PAGE_SHIFT)
		return pfm_upage_mmap(filp->private_data, vma);
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

/* The context's own reserved fields are checked by the core. */
static bool pfm_create_reserved_ok(const struct pfarg_create *req)
{
	return !req->create_reserved1 &&
	       !memchr_inv(req->create_reserved2, 0,
			   sizeof(req->create_reserved2));
}

/* Largest sampling-format argument accepted. */
#define PFM_FMT_ARG_MAX		PAGE_SIZE

static long pfm_ioctl_create(struct pfm_context *ctx, void __user *uarg)
{
	struct pfm_create_args c = { .charge = true };
	struct pfarg_create req;
	void *arg = NULL;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (!pfm_create_reserved_ok(&req) ||
	    strnlen(req.create_fmt_name, PFM_NAME_LEN) == PFM_NAME_LEN ||
	    req.create_fmt_arg_size > PFM_FMT_ARG_MAX ||
	    (!req.create_fmt_name[0] && req.create_fmt_arg))
		return -EINVAL;
	if (req.create_fmt_name[0] && req.create_fmt_arg_size) {
		arg = memdup_user(u64_to_user_ptr(req.create_fmt_arg),
				  req.create_fmt_arg_size);
		if (IS_ERR(arg))
			return PTR_ERR(arg);
	}
	c.fmt_name = req.create_fmt_name;
	c.fmt_arg = arg;
	c.fmt_arg_size = req.create_fmt_arg_size;
	ret = pfm_create_context(ctx, &req.ctx, &c);
	kfree(arg);
	return ret;
}

/*
 * Array calls: copy the array in, work on it, copy it back out (also on
 * -EINVAL and -EACCES, so that the caller sees which entry was refused
 * and why).  Arrays of up to four PMD entries are copied to the stack:
 * reading a few counters, the frequent call, then allocates nothing.
 */
#define PFM_ARRAY_ON_STACK	(4 * sizeof(struct pfarg_pmd))

struct pfm_array_buf {
	u64 words[PFM_ARRAY_ON_STACK / sizeof(u64)];
};

static void *pfm_array_in(void __user *uarg, size_t esize,
			  struct pfarg_array *arr, struct pfm_array_buf *buf)
{
	void __user *ptr;
	size_t size;

	if (copy_from_user(arr, uarg, sizeof(*arr)))
		return ERR_PTR(-EFAULT);
	if (arr->arr_reserved || !arr->arr_count ||
	    arr->arr_count > PFM_MAX_ARRAY)
		return ERR_PTR(-EINVAL);
	ptr = u64_to_user_ptr(arr->arr_ptr);
	size = array_size(arr->arr_count, esize);
	if (size > sizeof(*buf))
		return vmemdup_user(ptr, size);
	return copy_from_user(buf, ptr, size) ? ERR_PTR(-EFAULT) : buf;
}

static long pfm_array_out(const struct pfarg_array *arr, size_t esize,
			  void *req, struct pfm_array_buf *buf, long ret)
{
	if ((!ret || ret == -EINVAL || ret == -EACCES) &&
	    copy_to_user(u64_to_user_ptr(arr->arr_ptr), req,
			 array_size(arr->arr_count, esize)))
		ret = -EFAULT;
	if (req != buf)
		kvfree(req);
	return ret;
}

/* The array call @cmd on @n entries at @req: its named function. */
static int pfm_array_call(struct pfm_context *ctx, unsigned int cmd,
			  void *req, unsigned int n)
{
	switch (cmd) {
	case PFM_WRITE_PMCS:
		return pfm_write_pmcs(ctx, req, n);
	case PFM_WRITE_PMDS:
		return pfm_write_pmds(ctx, req, n);
	case PFM_READ_PMDS:
		return pfm_read_pmds(ctx, req, n);
	case PFM_CREATE_EVTSETS:
		return pfm_create_evtsets(ctx, req, n);
	case PFM_DELETE_EVTSETS:
		return pfm_delete_evtsets(ctx, req, n);
	case PFM_GETINFO_EVTSETS:
		return pfm_getinfo_evtsets(ctx, req, n);
	case PFM_SET_DRV_CONFIG:
		return pfm_set_drv_config(ctx, req, n);
	case PFM_GET_DRV_CONFIG:
		return pfm_get_drv_config(ctx, req, n);
	}
	return -ENOTTY;
}

/* An array call on a context: copy in, call the core, copy out. */
static noinline_for_stack long pfm_ioctl_array(struct pfm_context *ctx,
					       void __user *uarg,
					       unsigned int cmd, size_t esize)
{
	/* One object: a kernel that zeroes the stack zeroes it at once. */
	struct {
		struct pfarg_array arr;
		struct pfm_array_buf buf;
	} s;
	void *req;

	req = pfm_array_in(uarg, esize, &s.arr, &s.buf);
	if (IS_ERR(req))
		return PTR_ERR(req);
	return pfm_array_out(&s.arr, esize, req, &s.buf,
			     pfm_array_call(ctx, cmd, req, s.arr.arr_count));
}

/*
 * PFM_LOAD_CONTEXT and PFM_START: one structure in.  Inline, so that
 * each copy has a constant size: hardened usercopy then checks the
 * stack object at build time, not on every start.
 */
static __always_inline long pfm_ioctl_load(struct pfm_context *ctx,
					   void __user *uarg)
{
	struct pfarg_load req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	return pfm_load_context(ctx, &req);
}

static __always_inline long pfm_ioctl_start(struct pfm_context *ctx,
					    void __user *uarg)
{
	struct pfarg_start req;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	return pfm_start(ctx, &req);
}

/*
 * PFM_READ_VALUES' argument: three 64-bit loads (the last holds
 * rv_first, rv_set and rv_reserved), not copy_from_user()'s generic
 * copy: the call exists to be cheap.
 */
static int pfm_read_values_in(const void __user *uarg,
			      struct pfarg_read_values *req)
{
	const u64 __user *u = uarg;
	u64 w[3];

	BUILD_BUG_ON(sizeof(*req) != sizeof(w));
	if (!user_read_access_begin(u, sizeof(w)))
		return -EFAULT;
	unsafe_get_user(w[0], &u[0], efault);
	unsafe_get_user(w[1], &u[1], efault);
	unsafe_get_user(w[2], &u[2], efault);
	user_read_access_end();
	memcpy(req, w, sizeof(w));
	return 0;
efault:
	user_read_access_end();
	return -EFAULT;
}

/*
 * @n values out in one copy.  copy_to_user() would check at run time
 * that the buffer lies within the stack (hardened usercopy, about 50
 * instructions, as much as the copy), since @n is not a constant; @n is
 * at most 64, the buffer's size, by construction (one value per bit of
 * a u64): the user range check, the sanitizers' hook and the copy, as
 * copy_to_user() does after its object check.
 */
static int pfm_read_values_out(u64 __user *u, const u64 *vals,
			       unsigned int n)
{
	size_t len = n * sizeof(*u);

	if (WARN_ON_ONCE(n > BITS_PER_TYPE(u64)) || !access_ok(u, len))
		return -EFAULT;
	instrument_copy_to_user(u, vals, len);
	return raw_copy_to_user(u, vals, len) ? -EFAULT : 0;
}

/*
 * PFM_READ_VALUES: the values go through the stack, all read in one
 * pass under the lock.  The buffer is left out of the kernel's stack
 * zeroing (512 bytes a call): only the values the core wrote, one per
 * PMD asked for, are copied out.
 */
static __always_inline long
pfm_ioctl_read_values(struct pfm_context *ctx, void __user *uarg)
{
	u64 buf[BITS_PER_TYPE(u64)] __uninitialized;
	struct pfarg_read_values req;
	struct pfm_values v;
	int ret;

	if (pfm_read_values_in(uarg, &req))
		return -EFAULT;
	if (req.rv_reserved || !req.rv_pmds)
		return -EINVAL;
	v.pmds = req.rv_pmds;
	v.vals = buf;
	v.first = req.rv_first;
	v.set = req.rv_set;
	ret = pfm_read_values(ctx, &v);
	if (ret)
		return ret;
	return pfm_read_values_out(u64_to_user_ptr(req.rv_values), buf, v.nr);
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
static noinline_for_stack long pfm_ioctl_reg_info(void __user *uarg)
{
	const size_t esize = sizeof(struct pfarg_reg_info);
	struct pfm_array_buf buf;
	struct pfarg_array arr;
	void *req;

	req = pfm_array_in(uarg, esize, &arr, &buf);
	if (IS_ERR(req))
		return PTR_ERR(req);
	return pfm_array_out(&arr, esize, req, &buf,
			     pfm_pmu_reg_info(req, arr.arr_count));
}

/* Every call but PFM_READ_VALUES. */
static noinline long pfm_ioctl_other(struct pfm_context *ctx,
				     unsigned int cmd, void __user *uarg)
{
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
		return pfm_ioctl_array(ctx, uarg, cmd, sizeof(struct pfarg_pmc));
	case PFM_WRITE_PMDS:
	case PFM_READ_PMDS:
		return pfm_ioctl_array(ctx, uarg, cmd, sizeof(struct pfarg_pmd));
	case PFM_LOAD_CONTEXT:
		return pfm_ioctl_load(ctx, uarg);
	case PFM_UNLOAD_CONTEXT:
		return pfm_unload_context(ctx);
	case PFM_START:
		return pfm_ioctl_start(ctx, uarg);
	case PFM_STOP:
		return pfm_stop(ctx);
	case PFM_RESTART:
		return pfm_restart(ctx);
	case PFM_CREATE_EVTSETS:
	case PFM_DELETE_EVTSETS:
		return pfm_ioctl_array(ctx, uarg, cmd,
				       sizeof(struct pfarg_setdesc));
	case PFM_SET_DRV_CONFIG:
	case PFM_GET_DRV_CONFIG:
		return pfm_ioctl_array(ctx, uarg, cmd,
				       sizeof(struct pfarg_drv_cfg));
	case PFM_GETINFO_EVTSETS:
		return pfm_ioctl_array(ctx, uarg, cmd,
				       sizeof(struct pfarg_setinfo));
	default:
		return -ENOTTY;
	}
}

/*
 * A monitor's polling call first, inline, before the switch's compare
 * chain and without its stack frame (the other calls' structures).  Its
 * 512-byte buffer is then in this frame for every call: about 600
 * bytes in all, below the kernel's frame size warning, and not zeroed.
 */
static long pfm_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct pfm_context *ctx = filp->private_data;
	void __user *uarg = (void __user *)arg;

	if (likely(cmd == PFM_READ_VALUES))
		return pfm_ioctl_read_values(ctx, uarg);
	return pfm_ioctl_other(ctx, cmd, uarg);
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

/*
 * Root's alone until the administrator widens it (the udev rule's
 * group, Documentation/security.rst): a module cannot read the
 * machine's perf policy (kernel.perf_event_paranoid is not exported,
 * and Debian's 3 refuses unprivileged perf outright), so by default an
 * unprivileged user gets nothing perf would not give.
 */
static struct miscdevice pfm_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "perfmon",
	.fops	= &pfm_fops,
	.mode	= 0600,
};

int pfm_dev_init(void)
{
	return misc_register(&pfm_miscdev);
}

void pfm_dev_exit(void)
{
	misc_deregister(&pfm_miscdev);
}
