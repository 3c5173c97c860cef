/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels perfmon builds against, all in one place.
 * Code outside this header calls the pfm_* helpers below and never tests a
 * kernel version; a new difference gets a row here and a helper.
 *
 * What changed                        Since  What perfmon does
 * ----------------------------------  -----  -------------------------------
 * vma->vm_flags read-only; writers    6.3    pfm_vm_flags_set/clear() call
 * use vm_flags_set/clear()                   them, else write the field
 *                                            (Kbuild: PFM_HAVE_VM_FLAGS_SET)
 * arm64 PMUv3 register and event      6.4    include whichever header
 * names moved from asm/perf_event.h          exists (Kbuild:
 * to linux/perf/arm_pmuv3.h                  PFM_HAVE_ARM_PMUV3_H)
 * ARMV8_PMU_PMCR_N_SHIFT/_MASK        6.7    pfm_pmcr_n() uses whichever
 * became the field ARMV8_PMU_PMCR_N          is defined
 * ARMV8_PMU_EXCLUDE_NS_EL1/_EL0       >6.1   defined here (bits 29, 28 of
 * (PMEVTYPERn_EL0.NSK, NSU) named            PMEVTYPERn_EL0) where the
 *                                            header lacks them
 * x86 apic_write() became a static    6.6    pfm_apic_write() calls
 * call whose key is not exported             apic->write (exported struct
 *                                            apic) on every kernel
 * perf lets one PMU only take        6.2    PFM_PERF_CAP_SHARED_HW_CTX:
 * perf_hw_context, unless marked             the mark where it exists, 0
 * PERF_PMU_CAP_HETEROGENEOUS_CPUS            where there is no such rule
 * (the tests' simulated x86 PMU)             (the tests' simulated PMU)
 * user_struct::locked_vm exists only  config pfm_user_locked_vm(): the
 * with one of its users built in             field; without it (the debug
 * (CONFIG_NET, IO_URING, ...)                gate's tinyconfig) one counter
 *                                            for all users, never looser
 *
 * Tested in CI against Debian's 6.1 and 6.12 (generic and -rt); see the
 * README's kernel table.  Tests look for the feature, not the version:
 * a macro or header where there is one; otherwise Kbuild greps the
 * headers (PFM_HAVE_*), so a distribution kernel that backports a change
 * is handled like the kernel that introduced it.
 */
#ifndef _PERFMON_COMPAT_H
#define _PERFMON_COMPAT_H

#include <linux/bitfield.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/sched/user.h>

extern atomic_long_t pfm_all_users_locked_vm;

/* Same condition as the field's in include/linux/sched/user.h. */
#if defined(CONFIG_NET) || defined(CONFIG_IO_URING) || \
	defined(CONFIG_VFIO_PCI_ZDEV_KVM) || IS_ENABLED(CONFIG_IOMMUFD) || \
	defined(CONFIG_SECRETMEM)
/* The locked pages charged to @user (with perf's, io_uring's...). */
static inline atomic_long_t *pfm_user_locked_vm(struct user_struct *user)
{
	return &user->locked_vm;
}
#else
static inline atomic_long_t *pfm_user_locked_vm(struct user_struct *user)
{
	return &pfm_all_users_locked_vm;
}
#endif

#ifdef CONFIG_X86
#include <asm/apic.h>

/* A local APIC register write (the PMU interrupt's LVT entry). */
static inline void pfm_apic_write(u32 reg, u32 val)
{
	apic->write(reg, val);
}
#endif

#ifdef CONFIG_ARM64
#ifdef PFM_HAVE_ARM_PMUV3_H
#include <linux/perf/arm_pmuv3.h>
#else
#include <asm/perf_event.h>
#endif

#ifndef ARMV8_PMU_EXCLUDE_NS_EL1
#define ARMV8_PMU_EXCLUDE_NS_EL1	BIT(29)
#define ARMV8_PMU_EXCLUDE_NS_EL0	BIT(28)
#endif

/* PMCR_EL0.N: the number of event counters. */
static inline unsigned int pfm_pmcr_n(u64 pmcr)
{
#ifdef ARMV8_PMU_PMCR_N_SHIFT
	return (pmcr >> ARMV8_PMU_PMCR_N_SHIFT) & ARMV8_PMU_PMCR_N_MASK;
#else
	return FIELD_GET(ARMV8_PMU_PMCR_N, pmcr);
#endif
}
#endif

#ifdef PERF_PMU_CAP_HETEROGENEOUS_CPUS
#define PFM_PERF_CAP_SHARED_HW_CTX	PERF_PMU_CAP_HETEROGENEOUS_CPUS
#else
#define PFM_PERF_CAP_SHARED_HW_CTX	0
#endif

#ifdef PFM_HAVE_VM_FLAGS_SET
static inline void pfm_vm_flags_set(struct vm_area_struct *vma,
				    vm_flags_t flags)
{
	vm_flags_set(vma, flags);
}

static inline void pfm_vm_flags_clear(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
	vm_flags_clear(vma, flags);
}
#else
static inline void pfm_vm_flags_set(struct vm_area_struct *vma,
				    vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void pfm_vm_flags_clear(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

#endif /* _PERFMON_COMPAT_H */
