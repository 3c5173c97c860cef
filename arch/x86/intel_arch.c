// SPDX-License-Identifier: GPL-2.0
/*
 * Intel architectural performance monitoring (CPUID leaf 0xA), versions
 * 1 to 5: what the CPU enumerates, as a struct pfm_x86_pmu.
 *
 * Register map:
 *   PMCn  (n < CPUID.0AH:EAX[15:8]) IA32_PERFEVTSELn (0x186 + n)
 *   PMC16 IA32_FIXED_CTR_CTRL (0x38d), 4 bits per fixed counter (v2+)
 *   PMDn  IA32_PMCn (0xc1 + n); written through IA32_A_PMCn (0x4c1 + n)
 *         when IA32_PERF_CAPABILITIES.FW_WRITE (bit 13) says so
 *   PMD16+i IA32_FIXED_CTRi (0x309 + i), i enumerated by CPUID.0AH:EDX[4:0]
 *         and, from version 5, the bitmap in ECX
 * From version 2, IA32_PERF_GLOBAL_CTRL/STATUS/OVF_CTRL (0x38f, 0x38e,
 * 0x390) gate counting and report overflows; the engine owns them.
 *
 * The interrupt bits (PERFEVTSEL.INT, the fixed counters' PMI) are set
 * by the engine whatever the user writes.  An architectural event that
 * CPUID.0AH:EBX marks unavailable is refused.
 */
#define pr_fmt(fmt) "perfmon: " fmt

#include <linux/bits.h>
#include <linux/kernel.h>
#include <asm/msr-index.h>
#include <asm/perf_event.h>
#include <asm/processor.h>

#include "pfm_x86.h"

#define INTEL_PDCM		BIT(15)		/* CPUID.1:ECX */
#define INTEL_CAP_FW_WRITE	BIT_ULL(13)	/* IA32_PERF_CAPABILITIES */
#define INTEL_LEGACY_WIDTH	31	/* what a legacy IA32_PMCx write keeps */

#define INTEL_EVTSEL_OK	(ARCH_PERFMON_EVENTSEL_EVENT |			\
			 ARCH_PERFMON_EVENTSEL_UMASK |			\
			 ARCH_PERFMON_EVENTSEL_USR | ARCH_PERFMON_EVENTSEL_OS | \
			 ARCH_PERFMON_EVENTSEL_EDGE | ARCH_PERFMON_EVENTSEL_INT | \
			 ARCH_PERFMON_EVENTSEL_ENABLE |			\
			 ARCH_PERFMON_EVENTSEL_INV | ARCH_PERFMON_EVENTSEL_CMASK)

/* The architectural events, in CPUID.0AH:EBX bit order: event, umask. */
static const u16 intel_arch_events[] = {
	0x003c,	/* UnHalted Core Cycles */
	0x00c0,	/* Instructions Retired */
	0x013c,	/* UnHalted Reference Cycles */
	0x4f2e,	/* LLC References */
	0x412e,	/* LLC Misses */
	0x00c4,	/* Branch Instructions Retired */
	0x00c5,	/* Branch Misses Retired */
	0x01a4,	/* Topdown Slots */
};

/**
 * struct intel_arch_info - what CPUID leaf 0xA says
 * @version: architectural perfmon version
 * @num_gp: general-purpose counters
 * @gp_width: their width
 * @fixed: fixed counters present (bitmap)
 * @fixed_width: their width
 * @ebx_len: events described by @unavail
 * @unavail: CPUID.0AH:EBX, a set bit is an architectural event missing
 * @full_width: IA32_A_PMCx full-width writes
 */
struct intel_arch_info {
	unsigned int version;
	unsigned int num_gp;
	unsigned int gp_width;
	unsigned long fixed;
	unsigned int fixed_width;
	unsigned int ebx_len;
	u32 unavail;
	bool full_width;
};

/* The description's own map (@map_data): pfm_perf presents it too. */
static int intel_arch_pmc_check(const struct pfm_pmu_map *map, u16 cnum,
				u64 value)
{
	const struct pfm_x86_pmu *xp = map->map_data;
	u16 code = value & (ARCH_PERFMON_EVENTSEL_EVENT |
			    ARCH_PERFMON_EVENTSEL_UMASK);
	unsigned int i;

	if (cnum >= PFM_X86_FIXED_BASE)
		return 0;
	for (i = 0; i < min_t(unsigned int, xp->arch_known,
			      ARRAY_SIZE(intel_arch_events)); i++) {
		if (intel_arch_events[i] == code && (xp->arch_unavail & BIT(i)))
			return -EINVAL;
	}
	return 0;
}

static const struct pfm_pmu_checks intel_arch_checks = {
	.pmc_write	= intel_arch_pmc_check,
	.pmc_priv	= pfm_x86_pmc_priv,
};

static bool intel_full_width_writes(const struct pfm_x86_hw *hw)
{
	u32 eax, ebx, ecx, edx;
	u64 caps;
	int ret;

	if (!hw->cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & INTEL_PDCM))
		return false;
	/* Every CPU has the same; the one this runs on is read. */
	preempt_disable();
	ret = hw->read_msr_safe(MSR_IA32_PERF_CAPABILITIES, &caps);
	preempt_enable();
	return !ret && (caps & INTEL_CAP_FW_WRITE);
}

/* Read CPUID leaf 0xA; -ENODEV without architectural perfmon. */
static int intel_read_cpuid(const struct pfm_x86_hw *hw,
			    struct intel_arch_info *intel)
{
	union cpuid10_eax eax;
	union cpuid10_edx edx;
	unsigned int nfixed;
	u32 ebx, ecx;

	if (!hw->cpuid(0xa, &eax.full, &ebx, &ecx, &edx.full) ||
	    !eax.split.version_id) {
		pr_info("intel_arch: no architectural perfmon (CPUID leaf 0xA version 0): no PMU to drive, pfm_soft counts without one\n");
		return -ENODEV;
	}
	intel->version = eax.split.version_id;
	intel->num_gp = eax.split.num_counters;
	intel->gp_width = eax.split.bit_width;
	intel->ebx_len = eax.split.mask_length;
	intel->unavail = ebx;
	nfixed = intel->version >= 2 ? edx.split.num_counters_fixed : 0;
	intel->fixed_width = edx.split.bit_width_fixed;
	intel->fixed = nfixed ? GENMASK(min(nfixed, 32U) - 1, 0) : 0;
	if (intel->version >= 5)
		intel->fixed |= ecx;
	if (intel->num_gp > PFM_X86_MAX_GP ||
	    intel->fixed & ~GENMASK(PFM_X86_MAX_FIXED - 1, 0))
		pr_info("intel_arch: driving %u of %u general-purpose counters and fixed counters 0-%u only\n",
			min_t(unsigned int, intel->num_gp, PFM_X86_MAX_GP),
			intel->num_gp, PFM_X86_MAX_FIXED - 1);
	intel->num_gp = min_t(unsigned int, intel->num_gp, PFM_X86_MAX_GP);
	intel->fixed &= GENMASK(PFM_X86_MAX_FIXED - 1, 0);
	if (!intel->num_gp || intel->gp_width < 32 || intel->gp_width > 64 ||
	    (intel->fixed && (intel->fixed_width < 32 || intel->fixed_width > 64))) {
		pr_info("intel_arch: CPUID leaf 0xA describes no usable counter (%u counters of %u bits)\n",
			intel->num_gp, intel->gp_width);
		return -ENODEV;
	}
	intel->full_width = intel_full_width_writes(hw);
	return 0;
}

/*
 * Full-width writes: the counters' width (the narrower kind).  Legacy
 * writes keep 32 bits, sign-extended: the core gets 31 (see x86_pmu.c).
 */
static unsigned int intel_core_width(const struct intel_arch_info *intel)
{
	unsigned int w = intel->gp_width;

	if (intel->fixed)
		w = min(w, intel->fixed_width);
	return intel->full_width ? w : INTEL_LEGACY_WIDTH;
}

static void intel_add_gp(struct pfm_x86_pmu *xp,
			 const struct intel_arch_info *intel, unsigned int i)
{
	u64 ok = INTEL_EVTSEL_OK;
	char name[PFM_NAME_LEN];
	u32 wr;

	if (intel->version >= 3)
		ok |= ARCH_PERFMON_EVENTSEL_ANY;
	snprintf(name, sizeof(name), "PERFEVTSEL%u", i);
	pfm_x86_add_pmc(xp, i, name, MSR_ARCH_PERFMON_EVENTSEL0 + i, ~ok);
	wr = intel->full_width ? MSR_IA32_PMC0 + i : MSR_ARCH_PERFMON_PERFCTR0 + i;
	snprintf(name, sizeof(name), "PMC%u", i);
	pfm_x86_add_ctr(xp, i, name, MSR_ARCH_PERFMON_PERFCTR0 + i, wr, i, i,
			intel->gp_width);
}

static void intel_add_fixed(struct pfm_x86_pmu *xp,
			    const struct intel_arch_info *intel)
{
	u64 field = PFM_X86_FIXED_EN | PFM_X86_FIXED_PMI, ok = 0;
	char name[PFM_NAME_LEN];
	unsigned int i;
	u32 msr;

	if (intel->version == 3 || intel->version == 4)
		field |= PFM_X86_FIXED_ANY;
	for_each_set_bit(i, &intel->fixed, PFM_X86_MAX_FIXED) {
		ok |= PFM_X86_FIXED_BITS(i, field);
		xp->fixed_pmi |= PFM_X86_FIXED_BITS(i, PFM_X86_FIXED_PMI);
		msr = MSR_ARCH_PERFMON_FIXED_CTR0 + i;
		snprintf(name, sizeof(name), "FIXED_CTR%u", i);
		pfm_x86_add_ctr(xp, PFM_X86_FIXED_BASE + i, name, msr, msr,
				PFM_X86_FIXED_BASE, PFM_X86_FIXED_STATUS + i,
				intel->fixed_width);
	}
	pfm_x86_add_pmc(xp, PFM_X86_FIXED_BASE, "FIXED_CTR_CTRL",
			MSR_ARCH_PERFMON_FIXED_CTR_CTRL, ~ok);
}

/**
 * pfm_intel_arch_probe() - describe this CPU's architectural perfmon
 * @xp: zeroed description to fill
 *
 * Return: 0, or -ENODEV (logged) when this is not an Intel CPU with
 * architectural perfmon.
 */
int pfm_intel_arch_probe(struct pfm_x86_pmu *xp)
{
	struct intel_arch_info intel = {};
	unsigned int i;
	int ret;

	if (xp->hw->vendor() != X86_VENDOR_INTEL) {
		pr_info("intel_arch: not an Intel CPU\n");
		return -ENODEV;
	}
	ret = intel_read_cpuid(xp->hw, &intel);
	if (ret)
		return ret;
	xp->name = "intel_arch";
	xp->width = intel_core_width(&intel);
	xp->checks = &intel_arch_checks;
	xp->arch_unavail = intel.unavail;
	xp->arch_known = intel.ebx_len;
	xp->num_gp = intel.num_gp;
	for (i = 0; i < intel.num_gp; i++)
		intel_add_gp(xp, &intel, i);
	if (intel.fixed)
		intel_add_fixed(xp, &intel);
	if (intel.version >= 2) {
		xp->global_ctrl = MSR_CORE_PERF_GLOBAL_CTRL;
		xp->global_status = MSR_CORE_PERF_GLOBAL_STATUS;
		xp->global_clr = MSR_CORE_PERF_GLOBAL_OVF_CTRL;
	}
	pr_info("intel_arch: version %u, %u counters of %u bits, fixed counters 0x%lx of %u bits, %s writes\n",
		intel.version, intel.num_gp, intel.gp_width, intel.fixed,
		intel.fixed_width, intel.full_width ? "full-width" : "32-bit");
	return 0;
}
