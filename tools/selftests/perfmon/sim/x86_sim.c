// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_x86_sim: the x86 engine and the Intel or AMD vendor part that
 * pfm_x86.ko runs (in pfm_pmu_lib), on a SIMULATED PMU.  For tests only:
 * no x86 PMU is reachable under QEMU's TCG.
 *
 * Its accessors (struct pfm_x86_hw) are a per-CPU register file in
 * memory that behaves as the hardware does where the engine relies on
 * it: legacy Intel counter writes keep 32 bits sign-extended, full-width
 * aliases exist only with IA32_PERF_CAPABILITIES.FW_WRITE, global status
 * bits clear through the clear MSR, Intel masks LVTPC when it raises the
 * interrupt, unknown MSRs fault.  CPUID is what the module parameters
 * say; the NMI counter allocator is a bitmap of its own.
 *
 * Counters advance only when a test writes a count to debugfs
 * pfm_x86_sim/tick: every enabled counter of the writing CPU moves by it,
 * and a wrap with its interrupt enabled sends a real NMI to that CPU, so
 * the engine's handler runs in NMI context as on hardware.
 *   tick   (write) N: advance this CPU's enabled counters by N
 *   nmi    (write) HEX: OR HEX into this CPU's global status, send an NMI
 *   inject (write) HEX [N]: at the next N (default 1) acknowledgments
 *          the overflow handler makes on this CPU, the counters whose
 *          status bits HEX names wrap as it acknowledges, as a counter
 *          that overflows while the handler runs does on hardware
 *   regs   (read)  this CPU's registers and the NMI counts, key=value
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <asm/apic.h>
#include <asm/msr-index.h>
#include <asm/perf_event.h>
#include <asm/processor.h>

#include "pfm_x86.h"

static char *vendor = "intel";
module_param(vendor, charp, 0444);
MODULE_PARM_DESC(vendor, "simulated CPU: intel or amd");
/* Intel: version 4, 4 counters of 48 bits, 7 events; 3 fixed of 48 */
static uint cpuid_a[4] = { 0x07300404, 0, 0, 0x603 };
static int cpuid_a_n;
module_param_array(cpuid_a, uint, &cpuid_a_n, 0444);
MODULE_PARM_DESC(cpuid_a, "Intel CPUID leaf 0xA: eax,ebx,ecx,edx");
static bool fw_write = true;
module_param(fw_write, bool, 0444);
MODULE_PARM_DESC(fw_write, "Intel IA32_PERF_CAPABILITIES.FW_WRITE");
static bool amd_core = true;
module_param(amd_core, bool, 0444);
MODULE_PARM_DESC(amd_core, "AMD PERFCTR_CORE (6 core counters)");
static uint amd_v2_ctrs;
module_param(amd_v2_ctrs, uint, 0444);
MODULE_PARM_DESC(amd_v2_ctrs, "AMD PerfMonV2 with this many counters (0: none)");
static bool no_pmu;
module_param(no_pmu, bool, 0444);
MODULE_PARM_DESC(no_pmu, "counters keep nothing written, as under TCG");
static int perf_holds = -1;
module_param(perf_holds, int, 0444);
MODULE_PARM_DESC(perf_holds, "counter the allocator gives to 'perf' first (-1: none)");

#define SIM_EVTSEL_INT		ARCH_PERFMON_EVENTSEL_INT
#define SIM_EVTSEL_EN		ARCH_PERFMON_EVENTSEL_ENABLE

enum sim_kind { SIM_PLAIN, SIM_LEGACY_CTR, SIM_CTR, SIM_RO, SIM_CLR };

/**
 * struct sim_cpu - one CPU's simulated PMU registers
 * @sel: event selects
 * @ctr: general-purpose counters
 * @fixed: fixed counters
 * @fixed_ctrl: FIXED_CTR_CTRL
 * @gctrl: global control
 * @gstatus: global status
 * @lvtpc: the local APIC's LVTPC entry
 * @pce: CR4.PCE
 * @pmis: interrupts raised
 * @inject: status bits of the counters to wrap at an acknowledgment
 * @inject_left: acknowledgments that still wrap @inject
 * @ctr_writes: writes of a counter MSR (tests count reloads)
 */
struct sim_cpu {
	u64 sel[PFM_X86_MAX_GP];
	u64 ctr[PFM_X86_MAX_GP];
	u64 fixed[PFM_X86_MAX_FIXED];
	u64 fixed_ctrl;
	u64 gctrl;
	u64 gstatus;
	u32 lvtpc;
	bool pce;
	unsigned long pmis;
	u64 inject;
	unsigned long inject_left;
	unsigned long ctr_writes;
};

static DEFINE_PER_CPU(struct sim_cpu, sim_cpu);
static bool sim_intel;
static unsigned int sim_gp, sim_width, sim_fixed_width;
static unsigned long sim_fixed;
static bool sim_global;
static DECLARE_BITMAP(sim_ctr_owned, PFM_X86_MAX_GP);
static DECLARE_BITMAP(sim_sel_owned, PFM_X86_MAX_GP);
static u64 sim_zero;
static struct pfm_x86_pmu sim_pmu;
static struct dentry *sim_dir;

/* What the parameters describe, for the register file. */
static void sim_describe(void)
{
	union cpuid10_eax eax;
	union cpuid10_edx edx;
	unsigned int nfixed;

	sim_intel = !strcmp(vendor, "intel");
	if (sim_intel) {
		eax.full = cpuid_a[0];
		edx.full = cpuid_a[3];
		sim_gp = min_t(unsigned int, eax.split.num_counters,
			       PFM_X86_MAX_GP);
		sim_width = eax.split.bit_width;
		nfixed = eax.split.version_id >= 2 ?
			 edx.split.num_counters_fixed : 0;
		sim_fixed = nfixed ? GENMASK(min(nfixed, 32U) - 1, 0) : 0;
		if (eax.split.version_id >= 5)
			sim_fixed |= cpuid_a[2];
		sim_fixed &= GENMASK(PFM_X86_MAX_FIXED - 1, 0);
		sim_fixed_width = edx.split.bit_width_fixed;
		sim_global = eax.split.version_id >= 2;
	} else {
		sim_gp = amd_core ? 6 : 4;
		if (amd_core && amd_v2_ctrs)
			sim_gp = min(amd_v2_ctrs, PFM_X86_MAX_GP);
		sim_width = 48;
		sim_global = amd_core && amd_v2_ctrs;
	}
}

static u64 *sim_intel_reg(struct sim_cpu *s, u32 msr, enum sim_kind *k)
{
	*k = SIM_CTR;
	if (msr >= MSR_ARCH_PERFMON_PERFCTR0 &&
	    msr < MSR_ARCH_PERFMON_PERFCTR0 + sim_gp) {
		*k = SIM_LEGACY_CTR;
		return &s->ctr[msr - MSR_ARCH_PERFMON_PERFCTR0];
	}
	if (fw_write && msr >= MSR_IA32_PMC0 && msr < MSR_IA32_PMC0 + sim_gp)
		return &s->ctr[msr - MSR_IA32_PMC0];
	if (msr >= MSR_ARCH_PERFMON_FIXED_CTR0 &&
	    msr < MSR_ARCH_PERFMON_FIXED_CTR0 + PFM_X86_MAX_FIXED &&
	    (sim_fixed & BIT(msr - MSR_ARCH_PERFMON_FIXED_CTR0)))
		return &s->fixed[msr - MSR_ARCH_PERFMON_FIXED_CTR0];
	*k = SIM_PLAIN;
	if (msr >= MSR_ARCH_PERFMON_EVENTSEL0 &&
	    msr < MSR_ARCH_PERFMON_EVENTSEL0 + sim_gp)
		return &s->sel[msr - MSR_ARCH_PERFMON_EVENTSEL0];
	if (msr == MSR_ARCH_PERFMON_FIXED_CTR_CTRL && sim_fixed)
		return &s->fixed_ctrl;
	if (sim_global && msr == MSR_CORE_PERF_GLOBAL_CTRL)
		return &s->gctrl;
	*k = SIM_RO;
	if (sim_global && msr == MSR_CORE_PERF_GLOBAL_STATUS)
		return &s->gstatus;
	*k = SIM_CLR;
	if (sim_global && msr == MSR_CORE_PERF_GLOBAL_OVF_CTRL)
		return &s->gstatus;
	return NULL;
}

static u64 *sim_amd_reg(struct sim_cpu *s, u32 msr, enum sim_kind *k)
{
	u32 i;

	*k = SIM_PLAIN;
	if (msr >= MSR_K7_EVNTSEL0 && msr < MSR_K7_EVNTSEL0 + 4)
		return &s->sel[msr - MSR_K7_EVNTSEL0];
	*k = SIM_CTR;
	if (msr >= MSR_K7_PERFCTR0 && msr < MSR_K7_PERFCTR0 + 4)
		return &s->ctr[msr - MSR_K7_PERFCTR0];
	i = (msr - MSR_F15H_PERF_CTL) / 2;
	if (amd_core && msr >= MSR_F15H_PERF_CTL && i < sim_gp) {
		*k = msr & 1 ? SIM_CTR : SIM_PLAIN;
		return msr & 1 ? &s->ctr[i] : &s->sel[i];
	}
	*k = SIM_PLAIN;
	if (sim_global && msr == MSR_AMD64_PERF_CNTR_GLOBAL_CTL)
		return &s->gctrl;
	*k = SIM_RO;
	if (sim_global && msr == MSR_AMD64_PERF_CNTR_GLOBAL_STATUS)
		return &s->gstatus;
	*k = SIM_CLR;
	if (sim_global && msr == MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR)
		return &s->gstatus;
	return NULL;
}

/* The register behind @msr on this CPU, NULL where hardware faults. */
static u64 *sim_reg(u32 msr, enum sim_kind *k)
{
	struct sim_cpu *s = this_cpu_ptr(&sim_cpu);

	if (sim_intel && msr == MSR_IA32_PERF_CAPABILITIES) {
		*k = SIM_RO;
		return &sim_zero;
	}
	return sim_intel ? sim_intel_reg(s, msr, k) : sim_amd_reg(s, msr, k);
}

static unsigned int sim_reg_width(const u64 *r)
{
	const struct sim_cpu *s = this_cpu_ptr(&sim_cpu);

	if (r >= s->fixed && r < s->fixed + PFM_X86_MAX_FIXED)
		return sim_fixed_width;
	return sim_width;
}

static void sim_inject(void);

/*
 * Does a write of kind @k acknowledge an overflow?  From the NMI
 * handler: the clear MSR of the global status, or, without one, a
 * counter write (the handler sets the bias of a wrapped counter again).
 */
static bool sim_acknowledges(enum sim_kind k)
{
	if (!in_nmi())
		return false;
	if (sim_global)
		return k == SIM_CLR;
	return k == SIM_CTR || k == SIM_LEGACY_CTR;
}

static int sim_hw_rdmsr_safe(u32 msr, u64 *value)
{
	enum sim_kind k;
	u64 *r = sim_reg(msr, &k);

	if (!r)
		return -EIO;
	if (msr == MSR_IA32_PERF_CAPABILITIES)
		*value = fw_write ? BIT_ULL(13) : 0;
	else
		*value = k == SIM_CLR ? 0 : *r;
	return 0;
}

static int sim_hw_wrmsr_safe(u32 msr, u64 value)
{
	enum sim_kind k;
	u64 *r = sim_reg(msr, &k);
	unsigned int w;

	if (!r || k == SIM_RO)
		return -EIO;
	switch (k) {
	case SIM_CLR:
		*r &= ~value;
		break;
	case SIM_LEGACY_CTR:
		value = (u64)(s64)(s32)value;
		fallthrough;
	case SIM_CTR:
		w = sim_reg_width(r);
		if (!no_pmu)
			*r = value & GENMASK_ULL(w - 1, 0);
		/* What a reload of the set costs, which a PMC write must not. */
		this_cpu_inc(sim_cpu.ctr_writes);
		break;
	default:
		*r = value;
	}
	if (sim_acknowledges(k))
		sim_inject();
	return 0;
}

static u64 sim_hw_rdmsr(u32 msr)
{
	u64 v = 0;

	WARN_ONCE(sim_hw_rdmsr_safe(msr, &v), "rdmsr 0x%x faults\n", msr);
	return v;
}

static void sim_hw_wrmsr(u32 msr, u64 value)
{
	WARN_ONCE(sim_hw_wrmsr_safe(msr, value), "wrmsr 0x%x faults\n", msr);
}

static bool sim_hw_cpuid(u32 leaf, u32 *eax, u32 *ebx, u32 *ecx, u32 *edx)
{
	*eax = 0;
	*ebx = 0;
	*ecx = 0;
	*edx = 0;
	switch (leaf) {
	case 1:
		*ecx = sim_intel && fw_write ? BIT(15) : 0;
		return true;
	case 0xa:
		if (!sim_intel)
			return false;
		*eax = cpuid_a[0];
		*ebx = cpuid_a[1];
		*ecx = cpuid_a[2];
		*edx = cpuid_a[3];
		return true;
	case 0x80000001:
		*ecx = !sim_intel && amd_core ? BIT(23) : 0;
		return true;
	case 0x80000022:
		if (sim_intel || !amd_v2_ctrs)
			return false;
		*eax = BIT(0);
		*ebx = amd_v2_ctrs;
		return true;
	}
	return false;
}

static u8 sim_hw_vendor(void)
{
	return sim_intel ? X86_VENDOR_INTEL : X86_VENDOR_AMD;
}

static unsigned int sim_hw_family(void)
{
	return sim_intel ? 6 : 0x17;
}

/* The allocator's numbering: a counter's index among its kind. */
static unsigned int sim_alloc_bit(u32 msr)
{
	if (sim_intel)
		return msr >= MSR_ARCH_PERFMON_EVENTSEL0 ?
		       msr - MSR_ARCH_PERFMON_EVENTSEL0 :
		       msr - MSR_ARCH_PERFMON_PERFCTR0;
	if (msr >= MSR_F15H_PERF_CTL)
		return (msr - MSR_F15H_PERF_CTL) >> 1;
	return msr >= MSR_K7_PERFCTR0 ? msr - MSR_K7_PERFCTR0 :
					msr - MSR_K7_EVNTSEL0;
}

static bool sim_hw_reserve(u32 ctr_msr, u32 sel_msr)
{
	if (test_and_set_bit(sim_alloc_bit(ctr_msr), sim_ctr_owned))
		return false;
	if (!test_and_set_bit(sim_alloc_bit(sel_msr), sim_sel_owned))
		return true;
	clear_bit(sim_alloc_bit(ctr_msr), sim_ctr_owned);
	return false;
}

static void sim_hw_release(u32 ctr_msr, u32 sel_msr)
{
	clear_bit(sim_alloc_bit(sel_msr), sim_sel_owned);
	clear_bit(sim_alloc_bit(ctr_msr), sim_ctr_owned);
}

static void sim_hw_lvtpc_nmi(void)
{
	this_cpu_write(sim_cpu.lvtpc, APIC_DM_NMI);
}

static int sim_hw_nmi_register(void)
{
	return register_nmi_handler(NMI_LOCAL, pfm_x86_nmi, 0, "perfmon-sim");
}

static void sim_hw_nmi_unregister(void)
{
	unregister_nmi_handler(NMI_LOCAL, "perfmon-sim");
}

static bool sim_hw_pce(void)
{
	return this_cpu_read(sim_cpu.pce);
}

static void sim_hw_set_pce(bool on)
{
	this_cpu_write(sim_cpu.pce, on);
}

static const struct pfm_x86_hw sim_hw = {
	.read_msr	= sim_hw_rdmsr,
	.write_msr	= sim_hw_wrmsr,
	.read_msr_safe	= sim_hw_rdmsr_safe,
	.write_msr_safe	= sim_hw_wrmsr_safe,
	.cpuid		= sim_hw_cpuid,
	.vendor		= sim_hw_vendor,
	.family		= sim_hw_family,
	.reserve	= sim_hw_reserve,
	.release	= sim_hw_release,
	.lvtpc_nmi	= sim_hw_lvtpc_nmi,
	.nmi_register	= sim_hw_nmi_register,
	.nmi_unregister	= sim_hw_nmi_unregister,
	.pce		= sim_hw_pce,
	.set_pce	= sim_hw_set_pce,
};

/* Advance one counter; true when it wrapped. */
static bool sim_advance(u64 *ctr, unsigned int width, u64 n)
{
	u64 mask = GENMASK_ULL(width - 1, 0);
	u64 old = *ctr;

	*ctr = (old + n) & mask;
	return *ctr < old || n > mask;
}

/*
 * A wrap with its interrupt enabled: the local APIC delivers it as an
 * NMI unless LVTPC is masked; Intel masks LVTPC as it delivers one, AMD
 * does not.  An NMI sent while the NMI handler runs is held by the CPU
 * until the handler returns.
 */
static void sim_pmi(struct sim_cpu *s)
{
	if ((s->lvtpc & APIC_LVT_MASKED) || s->lvtpc != APIC_DM_NMI)
		return;
	if (sim_intel)
		s->lvtpc |= APIC_LVT_MASKED;
	s->pmis++;
	apic->send_IPI_self(NMI_VECTOR);
}

/* Counting on this CPU, interrupts off: what the hardware would do. */
static void sim_tick(u64 n)
{
	struct sim_cpu *s = this_cpu_ptr(&sim_cpu);
	unsigned int i, f;
	bool pmi = false;

	for (i = 0; i < sim_gp; i++) {
		if (!(s->sel[i] & SIM_EVTSEL_EN) ||
		    (sim_global && !(s->gctrl & BIT_ULL(i))))
			continue;
		if (!sim_advance(&s->ctr[i], sim_width, n))
			continue;
		if (sim_global)
			s->gstatus |= BIT_ULL(i);
		pmi |= !!(s->sel[i] & SIM_EVTSEL_INT);
	}
	for_each_set_bit(i, &sim_fixed, PFM_X86_MAX_FIXED) {
		f = PFM_X86_FIXED_FIELD(s->fixed_ctrl, i);
		if (!(f & PFM_X86_FIXED_EN) ||
		    !(s->gctrl & BIT_ULL(PFM_X86_FIXED_STATUS + i)))
			continue;
		if (!sim_advance(&s->fixed[i], sim_fixed_width, n))
			continue;
		s->gstatus |= BIT_ULL(PFM_X86_FIXED_STATUS + i);
		pmi |= !!(f & PFM_X86_FIXED_PMI);
	}
	if (pmi)
		sim_pmi(s);
}

/*
 * The counters @inject names wrap now: each passed its highest value
 * (it reads 0), its status bit is set, and its interrupt is raised.
 */
static void sim_inject(void)
{
	struct sim_cpu *s = this_cpu_ptr(&sim_cpu);
	unsigned int i;
	bool pmi = false;

	if (!s->inject_left)
		return;
	s->inject_left--;
	for (i = 0; i < sim_gp; i++) {
		if (!(s->inject & BIT_ULL(i)))
			continue;
		s->ctr[i] = 0;
		if (sim_global)
			s->gstatus |= BIT_ULL(i);
		pmi |= !!(s->sel[i] & SIM_EVTSEL_INT);
	}
	for_each_set_bit(i, &sim_fixed, PFM_X86_MAX_FIXED) {
		if (!(s->inject & BIT_ULL(PFM_X86_FIXED_STATUS + i)))
			continue;
		s->fixed[i] = 0;
		s->gstatus |= BIT_ULL(PFM_X86_FIXED_STATUS + i);
		pmi |= !!(PFM_X86_FIXED_FIELD(s->fixed_ctrl, i) &
			  PFM_X86_FIXED_PMI);
	}
	if (pmi)
		sim_pmi(s);
}

static ssize_t sim_tick_write(struct file *file, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	unsigned long flags;
	u64 n;
	int ret;

	ret = kstrtou64_from_user(ubuf, len, 0, &n);
	if (ret)
		return ret;
	local_irq_save(flags);
	sim_tick(n);
	local_irq_restore(flags);
	return len;
}

static ssize_t sim_nmi_write(struct file *file, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	u64 bits;
	int ret;

	ret = kstrtou64_from_user(ubuf, len, 16, &bits);
	if (ret)
		return ret;
	preempt_disable();
	this_cpu_or(sim_cpu.gstatus, bits);
	apic->send_IPI_self(NMI_VECTOR);
	preempt_enable();
	return len;
}

static ssize_t sim_inject_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	unsigned long n = 1;
	char buf[48];
	u64 bits;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	if (sscanf(buf, "%llx %lu", &bits, &n) < 1)
		return -EINVAL;
	preempt_disable();
	this_cpu_write(sim_cpu.inject, bits);
	this_cpu_write(sim_cpu.inject_left, n);
	preempt_enable();
	return len;
}

static int sim_regs_show(struct seq_file *m, void *v)
{
	struct sim_cpu s;
	unsigned int i;

	preempt_disable();
	s = *this_cpu_ptr(&sim_cpu);
	seq_printf(m, "cpu=%d\n", smp_processor_id());
	preempt_enable();
	for (i = 0; i < PFM_X86_MAX_GP; i++)
		seq_printf(m, "sel%u=0x%llx\nctr%u=0x%llx\n", i, s.sel[i], i,
			   s.ctr[i]);
	for (i = 0; i < PFM_X86_MAX_FIXED; i++)
		seq_printf(m, "fixed%u=0x%llx\n", i, s.fixed[i]);
	seq_printf(m, "fixed_ctrl=0x%llx\ngctrl=0x%llx\ngstatus=0x%llx\n",
		   s.fixed_ctrl, s.gctrl, s.gstatus);
	seq_printf(m, "lvtpc=0x%x\npce=%d\npmis=%lu\nclaimed=%llu\n",
		   s.lvtpc, s.pce, s.pmis, pfm_x86_nmis_claimed());
	seq_printf(m, "inject_left=%lu\nctr_writes=%lu\n", s.inject_left,
		   s.ctr_writes);
	seq_printf(m, "owned=0x%lx\n", sim_ctr_owned[0]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sim_regs);

static const struct file_operations sim_tick_fops = {
	.write = sim_tick_write,
};

static const struct file_operations sim_nmi_fops = {
	.write = sim_nmi_write,
};

static const struct file_operations sim_inject_fops = {
	.write = sim_inject_write,
};

/* The engine must give back every counter it took, on any path. */
static void sim_check_released(void)
{
	DECLARE_BITMAP(perf, PFM_X86_MAX_GP);

	bitmap_zero(perf, PFM_X86_MAX_GP);
	if (perf_holds >= 0)
		__set_bit(perf_holds, perf);
	WARN(!bitmap_equal(sim_ctr_owned, perf, PFM_X86_MAX_GP) ||
	     !bitmap_equal(sim_sel_owned, perf, PFM_X86_MAX_GP),
	     "leaked counter reservations: %*pb %*pb\n", PFM_X86_MAX_GP,
	     sim_ctr_owned, PFM_X86_MAX_GP, sim_sel_owned);
}

static int __init pfm_x86_sim_init(void)
{
	int ret;

	if (strcmp(vendor, "intel") && strcmp(vendor, "amd"))
		return -EINVAL;
	sim_describe();
	if (perf_holds >= PFM_X86_MAX_GP)
		return -EINVAL;
	if (perf_holds >= 0) {
		__set_bit(perf_holds, sim_ctr_owned);
		__set_bit(perf_holds, sim_sel_owned);
	}
	/* sim_hw's vendor is the simulated one: its vendor part probes. */
	ret = pfm_x86_init(&sim_pmu, THIS_MODULE, &sim_hw, pfm_x86_probe_cpu);
	if (ret) {
		sim_check_released();
		return ret;
	}
	sim_dir = debugfs_create_dir("pfm_x86_sim", NULL);
	debugfs_create_file("tick", 0200, sim_dir, NULL, &sim_tick_fops);
	debugfs_create_file("nmi", 0200, sim_dir, NULL, &sim_nmi_fops);
	debugfs_create_file("inject", 0200, sim_dir, NULL, &sim_inject_fops);
	debugfs_create_file("regs", 0400, sim_dir, NULL, &sim_regs_fops);
	pr_info("SIMULATED %s PMU registered (test module)\n", vendor);
	return 0;
}

static void __exit pfm_x86_sim_exit(void)
{
	debugfs_remove_recursive(sim_dir);
	pfm_x86_exit(&sim_pmu);
	sim_check_released();
}

module_init(pfm_x86_sim_init);
module_exit(pfm_x86_sim_exit);

MODULE_DESCRIPTION("perfmon: x86 descriptions on a simulated PMU (tests only)");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(PERFMON_PMU_LIB);
