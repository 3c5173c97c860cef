/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * perfmon user ABI: the ioctls of /dev/perfmon and their argument
 * structures.  One open file of /dev/perfmon is one monitoring context.
 *
 * The structure, field, flag and constant names are those of perfmon2
 * v2.8x, so that perfmon2 programs build unchanged against this header
 * (through the user library's <perfmon/perfmon.h>).
 *
 * Every structure has a fixed layout, identical for 32-bit and 64-bit
 * callers: fixed-width types, explicit padding, every __u64 at an 8-byte
 * offset, pointers passed as __u64.  Reserved fields must be zero on
 * input (else -EINVAL) and are zero on output, so that they can be given
 * a meaning later.  Documentation/uapi.rst describes every call.
 */
#ifndef _UAPI_LINUX_PERFMON_H
#define _UAPI_LINUX_PERFMON_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * ABI version.  The major number changes only on an incompatible change;
 * the minor number grows with each addition.  perfmon2's last series was
 * 2.8x; 2.90 is the first of this implementation.  2.92 added overflow
 * triggers (reg_start_pmds, reg_stop_pmds), the system-call event of the
 * software PMU and the sampling formats.  2.93 added the privilege check
 * of PMC values (PFM_REG_RETFL_NOPRIV, -EACCES; Documentation/security.rst).
 * 2.94 added the control page for user-level reads (PFM_USER_PAGE_OFFSET).
 * 2.95 gave the bit vectors perfmon2 v2.8's size (320 registers, five
 * words): struct pfarg_pmd, pfarg_setinfo, pfarg_ovfl_msg and
 * pfarg_pmu_info grew, so programs built against an earlier header of
 * this tree must be rebuilt; v2.8 programs now match byte for byte.
 * 2.96 added call chains in samples (PFM_REGFL_CALLCHAIN, user;
 * PFM_REGFL_KCALLCHAIN, kernel) and frequency sampling (PFM_REGFL_FREQ,
 * reg_freq where reg_reserved1 was).  2.97 added PFM_READ_VALUES (struct
 * pfarg_read_values), a read of up to 64 PMDs that returns 8 bytes each.
 */
#define PFM_VERSION_MAJ		2U
#define PFM_VERSION_MIN		97U
#define PFM_VERSION		(((PFM_VERSION_MAJ & 0xffff) << 16) | \
				 (PFM_VERSION_MIN & 0xffff))
#define PFM_VERSION_MAJOR(x)	(((x) >> 16) & 0xffff)
#define PFM_VERSION_MINOR(x)	((x) & 0xffff)

/*
 * Register numbers are below these limits on every architecture, so that
 * the bit vectors below have one size everywhere.  The value is perfmon2
 * v2.8's on every architecture it supported (256 hardware registers plus
 * 64 software ones): the structures that hold bit vectors then have
 * v2.8's layout (Documentation/library.rst).
 */
#define PFM_MAX_PMCS		320
#define PFM_MAX_PMDS		320
#define PFM_BVSIZE(x)		(((x) + 63) / 64)
#define PFM_PMC_BV		PFM_BVSIZE(PFM_MAX_PMCS)
#define PFM_PMD_BV		PFM_BVSIZE(PFM_MAX_PMDS)

/* Event sets: set 0 always exists. */
#define PFM_MAX_EVTSETS		65536

/* Length of PMU, register and sampling-format names, NUL included. */
#define PFM_NAME_LEN		32

/*
 * Context flags (pfarg_ctx.ctx_flags).
 * bits[0-15]: generic, bits[16-31]: PMU-specific.
 */
#define PFM_FL_NOTIFY_BLOCK	0x01	/* monitored thread waits on notification */
#define PFM_FL_SYSTEM_WIDE	0x02	/* monitor one CPU, not one thread */
#define PFM_FL_OVFL_NO_MSG	0x80	/* wake up on overflow, queue no message */

/*
 * Register flags (reg_flags of pfarg_pmc and pfarg_pmd).
 * bits[0-15]: generic input flags, bits[16-23]: PMU-specific input flags,
 * bits[24-31]: returned error flags (PFM_REG_RETFL_*).
 */
#define PFM_REGFL_OVFL_NOTIFY	0x1	/* PMD: notify on overflow */
#define PFM_REGFL_RANDOM	0x2	/* PMD: randomize the reset value */
#define PFM_REGFL_NO_EMUL64	0x4	/* PMC: no 64-bit virtualization of its PMD */
#define PFM_REGFL_CALLCHAIN	0x8	/* PMD: its samples carry the user call chain */
#define PFM_REGFL_FREQ		0x10	/* PMD: period adjusted to reg_freq samples/s */
#define PFM_REGFL_KCALLCHAIN	0x20	/* PMD: its samples carry the kernel call chain */

/* Entries of a sample's call chain at most: its IP and 63 callers. */
#define PFM_MAX_CALLCHAIN	64
/* Of which kernel entries at most (PFM_REGFL_KCALLCHAIN). */
#define PFM_MAX_KCALLCHAIN	32

/*
 * Returned in reg_flags (and set_flags of pfarg_setdesc) of the entry of
 * an array that was refused; the call then fails with -EINVAL (or the
 * errno documented for the flag) and no entry of the array is applied.
 */
#define PFM_REG_RETFL_NOTAVAIL	(1U << 31) /* register not implemented or not available */
#define PFM_REG_RETFL_EINVAL	(1U << 30) /* value refused (reserved bits, PMU check) */
#define PFM_REG_RETFL_NOSET	(1U << 29) /* no such event set */
#define PFM_REG_RETFL_EFLAGS	(1U << 28) /* unknown flag or non-zero reserved field */
#define PFM_REG_RETFL_UNUSED	(1U << 27) /* PMD read before it was written */
#define PFM_REG_RETFL_DUP	(1U << 26) /* set created twice in one call */
#define PFM_REG_RETFL_NOPRIV	(1U << 25) /* creator lacked the privilege: -EACCES */
#define PFM_REG_RETFL_MASK	(0xffU << 24)

/* Event set flags (pfarg_setdesc.set_flags). */
#define PFM_SETFL_OVFL_SWITCH	0x01	/* switch after reg_ovfl_switch_cnt overflows */
#define PFM_SETFL_TIME_SWITCH	0x02	/* switch after set_timeout ns */

/**
 * struct pfarg_ctx - context description, argument of pfm_create_context()
 * @ctx_flags: PFM_FL_*
 * @ctx_reserved1: zero
 * @ctx_reserved2: zero
 */
struct pfarg_ctx {
	__u32 ctx_flags;
	__u32 ctx_reserved1;
	__u64 ctx_reserved2[7];
};

/**
 * struct pfarg_pmc - one PMC write
 * @reg_num: PMC index in the PMU description
 * @reg_set: event set
 * @reg_flags: PFM_REGFL_* in, PFM_REG_RETFL_* out
 * @reg_value: value
 * @reg_reserved2: zero
 */
struct pfarg_pmc {
	__u16 reg_num;
	__u16 reg_set;
	__u32 reg_flags;
	__u64 reg_value;
	__u64 reg_reserved2[4];
};

/**
 * struct pfarg_pmd - one PMD write or read
 * @reg_num: PMD index in the PMU description
 * @reg_set: event set
 * @reg_flags: PFM_REGFL_* in, PFM_REG_RETFL_* out
 * @reg_value: value written, or 64-bit value read
 * @reg_long_reset: value reloaded on restart after a notification
 * @reg_short_reset: value reloaded after an overflow with no notification
 * @reg_last_reset_val: out: the value last reloaded
 * @reg_ovfl_switch_cnt: overflows before the set switches
 *                       (PFM_SETFL_OVFL_SWITCH); out: overflows left
 * @reg_reset_pmds: PMDs reset when this one overflows
 * @reg_smpl_pmds: PMDs recorded in a sample when this one overflows
 * @reg_smpl_eventid: opaque id recorded with samples
 * @reg_random_mask: bits of the reset value randomized (PFM_REGFL_RANDOM)
 * @reg_random_seed: obsolete in perfmon2 v2.8, which ignored it; ignored
 * @reg_freq: with PFM_REGFL_FREQ, the overflows per second of counting
 *            wanted: the core adjusts the reset values at each overflow
 *            (Documentation/sampling.rst, "Frequency"); else zero.  A read
 *            keeps it
 * @reg_start_pmds: trigger: PMDs 0-63 that start counting when this one
 *                  overflows; they are held (not counting) until then
 * @reg_stop_pmds: trigger: PMDs 0-63 that stop counting when this one
 *                 overflows (until a start trigger releases them)
 * @reg_reserved2: zero
 *
 * Triggers name counters of the same event set; a counter named in a
 * start mask is held from the moment the mask is written.  They act on
 * each 64-bit overflow of this PMD (the hardware period set by
 * reg_value and the reset values).
 */
struct pfarg_pmd {
	__u16 reg_num;
	__u16 reg_set;
	__u32 reg_flags;
	__u64 reg_value;
	__u64 reg_long_reset;
	__u64 reg_short_reset;
	__u64 reg_last_reset_val;
	__u64 reg_ovfl_switch_cnt;
	__u64 reg_reset_pmds[PFM_PMD_BV];
	__u64 reg_smpl_pmds[PFM_PMD_BV];
	__u64 reg_smpl_eventid;
	__u64 reg_random_mask;
	__u32 reg_random_seed;
	__u32 reg_freq;
	__u64 reg_start_pmds;
	__u64 reg_stop_pmds;
	__u64 reg_reserved2;
};

/**
 * struct pfarg_start - argument of pfm_start()
 * @start_set: event set to start with
 * @start_reserved1: zero
 * @start_reserved2: zero
 * @reserved3: zero
 */
struct pfarg_start {
	__u16 start_set;
	__u16 start_reserved1;
	__u32 start_reserved2;
	__u64 reserved3[3];
};

/**
 * struct pfarg_load - argument of pfm_load_context()
 * @load_pid: thread id to monitor, or the CPU for a system-wide context
 * @load_set: event set to activate first
 * @load_reserved1: zero
 * @load_reserved2: zero
 */
struct pfarg_load {
	__u32 load_pid;
	__u16 load_set;
	__u16 load_reserved1;
	__u64 load_reserved2[3];
};

/**
 * struct pfarg_setdesc - event set creation or deletion
 * @set_id: set number, below PFM_MAX_EVTSETS
 * @set_reserved1: zero
 * @set_flags: PFM_SETFL_* in, PFM_REG_RETFL_* out
 * @set_timeout: switch timeout in ns (PFM_SETFL_TIME_SWITCH); out: the
 *               timeout in effect, rounded to the timer's resolution
 * @reserved: zero
 */
struct pfarg_setdesc {
	__u16 set_id;
	__u16 set_reserved1;
	__u32 set_flags;
	__u64 set_timeout;
	__u64 reserved[6];
};

/**
 * struct pfarg_setinfo - event set state, argument of pfm_getinfo_evtsets()
 * @set_id: set number (in)
 * @set_reserved1: zero
 * @set_flags: out: PFM_SETFL_*
 * @set_ovfl_pmds: out: PMDs that overflowed last
 * @set_runs: out: times the set was activated
 * @set_timeout: out: effective timeout, or time left when active (ns)
 * @set_act_duration: out: total time the set was active (ns)
 * @set_avail_pmcs: out: PMCs usable in this set
 * @set_avail_pmds: out: PMDs usable in this set
 * @set_reserved3: zero
 */
struct pfarg_setinfo {
	__u16 set_id;
	__u16 set_reserved1;
	__u32 set_flags;
	__u64 set_ovfl_pmds[PFM_PMD_BV];
	__u64 set_runs;
	__u64 set_timeout;
	__u64 set_act_duration;
	__u64 set_avail_pmcs[PFM_PMC_BV];
	__u64 set_avail_pmds[PFM_PMD_BV];
	__u64 set_reserved3[6];
};

/*
 * Message types.  read() of a context returns one union pfarg_msg per
 * call; it returns 0 (no message) for a wake-up that carries none: an
 * overflow of a PFM_FL_OVFL_NO_MSG context, or a sampling format's
 * wake-up (the ring format's watermark).  Such a wake-up is reported
 * once, by read() returning 0 or by poll() returning EPOLLIN.
 */
#define PFM_MSG_OVFL	1	/* a counter overflowed */
#define PFM_MSG_END	2	/* the monitored thread ended */
#define PFM_MSG_THROTTLE 3	/* too many overflows: a tick's pause */

/**
 * struct pfarg_ovfl_msg - overflow, end or throttle notification
 * @msg_type: PFM_MSG_OVFL, PFM_MSG_END or PFM_MSG_THROTTLE (its IP and
 *            PMDs are 0)
 * @msg_ovfl_pid: process id of the monitored thread
 * @msg_active_set: event set active at the overflow
 * @msg_ovfl_cpu: CPU of the overflow
 * @msg_ovfl_tid: thread id of the monitored thread
 * @msg_ovfl_ip: instruction pointer at the overflow interrupt (0 when
 *               the PMU reported the overflow outside one)
 * @msg_ovfl_pmds: PMDs that overflowed and asked for a notification
 *                 (PFM_REGFL_OVFL_NOTIFY), or whose sampling format
 *                 asked for one (buffer full)
 */
struct pfarg_ovfl_msg {
	__u32 msg_type;
	__u32 msg_ovfl_pid;
	__u16 msg_active_set;
	__u16 msg_ovfl_cpu;
	__u32 msg_ovfl_tid;
	__u64 msg_ovfl_ip;
	__u64 msg_ovfl_pmds[PFM_PMD_BV];
};

/**
 * union pfarg_msg - what read() of a context returns, one at a time
 * @type: PFM_MSG_*
 * @pfm_ovfl_msg: the message
 */
union pfarg_msg {
	__u32 type;
	struct pfarg_ovfl_msg pfm_ovfl_msg;
};

/* ------------------------------------------------------------------ */
/* ioctl transport (the user library hides it)                         */
/* ------------------------------------------------------------------ */

/* ioctl type byte, unused in Documentation/userspace-api/ioctl/ioctl-number.rst */
#define PFM_IOC_MAGIC		0xF7

/**
 * struct pfarg_version - answer of PFM_GET_VERSION
 * @ver_major: PFM_VERSION_MAJ of the loaded module
 * @ver_minor: PFM_VERSION_MIN of the loaded module
 * @ver_reserved: zero
 */
struct pfarg_version {
	__u32 ver_major;
	__u32 ver_minor;
	__u64 ver_reserved[3];
};

/**
 * struct pfarg_create - argument of PFM_CREATE_CONTEXT
 * @ctx: the context description
 * @create_fmt_name: sampling format name, NUL-terminated, or empty for none
 * @create_fmt_arg: user pointer to the format's argument, or 0
 * @create_fmt_arg_size: its size in bytes
 * @create_reserved1: zero
 * @create_reserved2: zero
 */
struct pfarg_create {
	struct pfarg_ctx ctx;
	char create_fmt_name[PFM_NAME_LEN];
	__u64 create_fmt_arg;
	__u32 create_fmt_arg_size;
	__u32 create_reserved1;
	__u64 create_reserved2[2];
};

/**
 * struct pfarg_array - an array argument (registers, sets, register info)
 * @arr_ptr: user pointer to the first element
 * @arr_count: number of elements, 1 to PFM_MAX_ARRAY
 * @arr_reserved: zero
 */
struct pfarg_array {
	__u64 arr_ptr;
	__u32 arr_count;
	__u32 arr_reserved;
};

/* Most elements one array call takes. */
#define PFM_MAX_ARRAY		1024

/**
 * struct pfarg_read_values - argument of PFM_READ_VALUES
 * @rv_pmds: the PMDs to read: bit n asks for PMD @rv_first + n (not 0)
 * @rv_values: user pointer to one __u64 per bit set in @rv_pmds; out:
 *             the 64-bit values, lowest PMD first, as PFM_READ_PMDS'
 *             reg_value
 * @rv_first: the PMD of bit 0 of @rv_pmds
 * @rv_set: the event set whose PMDs are read
 * @rv_reserved: zero
 *
 * PFM_READ_PMDS without its 176-byte entries: a monitor that only wants
 * the counts copies 24 bytes in and 8 bytes a PMD out.
 */
struct pfarg_read_values {
	__u64 rv_pmds;
	__u64 rv_values;
	__u16 rv_first;
	__u16 rv_set;
	__u32 rv_reserved;
};

/**
 * struct pfarg_pmu_info - answer of PFM_GET_PMU_INFO
 * @pmu_name: name of the registered PMU description
 * @pmu_counter_width: bits of a hardware counter
 * @pmu_num_pmcs: PMCs implemented
 * @pmu_num_pmds: PMDs implemented
 * @pmu_max_pmc: highest PMC index plus one
 * @pmu_max_pmd: highest PMD index plus one
 * @pmu_flags: zero for now
 * @pmu_impl_pmcs: implemented PMCs
 * @pmu_impl_pmds: implemented PMDs
 * @pmu_reserved: zero
 */
struct pfarg_pmu_info {
	char pmu_name[PFM_NAME_LEN];
	__u32 pmu_counter_width;
	__u16 pmu_num_pmcs;
	__u16 pmu_num_pmds;
	__u16 pmu_max_pmc;
	__u16 pmu_max_pmd;
	__u32 pmu_flags;
	__u64 pmu_impl_pmcs[PFM_PMC_BV];
	__u64 pmu_impl_pmds[PFM_PMD_BV];
	__u64 pmu_reserved[4];
};

/* Register kinds (pfarg_reg_info.info_kind). */
#define PFM_REG_KIND_PMC	1
#define PFM_REG_KIND_PMD	2
#define PFM_REG_KIND_CFG	3	/* a driver setting (PFM_SET_DRV_CONFIG) */

/* Register type bits (pfarg_reg_info.info_type). */
#define PFM_REGT_IMPL		0x01	/* implemented */
#define PFM_REGT_CNTR		0x02	/* PMD: a counter, virtualized to 64 bits */
#define PFM_REGT_RO		0x04	/* read-only */
#define PFM_REGT_INTR		0x08	/* PMD: can raise an overflow interrupt */
#define PFM_REGT_NOSAVE		0x10	/* not saved on context switch */

/**
 * struct pfarg_reg_info - one register's description (PFM_GET_REG_INFO)
 * @info_num: register index (in)
 * @info_kind: PFM_REG_KIND_PMC, PFM_REG_KIND_PMD or PFM_REG_KIND_CFG (in)
 * @info_flags: out: PFM_REG_RETFL_NOTAVAIL when not implemented
 * @info_type: out: PFM_REGT_*
 * @info_dfl_val: out: default value (PMC, driver setting)
 * @info_rsvd_msk: out: bits that must be written as zero (PMC)
 * @info_hw_addr: out: hardware address (MSR, system register encoding)
 * @info_name: out: register name
 * @info_reserved: zero
 */
struct pfarg_reg_info {
	__u16 info_num;
	__u16 info_kind;
	__u32 info_flags;
	__u32 info_type;
	__u32 info_reserved1;
	__u64 info_dfl_val;
	__u64 info_rsvd_msk;
	__u64 info_hw_addr;
	char info_name[PFM_NAME_LEN];
	__u64 info_reserved[2];
};

/* Driver settings a context can carry (pfarg_drv_cfg.cfg_num). */
#define PFM_MAX_DRV_CFG		8

/**
 * struct pfarg_drv_cfg - one PMU driver setting (PFM_SET_DRV_CONFIG,
 * PFM_GET_DRV_CONFIG)
 * @cfg_num: the setting, as listed by PFM_GET_REG_INFO with
 *           PFM_REG_KIND_CFG (in)
 * @cfg_reserved1: zero
 * @cfg_flags: zero in; PFM_REG_RETFL_* out
 * @cfg_value: value (in for SET, out for GET)
 * @cfg_reserved2: zero
 *
 * Settings that do not fit a PMC (counter width, user-level counter
 * access, a clock's unit).  They belong to the context: they are in
 * force on the PMU while the context is live, and the PMU's defaults
 * otherwise.
 */
struct pfarg_drv_cfg {
	__u16 cfg_num;
	__u16 cfg_reserved1;
	__u32 cfg_flags;
	__u64 cfg_value;
	__u64 cfg_reserved2[2];
};

/* ------------------------------------------------------------------ */
/* User-level reads: a context's control page                          */

/*
 * mmap() offset of a per-thread context's control page: one page,
 * read-only, from which the monitored thread reads its own counters
 * without a system call (Documentation/uapi.rst, "User-level reads").
 * Offset 0 is the sampling buffer.
 */
#define PFM_USER_PAGE_OFFSET	0x40000000U
#define PFM_USER_PAGE_VERSION	1U
/* PMDs the page describes: 0 to PFM_USER_PAGE_PMDS - 1 */
#define PFM_USER_PAGE_PMDS	160

/* flags of struct pfm_user_pmd */
#define PFM_UPMD_USED		0x1U	/* written in the active set */
#define PFM_UPMD_STALE		0x2U	/* counting, not readable here */

/**
 * struct pfm_user_pmd - one PMD of the active set in the control page
 * @index: 0: the PMD's value is @offset.  Otherwise the monitored thread
 *         reads hardware counter @index - 1 itself (arm64: 0-30
 *         PMEVCNTR<n>_EL0, 31 PMCCNTR_EL0; x86: rdpmc's number, fixed
 *         counters with bit 30) and the value is @offset +
 *         ((counter - @base) & mask), mask having the page's @width low
 *         bits set: a wrap whose interrupt is not taken yet still counts
 *         right
 * @flags: PFM_UPMD_USED; PFM_UPMD_STALE when the PMD counts but cannot
 *         be read from user space (the PMU or its settings do not allow
 *         it): PFM_READ_PMDS gives its value
 * @offset: see @index
 * @base: see @index
 */
struct pfm_user_pmd {
	__u32 index;
	__u32 flags;
	__u64 offset;
	__u64 base;
};

/**
 * struct pfm_user_page - a per-thread context's control page
 * @version: PFM_USER_PAGE_VERSION
 * @seq: even while the page is stable; the kernel makes it odd before it
 *       rewrites the page and even again after.  A reader reads it,
 *       then the fields (and the counter), then it again, and retries
 *       while it was odd or changed
 * @set_id: the active set, whose PMDs @pmds describes
 * @width: implemented bits of a hardware counter (1 to 64)
 * @num_pmds: entries of @pmds in use (PMDs 0 to @num_pmds - 1)
 * @counting: 1 while the active set counts on the monitored thread's CPU
 * @time_enabled: ns the context counted, all sets, at @time_stamp
 * @time_running: ns the active set counted, at @time_stamp
 * @time_stamp: CLOCK_MONOTONIC ns of the last update while @counting
 *              (add now - @time_stamp to both times), else 0
 * @reserved: zero
 * @pmds: PMDs of the active set, by number
 */
struct pfm_user_page {
	__u32 version;
	__u32 seq;
	__u16 set_id;
	__u16 width;
	__u16 num_pmds;
	__u16 counting;
	__u64 time_enabled;
	__u64 time_running;
	__u64 time_stamp;
	__u64 reserved[3];
	struct pfm_user_pmd pmds[PFM_USER_PAGE_PMDS];
};

#define PFM_GET_VERSION		_IOR(PFM_IOC_MAGIC, 0x00, struct pfarg_version)
#define PFM_CREATE_CONTEXT	_IOW(PFM_IOC_MAGIC, 0x01, struct pfarg_create)
#define PFM_WRITE_PMCS		_IOW(PFM_IOC_MAGIC, 0x02, struct pfarg_array)
#define PFM_WRITE_PMDS		_IOW(PFM_IOC_MAGIC, 0x03, struct pfarg_array)
#define PFM_READ_PMDS		_IOW(PFM_IOC_MAGIC, 0x04, struct pfarg_array)
#define PFM_LOAD_CONTEXT	_IOW(PFM_IOC_MAGIC, 0x05, struct pfarg_load)
#define PFM_START		_IOW(PFM_IOC_MAGIC, 0x06, struct pfarg_start)
#define PFM_STOP		_IO(PFM_IOC_MAGIC, 0x07)
#define PFM_RESTART		_IO(PFM_IOC_MAGIC, 0x08)
#define PFM_CREATE_EVTSETS	_IOW(PFM_IOC_MAGIC, 0x09, struct pfarg_array)
#define PFM_DELETE_EVTSETS	_IOW(PFM_IOC_MAGIC, 0x0a, struct pfarg_array)
#define PFM_GETINFO_EVTSETS	_IOW(PFM_IOC_MAGIC, 0x0b, struct pfarg_array)
#define PFM_UNLOAD_CONTEXT	_IO(PFM_IOC_MAGIC, 0x0c)
#define PFM_SET_DRV_CONFIG	_IOW(PFM_IOC_MAGIC, 0x0d, struct pfarg_array)
#define PFM_GET_DRV_CONFIG	_IOW(PFM_IOC_MAGIC, 0x0e, struct pfarg_array)
#define PFM_GET_PMU_INFO	_IOR(PFM_IOC_MAGIC, 0x10, struct pfarg_pmu_info)
#define PFM_GET_REG_INFO	_IOW(PFM_IOC_MAGIC, 0x11, struct pfarg_array)
/* _IOW: the structure is only read; the values go out through rv_values. */
#define PFM_READ_VALUES		_IOW(PFM_IOC_MAGIC, 0x12, struct pfarg_read_values)

#endif /* _UAPI_LINUX_PERFMON_H */
