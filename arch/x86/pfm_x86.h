/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The x86 PMU engine shared by the Intel architectural perfmon and AMD64
 * descriptions, and the hardware accessors it runs on.
 *
 * A vendor part (intel_arch.c, amd64.c) reads CPUID and fills a struct
 * pfm_x86_pmu: its counters, their MSRs, the global registers if any.
 * The engine (x86_pmu.c) does everything else: reservation against perf,
 * the register ops, start/stop, the NMI handler, the driver setting.
 *
 * The register tables are x86_map.c's, which pfm_perf's x86 map
 * (arch/perf/perf_x86.c) shares with the vendor parts.
 *
 * Every hardware access goes through the pfm_x86_* accessors declared
 * here.  The modules that drive hardware link x86_cpu.c (CPUID, the
 * probe's MSR read) and x86_hw.c (MSRs, the local APIC, CR4, the NMI
 * counter allocator); the test module pfm_x86_sim.ko links x86_sim.c
 * instead, a simulated register file, and the very same engine and
 * vendor objects.
 */
#ifndef _PFM_X86_H
#define _PFM_X86_H

#include <linux/types.h>
#include <asm/nmi.h>
#include <perfmon/pmu.h>

#define PFM_X86_MAX_GP		8	/* general-purpose counters driven */
#define PFM_X86_MAX_FIXED	4	/* Intel fixed counters driven */
/* PMC and PMD number of the fixed counters' control and counter 0. */
#define PFM_X86_FIXED_BASE	16
#define PFM_X86_NUM_REGS	(PFM_X86_FIXED_BASE + PFM_X86_MAX_FIXED)
/* Intel global status bit of fixed counter 0. */
#define PFM_X86_FIXED_STATUS	32

/*
 * IA32_FIXED_CTR_CTRL holds one 4-bit field per fixed counter: OS, USR,
 * AnyThread, PMI (the kernel's INTEL_FIXED_* in 6.12's asm/perf_event.h;
 * 6.1 keeps them private to arch/x86/events).
 */
#define PFM_X86_FIXED_STRIDE	4
#define PFM_X86_FIXED_OS	BIT_ULL(0)
#define PFM_X86_FIXED_USR	BIT_ULL(1)
#define PFM_X86_FIXED_ANY	BIT_ULL(2)
#define PFM_X86_FIXED_PMI	BIT_ULL(3)
#define PFM_X86_FIXED_EN	(PFM_X86_FIXED_OS | PFM_X86_FIXED_USR)
/* @bits of the field of fixed counter @i, and that field of @ctrl. */
#define PFM_X86_FIXED_BITS(i, bits)	((u64)(bits) << (PFM_X86_FIXED_STRIDE * (i)))
#define PFM_X86_FIXED_FIELD(ctrl, i) \
	(((ctrl) >> (PFM_X86_FIXED_STRIDE * (i))) & GENMASK_ULL(PFM_X86_FIXED_STRIDE - 1, 0))

/**
 * struct pfm_x86_ctr - how the engine drives one counter (PMD)
 * @rd: MSR the count is read from
 * @wr: MSR the count is written to (a full-width alias where used)
 * @sel: PMC number of its control register
 * @status: its bit in the global status registers and in the engine's
 *          pending word
 * @bias: bits above the core's counter width set in every write; the
 *        counter's top bit then clears exactly when it wraps (0: the
 *        counter is used at its full width)
 * @top: the counter's highest implemented bit
 */
struct pfm_x86_ctr {
	u32 rd;
	u32 wr;
	u16 sel;
	u8 status;
	u64 bias;
	u64 top;
};

/**
 * struct pfm_x86_pmu - an x86 PMU, as a vendor part describes it
 * @pmu: the description registered with the core (ops set by the engine)
 * @num_gp: general-purpose counters (PMD/PMC 0 .. num_gp - 1)
 * @ctr: the counters, indexed by PMD number
 * @sel_msr: the control MSRs, indexed by PMC number
 * @fixed_pmi: bits of FIXED_CTR_CTRL that enable the fixed counters'
 *             interrupts; forced on by the engine
 * @global_ctrl: global enable MSR, 0 when counting is gated per counter
 * @global_status: global overflow status MSR, 0 when overflows are found
 *                 from the counters' top bits
 * @global_clr: MSR whose written bits clear @global_status bits
 * @claim: status bits of the counters; an NMI is ours only with one set,
 *         and the value of @global_ctrl that lets every counter count
 * @pmc_desc: PMC table filled by the vendor part
 * @pmd_desc: PMD table filled by the vendor part
 * @names: storage of the register names
 */
struct pfm_x86_pmu {
	struct pfm_pmu_config pmu;
	unsigned int num_gp;
	struct pfm_x86_ctr ctr[PFM_X86_NUM_REGS];
	u32 sel_msr[PFM_X86_NUM_REGS];
	u64 fixed_pmi;
	u32 global_ctrl;
	u32 global_status;
	u32 global_clr;
	u64 claim;
	struct pfm_regmap_desc pmc_desc[PFM_X86_NUM_REGS];
	struct pfm_regmap_desc pmd_desc[PFM_X86_NUM_REGS];
	char names[2][PFM_X86_NUM_REGS][PFM_NAME_LEN];
};

/* Register map (x86_map.c), for the vendor parts and the engines. */
void pfm_x86_add_pmc(struct pfm_x86_pmu *xp, u16 cnum, const char *name,
		     u32 msr, u64 rsvd);
void pfm_x86_add_ctr(struct pfm_x86_pmu *xp, u16 cnum, const char *name,
		     u32 rd, u32 wr, u16 sel, unsigned int status,
		     unsigned int hw_width);
void pfm_x86_map_ops(struct pfm_x86_pmu *xp);

/* Engine (x86_pmu.c), for the modules. */
int pfm_x86_init(struct pfm_x86_pmu *xp, struct module *owner,
		 int (*probe)(struct pfm_x86_pmu *xp));
void pfm_x86_exit(struct pfm_x86_pmu *xp);
u64 pfm_x86_nmis_claimed(void);
int pfm_x86_nmi(unsigned int cmd, struct pt_regs *regs);

/* Vendor parts: probe the CPU, fill @xp.  -ENODEV without that PMU. */
int pfm_intel_arch_probe(struct pfm_x86_pmu *xp);
int pfm_amd64_probe(struct pfm_x86_pmu *xp);

/*
 * Accessors (x86_hw.c on hardware, x86_sim.c in the test module).  The
 * register ones are called with interrupts disabled, some from NMI.
 */
u64 pfm_x86_rdmsr(u32 msr);
void pfm_x86_wrmsr(u32 msr, u64 value);
int pfm_x86_rdmsr_safe(u32 msr, u64 *value);
int pfm_x86_wrmsr_safe(u32 msr, u64 value);
bool pfm_x86_cpuid(u32 leaf, u32 *eax, u32 *ebx, u32 *ecx, u32 *edx);
u8 pfm_x86_vendor(void);
unsigned int pfm_x86_family(void);
bool pfm_x86_reserve(u32 ctr_msr, u32 sel_msr);
void pfm_x86_release(u32 ctr_msr, u32 sel_msr);
void pfm_x86_lvtpc_nmi(void);
int pfm_x86_nmi_register(void);
void pfm_x86_nmi_unregister(void);
bool pfm_x86_pce(void);
void pfm_x86_set_pce(bool on);

#endif /* _PFM_X86_H */
