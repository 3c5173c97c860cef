// SPDX-License-Identifier: GPL-2.0
/*
 * The event-set calls: creation, deletion, information
 * (switching between sets is set_switch.c's).
 *
 * Bounds: what walks the sets, under ctx->lock with interrupts off, is
 * the lookup of each set an array call names (register writes and
 * reads, the event-set calls, load and start): pfm_sets_per_ctx_max
 * bounds it, at most that many steps per entry.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/lockdep.h>
#include <linux/slab.h>

#include "perfmon.h"

/* Shortest switch timeout: below it, switching would be all we do. */
#define PFM_MIN_SWITCH_NS	(100 * NSEC_PER_USEC)

/*
 * Sets a context may hold (/sys/kernel/perfmon/sets_per_ctx_max).  64 is
 * what pfmon multiplexes at most; with PFM_MAX_ARRAY entries a call then
 * walks at most 65536 list entries with interrupts off.
 */
unsigned int pfm_sets_per_ctx_max = 64;

static u32 pfm_setdesc_check(const struct pfarg_setdesc *d)
{
	const u32 known = PFM_SETFL_OVFL_SWITCH | PFM_SETFL_TIME_SWITCH;

	if (d->set_reserved1 ||
	    memchr_inv(d->reserved, 0, sizeof(d->reserved)) ||
	    (d->set_flags & ~(known | PFM_REG_RETFL_MASK)))
		return PFM_REG_RETFL_EFLAGS;
	if ((d->set_flags & PFM_SETFL_TIME_SWITCH) && !d->set_timeout)
		return PFM_REG_RETFL_EINVAL;
	/* One reason to switch, as perfmon2 v2.8 required. */
	if ((d->set_flags & known) == known)
		return PFM_REG_RETFL_EINVAL;
	return 0;
}

/* Was set @id already named in req[0..i-1]? */
static bool pfm_setdesc_dup(const struct pfarg_setdesc *req, unsigned int i)
{
	unsigned int j;

	for (j = 0; j < i; j++)
		if (req[j].set_id == req[i].set_id)
			return true;
	return false;
}

/* The timeout in effect: at least PFM_MIN_SWITCH_NS, in timer units. */
static u64 pfm_effective_timeout(u64 ns)
{
	u64 res = hrtimer_resolution;

	ns = max_t(u64, ns, PFM_MIN_SWITCH_NS);
	return DIV_ROUND_UP_ULL(ns, res) * res;
}

/* Insert @set in id order. */
static void pfm_set_insert(struct pfm_context *ctx, struct pfm_event_set *set)
{
	struct pfm_event_set *pos;

	list_for_each_entry(pos, &ctx->sets, list) {
		if (pos->id > set->id) {
			list_add_tail(&set->list, &pos->list);
			return;
		}
	}
	list_add_tail(&set->list, &ctx->sets);
}

/* One line per burst: which knob lets the caller create more sets. */
static void pfm_sets_refused(unsigned int max)
{
	pr_info_ratelimited("a context may hold %u event sets: CAP_SYS_ADMIN may raise /sys/kernel/perfmon/sets_per_ctx_max\n",
			    max);
}

/*
 * Check a creation's entries (a refused one gets its flag) and the
 * bound on sets; *@n gets the number of sets to create.
 */
static int pfm_setdescs_check(struct pfm_context *ctx,
			      struct pfarg_setdesc *req, unsigned int count,
			      unsigned int *n)
	__must_hold(&ctx->lock)
{
	unsigned int i, max;
	u32 err;
	int ret;

	ret = pfm_check_created(ctx);
	if (ret)
		return ret;
	for (i = 0; i < count; i++) {
		err = pfm_setdesc_check(&req[i]);
		if (!err && pfm_setdesc_dup(req, i))
			err = PFM_REG_RETFL_DUP;
		req[i].set_flags = (req[i].set_flags & ~PFM_REG_RETFL_MASK) |
				   err;
		if (err)
			return -EINVAL;
		*n += !pfm_find_set(ctx, req[i].set_id);
	}
	/* Lowering the knob leaves the sets a context holds. */
	max = READ_ONCE(pfm_sets_per_ctx_max);
	if (*n > max - min(ctx->nr_sets, max)) {
		pfm_sets_refused(max);
		return -ENOSPC;
	}
	return 0;
}

/*
 * Runs of PFM_CREATE_EVTSETS while a concurrent deletion of a set it
 * names leaves too few sets prepared.
 */
#define PFM_CREATE_EVTSETS_TRIES	16

/* A PFM_CREATE_EVTSETS: its entries and the sets prepared for it. */
struct pfm_spares {
	struct pfm_array arr;
	struct pfm_event_set **set;	/* ends with a NULL entry */
	unsigned int n;
};

/*
 * Sets named by @req that do not exist yet (a hint: rechecked under the
 * lock), and in *@priv the privileges their default PMC values follow.
 */
static unsigned int pfm_count_new_sets(struct pfm_context *ctx,
				       const struct pfarg_setdesc *req,
				       unsigned int count, u32 *priv)
{
	unsigned long flags;
	unsigned int i, n = 0;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	*priv = ctx->priv;
	if (ctx->state != PFM_CTX_NEW)
		for (i = 0; i < count; i++)
			n += !pfm_find_set(ctx, req[i].set_id);
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	return n;
}

/* Free the prepared sets the core did not take. */
static void pfm_spares_free(struct pfm_spares *sp)
{
	while (sp->n--)
		if (sp->set[sp->n])
			pfm_event_set_free(sp->set[sp->n]);
	kfree(sp->set);
	sp->set = NULL;
	sp->n = 0;
}

/**
 * pfm_spares_alloc() - allocate the sets a creation needs
 * @ctx: the context, not locked
 * @sp: the call; the sets out, freed by pfm_spares_free(), also on
 *      failure
 *
 * Sets are allocated before the lock is taken, then the core takes what
 * it needs.  A concurrent deletion of a set @sp names makes the guess
 * short: then __pfm_create_evtsets() asks for another try.
 *
 * Context: process context; may sleep.
 * Return: 0 or -ENOMEM.
 */
static int pfm_spares_alloc(struct pfm_context *ctx, struct pfm_spares *sp)
{
	unsigned int n;
	u32 priv;

	n = pfm_count_new_sets(ctx, sp->arr.req, sp->arr.count, &priv);
	sp->set = kcalloc(n + 1, sizeof(*sp->set), GFP_KERNEL);
	if (!sp->set)
		return -ENOMEM;
	for (sp->n = 0; sp->n < n; sp->n++) {
		sp->set[sp->n] = pfm_event_set_alloc(ctx->pmu, 0, priv);
		if (!sp->set[sp->n])
			return -ENOMEM;
	}
	return 0;
}

/**
 * __pfm_create_evtsets() - create event sets, or change existing ones
 * @ctx: the context, locked, saved
 * @info: the struct pfm_spares: the descriptions (set_timeout comes back
 *        as the effective one), and the sets prepared for the ids that
 *        do not exist (pfm_spares_alloc()): those used are taken
 *
 * The new sets, with those the context holds, may not exceed
 * pfm_sets_per_ctx_max: otherwise none is created.
 *
 * Return: 0; -EINVAL with an entry's set_flags marked; -ENOSPC past
 * pfm_sets_per_ctx_max; -EAGAIN when too few sets were prepared (a
 * concurrent call deleted sets meanwhile: pfm_create_evtsets() prepares
 * again);
 * -EBADFD before PFM_CREATE_CONTEXT.
 */
static int __pfm_create_evtsets(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	struct pfm_spares *sp = info;
	struct pfm_event_set **spare = sp->set;
	struct pfarg_setdesc *req = sp->arr.req;
	unsigned int count = sp->arr.count;
	struct pfm_event_set *set;
	unsigned int i, n = 0;
	int ret;

	lockdep_assert_held(&ctx->lock);
	ret = pfm_setdescs_check(ctx, req, count, &n);
	if (ret)
		return ret;
	/* @spare ends with a NULL entry: this stops there at the latest. */
	for (i = 0; i < n; i++)
		if (!spare[i])
			return -EAGAIN;
	n = 0;
	for (i = 0; i < count; i++) {
		set = pfm_find_set(ctx, req[i].set_id);
		if (!set) {
			set = spare[n];
			spare[n++] = NULL;
			set->id = req[i].set_id;
			pfm_set_insert(ctx, set);
			ctx->nr_sets++;
		}
		set->flags = req[i].set_flags;
		set->timeout = 0;
		if (set->flags & PFM_SETFL_TIME_SWITCH)
			set->timeout = pfm_effective_timeout(req[i].set_timeout);
		set->timeleft = set->timeout;
		req[i].set_timeout = set->timeout;
	}
	return 0;
}

/**
 * pfm_create_evtsets() - PFM_CREATE_EVTSETS: create event sets, or
 * change existing ones
 * @ctx: the context, not locked
 * @req: the descriptions, in kernel memory
 * @count: how many, at least 1
 *
 * The new sets are allocated first, unlocked; the commit, on the set
 * saved, takes those it needs.  A concurrent deletion of a set @req
 * names leaves too few prepared: prepare again, PFM_CREATE_EVTSETS_TRIES
 * times in all.  Then a virtual description follows the sets.
 *
 * Context: process context; may sleep.
 * Return: as __pfm_create_evtsets(), -ENOMEM, or the description's
 * error.
 */
int pfm_create_evtsets(struct pfm_context *ctx, struct pfarg_setdesc *req,
		       unsigned int count)
{
	struct pfm_spares sp = { .arr = { .req = req, .count = count } };
	unsigned int tries = 0;
	int ret;

	do {
		ret = pfm_spares_alloc(ctx, &sp);
		if (!ret)
			ret = pfm_run(ctx, __pfm_create_evtsets, &sp);
		pfm_spares_free(&sp);
	} while (ret == -EAGAIN && ++tries < PFM_CREATE_EVTSETS_TRIES);
	return pfm_vpmu_finish(ctx, ret);
}

/**
 * __pfm_delete_evtsets() - delete event sets
 * @ctx: the context, locked, saved
 * @info: the struct pfm_array of struct pfarg_setdesc: the sets; an
 *        entry refused gets PFM_REG_RETFL_* in set_flags
 *
 * Set 0 cannot be deleted (PFM_REG_RETFL_EINVAL), nor the active set of
 * a loaded context (-EBUSY).  Deleted sets move to ctx->dead_sets, which
 * pfm_delete_evtsets() frees with pfm_free_dead_sets() after unlocking.
 *
 * Return: 0, -EINVAL, -EBUSY, -EBADFD.
 */
static int __pfm_delete_evtsets(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	const struct pfm_array *arr = info;
	struct pfarg_setdesc *req = arr->req;
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
		set = pfm_find_set(ctx, req[i].set_id);
		err = 0;
		if (req[i].set_reserved1 || req[i].set_timeout ||
		    memchr_inv(req[i].reserved, 0, sizeof(req[i].reserved)) ||
		    (req[i].set_flags & ~PFM_REG_RETFL_MASK))
			err = PFM_REG_RETFL_EFLAGS;
		else if (!set)
			err = PFM_REG_RETFL_NOSET;
		else if (!req[i].set_id)
			err = PFM_REG_RETFL_EINVAL;
		else if (pfm_setdesc_dup(req, i))
			err = PFM_REG_RETFL_DUP;
		req[i].set_flags = err;
		if (err)
			return -EINVAL;
		if (set == ctx->active_set && ctx->state != PFM_CTX_UNLOADED)
			return -EBUSY;
	}
	for (i = 0; i < count; i++) {
		set = pfm_find_set(ctx, req[i].set_id);
		if (set == ctx->active_set)
			ctx->active_set = list_first_entry(&ctx->sets,
							   struct pfm_event_set,
							   list);
		list_move(&set->list, &ctx->dead_sets);
		ctx->nr_sets--;
		ctx->sets_duration -= set->duration;
	}
	return 0;
}

/**
 * pfm_delete_evtsets() - PFM_DELETE_EVTSETS: delete event sets
 * @ctx: the context, not locked
 * @req: the sets, in kernel memory
 * @count: how many, at least 1
 *
 * On the set saved; the sets unlinked are freed after, unlocked, and a
 * virtual description follows.
 *
 * Context: process context; may sleep.
 * Return: as __pfm_delete_evtsets(), or the description's error.
 */
int pfm_delete_evtsets(struct pfm_context *ctx, struct pfarg_setdesc *req,
		       unsigned int count)
{
	struct pfm_array arr = { .req = req, .count = count };
	int ret;

	ret = pfm_run(ctx, __pfm_delete_evtsets, &arr);
	pfm_free_dead_sets(ctx);
	return pfm_vpmu_finish(ctx, ret);
}

/**
 * __pfm_getinfo_evtsets() - describe event sets
 * @ctx: the context, locked, saved
 * @info: the struct pfm_array of struct pfarg_setinfo: set_id in; the
 *        rest out (an unknown set gets PFM_REG_RETFL_NOSET)
 *
 * Return: 0, -EINVAL when an entry was refused (the others are answered),
 * -EBADFD before PFM_CREATE_CONTEXT.
 */
static int __pfm_getinfo_evtsets(struct pfm_context *ctx, void *info)
	__must_hold(&ctx->lock)
{
	const struct pfm_array *arr = info;
	struct pfarg_setinfo *req = arr->req;
	unsigned int count = arr->count;
	const struct pfm_pmu *pmu = ctx->pmu;
	struct pfm_event_set *set;
	struct pfarg_setinfo *r;
	unsigned int i;
	int ret;

	lockdep_assert_held(&ctx->lock);
	ret = pfm_check_created(ctx);
	if (ret)
		return ret;
	for (i = 0; i < count; i++) {
		r = &req[i];
		set = pfm_find_set(ctx, r->set_id);
		/*
		 * Of the fields it writes, v2.8 reads only set_id: an entry
		 * that still holds an earlier call's answer (set_flags
		 * among them) is asked again as it is.  The reserved fields
		 * are never written, so they must still be zero.
		 */
		if (r->set_reserved1 ||
		    memchr_inv(r->set_reserved3, 0, sizeof(r->set_reserved3))) {
			r->set_flags = PFM_REG_RETFL_EFLAGS;
			ret = -EINVAL;
			continue;
		}
		if (!set) {
			r->set_flags = PFM_REG_RETFL_NOSET;
			ret = -EINVAL;
			continue;
		}
		r->set_flags = set->flags;
		bitmap_to_arr64(r->set_ovfl_pmds, set->ovfl_pmds, PFM_MAX_PMDS);
		r->set_runs = set->runs;
		r->set_timeout = set == ctx->active_set ? set->timeleft :
							  set->timeout;
		r->set_act_duration = set->duration;
		bitmap_to_arr64(r->set_avail_pmcs, pmu->impl_pmcs, PFM_MAX_PMCS);
		bitmap_to_arr64(r->set_avail_pmds, pmu->impl_pmds, PFM_MAX_PMDS);
	}
	return ret;
}

/**
 * pfm_getinfo_evtsets() - PFM_GETINFO_EVTSETS: describe event sets
 * @ctx: the context, not locked
 * @req: the sets, in kernel memory
 * @count: how many, at least 1
 *
 * On the set saved: its run counts and time left are then up to date.
 *
 * Context: process context.
 * Return: as __pfm_getinfo_evtsets().
 */
int pfm_getinfo_evtsets(struct pfm_context *ctx, struct pfarg_setinfo *req,
			unsigned int count)
{
	struct pfm_array arr = { .req = req, .count = count };

	return pfm_run(ctx, __pfm_getinfo_evtsets, &arr);
}
