// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_soft: a software PMU description for machines without a usable PMU
 * (VMs without a virtual PMU, the x86 test guest under TCG).  Its
 * counters are driven by the kernel's clocks and scheduler.
 *
 * Register map:
 *   PMC0-3 SOFT_EVTSEL0-3: bits[7:0] event, bit 8 INT (overflow
 *          interrupt), every other bit reserved (zero).
 *   PMD0-3 SOFT_CTR0-3: counters, 32 bits wide so that the core's
 *          64-bit virtualization is exercised (a task-clock counter in
 *          ns wraps every 4.3 s).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/module.h>
#include <perfmon/pmu.h>

#define SOFT_NUM_CTRS		4
#define SOFT_CTR_WIDTH		32

#define SOFT_EVTSEL_EVENT	GENMASK_ULL(7, 0)
#define SOFT_EVTSEL_INT		BIT_ULL(8)
#define SOFT_EVTSEL_RSVD	(~(SOFT_EVTSEL_EVENT | SOFT_EVTSEL_INT))

/* Event codes of SOFT_EVTSEL_EVENT. */
enum pfm_soft_event {
	SOFT_EV_NONE		= 0,	/* counter off */
	SOFT_EV_TASK_CLOCK	= 1,	/* ns the monitored thread ran */
	SOFT_EV_CPU_CLOCK	= 2,	/* ns of wall clock while counting */
	SOFT_EV_CTX_SWITCHES	= 3,	/* context switches */
	SOFT_EV_MAX		= SOFT_EV_CTX_SWITCHES,
};

static const struct pfm_regmap_desc pfm_soft_pmc_desc[SOFT_NUM_CTRS] = {
	PFM_PMC_D("SOFT_EVTSEL0", 0, SOFT_EVTSEL_RSVD, 0),
	PFM_PMC_D("SOFT_EVTSEL1", 0, SOFT_EVTSEL_RSVD, 1),
	PFM_PMC_D("SOFT_EVTSEL2", 0, SOFT_EVTSEL_RSVD, 2),
	PFM_PMC_D("SOFT_EVTSEL3", 0, SOFT_EVTSEL_RSVD, 3),
};

static const struct pfm_regmap_desc pfm_soft_pmd_desc[SOFT_NUM_CTRS] = {
	PFM_PMD_D(PFM_REGT_CNTR | PFM_REGT_INTR, "SOFT_CTR0", 0),
	PFM_PMD_D(PFM_REGT_CNTR | PFM_REGT_INTR, "SOFT_CTR1", 1),
	PFM_PMD_D(PFM_REGT_CNTR | PFM_REGT_INTR, "SOFT_CTR2", 2),
	PFM_PMD_D(PFM_REGT_CNTR | PFM_REGT_INTR, "SOFT_CTR3", 3),
};

/* The reserved mask lets through every event code; refuse unknown ones. */
static int pfm_soft_pmc_check(const struct pfm_pmu_config *pmu, u16 cnum,
			      u64 value)
{
	return (value & SOFT_EVTSEL_EVENT) > SOFT_EV_MAX ? -EINVAL : 0;
}

static struct pfm_pmu_config pfm_soft_pmu = {
	.pmu_name	 = "soft",
	.owner		 = THIS_MODULE,
	.counter_width	 = SOFT_CTR_WIDTH,
	.pmc_desc	 = pfm_soft_pmc_desc,
	.num_pmc_entries = ARRAY_SIZE(pfm_soft_pmc_desc),
	.pmd_desc	 = pfm_soft_pmd_desc,
	.num_pmd_entries = ARRAY_SIZE(pfm_soft_pmd_desc),
	.pmc_write_check = pfm_soft_pmc_check,
};

static int __init pfm_soft_init(void)
{
	return pfm_pmu_register(&pfm_soft_pmu);
}

static void __exit pfm_soft_exit(void)
{
	pfm_pmu_unregister(&pfm_soft_pmu);
}

module_init(pfm_soft_init);
module_exit(pfm_soft_exit);

MODULE_DESCRIPTION("perfmon: software PMU description (clock and scheduler counters)");
MODULE_LICENSE("GPL");
