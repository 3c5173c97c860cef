// SPDX-License-Identifier: GPL-2.0
/*
 * The PMUv3 register map (arch/arm64/pmuv3.h): counters as the
 * PMCR_EL0.N the CPU reports plus the cycle counter, the common events
 * PMCEID<n>_EL0 says it implements, the checks of a PMC value, and the
 * driver setting el0_access.
 * Part of pfm_pmu_lib (arch/Kbuild), shared by pfm_pmuv3 and pfm_perf;
 * register access stays in each of them.  The CPU is probed once and
 * the tables are read-only from then on: both descriptions may be
 * registered and in use at once, neither writes what the other reads.
 */
#define pr_fmt(fmt) "perfmon: " fmt

#include <linux/bitfield.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <asm/sysreg.h>

#include "pmuv3.h"

static struct pmuv3_info pmuv3;
/* 0 until probed, then 1 or -ENODEV; pmuv3_map_lock orders the writes. */
static int pmuv3_probed;
static DEFINE_MUTEX(pmuv3_map_lock);
static struct pfm_regmap_desc pmuv3_pmc_desc[PMUV3_NUM_REGS];
static struct pfm_regmap_desc pmuv3_pmd_desc[PMUV3_NUM_REGS];
static char pmuv3_names[2][PMUV3_NUM_REGS][PFM_NAME_LEN];

static const struct pfm_regmap_desc pmuv3_cfg_desc[] = {
	[PMUV3_CFG_EL0_ACCESS] = PFM_CFG_D("el0_access", 0),
};

static int pmuv3_cfg_check(u16 num, u64 value, u32 ctx_flags)
{
	if (value > 1)
		return -EINVAL;
	/* On a monitored CPU any thread could read the counters. */
	if (value && (ctx_flags & PFM_FL_SYSTEM_WIDE))
		return -EINVAL;
	return 0;
}

/*
 * Is common event @ev implemented?  PMCEID0_EL0 has events 0x00-0x1f in
 * its low half and 0x4000-0x401f in its high half, PMCEID1_EL0 0x20-0x3f
 * and 0x4020-0x403f.
 */
static bool pmuv3_event_ok(unsigned int ev)
{
	unsigned int half = 0;

	if (ev >= 0x4000 && ev < 0x4040) {
		ev -= 0x4000;
		half = 32;
	} else if (ev >= 0x40) {
		return true;	/* implementation defined: the CPU's own list */
	}
	return pmuv3.pmceid[ev / 32] & BIT_ULL(half + ev % 32);
}

#define PMUV3_EV(_name, _code) { .name = #_name, .code = (_code) }

/*
 * The common events by their architectural names (perf's spelling);
 * those PMCEID says this PMU implements are shown in sysfs.
 */
static const struct pfm_event_desc pmuv3_common_events[] = {
	PMUV3_EV(l1i_cache_refill, ARMV8_PMUV3_PERFCTR_L1I_CACHE_REFILL),
	PMUV3_EV(l1i_tlb_refill, ARMV8_PMUV3_PERFCTR_L1I_TLB_REFILL),
	PMUV3_EV(l1d_cache_refill, ARMV8_PMUV3_PERFCTR_L1D_CACHE_REFILL),
	PMUV3_EV(l1d_cache, ARMV8_PMUV3_PERFCTR_L1D_CACHE),
	PMUV3_EV(l1d_tlb_refill, ARMV8_PMUV3_PERFCTR_L1D_TLB_REFILL),
	PMUV3_EV(ld_retired, ARMV8_PMUV3_PERFCTR_LD_RETIRED),
	PMUV3_EV(st_retired, ARMV8_PMUV3_PERFCTR_ST_RETIRED),
	PMUV3_EV(inst_retired, ARMV8_PMUV3_PERFCTR_INST_RETIRED),
	PMUV3_EV(exc_taken, ARMV8_PMUV3_PERFCTR_EXC_TAKEN),
	PMUV3_EV(exc_return, ARMV8_PMUV3_PERFCTR_EXC_RETURN),
	PMUV3_EV(cid_write_retired, ARMV8_PMUV3_PERFCTR_CID_WRITE_RETIRED),
	PMUV3_EV(pc_write_retired, ARMV8_PMUV3_PERFCTR_PC_WRITE_RETIRED),
	PMUV3_EV(br_immed_retired, ARMV8_PMUV3_PERFCTR_BR_IMMED_RETIRED),
	PMUV3_EV(br_return_retired, ARMV8_PMUV3_PERFCTR_BR_RETURN_RETIRED),
	PMUV3_EV(unaligned_ldst_retired, ARMV8_PMUV3_PERFCTR_UNALIGNED_LDST_RETIRED),
	PMUV3_EV(br_mis_pred, ARMV8_PMUV3_PERFCTR_BR_MIS_PRED),
	PMUV3_EV(cpu_cycles, ARMV8_PMUV3_PERFCTR_CPU_CYCLES),
	PMUV3_EV(br_pred, ARMV8_PMUV3_PERFCTR_BR_PRED),
	PMUV3_EV(mem_access, ARMV8_PMUV3_PERFCTR_MEM_ACCESS),
	PMUV3_EV(l1i_cache, ARMV8_PMUV3_PERFCTR_L1I_CACHE),
	PMUV3_EV(l1d_cache_wb, ARMV8_PMUV3_PERFCTR_L1D_CACHE_WB),
	PMUV3_EV(l2d_cache, ARMV8_PMUV3_PERFCTR_L2D_CACHE),
	PMUV3_EV(l2d_cache_refill, ARMV8_PMUV3_PERFCTR_L2D_CACHE_REFILL),
	PMUV3_EV(l2d_cache_wb, ARMV8_PMUV3_PERFCTR_L2D_CACHE_WB),
	PMUV3_EV(bus_access, ARMV8_PMUV3_PERFCTR_BUS_ACCESS),
	PMUV3_EV(memory_error, ARMV8_PMUV3_PERFCTR_MEMORY_ERROR),
	PMUV3_EV(inst_spec, ARMV8_PMUV3_PERFCTR_INST_SPEC),
	PMUV3_EV(ttbr_write_retired, ARMV8_PMUV3_PERFCTR_TTBR_WRITE_RETIRED),
	PMUV3_EV(bus_cycles, ARMV8_PMUV3_PERFCTR_BUS_CYCLES),
	PMUV3_EV(l1d_cache_allocate, ARMV8_PMUV3_PERFCTR_L1D_CACHE_ALLOCATE),
	PMUV3_EV(l2d_cache_allocate, ARMV8_PMUV3_PERFCTR_L2D_CACHE_ALLOCATE),
	PMUV3_EV(br_retired, ARMV8_PMUV3_PERFCTR_BR_RETIRED),
	PMUV3_EV(br_mis_pred_retired, ARMV8_PMUV3_PERFCTR_BR_MIS_PRED_RETIRED),
	PMUV3_EV(stall_frontend, ARMV8_PMUV3_PERFCTR_STALL_FRONTEND),
	PMUV3_EV(stall_backend, ARMV8_PMUV3_PERFCTR_STALL_BACKEND),
	PMUV3_EV(l1d_tlb, ARMV8_PMUV3_PERFCTR_L1D_TLB),
	PMUV3_EV(l1i_tlb, ARMV8_PMUV3_PERFCTR_L1I_TLB),
	PMUV3_EV(l2i_cache, ARMV8_PMUV3_PERFCTR_L2I_CACHE),
	PMUV3_EV(l2i_cache_refill, ARMV8_PMUV3_PERFCTR_L2I_CACHE_REFILL),
	PMUV3_EV(l3d_cache_allocate, ARMV8_PMUV3_PERFCTR_L3D_CACHE_ALLOCATE),
	PMUV3_EV(l3d_cache_refill, ARMV8_PMUV3_PERFCTR_L3D_CACHE_REFILL),
	PMUV3_EV(l3d_cache, ARMV8_PMUV3_PERFCTR_L3D_CACHE),
	PMUV3_EV(l3d_cache_wb, ARMV8_PMUV3_PERFCTR_L3D_CACHE_WB),
	PMUV3_EV(l2d_tlb_refill, ARMV8_PMUV3_PERFCTR_L2D_TLB_REFILL),
	PMUV3_EV(l2i_tlb_refill, ARMV8_PMUV3_PERFCTR_L2I_TLB_REFILL),
	PMUV3_EV(l2d_tlb, ARMV8_PMUV3_PERFCTR_L2D_TLB),
	PMUV3_EV(l2i_tlb, ARMV8_PMUV3_PERFCTR_L2I_TLB),
	PMUV3_EV(remote_access, ARMV8_PMUV3_PERFCTR_REMOTE_ACCESS),
	PMUV3_EV(ll_cache, ARMV8_PMUV3_PERFCTR_LL_CACHE),
	PMUV3_EV(ll_cache_miss, ARMV8_PMUV3_PERFCTR_LL_CACHE_MISS),
	PMUV3_EV(dtlb_walk, ARMV8_PMUV3_PERFCTR_DTLB_WALK),
	PMUV3_EV(itlb_walk, ARMV8_PMUV3_PERFCTR_ITLB_WALK),
	PMUV3_EV(ll_cache_rd, ARMV8_PMUV3_PERFCTR_LL_CACHE_RD),
	PMUV3_EV(ll_cache_miss_rd, ARMV8_PMUV3_PERFCTR_LL_CACHE_MISS_RD),
	PMUV3_EV(remote_access_rd, ARMV8_PMUV3_PERFCTR_REMOTE_ACCESS_RD),
	PMUV3_EV(l1d_cache_lmiss_rd, ARMV8_PMUV3_PERFCTR_L1D_CACHE_LMISS_RD),
	PMUV3_EV(op_retired, ARMV8_PMUV3_PERFCTR_OP_RETIRED),
	PMUV3_EV(op_spec, ARMV8_PMUV3_PERFCTR_OP_SPEC),
	PMUV3_EV(stall, ARMV8_PMUV3_PERFCTR_STALL),
	PMUV3_EV(stall_slot_backend, ARMV8_PMUV3_PERFCTR_STALL_SLOT_BACKEND),
	PMUV3_EV(stall_slot_frontend, ARMV8_PMUV3_PERFCTR_STALL_SLOT_FRONTEND),
	PMUV3_EV(stall_slot, ARMV8_PMUV3_PERFCTR_STALL_SLOT),
};

static struct pfm_event_desc pmuv3_events[ARRAY_SIZE(pmuv3_common_events)];

/* Name the implemented common events; returns how many. */
static u16 pmuv3_list_events(void)
{
	u16 i, n = 0;

	for (i = 0; i < ARRAY_SIZE(pmuv3_common_events); i++)
		if (pmuv3_event_ok(pmuv3_common_events[i].code))
			pmuv3_events[n++] = pmuv3_common_events[i];
	return n;
}

static int pmuv3_pmc_check(const struct pfm_pmu_map *map, u16 cnum,
			   u64 value)
{
	if (cnum == PMUV3_CYCLE_IDX)
		return 0;
	return pmuv3_event_ok(value & ARMV8_PMU_EVTYPE_EVENT) ? 0 : -EINVAL;
}

/*
 * Does the filter count a privileged level?  EL1 is counted while P is
 * clear; with EL3, Non-secure EL1 is counted while NSK equals P, so a
 * set NSK counts it under a set P.  EL2 is counted while NSH is set.
 * User level only: P set, NSK and NSH clear.
 */
static u32 pmuv3_pmc_priv(const struct pfm_pmu_map *map, u16 cnum,
			  u64 value)
{
	if (!(value & ARMV8_PMU_EXCLUDE_EL1) || (value & PMUV3_KERNEL_FILTERS))
		return PFM_PMC_PRIV_KERNEL;
	return 0;
}

/*
 * The same filter counting EL0 only (for a default the context may not
 * use): P set, NSK and NSH clear; U and NSU, which only narrow it, and
 * the event are kept.
 */
static u64 pmuv3_pmc_user_val(const struct pfm_pmu_map *map, u16 cnum,
			      u64 value)
{
	return (value | ARMV8_PMU_EXCLUDE_EL1) & ~PMUV3_KERNEL_FILTERS;
}

/* Describe counter @idx: its PMC (filters, event) and PMD. */
static void pmuv3_add_counter(unsigned int idx, u64 evt_mask)
{
	bool cycles = idx == PMUV3_CYCLE_IDX;
	struct pfm_regmap_desc *c = &pmuv3_pmc_desc[idx];
	struct pfm_regmap_desc *d = &pmuv3_pmd_desc[idx];

	if (cycles) {
		snprintf(pmuv3_names[0][idx], PFM_NAME_LEN, "PMCCFILTR_EL0");
		snprintf(pmuv3_names[1][idx], PFM_NAME_LEN, "PMCCNTR_EL0");
		c->hw_addr = SYS_PMCCFILTR_EL0;
		d->hw_addr = SYS_PMCCNTR_EL0;
	} else {
		snprintf(pmuv3_names[0][idx], PFM_NAME_LEN, "PMEVTYPER%u_EL0", idx);
		snprintf(pmuv3_names[1][idx], PFM_NAME_LEN, "PMEVCNTR%u_EL0", idx);
		c->hw_addr = SYS_PMEVTYPERn_EL0(idx);
		d->hw_addr = SYS_PMEVCNTRn_EL0(idx);
	}
	c->type = PFM_REGT_IMPL;
	c->name = pmuv3_names[0][idx];
	c->rsvd_msk = ~(PMUV3_FILTERS | (cycles ? 0 : evt_mask));
	d->type = PFM_REGT_IMPL | PFM_REGT_CNTR | PFM_REGT_INTR;
	d->name = pmuv3_names[1][idx];
}

/* Read the CPU's PMU identification and fill the tables: once. */
static int pmuv3_probe_cpu(void)
{
	u64 dfr0 = read_sysreg_s(SYS_ID_AA64DFR0_EL1);
	unsigned int i;

	pmuv3.pmuver = FIELD_GET(ID_AA64DFR0_EL1_PMUVer, dfr0);
	if (pmuv3.pmuver < ID_AA64DFR0_EL1_PMUVer_IMP ||
	    pmuv3.pmuver == ID_AA64DFR0_EL1_PMUVer_IMP_DEF)
		return -ENODEV;
	pmuv3.num_ctrs = pfm_pmcr_n(read_sysreg(pmcr_el0));
	pmuv3.has_long_ctrs = pmuv3.pmuver >= ID_AA64DFR0_EL1_PMUVer_V3P5;
	pmuv3.ctr_mask = GENMASK(pmuv3.num_ctrs - 1, 0) | BIT(PMUV3_CYCLE_IDX);
	if (!pmuv3.num_ctrs)
		pmuv3.ctr_mask = BIT(PMUV3_CYCLE_IDX);
	pmuv3.pmceid[0] = read_sysreg(pmceid0_el0);
	pmuv3.pmceid[1] = read_sysreg(pmceid1_el0);
	pmuv3.evt_mask = pmuv3.pmuver >= ID_AA64DFR0_EL1_PMUVer_V3P1 ?
			 ARMV8_PMU_EVTYPE_EVENT : PMUV3_EVTYPE_EVENT_V3;
	for (i = 0; i < pmuv3.num_ctrs; i++)
		pmuv3_add_counter(i, pmuv3.evt_mask);
	pmuv3_add_counter(PMUV3_CYCLE_IDX, pmuv3.evt_mask);
	pmuv3.num_events = pmuv3_list_events();
	return 1;
}

/* Both engines put el0_access in force: PMUSERENR_EL0, or perf's. */
static const struct pfm_pmu_settings pmuv3_settings = {
	.desc		= pmuv3_cfg_desc,
	.num		= ARRAY_SIZE(pmuv3_cfg_desc),
	.check		= pmuv3_cfg_check,
};

static const struct pfm_pmu_checks pmuv3_checks = {
	.pmc_write	= pmuv3_pmc_check,
	.pmc_priv	= pmuv3_pmc_priv,
	.pmc_user_val	= pmuv3_pmc_user_val,
};

/**
 * pmuv3_probe_map() - fill @map with this CPU's PMUv3 register map
 * @map: to fill: name, register tables, checks, events, width and
 *       driver setting
 * @long_counters: 64-bit counters where PMUv3p5 has them
 *
 * The first call reads ID registers, PMCR_EL0.N and PMCEID<n>_EL0 only
 * (the builtin PMUv3 driver may own the PMU meanwhile); later calls
 * return what it found.  Sleeps: call it from a module's init.
 *
 * Return: what the probe found, read-only; ERR_PTR(-ENODEV) without a
 * PMUv3.
 */
const struct pmuv3_info *pmuv3_probe_map(struct pfm_pmu_map *map,
					 bool long_counters)
{
	mutex_lock(&pmuv3_map_lock);
	if (!pmuv3_probed)
		pmuv3_probed = pmuv3_probe_cpu();
	mutex_unlock(&pmuv3_map_lock);
	if (pmuv3_probed < 0) {
		/* Each description that asks is refused, each time logged. */
		pr_info("no PMUv3 on this CPU (ID_AA64DFR0_EL1.PMUVer %u): pfm_soft counts without one\n",
			pmuv3.pmuver);
		return ERR_PTR(pmuv3_probed);
	}

	/* The native name: programs written for it run over pfm_perf too. */
	*map = (struct pfm_pmu_map) {
		.pmu_name	 = "armv8_pmuv3",
		.counter_width	 = long_counters && pmuv3.has_long_ctrs ? 64 : 32,
		.pmc_desc	 = pmuv3_pmc_desc,
		.num_pmc_entries = PMUV3_NUM_REGS,
		.pmd_desc	 = pmuv3_pmd_desc,
		.num_pmd_entries = PMUV3_NUM_REGS,
		.events		 = pmuv3_events,
		.num_events	 = pmuv3.num_events,
		.checks		 = &pmuv3_checks,
		.settings	 = &pmuv3_settings,
	};
	return &pmuv3;
}
EXPORT_SYMBOL_NS_GPL(pmuv3_probe_map, PERFMON_PMU_LIB);
