// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_cpupm_test: a CPU power state around a live PMUv3 context, for
 * pmuv3_test.c (tests only, never installed).
 *
 * Writing "1" to debugfs pfm_cpupm_test/run does on the writing CPU what
 * the idle path does around a state that powers the PMU down: with
 * interrupts off, cpu_pm_enter(), then the PMU loses its state (every
 * counter, event type, enable, overflow flag and PMCR_EL0 is clobbered
 * here, as a power-down would leave them UNKNOWN), then cpu_pm_exit().
 * Writing "0" does nothing, so that a test can compare two runs whose
 * user-level instructions are the same.  Without CONFIG_CPU_PM the write
 * fails with EOPNOTSUPP.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu_pm.h>
#include <linux/debugfs.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <asm/sysreg.h>
#include <perfmon/compat.h>

#define CPUPM_CYCLE_IDX		31
/* What a counter holds after the clobber: recognizably not a count */
#define CPUPM_JUNK		0xdead0000ULL

static struct dentry *cpupm_dir;

/* What a power-down leaves: every PMU register changed, counting off. */
static void cpupm_clobber(void)
{
	unsigned int i, n = pfm_pmcr_n(read_sysreg(pmcr_el0));

	write_sysreg(ARMV8_PMU_PMCR_P | ARMV8_PMU_PMCR_C, pmcr_el0);
	write_sysreg(U32_MAX, pmcntenclr_el0);
	write_sysreg(U32_MAX, pmintenclr_el1);
	write_sysreg(U32_MAX, pmovsclr_el0);
	write_sysreg(0, pmuserenr_el0);
	for (i = 0; i < n; i++) {
		write_sysreg(i, pmselr_el0);
		isb();
		write_sysreg(0, pmxevtyper_el0);
		write_sysreg(CPUPM_JUNK + i, pmxevcntr_el0);
	}
	write_sysreg(0, pmccfiltr_el0);
	write_sysreg(CPUPM_JUNK + CPUPM_CYCLE_IDX, pmccntr_el0);
	write_sysreg(CPUPM_CYCLE_IDX, pmselr_el0);
	isb();
}

/* One power-state round trip on this CPU, interrupts off as in idle. */
static int cpupm_round_trip(void)
{
	unsigned long flags;
	int ret;

	local_irq_save(flags);
	ret = cpu_pm_enter();
	if (!ret) {
		cpupm_clobber();
		ret = cpu_pm_exit();
	}
	local_irq_restore(flags);
	return ret;
}

static ssize_t cpupm_run_write(struct file *file, const char __user *ubuf,
			       size_t len, loff_t *ppos)
{
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &on);
	if (ret)
		return ret;
	if (!IS_ENABLED(CONFIG_CPU_PM))
		return -EOPNOTSUPP;
	if (on)
		ret = cpupm_round_trip();
	return ret ? ret : len;
}

static const struct file_operations cpupm_run_fops = {
	.owner = THIS_MODULE,
	.write = cpupm_run_write,
	.llseek = noop_llseek,
};

static int __init pfm_cpupm_test_init(void)
{
	cpupm_dir = debugfs_create_dir("pfm_cpupm_test", NULL);
	debugfs_create_file("run", 0200, cpupm_dir, NULL, &cpupm_run_fops);
	return 0;
}

static void __exit pfm_cpupm_test_exit(void)
{
	debugfs_remove_recursive(cpupm_dir);
}

module_init(pfm_cpupm_test_init);
module_exit(pfm_cpupm_test_exit);

MODULE_DESCRIPTION("perfmon: a CPU power state around a live PMUv3 context (tests only)");
MODULE_LICENSE("GPL");
