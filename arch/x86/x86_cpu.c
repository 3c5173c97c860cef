// SPDX-License-Identifier: GPL-2.0
/*
 * What the vendor parts probe the CPU with, on real hardware: CPUID, the
 * vendor and family, and a checked MSR read.  Shared by the native
 * modules and pfm_perf, which probe the same way (pfm_x86.h).
 */
#include <linux/types.h>
#include <asm/msr.h>
#include <asm/processor.h>

#include "pfm_x86.h"

int pfm_x86_rdmsr_safe(u32 msr, u64 *value)
{
	return rdmsrl_safe(msr, value);
}

/* False for a leaf above the CPU's highest basic or extended leaf. */
bool pfm_x86_cpuid(u32 leaf, u32 *eax, u32 *ebx, u32 *ecx, u32 *edx)
{
	u32 max = leaf >= 0x80000000 ? boot_cpu_data.extended_cpuid_level :
				       boot_cpu_data.cpuid_level;

	if (leaf > max)
		return false;
	cpuid_count(leaf, 0, eax, ebx, ecx, edx);
	return true;
}

u8 pfm_x86_vendor(void)
{
	return boot_cpu_data.x86_vendor;
}

unsigned int pfm_x86_family(void)
{
	return boot_cpu_data.x86;
}
