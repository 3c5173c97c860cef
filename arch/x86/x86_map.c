// SPDX-License-Identifier: GPL-2.0
/*
 * The x86 register map: what the vendor parts (intel_arch.c, amd64.c)
 * describe with, and what a description needs of it whatever drives the
 * counters: the native engine (x86_pmu.c) or pfm_perf, whose x86 map
 * (arch/perf/perf_x86.c) presents the same registers over perf.  In
 * pfm_pmu_lib with the vendor parts and the engine.
 */
#include <linux/bits.h>
#include <linux/module.h>
#include <linux/string.h>
#include <asm/perf_event.h>

#include "pfm_x86.h"

/**
 * pfm_x86_add_pmc() - describe a control register
 * @xp: the PMU being described
 * @cnum: PMC number
 * @name: register name
 * @msr: its MSR
 * @rsvd: reserved bits (the default value is 0)
 */
void pfm_x86_add_pmc(struct pfm_x86_pmu *xp, u16 cnum, const char *name,
		     u32 msr, u64 rsvd)
{
	struct pfm_regmap_desc *d = &xp->pmc_desc[cnum];

	strscpy(xp->names[0][cnum], name, PFM_NAME_LEN);
	d->type = PFM_REGT_IMPL;
	d->name = xp->names[0][cnum];
	d->rsvd_msk = rsvd;
	d->hw_addr = msr;
	xp->sel_msr[cnum] = msr;
	__set_bit(cnum, xp->pmcs);
}

/**
 * pfm_x86_add_ctr() - describe a counter
 * @xp: the PMU being described, @width already set
 * @cnum: PMD number
 * @name: register name
 * @rd: MSR read for the count
 * @wr: MSR written for the count
 * @sel: PMC number of its control register
 * @status: its global status bit (its number in the pending word)
 * @hw_width: bits the counter implements
 */
void pfm_x86_add_ctr(struct pfm_x86_pmu *xp, u16 cnum, const char *name,
		     u32 rd, u32 wr, u16 sel, unsigned int status,
		     unsigned int hw_width)
{
	struct pfm_regmap_desc *d = &xp->pmd_desc[cnum];
	struct pfm_x86_ctr *c = &xp->ctr[cnum];
	unsigned int width = xp->width;

	strscpy(xp->names[1][cnum], name, PFM_NAME_LEN);
	d->type = PFM_REGT_IMPL | PFM_REGT_CNTR | PFM_REGT_INTR;
	d->name = xp->names[1][cnum];
	d->hw_addr = rd;
	c->rd = rd;
	c->wr = wr;
	c->sel = sel;
	c->status = status;
	c->top = BIT_ULL(hw_width - 1);
	c->bias = width < hw_width ? GENMASK_ULL(hw_width - 1, width) : 0;
	xp->claim |= BIT_ULL(status);
	__set_bit(cnum, xp->ctrs);
}

/*
 * What a control value counts beyond the monitored thread in user mode:
 * the OS bit counts ring 0, AnyThread the other hyperthread of the core
 * (perf asks the system-wide privilege for it, as here).  A bit the
 * vendor part does not allow never gets here: its reserved mask refused
 * it.  Both vendors' event selects have them at the same place.
 */
u32 pfm_x86_pmc_priv(const struct pfm_pmu_map *map, u16 cnum, u64 value)
{
	u64 os = ARCH_PERFMON_EVENTSEL_OS, any = ARCH_PERFMON_EVENTSEL_ANY;
	u32 priv = 0;
	unsigned int i;

	if (cnum == PFM_X86_FIXED_BASE) {
		os = 0;
		any = 0;
		for (i = 0; i < PFM_X86_MAX_FIXED; i++) {
			os |= PFM_X86_FIXED_BITS(i, PFM_X86_FIXED_OS);
			any |= PFM_X86_FIXED_BITS(i, PFM_X86_FIXED_ANY);
		}
	}
	if (value & os)
		priv |= PFM_PMC_PRIV_KERNEL;
	if (value & any)
		priv |= PFM_PMC_PRIV_CPU;
	return priv;
}

/**
 * pfm_x86_map_fill() - the register map of a PMU a vendor part described
 * @xp: the PMU: its name, width, tables and checks set by the vendor part
 * @settings: the driver settings of the engine presenting the map, or
 *            NULL (pfm_perf has none on x86)
 *
 * Fills @xp->map, the one place it is written.
 */
void pfm_x86_map_fill(struct pfm_x86_pmu *xp,
		      const struct pfm_pmu_settings *settings)
{
	xp->map = (struct pfm_pmu_map) {
		.pmu_name	 = xp->name,
		.counter_width	 = xp->width,
		.pmc_desc	 = xp->pmc_desc,
		.num_pmc_entries = PFM_X86_NUM_REGS,
		.pmd_desc	 = xp->pmd_desc,
		.num_pmd_entries = PFM_X86_NUM_REGS,
		.checks		 = xp->checks,
		.settings	 = settings,
		.map_data	 = xp,
	};
}
EXPORT_SYMBOL_NS_GPL(pfm_x86_map_fill, PERFMON_PMU_LIB);
