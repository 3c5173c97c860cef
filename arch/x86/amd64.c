// SPDX-License-Identifier: GPL-2.0
/*
 * AMD64 performance counters (also Hygon), as a struct pfm_x86_pmu.
 *
 * Register map:
 *   legacy (K7 on):        PMCn PERFEVTSELn (0xc0010000 + n),
 *                          PMDn PERFCTRn (0xc0010004 + n), n < 4
 *   core (PERFCTR_CORE,    PMCn PERF_CTLn (0xc0010200 + 2n),
 *   CPUID 0x80000001 ECX   PMDn PERF_CTRn (0xc0010201 + 2n), n < 6, or
 *   bit 23):               the number PerfMonV2 gives (CPUID 0x80000022
 *                          EBX[3:0])
 * Counters are 48 bits wide.  With PerfMonV2 (CPUID 0x80000022 EAX bit
 * 0) PERF_CNTR_GLOBAL_CTL/STATUS/STATUS_CLR (0xc0000301, 0xc0000300,
 * 0xc0000302) gate counting and report overflows; the engine owns them.
 * Without, overflows are found from the counters' top bit and the core
 * sees 47-bit counters (see x86_pmu.c).
 *
 * A PMC holds the event (bits 7:0 and 35:32), unit mask, USR, OS, edge,
 * INT (set by the engine), EN, INV, counter mask, GuestOnly, HostOnly.
 */
#define pr_fmt(fmt) "perfmon: " fmt

#include <linux/bits.h>
#include <linux/kernel.h>
#include <asm/msr-index.h>
#include <asm/perf_event.h>
#include <asm/processor.h>

#include "pfm_x86.h"

#define AMD_WIDTH		48
#define AMD_LEGACY_CTRS		4
#define AMD_CORE_CTRS		6
#define AMD_EXT_PERFCTR_CORE	BIT(23)		/* CPUID 0x80000001 ECX */
#define AMD_EXT_PERFMON_V2	BIT(0)		/* CPUID 0x80000022 EAX */

#define AMD_EVTSEL_OK	(AMD64_EVENTSEL_EVENT | ARCH_PERFMON_EVENTSEL_UMASK | \
			 ARCH_PERFMON_EVENTSEL_USR | ARCH_PERFMON_EVENTSEL_OS | \
			 ARCH_PERFMON_EVENTSEL_EDGE | ARCH_PERFMON_EVENTSEL_INT | \
			 ARCH_PERFMON_EVENTSEL_ENABLE |			\
			 ARCH_PERFMON_EVENTSEL_INV | ARCH_PERFMON_EVENTSEL_CMASK | \
			 AMD64_EVENTSEL_GUESTONLY | AMD64_EVENTSEL_HOSTONLY)

static bool amd_has(const struct pfm_x86_hw *hw, u32 leaf, u32 eax_bit,
		    u32 ecx_bit, u32 *ebx)
{
	u32 eax, ecx, edx;

	if (!hw->cpuid(leaf, &eax, ebx, &ecx, &edx))
		return false;
	return (eax & eax_bit) || (ecx & ecx_bit);
}

/* The reserved masks hold every other rule of AMD's event selects. */
static const struct pfm_pmu_checks amd64_checks = {
	.pmc_priv	= pfm_x86_pmc_priv,
};

/**
 * pfm_amd64_probe() - describe this CPU's AMD64 counters
 * @xp: zeroed description to fill
 *
 * Return: 0, or -ENODEV (logged) when this is not an AMD or Hygon CPU
 * of family 6 (K7) or later.
 */
int pfm_amd64_probe(struct pfm_x86_pmu *xp)
{
	u8 vendor = xp->hw->vendor();
	bool core, v2;
	unsigned int i, n;
	char name[PFM_NAME_LEN];
	union cpuid_0x80000022_ebx ebx;
	u32 sel, ctr;

	if ((vendor != X86_VENDOR_AMD && vendor != X86_VENDOR_HYGON) ||
	    xp->hw->family() < 6) {
		pr_info("amd64: not an AMD or Hygon CPU of family 6 or later: no native description drives its PMU; pfm_perf counts through perf (perfmon.pmu=auto)\n");
		return -ENODEV;
	}
	core = amd_has(xp->hw, 0x80000001, 0, AMD_EXT_PERFCTR_CORE, &ebx.full);
	v2 = amd_has(xp->hw, 0x80000022, AMD_EXT_PERFMON_V2, 0, &ebx.full);
	n = core ? AMD_CORE_CTRS : AMD_LEGACY_CTRS;
	/* PerfMonV2 counts the core counters it has. */
	v2 = v2 && core && ebx.split.num_core_pmc;
	if (v2)
		n = min_t(unsigned int, ebx.split.num_core_pmc, PFM_X86_MAX_GP);

	xp->name = "amd64";
	xp->width = v2 ? AMD_WIDTH : AMD_WIDTH - 1;
	xp->checks = &amd64_checks;
	xp->num_gp = n;
	for (i = 0; i < n; i++) {
		sel = core ? MSR_F15H_PERF_CTL + 2 * i : MSR_K7_EVNTSEL0 + i;
		ctr = core ? MSR_F15H_PERF_CTR + 2 * i : MSR_K7_PERFCTR0 + i;
		snprintf(name, sizeof(name), core ? "PERF_CTL%u" : "PERFEVTSEL%u", i);
		pfm_x86_add_pmc(xp, i, name, sel, ~AMD_EVTSEL_OK);
		snprintf(name, sizeof(name), core ? "PERF_CTR%u" : "PERFCTR%u", i);
		pfm_x86_add_ctr(xp, i, name, ctr, ctr, i, i, AMD_WIDTH);
	}
	if (v2) {
		xp->global_ctrl = MSR_AMD64_PERF_CNTR_GLOBAL_CTL;
		xp->global_status = MSR_AMD64_PERF_CNTR_GLOBAL_STATUS;
		xp->global_clr = MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR;
	}
	pr_info("amd64: %u %s counters of %u bits%s\n", n,
		core ? "core" : "legacy", AMD_WIDTH, v2 ? ", PerfMonV2" : "");
	return 0;
}
