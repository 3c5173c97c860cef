// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_pmuv3: PMU description for the Arm PMUv3 (Armv8-A and later).
 *
 * Register map (the numbers follow the hardware's counter index):
 *   PMCn  (n < PMCR_EL0.N) PMEVTYPERn_EL0: event (bits 15:0 from
 *         PMUv3p1, 9:0 before) and the exception-level filters P
 *         (exclude EL1), U (exclude EL0), NSK, NSU, NSH (include EL2).
 *   PMC31 PMCCFILTR_EL0: the same filters for the cycle counter.
 *   PMDn  PMEVCNTRn_EL0, PMD31 PMCCNTR_EL0: counters, 64 bits wide with
 *         PMUv3p5 (PMCR_EL0.LP and LC set), 32 bits before; the core
 *         extends 32-bit ones to 64 bits from their overflow interrupts.
 * Every other bit of a PMC is reserved.  An event the PMU says it does
 * not implement (PMCEID0/1_EL0, for the common events) is refused.  A
 * filter that counts EL1 or EL2 needs the kernel-level privilege
 * (Documentation/security.rst): user-level only is P set, NSK and NSH
 * clear.  The filters' default, 0, counts EL1: a context that may not
 * starts with P set instead (pmuv3_pmc_user_val()).
 *
 * Driver setting 0, el0_access: 1 lets the monitored thread read the
 * counters itself (PMUSERENR_EL0.ER and CR: mrs of PMCCNTR_EL0,
 * PMEVCNTRn_EL0 through PMSELR_EL0) while its context is live; 0 (the
 * default) traps such reads.  Per-thread contexts only: on a monitored
 * CPU every thread could read them.
 *
 * Overflow: the PMU's per-CPU interrupt (a PPI), found in the DT node
 * "arm,armv8-pmuv3" or in the ACPI MADT's GICC entries.  The builtin
 * PMUv3 driver requests it at boot; then loading fails with -EBUSY and
 * a log line naming the boot option that keeps the driver away.
 *
 * The counters and their enables are per CPU; every op runs on the CPU
 * whose PMU it touches, with interrupts disabled (the core's rule), so
 * the PMSELR_EL0 indirection never races with the interrupt handler.
 *
 * CPU power states: a CPU that enters a state which powers its PMU down
 * (cpu_pm_enter(), from the idle driver) loses every register.  A CPU PM
 * notifier saves the live context's registers on CPU_PM_ENTER and puts
 * them back with the per-CPU setup on CPU_PM_EXIT or
 * CPU_PM_ENTER_FAILED, as the kernel's arm_pmu does.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/acpi.h>
#include <linux/bitfield.h>
#include <linux/bitmap.h>
#include <linux/bits.h>
#include <linux/cpu_pm.h>
#include <linux/err.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/module.h>
#include <linux/of.h>
#include <linux/of_irq.h>
#include <linux/percpu.h>
#include <asm/irq_regs.h>
#include <asm/sysreg.h>
#include <perfmon/compat.h>
#include <perfmon/pmu.h>

#include "pmuv3.h"

/* Driver settings */
#define PMUV3_USERENR_READ	(ARMV8_PMU_USERENR_CR | ARMV8_PMU_USERENR_ER)

static bool long_counters = true;
module_param(long_counters, bool, 0444);
MODULE_PARM_DESC(long_counters, "64-bit event counters where PMUv3p5 has them (default true)");

/* What pmuv3_probe_map() found: read-only, shared with pfm_perf. */
static const struct pmuv3_info *pmuv3;

static const char pmuv3_boot_fix[] = "initcall_blacklist=armv8_pmu_driver_init";

/* The per-CPU overflow interrupt */
static int pmuv3_irq;
static int __percpu *pmuv3_irq_cookie;
/* cpu_setup ran on this CPU and cpu_teardown did not; that CPU's own */
static DEFINE_PER_CPU(bool, pmuv3_live);
/* Overflow flags not yet taken when the CPU's PMU lost its state */
static DEFINE_PER_CPU(u32, pmuv3_pm_ovs);

/* Counters are selected through PMSELR_EL0: callers have IRQs off. */
static void pmuv3_select(u16 idx)
{
	write_sysreg(idx, pmselr_el0);
	isb();
}

static void pmuv3_write_pmc(struct pfm_pmu_config *pmu, void *priv, u16 cnum,
			    u64 value)
{
	if (cnum == PMUV3_CYCLE_IDX) {
		write_sysreg(value, pmccfiltr_el0);
		return;
	}
	pmuv3_select(cnum);
	write_sysreg(value, pmxevtyper_el0);
}

/*
 * A new value: a wrap of the old one whose interrupt is not taken yet
 * (the core saved the old value first) must not be charged to it.
 */
static void pmuv3_write_pmd(struct pfm_pmu_config *pmu, void *priv, u16 cnum,
			    u64 value)
{
	write_sysreg(BIT(cnum), pmovsclr_el0);
	if (cnum == PMUV3_CYCLE_IDX) {
		write_sysreg(value, pmccntr_el0);
		return;
	}
	pmuv3_select(cnum);
	write_sysreg(value, pmxevcntr_el0);
}

/*
 * A counter whose overflow flag is set wrapped and its interrupt was not
 * taken yet: it reads as its highest value (the core's rule), and the
 * handler clears the flag before reporting the wrap.
 */
static u64 pmuv3_read_pmd(struct pfm_pmu_config *pmu, void *priv, u16 cnum)
{
	if (read_sysreg(pmovsset_el0) & BIT(cnum))
		return pfm_pmu_ovfl_mask(pmu->map);
	if (cnum == PMUV3_CYCLE_IDX)
		return read_sysreg(pmccntr_el0);
	pmuv3_select(cnum);
	return read_sysreg(pmxevcntr_el0);
}

static void pmuv3_start(struct pfm_pmu_config *pmu, void *priv)
{
	write_sysreg(read_sysreg(pmcr_el0) | ARMV8_PMU_PMCR_E, pmcr_el0);
	isb();
}

static void pmuv3_stop(struct pfm_pmu_config *pmu, void *priv)
{
	write_sysreg(read_sysreg(pmcr_el0) & ~ARMV8_PMU_PMCR_E, pmcr_el0);
	isb();
}

/* Counters enabled one by one, counting gated by PMCR_EL0.E (start). */
static void pmuv3_reset(const struct pfm_pmu_config *pmu)
{
	u64 pmcr = 0;

	/* The cycle counter overflows at the event counters' width. */
	if (pmu->map->counter_width == 64)
		pmcr |= ARMV8_PMU_PMCR_LP | ARMV8_PMU_PMCR_LC;
	write_sysreg(pmcr, pmcr_el0);
	write_sysreg(0, pmuserenr_el0);
	write_sysreg(pmuv3->ctr_mask, pmovsclr_el0);
	write_sysreg(pmuv3->ctr_mask, pmintenset_el1);
	write_sysreg(pmuv3->ctr_mask, pmcntenset_el0);
	isb();
}

static void pmuv3_cpu_setup(struct pfm_pmu_config *pmu)
{
	pmuv3_reset(pmu);
	enable_percpu_irq(pmuv3_irq, IRQ_TYPE_NONE);
	this_cpu_write(pmuv3_live, true);
}

static void pmuv3_cpu_teardown(struct pfm_pmu_config *pmu)
{
	this_cpu_write(pmuv3_live, false);
	disable_percpu_irq(pmuv3_irq);
	write_sysreg(0, pmcr_el0);
	write_sysreg(0, pmuserenr_el0);
	write_sysreg(pmuv3->ctr_mask, pmcntenclr_el0);
	write_sysreg(pmuv3->ctr_mask, pmintenclr_el1);
	write_sysreg(pmuv3->ctr_mask, pmovsclr_el0);
	isb();
}

static irqreturn_t pmuv3_irq_handler(int irq, void *dev)
{
	DECLARE_BITMAP(ovfl, PFM_MAX_PMDS);
	u32 ovs;

	ovs = read_sysreg(pmovsclr_el0) & pmuv3->ctr_mask;
	if (!ovs)
		return IRQ_NONE;
	/* Cleared first, so that read_pmd() returns the wrapped counter. */
	write_sysreg(ovs, pmovsclr_el0);
	isb();
	bitmap_zero(ovfl, PFM_MAX_PMDS);
	bitmap_from_arr32(ovfl, &ovs, 32);
	pfm_interrupt(ovfl, get_irq_regs());
	return IRQ_HANDLED;
}

static void pmuv3_load_cfg(struct pfm_pmu_config *pmu, void *priv,
			   const u64 *cfg)
{
	bool el0 = cfg && cfg[PMUV3_CFG_EL0_ACCESS];

	write_sysreg(el0 ? PMUV3_USERENR_READ : 0, pmuserenr_el0);
	isb();
}

/*
 * With el0_access the thread reads counter n with mrs of PMEVCNTR<n>_EL0
 * (PMCCNTR_EL0 for 31): the control page's index is n + 1.
 */
static u32 pmuv3_user_index(struct pfm_pmu_config *pmu, void *priv,
			    const u64 *cfg, u16 cnum)
{
	return cfg[PMUV3_CFG_EL0_ACCESS] ? cnum + 1 : 0;
}

static const struct pfm_pmu_ops pmuv3_ops = {
	.write_pmc	= pmuv3_write_pmc,
	.write_pmd	= pmuv3_write_pmd,
	.read_pmd	= pmuv3_read_pmd,
	.start		= pmuv3_start,
	.stop		= pmuv3_stop,
	.cpu_setup	= pmuv3_cpu_setup,
	.cpu_teardown	= pmuv3_cpu_teardown,
	.load_cfg	= pmuv3_load_cfg,
	.user_index	= pmuv3_user_index,
};

/* Filled by pmuv3_probe_map() (pmuv3_map.c). */
static struct pfm_pmu_map pmuv3_map;

static struct pfm_pmu_config pmuv3_pmu = {
	.owner		= THIS_MODULE,
	.map		= &pmuv3_map,
	.ops		= &pmuv3_ops,
};

/*
 * The PMU is about to lose its registers.  Frozen first, so that no
 * counter wraps between the read of the overflow flags and the save.
 * A wrap whose interrupt was not taken yet (interrupts are off) is
 * cleared here, so that the save reads the wrapped counter rather than
 * read_pmd()'s highest value, and raised again on the way back.
 */
static void pmuv3_pm_enter(void)
{
	u32 ovs;

	pmuv3_stop(&pmuv3_pmu, NULL);
	ovs = read_sysreg(pmovsclr_el0) & pmuv3->ctr_mask;
	write_sysreg(ovs, pmovsclr_el0);
	isb();
	this_cpu_write(pmuv3_pm_ovs, ovs);
	pfm_cpu_pm_save(&pmuv3_pmu);
}

/*
 * Back from the power state (or it was not entered): the per-CPU setup
 * again, then the live context's registers; a wrap saved on the way in
 * raises its interrupt once interrupts are enabled (PMOVSSET_EL0).
 */
static void pmuv3_pm_exit(void)
{
	pmuv3_reset(&pmuv3_pmu);
	pfm_cpu_pm_restore(&pmuv3_pmu);
	write_sysreg(this_cpu_read(pmuv3_pm_ovs), pmovsset_el0);
	isb();
	this_cpu_write(pmuv3_pm_ovs, 0);
}

/* Runs on the CPU concerned, interrupts off (cpu_pm_enter/exit()). */
static int pmuv3_cpu_pm_notify(struct notifier_block *nb, unsigned long cmd,
			       void *v)
{
	if (!this_cpu_read(pmuv3_live))
		return NOTIFY_DONE;
	switch (cmd) {
	case CPU_PM_ENTER:
		pmuv3_pm_enter();
		return NOTIFY_OK;
	case CPU_PM_EXIT:
	case CPU_PM_ENTER_FAILED:
		pmuv3_pm_exit();
		return NOTIFY_OK;
	default:
		return NOTIFY_DONE;
	}
}

static struct notifier_block pmuv3_cpu_pm_nb = {
	.notifier_call = pmuv3_cpu_pm_notify,
};

/* The PMU interrupt from the device tree; 0 when there is none. */
static int pmuv3_dt_irq(void)
{
	struct device_node *np;
	int irq;

	np = of_find_compatible_node(NULL, NULL, "arm,armv8-pmuv3");
	if (!np)
		return 0;
	irq = irq_of_parse_and_map(np, 0);
	of_node_put(np);
	return irq;
}

#ifdef CONFIG_ACPI
/* The PMU interrupt from the first MADT GICC entry that has one. */
static int pmuv3_acpi_irq(void)
{
	struct acpi_madt_generic_interrupt *gicc;
	struct acpi_subtable_header *h;
	struct acpi_table_header *tbl;
	int irq = 0, trigger;
	void *p, *end;

	if (acpi_disabled ||
	    ACPI_FAILURE(acpi_get_table(ACPI_SIG_MADT, 0, &tbl)))
		return 0;
	p = (void *)tbl + sizeof(struct acpi_table_madt);
	end = (void *)tbl + tbl->length;
	for (; p + sizeof(*h) <= end; p += h->length) {
		h = p;
		if (!h->length)
			break;
		if (h->type != ACPI_MADT_TYPE_GENERIC_INTERRUPT)
			continue;
		gicc = p;
		if (!gicc->performance_interrupt)
			continue;
		trigger = gicc->flags & ACPI_MADT_PERFORMANCE_IRQ_MODE ?
			  ACPI_EDGE_SENSITIVE : ACPI_LEVEL_SENSITIVE;
		irq = acpi_register_gsi(NULL, gicc->performance_interrupt,
					trigger, ACPI_ACTIVE_HIGH);
		break;
	}
	acpi_put_table(tbl);
	return irq > 0 ? irq : 0;
}
#else
static int pmuv3_acpi_irq(void)
{
	return 0;
}
#endif

static int pmuv3_request_irq(void)
{
	int ret;

	pmuv3_irq = pmuv3_dt_irq();
	if (!pmuv3_irq)
		pmuv3_irq = pmuv3_acpi_irq();
	if (!pmuv3_irq) {
		pr_err("no PMU interrupt in the firmware description (DT \"arm,armv8-pmuv3\" or ACPI MADT): overflows cannot be handled\n");
		return -ENODEV;
	}
	if (!irq_is_percpu_devid(pmuv3_irq)) {
		pr_err("PMU interrupt %d is not a per-CPU interrupt (PPI); SPI-wired PMUs are not supported\n",
		       pmuv3_irq);
		return -ENODEV;
	}
	pmuv3_irq_cookie = alloc_percpu(int);
	if (!pmuv3_irq_cookie)
		return -ENOMEM;
	ret = request_percpu_irq(pmuv3_irq, pmuv3_irq_handler, "perfmon-pmuv3",
				 pmuv3_irq_cookie);
	if (ret == -EBUSY)
		pr_err("PMU interrupt %d is owned by the builtin PMUv3 driver (arm-pmu): boot with %s to leave it to perfmon, or use pfm_perf (perfmon.pmu=auto loads it)\n",
		       pmuv3_irq, pmuv3_boot_fix);
	else if (ret)
		pr_err("cannot request PMU interrupt %d (%d)\n", pmuv3_irq, ret);
	if (ret)
		free_percpu(pmuv3_irq_cookie);
	return ret;
}

static void pmuv3_free_irq(void)
{
	free_percpu_irq(pmuv3_irq, pmuv3_irq_cookie);
	free_percpu(pmuv3_irq_cookie);
}

static int __init pfm_pmuv3_init(void)
{
	int ret;

	pmuv3 = pmuv3_probe_map(&pmuv3_map, long_counters);
	if (IS_ERR(pmuv3))
		return PTR_ERR(pmuv3);
	ret = pmuv3_request_irq();
	if (ret)
		return ret;
	ret = cpu_pm_register_notifier(&pmuv3_cpu_pm_nb);
	if (ret)
		goto free_irq;
	ret = pfm_pmu_register(&pmuv3_pmu);
	if (ret)
		goto unregister_cpu_pm;
	pr_info("PMUv3 (PMUVer %u): %u event counters + cycle counter, %u-bit, interrupt %d\n",
		pmuv3->pmuver, pmuv3->num_ctrs, pmuv3_map.counter_width,
		pmuv3_irq);
	return 0;

unregister_cpu_pm:
	cpu_pm_unregister_notifier(&pmuv3_cpu_pm_nb);
free_irq:
	pmuv3_free_irq();
	return ret;
}

/* No context holds the module any more: the PMU was torn down. */
static void __exit pfm_pmuv3_exit(void)
{
	pfm_pmu_unregister(&pmuv3_pmu);
	cpu_pm_unregister_notifier(&pmuv3_cpu_pm_nb);
	pmuv3_free_irq();
}

module_init(pfm_pmuv3_init);
module_exit(pfm_pmuv3_exit);

MODULE_DESCRIPTION("perfmon: Arm PMUv3 description");
MODULE_LICENSE("GPL");
/* perfmon.pmu=auto|native loads the CPU's own description (core/pmu.c). */
MODULE_ALIAS("pfm-pmu-native");
MODULE_IMPORT_NS(PERFMON_PMU_LIB);
