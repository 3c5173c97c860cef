// SPDX-License-Identifier: GPL-2.0
/*
 * mmap() of PFM_USER_PAGE_OFFSET: a per-thread context's control page
 * (core/upage.c) allocated at the first mapping and installed under
 * ctx->lock where the context is live, then mapped read-only.  A call
 * of the front end's, run as the others are (pfm_run_in_place()), apart
 * from the page's contents, which the context switch rewrites.
 */
#include <linux/gfp.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <perfmon/compat.h>

#include "perfmon.h"
#include "upage.h"

/* Install the page @info as the context's page, in place. */
static int pfm_upage_install(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	struct pfm_user_page *pg = info;

	BUILD_BUG_ON(sizeof(*pg) > PAGE_SIZE);
	lockdep_assert_held(&ctx->lock);
	if (ctx->state == PFM_CTX_NEW)
		return -EBADFD;
	if (pfm_ctx_is_system(ctx))
		return -EINVAL;
	if (ctx->upage)
		return 1;	/* mapped before: @pg is not needed */
	pg->version = PFM_USER_PAGE_VERSION;
	pg->width = fls64(ctx->pmu->ovfl_mask);
	pg->num_pmds = min_t(u16, ctx->pmu->max_pmd, PFM_USER_PAGE_PMDS);
	ctx->upage = pg;
	pfm_upage_update(ctx);
	return 0;
}

/**
 * pfm_upage_mmap() - map a per-thread context's control page
 * @ctx: the context
 * @vma: the mapping: one page at PFM_USER_PAGE_OFFSET, not writable
 *
 * Context: process context (mmap_lock held for writing).
 * Return: 0; -EBADFD before PFM_CREATE_CONTEXT; -EINVAL a system-wide
 * context (any thread on its CPU could use the page) or not one page;
 * -EPERM writable; -ENOMEM.
 */
int pfm_upage_mmap(struct pfm_context *ctx, struct vm_area_struct *vma)
{
	unsigned long addr;
	int ret;

	if (vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	pfm_vm_flags_clear(vma, VM_MAYWRITE);
	pfm_vm_flags_set(vma, VM_DONTEXPAND);
	addr = get_zeroed_page(GFP_KERNEL_ACCOUNT);
	if (!addr)
		return -ENOMEM;
	ret = pfm_run_in_place(ctx, pfm_upage_install, (void *)addr);
	if (ret) {
		free_page(addr);
		if (ret < 0)
			return ret;
	}
	/* Set once, never changed until the context is freed. */
	return vm_insert_page(vma, vma->vm_start,
			      virt_to_page(READ_ONCE(ctx->upage)));
}
