// SPDX-License-Identifier: GPL-2.0
/*
 * Who may do what (Documentation/security.rst).
 *
 * The administrator sets a paranoid level in /sys/kernel/perfmon/paranoid,
 * with perf_event_paranoid's numbers and default; CAP_PERFMON (or
 * CAP_SYS_ADMIN) bypasses it:
 *   -1  no restriction; sampling buffers ignore RLIMIT_MEMLOCK
 *    0  system-wide contexts, AnyThread counting
 *    1  counting at kernel privilege levels, kernel addresses in samples
 *    2  per-thread, user-level counting only (the default)
 *    3  no context at all
 *
 * A context's privileges are decided once, when it is created, from its
 * creator's capabilities and the level then: perf decides at
 * perf_event_open() too, and a monitor that was allowed to start keeps
 * working when the knob moves.  They are enforced where they matter:
 * PMC writes (core/regs.c), the load of a system-wide context
 * (core/control.c) and the overflow path's instruction pointers
 * (core/ovfl.c).  Kernel API contexts get them all: their caller is the
 * kernel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/printk.h>
#include <linux/sched.h>

#include "perfmon.h"

/* Written by sysfs (CAP_SYS_ADMIN), read once per decision. */
int pfm_paranoid = PFM_PARANOID_DFL;

/**
 * pfm_perm_grant() - the privileges of a user context created now
 *
 * The capability is asked about only when the level does not grant
 * everything, as perf does (a security module may log the question).
 *
 * Context: process context, the creator's.
 * Return: PFM_PMC_PRIV_* bits.
 */
u32 pfm_perm_grant(void)
{
	int level = READ_ONCE(pfm_paranoid);
	u32 priv = 0;

	if (level <= 1)
		priv |= PFM_PMC_PRIV_KERNEL;
	if (level <= 0)
		priv |= PFM_PMC_PRIV_CPU;
	if (priv != PFM_PMC_PRIV_ALL && perfmon_capable())
		priv = PFM_PMC_PRIV_ALL;
	return priv;
}

/**
 * pfm_perm_exec() - may a user context created now follow its thread
 * through the exec of an image the owner may not read (core/exec.c)?
 *
 * That is reading a non-dumpable process, which ptrace allows with
 * CAP_SYS_PTRACE.  Asked without an audit record: most creators lack
 * it, and that is no denial (they never try to watch such an image).
 *
 * Context: process context, the creator's.
 * Return: the creator has CAP_SYS_PTRACE in the initial user namespace.
 */
bool pfm_perm_exec(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_SYS_PTRACE);
}

/**
 * pfm_perm_create() - may the caller create a context at all?
 *
 * Context: process context.
 * Return: 0, or -EACCES at paranoid level 3 without CAP_PERFMON.
 */
int pfm_perm_create(void)
{
	int level = READ_ONCE(pfm_paranoid);

	if (level < 3 || perfmon_capable())
		return 0;
	pr_info_ratelimited("%s (uid %u) may not create contexts at paranoid level %d: give it CAP_PERFMON, or write 2 to /sys/kernel/perfmon/paranoid\n",
			    current->comm,
			    from_kuid_munged(&init_user_ns, current_uid()),
			    level);
	return -EACCES;
}

/**
 * pfm_perm_pmc_refused() - log why a PMC value was refused
 * @cnum: the PMC
 * @missing: the PFM_PMC_PRIV_* bits the context lacks
 */
void pfm_perm_pmc_refused(u16 cnum, u32 missing)
{
	if (missing & PFM_PMC_PRIV_CPU)
		pr_info_ratelimited("PMC%u counts other threads of the core (AnyThread): the context's creator needs CAP_PERFMON, or /sys/kernel/perfmon/paranoid at 0 or below (now %d) when it creates the context\n",
				    cnum, READ_ONCE(pfm_paranoid));
	else
		pr_info_ratelimited("PMC%u counts at a kernel privilege level: count at user level only, or the context's creator needs CAP_PERFMON, or /sys/kernel/perfmon/paranoid at 1 or below (now %d) when it creates the context\n",
				    cnum, READ_ONCE(pfm_paranoid));
}

/**
 * pfm_perm_system_refused() - log why a system-wide load was refused
 */
void pfm_perm_system_refused(void)
{
	pr_info_ratelimited("system-wide monitoring needs CAP_PERFMON (or CAP_SYS_ADMIN) when the context is created, or /sys/kernel/perfmon/paranoid at 0 or below (now %d); or monitor threads\n",
			    READ_ONCE(pfm_paranoid));
}
