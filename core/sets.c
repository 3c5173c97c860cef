// SPDX-License-Identifier: GPL-2.0
/*
 * Event sets: creation, deletion, information, and switching (round
 * robin by increasing id) on a timeout or after a number of overflows.
 *
 * The switch timer is a per-context hrtimer pinned to the CPU where the
 * set is live: it runs only while the set counts there, so a set's
 * timeout is measured in time it actually counted (for a thread, its
 * running time).  Stopping it never waits for a running callback (the
 * callback takes ctx->lock, which the stopper holds): a late callback
 * finds the context no longer live on its CPU and does nothing.
 *
 * Bounds: switching (timer, overflow, restart) and the context switch
 * touch the active set and the next one only, never walk ctx->sets:
 * the next set is the list successor, the control page's total time is
 * kept in ctx->sets_duration.  What does walk the sets, under ctx->lock
 * with interrupts off, is the lookup of each set an array call names
 * (register writes and reads, the event-set calls, load and start):
 * pfm_sets_per_ctx_max bounds it, at most that many steps per entry.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/lockdep.h>
#include <linux/sched/clock.h>
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

/* Longest ctx->lock section of a switch timer or an overflow, in ns. */
static atomic64_t pfm_irqoff_max = ATOMIC64_INIT(0);

/**
 * pfm_irqoff_note() - account an interrupts-off section of the switch path
 * @since: local_clock() before its lock was taken
 *
 * Keeps the longest for /sys/kernel/perfmon/switch_irqoff_max_ns.
 *
 * Context: interrupts disabled.
 */
void pfm_irqoff_note(u64 since)
{
	s64 d = local_clock() - since;
	s64 old = atomic64_read(&pfm_irqoff_max);

	while (d > old && !atomic64_try_cmpxchg(&pfm_irqoff_max, &old, d))
		;
}

/* The longest section noted since load or the last reset. */
u64 pfm_irqoff_max_ns(void)
{
	return atomic64_read(&pfm_irqoff_max);
}

void pfm_irqoff_reset(void)
{
	atomic64_set(&pfm_irqoff_max, 0);
}

/* Is there a set other than the active one to switch to? */
bool pfm_has_other_set(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	return !list_is_singular(&ctx->sets);
}

/**
 * pfm_free_dead_sets() - free the sets __pfm_delete_evtsets() unlinked
 * @ctx: the context, not locked
 */
void pfm_free_dead_sets(struct pfm_context *ctx)
{
	struct pfm_event_set *set, *tmp;
	unsigned long flags;
	LIST_HEAD(dead);

	raw_spin_lock_irqsave(&ctx->lock, flags);
	list_splice_init(&ctx->dead_sets, &dead);
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	list_for_each_entry_safe(set, tmp, &dead, list)
		pfm_event_set_free(set);
}

static enum hrtimer_restart pfm_switch_timer_fn(struct hrtimer *timer)
{
	struct pfm_context *ctx = container_of(timer, struct pfm_context,
					       switch_timer);
	u64 t0 = local_clock();

	raw_spin_lock(&ctx->lock);
	if (ctx->live_cpu == smp_processor_id() && ctx->counting)
		pfm_switch_sets(ctx);
	raw_spin_unlock(&ctx->lock);
	pfm_irqoff_note(t0);
	return HRTIMER_NORESTART;
}

void pfm_switch_timer_init(struct pfm_context *ctx)
{
	hrtimer_init(&ctx->switch_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL_PINNED_HARD);
	ctx->switch_timer.function = pfm_switch_timer_fn;
}

/**
 * pfm_switch_timer_start() - arm the switch timer for the active set
 * @ctx: the context, locked, counting on this CPU
 */
void pfm_switch_timer_start(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *set = ctx->active_set;

	lockdep_assert_held(&ctx->lock);
	if (!(set->flags & PFM_SETFL_TIME_SWITCH) || !pfm_has_other_set(ctx))
		return;
	hrtimer_start(&ctx->switch_timer, ns_to_ktime(set->timeleft),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/**
 * pfm_switch_timer_stop() - disarm it, keeping the time left in the set
 * @ctx: the context, locked, counting on this CPU
 */
void pfm_switch_timer_stop(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *set = ctx->active_set;
	s64 left;

	lockdep_assert_held(&ctx->lock);
	if (!hrtimer_is_queued(&ctx->switch_timer))
		return;
	left = ktime_to_ns(hrtimer_get_remaining(&ctx->switch_timer));
	hrtimer_try_to_cancel(&ctx->switch_timer);
	/* Expired but not yet run: switch as soon as the set counts again. */
	set->timeleft = max_t(s64, left, 1);
}

/* Make @set the active set: counted as a run, with a full timeout. */
void pfm_set_activate(struct pfm_context *ctx, struct pfm_event_set *set)
	__must_hold(&ctx->lock)
{
	unsigned int i;

	ctx->active_set = set;
	set->runs++;
	set->timeleft = set->timeout;
	for_each_set_bit(i, set->used_pmds, ctx->pmu->max_pmd)
		set->pmds[i].ovflsw_left = set->pmds[i].ovflsw_thres;
}

/**
 * pfm_switch_sets() - switch a counting context to its next set
 * @ctx: the context, locked, live on this CPU
 *
 * Context: interrupts disabled, on the live CPU (switch timer or
 * overflow interrupt).
 */
void pfm_switch_sets(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *prev = ctx->active_set;
	struct pfm_event_set *next = pfm_next_set(ctx);

	lockdep_assert_held(&ctx->lock);
	if (next == prev)
		return;
	pfm_ctx_sched_out(ctx);
	pfm_set_activate(ctx, next);
	pfm_smpl_set_switch(ctx, prev->id, next->id);
	pfm_ctx_sched_in(ctx);
}

/**
 * pfm_next_set() - the set after the active one, round robin by id
 * @ctx: the context, locked
 *
 * Return: the set; the active one when it is alone.
 */
struct pfm_event_set *pfm_next_set(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	struct pfm_event_set *next;

	lockdep_assert_held(&ctx->lock);
	next = list_next_entry(ctx->active_set, list);
	if (list_entry_is_head(next, &ctx->sets, list))
		next = list_first_entry(&ctx->sets, struct pfm_event_set, list);
	return next;
}

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

/**
 * __pfm_create_evtsets() - create event sets, or change existing ones
 * @ctx: the context, locked
 * @req: the descriptions; set_timeout comes back as the effective one
 * @count: number of entries
 * @spare: sets allocated by the caller for the ids that do not exist;
 *         those used are taken (set to NULL)
 *
 * The new sets, with those the context holds, may not exceed
 * pfm_sets_per_ctx_max: otherwise none is created.
 *
 * Return: 0; -EINVAL with an entry's set_flags marked; -ENOSPC past
 * pfm_sets_per_ctx_max; -EAGAIN when @spare holds too few sets (the
 * caller allocates more and retries); -EBADFD before PFM_CREATE_CONTEXT.
 */
int __pfm_create_evtsets(struct pfm_context *ctx, struct pfarg_setdesc *req,
			 unsigned int count, struct pfm_event_set **spare)
	__must_hold(&ctx->lock)
{
	unsigned int i, n = 0, max;
	struct pfm_event_set *set;
	u32 err;
	int ret;

	lockdep_assert_held(&ctx->lock);
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
		n += !pfm_find_set(ctx, req[i].set_id);
	}
	/* Lowering the knob leaves the sets a context holds. */
	max = READ_ONCE(pfm_sets_per_ctx_max);
	if (n > max - min(ctx->nr_sets, max)) {
		pfm_sets_refused(max);
		return -ENOSPC;
	}
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
 * __pfm_delete_evtsets() - delete event sets
 * @ctx: the context, locked
 * @req: the sets; an entry refused gets PFM_REG_RETFL_* in set_flags
 * @count: number of entries
 *
 * Set 0 cannot be deleted (PFM_REG_RETFL_EINVAL), nor the active set of
 * a loaded context (-EBUSY).  Deleted sets move to ctx->dead_sets, which
 * the caller frees with pfm_free_dead_sets() after unlocking.
 *
 * Return: 0, -EINVAL, -EBUSY, -EBADFD.
 */
int __pfm_delete_evtsets(struct pfm_context *ctx, struct pfarg_setdesc *req,
			 unsigned int count)
	__must_hold(&ctx->lock)
{
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
 * __pfm_getinfo_evtsets() - describe event sets
 * @ctx: the context, locked
 * @req: set_id in; the rest out (an unknown set gets PFM_REG_RETFL_NOSET)
 * @count: number of entries
 *
 * Return: 0, -EINVAL when an entry was refused (the others are answered),
 * -EBADFD before PFM_CREATE_CONTEXT.
 */
int __pfm_getinfo_evtsets(struct pfm_context *ctx, struct pfarg_setinfo *req,
			  unsigned int count)
	__must_hold(&ctx->lock)
{
	const struct pfm_pmu_config *pmu = ctx->pmu;
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
		if (r->set_reserved1 || (r->set_flags & ~PFM_REG_RETFL_MASK) ||
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
