// SPDX-License-Identifier: GPL-2.0
/*
 * The x86 engine's accessors on real hardware: MSRs, the local APIC's
 * performance counter entry, CR4.PCE and the kernel's NMI counter
 * allocator shared with perf (CPUID and the probe's MSR read are in
 * x86_cpu.c).  See pfm_x86.h; x86_sim.c is the simulated counterpart
 * used by the tests.
 */
#include <linux/types.h>
#include <asm/msr.h>
#include <asm/nmi.h>
#include <asm/processor.h>
#include <asm/special_insns.h>
#include <asm/tlbflush.h>

#include <perfmon/compat.h>

#include "pfm_x86.h"

#define PFM_X86_NMI_NAME	"perfmon"

u64 pfm_x86_rdmsr(u32 msr)
{
	u64 v;

	rdmsrl(msr, v);
	return v;
}

void pfm_x86_wrmsr(u32 msr, u64 value)
{
	wrmsrl(msr, value);
}

int pfm_x86_wrmsr_safe(u32 msr, u64 value)
{
	return wrmsrl_safe(msr, value);
}

bool pfm_x86_reserve(u32 ctr_msr, u32 sel_msr)
{
	if (!reserve_perfctr_nmi(ctr_msr))
		return false;
	if (reserve_evntsel_nmi(sel_msr))
		return true;
	release_perfctr_nmi(ctr_msr);
	return false;
}

void pfm_x86_release(u32 ctr_msr, u32 sel_msr)
{
	release_evntsel_nmi(sel_msr);
	release_perfctr_nmi(ctr_msr);
}

void pfm_x86_lvtpc_nmi(void)
{
	pfm_apic_write(APIC_LVTPC, APIC_DM_NMI);
}

int pfm_x86_nmi_register(void)
{
	return register_nmi_handler(NMI_LOCAL, pfm_x86_nmi, 0, PFM_X86_NMI_NAME);
}

void pfm_x86_nmi_unregister(void)
{
	unregister_nmi_handler(NMI_LOCAL, PFM_X86_NMI_NAME);
}

bool pfm_x86_pce(void)
{
	return __read_cr4() & X86_CR4_PCE;
}

void pfm_x86_set_pce(bool on)
{
	cr4_update_irqsoff(on ? X86_CR4_PCE : 0, on ? 0 : X86_CR4_PCE);
}
