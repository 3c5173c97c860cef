// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling formats and buffers: the formats registered by name, a
 * context's buffer made and freed with its format (its pages are
 * core/smpl_mem.c's), and the calls into the format from the overflow
 * path.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kmod.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "perfmon.h"

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
