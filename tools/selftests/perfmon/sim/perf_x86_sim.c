// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_perf_x86sim: pfm_perf's engine and x86 register map (pfm_pmu_lib's,
 * which pfm_perf.ko runs on x86) on the SIMULATED perf PMU of the test
 * module pfm_perf_simpmu (perf_sim_pmu.c).  For tests only: no x86 PMU
 * is reachable under QEMU's TCG.  CPUID, which the vendor parts probe,
 * describes that PMU.  What is real: /dev/perfmon, the core, pfm_perf's
 * engine and map, perf's scheduling of the kernel counters (pinned, per
 * thread or CPU) and its errors when the counters are taken.
 */
#include <linux/module.h>
#include <asm/msr-index.h>
#include <asm/perf_event.h>
#include <asm/processor.h>

#include "pfm_x86.h"
#include "pfm_perf.h"
#include "pfm_perf_sim.h"

#define SIM_WIDTH	48

static struct pfm_perf_sim_shape psim;

/* CPUID as the simulated PMU is, for the vendor parts. */
static bool psim_cpuid(u32 leaf, u32 *eax, u32 *ebx, u32 *ecx, u32 *edx)
{
	union cpuid10_eax a = { .full = 0 };
	union cpuid10_edx d = { .full = 0 };

	*eax = 0;
	*ebx = 0;
	*ecx = 0;
	*edx = 0;
	switch (leaf) {
	case 1:
		*ecx = psim.intel ? BIT(15) : 0;	/* PDCM */
		return true;
	case 0xa:
		if (!psim.intel)
			return false;
		a.split.version_id = 4;
		a.split.num_counters = psim.counters;
		a.split.bit_width = SIM_WIDTH;
		a.split.mask_length = 7;
		d.split.num_counters_fixed = psim.fixed;
		d.split.bit_width_fixed = SIM_WIDTH;
		*eax = a.full;
		*edx = d.full;
		return true;
	case 0x80000001:
		*ecx = !psim.intel && psim.counters == 6 ? BIT(23) : 0;
		return true;
	}
	return false;
}

static u8 psim_vendor(void)
{
	return psim.intel ? X86_VENDOR_INTEL : X86_VENDOR_AMD;
}

static unsigned int psim_family(void)
{
	return psim.intel ? 6 : 0x17;
}

/* The only MSR the vendor parts read: full-width writes exist. */
static int psim_rdmsr_safe(u32 msr, u64 *value)
{
	if (!psim.intel || msr != MSR_IA32_PERF_CAPABILITIES)
		return -EIO;
	*value = BIT_ULL(13);
	return 0;
}

static const struct pfm_x86_hw psim_hw = {
	.cpuid		= psim_cpuid,
	.vendor		= psim_vendor,
	.family		= psim_family,
	.read_msr_safe	= psim_rdmsr_safe,
};

/* The x86 map on the simulated PMU, which perf drives. */
static const struct pfm_pmu_map *psim_probe(void)
{
	return pfp_x86_probe(&psim_hw, true);
}

static const struct pfp_map psim_map = {
	.probe	= psim_probe,
	.pmc	= pfp_x86_pmc,
	.attr	= pfp_x86_attr,
};

static unsigned int max_counters = 256;

static int __init pfm_perf_x86sim_init(void)
{
	int ret = pfm_perf_sim_shape(&psim);

	if (ret)
		return ret;
	return pfp_init(THIS_MODULE, &psim_map, &max_counters);
}

static void __exit pfm_perf_x86sim_exit(void)
{
	pfp_exit();
}

module_init(pfm_perf_x86sim_init);
module_exit(pfm_perf_x86sim_exit);

MODULE_DESCRIPTION("perfmon: pfm_perf's x86 map on a simulated perf PMU (tests only)");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(PERFMON_PMU_LIB);
