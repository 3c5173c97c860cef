// SPDX-License-Identifier: GPL-2.0
/*
 * PFM_READ_VALUES: the call a monitor polls a counting context with,
 * 8 bytes per PMD, read at once under the lock where the set is live
 * here or nowhere, by IPI only where it is live on another CPU.  The
 * full reads (PFM_READ_PMDS, an entry per PMD) are in regs.c.
 */
#include <linux/bitops.h>
#include <linux/lockdep.h>

#include "perfmon.h"

/*
 * Are PMDs @first + n, for each bit n of @pmds, all used in @set?  One
 * 64-bit window of the bitmap, not a test per PMD.  Bits past the
 * bitmap's end read as unused.
 */
static __always_inline bool pfm_pmds_used(const struct pfm_event_set *set,
					  unsigned int first, u64 pmds)
{
	const unsigned long *map = set->used_pmds;
	unsigned int w = first / 64, b = first % 64;
	u64 bits;

	if (first >= PFM_MAX_PMDS)
		return false;
	if (!IS_ENABLED(CONFIG_64BIT)) {
		for (; pmds; pmds &= pmds - 1)
			if (!test_bit(first + __ffs64(pmds), map))
				return false;
		return true;
	}
	bits = map[w] >> b;
	if (b && w + 1 < BITS_TO_LONGS(PFM_MAX_PMDS))
		bits |= (u64)map[w + 1] << (64 - b);
	return !(pmds & ~bits);
}

/*
 * PFM_READ_VALUES' read, inline in pfm_read_values(), the monitor's
 * polling call, and in its run by IPI:
 * the active set is looked up first, the PMDs checked in one pass, and
 * whether the set is live here is known (@here: the context is live on
 * this CPU), not asked per PMD.
 */
static __always_inline int pfm_values_read(struct pfm_context *ctx,
					   struct pfm_values *v, bool here)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *set = ctx->active_set;
	unsigned int first = v->first, n = 0;
	u64 *vals = v->vals;
	u64 left;

	lockdep_assert_held(&ctx->lock);
	if (unlikely(ctx->state == PFM_CTX_NEW))
		return -EBADFD;
	if (unlikely(!set || set->id != v->set)) {
		set = pfm_find_set(ctx, v->set);
		if (!set)
			return -EINVAL;
		here = false;	/* only the active set is ever live */
	}
	/* Every PMD is checked before any value is written. */
	if (first >= ctx->pmu->max_pmd || !pfm_pmds_used(set, first, v->pmds))
		return -EINVAL;
	if (here) {
		for (left = v->pmds; left; left &= left - 1)
			vals[n++] = pfm_pmd_read_hw(ctx, set,
						    first + __ffs64(left));
	} else {
		/* Off the live path: a native read must not pay for it. */
		if (ctx->hw_unsaved && set == ctx->active_set)
			pfm_ctx_pull(ctx);
		for (left = v->pmds; left; left &= left - 1)
			vals[n++] = set->pmds[first + __ffs64(left)].value;
	}
	v->nr = n;
	return 0;
}

/*
 * PFM_READ_VALUES of a context live on another CPU, there by IPI: what
 * follows in place, on the CPU where the set is live.
 */
static int __pfm_read_values(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	return pfm_values_read(ctx, info, pfm_ctx_live_here(ctx));
}

static noinline int pfm_read_values_there(struct pfm_context *ctx,
					  struct pfm_values *v)
{
	return pfm_run_in_place(ctx, __pfm_read_values, v);
}

/**
 * pfm_read_values() - PFM_READ_VALUES: read PMD values, 8 bytes each
 * @ctx: the context, not locked
 * @v: the set, the PMDs (PMD first + n for each bit n of pmds) and
 *     where their values go, lowest PMD first; nr, out: how many
 *
 * PFM_READ_PMDS for a monitor that only wants the counts, and polls:
 * where the set is live on this CPU or nowhere (a thread reading
 * itself, a saved context), the read runs at once under the lock with
 * interrupts off, as pfm_run_in_place() would run it.  Live on another
 * CPU, it goes there by IPI.  Without per-entry flags to say which PMD
 * was refused, any refusal refuses the call; PFM_READ_PMDS tells which
 * and why.
 *
 * Context: process context, no lock held.
 * Return: 0; -EINVAL no such set, or a PMD not used in it (never
 * written, not implemented, beyond the PMU's); -EBADFD before
 * PFM_CREATE_CONTEXT.
 */
int pfm_read_values(struct pfm_context *ctx, struct pfm_values *v)
{
	unsigned long flags;
	bool here, there;
	int ret = 0;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	here = pfm_ctx_live_here(ctx);
	there = !here && ctx->live_cpu >= 0;
	if (likely(!there))
		ret = pfm_values_read(ctx, v, here);
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	if (likely(!there))
		return ret;
	return pfm_read_values_there(ctx, v);
}
