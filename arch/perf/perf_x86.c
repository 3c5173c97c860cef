// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_perf's register map on x86, in pfm_pmu_lib: the CPU's own, as
 * pfm_x86 presents it (the vendor parts and arch/x86/x86_map.c), each
 * event select turned into the
 * raw event perf's x86 driver programs the same register from:
 *   - config: the select's event, unit mask, edge, invert, counter mask
 *     (and AnyThread on Intel, event bits 35:32 on AMD); perf adds USR,
 *     OS, INT and EN itself, from:
 *   - exclude_user: USR clear; exclude_kernel: OS clear;
 *   - AMD's GuestOnly and HostOnly: exclude_host and exclude_guest.
 * A select with EN clear, or neither USR nor OS, counts nothing: no
 * counter is taken.  Intel's fixed counters, each a field of
 * FIXED_CTR_CTRL (PMC16), count perf's encodings of their events:
 * 0x00c0 instructions, 0x003c core cycles, 0x0300 reference cycles (the
 * pseudo-event perf keeps for fixed counter 2), 0x0400 topdown slots;
 * perf places them on the fixed counters when free.
 *
 * Where perf drives no PMU (a virtual machine without one, the x86_64
 * test guest under TCG) or a hybrid CPU's core types differ, the map is
 * the software PMU's (perf_soft.c).  The native driver setting
 * user_rdpmc has no equivalent here: perf lets a thread rdpmc only the
 * counters it mapped with perf_event_open() and mmap().
 */
/* pfm_pmu_lib's code, pfm_perf's messages. */
#define pr_fmt(fmt) "pfm_perf: " fmt

#include <linux/module.h>
#include <linux/string.h>
#include <asm/perf_event.h>
#include <asm/processor.h>

#include "../x86/pfm_x86.h"
#include "pfm_perf.h"

/* Fixed counter i's event, in perf's raw encoding. */
static const u16 pfp_x86_fixed_event[PFM_X86_MAX_FIXED] = {
	0x00c0, 0x003c, 0x0300, 0x0400,
};

#define PFP_X86_RAW	(ARCH_PERFMON_EVENTSEL_EVENT | AMD64_EVENTSEL_EVENT | \
			 ARCH_PERFMON_EVENTSEL_UMASK |			    \
			 ARCH_PERFMON_EVENTSEL_EDGE | ARCH_PERFMON_EVENTSEL_INV | \
			 ARCH_PERFMON_EVENTSEL_CMASK | ARCH_PERFMON_EVENTSEL_ANY)

static struct pfm_x86_pmu pfp_x86;
/* The software PMU's map serves: perf drives no PMU here. */
static bool pfp_x86_soft;

/* The vendor part's register map, without pfm_x86's setting. */
static const struct pfm_pmu_map *
pfp_x86_probe_vendor(const struct pfm_x86_hw *cpu)
{
	int ret;

	pfp_x86.hw = cpu;
	ret = pfm_x86_probe_cpu(&pfp_x86);
	if (ret)
		return ERR_PTR(ret);
	pfm_x86_map_fill(&pfp_x86, NULL);
	return &pfp_x86.map;
}

/**
 * pfp_x86_probe() - the x86 map's probe (struct pfp_map)
 * @cpu: what the vendor parts probe the CPU with
 * @perf_pmu: perf drives the CPU's Intel or AMD PMU; else the software
 *            PMU's map serves
 *
 * Context: a map's probe: the engine is claimed for the caller, so this
 * map's state has no other user.
 * Return: the map, or the vendor part's ERR_PTR(-ENODEV).
 */
const struct pfm_pmu_map *pfp_x86_probe(const struct pfm_x86_hw *cpu,
					bool perf_pmu)
{
	/* Fresh, as a module's static data is: the library stays loaded. */
	memset(&pfp_x86, 0, sizeof(pfp_x86));
	pfp_x86_soft = !perf_pmu;
	if (pfp_x86_soft)
		return pfp_soft_probe();
	return pfp_x86_probe_vendor(cpu);
}
EXPORT_SYMBOL_NS_GPL(pfp_x86_probe, PERFMON_PMU_LIB);

/**
 * pfp_x86_pmc() - the x86 map's PMC of a PMD (struct pfp_map)
 * @pmd: a PMD the map implements
 *
 * Return: the PMC that controls it.
 */
u16 pfp_x86_pmc(u16 pmd)
{
	if (pfp_x86_soft || !(pfp_x86.pmd_desc[pmd].type & PFM_REGT_IMPL))
		return pmd;
	return pfp_x86.ctr[pmd].sel;
}
EXPORT_SYMBOL_NS_GPL(pfp_x86_pmc, PERFMON_PMU_LIB);

/* Fixed counter @i, enabled by its field of FIXED_CTR_CTRL @value. */
static int pfp_x86_fixed_attr(unsigned int i, u64 value,
			      struct perf_event_attr *attr)
{
	u64 field = PFM_X86_FIXED_FIELD(value, i);

	if (!(field & PFM_X86_FIXED_EN))
		return -ENOENT;
	attr->type = PERF_TYPE_RAW;
	attr->config = pfp_x86_fixed_event[i];
	if (field & PFM_X86_FIXED_ANY)
		attr->config |= ARCH_PERFMON_EVENTSEL_ANY;
	attr->exclude_user = !(field & PFM_X86_FIXED_USR);
	attr->exclude_kernel = !(field & PFM_X86_FIXED_OS);
	return 0;
}

/**
 * pfp_x86_attr() - the x86 map's perf event of a PMD (struct pfp_map)
 * @cnum: the PMD
 * @value: the value of its PMC
 * @cfg: the context's driver settings (none on x86)
 * @attr: to fill
 *
 * Return: 0; -ENOENT when the value counts nothing.
 */
int pfp_x86_attr(u16 cnum, u64 value, const u64 *cfg,
		 struct perf_event_attr *attr)
{
	if (pfp_x86_soft)
		return pfp_soft_attr(value, attr);
	if (cnum >= PFM_X86_FIXED_BASE)
		return pfp_x86_fixed_attr(cnum - PFM_X86_FIXED_BASE, value, attr);
	if (!(value & ARCH_PERFMON_EVENTSEL_ENABLE) ||
	    !(value & (ARCH_PERFMON_EVENTSEL_USR | ARCH_PERFMON_EVENTSEL_OS)))
		return -ENOENT;
	attr->type = PERF_TYPE_RAW;
	attr->config = value & PFP_X86_RAW;
	attr->exclude_user = !(value & ARCH_PERFMON_EVENTSEL_USR);
	attr->exclude_kernel = !(value & ARCH_PERFMON_EVENTSEL_OS);
	/* Intel reserves these bits: the core refused them there. */
	attr->exclude_host = !!(value & AMD64_EVENTSEL_GUESTONLY);
	attr->exclude_guest = !!(value & AMD64_EVENTSEL_HOSTONLY);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(pfp_x86_attr, PERFMON_PMU_LIB);
