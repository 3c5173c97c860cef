// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_perf_simpmu: a SIMULATED x86 PMU for perf, for tests only.  QEMU's
 * TCG has no x86 PMU, so perf registers no "cpu" PMU there; this module
 * registers one in its place (type PERF_TYPE_RAW, which perf also routes
 * PERF_TYPE_HARDWARE events to), for pfm_perf's x86 map to be tried on
 * (the test module pfm_perf_x86sim, perf_x86_sim.c, takes its CPUID from
 * the parameters here).  It stays loaded: on 6.1 a thread's perf
 * context keeps a pointer to the PMU it was made for until the thread
 * exits, so a hardware PMU must outlive every thread that counted on it.
 *
 * The counters are what the parameters say, read when an event is
 * scheduled: @counters general ones, which count any event, and unless
 * @amd, @fixed fixed ones, each of one event (0x00c0, 0x003c, 0x0300,
 * 0x0400: perf's encodings).  An event is given a counter when perf adds
 * it, or refused with -EAGAIN when none is free (perf then leaves it
 * unscheduled, as on hardware).  Counting happens when a test writes
 * debugfs pfm_perf_simpmu/tick:
 *   tick   (write) N: every event running on the writing CPU counts N;
 *          one that samples and reaches its period reports its overflow
 *          from an irq_work (a hard interrupt), as from the PMU's
 *          interrupt; its overflow handler is called directly: perf's
 *          perf_event_overflow() is not exported (so no throttling)
 *   events (read)  the events running on this CPU: counter, config,
 *          exclude_user, exclude_kernel, exclude_host, exclude_guest
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/irq_work.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <asm/irq_regs.h>

#include <perfmon/compat.h>

#include "pfm_perf_sim.h"

static bool amd;
module_param(amd, bool, 0644);
MODULE_PARM_DESC(amd, "an AMD PMU (default: Intel)");
static uint counters = 4;
module_param(counters, uint, 0644);
MODULE_PARM_DESC(counters, "general counters (Intel: 1-8; AMD: 4 legacy or 6 core)");
static uint fixed = 3;
module_param(fixed, uint, 0644);
MODULE_PARM_DESC(fixed, "Intel fixed counters (0-4)");

#define SIM_GP		8
#define SIM_FIXED	4
#define SIM_SLOTS	(SIM_GP + SIM_FIXED)

static const u16 psim_fixed_event[SIM_FIXED] = {
	0x00c0, 0x003c, 0x0300, 0x0400,
};

/**
 * struct psim_cpu - one CPU's simulated counters
 * @ev: the event each counter holds (general ones first), or NULL
 * @over: counters whose event reached its period, to report
 * @iw: reports them from a hard interrupt
 */
struct psim_cpu {
	struct perf_event *ev[SIM_SLOTS];
	unsigned long over;
	struct irq_work iw;
};

static DEFINE_PER_CPU(struct psim_cpu, psim_cpu);
static struct dentry *psim_dir;

/**
 * pfm_perf_sim_shape() - the simulated PMU, as CPUID would describe it
 * @shape: filled from the module parameters
 *
 * Return: 0, or -EINVAL when the parameters describe no valid PMU.
 */
int pfm_perf_sim_shape(struct pfm_perf_sim_shape *shape)
{
	shape->intel = !amd;
	shape->counters = counters;
	shape->fixed = amd ? 0 : fixed;
	if (!counters || counters > SIM_GP || fixed > SIM_FIXED ||
	    (amd && counters != 4 && counters != 6))
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_GPL(pfm_perf_sim_shape);

/* Intel's reference cycles and slots: perf's encodings for fixed ones. */
static bool psim_pseudo(u64 code)
{
	return code == 0x0300 || code == 0x0400;
}

/* The fixed counter that counts @code, or -1. */
static int psim_fixed_slot(u64 code)
{
	unsigned int i;

	if (amd)
		return -1;
	for (i = 0; i < min(fixed, SIM_FIXED); i++)
		if (code == psim_fixed_event[i])
			return SIM_GP + i;
	return -1;
}

static int psim_event_init(struct perf_event *event)
{
	struct perf_event_attr *attr = &event->attr;

	switch (attr->type) {
	case PERF_TYPE_HARDWARE:
		if (attr->config == PERF_COUNT_HW_INSTRUCTIONS)
			event->hw.config = 0x00c0;
		else if (attr->config == PERF_COUNT_HW_CPU_CYCLES)
			event->hw.config = 0x003c;
		else
			return -ENOENT;
		return 0;
	case PERF_TYPE_RAW:
		/* Pseudo-events count on their fixed counter only. */
		if (psim_pseudo(attr->config) &&
		    psim_fixed_slot(attr->config) < 0)
			return -EINVAL;
		event->hw.config = attr->config;
		return 0;
	}
	return -ENOENT;
}

/* perf's x86 rule: the period left, reloaded once it is used up. */
static void psim_set_period(struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;
	s64 left = local64_read(&hwc->period_left);
	s64 period = hwc->sample_period;

	if (left <= -period || left <= 0) {
		left = left <= -period ? period : left + period;
		local64_set(&hwc->period_left, left);
		hwc->last_period = period;
	}
}

static void psim_start(struct perf_event *event, int flags)
{
	if (flags & PERF_EF_RELOAD)
		psim_set_period(event);
	event->hw.state = 0;
}

static void psim_stop(struct perf_event *event, int flags)
{
	event->hw.state |= PERF_HES_STOPPED | PERF_HES_UPTODATE;
}

/* A counter for @event on this CPU: its fixed one, else a general one. */
static int psim_add(struct perf_event *event, int flags)
{
	struct psim_cpu *s = this_cpu_ptr(&psim_cpu);
	int i = psim_fixed_slot(event->hw.config);

	if (i < 0 || s->ev[i]) {
		if (psim_pseudo(event->hw.config))
			return -EAGAIN;
		for (i = 0; i < min(counters, SIM_GP) && s->ev[i]; i++)
			;
		if (i == min(counters, SIM_GP))
			return -EAGAIN;
	}
	s->ev[i] = event;
	event->hw.idx = i;
	event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	if (flags & PERF_EF_START)
		psim_start(event, PERF_EF_RELOAD);
	return 0;
}

static void psim_del(struct perf_event *event, int flags)
{
	struct psim_cpu *s = this_cpu_ptr(&psim_cpu);

	psim_stop(event, PERF_EF_UPDATE);
	s->ev[event->hw.idx] = NULL;
	clear_bit(event->hw.idx, &s->over);
	event->hw.idx = -1;
}

/* The count is kept in the event itself: nothing to bring up to date. */
static void psim_read(struct perf_event *event)
{
}

/*
 * 6.1 lets one PMU take perf_hw_context for the kernel's life unless it
 * is one of several (hybrid CPUs): so that the module loads again
 * (include/perfmon/compat.h).
 */
static struct pmu psim_pmu = {
	.module		= THIS_MODULE,
	.task_ctx_nr	= perf_hw_context,
	.capabilities	= PFM_PERF_CAP_SHARED_HW_CTX,
	.event_init	= psim_event_init,
	.add		= psim_add,
	.del		= psim_del,
	.start		= psim_start,
	.stop		= psim_stop,
	.read		= psim_read,
};

/* The overflows of this CPU, reported from its interrupt. */
static void psim_irq_work(struct irq_work *iw)
{
	struct psim_cpu *s = this_cpu_ptr(&psim_cpu);
	struct pt_regs *regs = get_irq_regs();
	struct perf_sample_data data;
	struct perf_event *event;
	unsigned int i;

	for_each_set_bit(i, &s->over, SIM_SLOTS) {
		clear_bit(i, &s->over);
		event = s->ev[i];
		if (!event || event->hw.state)
			continue;
		perf_sample_data_init(&data, 0, event->hw.last_period);
		psim_set_period(event);
		event->overflow_handler(event, &data, regs);
	}
}

/* Counting on this CPU, interrupts off. */
static void psim_tick(u64 n)
{
	struct psim_cpu *s = this_cpu_ptr(&psim_cpu);
	struct perf_event *event;
	unsigned int i;

	for (i = 0; i < SIM_SLOTS; i++) {
		event = s->ev[i];
		if (!event || event->hw.state)
			continue;
		local64_add(n, &event->count);
		if (!is_sampling_event(event))
			continue;
		if (local64_sub_return(n, &event->hw.period_left) <= 0)
			set_bit(i, &s->over);
	}
	if (s->over)
		irq_work_queue(&s->iw);
}

static ssize_t psim_tick_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	unsigned long flags;
	u64 n;
	int ret;

	ret = kstrtou64_from_user(ubuf, len, 0, &n);
	if (ret)
		return ret;
	local_irq_save(flags);
	psim_tick(n);
	local_irq_restore(flags);
	return len;
}

static const struct file_operations psim_tick_fops = {
	.write = psim_tick_write,
};

static int psim_events_show(struct seq_file *m, void *v)
{
	struct psim_cpu *s;
	struct perf_event *e;
	unsigned int i;

	/* Events leave a CPU only from its interrupts-off paths. */
	local_irq_disable();
	s = this_cpu_ptr(&psim_cpu);
	for (i = 0; i < SIM_SLOTS; i++) {
		e = s->ev[i];
		if (e)
			seq_printf(m, "ctr=%u config=%#llx exclude_user=%u exclude_kernel=%u exclude_host=%u exclude_guest=%u\n",
				   i, e->attr.config, e->attr.exclude_user,
				   e->attr.exclude_kernel, e->attr.exclude_host,
				   e->attr.exclude_guest);
	}
	local_irq_enable();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(psim_events);

static int __init pfm_perf_simpmu_init(void)
{
	unsigned int cpu;
	int ret;

	/* A per-CPU initializer would not be relocated (see x86_pmu.c). */
	for_each_possible_cpu(cpu)
		per_cpu(psim_cpu, cpu).iw = IRQ_WORK_INIT_HARD(psim_irq_work);
	ret = perf_pmu_register(&psim_pmu, "cpu", PERF_TYPE_RAW);
	if (ret) {
		pr_err("perf already has a PMU of type %u (%d): this test module is for machines without one\n",
		       PERF_TYPE_RAW, ret);
		return ret;
	}
	psim_dir = debugfs_create_dir("pfm_perf_simpmu", NULL);
	debugfs_create_file("tick", 0200, psim_dir, NULL, &psim_tick_fops);
	debugfs_create_file("events", 0400, psim_dir, NULL, &psim_events_fops);
	pr_info("SIMULATED x86 perf PMU registered (test module)\n");
	return 0;
}

static void __exit pfm_perf_simpmu_exit(void)
{
	unsigned int cpu;

	debugfs_remove_recursive(psim_dir);
	perf_pmu_unregister(&psim_pmu);
	for_each_possible_cpu(cpu)
		irq_work_sync(per_cpu_ptr(&psim_cpu.iw, cpu));
}

module_init(pfm_perf_simpmu_init);
module_exit(pfm_perf_simpmu_exit);

MODULE_DESCRIPTION("perfmon tests: a simulated x86 PMU for perf");
MODULE_LICENSE("GPL");
