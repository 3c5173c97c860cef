// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_soft: a software PMU description for machines without a usable PMU
 * (VMs without a virtual PMU, the x86 test guest under TCG).  Its
 * counters are driven by the kernel's clocks and scheduler.
 *
 * Register map (soft_map.c, which pfm_perf presents too, over perf's
 * software events):
 *   PMC0-3 SOFT_EVTSEL0-3: bits[7:0] event, every other bit reserved
 *          (zero).
 *   PMD0-3 SOFT_CTR0-3: counters, 32 bits wide so that the core's
 *          64-bit virtualization is exercised (a task-clock counter in
 *          ns wraps every 4.3 s).  Every wrap raises the (emulated)
 *          overflow interrupt, as a real PMU with its interrupt enabled.
 *
 * The "hardware" is per-CPU state, touched only on its CPU with
 * interrupts disabled (the core's register ops, the wrap timer, the
 * scheduler tracepoint, the wrap irq_work), so it needs no lock.
 *
 * Events:
 *   task-clock: ns while counting and the CPU runs a task other than
 *               its idle task (for a thread: the ns it ran);
 *   cpu-clock:  ns while counting;
 *   context switches: switches away from the running task while
 *               counting (for a thread: times it was switched out);
 *   system calls: system calls entered while counting (for a thread:
 *               the ones it made).  Exact and under the caller's
 *               control, it makes overflows happen at known points: a
 *               wrap is reported at the system call's entry, with the
 *               caller's user registers.
 * Idle state and context switches come from the sched_switch
 * tracepoint, system calls from sys_enter, registered while a context
 * is loaded.
 *
 * Driver setting 0, clock_unit_ns (PFM_SET_DRV_CONFIG): the clock
 * counters count units of that many ns (1 to 10^9, default 1), so that
 * a long measurement fits the 32-bit counters with fewer wraps.
 *
 * Overflow: an hrtimer pinned to the CPU fires when the first clock
 * counter reaches its wrap; a context-switch counter that wraps in the
 * scheduler raises an irq_work.  Either reports the wrap to the core
 * with pfm_interrupt(), as a PMU interrupt handler does.  Between a wrap
 * and its report a counter reads as 0xffffffff, never as the wrapped
 * value, so the 64-bit value never goes backwards.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/bits.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>
#include <asm/irq_regs.h>
#include <perfmon/pmu.h>

#include "soft_map.h"

#define SOFT_CTR_MASK		GENMASK_ULL(SOFT_CTR_WIDTH - 1, 0)
#define SOFT_CTR_WRAP		BIT_ULL(SOFT_CTR_WIDTH)
/*
 * The wrap timer never fires sooner than this after it is armed: a clock
 * counter written a few ns below its wrap, with as short a reset value,
 * would otherwise keep the CPU in the timer interrupt (any user can write
 * one).  perf clamps its clock events to the same 10 us.  A wrap is then
 * reported up to 10 us late; the counter reads as its highest value
 * until then.
 */
#define SOFT_MIN_TIMER_NS	(10 * NSEC_PER_USEC)

/* Driver settings. */
#define SOFT_CFG_CLOCK_UNIT	0

static const struct pfm_regmap_desc pfm_soft_cfg_desc[] = {
	[SOFT_CFG_CLOCK_UNIT] = PFM_CFG_D("clock_unit_ns", 1),
};

/**
 * struct soft_ctr - one emulated counter
 * @evtsel: its PMC
 * @raw: events since the counter was last written, never wrapped
 * @acked: wraps reported to the core, in units of SOFT_CTR_WRAP
 * @rem: clock counters: ns not yet making a whole unit
 */
struct soft_ctr {
	u64 evtsel;
	u64 raw;
	u64 acked;
	u64 rem;
};

/**
 * struct soft_cpu - the emulated PMU of one CPU
 * @ctr: the counters
 * @running: counting (between start and stop)
 * @idle: the CPU runs its idle task
 * @t_last: local_clock() up to which clock counters are current
 * @unit: ns per count of the clock counters (clock_unit_ns)
 * @wrap_timer: fires at the first clock counter's wrap
 * @wrap_iw: reports a context-switch counter's wrap out of the scheduler
 */
struct soft_cpu {
	struct soft_ctr ctr[SOFT_NUM_CTRS];
	bool running;
	bool idle;
	u64 t_last;
	u64 unit;
	struct hrtimer wrap_timer;
	struct irq_work wrap_iw;
};

static DEFINE_PER_CPU(struct soft_cpu, soft_cpu);

static unsigned int soft_event(const struct soft_ctr *c)
{
	return c->evtsel & SOFT_EVTSEL_EVENT;
}

static bool soft_is_clock(const struct soft_ctr *c)
{
	return soft_event(c) == SOFT_EV_TASK_CLOCK ||
	       soft_event(c) == SOFT_EV_CPU_CLOCK;
}

/* Add @ns to a clock counter, in units of sc->unit. */
static void soft_add_ns(struct soft_cpu *sc, struct soft_ctr *c, u64 ns)
{
	c->raw += div64_u64_rem(ns + c->rem, sc->unit, &c->rem);
}

/* Bring the clock counters up to now. */
static void soft_fold_time(struct soft_cpu *sc)
{
	struct soft_ctr *c;
	u64 now, delta;
	unsigned int i;

	if (!sc->running)
		return;
	now = local_clock();
	delta = now - sc->t_last;
	sc->t_last = now;
	for (i = 0; i < SOFT_NUM_CTRS; i++) {
		c = &sc->ctr[i];
		if (soft_event(c) == SOFT_EV_CPU_CLOCK ||
		    (soft_event(c) == SOFT_EV_TASK_CLOCK && !sc->idle))
			soft_add_ns(sc, c, delta);
	}
}

/* Arm the wrap timer for the clock counter closest to its wrap. */
static void soft_arm_timer(struct soft_cpu *sc)
{
	u64 done, left, next = U64_MAX;
	unsigned int i;

	for (i = 0; sc->running && i < SOFT_NUM_CTRS; i++) {
		if (!soft_is_clock(&sc->ctr[i]))
			continue;
		done = sc->ctr[i].raw - sc->ctr[i].acked;
		/* ns to the wrap; a wrap not reported yet is due now */
		left = done >= SOFT_CTR_WRAP ? 0 :
		       (SOFT_CTR_WRAP - done) * sc->unit - sc->ctr[i].rem;
		next = min(next, left);
	}
	if (next == U64_MAX)
		hrtimer_try_to_cancel(&sc->wrap_timer);
	else
		hrtimer_start(&sc->wrap_timer,
			      ns_to_ktime(max_t(u64, next, SOFT_MIN_TIMER_NS)),
			      HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * Report the counters that wrapped since the last report, with the
 * registers of the code the "interrupt" stopped (NULL: unknown).
 */
static void soft_report_wraps(struct soft_cpu *sc, struct pt_regs *regs)
{
	DECLARE_BITMAP(ovfl, PFM_MAX_PMDS);
	unsigned int i;

	bitmap_zero(ovfl, PFM_MAX_PMDS);
	soft_fold_time(sc);
	for (i = 0; i < SOFT_NUM_CTRS; i++) {
		if (sc->ctr[i].raw - sc->ctr[i].acked >= SOFT_CTR_WRAP) {
			sc->ctr[i].acked += SOFT_CTR_WRAP;
			__set_bit(i, ovfl);
		}
	}
	if (!bitmap_empty(ovfl, PFM_MAX_PMDS))
		pfm_interrupt(ovfl, regs);
	soft_arm_timer(sc);
}

static enum hrtimer_restart soft_wrap_timer_fn(struct hrtimer *t)
{
	soft_report_wraps(container_of(t, struct soft_cpu, wrap_timer),
			  get_irq_regs());
	return HRTIMER_NORESTART;	/* re-armed by hrtimer_start() */
}

static void soft_wrap_irq_work(struct irq_work *iw)
{
	soft_report_wraps(container_of(iw, struct soft_cpu, wrap_iw),
			  get_irq_regs());
}

/* Count one event of kind @ev on every counter selecting it. */
static bool soft_count(struct soft_cpu *sc, enum pfm_soft_event ev)
{
	struct soft_ctr *c;
	bool wrapped = false;
	unsigned int i;

	for (i = 0; i < SOFT_NUM_CTRS; i++) {
		c = &sc->ctr[i];
		if (soft_event(c) == ev && ++c->raw - c->acked >= SOFT_CTR_WRAP)
			wrapped = true;
	}
	return wrapped;
}

static void soft_sched_switch(void *data, bool preempt,
			      struct task_struct *prev,
			      struct task_struct *next, unsigned int prev_state)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);

	if (sc->running) {
		soft_fold_time(sc);
		/* The scheduler's locks are held: report later. */
		if (soft_count(sc, SOFT_EV_CTX_SWITCHES))
			irq_work_queue(&sc->wrap_iw);
	}
	sc->idle = is_idle_task(next);
}

/*
 * sys_enter (preemption disabled by the tracepoint): every counter moves
 * first, so a sample taken at one counter's wrap sees the others
 * including this call.  The wrap is reported here, as an interrupt
 * raised by the system call instruction would be.
 */
static void soft_sys_enter(void *data, struct pt_regs *regs, long id)
{
	struct soft_cpu *sc;
	unsigned long flags;

	local_irq_save(flags);
	sc = this_cpu_ptr(&soft_cpu);
	if (sc->running && soft_count(sc, SOFT_EV_SYSCALLS))
		soft_report_wraps(sc, regs);
	local_irq_restore(flags);
}

static void soft_write_pmc(struct pfm_pmu_config *pmu, void *priv, u16 cnum,
			   u64 value)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);

	soft_fold_time(sc);
	sc->ctr[cnum].evtsel = value;
	soft_arm_timer(sc);
}

static void soft_write_pmd(struct pfm_pmu_config *pmu, void *priv, u16 cnum,
			   u64 value)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);

	soft_fold_time(sc);
	sc->ctr[cnum].raw = value & SOFT_CTR_MASK;
	sc->ctr[cnum].acked = 0;
	sc->ctr[cnum].rem = 0;
	soft_arm_timer(sc);
}

static u64 soft_read_pmd(struct pfm_pmu_config *pmu, void *priv, u16 cnum)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);
	u64 v;

	soft_fold_time(sc);
	v = sc->ctr[cnum].raw - sc->ctr[cnum].acked;
	/* Wrapped, not yet reported: hold at the top (see the file comment). */
	return v >= SOFT_CTR_WRAP ? SOFT_CTR_MASK : v;
}

static void soft_start(struct pfm_pmu_config *pmu, void *priv)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);

	sc->t_last = local_clock();
	sc->idle = is_idle_task(current);
	sc->running = true;
	soft_arm_timer(sc);
}

static void soft_stop(struct pfm_pmu_config *pmu, void *priv)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);

	soft_fold_time(sc);
	sc->running = false;
	/* Never waits: this may run inside the timer's own callback. */
	hrtimer_try_to_cancel(&sc->wrap_timer);
}

static int soft_cfg_check(u16 num, u64 value, u32 ctx_flags)
{
	/* num < ARRAY_SIZE(pfm_soft_cfg_desc): checked by the core */
	return value >= 1 && value <= NSEC_PER_SEC ? 0 : -EINVAL;
}

static void soft_load_cfg(struct pfm_pmu_config *pmu, void *priv,
			  const u64 *cfg)
{
	struct soft_cpu *sc = this_cpu_ptr(&soft_cpu);

	soft_fold_time(sc);
	sc->unit = cfg ? cfg[SOFT_CFG_CLOCK_UNIT] : 1;
	soft_arm_timer(sc);
}

/*
 * The tracepoints the events come from, registered while contexts are
 * loaded (found by name: they are not exported to modules).
 */
struct soft_tp {
	const char *name;
	void *probe;
	struct tracepoint *tp;
};

static struct soft_tp soft_tps[] = {
	{ .name = "sched_switch", .probe = soft_sched_switch },
	{ .name = "sys_enter", .probe = soft_sys_enter },
};

static void soft_find_tp(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(soft_tps); i++)
		if (!strcmp(tp->name, soft_tps[i].name))
			soft_tps[i].tp = tp;
}

static void soft_unhook(unsigned int n)
{
	while (n--)
		tracepoint_probe_unregister(soft_tps[n].tp, soft_tps[n].probe,
					    NULL);
	tracepoint_synchronize_unregister();
}

static int soft_hook(void)
{
	unsigned int i;
	int ret;

	if (!soft_tps[0].tp)
		for_each_kernel_tracepoint(soft_find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(soft_tps); i++) {
		if (!soft_tps[i].tp) {
			pr_err("no %s tracepoint: pfm_soft needs a kernel with CONFIG_TRACEPOINTS and CONFIG_HAVE_SYSCALL_TRACEPOINTS\n",
			       soft_tps[i].name);
			ret = -ENODEV;
			goto unhook;
		}
		ret = tracepoint_probe_register(soft_tps[i].tp,
						soft_tps[i].probe, NULL);
		if (ret) {
			pr_err("cannot hook %s (%d)\n", soft_tps[i].name, ret);
			goto unhook;
		}
	}
	return 0;

unhook:
	soft_unhook(i);
	return ret;
}

/*
 * The probes stay registered for SOFT_UNHOOK_DELAY after the last
 * context unloads.  Unregistering waits for two grace periods
 * (tracepoint_synchronize_unregister(): 30 to 40 ms in the 6.12 TCG
 * guest), and the core releases the PMU under its sessions mutex: a
 * monitor that unloaded its only context and loaded it again waited
 * that long, and every load and unload of the machine with it.  perf
 * defers its scheduler hooks' static key by a second for the same
 * reason.  A probe that runs meanwhile finds its CPU's counters stopped
 * (@running false) and only follows the idle task.
 */
#define SOFT_UNHOOK_DELAY	HZ

static DEFINE_MUTEX(soft_hook_mutex);
static bool soft_hooked;	/* the probes are registered */
static bool soft_wanted;	/* between acquire and release */

static void soft_unhook_fn(struct work_struct *work)
{
	mutex_lock(&soft_hook_mutex);
	if (soft_hooked && !soft_wanted) {
		soft_unhook(ARRAY_SIZE(soft_tps));
		soft_hooked = false;
	}
	mutex_unlock(&soft_hook_mutex);
}

static DECLARE_DELAYED_WORK(soft_unhook_work, soft_unhook_fn);

static int soft_acquire(struct pfm_pmu_config *pmu)
{
	int ret = 0;

	mutex_lock(&soft_hook_mutex);
	if (!soft_hooked)
		ret = soft_hook();
	soft_hooked = !ret;
	soft_wanted = !ret;
	mutex_unlock(&soft_hook_mutex);
	return ret;
}

static void soft_release(struct pfm_pmu_config *pmu)
{
	mutex_lock(&soft_hook_mutex);
	soft_wanted = false;
	mutex_unlock(&soft_hook_mutex);
	mod_delayed_work(system_wq, &soft_unhook_work, SOFT_UNHOOK_DELAY);
}

static const struct pfm_pmu_settings soft_settings = {
	.desc		= pfm_soft_cfg_desc,
	.num		= ARRAY_SIZE(pfm_soft_cfg_desc),
	.check		= soft_cfg_check,
};

static const struct pfm_pmu_ops soft_ops = {
	.acquire	= soft_acquire,
	.release	= soft_release,
	.write_pmc	= soft_write_pmc,
	.write_pmd	= soft_write_pmd,
	.read_pmd	= soft_read_pmd,
	.start		= soft_start,
	.stop		= soft_stop,
	.load_cfg	= soft_load_cfg,
};

/* Filled by soft_probe_map() (soft_map.c), with this engine's settings. */
static struct pfm_pmu_map soft_map;

static struct pfm_pmu_config pfm_soft_pmu = {
	.owner		= THIS_MODULE,
	.map		= &soft_map,
	.ops		= &soft_ops,
};

static int __init pfm_soft_init(void)
{
	struct soft_cpu *sc;
	int cpu;

	for_each_possible_cpu(cpu) {
		sc = per_cpu_ptr(&soft_cpu, cpu);
		sc->unit = 1;
		hrtimer_init(&sc->wrap_timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		sc->wrap_timer.function = soft_wrap_timer_fn;
		/* Hard: it reports as an interrupt would, also on PREEMPT_RT. */
		sc->wrap_iw = IRQ_WORK_INIT_HARD(soft_wrap_irq_work);
	}
	soft_probe_map(&soft_map, &soft_settings);
	return pfm_pmu_register(&pfm_soft_pmu);
}

/* No context holds the module any more: every CPU's PMU is stopped. */
static void __exit pfm_soft_exit(void)
{
	struct soft_cpu *sc;
	int cpu;

	pfm_pmu_unregister(&pfm_soft_pmu);
	/* The probes, if the last release's delay has not run out yet. */
	cancel_delayed_work_sync(&soft_unhook_work);
	if (soft_hooked)
		soft_unhook(ARRAY_SIZE(soft_tps));
	for_each_possible_cpu(cpu) {
		sc = per_cpu_ptr(&soft_cpu, cpu);
		hrtimer_cancel(&sc->wrap_timer);
		irq_work_sync(&sc->wrap_iw);
	}
}

module_init(pfm_soft_init);
module_exit(pfm_soft_exit);

MODULE_DESCRIPTION("perfmon: software PMU description (clock and scheduler counters)");
MODULE_LICENSE("GPL");
/* Loaded by itself only when asked for: perfmon.pmu=soft (core/pmu.c). */
MODULE_ALIAS("pfm-pmu-soft");
MODULE_IMPORT_NS(PERFMON_PMU_LIB);
