// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling formats and buffers: the formats registered by name, the
 * buffer of a context (vmalloc'ed, charged to the creator's
 * RLIMIT_MEMLOCK and to the global smpl_buffer_mem_max, mapped by mmap()
 * of the context file), and the calls into the format from the overflow
 * path.
 *
 * A mapping holds the context file (vma->vm_file), so the context and
 * its buffer are freed, and uncharged, only once the file is closed and
 * every mapping is gone, whatever the order (munmap or exit).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/kmod.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <perfmon/compat.h>

#include "perfmon.h"

/* Largest buffer a context may ask for; beyond it is surely a mistake. */
#define PFM_SMPL_MAX_BYTES	SZ_1G

/*
 * A buffer and the scratch space its overflows are described in (too
 * big for an interrupt stack; guarded by the context lock).
 */
struct pfm_smpl {
	struct pfm_smpl_buf buf;
	struct pfm_ovfl_arg arg;
};

static DEFINE_MUTEX(pfm_fmt_mutex);
static LIST_HEAD(pfm_fmt_list);

static struct pfm_smpl_fmt *pfm_fmt_find(const char *name)
{
	struct pfm_smpl_fmt *fmt;

	lockdep_assert_held(&pfm_fmt_mutex);
	list_for_each_entry(fmt, &pfm_fmt_list, list)
		if (!strcmp(fmt->name, name))
			return fmt;
	return NULL;
}

/* Told of formats as they come and go: /sys/kernel/perfmon. */
static BLOCKING_NOTIFIER_HEAD(pfm_fmt_chain);

/**
 * pfm_fmt_notifier_register() - be told when a format comes and goes
 * @nb: called with PFM_FMT_REGISTERED after a format is registered and
 *      PFM_FMT_UNREGISTERED before it goes, under pfm_fmt_mutex
 *
 * Return: 0.
 */
int pfm_fmt_notifier_register(struct notifier_block *nb)
{
	return blocking_notifier_chain_register(&pfm_fmt_chain, nb);
}

void pfm_fmt_notifier_unregister(struct notifier_block *nb)
{
	blocking_notifier_chain_unregister(&pfm_fmt_chain, nb);
}

/**
 * pfm_fmt_register() - make a sampling format available by its name
 * @fmt: the format; @fmt->name, @fmt->owner, @fmt->arg_size and every
 *       op but the optional ones set
 *
 * Context: process context.
 * Return: 0; -EINVAL for an incomplete format or a name too long;
 * -EBUSY when a format of that name is registered.
 */
int pfm_fmt_register(struct pfm_smpl_fmt *fmt)
{
	int ret = 0;

	if (!fmt->name || strlen(fmt->name) >= PFM_NAME_LEN || !fmt->name[0] ||
	    !fmt->validate || !fmt->getsize || !fmt->init || !fmt->handler)
		return -EINVAL;
	mutex_lock(&pfm_fmt_mutex);
	if (pfm_fmt_find(fmt->name)) {
		pr_err("sampling format \"%s\" is registered already: unload the other module first\n",
		       fmt->name);
		ret = -EBUSY;
	} else {
		list_add_tail(&fmt->list, &pfm_fmt_list);
		blocking_notifier_call_chain(&pfm_fmt_chain,
					     PFM_FMT_REGISTERED, fmt);
	}
	mutex_unlock(&pfm_fmt_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(pfm_fmt_register);

/**
 * pfm_fmt_unregister() - withdraw a sampling format
 * @fmt: a registered format
 *
 * Buffers hold a reference on the format's module, so none uses it.
 *
 * Context: process context (the format module's exit).
 */
void pfm_fmt_unregister(struct pfm_smpl_fmt *fmt)
{
	mutex_lock(&pfm_fmt_mutex);
	blocking_notifier_call_chain(&pfm_fmt_chain, PFM_FMT_UNREGISTERED,
				     fmt);
	list_del(&fmt->list);
	mutex_unlock(&pfm_fmt_mutex);
}
EXPORT_SYMBOL_GPL(pfm_fmt_unregister);

/* The format @name with a module reference, or NULL. */
static const struct pfm_smpl_fmt *pfm_fmt_get(const char *name)
{
	struct pfm_smpl_fmt *fmt;

	mutex_lock(&pfm_fmt_mutex);
	fmt = pfm_fmt_find(name);
	if (fmt && !try_module_get(fmt->owner))
		fmt = NULL;
	mutex_unlock(&pfm_fmt_mutex);
	return fmt;
}

/* Look the format up, loading module "pfm-fmt-<name>" if need be. */
static const struct pfm_smpl_fmt *pfm_fmt_get_load(const char *name)
{
	const struct pfm_smpl_fmt *fmt = pfm_fmt_get(name);

	if (!fmt) {
		request_module("pfm-fmt-%s", name);
		fmt = pfm_fmt_get(name);
	}
	return fmt;
}

/*
 * Every sampling buffer, users' and the kernel API's, counts against
 * smpl_buffer_mem_max bytes (perfmon2's name), 1/16 of RAM unless the
 * administrator says otherwise; ULONG_MAX (written as -1) is no limit.
 * RLIMIT_MEMLOCK bounds one user; this bounds them all, and the kernel
 * API's buffers, which no rlimit covers.  Neither CAP_IPC_LOCK nor the
 * paranoid level lifts it.
 */
unsigned long pfm_smpl_mem_max;
static atomic_long_t pfm_smpl_mem_cur;

void pfm_smpl_mem_init(void)
{
	pfm_smpl_mem_max = (totalram_pages() / 16) << PAGE_SHIFT;
}

/* Bytes of sampling buffers allocated now, for sysfs. */
unsigned long pfm_smpl_mem_used(void)
{
	return atomic_long_read(&pfm_smpl_mem_cur);
}

static int pfm_smpl_mem_reserve(size_t size)
{
	unsigned long max = READ_ONCE(pfm_smpl_mem_max);
	long cur = atomic_long_read(&pfm_smpl_mem_cur);

	do {
		if (size > max || (unsigned long)cur > max - size) {
			pr_info_ratelimited("a %zu KiB sampling buffer would take all buffers past /sys/kernel/perfmon/smpl_buffer_mem_max (%lu KiB, %lu KiB in use): raise it or ask for a smaller buffer\n",
					    size >> 10, max >> 10,
					    (unsigned long)cur >> 10);
			return -ENOMEM;
		}
	} while (!atomic_long_try_cmpxchg(&pfm_smpl_mem_cur, &cur, cur + size));
	return 0;
}

static void pfm_smpl_mem_unreserve(size_t size)
{
	atomic_long_sub(size, &pfm_smpl_mem_cur);
}

/*
 * KiB per online CPU a user's buffers may lock beyond RLIMIT_MEMLOCK:
 * perf_event_mlock_kb's default (sysfs smpl_user_mlock_kb).
 */
unsigned int pfm_smpl_user_mlock_kb = 516;

/* include/perfmon/compat.h: a kernel whose users have no locked_vm. */
atomic_long_t pfm_all_users_locked_vm = ATOMIC_LONG_INIT(0);

/* Pages the user of the caller may lock in all: allowance + rlimit. */
static unsigned long pfm_smpl_user_limit(void)
{
	unsigned long allow = READ_ONCE(pfm_smpl_user_mlock_kb) >>
			      (PAGE_SHIFT - 10);

	return allow * num_online_cpus() + (rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT);
}

/*
 * Charge @pages to the caller's user (user->locked_vm, which io_uring,
 * RDMA and others charge too), within the allowance and the caller's
 * RLIMIT_MEMLOCK, unless it has CAP_IPC_LOCK or the paranoid level is
 * -1 (perf's rules): a per-process charge let one user lock as much as
 * it liked with more processes.  0 or -ENOMEM.
 */
static int pfm_smpl_charge_user(struct user_struct *user, unsigned long pages,
				bool bypass)
{
	atomic_long_t *locked = pfm_user_locked_vm(user);
	unsigned long total = atomic_long_add_return(pages, locked);
	unsigned long limit;

	if (bypass)
		return 0;
	limit = pfm_smpl_user_limit();
	if (total <= limit)
		return 0;
	atomic_long_sub(pages, locked);
	pr_info_ratelimited("a %lu KiB sampling buffer would bring the locked memory of uid %u to %lu KiB, over its RLIMIT_MEMLOCK plus /sys/kernel/perfmon/smpl_user_mlock_kb per CPU (%lu KiB): raise ulimit -l or that file, or use fewer or smaller buffers\n",
			    pages << (PAGE_SHIFT - 10),
			    from_kuid_munged(&init_user_ns, current_uid()),
			    total << (PAGE_SHIFT - 10),
			    limit << (PAGE_SHIFT - 10));
	return -ENOMEM;
}

/*
 * Charge the pages of @buf to the caller's user (pfm_smpl_charge_user())
 * and show them in its process's VmLck.  Kernel threads have no mm:
 * nothing to charge.
 */
static int pfm_smpl_charge(struct pfm_smpl_buf *buf)
{
	unsigned long pages = buf->size >> PAGE_SHIFT;
	struct mm_struct *mm = current->mm;
	struct user_struct *user;
	bool bypass;
	int ret;

	if (!mm)
		return 0;
	bypass = READ_ONCE(pfm_paranoid) < 0 || capable(CAP_IPC_LOCK);
	user = get_current_user();
	ret = pfm_smpl_charge_user(user, pages, bypass);
	if (ret) {
		free_uid(user);
		return ret;
	}
	/* Accounting only: the user's limit above is the bound. */
	mmap_write_lock(mm);
	__account_locked_vm(mm, pages, true, current, true);
	mmap_write_unlock(mm);
	mmgrab(mm);
	buf->mm = mm;
	buf->user = user;
	return 0;
}

static void pfm_smpl_uncharge(struct pfm_smpl_buf *buf)
{
	unsigned long pages = buf->size >> PAGE_SHIFT;

	if (!buf->mm)
		return;
	account_locked_vm(buf->mm, pages, false);
	mmdrop(buf->mm);
	atomic_long_sub(pages, pfm_user_locked_vm(buf->user));
	free_uid(buf->user);
}

/*
 * Allocate and charge the pages of @buf, sized by its format for @arg:
 * to the global limit, then to the caller's RLIMIT_MEMLOCK (@charge).
 */
static int pfm_smpl_alloc_pages(struct pfm_smpl_buf *buf, const void *arg,
				bool charge)
{
	size_t size = buf->fmt->getsize(arg);
	int ret;

	if (!size || size > PFM_SMPL_MAX_BYTES)
		return -EINVAL;
	ret = pfm_smpl_mem_reserve(PAGE_ALIGN(size));
	if (ret)
		return ret;
	buf->size = PAGE_ALIGN(size);
	ret = charge ? pfm_smpl_charge(buf) : 0;
	if (ret)
		goto unreserve;
	buf->addr = vmalloc_user(buf->size);
	if (!buf->addr) {
		ret = -ENOMEM;
		goto uncharge;
	}
	return 0;

uncharge:
	pfm_smpl_uncharge(buf);
unreserve:
	pfm_smpl_mem_unreserve(buf->size);
	return ret;
}

/* Undo pfm_smpl_alloc_pages(). */
static void pfm_smpl_free_pages(struct pfm_smpl_buf *buf)
{
	vfree(buf->addr);
	pfm_smpl_uncharge(buf);
	pfm_smpl_mem_unreserve(buf->size);
}

/**
 * pfm_smpl_buf_create() - a sampling buffer of format @name for @arg
 * @name: the format's name (NUL-terminated)
 * @arg: its argument, in kernel memory
 * @arg_size: bytes at @arg; must be the format's argument size
 * @ctx_flags: PFM_FL_* of the context
 * @charge: charge the pages to the caller's RLIMIT_MEMLOCK
 *
 * Context: process context; may sleep (may load the format's module).
 * Return: the buffer, or an ERR_PTR: -ENOENT no such format; -EINVAL bad
 * argument or size; -ENOMEM, also over RLIMIT_MEMLOCK or over
 * smpl_buffer_mem_max.
 */
struct pfm_smpl_buf *pfm_smpl_buf_create(const char *name, const void *arg,
					 size_t arg_size, u32 ctx_flags,
					 bool charge)
{
	const struct pfm_smpl_fmt *fmt;
	struct pfm_smpl_buf *buf;
	struct pfm_smpl *smpl;
	int ret;

	fmt = pfm_fmt_get_load(name);
	if (!fmt)
		return ERR_PTR(-ENOENT);
	ret = -EINVAL;
	if (arg_size != fmt->arg_size || fmt->validate(ctx_flags, arg))
		goto put_fmt;
	ret = -ENOMEM;
	smpl = kzalloc(sizeof(*smpl), GFP_KERNEL_ACCOUNT);
	if (!smpl)
		goto put_fmt;
	buf = &smpl->buf;
	buf->fmt = fmt;
	ret = pfm_smpl_alloc_pages(buf, arg, charge);
	if (ret)
		goto free_buf;
	ret = fmt->init(buf, ctx_flags, arg);
	if (ret)
		goto free_pages;
	return buf;

free_pages:
	pfm_smpl_free_pages(buf);
free_buf:
	kfree(smpl);
put_fmt:
	module_put(fmt->owner);
	return ERR_PTR(ret);
}

/**
 * pfm_smpl_buf_free() - free a buffer, uncharge it, let its format go
 * @buf: the buffer, or NULL
 *
 * Context: process context.  Pages still mapped stay until unmapped.
 */
void pfm_smpl_buf_free(struct pfm_smpl_buf *buf)
{
	if (!buf)
		return;
	if (buf->fmt->exit)
		buf->fmt->exit(buf);
	pfm_smpl_free_pages(buf);
	module_put(buf->fmt->owner);
	kfree(container_of(buf, struct pfm_smpl, buf));
}

/* Does @pmd record other PMDs in its samples (reg_smpl_pmds)? */
static bool pfm_smpl_pmds_any(const struct pfm_pmd *pmd)
{
	u64 any = 0;
	unsigned int j;

	for (j = 0; j < PFM_PMD_BV; j++)
		any |= pmd->smpl_pmds[j];
	return any;
}

/*
 * Fill @arg->values with the PMDs of @pmd's reg_smpl_pmds.  Apart, so
 * that the record's path has no stack array (nor its canary) when, as
 * most samplers do, it records the IP alone.
 */
static noinline void pfm_smpl_values(struct pfm_context *ctx,
				     struct pfm_event_set *set,
				     const struct pfm_pmd *pmd,
				     struct pfm_ovfl_arg *arg)
{
	DECLARE_BITMAP(smpl, PFM_MAX_PMDS);
	unsigned int j, n = 0;

	bitmap_from_arr64(smpl, pmd->smpl_pmds, PFM_MAX_PMDS);
	for_each_set_bit(j, smpl, ctx->pmu->max_pmd)
		arg->values[n++] = test_bit(j, set->used_pmds) ?
				   pfm_pmd_read_hw(ctx, set, j) : 0;
	arg->nr_values = n;
}

/*
 * The call chains a PMD asked for: the kernel one first (the write
 * checked that the monitor may see kernel addresses), then the user one.
 */
static void pfm_smpl_callchain(const struct pfm_pmd *pmd, struct pt_regs *regs,
			       struct pfm_ovfl_arg *arg)
{
	arg->callchain = pmd->flags & (PFM_REGFL_CALLCHAIN |
				       PFM_REGFL_KCALLCHAIN);
	arg->nr_kips = 0;
	arg->nr_ips = 0;
	if (pmd->flags & PFM_REGFL_KCALLCHAIN)
		arg->nr_kips = pfm_kernel_callchain(regs, arg->ips,
						    PFM_MAX_KCALLCHAIN);
	arg->nr_ips = arg->nr_kips;
	if (pmd->flags & PFM_REGFL_CALLCHAIN)
		arg->nr_ips += pfm_user_callchain(regs, arg->ips + arg->nr_kips,
						  PFM_MAX_CALLCHAIN -
						  arg->nr_kips);
}

/**
 * pfm_smpl_record() - hand one overflow of PMD @i to the format
 * @ctx: the context, locked, live on this CPU, with a buffer
 * @set: its active set
 * @i: the PMD that overflowed (its 64-bit value carried, not reset yet)
 * @ip: instruction pointer at the interrupt, or 0
 * @regs: registers at the interrupt, or NULL (the call chain's start)
 * @tstamp: CLOCK_MONOTONIC of the overflow
 *
 * Context: interrupts disabled.
 * Return: the format's PFM_FMT_* bits.
 */
u32 pfm_smpl_record(struct pfm_context *ctx, struct pfm_event_set *set,
		    unsigned int i, u64 ip, struct pt_regs *regs, u64 tstamp)
	__must_hold(&ctx->lock)
{
	struct pfm_smpl *smpl = container_of(ctx->smpl, struct pfm_smpl, buf);
	struct pfm_ovfl_arg *arg = &smpl->arg;
	struct pfm_pmd *pmd = &set->pmds[i];

	lockdep_assert_held(&ctx->lock);
	arg->ovfl_pmd = i;
	arg->active_set = set->id;
	arg->cpu = smp_processor_id();
	pfm_current_ids(ctx, &arg->pid, &arg->tid);
	arg->ip = ip;
	arg->tstamp = tstamp;
	arg->last_reset_val = pmd->lval;
	arg->eventid = pmd->eventid;
	arg->nr_values = 0;
	if (pfm_smpl_pmds_any(pmd))
		pfm_smpl_values(ctx, set, pmd, arg);
	pfm_smpl_callchain(pmd, regs, arg);
	return ctx->smpl->fmt->handler(ctx->smpl, arg);
}

/**
 * pfm_smpl_set_switch() - tell the format that the context switched sets
 * @ctx: the context, locked
 * @from: set switched out
 * @to: set switched in
 */
void pfm_smpl_set_switch(struct pfm_context *ctx, u16 from, u16 to)
	__must_hold(&ctx->lock)
{
	struct pfm_smpl_buf *buf = ctx->smpl;

	lockdep_assert_held(&ctx->lock);
	if (buf && buf->fmt->set_switch)
		buf->fmt->set_switch(buf, from, to, raw_smp_processor_id(),
				     ktime_get_ns());
}

/**
 * pfm_smpl_area() - where a kernel API context's buffer is
 * @ctx: the context, created
 * @size: out: its size in bytes, 0 without a buffer
 *
 * The buffer lives as long as the context; the kernel API hands it to
 * its caller at creation.
 *
 * Return: its address, or NULL without a buffer.
 */
void *pfm_smpl_area(struct pfm_context *ctx, size_t *size)
{
	*size = ctx->smpl ? ctx->smpl->size : 0;
	return ctx->smpl ? ctx->smpl->addr : NULL;
}

/**
 * pfm_smpl_copy() - hand a byte range of a context's buffer to @fn
 * @ctx: the context, referenced
 * @pos: first byte: an offset in the buffer, or for a ring a free-running
 *       data offset (as data_tail), taken modulo the data area's size
 * @len: bytes; within the buffer, or at most the ring's data area
 * @fn: called with chunks of at most PAGE_SIZE, split at page boundaries
 *      and at the ring's wrap, in order
 * @priv: passed to @fn
 *
 * The bytes are not locked against the writer: copy what the format
 * says is stable (a ring's bytes from tail to head, a stopped context).
 *
 * Context: as @fn allows; no lock held.
 * Return: 0; -ENODEV no buffer; -EOPNOTSUPP the format has no data
 * area; -EINVAL range outside it; else what @fn returned.
 */
int pfm_smpl_copy(struct pfm_context *ctx, u64 pos, size_t len,
		  int (*fn)(void *priv, const void *chunk, size_t len),
		  void *priv)
{
	struct pfm_smpl_buf *buf = ctx->smpl;
	size_t size, off, n;
	void *base;
	bool ring;
	int ret;

	if (!buf)
		return -ENODEV;
	if (!buf->fmt->data_area)
		return -EOPNOTSUPP;
	buf->fmt->data_area(buf, &base, &size, &ring);
	if (ring ? len > size : pos > size || len > size - pos)
		return -EINVAL;
	while (len) {
		off = ring ? pos & (size - 1) : pos;
		n = min3(len, size - off,
			 PAGE_SIZE - offset_in_page(base + off));
		ret = fn(priv, base + off, n);
		if (ret)
			return ret;
		pos += n;
		len -= n;
	}
	return 0;
}

/**
 * pfm_smpl_mmap() - map a context's sampling buffer
 * @ctx: the context
 * @vma: the mapping: offset 0, at most the buffer's size
 *
 * Return: 0; -ENODEV no buffer; -EINVAL bad offset or size, or a private
 * writable mapping; -EPERM writable while the format forbids it.
 */
int pfm_smpl_mmap(struct pfm_context *ctx, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;
	struct pfm_smpl_buf *buf;
	unsigned long flags;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	buf = ctx->smpl;
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	if (!buf)
		return -ENODEV;
	if (vma->vm_pgoff || len > buf->size)
		return -EINVAL;
	if (!(buf->flags & PFM_SMPL_MAP_WRITE)) {
		if (vma->vm_flags & VM_WRITE)
			return -EPERM;
		pfm_vm_flags_clear(vma, VM_MAYWRITE);
	} else if ((vma->vm_flags & VM_WRITE) && !(vma->vm_flags & VM_SHARED)) {
		return -EINVAL;	/* the writes would never reach the buffer */
	}
	return remap_vmalloc_range(vma, buf->addr, 0);
}
