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
 * (arch/perf/perf_x86.c) shares with the vendor parts.  All of these are
 * in pfm_pmu_lib (arch/Kbuild), compiled once; pfm_x86.ko (x86_mod.c)
 * is the Intel and AMD descriptions' module.
 *
 * Every hardware access goes through a struct pfm_x86_hw the caller
 * gives: pfm_x86_hw (x86_hw.c) on the CPU's own MSRs, local APIC, CR4
 * and NMI counter allocator; the test module pfm_x86_sim.ko gives its
 * simulated register file instead, to the very same engine and vendor
 * code.
 */
#ifndef _PFM_X86_H
#define _PFM_X86_H

#include <linux/bitmap.h>
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
 * struct pfm_x86_hw - the hardware accessors of an x86 description
 * @read_msr: read an MSR
 * @write_msr: write an MSR
 * @read_msr_safe: read an MSR that may not exist: 0 or -EIO
 * @write_msr_safe: write an MSR that may not exist: 0 or -EIO
 * @cpuid: read CPUID leaf @leaf; false when the CPU has no such leaf
 * @vendor: X86_VENDOR_*
 * @family: the CPU family
 * @reserve: take a counter and its control register from the kernel's
 *           NMI counter allocator (shared with perf); false when taken
 * @release: give them back
 * @lvtpc_nmi: set the local APIC's performance counter entry to NMI
 * @nmi_register: register pfm_x86_nmi() for local NMIs
 * @nmi_unregister: and remove it, waiting for running handlers
 * @pce: CR4.PCE (user-level rdpmc) is set on this CPU
 * @set_pce: set or clear it on this CPU
 *
 * The register ones are called with interrupts disabled, some from NMI.
 * pfm_perf's x86 map uses the CPU ones only (@cpuid, @vendor, @family,
 * @read_msr_safe), to run the vendor parts' probes.
 */
struct pfm_x86_hw {
	u64 (*read_msr)(u32 msr);
	void (*write_msr)(u32 msr, u64 value);
	int (*read_msr_safe)(u32 msr, u64 *value);
	int (*write_msr_safe)(u32 msr, u64 value);
	bool (*cpuid)(u32 leaf, u32 *eax, u32 *ebx, u32 *ecx, u32 *edx);
	u8 (*vendor)(void);
	unsigned int (*family)(void);
	bool (*reserve)(u32 ctr_msr, u32 sel_msr);
	void (*release)(u32 ctr_msr, u32 sel_msr);
	void (*lvtpc_nmi)(void);
	int (*nmi_register)(void);
	void (*nmi_unregister)(void);
	bool (*pce)(void);
	void (*set_pce)(bool on);
};

/**
 * struct pfm_x86_pmu - an x86 PMU, as a vendor part describes it
 * @pmu: the native description registered with the core: @map and the
 *       engine's ops
 * @map: the register map, filled by pfm_x86_map_fill() from the fields
 *       the vendor part set
 * @name: the PMU's name, set by the vendor part
 * @width: bits of its counters the core uses, set by the vendor part
 * @checks: the vendor part's checks of PMC values
 * @hw: the hardware it runs on, set before the vendor part's probe
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
 * @arch_unavail: Intel: the architectural events CPUID.0AH:EBX marks
 *                missing (bit i: the i-th in CPUID's order), refused
 * @arch_known: Intel: how many events those bits describe
 * @loop_stuck_logged: the NMI handler logged a status that would not
 *                     clear (once per description)
 * @pmcs: the PMCs the vendor part described
 * @ctrs: the PMDs it described, all counters
 * @pmc_desc: PMC table filled by the vendor part
 * @pmd_desc: PMD table filled by the vendor part
 * @names: storage of the register names
 *
 * One per description: two descriptions may present the same map (the
 * native one and pfm_perf), each with its own.
 */
struct pfm_x86_pmu {
	struct pfm_pmu_config pmu;
	struct pfm_pmu_map map;
	const char *name;
	unsigned int width;
	const struct pfm_pmu_checks *checks;
	const struct pfm_x86_hw *hw;
	unsigned int num_gp;
	struct pfm_x86_ctr ctr[PFM_X86_NUM_REGS];
	u32 sel_msr[PFM_X86_NUM_REGS];
	u64 fixed_pmi;
	u32 global_ctrl;
	u32 global_status;
	u32 global_clr;
	u64 claim;
	u32 arch_unavail;
	unsigned int arch_known;
	bool loop_stuck_logged;
	DECLARE_BITMAP(pmcs, PFM_X86_NUM_REGS);
	DECLARE_BITMAP(ctrs, PFM_X86_NUM_REGS);
	struct pfm_regmap_desc pmc_desc[PFM_X86_NUM_REGS];
	struct pfm_regmap_desc pmd_desc[PFM_X86_NUM_REGS];
	char names[2][PFM_X86_NUM_REGS][PFM_NAME_LEN];
};

/*
 * In pfm_pmu_lib; a module that calls them says
 * MODULE_IMPORT_NS(PERFMON_PMU_LIB).
 */

/* Register map (x86_map.c), for the vendor parts and the engines. */
void pfm_x86_add_pmc(struct pfm_x86_pmu *xp, u16 cnum, const char *name,
		     u32 msr, u64 rsvd);
void pfm_x86_add_ctr(struct pfm_x86_pmu *xp, u16 cnum, const char *name,
		     u32 rd, u32 wr, u16 sel, unsigned int status,
		     unsigned int hw_width);
void pfm_x86_map_fill(struct pfm_x86_pmu *xp,
		      const struct pfm_pmu_settings *settings);
u32 pfm_x86_pmc_priv(const struct pfm_pmu_map *map, u16 cnum, u64 value);

/* Engine (x86_pmu.c), for the modules. */
int pfm_x86_init(struct pfm_x86_pmu *xp, struct module *owner,
		 const struct pfm_x86_hw *hw,
		 int (*probe)(struct pfm_x86_pmu *xp));
void pfm_x86_exit(struct pfm_x86_pmu *xp);
u64 pfm_x86_nmis_claimed(void);
int pfm_x86_nmi(unsigned int cmd, struct pt_regs *regs);

/*
 * Vendor parts: probe the CPU, fill @xp.  -ENODEV without that PMU.
 * The modules take the CPU's own with pfm_x86_probe_cpu() (x86_probe.c).
 */
int pfm_intel_arch_probe(struct pfm_x86_pmu *xp);
int pfm_amd64_probe(struct pfm_x86_pmu *xp);
int pfm_x86_probe_cpu(struct pfm_x86_pmu *xp);

/* The CPU's own accessors (x86_hw.c). */
extern const struct pfm_x86_hw pfm_x86_hw;

#endif /* _PFM_X86_H */
