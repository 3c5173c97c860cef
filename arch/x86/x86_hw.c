// SPDX-License-Identifier: GPL-2.0
/*
 * The x86 descriptions' accessors on real hardware (struct pfm_x86_hw,
 * pfm_x86.h): MSRs, CPUID, the local APIC's performance counter entry,
 * CR4.PCE and the kernel's NMI counter allocator shared with perf.
 * pfm_x86 runs the engine on them; pfm_perf uses the CPU ones to probe
 * with the vendor parts.  x86_sim.c is the simulated counterpart used by
 * the tests.
 */
#include <linux/module.h>
#include <linux/types.h>
#include <asm/msr.h>
#include <asm/nmi.h>
#include <asm/processor.h>
#include <asm/special_insns.h>
#include <asm/tlbflush.h>

#include <perfmon/compat.h>

#include "pfm_x86.h"

#define PFM_X86_NMI_NAME	"perfmon"

static u64 pfm_x86_hw_rdmsr(u32 msr)
{
	u64 v;

	rdmsrl(msr, v);
	return v;
}

static void pfm_x86_hw_wrmsr(u32 msr, u64 value)
{
	wrmsrl(msr, value);
}

static int pfm_x86_hw_wrmsr_safe(u32 msr, u64 value)
{
	return wrmsrl_safe(msr, value);
}

static bool pfm_x86_hw_reserve(u32 ctr_msr, u32 sel_msr)
{
	if (!reserve_perfctr_nmi(ctr_msr))
		return false;
	if (reserve_evntsel_nmi(sel_msr))
		return true;
	release_perfctr_nmi(ctr_msr);
	return false;
}

static void pfm_x86_hw_release(u32 ctr_msr, u32 sel_msr)
{
	release_evntsel_nmi(sel_msr);
	release_perfctr_nmi(ctr_msr);
}

static void pfm_x86_hw_lvtpc_nmi(void)
{
	pfm_apic_write(APIC_LVTPC, APIC_DM_NMI);
}

static int pfm_x86_hw_nmi_register(void)
{
	return register_nmi_handler(NMI_LOCAL, pfm_x86_nmi, 0,
				    PFM_X86_NMI_NAME);
}

static void pfm_x86_hw_nmi_unregister(void)
{
	unregister_nmi_handler(NMI_LOCAL, PFM_X86_NMI_NAME);
}

static bool pfm_x86_hw_pce(void)
{
	return __read_cr4() & X86_CR4_PCE;
}

static void pfm_x86_hw_set_pce(bool on)
{
	cr4_update_irqsoff(on ? X86_CR4_PCE : 0, on ? 0 : X86_CR4_PCE);
}

static int pfm_x86_hw_rdmsr_safe(u32 msr, u64 *value)
{
	return rdmsrl_safe(msr, value);
}

/* False for a leaf above the CPU's highest basic or extended leaf. */
static bool pfm_x86_hw_cpuid(u32 leaf, u32 *eax, u32 *ebx, u32 *ecx,
			     u32 *edx)
{
	u32 max = leaf >= 0x80000000 ? boot_cpu_data.extended_cpuid_level :
				       boot_cpu_data.cpuid_level;

	if (leaf > max)
		return false;
	cpuid_count(leaf, 0, eax, ebx, ecx, edx);
	return true;
}

static u8 pfm_x86_hw_vendor(void)
{
	return boot_cpu_data.x86_vendor;
}

static unsigned int pfm_x86_hw_family(void)
{
	return boot_cpu_data.x86;
}

const struct pfm_x86_hw pfm_x86_hw = {
	.read_msr	= pfm_x86_hw_rdmsr,
	.write_msr	= pfm_x86_hw_wrmsr,
	.read_msr_safe	= pfm_x86_hw_rdmsr_safe,
	.write_msr_safe	= pfm_x86_hw_wrmsr_safe,
	.cpuid		= pfm_x86_hw_cpuid,
	.vendor		= pfm_x86_hw_vendor,
	.family		= pfm_x86_hw_family,
	.reserve	= pfm_x86_hw_reserve,
	.release	= pfm_x86_hw_release,
	.lvtpc_nmi	= pfm_x86_hw_lvtpc_nmi,
	.nmi_register	= pfm_x86_hw_nmi_register,
	.nmi_unregister	= pfm_x86_hw_nmi_unregister,
	.pce		= pfm_x86_hw_pce,
	.set_pce	= pfm_x86_hw_set_pce,
};
EXPORT_SYMBOL_NS_GPL(pfm_x86_hw, PERFMON_PMU_LIB);
