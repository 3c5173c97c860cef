// SPDX-License-Identifier: GPL-2.0
/*
 * PMC and PMD programming: every entry of an array is checked against
 * the PMU description before any is applied, so a refused entry leaves
 * the context as it was.  The refused entry carries PFM_REG_RETFL_* in
 * its reg_flags.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/lockdep.h>
#include <linux/string.h>

#include "perfmon.h"

/* Is every bit of the PFM_PMD_BV vector @v an implemented PMD? */
static bool pfm_pmd_mask_valid(const struct pfm_pmu *pmu, const u64 *v)
{
	DECLARE_BITMAP(mask, PFM_MAX_PMDS);

	bitmap_from_arr64(mask, v, PFM_MAX_PMDS);
	return bitmap_subset(mask, pmu->impl_pmds, PFM_MAX_PMDS);
}

/* Does trigger mask @m (PMDs 0-63) name counters only? */
static bool pfm_trigger_mask_valid(const struct pfm_pmu *pmu, u64 m)
{
	DECLARE_BITMAP(mask, 64);

	bitmap_from_arr64(mask, &m, 64);
	return bitmap_subset(mask, pmu->cnt_pmds, 64);
}

/*
 * Does the value need a privilege the context's creator lacked?  Only
 * the description knows what its bits count (PFM_PMC_PRIV_*).
 */
static u32 pfm_pmc_priv_check(struct pfm_context *ctx,
			      const struct pfarg_pmc *req)
	__must_hold(&ctx->lock)
{
	const struct pfm_pmu *pmu = ctx->pmu;
	u32 missing;

	if (!pmu->checks->pmc_priv)
		return 0;
	missing = pmu->checks->pmc_priv(pmu->map, req->reg_num, req->reg_value) & ~ctx->priv;
	if (!missing)
		return 0;
	pfm_perm_pmc_refused(req->reg_num, missing);
	return PFM_REG_RETFL_NOPRIV;
}

static u32 pfm_pmc_check(struct pfm_context *ctx, const struct pfarg_pmc *req,
			 struct pfm_event_set **setp)
	__must_hold(&ctx->lock)
{
	const struct pfm_pmu *pmu = ctx->pmu;
	const struct pfm_regmap_desc *d;

	if (memchr_inv(req->reg_reserved2, 0, sizeof(req->reg_reserved2)) ||
	    (req->reg_flags & ~(PFM_REGFL_NO_EMUL64 | PFM_REG_RETFL_MASK)))
		return PFM_REG_RETFL_EFLAGS;
	if (req->reg_num >= pmu->max_pmc ||
	    !test_bit(req->reg_num, pmu->impl_pmcs))
		return PFM_REG_RETFL_NOTAVAIL;
	*setp = pfm_find_set(ctx, req->reg_set);
	if (!*setp)
		return PFM_REG_RETFL_NOSET;
	d = &pmu->map->pmc_desc[req->reg_num];
	if ((req->reg_value ^ d->dfl_val) & d->rsvd_msk)
		return PFM_REG_RETFL_EINVAL;
	if (pmu->checks->pmc_write &&
	    pmu->checks->pmc_write(pmu->map, req->reg_num, req->reg_value))
		return PFM_REG_RETFL_EINVAL;
	return pfm_pmc_priv_check(ctx, req);
}

/*
 * Put the live set's new PMC values on this CPU's PMU: those alone,
 * counting stopped around them, as a switch out and in would leave it.
 * A description whose PMC values bind what its PMD writes then start
 * (pfm_perf: a perf counter, from the PMD's value) asks for the whole
 * set: it is saved here and pfm_run_in_place() reloads it.
 */
static void pfm_pmcs_write_hw(struct pfm_context *ctx,
			      const struct pfarg_pmc *req, unsigned int count)
	__must_hold(&ctx->lock)
{
	const struct pfm_pmu *pmu = ctx->pmu;
	const struct pfm_event_set *set = ctx->active_set;
	unsigned int i;

	if (!pfm_ctx_live_here(ctx))
		return;
	if (pmu->ops->pmc_write_reloads) {
		pfm_ctx_sched_out(ctx);
		return;
	}
	pfm_ctx_halt(ctx);
	for (i = 0; i < count; i++)
		if (req[i].reg_set == set->id)
			pmu->ops->write_pmc(pmu->conf, ctx->vpmu, req[i].reg_num,
					    set->pmcs[req[i].reg_num]);
	pfm_ctx_resume(ctx);
}

/**
 * __pfm_write_pmcs() - program PMCs of event sets
 * @ctx: the context, locked, live here or nowhere
 * @info: the struct pfm_array of struct pfarg_pmc; reg_flags of a
 *        refused entry gets PFM_REG_RETFL_*
 *
 * Return: 0 when every entry was applied; -EINVAL when one was refused
 * (none applied), -EACCES when it was for want of a privilege
 * (PFM_REG_RETFL_NOPRIV, Documentation/security.rst); -EBADFD before
 * PFM_CREATE_CONTEXT.
 */
static int __pfm_write_pmcs(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	const struct pfm_array *arr = info;
	struct pfarg_pmc *req = arr->req;
	unsigned int count = arr->count;
	struct pfm_event_set *set;
	unsigned int i;
	u32 err;
	int ret;

	lockdep_assert_held(&ctx->lock);
	ret = pfm_check_created(ctx);
	if (ret)
		return ret;

	for (i = 0; i < count; i++) {
		err = pfm_pmc_check(ctx, &req[i], &set);
		req[i].reg_flags = (req[i].reg_flags & ~PFM_REG_RETFL_MASK) | err;
		if (err)
			return err == PFM_REG_RETFL_NOPRIV ? -EACCES : -EINVAL;
	}
	for (i = 0; i < count; i++) {
		set = pfm_find_set(ctx, req[i].reg_set);
		set->pmcs[req[i].reg_num] = req[i].reg_value;
		__set_bit(req[i].reg_num, set->used_pmcs);
		__assign_bit(req[i].reg_num, set->no_emul64_pmcs,
			     req[i].reg_flags & PFM_REGFL_NO_EMUL64);
	}
	pfm_pmcs_write_hw(ctx, req, count);
	return 0;
}

/**
 * pfm_write_pmcs() - PFM_WRITE_PMCS: program PMCs of event sets
 * @ctx: the context, not locked
 * @req: the entries, in kernel memory
 * @count: how many, at least 1
 *
 * Runs where the set is live (pfm_run_in_place()), which writes the
 * new values of the live set's PMCs and no other register; then a
 * virtual description follows.
 *
 * Context: process context; may sleep.
 * Return: as __pfm_write_pmcs(), or the description's error.
 */
int pfm_write_pmcs(struct pfm_context *ctx, struct pfarg_pmc *req,
		   unsigned int count)
{
	struct pfm_array arr = { .req = req, .count = count };

	return pfm_vpmu_finish(ctx, pfm_run_in_place(ctx, __pfm_write_pmcs,
						     &arr));
}

static u32 pfm_pmd_check_common(struct pfm_context *ctx,
				const struct pfarg_pmd *req,
				struct pfm_event_set **setp)
	__must_hold(&ctx->lock)
{
	const struct pfm_pmu *pmu = ctx->pmu;

	/*
	 * reg_random_seed: obsolete in perfmon2 v2.8, which ignored it.
	 * reg_freq is checked by writes only: a read keeps it.
	 */
	if (req->reg_reserved2)
		return PFM_REG_RETFL_EFLAGS;
	if (req->reg_num >= pmu->max_pmd ||
	    !test_bit(req->reg_num, pmu->impl_pmds))
		return PFM_REG_RETFL_NOTAVAIL;
	*setp = pfm_find_set(ctx, req->reg_set);
	if (!*setp)
		return PFM_REG_RETFL_NOSET;
	return 0;
}

/*
 * PFM_REGFL_FREQ and reg_freq go together, and the rate asked may not
 * be one the overflow throttle would cut (Documentation/sampling.rst).
 */
static bool pfm_pmd_freq_valid(const struct pfarg_pmd *req)
{
	unsigned int max = READ_ONCE(pfm_max_ovfl_rate);

	if (!(req->reg_flags & PFM_REGFL_FREQ))
		return !req->reg_freq;
	if (!req->reg_freq)
		return false;
	if (max && req->reg_freq > max) {
		pr_info_ratelimited("PMD%u asks %u overflows/s, above max_ovfl_rate (%u): ask fewer, or raise /sys/kernel/perfmon/max_ovfl_rate\n",
				    req->reg_num, req->reg_freq, max);
		return false;
	}
	return true;
}

static u32 pfm_pmd_write_check(struct pfm_context *ctx,
			       const struct pfarg_pmd *req,
			       struct pfm_event_set **setp)
	__must_hold(&ctx->lock)
{
	const struct pfm_pmu *pmu = ctx->pmu;
	const u32 cntr_flags = PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_RANDOM |
			       PFM_REGFL_CALLCHAIN | PFM_REGFL_FREQ |
			       PFM_REGFL_KCALLCHAIN;
	bool is_cntr;
	u32 err;

	if (req->reg_flags & ~(cntr_flags | PFM_REG_RETFL_MASK))
		return PFM_REG_RETFL_EFLAGS;
	err = pfm_pmd_check_common(ctx, req, setp);
	if (err)
		return err;
	if (pmu->map->pmd_desc[req->reg_num].type & PFM_REGT_RO)
		return PFM_REG_RETFL_NOTAVAIL;

	/* Overflow attributes only make sense on a counter. */
	is_cntr = test_bit(req->reg_num, pmu->cnt_pmds);
	if (!is_cntr && ((req->reg_flags & cntr_flags) ||
			 req->reg_ovfl_switch_cnt || req->reg_random_mask ||
			 req->reg_start_pmds || req->reg_stop_pmds))
		return PFM_REG_RETFL_EINVAL;
	if (!pfm_pmd_freq_valid(req))
		return PFM_REG_RETFL_EINVAL;
	if ((req->reg_flags & PFM_REGFL_KCALLCHAIN) && !ctx->kernel_ips) {
		pr_info_ratelimited("PMD%u: kernel call chains show kernel addresses: the context's creator needs CAP_PERFMON, or /sys/kernel/perfmon/paranoid at 1 or below, when it creates the context\n",
				    req->reg_num);
		return PFM_REG_RETFL_NOPRIV;
	}
	if (!pfm_trigger_mask_valid(pmu, req->reg_start_pmds) ||
	    !pfm_trigger_mask_valid(pmu, req->reg_stop_pmds))
		return PFM_REG_RETFL_EINVAL;
	if (!pfm_pmd_mask_valid(pmu, req->reg_reset_pmds) ||
	    !pfm_pmd_mask_valid(pmu, req->reg_smpl_pmds))
		return PFM_REG_RETFL_EINVAL;
	return 0;
}

static void pfm_pmd_apply(struct pfm_event_set *set, const struct pfarg_pmd *req)
{
	struct pfm_pmd *pmd = &set->pmds[req->reg_num];

	pmd->value = req->reg_value;
	pmd->lval = req->reg_value;
	pmd->long_reset = req->reg_long_reset;
	pmd->short_reset = req->reg_short_reset;
	memcpy(pmd->reset_pmds, req->reg_reset_pmds, sizeof(pmd->reset_pmds));
	memcpy(pmd->smpl_pmds, req->reg_smpl_pmds, sizeof(pmd->smpl_pmds));
	pmd->eventid = req->reg_smpl_eventid;
	pmd->random_mask = req->reg_random_mask;
	pmd->ovflsw_thres = req->reg_ovfl_switch_cnt;
	pmd->ovflsw_left = req->reg_ovfl_switch_cnt;
	pmd->start_pmds = req->reg_start_pmds;
	pmd->stop_pmds = req->reg_stop_pmds;
	pmd->flags = req->reg_flags & ~PFM_REG_RETFL_MASK;
	pmd->freq = req->reg_freq;
	pmd->freq_stamp = 0;
	pmd->freq_events = 0;
	pmd->freq_settled = false;
	pmd->freq_high = false;
	__set_bit(req->reg_num, set->used_pmds);
}

/**
 * __pfm_write_pmds() - set PMD values and overflow attributes
 * @ctx: the context, locked, saved
 * @info: the struct pfm_array of struct pfarg_pmd; reg_flags of a
 *        refused entry gets PFM_REG_RETFL_*
 *
 * Return: as __pfm_write_pmcs().
 */
static int __pfm_write_pmds(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	const struct pfm_array *arr = info;
	struct pfarg_pmd *req = arr->req;
	unsigned int count = arr->count;
	struct pfm_event_set *set;
	unsigned int i;
	u32 err;
	int ret;

	lockdep_assert_held(&ctx->lock);
	ret = pfm_check_created(ctx);
	if (ret)
		return ret;

	for (i = 0; i < count; i++) {
		err = pfm_pmd_write_check(ctx, &req[i], &set);
		req[i].reg_flags = (req[i].reg_flags & ~PFM_REG_RETFL_MASK) | err;
		if (err)
			return err == PFM_REG_RETFL_NOPRIV ? -EACCES : -EINVAL;
	}
	for (i = 0; i < count; i++) {
		set = pfm_find_set(ctx, req[i].reg_set);
		pfm_pmd_apply(set, &req[i]);
		/* Once per run of entries of one set, after its last one. */
		if (i + 1 == count || req[i + 1].reg_set != req[i].reg_set)
			pfm_rearm_triggers(ctx, set);
	}
	return 0;
}

/**
 * pfm_write_pmds() - PFM_WRITE_PMDS: set PMD values and overflow
 * attributes
 * @ctx: the context, not locked
 * @req: the entries, in kernel memory
 * @count: how many, at least 1
 *
 * As pfm_write_pmcs(): on the set saved, then a virtual description's
 * sync.
 *
 * Context: process context; may sleep.
 * Return: as __pfm_write_pmds(), or the description's error.
 */
int pfm_write_pmds(struct pfm_context *ctx, struct pfarg_pmd *req,
		   unsigned int count)
{
	struct pfm_array arr = { .req = req, .count = count };

	return pfm_vpmu_finish(ctx, pfm_run(ctx, __pfm_write_pmds, &arr));
}

/* PMD @i of @set now: from the PMU while live here, else as saved. */
static u64 pfm_pmd_value(struct pfm_context *ctx, struct pfm_event_set *set,
			 unsigned int i)
	__must_hold(&ctx->lock)
{
	if (set == ctx->active_set && pfm_ctx_live_here(ctx))
		return pfm_pmd_read_hw(ctx, set, i);
	return set->pmds[i].value;
}

/**
 * __pfm_read_pmds() - read PMD values
 * @ctx: the context, locked, live here or saved (an in-place call)
 * @info: the struct pfm_array of struct pfarg_pmd; each valid entry gets
 *        reg_value (64-bit), reg_last_reset_val and reg_ovfl_switch_cnt
 *        (overflows left)
 *
 * A PMD that was never written in its set is refused with
 * PFM_REG_RETFL_UNUSED: its value would mean nothing.
 *
 * Return: 0; -EINVAL when an entry was refused (the others are still
 * answered); -EBADFD before PFM_CREATE_CONTEXT.
 */
static int __pfm_read_pmds(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	const struct pfm_array *arr = info;
	struct pfarg_pmd *req = arr->req;
	unsigned int count = arr->count;
	struct pfm_event_set *set;
	struct pfm_pmd *pmd;
	unsigned int i;
	int ret;
	u32 err;

	lockdep_assert_held(&ctx->lock);
	ret = pfm_check_created(ctx);
	if (ret)
		return ret;

	/*
	 * Input flags are ignored and kept, as perfmon2 v2.8 did: its
	 * programs read into the array they wrote, then write it again.
	 */
	for (i = 0; i < count; i++) {
		err = pfm_pmd_check_common(ctx, &req[i], &set);
		if (!err && !test_bit(req[i].reg_num, set->used_pmds))
			err = PFM_REG_RETFL_UNUSED;
		req[i].reg_flags = (req[i].reg_flags & ~PFM_REG_RETFL_MASK) | err;
		if (err) {
			ret = -EINVAL;
			continue;
		}
		pmd = &set->pmds[req[i].reg_num];
		req[i].reg_value = pfm_pmd_value(ctx, set, req[i].reg_num);
		req[i].reg_last_reset_val = pmd->lval;
		req[i].reg_ovfl_switch_cnt = pmd->ovflsw_left;
	}
	return ret;
}

/**
 * pfm_read_pmds() - PFM_READ_PMDS: read PMD values
 * @ctx: the context, not locked
 * @req: the entries, in kernel memory
 * @count: how many, at least 1
 *
 * In place: the live set is read where it counts, not saved.
 *
 * Context: process context.
 * Return: as __pfm_read_pmds().
 */
int pfm_read_pmds(struct pfm_context *ctx, struct pfarg_pmd *req,
		  unsigned int count)
{
	struct pfm_array arr = { .req = req, .count = count };

	return pfm_run_in_place(ctx, __pfm_read_pmds, &arr);
}
