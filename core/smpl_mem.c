// SPDX-License-Identifier: GPL-2.0
/*
 * The memory of sampling buffers: vmalloc'ed pages charged to the
 * creator's RLIMIT_MEMLOCK and to the global smpl_buffer_mem_max, mapped
 * by mmap() of the context file, read in chunks by the kernel API.
 *
 * A mapping holds the context file (vma->vm_file), so the context and
 * its buffer are freed, and uncharged, only once the file is closed and
 * every mapping is gone, whatever the order (munmap or exit).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/sizes.h>
#include <linux/vmalloc.h>
#include <perfmon/compat.h>

#include "perfmon.h"

/* Largest buffer a context may ask for; beyond it is surely a mistake. */
#define PFM_SMPL_MAX_BYTES	SZ_1G

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

/**
 * pfm_smpl_alloc_pages() - allocate and charge the pages of a buffer
 * @buf: the buffer, its format set
 * @arg: the format's argument, which sizes the buffer
 * @charge: charge them to the caller's RLIMIT_MEMLOCK too
 *
 * The pages count against smpl_buffer_mem_max first, then (@charge)
 * against the caller's RLIMIT_MEMLOCK.
 *
 * Context: process context.
 * Return: 0; -EINVAL for a size of 0 or over 1 GiB; -ENOMEM, also over
 * either limit.
 */
int pfm_smpl_alloc_pages(struct pfm_smpl_buf *buf, const void *arg,
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

/**
 * pfm_smpl_free_pages() - undo pfm_smpl_alloc_pages()
 * @buf: the buffer
 *
 * Context: process context.  Pages still mapped stay until unmapped.
 */
void pfm_smpl_free_pages(struct pfm_smpl_buf *buf)
{
	vfree(buf->addr);
	pfm_smpl_uncharge(buf);
	pfm_smpl_mem_unreserve(buf->size);
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
