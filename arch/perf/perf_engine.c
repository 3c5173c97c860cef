// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_perf's engine: a PMU description whose counters are perf_events
 * kernel counters, for kernels where perf owns the PMU (the builtin arm64
 * PMUv3 driver, the x86 NMI watchdog) and other perf users stay.  It
 * presents the CPU's own register map (struct pfp_map, which the module
 * gives pfp_init()): a program writes the PMC values it writes for the
 * native description.  In pfm_pmu_lib: pfm_perf and the test module
 * pfm_perf_x86sim run it, one at a time.
 *
 * Each counter PMD n a context uses (in any of its sets), with the value
 * of PMC n in that set, is backed by one pinned kernel counter of the
 * monitored thread (perf switches it with the thread, before perfmon's
 * own hooks) or of the monitored CPU.  perf's calls sleep and the
 * register ops run with interrupts off, so:
 *   - counters are created and released in process context, after each
 *     call that changes what the context counts (ctx_sync);
 *   - the register ops only read a counter (pmu->read() where it runs:
 *     this CPU, as perf_event_read_local(), which is not exported) and
 *     move software state: a PMD is its value at the last write, start
 *     or read plus what its counter counted since (struct pfp_ctr);
 *   - the counters of the sets not active stay enabled (spares) when
 *     perf has room for every set's at once: a set switch then only
 *     rebinds the PMDs, where it happens, and loses no event.  When
 *     it has not (a spare found no counter), they are kept disabled,
 *     so that a set may count what perf has room for alone, and a set
 *     switch in an interrupt enables and disables them later, from a
 *     work item (the events between the switch and that work are not
 *     counted: Documentation/pmu-description.rst);
 *   - overflows: each counter samples with the period that ends at its
 *     PMD's wrap (perf_event's sample_period, changed where it runs as
 *     KVM's PMU emulation does, or in perf's interrupt for it as perf's
 *     driver reloads it there: pfp_map.reload); the overflow handler
 *     reports the wrap with pfm_interrupt() when the context is live
 *     there, from an irq_work when perf called it where the core may
 *     not run (NMI, the scheduler).
 * Counters perf cannot schedule (all taken by other users) make the
 * call that needs them fail with -EBUSY and a log line.
 *
 * Locking: pfp_ctx.lock (raw, interrupts off) guards the software state
 * the register ops and sync share; it nests inside the core's context
 * lock.  pfp_ctx.mutex serializes perf calls on the context's counters.
 * A counter leaves the list under both, and leaves the PMDs in the same
 * hold of the lock; it is freed after a grace period, as perf frees the
 * event whose overflow handler may still be running it.
 */
/* pfm_pmu_lib's code, pfm_perf's messages. */
#define pr_fmt(fmt) "pfm_perf: " fmt

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "pfm_perf.h"

/*
 * Counters presented at most: PMC/PMD n for n below this.  The walks of
 * pfp_ctx.bound on the switch's and the sample's paths take it as the
 * bitmap's size, not pfp_max_pmd: a constant one word long, which
 * find_next_bit() inlines as a mask (no bit past pfp_max_pmd is set).
 */
#define PFP_MAX_CTRS	64

/* A counter perf refused is enabled again at most this often. */
#define PFP_RETRY_JIFFIES	(HZ / 10)

/*
 * Each (PMD, PMC value) of each set is a pinned perf kernel counter,
 * which perf allocates uncharged to any memory cgroup: bounded per
 * context (the contexts per user are, by perfmon's ctx_per_user_max),
 * by the module's parameter max_counters.
 */
static const unsigned int *pfp_max_counters;

struct pfp_ctx;

/**
 * struct pfp_ev - one perf kernel counter of a context
 * @node: in pfp_ctx.evs
 * @pe: the counter
 * @pc: its context's state (the overflow handler's way back)
 * @value: the PMC value it counts for
 * @cnum: the PMC/PMD pair it was made for (a software event's backs
 *        every PMC with its value: pfp_find())
 * @soft: a software event or tracepoint: it overflows in the scheduler,
 *        a timer or a tracepoint, not in the PMU's interrupt
 * @keep: wanted by the sets as the last sync saw them (@mutex; read
 *        without it by a bind: pfp_bind())
 * @active: wanted by the active set as the last sync saw it, until a
 *          set switch unbinds it (pfp_ctx.lock)
 * @refused: perf found no room for it at a switch in (pfp_start()),
 *           not yet logged (pfp_ctx.lock)
 * @told: that was logged: once per counter (pfp_ctx.mutex; read by
 *        pfp_start())
 * @enabled: enabled in perf (pfp_ctx.mutex; read by pfp_start())
 * @dead: on pfp_dead, released, waiting to be freed
 * @rcu: its free waits for perf's handlers that may still run it
 */
struct pfp_ev {
	struct list_head node;
	struct perf_event *pe;
	struct pfp_ctx *pc;
	u64 value;
	u16 cnum;
	bool soft;
	bool keep;
	bool active;
	bool refused;
	bool told;
	bool enabled;
	struct llist_node dead;
	struct rcu_head rcu;
};

/**
 * struct pfp_ctr - a PMD as the context's live set sees it
 * @ev: the counter behind it, or NULL: it does not count
 * @base: its value (the implemented bits) when @ev counted @snap
 * @snap: @ev's count when @base was taken
 * @over: it wrapped and the core has not been told: it reads as its
 *        highest value until then (the core's rule)
 */
struct pfp_ctr {
	struct pfp_ev *ev;
	u64 base;
	u64 snap;
	bool over;
};

/**
 * struct pfp_ctx - pfm_perf's state of one perfmon context
 * @lock: guards @ctr, @running and the membership of @evs
 * @ctr: the PMDs of the live set
 * @bound: the PMDs of @ctr with a counter behind them
 * @running: between start and stop
 * @rearm: a report found the context not live (its overflow came after
 *         the thread's switch out): the next start re-arms every counter
 * @spares: the counters of the sets not live stay enabled: a bind leaves
 *          the counter it replaces enabled (pfp_apply())
 * @crowded: perf had no room for every set's counters at once: the
 *           spares stay disabled until the next sync (@mutex)
 * @fresh: the counter whose overflow perf is reporting, from perf's
 *         overflow handler in the PMU's interrupt: perf has just brought
 *         its count up to date and reloaded its period (pfp_report_one())
 * @ovfl: that report's PMDs for the core: in the context, not on the
 *        interrupt's stack, whose array would cost the stack canary's
 *        check (the reports run on the live CPU, interrupts off)
 * @evs: its counters (struct pfp_ev)
 * @mutex: perf calls on @evs, and @task and @cpu
 * @task: the thread @evs count (reference held), or NULL
 * @cpu: the CPU @evs count, or -1
 * @apply_iw: a set switch rebound counters: enable and disable them
 * @apply_work: ... from process context (pfp_kw)
 * @ovfl_iw: reports an overflow perf signalled where the core may not run
 * @ovfl_busy: @ovfl_regs is taken
 * @ovfl_regs: the registers of that overflow
 * @retry_at: jiffies before which a counter perf refused at a switch in
 *            is not enabled again (pfp_start())
 * @cfg: the driver settings the counters were made for (@mutex)
 * @free_rwork: the free, after perf's handlers that may still run
 */
struct pfp_ctx {
	raw_spinlock_t lock;
	struct pfp_ctr ctr[PFP_MAX_CTRS];
	DECLARE_BITMAP(bound, PFP_MAX_CTRS);
	bool running;
	bool rearm;
	bool spares;
	bool crowded;
	struct pfp_ev *fresh;
	DECLARE_BITMAP(ovfl, PFP_MAX_CTRS);
	struct list_head evs;
	struct mutex mutex;	/* perf calls on @evs */
	struct task_struct *task;
	int cpu;
	struct irq_work apply_iw;
	struct kthread_work apply_work;
	struct irq_work ovfl_iw;
	unsigned long ovfl_busy;
	struct pt_regs ovfl_regs;
	unsigned long retry_at;
	u64 cfg[PFM_MAX_DRV_CFG];
	struct rcu_work free_rwork;
};

static struct pfm_pmu_config pfp_pmu;
/* The register map, and the claim on the engine: one module at a time. */
static const struct pfp_map *pfp_map;
/* The contexts' frees, drained at the module's exit. */
static struct workqueue_struct *pfp_wq;
/*
 * The apply work's worker: SCHED_FIFO at the lowest priority, so that
 * it runs as soon as a set switch in an interrupt queues it, before the
 * thread it preempts goes back to user level.  A kworker (SCHED_OTHER)
 * waited for the end of the thread's slice under 6.12's EEVDF (about
 * 3 ms of a 5 ms set counted nothing: pmuv3_test sets_more_events).
 */
static struct kthread_worker *pfp_kw;
/* The map's highest implemented PMD plus one, and its counters' mask. */
static u16 pfp_max_pmd;
static u64 pfp_ovfl_mask;
/* The PMC that controls each PMD (pfp_map_pmc()); U16_MAX: none. */
static u16 pfp_pmc_of[PFP_MAX_CTRS];
/* One past the last PMD each PMC controls (0: none). */
static u16 pfp_pmc_end[PFP_MAX_CTRS];

/*
 * @ev's count, brought up to date where it runs (this CPU), unless perf
 * just did so in the interrupt that reports its overflow (the PMU is
 * stopped while perf's handler runs: nothing counted since).
 */
static __always_inline u64 pfp_count(struct pfp_ctx *pc, struct pfp_ev *ev)
{
	struct perf_event *pe = ev->pe;

	if (ev != READ_ONCE(pc->fresh) &&
	    READ_ONCE(pe->oncpu) == smp_processor_id())
		pe->pmu->read(pe);
	return local64_read(&pe->count);
}

/*
 * Add what @c's counter counted since the last fold; note a wrap.
 * Inline: it is most of a read.
 */
static __always_inline void pfp_fold(struct pfp_ctx *pc, struct pfp_ctr *c)
{
	u64 mask = pfp_ovfl_mask;
	u64 now, sum;

	if (!pc->running || !c->ev)
		return;
	now = pfp_count(pc, c->ev);
	sum = c->base + (now - c->snap);
	if (sum < c->base || sum > mask)
		c->over = true;
	c->base = sum & mask;
	c->snap = now;
}

/*
 * Does perf count @pe's period up from -period to 0 (software events and
 * tracepoints: perf_swevent_event()), rather than down to 0, as the
 * hardware drivers and the hrtimer-driven clocks do?
 */
static bool pfp_counts_up(struct perf_event *pe)
{
	if (pe->attr.type == PERF_TYPE_TRACEPOINT)
		return true;
	return pe->attr.type == PERF_TYPE_SOFTWARE &&
	       pe->attr.config != PERF_COUNT_SW_CPU_CLOCK &&
	       pe->attr.config != PERF_COUNT_SW_TASK_CLOCK;
}

/*
 * Counts @c's PMD has left before it wraps, as a perf period; 1 for a
 * wrap not reported yet, whose report the next event's overflow makes.
 */
static u64 pfp_left(const struct pfp_ctr *c)
{
	u64 left = pfp_ovfl_mask - c->base + 1;

	if (c->over)
		return 1;

	return !left || left > S64_MAX ? S64_MAX : left;
}

/*
 * perf's period fields of @pe, a counter that counts its period down
 * (a hardware one, a clock), for @left more events: where perf's driver
 * takes the next period from (pfp_ev_period(), pfp_reload_fresh()).
 */
static __always_inline void pfp_period_down(struct perf_event *pe, u64 left)
{
	pe->attr.sample_period = left;
	pe->hw.sample_period = left;
	local64_set(&pe->hw.period_left, left);
}

/*
 * Sample after @left events of counter @ev (pfp_arm(): at the first
 * wrap of the PMDs it backs, one, or several for a software event:
 * pfp_find(); S64_MAX: never).  Where the counter runs,
 * it is stopped and started around the change so that perf reloads it
 * now, as KVM does; not while perf throttles it (hw.interrupts at
 * perf's MAX_INTERRUPTS, ~0, kernel/events/core.c): perf starts it
 * again at a tick, from the period left set here.  A software event's
 * period is its last_period too: perf_swevent_set_period() starts the
 * next one from it.  In perf's interrupt for the counter (@fresh), where
 * the map can, the map reloads it as perf's driver would there: the PMU
 * is stopped and perf has just brought the count up to date, and a stop
 * and a start per sample cost more than the sample.
 * Return: the counter was reprogrammed (it runs here).
 */
static bool pfp_ev_period(struct pfp_ctx *pc, struct pfp_ev *ev, u64 left)
{
	struct perf_event *pe = ev->pe;
	bool here = READ_ONCE(pe->oncpu) == smp_processor_id() &&
		    pe->hw.interrupts != ~0ULL;
	bool reload = here && ev == READ_ONCE(pc->fresh) && pfp_map->reload;

	if (here && !reload)
		pe->pmu->stop(pe, PERF_EF_UPDATE);
	if (pfp_counts_up(pe)) {
		pe->attr.sample_period = left;
		pe->hw.sample_period = left;
		pe->hw.last_period = left;
		local64_set(&pe->hw.period_left, -(s64)left);
	} else {
		pfp_period_down(pe, left);
	}
	if (reload)
		pfp_map->reload(pe, left);
	else if (here)
		pe->pmu->start(pe, PERF_EF_RELOAD);
	return here;
}

/* pfp_ev_period() for @c's counter, its count taken from now. */
static bool pfp_period(struct pfp_ctx *pc, struct pfp_ctr *c, u64 left)
{
	bool here = pfp_ev_period(pc, c->ev, left);

	c->snap = pfp_count(pc, c->ev);
	return here;
}

/*
 * Sample at the first wrap of the PMDs @c's counter backs while the
 * context counts; never while it does not (stopped, masked, throttled,
 * switched out): a PMD write or a bind then, or perf's own reload after
 * an overflow, must not have a throttled context's counters go on
 * interrupting at their short period.
 *
 * Each period change where the counter runs is a stop and a start of it
 * in perf's driver, so a counter whose period already says "never"
 * (S64_MAX) is left alone when it is to say so again: a PMD that only
 * counts (a 64-bit one does not wrap in reach) costs no period change at
 * a start, a stop, a set switch or a PMD write; its count is taken from
 * now (@c's value was just set or folded).  Return: the counter was
 * reprogrammed.
 */
static bool pfp_arm(struct pfp_ctx *pc, struct pfp_ctr *c)
{
	u64 left = S64_MAX;
	unsigned int i;

	lockdep_assert_held(&pc->lock);
	if (pc->running) {
		left = pfp_left(c);
		if (c->ev->soft)
			for (i = 0; i < pfp_max_pmd; i++)
				if (pc->ctr[i].ev == c->ev)
					left = min(left, pfp_left(&pc->ctr[i]));
	}
	/* pfp_period() keeps the period there (pfp_ctx.lock). */
	if (left != S64_MAX || c->ev->pe->attr.sample_period != S64_MAX)
		return pfp_period(pc, c, left);
	if (pc->running)
		c->snap = pfp_count(pc, c->ev);
	return false;
}

/*
 * The counter of the context for PMC @cnum with @value, or NULL.  A
 * software event's counter backs every PMC with that value: the PMDs
 * then read one count, which a sample of one of them finds the others
 * at (two perf events of one tracepoint are counted one after the
 * other: a report between them would see one a hit behind).
 */
static struct pfp_ev *pfp_find(struct pfp_ctx *pc, u16 cnum, u64 value)
{
	struct pfp_ev *ev;

	list_for_each_entry(ev, &pc->evs, node)
		if (ev->value == value && (ev->cnum == cnum || ev->soft))
			return ev;
	return NULL;
}

/* Is @ev backing a PMD of the live set? */
static bool pfp_bound(struct pfp_ctx *pc, struct pfp_ev *ev)
	__must_hold(&pc->lock)
{
	unsigned int i;

	lockdep_assert_held(&pc->lock);
	for (i = 0; i < pfp_max_pmd; i++)
		if (pc->ctr[i].ev == ev)
			return true;
	return false;
}

/*
 * Is @ev counting, or ready to when its target runs: enabled in perf and
 * not refused (ERROR: no room)?  perf's state, read racily: with the
 * spares enabled only perf changes it for a counter the sets want
 * (@keep: pfp_apply() disables none of those), and a spare it refuses
 * later is found so at its bind.
 */
static bool pfp_ev_ready(struct pfp_ev *ev)
{
	return READ_ONCE(ev->pe->state) >= PERF_EVENT_STATE_INACTIVE;
}

/*
 * PMD @cnum now counts for @value of its PMC.  At a set switch (an
 * interrupt) with the spares enabled (pfp_apply()), the new counter
 * already counts: its count is taken now, the old one's is folded now,
 * and no event between them is lost.  The old one, a spare from now,
 * samples no more.  Otherwise the apply work enables the new counter
 * and disables the old one, later.
 */
static void pfp_bind(struct pfp_ctx *pc, u16 cnum, u64 value)
{
	struct pfp_ctr *c = &pc->ctr[cnum];
	struct pfp_ev *ev, *old = c->ev;

	lockdep_assert_held(&pc->lock);
	/* At a switch in, without a walk of every set's counters. */
	if (old && old->value == value && (old->cnum == cnum || old->soft))
		return;
	ev = pfp_find(pc, cnum, value);
	if (ev == old)
		return;
	pfp_fold(pc, c);
	c->ev = ev;
	__assign_bit(cnum, pc->bound, ev);
	if (ev)
		pfp_arm(pc, c);
	/* Unbound: no longer the active set's (a switch), sampling no more. */
	if (old && !pfp_bound(pc, old)) {
		old->active = false;
		if (old->pe->attr.sample_period != S64_MAX)
			pfp_ev_period(pc, old, S64_MAX);
	}
	if (!pc->spares ||
	    (ev && (!pfp_ev_ready(ev) || !READ_ONCE(ev->keep))) ||
	    (old && !READ_ONCE(old->keep)))
		irq_work_queue(&pc->apply_iw);
}

/*
 * PMC @cnum controls PMD @cnum and the PMDs after it the map says (x86:
 * FIXED_CTR_CTRL, PMC16, the fixed counters PMD16 and up).
 */
static void pfp_write_pmc(struct pfm_pmu_config *pmu, void *priv, u16 cnum,
			  u64 value)
{
	struct pfp_ctx *pc = priv;
	unsigned int i;

	if (cnum >= PFP_MAX_CTRS)
		return;
	raw_spin_lock(&pc->lock);
	for (i = cnum; i < pfp_pmc_end[cnum]; i++)
		if (pfp_pmc_of[i] == cnum)
			pfp_bind(pc, i, value);
	raw_spin_unlock(&pc->lock);
}

/*
 * The core reloads the PMD of the counter perf is reporting
 * (pfp_report_one()), in perf's interrupt for it: a hardware counter,
 * which runs here and counts down, the PMU stopped.  The map reloads it
 * (pfp_map.reload), which leaves a counter perf throttles in this
 * interrupt stopped (perf disables it after the report, and starts it
 * again from the period left set here); what pfp_arm() and
 * pfp_period() decide for any counter, in any context, is known here.
 */
static void pfp_reload_fresh(struct pfp_ctx *pc, struct pfp_ctr *c)
	__must_hold(&pc->lock)
{
	struct perf_event *pe = c->ev->pe;
	u64 left = pfp_left(c);

	lockdep_assert_held(&pc->lock);
	pfp_period_down(pe, left);
	pfp_map->reload(pe, left);
	c->snap = local64_read(&pe->count);
}

static void pfp_write_pmd(struct pfm_pmu_config *pmu, void *priv, u16 cnum,
			  u64 value)
{
	struct pfp_ctx *pc = priv;
	struct pfp_ctr *c;

	if (cnum >= PFP_MAX_CTRS)
		return;
	c = &pc->ctr[cnum];
	raw_spin_lock(&pc->lock);
	c->base = value & pfp_ovfl_mask;
	c->over = false;
	if (c->ev && c->ev == READ_ONCE(pc->fresh) && pfp_map->reload &&
	    pc->running)
		pfp_reload_fresh(pc, c);
	else if (c->ev)
		pfp_arm(pc, c);
	raw_spin_unlock(&pc->lock);
}

static u64 pfp_read_pmd(struct pfm_pmu_config *pmu, void *priv, u16 cnum)
{
	struct pfp_ctx *pc = priv;
	struct pfp_ctr *c;
	u64 v;

	if (cnum >= PFP_MAX_CTRS)
		return 0;
	c = &pc->ctr[cnum];
	raw_spin_lock(&pc->lock);
	pfp_fold(pc, c);
	v = c->over ? pfp_ovfl_mask : c->base;
	raw_spin_unlock(&pc->lock);
	return v;
}

/*
 * Counting starts (a start, an unmask, a switch in, after perf's own).
 * A counter perf could not schedule (a pinned one, ERROR state: perf's
 * users took the counters since it was enabled) does not count: the
 * apply work logs it (once per counter) and enables it again, for perf
 * to retry at its next switch in, rather than the PMD silently
 * counting nothing.  At most every PFP_RETRY_JIFFIES: the work's
 * worker preempts the thread, whose next switch in is refused again,
 * and on 6.1 that ping-pong left the thread no time to run.
 *
 * Still running, at a thread's switch in: the core did not stop the
 * context at the switch out (pfm_ctx_switch_out()), perf switched the
 * counters with the thread, and their periods still end at the PMDs'
 * wraps: nothing to re-arm, unless a report came while the context was
 * out (@rearm).  Then what perf counted since its switch in is folded
 * first, and a wrap in it is reported at the next event (pfp_left()).
 */
static void pfp_start(struct pfm_pmu_config *pmu, void *priv)
{
	struct pfp_ctx *pc = priv;
	bool error = false, was, rearm;
	struct pfp_ev *ev;
	unsigned int i;

	raw_spin_lock(&pc->lock);
	was = pc->running;
	rearm = !was || pc->rearm;
	pc->rearm = false;
	pc->running = true;
	for_each_set_bit(i, pc->bound, PFP_MAX_CTRS) {
		ev = pc->ctr[i].ev;
		if (rearm && was)
			pfp_fold(pc, &pc->ctr[i]);
		if (rearm)
			pfp_arm(pc, &pc->ctr[i]);
		/*
		 * Not one disabled since: a spare perf refused stays in
		 * ERROR (perf_event_disable() leaves it), and its bind
		 * has the apply work enable it.
		 */
		if (READ_ONCE(ev->pe->state) == PERF_EVENT_STATE_ERROR &&
		    READ_ONCE(ev->enabled)) {
			ev->refused = !READ_ONCE(ev->told);
			error = true;
		}
	}
	if (error && time_after_eq(jiffies, pc->retry_at))
		pc->retry_at = jiffies + PFP_RETRY_JIFFIES;
	else
		error = false;
	raw_spin_unlock(&pc->lock);
	if (error)
		irq_work_queue(&pc->apply_iw);
}

/*
 * Counting stops (a stop, a mask, a throttle, a switch out): what the
 * counters count meanwhile is dropped at the next start, and they do
 * not overflow meanwhile (pfp_arm()).
 */
static void pfp_stop(struct pfm_pmu_config *pmu, void *priv)
{
	struct pfp_ctx *pc = priv;
	unsigned int i;

	raw_spin_lock(&pc->lock);
	for_each_set_bit(i, pc->bound, PFP_MAX_CTRS)
		pfp_fold(pc, &pc->ctr[i]);
	pc->running = false;
	for_each_set_bit(i, pc->bound, PFP_MAX_CTRS)
		pfp_arm(pc, &pc->ctr[i]);
	raw_spin_unlock(&pc->lock);
}

/*
 * Is the context live here for a report?  Else the overflow came after
 * the thread's switch out: the PMD holds at its top, and the next start
 * re-arms every counter.
 */
static bool pfp_report_live(struct pfp_ctx *pc)
{
	if (pfm_pmu_priv_live(pc))
		return true;
	raw_spin_lock(&pc->lock);
	pc->rearm = true;
	raw_spin_unlock(&pc->lock);
	return false;
}

/*
 * Periods ended, reported from an irq_work (software counters, perf's
 * NMI), which does not say whose: fold every counter, tell the core of
 * the PMDs that wrapped (it reads and may reload them), and re-arm every
 * counter, before the core is told: the control page it rewrites takes
 * its base from perf's counter as that left it.  Told too when a
 * counter was only reprogrammed (its period ended short of the wrap),
 * for that page.
 */
static void pfp_report_all(struct pfp_ctx *pc, struct pt_regs *regs)
{
	DECLARE_BITMAP(ovfl, PFM_MAX_PMDS);
	bool moved = false;
	struct pfp_ctr *c;
	unsigned int i;

	if (!pfp_report_live(pc))
		return;
	bitmap_zero(ovfl, PFM_MAX_PMDS);
	raw_spin_lock(&pc->lock);
	/* A report queued before a stop: the counters stay disarmed. */
	for_each_set_bit(i, pc->bound, PFP_MAX_CTRS) {
		c = &pc->ctr[i];
		if (!pc->running)
			break;
		pfp_fold(pc, c);
		if (c->over) {
			c->over = false;
			__set_bit(i, ovfl);
		}
		/* A software counter has no index in the control page. */
		if (pfp_arm(pc, c))
			moved |= !c->ev->soft;
	}
	raw_spin_unlock(&pc->lock);
	if (moved || !bitmap_empty(ovfl, PFM_MAX_PMDS))
		pfm_interrupt(ovfl, regs);
}

/*
 * The period of hardware counter @ev ended, reported from perf's
 * overflow handler in the PMU's interrupt: perf has just brought its
 * count up to date and reloaded that period, the PMU stopped (@fresh
 * while the core is told, so that the register ops take the count as
 * perf left it).  Only @ev's PMD is looked at: another hardware
 * counter's wrap ends its own period, which perf reports for it, in this
 * interrupt or the next.
 *
 * When the PMD wrapped, the core is told, and the counter is left as
 * perf reloaded it: the core's reload of the PMD programs the new
 * period, and without one perf's period, the one that ended at this
 * wrap, ends at or before the next (a period is at most the PMD's
 * range).  When it did not (perf's period ended short of the wrap, or
 * ran while the context did not count), it is re-armed, and the core is
 * told all the same, with no PMD: the control page it rewrites takes
 * the counter's new base, where the thread's next read of it would
 * otherwise be off by the jump.
 */
static void pfp_report_one(struct pfp_ctx *pc, struct pfp_ev *ev,
			   struct pt_regs *regs)
{
	struct pfp_ctr *c = &pc->ctr[ev->cnum];
	bool wrapped, moved;

	if (!pfp_report_live(pc))
		return;
	raw_spin_lock(&pc->lock);
	/* Not bound (another set's), or a report after a stop. */
	if (c->ev != ev || !pc->running) {
		raw_spin_unlock(&pc->lock);
		return;
	}
	WRITE_ONCE(pc->fresh, ev);
	pfp_fold(pc, c);
	wrapped = c->over;
	c->over = false;
	moved = !wrapped && pfp_arm(pc, c);
	raw_spin_unlock(&pc->lock);
	if (wrapped || moved) {
		/* The core reads the map's PMDs' bits: PFP_MAX_CTRS at most. */
		bitmap_zero(pc->ovfl, PFP_MAX_CTRS);
		if (wrapped)
			__set_bit(ev->cnum, pc->ovfl);
		pfm_interrupt(pc->ovfl, regs);
	}
	/*
	 * Without the lock: @fresh matters only where the counter runs,
	 * this CPU, whose register ops run with interrupts off (elsewhere
	 * pfp_count() and pfp_period() find it not running there).
	 */
	WRITE_ONCE(pc->fresh, NULL);
}

static void pfp_ovfl_irq_work(struct irq_work *iw)
{
	struct pfp_ctx *pc = container_of(iw, struct pfp_ctx, ovfl_iw);

	pfp_report_all(pc, &pc->ovfl_regs);
	clear_bit_unlock(0, &pc->ovfl_busy);
}

/*
 * perf's overflow handler.  A hardware counter's interrupt may report
 * at once (interrupts off, not an NMI); software counters overflow in
 * the scheduler, timers or a tracepoint, where the core's locks may not
 * be taken: they report from an irq_work, with a copy of the registers.
 */
static void pfp_overflow(struct perf_event *pe, struct perf_sample_data *data,
			 struct pt_regs *regs)
{
	struct pfp_ev *ev = pe->overflow_handler_context;
	struct pfp_ctx *pc = ev->pc;

	if (!ev->soft && !in_nmi() && irqs_disabled()) {
		pfp_report_one(pc, ev, regs);
		return;
	}
	/*
	 * A tracepoint's registers are its caller's in the kernel, which
	 * perf makes up: a sample of a system-call event means the
	 * thread's user registers, as pfm_soft reports them.
	 */
	if (pe->attr.type == PERF_TYPE_TRACEPOINT && current->mm &&
	    !(current->flags & PF_KTHREAD))
		regs = task_pt_regs(current);
	if (!test_and_set_bit_lock(0, &pc->ovfl_busy)) {
		pc->ovfl_regs = *regs;
		irq_work_queue(&pc->ovfl_iw);
	}
}

/*
 * The hardware perf event behind PMD @cnum of the context live on this
 * CPU (@priv), when perf has it on this CPU's PMU now; else NULL.  From
 * a register op (interrupts off): the event stays valid until interrupts
 * are on again, as releasing it takes an IPI to this CPU, where it runs.
 */
static struct perf_event *pfp_live_event(void *priv, u16 cnum)
{
	struct pfp_ctx *pc = priv;
	struct perf_event *pe = NULL;
	struct pfp_ev *ev;

	if (cnum >= PFP_MAX_CTRS)
		return NULL;
	raw_spin_lock(&pc->lock);
	ev = pc->ctr[cnum].ev;
	if (ev && !ev->soft && pc->running &&
	    READ_ONCE(ev->pe->oncpu) == smp_processor_id())
		pe = ev->pe;
	raw_spin_unlock(&pc->lock);
	return pe;
}

static void pfp_log_busy(struct pfp_ctx *pc, struct pfp_ev *ev)
{
	if (pc->task)
		pr_info_ratelimited("perf has no free counter for PMD%u (PMC value %#llx) of thread %d: other perf users hold the PMU's counters; end them or count fewer events per set\n",
				    ev->cnum, ev->value, task_pid_nr(pc->task));
	else
		pr_info_ratelimited("perf has no free counter for PMD%u (PMC value %#llx) on CPU %d: other perf users hold the PMU's counters; end them or count fewer events per set\n",
				    ev->cnum, ev->value, pc->cpu);
}

/* Enable @ev in perf; false when perf found no room for it (ERROR). */
static bool pfp_ev_enable(struct pfp_ev *ev)
{
	if (!ev->enabled || ev->pe->state == PERF_EVENT_STATE_ERROR)
		perf_event_enable(ev->pe);
	WRITE_ONCE(ev->enabled, true);
	return ev->pe->state != PERF_EVENT_STATE_ERROR;
}

static void pfp_ev_disable(struct pfp_ev *ev)
{
	if (!ev->enabled)
		return;
	perf_event_disable(ev->pe);
	WRITE_ONCE(ev->enabled, false);
}

/*
 * Does the live set (or, before the context is live, its active set)
 * use @ev?  A refusal pfp_start() found for it is taken, to be logged,
 * on the pass that enables (@enabling).
 */
static bool pfp_ev_wanted(struct pfp_ctx *pc, struct pfp_ev *ev,
			  bool enabling, bool *refused)
{
	unsigned long flags;
	bool wanted;

	raw_spin_lock_irqsave(&pc->lock, flags);
	wanted = pfp_bound(pc, ev) || ev->active;
	*refused = enabling && ev->refused;
	ev->refused &= !enabling;
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	return wanted;
}

/* Log a refusal of @ev: once per counter. */
static void pfp_tell_busy(struct pfp_ctx *pc, struct pfp_ev *ev)
{
	if (READ_ONCE(ev->told))
		return;
	WRITE_ONCE(ev->told, true);
	pfp_log_busy(pc, ev);
}

/* Did a switch in find a counter perf refused (pfp_start())? */
static bool pfp_any_refused(struct pfp_ctx *pc)
{
	unsigned long flags;
	struct pfp_ev *ev;
	bool any = false;

	raw_spin_lock_irqsave(&pc->lock, flags);
	list_for_each_entry(ev, &pc->evs, node)
		any |= ev->refused;
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	return any;
}

static void pfp_set_spares(struct pfp_ctx *pc, bool spares)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&pc->lock, flags);
	pc->spares = spares;
	raw_spin_unlock_irqrestore(&pc->lock, flags);
}

/*
 * Enable the counters the sets want but the live one does not (spares),
 * so that a set switch finds its counters counting (pfp_bind()).  Return:
 * false when perf had no room for one: the context is @crowded, and the
 * caller disables them again.
 */
static bool pfp_enable_spares(struct pfp_ctx *pc)
{
	struct pfp_ev *ev;
	bool refused;

	list_for_each_entry(ev, &pc->evs, node) {
		if (!ev->keep || ev->enabled ||
		    pfp_ev_wanted(pc, ev, false, &refused))
			continue;
		if (!pfp_ev_enable(ev)) {
			pc->crowded = true;
			return false;
		}
	}
	pfp_set_spares(pc, true);
	return true;
}

/*
 * Enable the counters the live set uses (or, before the context is
 * live, its active set), and the other sets' where perf has room for
 * them all (pfp_enable_spares()); disable the others: first the others,
 * to make room.  A live counter perf refused while the spares were
 * enabled is tried again without them.  A refusal is logged for each
 * @call (a sync: the call fails with -EBUSY), once per counter for the
 * work (after a set switch, which may queue it every millisecond; it
 * finds the refusal where the thread runs on another CPU).  Return: 1
 * when it enabled one, 0 when not, or -EBUSY when perf could not
 * schedule one it enabled where it runs now (error state: pinned, no
 * room).
 */
static int pfp_apply(struct pfp_ctx *pc, bool call)
{
	bool wanted, refused, spares, blamed;
	struct pfp_ev *ev;
	int ret;

	lockdep_assert_held(&pc->mutex);
	/*
	 * A spare may have taken the refused counter's place: not logged,
	 * unless perf refuses it again without them.
	 */
	blamed = !pc->crowded && pfp_any_refused(pc);
	pc->crowded |= blamed;
	ret = 0;
again:
	spares = !pc->crowded;
	if (!spares)
		pfp_set_spares(pc, false);
	list_for_each_entry(ev, &pc->evs, node)
		if (!pfp_ev_wanted(pc, ev, false, &refused) &&
		    !(spares && ev->keep))
			pfp_ev_disable(ev);
	list_for_each_entry(ev, &pc->evs, node) {
		wanted = pfp_ev_wanted(pc, ev, true, &refused);
		if (refused && !blamed)
			pfp_tell_busy(pc, ev);
		if (!wanted)
			continue;
		if (!ev->enabled || ev->pe->state == PERF_EVENT_STATE_ERROR)
			ret = ret ?: 1;
		if (pfp_ev_enable(ev))
			continue;
		if (spares) {
			/* A spare may hold its counter: without them. */
			pc->crowded = true;
			goto again;
		}
		if (call)
			pfp_log_busy(pc, ev);
		else
			pfp_tell_busy(pc, ev);
		ret = -EBUSY;
	}
	if (spares && !pfp_enable_spares(pc))
		goto again;
	return ret;
}

static void pfp_apply_work(struct kthread_work *work)
{
	struct pfp_ctx *pc = container_of(work, struct pfp_ctx, apply_work);

	mutex_lock(&pc->mutex);
	pfp_apply(pc, false);
	mutex_unlock(&pc->mutex);
}

static void pfp_apply_irq_work(struct irq_work *iw)
{
	kthread_queue_work(pfp_kw,
			   &container_of(iw, struct pfp_ctx, apply_iw)->apply_work);
}

/*
 * Free @ev's counter.  perf's overflow handler may still be running it
 * on another CPU (a tracepoint's, interrupted by the removal's IPI,
 * goes on after it): perf frees its event after a grace period, and
 * @ev, the handler's context, goes with it.
 */
static void pfp_ev_free(struct pfp_ev *ev)
{
	perf_event_release_kernel(ev->pe);
	kfree_rcu(ev, rcu);
}

/*
 * Counters let go wait on pfp_dead for pfp_dead_work, disabled.  perf's
 * release of a tracepoint's last counter waits for two grace periods
 * (perf_trace_event_unreg(): 30 to 40 ms in the TCG guests), and the
 * next counter of that tracepoint registers it again: a monitor that
 * unloaded its context and loaded it on another thread waited that
 * long.  Released by the work, the old target's counters keep the
 * tracepoint registered until the new target's are made.  Past
 * PFP_DEAD_MAX waiting, a caller frees its own: the list stays bounded
 * whatever the rate of unloads.
 */
#define PFP_DEAD_MAX	256

static LLIST_HEAD(pfp_dead);
static atomic_t pfp_dead_n = ATOMIC_INIT(0);

static void pfp_dead_free(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&pfp_dead);
	struct pfp_ev *ev, *tmp;

	llist_for_each_entry_safe(ev, tmp, list, dead) {
		pfp_ev_free(ev);
		atomic_dec(&pfp_dead_n);
	}
}

static DECLARE_WORK(pfp_dead_work, pfp_dead_free);

/*
 * Release @ev, unlinked from its context: disabled now, so that it
 * counts nothing more and its handler is not called again once the
 * handlers running end (the context's free waits for a grace period);
 * freed by pfp_dead_work, or here when too many wait.
 */
static void pfp_ev_release(struct pfp_ev *ev)
{
	if (atomic_inc_return(&pfp_dead_n) > PFP_DEAD_MAX) {
		atomic_dec(&pfp_dead_n);
		pfp_ev_free(ev);
		return;
	}
	perf_event_disable(ev->pe);
	llist_add(&ev->dead, &pfp_dead);
	queue_work(pfp_wq, &pfp_dead_work);
}

/*
 * Unbind @ev from the live set's PMDs, keeping what it counted when
 * @fold, and unlink it, in one hold of the lock: the live CPU's register
 * ops bind only counters they find in the list (pfp_bind()), so none
 * can bind @ev again between the two.
 */
static void pfp_ev_unlink(struct pfp_ctx *pc, struct pfp_ev *ev, bool fold)
	__must_hold(&pc->lock)
{
	unsigned int i;

	lockdep_assert_held(&pc->lock);
	for (i = 0; i < pfp_max_pmd; i++) {
		if (pc->ctr[i].ev != ev)
			continue;
		if (fold)
			pfp_fold(pc, &pc->ctr[i]);
		pc->ctr[i].ev = NULL;
		__clear_bit(i, pc->bound);
	}
	list_del(&ev->node);
}

/* Release every counter: the context has another target, or none. */
static void pfp_release_all(struct pfp_ctx *pc)
{
	struct pfp_ev *ev, *tmp;
	unsigned long flags;
	LIST_HEAD(dead);
	unsigned int i;

	lockdep_assert_held(&pc->mutex);
	raw_spin_lock_irqsave(&pc->lock, flags);
	for (i = 0; i < pfp_max_pmd; i++)
		pc->ctr[i].ev = NULL;
	bitmap_zero(pc->bound, PFP_MAX_CTRS);
	list_splice_init(&pc->evs, &dead);
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	list_for_each_entry_safe(ev, tmp, &dead, node)
		pfp_ev_release(ev);
	if (pc->task)
		put_task_struct(pc->task);
	pc->task = NULL;
	pc->cpu = -1;
}

/*
 * Room for one more counter under max_counters?  Those the sets want
 * count, as this sync has found them so far (@keep); those it will let
 * go do not, so that rewriting every PMC does not need twice the room.
 */
static bool pfp_room(struct pfp_ctx *pc)
{
	unsigned int n = 0;
	struct pfp_ev *ev;

	lockdep_assert_held(&pc->mutex);
	list_for_each_entry(ev, &pc->evs, node)
		n += ev->keep;
	if (n < READ_ONCE(*pfp_max_counters))
		return true;
	pr_info_ratelimited("a context of %s %d needs more than %u perf counters across its sets: count fewer distinct events, or raise pfm_perf's max_counters\n",
			    pc->task ? "thread" : "CPU",
			    pc->task ? task_pid_nr(pc->task) : pc->cpu,
			    READ_ONCE(*pfp_max_counters));
	return false;
}

/* Create the counter for PMC @cnum with @value, disabled. */
static int pfp_ev_create(struct pfp_ctx *pc, u16 cnum, u64 value,
			 bool active)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.pinned = 1,
		.disabled = 1,
		.sample_period = S64_MAX,
	};
	struct perf_event *pe;
	unsigned long flags;
	struct pfp_ev *ev;
	int ret;

	ret = pfp_map->attr(cnum, value, pc->cfg, &attr);
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	if (!pfp_room(pc))
		return -ENOSPC;
	ev = kzalloc(sizeof(*ev), GFP_KERNEL_ACCOUNT);
	if (!ev)
		return -ENOMEM;
	ev->pc = pc;
	ev->cnum = cnum;
	ev->value = value;
	/*
	 * perf marks these PERF_EV_CAP_SOFTWARE (is_software_event()) only
	 * when they come from perf_event_open(): tell them by type.
	 */
	ev->soft = attr.type == PERF_TYPE_SOFTWARE ||
		   attr.type == PERF_TYPE_TRACEPOINT;
	ev->keep = true;
	ev->active = active;
	pe = perf_event_create_kernel_counter(&attr, pc->task ? -1 : pc->cpu,
					      pc->task, pfp_overflow, ev);
	if (IS_ERR(pe)) {
		pr_info_ratelimited("perf refused the event of PMD%u (PMC value %#llx): perf event type %u config %#llx, error %ld\n",
				    cnum, value, attr.type, attr.config,
				    PTR_ERR(pe));
		kfree(ev);
		return PTR_ERR(pe);
	}
	ev->pe = pe;
	raw_spin_lock_irqsave(&pc->lock, flags);
	list_add_tail(&ev->node, &pc->evs);
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	return 1;
}

/*
 * Have a counter for each used counter PMD of @set; 1 when one is new.
 * Created from the highest number down: perf schedules pinned counters
 * in the order they were created, and a map's dedicated counter comes
 * last (PMUv3: PMC31, whose CPU_CYCLES perf then puts on the cycle
 * counter, not on an event counter another PMC needs).
 */
static int pfp_sync_set(struct pfp_ctx *pc, const struct pfm_pmu_vset *set,
			bool active)
{
	unsigned int i = pfp_max_pmd;
	unsigned long flags;
	struct pfp_ev *ev;
	u64 value;
	int ret, created = 0;

	while (i--) {
		if (!test_bit(i, set->used_pmds) ||
		    !(pfp_pmu.map->pmd_desc[i].type & PFM_REGT_CNTR) ||
		    pfp_pmc_of[i] == U16_MAX)
			continue;
		value = set->pmcs[pfp_pmc_of[i]];
		ev = pfp_find(pc, i, value);
		if (ev) {
			WRITE_ONCE(ev->keep, true);
			raw_spin_lock_irqsave(&pc->lock, flags);
			ev->active |= active;
			raw_spin_unlock_irqrestore(&pc->lock, flags);
			continue;
		}
		ret = pfp_ev_create(pc, i, value, active);
		if (ret < 0)
			return ret;
		created |= ret;
	}
	return created;
}

/*
 * Release the counters no set wants and the live set does not use: the
 * test and the unlink in one hold of the lock, as pfp_ev_unlink().
 */
static void pfp_reap(struct pfp_ctx *pc)
{
	struct pfp_ev *ev, *tmp;
	unsigned long flags;
	bool idle;

	lockdep_assert_held(&pc->mutex);
	list_for_each_entry_safe(ev, tmp, &pc->evs, node) {
		if (ev->keep)
			continue;
		raw_spin_lock_irqsave(&pc->lock, flags);
		idle = !pfp_bound(pc, ev);
		if (idle)
			list_del(&ev->node);
		raw_spin_unlock_irqrestore(&pc->lock, flags);
		if (idle)
			pfp_ev_release(ev);
	}
}

/* Keep what @ev counted for the PMDs it backs, and release it. */
static void pfp_ev_drop(struct pfp_ctx *pc, struct pfp_ev *ev)
{
	unsigned long flags;

	lockdep_assert_held(&pc->mutex);
	raw_spin_lock_irqsave(&pc->lock, flags);
	pfp_ev_unlink(pc, ev, true);
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	pfp_ev_release(ev);
}

/*
 * perf detached counters from their target: the thread's at an exec
 * into an image its owner may not read, which the context follows
 * (perf_event_exit_task()), the CPU's when it went offline
 * (perf_event_exit_cpu()).  Keep what they counted and release them;
 * the sync makes them again.  A thread's only on the thread itself: it
 * is not exiting, and runs no user instruction before the sync ends.
 */
static void pfp_revive(struct pfp_ctx *pc)
{
	struct pfp_ev *ev, *tmp;

	lockdep_assert_held(&pc->mutex);
	if (pc->task ? pc->task != current :
		       pc->cpu < 0 || !cpu_online(pc->cpu))
		return;
	list_for_each_entry_safe(ev, tmp, &pc->evs, node)
		if (!(READ_ONCE(ev->pe->attach_state) & PERF_ATTACH_CONTEXT))
			pfp_ev_drop(pc, ev);
}

/*
 * The driver settings changed (PFM_SET_DRV_CONFIG): the counters are
 * made again for them, values kept (the map's attributes depend on
 * them: on arm64, el0_access asks perf for user-level reads).  The
 * fold here, on the monitor's CPU, is current for a thread counting on
 * another: the call saved its PMDs there just before (pfm_run()'s
 * save and reload).  What the thread does between that save and the
 * reload that binds the new counters is not counted.
 */
static void pfp_set_cfg(struct pfp_ctx *pc, const u64 *cfg)
{
	struct pfp_ev *ev, *tmp;

	lockdep_assert_held(&pc->mutex);
	if (!memcmp(pc->cfg, cfg, sizeof(pc->cfg)))
		return;
	list_for_each_entry_safe(ev, tmp, &pc->evs, node)
		pfp_ev_drop(pc, ev);
	memcpy(pc->cfg, cfg, sizeof(pc->cfg));
}

static int pfp_ctx_sync(struct pfm_pmu_config *pmu, void *priv,
			const struct pfm_pmu_vctx *vc)
{
	struct pfp_ctx *pc = priv;
	unsigned long flags;
	struct pfp_ev *ev;
	unsigned int i;
	int ret, created = 0;

	mutex_lock(&pc->mutex);
	if (vc->task != pc->task || vc->cpu != pc->cpu) {
		pfp_release_all(pc);
		if (vc->task)
			get_task_struct(vc->task);
		pc->task = vc->task;
		pc->cpu = vc->cpu;
	}
	pfp_revive(pc);
	pfp_set_cfg(pc, vc->cfg);
	/* What perf has room for may have changed: try the spares again. */
	pc->crowded = false;
	raw_spin_lock_irqsave(&pc->lock, flags);
	list_for_each_entry(ev, &pc->evs, node) {
		WRITE_ONCE(ev->keep, false);
		ev->active = false;
	}
	raw_spin_unlock_irqrestore(&pc->lock, flags);
	for (i = 0; i < vc->nr_sets; i++) {
		ret = pfp_sync_set(pc, &vc->sets[i], i == vc->active);
		if (ret < 0)
			goto unlock;
		created |= ret;
	}
	ret = created;
	if (!created) {
		pfp_reap(pc);
		ret = pfp_apply(pc, true);
	}
unlock:
	mutex_unlock(&pc->mutex);
	return ret;
}

static void *pfp_ctx_alloc(struct pfm_pmu_config *pmu)
{
	struct pfp_ctx *pc = kzalloc(sizeof(*pc), GFP_KERNEL_ACCOUNT);

	if (!pc)
		return NULL;
	raw_spin_lock_init(&pc->lock);
	INIT_LIST_HEAD(&pc->evs);
	mutex_init(&pc->mutex);
	pc->cpu = -1;
	pc->apply_iw = IRQ_WORK_INIT_HARD(pfp_apply_irq_work);
	kthread_init_work(&pc->apply_work, pfp_apply_work);
	pc->ovfl_iw = IRQ_WORK_INIT_HARD(pfp_ovfl_irq_work);
	return pc;
}

/*
 * After a grace period from the release of the last counter: no handler
 * of perf's runs one any more, and the report one may have queued is
 * the last.
 */
static void pfp_ctx_free_rcu(struct work_struct *work)
{
	struct pfp_ctx *pc = container_of(to_rcu_work(work), struct pfp_ctx,
					  free_rwork);

	irq_work_sync(&pc->ovfl_iw);
	mutex_destroy(&pc->mutex);
	kfree(pc);
}

/*
 * The context is not live anywhere: nothing queues the set switch's
 * works again.  An overflow handler may still be running a released
 * counter on another CPU and queue a report: the rest waits for a grace
 * period (pfp_ctx_free_rcu()).
 */
static void pfp_ctx_free(struct pfm_pmu_config *pmu, void *priv)
{
	struct pfp_ctx *pc = priv;

	irq_work_sync(&pc->apply_iw);
	kthread_cancel_work_sync(&pc->apply_work);
	mutex_lock(&pc->mutex);
	pfp_release_all(pc);
	mutex_unlock(&pc->mutex);
	INIT_RCU_WORK(&pc->free_rwork, pfp_ctx_free_rcu);
	queue_rcu_work(pfp_wq, &pc->free_rwork);
}

/*
 * The settings are in the counters' attributes (the map's @attr): perf
 * puts them in force as it schedules each counter.
 */
static void pfp_load_cfg(struct pfm_pmu_config *pmu, void *priv,
			 const u64 *cfg)
{
}

/* perf's index of a counter the thread may read, as perf shows it. */
static u32 pfp_user_index(struct pfm_pmu_config *pmu, void *priv,
			  const u64 *cfg, u16 cnum)
{
	struct perf_event *pe;

	if (!pfp_map->user_read || !pfp_map->user_read(cfg))
		return 0;
	pe = pfp_live_event(priv, cnum);
	return pe ? pe->pmu->event_idx(pe) : 0;
}

/* The core read the PMD just now, and so did perf the counter. */
static u64 pfp_user_base(struct pfm_pmu_config *pmu, void *priv, u16 cnum,
			 u64 value)
{
	struct perf_event *pe = pfp_live_event(priv, cnum);

	return pe ? local64_read(&pe->hw.prev_count) & pfp_ovfl_mask : 0;
}

static const struct pfm_pmu_ops pfp_ops = {
	.write_pmc	= pfp_write_pmc,
	.write_pmd	= pfp_write_pmd,
	.read_pmd	= pfp_read_pmd,
	.start		= pfp_start,
	.stop		= pfp_stop,
	.load_cfg	= pfp_load_cfg,
	.user_index	= pfp_user_index,
	.user_base	= pfp_user_base,
	.ctx_alloc	= pfp_ctx_alloc,
	.ctx_free	= pfp_ctx_free,
	.ctx_sync	= pfp_ctx_sync,
	/* A PMC value binds a perf counter, which starts at its PMD's value. */
	.pmc_write_reloads = true,
};

/*
 * Which PMC controls each PMD, for the register ops and the sync; the
 * PMDs' extent and width.  Returns how many PMDs the map implements.
 */
static unsigned int pfp_map_controls(void)
{
	const struct pfm_pmu_map *map = pfp_pmu.map;
	unsigned int i, n = 0;
	u16 pmc;

	pfp_ovfl_mask = pfm_pmu_ovfl_mask(map);
	pfp_max_pmd = 0;
	for (i = 0; i < map->num_pmd_entries; i++) {
		if (!(map->pmd_desc[i].type & PFM_REGT_IMPL))
			continue;
		pfp_max_pmd = i + 1;
		n++;
	}
	for (i = 0; i < PFP_MAX_CTRS; i++) {
		pmc = i < map->num_pmd_entries ? pfp_map->pmc(i) : U16_MAX;
		if (pmc > i || pmc >= map->num_pmc_entries ||
		    !(map->pmc_desc[pmc].type & PFM_REGT_IMPL))
			pmc = U16_MAX;
		pfp_pmc_of[i] = pmc;
		if (pmc != U16_MAX)
			pfp_pmc_end[pmc] = i + 1;
	}
	return n;
}

/* The engine serves one map at a time: pfm_perf's or the test module's. */
static int pfp_claim(struct module *owner, const struct pfp_map *map)
{
	if (!cmpxchg(&pfp_map, NULL, map))
		return 0;
	pr_err("%s: the perf_events engine already serves %s: unload it first\n",
	       module_name(owner), module_name(pfp_pmu.owner));
	return -EBUSY;
}

/* Probe the claimed map and register; -errno with nothing left. */
static int pfp_setup(struct module *owner)
{
	const struct pfm_pmu_map *map;
	unsigned int pmds;
	int ret;

	/* Fresh, as a module's static data is: the library stays loaded. */
	memset(pfp_pmc_end, 0, sizeof(pfp_pmc_end));
	map = pfp_map->probe();
	if (IS_ERR(map))
		return PTR_ERR(map);
	if (map->num_pmd_entries > PFP_MAX_CTRS) {
		pr_err("the register map has %u PMDs, more than the %u pfm_perf backs\n",
		       map->num_pmd_entries, PFP_MAX_CTRS);
		return -EINVAL;
	}
	pfp_pmu = (struct pfm_pmu_config) {
		.owner	= owner,
		.map	= map,
		.ops	= &pfp_ops,
	};
	pmds = pfp_map_controls();
	pfp_wq = alloc_workqueue("pfm_perf", 0, 0);
	if (!pfp_wq)
		return -ENOMEM;
	pfp_kw = kthread_create_worker(0, "pfm_perf_apply");
	if (IS_ERR(pfp_kw)) {
		ret = PTR_ERR(pfp_kw);
		goto destroy_wq;
	}
	sched_set_fifo_low(pfp_kw->task);
	ret = pfm_pmu_register(&pfp_pmu);
	if (ret)
		goto destroy_kw;
	pr_info("%s over perf_events: %u counters\n", map->pmu_name, pmds);
	return 0;

destroy_kw:
	kthread_destroy_worker(pfp_kw);
destroy_wq:
	destroy_workqueue(pfp_wq);
	return ret;
}

/**
 * pfp_init() - probe a map and register a description on it
 * @owner: the module calling (THIS_MODULE), which the contexts hold
 * @map: the register map
 * @max_counters: the module's parameter: perf counters one context may
 *                hold across its sets
 *
 * Context: module init.
 * Return: 0; -EBUSY (logged) while another module's map is registered;
 * or the map's or the core's error.
 */
int pfp_init(struct module *owner, const struct pfp_map *map,
	     const unsigned int *max_counters)
{
	int ret;

	ret = pfp_claim(owner, map);
	if (ret)
		return ret;
	pfp_max_counters = max_counters;
	ret = pfp_setup(owner);
	if (ret)
		WRITE_ONCE(pfp_map, NULL);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(pfp_init, PERFMON_PMU_LIB);

/**
 * pfp_exit() - undo pfp_init()
 *
 * Context: module exit: no context holds the module any more, so every
 * counter is released; those waiting on pfp_dead are freed, and the
 * frees waiting for a grace period are done, before the module's code
 * goes.
 */
void pfp_exit(void)
{
	pfm_pmu_unregister(&pfp_pmu);
	flush_work(&pfp_dead_work);
	rcu_barrier();
	destroy_workqueue(pfp_wq);
	kthread_destroy_worker(pfp_kw);
	WRITE_ONCE(pfp_map, NULL);
}
EXPORT_SYMBOL_NS_GPL(pfp_exit, PERFMON_PMU_LIB);
