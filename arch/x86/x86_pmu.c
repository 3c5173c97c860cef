// SPDX-License-Identifier: GPL-2.0
/*
 * The x86 PMU engine: what the Intel and AMD descriptions share, in
 * pfm_pmu_lib; it drives one registered description at a time, on the
 * hardware accessors that description's module gives (struct
 * pfm_x86_hw).
 *
 * Counter width.  The core extends counters to 64 bits from their wraps,
 * so every wrap must raise the overflow interrupt and be recognized as
 * ours.  Where a counter can be written at its full width and a global
 * status register names the counters that wrapped, it is used as is.
 * Where not (AMD without PerfMonV2, Intel without full-width writes),
 * the core sees one bit less (or 31 bits, the width legacy IA32_PMCx
 * writes keep) and every write sets the bits above it (@bias): the
 * counter wraps, and its top bit clears, exactly when the core's value
 * would, and the NMI handler sets the bias again.
 *
 * Overflow.  The interrupt is an NMI (LVTPC in NMI mode): the handler
 * takes no lock.  It claims the NMI only when one of our counters wrapped,
 * clears that status (or restores the bias), records the counters in
 * this CPU's pending word and queues an irq_work, which reports them to
 * the core with pfm_interrupt().  Until then a pending counter reads as
 * its highest value (the core's rule).  LVTPC is re-armed on every NMI
 * while the PMU is ours: Intel masks it when it delivers one.  The status
 * is read again until it is clear, so that a wrap during the handler is
 * not lost (pfm_x86_nmi()).
 */
#define pr_fmt(fmt) "perfmon: " fmt

#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/irq_work.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/smp.h>
#include <asm/nmi.h>
#include <asm/perf_event.h>

#include "pfm_x86.h"

/* Driver settings */
#define PFM_X86_CFG_USER_RDPMC	0

/* Status reads per NMI before the handler gives up (perf's limit). */
#define PFM_X86_NMI_LOOPS	100

/**
 * struct pfm_x86_cpu - the engine's state on one CPU
 * @pending: status bits of counters that wrapped, not yet reported;
 *           set from NMI, so only changed by single-instruction per-CPU
 *           ops
 * @evtsel: event selects as programmed (with the interrupt bit), for
 *          PMUs gated per counter, where stop clears their enable bit
 * @started: counting is on (start called, stop not yet)
 * @live: cpu_setup ran here and cpu_teardown did not
 * @pce_set: CR4.PCE was changed for the live context's setting
 * @pce_was: CR4.PCE before that change
 * @regs: registers at the last claimed NMI, for the core's samples (the
 *        irq_work that reports the wrap runs after the NMI returned)
 */
struct pfm_x86_cpu {
	u64 pending;
	struct pt_regs regs;
	u64 evtsel[PFM_X86_MAX_GP];
	bool started;
	bool live;
	bool pce_set;
	bool pce_was;
};

static void pfm_x86_irq_work(struct irq_work *work);

static struct pfm_x86_pmu *pfm_x86;
static DEFINE_PER_CPU(struct pfm_x86_cpu, pfm_x86_cpu);
static DEFINE_PER_CPU(struct irq_work, pfm_x86_work);
static atomic64_t pfm_x86_claimed;

static const struct pfm_regmap_desc pfm_x86_cfg_desc[] = {
	[PFM_X86_CFG_USER_RDPMC] = PFM_CFG_D("user_rdpmc", 0),
};

static struct pfm_x86_pmu *to_x86(struct pfm_pmu_config *pmu)
{
	return container_of(pmu, struct pfm_x86_pmu, pmu);
}

/* Has counter @c wrapped without its overflow being reported yet? */
static bool pfm_x86_wrapped(const struct pfm_x86_pmu *xp,
			    const struct pfm_x86_ctr *c, u64 hw)
{
	if (this_cpu_read(pfm_x86_cpu.pending) & BIT_ULL(c->status))
		return true;
	if (xp->global_status)
		return xp->hw->read_msr(xp->global_status) & BIT_ULL(c->status);
	return c->bias && !(hw & c->top);
}

static u64 pfm_x86_read_pmd(struct pfm_pmu_config *pmu, void *priv, u16 cnum)
{
	const struct pfm_x86_pmu *xp = to_x86(pmu);
	const struct pfm_x86_ctr *c = &xp->ctr[cnum];
	u64 mask = pfm_pmu_ovfl_mask(pmu->map);
	u64 hw = xp->hw->read_msr(c->rd);

	return pfm_x86_wrapped(xp, c, hw) ? mask : hw & mask;
}

/*
 * A new value: a wrap of the old one, reported or not, no longer
 * concerns anybody (the core saved the old value first).
 */
static void pfm_x86_write_pmd(struct pfm_pmu_config *pmu, void *priv, u16 cnum,
			      u64 value)
{
	struct pfm_x86_pmu *xp = to_x86(pmu);
	const struct pfm_x86_ctr *c = &xp->ctr[cnum];

	this_cpu_and(pfm_x86_cpu.pending, ~BIT_ULL(c->status));
	if (xp->global_clr)
		xp->hw->write_msr(xp->global_clr, BIT_ULL(c->status));
	xp->hw->write_msr(c->wr, value | c->bias);
}

/*
 * The engine needs every wrap: the interrupt bits are always set.  Intel
 * and AMD event selects share the INT and EN bits.
 */
static void pfm_x86_write_pmc(struct pfm_pmu_config *pmu, void *priv, u16 cnum,
			      u64 value)
{
	struct pfm_x86_pmu *xp = to_x86(pmu);
	struct pfm_x86_cpu *pc = this_cpu_ptr(&pfm_x86_cpu);

	if (cnum >= PFM_X86_FIXED_BASE) {
		xp->hw->write_msr(xp->sel_msr[cnum], value | xp->fixed_pmi);
		return;
	}
	value |= ARCH_PERFMON_EVENTSEL_INT;
	pc->evtsel[cnum] = value;
	/* Gated per counter: stopped means not enabled. */
	if (!xp->global_ctrl && !pc->started)
		value &= ~ARCH_PERFMON_EVENTSEL_ENABLE;
	xp->hw->write_msr(xp->sel_msr[cnum], value);
}

/* Without a global enable, each event select carries the gate. */
static void pfm_x86_gate(struct pfm_x86_pmu *xp, bool on)
{
	struct pfm_x86_cpu *pc = this_cpu_ptr(&pfm_x86_cpu);
	unsigned int i;
	u64 v;

	pc->started = on;
	if (xp->global_ctrl) {
		xp->hw->write_msr(xp->global_ctrl, on ? xp->claim : 0);
		return;
	}
	for (i = 0; i < xp->num_gp; i++) {
		v = pc->evtsel[i];
		xp->hw->write_msr(xp->sel_msr[i], on ? v : v & ~ARCH_PERFMON_EVENTSEL_ENABLE);
	}
}

static void pfm_x86_start(struct pfm_pmu_config *pmu, void *priv)
{
	pfm_x86_gate(to_x86(pmu), true);
}

static void pfm_x86_stop(struct pfm_pmu_config *pmu, void *priv)
{
	pfm_x86_gate(to_x86(pmu), false);
}

/* Every control register at 0, no overflow left over. */
static void pfm_x86_clear(struct pfm_x86_pmu *xp)
{
	struct pfm_x86_cpu *pc = this_cpu_ptr(&pfm_x86_cpu);
	unsigned int i;

	if (xp->global_ctrl)
		xp->hw->write_msr(xp->global_ctrl, 0);
	for_each_set_bit(i, xp->pmcs, PFM_X86_NUM_REGS)
		xp->hw->write_msr(xp->sel_msr[i], 0);
	if (xp->global_clr)
		xp->hw->write_msr(xp->global_clr, xp->claim);
	memset(pc->evtsel, 0, sizeof(pc->evtsel));
	pc->started = false;
	this_cpu_write(pfm_x86_cpu.pending, 0);
}

static void pfm_x86_cpu_setup(struct pfm_pmu_config *pmu)
{
	struct pfm_x86_pmu *xp = to_x86(pmu);

	pfm_x86_clear(xp);
	xp->hw->lvtpc_nmi();
	this_cpu_write(pfm_x86_cpu.live, true);
}

/* LVTPC stays in NMI mode, as perf leaves and expects it. */
static void pfm_x86_cpu_teardown(struct pfm_pmu_config *pmu)
{
	this_cpu_write(pfm_x86_cpu.live, false);
	pfm_x86_clear(to_x86(pmu));
}

/*
 * Without a global status register: a counter in use whose top bit is
 * clear wrapped (every write sets it).  Its bias is set again at once,
 * keeping the count, so that the next wrap is seen too.
 */
static u64 pfm_x86_scan_wrapped(struct pfm_x86_pmu *xp)
{
	struct pfm_x86_cpu *pc = this_cpu_ptr(&pfm_x86_cpu);
	const struct pfm_x86_ctr *c;
	unsigned int i;
	u64 ovf = 0, hw;

	for (i = 0; i < xp->num_gp; i++) {
		c = &xp->ctr[i];
		if (!(pc->evtsel[i] & ARCH_PERFMON_EVENTSEL_ENABLE))
			continue;
		hw = xp->hw->read_msr(c->rd);
		if (hw & c->top)
			continue;
		xp->hw->write_msr(c->wr, hw | c->bias);
		ovf |= BIT_ULL(c->status);
	}
	return ovf;
}

/* With a global status register: restore the bias of biased counters. */
static void pfm_x86_rebias(struct pfm_x86_pmu *xp, u64 ovf)
{
	const struct pfm_x86_ctr *c;
	unsigned int i;

	for_each_set_bit(i, xp->ctrs, PFM_X86_NUM_REGS) {
		c = &xp->ctr[i];
		if (c->bias && (ovf & BIT_ULL(c->status)))
			xp->hw->write_msr(c->wr, xp->hw->read_msr(c->rd) | c->bias);
	}
}

/*
 * Find the counters that wrapped since the last pass and acknowledge
 * them: clear their status bits, or set the bias of a scanned counter
 * again.  They are added to this CPU's pending word.
 */
static u64 pfm_x86_ack(struct pfm_x86_pmu *xp)
{
	u64 ovf;

	if (!xp->global_status) {
		ovf = pfm_x86_scan_wrapped(xp);
		this_cpu_or(pfm_x86_cpu.pending, ovf);
		return ovf;
	}
	ovf = xp->hw->read_msr(xp->global_status) & xp->claim;
	if (!ovf)
		return 0;
	/* Rebias before the status clears: read_pmd stays at max. */
	this_cpu_or(pfm_x86_cpu.pending, ovf);
	pfm_x86_rebias(xp, ovf);
	xp->hw->write_msr(xp->global_clr, ovf);
	return ovf;
}

/**
 * pfm_x86_nmi() - the NMI handler (registered by the accessors)
 * @cmd: NMI_LOCAL
 * @regs: interrupted registers
 *
 * A counter may wrap while the handler runs, after the status was read.
 * Intel masks LVTPC as it delivers a PMI, so such a wrap raises no NMI
 * of its own: the status is read again after each acknowledgment until
 * it is clear, as perf's intel_pmu_handle_irq() does, at most
 * PFM_X86_NMI_LOOPS times (a status bit that never clears would keep
 * the CPU here).  LVTPC is unmasked first, so a wrap after the last read
 * raises a new NMI.  A wrap handled here may have raised an NMI too (AMD
 * does not mask LVTPC), which the CPU holds until this one returns: the
 * number of counters handled is returned, and when it is above one the
 * kernel swallows such a back-to-back NMI instead of calling it unknown.
 *
 * Context: NMI: no lock, no sleep; anything more is left to the irq_work.
 * Return: how many of our counters wrapped, or NMI_DONE for none.
 */
int pfm_x86_nmi(unsigned int cmd, struct pt_regs *regs)
{
	struct pfm_x86_pmu *xp = pfm_x86;
	unsigned int loops = 0;
	u64 ovf, all = 0;

	if (!this_cpu_read(pfm_x86_cpu.live))
		return NMI_DONE;
	xp->hw->lvtpc_nmi();
	while ((ovf = pfm_x86_ack(xp))) {
		all |= ovf;
		if (++loops == PFM_X86_NMI_LOOPS) {
			/* Once per description, not per pfm_pmu_lib load. */
			if (!xchg(&xp->loop_stuck_logged, true))
				pr_warn("%s: overflow interrupt loop stuck (status %#llx after %u passes)\n",
					xp->name, ovf, loops);
			break;
		}
	}
	if (!all)
		return NMI_DONE;
	*this_cpu_ptr(&pfm_x86_cpu.regs) = *regs;
	irq_work_queue(this_cpu_ptr(&pfm_x86_work));
	atomic64_inc(&pfm_x86_claimed);
	return hweight64(all);
}
EXPORT_SYMBOL_NS_GPL(pfm_x86_nmi, PERFMON_PMU_LIB);

/* Pending status bits to the PMDs the core knows them by. */
static void pfm_x86_irq_work(struct irq_work *work)
{
	DECLARE_BITMAP(ovfl, PFM_MAX_PMDS);
	struct pfm_x86_pmu *xp = pfm_x86;
	unsigned int i;
	u64 ovf;

	ovf = this_cpu_xchg(pfm_x86_cpu.pending, 0);
	if (!ovf)
		return;
	bitmap_zero(ovfl, PFM_MAX_PMDS);
	for_each_set_bit(i, xp->ctrs, PFM_X86_NUM_REGS) {
		if (ovf & BIT_ULL(xp->ctr[i].status))
			__set_bit(i, ovfl);
	}
	pfm_interrupt(ovfl, this_cpu_ptr(&pfm_x86_cpu.regs));
}

/**
 * pfm_x86_nmis_claimed() - NMIs the handler claimed for the description
 * registered last (pfm_x86_init())
 *
 * Return: the count.
 */
u64 pfm_x86_nmis_claimed(void)
{
	return atomic64_read(&pfm_x86_claimed);
}
EXPORT_SYMBOL_NS_GPL(pfm_x86_nmis_claimed, PERFMON_PMU_LIB);

static int pfm_x86_cfg_check(u16 num, u64 value, u32 ctx_flags)
{
	if (value > 1)
		return -EINVAL;
	/* On a monitored CPU any thread could read the counters. */
	if (value && (ctx_flags & PFM_FL_SYSTEM_WIDE))
		return -EINVAL;
	return 0;
}

/*
 * user_rdpmc sets CR4.PCE while the context is live here; perf's own
 * policy for the CPU (its rdpmc sysctl) comes back afterwards.
 */
static void pfm_x86_load_cfg(struct pfm_pmu_config *pmu, void *priv,
			     const u64 *cfg)
{
	struct pfm_x86_cpu *pc = this_cpu_ptr(&pfm_x86_cpu);
	const struct pfm_x86_hw *hw = to_x86(pmu)->hw;

	if (cfg && cfg[PFM_X86_CFG_USER_RDPMC] && !pc->pce_set) {
		pc->pce_was = hw->pce();
		pc->pce_set = true;
		hw->set_pce(true);
	} else if (!cfg && pc->pce_set) {
		hw->set_pce(pc->pce_was);
		pc->pce_set = false;
	}
}

/*
 * The number rdpmc takes for the counter read at MSR @rd: Intel's
 * general-purpose counters by position, its fixed ones with bit 30 set;
 * AMD's legacy and core counters by position.  ~0 for none.
 */
static u32 pfm_x86_rdpmc_number(u32 rd)
{
	if (rd >= MSR_ARCH_PERFMON_PERFCTR0 &&
	    rd < MSR_ARCH_PERFMON_PERFCTR0 + PFM_X86_MAX_GP)
		return rd - MSR_ARCH_PERFMON_PERFCTR0;
	if (rd >= MSR_ARCH_PERFMON_FIXED_CTR0 &&
	    rd < MSR_ARCH_PERFMON_FIXED_CTR0 + PFM_X86_MAX_FIXED)
		return BIT(30) | (rd - MSR_ARCH_PERFMON_FIXED_CTR0);
	if (rd >= MSR_K7_PERFCTR0 && rd < MSR_K7_PERFCTR0 + 4)
		return rd - MSR_K7_PERFCTR0;
	if (rd >= MSR_F15H_PERF_CTR &&
	    rd < MSR_F15H_PERF_CTR + 2 * PFM_X86_MAX_GP &&
	    !((rd - MSR_F15H_PERF_CTR) & 1))
		return (rd - MSR_F15H_PERF_CTR) / 2;
	return ~0U;
}

/*
 * With user_rdpmc the monitored thread reads counter @cnum with rdpmc:
 * the control page's index is rdpmc's number + 1.
 */
static u32 pfm_x86_user_index(struct pfm_pmu_config *pmu, void *priv,
			      const u64 *cfg, u16 cnum)
{
	u32 n = pfm_x86_rdpmc_number(to_x86(pmu)->ctr[cnum].rd);

	return cfg[PFM_X86_CFG_USER_RDPMC] && n != ~0U ? n + 1 : 0;
}

/*
 * Take every general-purpose counter from the NMI counter allocator that
 * perf uses too (it holds all of them while any perf hardware event, the
 * NMI watchdog's included, exists).  Fixed counters have no entry there:
 * perf never uses them without holding the general-purpose ones.
 */
static int pfm_x86_reserve_all(struct pfm_x86_pmu *xp)
{
	unsigned int i;

	for (i = 0; i < xp->num_gp; i++) {
		if (xp->hw->reserve(xp->ctr[i].rd, xp->sel_msr[i]))
			continue;
		pr_err("%s: counter %u is in use by perf (a hardware event or the NMI watchdog): run 'sysctl kernel.nmi_watchdog=0' and end perf sessions, then load again\n",
		       xp->name, i);
		goto release_taken;
	}
	return 0;

release_taken:
	while (i--)
		xp->hw->release(xp->ctr[i].rd, xp->sel_msr[i]);
	return -EBUSY;
}

static void pfm_x86_release_all(struct pfm_x86_pmu *xp)
{
	unsigned int i;

	for (i = 0; i < xp->num_gp; i++)
		xp->hw->release(xp->ctr[i].rd, xp->sel_msr[i]);
}

/*
 * The counters are taken for the first session and given back after
 * the last (the core's acquire and release), never for introspection:
 * PFM_GET_PMU_INFO loads this module for any user, and holding perf's
 * counters for the module's lifetime failed perf's hardware events
 * with EBUSY machine-wide until root unloaded it.
 */
static int pfm_x86_pmu_acquire(struct pfm_pmu_config *pmu)
{
	return pfm_x86_reserve_all(to_x86(pmu));
}

static void pfm_x86_pmu_release(struct pfm_pmu_config *pmu)
{
	pfm_x86_release_all(to_x86(pmu));
}

/*
 * A hypervisor without a virtual PMU accepts the MSRs but keeps nothing
 * (QEMU's TCG does so).  Write counter 0 and read it back, as perf's
 * check_hw_exists() does, with the counters reserved, on one CPU: a
 * migration between the write and the read would read another CPU's
 * counter (the debug kernel's DEBUG_PREEMPT caught the simulator's
 * per-CPU registers being used preemptibly here).
 */
static int pfm_x86_check_hw(struct pfm_x86_pmu *xp)
{
	const struct pfm_x86_ctr *c = &xp->ctr[0];
	u64 old, val = 0xabcdUL, got = 0;
	int ret;

	preempt_disable();
	ret = xp->hw->read_msr_safe(c->rd, &old);
	if (!ret)
		ret = xp->hw->write_msr_safe(c->wr, val | c->bias);
	if (!ret)
		ret = xp->hw->read_msr_safe(c->rd, &got);
	if (!ret)
		xp->hw->write_msr_safe(c->wr, old);
	preempt_enable();
	if (ret || (got & pfm_pmu_ovfl_mask(&xp->map)) != val) {
		pr_info("%s: the PMU does not keep a written counter value (a virtual machine without a virtual PMU?); no PMU to drive, pfm_soft counts without one\n",
			xp->name);
		return -ENODEV;
	}
	return 0;
}

static const struct pfm_pmu_settings pfm_x86_settings = {
	.desc		= pfm_x86_cfg_desc,
	.num		= ARRAY_SIZE(pfm_x86_cfg_desc),
	.check		= pfm_x86_cfg_check,
};

static const struct pfm_pmu_ops pfm_x86_ops = {
	.acquire	= pfm_x86_pmu_acquire,
	.release	= pfm_x86_pmu_release,
	.write_pmc	= pfm_x86_write_pmc,
	.write_pmd	= pfm_x86_write_pmd,
	.read_pmd	= pfm_x86_read_pmd,
	.start		= pfm_x86_start,
	.stop		= pfm_x86_stop,
	.cpu_setup	= pfm_x86_cpu_setup,
	.cpu_teardown	= pfm_x86_cpu_teardown,
	.load_cfg	= pfm_x86_load_cfg,
	.user_index	= pfm_x86_user_index,
};

/*
 * The engine's per-CPU state serves one description at a time: the
 * module that registered it (pfm_x86 or the test module pfm_x86_sim).
 */
static int pfm_x86_claim(struct pfm_x86_pmu *xp)
{
	struct pfm_x86_pmu *held = cmpxchg(&pfm_x86, NULL, xp);

	if (!held)
		return 0;
	pr_err("%s: the x86 engine already drives %s for %s: unload that module first\n",
	       module_name(xp->pmu.owner), held->name,
	       module_name(held->pmu.owner));
	return -EBUSY;
}

/* Probe, check and register a claimed engine; -errno with nothing left. */
static int pfm_x86_setup(struct pfm_x86_pmu *xp,
			 int (*probe)(struct pfm_x86_pmu *xp))
{
	unsigned int cpu;
	int ret;

	ret = probe(xp);
	if (ret)
		return ret;
	pfm_x86_map_fill(xp, &pfm_x86_settings);
	xp->pmu.map = &xp->map;
	xp->pmu.ops = &pfm_x86_ops;
	/*
	 * Not a static initializer: the module loader does not relocate a
	 * module's per-CPU data, so .func would be NULL (measured).
	 */
	for_each_possible_cpu(cpu)
		per_cpu(pfm_x86_work, cpu) = IRQ_WORK_INIT_HARD(pfm_x86_irq_work);
	/* Taken for the check only: sessions take them (acquire). */
	ret = pfm_x86_reserve_all(xp);
	if (ret)
		return ret;
	ret = pfm_x86_check_hw(xp);
	pfm_x86_release_all(xp);
	if (ret)
		return ret;
	ret = xp->hw->nmi_register();
	if (ret)
		return ret;
	ret = pfm_pmu_register(&xp->pmu);
	if (ret)
		goto unregister_nmi;
	return 0;

unregister_nmi:
	xp->hw->nmi_unregister();
	return ret;
}

/**
 * pfm_x86_init() - probe a PMU, check it and register it
 * @xp: zeroed description for @probe to fill
 * @owner: the module calling (THIS_MODULE)
 * @hw: the hardware accessors (pfm_x86_hw: the CPU's own)
 * @probe: the vendor part's probe
 *
 * The counters are reserved for the check and given back: the first
 * session takes them (pfm_x86_pmu_acquire()).
 *
 * Context: module init (process context, may sleep).
 * Return: 0; -ENODEV when @probe finds no PMU or the counters do not
 * work; -EBUSY when perf holds a counter or another module's
 * description uses the engine (logged); or the core's error.
 */
int pfm_x86_init(struct pfm_x86_pmu *xp, struct module *owner,
		 const struct pfm_x86_hw *hw,
		 int (*probe)(struct pfm_x86_pmu *xp))
{
	int ret;

	xp->pmu.owner = owner;
	xp->hw = hw;
	ret = pfm_x86_claim(xp);
	if (ret)
		return ret;
	atomic64_set(&pfm_x86_claimed, 0);
	ret = pfm_x86_setup(xp, probe);
	if (ret)
		WRITE_ONCE(pfm_x86, NULL);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(pfm_x86_init, PERFMON_PMU_LIB);

/**
 * pfm_x86_exit() - undo pfm_x86_init()
 * @xp: the registered PMU, no longer used by any context
 *
 * Context: module exit.
 */
void pfm_x86_exit(struct pfm_x86_pmu *xp)
{
	unsigned int cpu;

	pfm_pmu_unregister(&xp->pmu);
	/* Waits for running handlers; then no new irq_work is queued. */
	xp->hw->nmi_unregister();
	for_each_possible_cpu(cpu)
		irq_work_sync(per_cpu_ptr(&pfm_x86_work, cpu));
	WRITE_ONCE(pfm_x86, NULL);
}
EXPORT_SYMBOL_NS_GPL(pfm_x86_exit, PERFMON_PMU_LIB);
