/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The "default" sampling format (module pfm_dfl_smpl): perfmon2 v2.8's,
 * byte for byte (layout 1.0), or, asked for with PFM_DFL_SMPL_FL_V2 in
 * buf_flags, layout 2.0, whose entries also carry the thread and
 * process ids apart, the count of values that follow and the PMD's
 * reg_smpl_eventid.  The buffer is a header followed by entries written
 * one after the other; mmap() of the context file maps it read-only.
 *
 * Each 64-bit overflow of a PMD written with PFM_REGFL_OVFL_NOTIFY
 * records one entry, then the 64-bit values of the PMDs in that PMD's
 * reg_smpl_pmds, in increasing PMD order, as they were at the overflow
 * (several PMDs overflowing at once give consecutive entries, in
 * increasing PMD order), and for a PMD written with PFM_REGFL_CALLCHAIN or
 * PFM_REGFL_KCALLCHAIN a 64-bit count and that many 64-bit addresses:
 * the call chain, innermost first, kernel entries before user ones (its
 * entries then vary in size).  The count's bits 0-15 are the entries,
 * bits 16-31 how many of the first are kernel ones
 * (PFM_DFL_CHAIN_NR(), PFM_DFL_CHAIN_NR_KERNEL()).  The overflowed PMD is then reset with its
 * short reset value and monitoring goes on.  When the entry just
 * written leaves no room for another (with the longest chain), the
 * buffer is full: the context
 * is masked and the monitor notified (PFM_MSG_OVFL); pfm_restart()
 * empties the buffer, reloads the overflowed PMD with its long reset
 * value and resumes.  No sample is dropped while the monitor keeps up;
 * hdr_overflows counts the samples that found no room (a PMD whose
 * entries are larger than those of the PMD that filled the buffer).
 * See Documentation/sampling.rst.
 */
#ifndef _UAPI_LINUX_PERFMON_DFL_SMPL_H
#define _UAPI_LINUX_PERFMON_DFL_SMPL_H

#include <linux/types.h>

#define PFM_DFL_SMPL_NAME	"default"

/* hdr_version: major.minor, as PFM_VERSION; 1.0 is perfmon2 v2.8's */
#define PFM_DFL_SMPL_VERSION_MAJ	1U
#define PFM_DFL_SMPL_VERSION_MIN	0U
#define PFM_DFL_SMPL_VERSION	(((PFM_DFL_SMPL_VERSION_MAJ & 0xffff) << 16) | \
				 (PFM_DFL_SMPL_VERSION_MIN & 0xffff))
#define PFM_DFL_SMPL_VERSION_2	(2U << 16)	/* PFM_DFL_SMPL_FL_V2's */

/* buf_flags */
#define PFM_DFL_SMPL_FL_V2	0x1	/* layout 2.0: struct pfm_dfl_smpl_entry_v2 */

/* The count word before a default-format entry's call chain. */
#define PFM_DFL_CHAIN_NR(w)		((unsigned int)((w) & 0xffff))
#define PFM_DFL_CHAIN_NR_KERNEL(w)	((unsigned int)(((w) >> 16) & 0xffff))

/**
 * struct pfm_dfl_smpl_arg - argument of the format, at context creation
 * @buf_size: bytes of buffer wanted, header included; rounded up to
 *            whole pages.  Charged to the caller's RLIMIT_MEMLOCK.
 * @buf_flags: 0 (layout 1.0) or PFM_DFL_SMPL_FL_V2
 * @res1: zero
 * @reserved: zero
 */
struct pfm_dfl_smpl_arg {
	__u64 buf_size;
	__u32 buf_flags;
	__u32 res1;
	__u64 reserved[6];
};

/**
 * struct pfm_dfl_smpl_hdr - at offset 0 of the buffer, both layouts
 * @hdr_count: entries in the buffer
 * @hdr_cur_offs: offset of the next entry (from the buffer's start)
 * @hdr_overflows: samples that found no room
 * @hdr_buf_size: bytes of the buffer
 * @hdr_min_buf_space: bytes of the largest entry written since the
 *                     buffer was last emptied, its values included (at
 *                     first: an entry without values)
 * @hdr_version: PFM_DFL_SMPL_VERSION or PFM_DFL_SMPL_VERSION_2
 * @hdr_buf_flags: buf_flags of the argument
 * @hdr_reserved: zero
 */
struct pfm_dfl_smpl_hdr {
	__u64 hdr_count;
	__u64 hdr_cur_offs;
	__u64 hdr_overflows;
	__u64 hdr_buf_size;
	__u64 hdr_min_buf_space;
	__u32 hdr_version;
	__u32 hdr_buf_flags;
	__u64 hdr_reserved[10];
};

/**
 * struct pfm_dfl_smpl_entry - one sample of layout 1.0; its PMD values
 *                             (reg_smpl_pmds of @ovfl_pmd) follow
 * @pid: thread id of the thread interrupted (perfmon2's name; 0: idle)
 * @ovfl_pmd: the PMD that overflowed
 * @reserved: zero
 * @last_reset_val: value the PMD was last reloaded with (the start of
 *                  the period that ended)
 * @ip: instruction pointer at the overflow interrupt (0 when unknown)
 * @tstamp: CLOCK_MONOTONIC at the overflow, in ns
 * @cpu: CPU of the overflow
 * @set: event set active at the overflow
 * @tgid: process id of the thread interrupted
 */
struct pfm_dfl_smpl_entry {
	__u32 pid;
	__u16 ovfl_pmd;
	__u16 reserved;
	__u64 last_reset_val;
	__u64 ip;
	__u64 tstamp;
	__u16 cpu;
	__u16 set;
	__u32 tgid;
};

/**
 * struct pfm_dfl_smpl_entry_v2 - one sample of layout 2.0; its PMD
 *                                values follow
 * @pid: process id of the thread interrupted (0: idle)
 * @tid: its thread id
 * @ip: instruction pointer at the overflow interrupt (0 when unknown)
 * @tstamp: CLOCK_MONOTONIC at the overflow, in ns
 * @cpu: CPU of the overflow
 * @set: event set active at the overflow
 * @ovfl_pmd: the PMD that overflowed
 * @nr_values: 64-bit values that follow (PMDs of its reg_smpl_pmds)
 * @last_reset_val: value the PMD was last reloaded with
 * @eventid: reg_smpl_eventid of the PMD
 */
struct pfm_dfl_smpl_entry_v2 {
	__u32 pid;
	__u32 tid;
	__u64 ip;
	__u64 tstamp;
	__u16 cpu;
	__u16 set;
	__u16 ovfl_pmd;
	__u16 nr_values;
	__u64 last_reset_val;
	__u64 eventid;
};

#endif /* _UAPI_LINUX_PERFMON_DFL_SMPL_H */
