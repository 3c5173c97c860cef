/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The "ring" sampling format (module pfm_ring_smpl): a control page and
 * 2^n data pages, mapped by mmap() of the context file (offset 0, the
 * control page first).  It never masks monitoring and never blocks the
 * monitored code.
 *
 * The data area holds typed, variable-size records, each starting with
 * struct pfm_ring_rec and a multiple of 8 bytes long.  data_head and
 * data_tail are free-running byte counts: the bytes of the data area
 * from data_tail to data_head (modulo data_size) are unread records.  A
 * record may wrap from the end of the data area to its start.
 *
 * Reader protocol (Documentation/sampling.rst):
 *   head = load-acquire(ctrl->data_head);
 *   read the records in [tail, head);
 *   store-release(ctrl->data_tail, head);
 * The writer reads data_tail with load-acquire and publishes data_head
 * with store-release after the record is written, so the reader never
 * sees a record before its bytes and the writer never overwrites bytes
 * the reader has not released.
 *
 * A record that finds no room is dropped and counted: ctrl->lost is the
 * total, and the next record that fits is preceded by a PFM_RING_REC_LOST
 * record carrying the drops since the previous one.
 *
 * Overwrite (flight-recorder) mode, PFM_RING_OVERWRITE: the writer owns
 * data_tail and moves it past the oldest whole records to make room, so
 * the ring always holds the newest ones (ctrl->overwritten counts those
 * that went).  There are no wake-ups; the mapping is read-only.  Stop
 * the context, then read from data_tail to data_head.
 */
#ifndef _UAPI_LINUX_PERFMON_RING_H
#define _UAPI_LINUX_PERFMON_RING_H

#include <linux/types.h>

#define PFM_RING_SMPL_NAME	"ring"

#define PFM_RING_VERSION_MAJ	1U
#define PFM_RING_VERSION_MIN	0U
#define PFM_RING_VERSION	(((PFM_RING_VERSION_MAJ & 0xffff) << 16) | \
				 (PFM_RING_VERSION_MIN & 0xffff))

/* pfm_ring_smpl_arg.flags */
#define PFM_RING_OVERWRITE	0x1	/* keep the newest records, no wake-ups */

/* Most data pages: 2^PFM_RING_MAX_ORDER. */
#define PFM_RING_MAX_ORDER	16

/**
 * struct pfm_ring_smpl_arg - argument of the format, at context creation
 * @data_pages: data pages, a power of two from 1 to 2^PFM_RING_MAX_ORDER;
 *              with the control page, charged to RLIMIT_MEMLOCK
 * @flags: PFM_RING_*
 * @wakeup_events: wake the reader every that many records (0: off)
 * @reserved1: zero
 * @wakeup_bytes: wake the reader when that many bytes were written
 *                since the last wake-up (0: off).  With both off, the
 *                reader is woken at each half of the data area.
 * @reserved2: zero
 *
 * A wake-up makes poll() report EPOLLIN, sends SIGIO to an O_ASYNC
 * owner and makes a blocked read() return 0 (Documentation/sampling.rst).
 */
struct pfm_ring_smpl_arg {
	__u32 data_pages;
	__u32 flags;
	__u32 wakeup_events;
	__u32 reserved1;
	__u64 wakeup_bytes;
	__u64 reserved2[5];
};

/**
 * struct pfm_ring_ctrl - the control page (offset 0 of the mapping)
 * @version: PFM_RING_VERSION
 * @flags: PFM_RING_* in force
 * @data_offset: offset of the data area in the mapping (one page)
 * @data_size: bytes of the data area, a power of two
 * @data_head: bytes written, free-running (writer; load-acquire it)
 * @data_tail: bytes consumed, free-running (reader; store-release it).
 *             In overwrite mode the writer's: the oldest whole record.
 * @lost: records dropped for want of room, in total
 * @overwritten: overwrite mode: records overwritten, in total
 * @records: records written, in total
 * @wakeups: wake-ups issued, in total
 * @reserved: zero
 */
struct pfm_ring_ctrl {
	__u32 version;
	__u32 flags;
	__u64 data_offset;
	__u64 data_size;
	__u64 data_head;
	__u64 data_tail;
	__u64 lost;
	__u64 overwritten;
	__u64 records;
	__u64 wakeups;
	__u64 reserved[23];
};

/* Record types (pfm_ring_rec.type). */
#define PFM_RING_REC_SAMPLE	1	/* struct pfm_ring_sample */
#define PFM_RING_REC_LOST	2	/* struct pfm_ring_lost */
#define PFM_RING_REC_SET_SWITCH	3	/* struct pfm_ring_set_switch */
#define PFM_RING_REC_CALLCHAIN	4	/* struct pfm_ring_callchain */

/**
 * struct pfm_ring_rec - the header of every record
 * @type: PFM_RING_REC_*; an unknown type is skipped by its @size
 * @size: bytes of the record, header included, a multiple of 8
 * @reserved: zero
 */
struct pfm_ring_rec {
	__u16 type;
	__u16 size;
	__u32 reserved;
};

/**
 * struct pfm_ring_sample - one sample; its PMD values follow
 * @hdr: type PFM_RING_REC_SAMPLE
 * @pid: process id of the thread interrupted (0: idle)
 * @tid: its thread id
 * @ip: instruction pointer at the overflow interrupt (0 when unknown)
 * @tstamp: CLOCK_MONOTONIC at the overflow, in ns
 * @cpu: CPU of the overflow
 * @set: event set active at the overflow
 * @ovfl_pmd: the PMD that overflowed
 * @nr_values: 64-bit values that follow (PMDs of its reg_smpl_pmds, in
 *             increasing PMD order)
 * @last_reset_val: value the PMD was last reloaded with
 * @eventid: reg_smpl_eventid of the PMD
 */
struct pfm_ring_sample {
	struct pfm_ring_rec hdr;
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

/**
 * struct pfm_ring_callchain - the call chain of the sample before it
 * @hdr: type PFM_RING_REC_CALLCHAIN; written right after each sample of
 *       a PMD with PFM_REGFL_CALLCHAIN or PFM_REGFL_KCALLCHAIN, in the
 *       same room (both or neither are written)
 * @nr: entries of @ips (0: no chain, a kernel thread's user one); at
 *      most PFM_MAX_CALLCHAIN
 * @nr_kernel: of them the first, the kernel call chain
 *             (PFM_REGFL_KCALLCHAIN, interrupted in the kernel): the
 *             kernel instruction pointer, then the return addresses the
 *             kernel's unwinder found; at most PFM_MAX_KCALLCHAIN
 * @reserved: zero
 * @ips: the kernel entries, then (PFM_REGFL_CALLCHAIN) the user
 *       instruction pointer and the return addresses of the
 *       frame-pointer chain, innermost first; the walk stops at the
 *       first frame it cannot read or that is not above the previous
 *       one (Documentation/sampling.rst, "Call chains")
 */
struct pfm_ring_callchain {
	struct pfm_ring_rec hdr;
	__u16 nr;
	__u16 nr_kernel;
	__u16 reserved[2];
	__u64 ips[];
};

/**
 * struct pfm_ring_lost - records dropped before the next record
 * @hdr: type PFM_RING_REC_LOST
 * @lost: records dropped since the previous lost record
 */
struct pfm_ring_lost {
	struct pfm_ring_rec hdr;
	__u64 lost;
};

/**
 * struct pfm_ring_set_switch - the context switched event sets
 * @hdr: type PFM_RING_REC_SET_SWITCH
 * @tstamp: CLOCK_MONOTONIC of the switch, in ns
 * @from_set: set switched out
 * @to_set: set switched in
 * @cpu: CPU of the switch
 * @reserved: zero
 */
struct pfm_ring_set_switch {
	struct pfm_ring_rec hdr;
	__u64 tstamp;
	__u16 from_set;
	__u16 to_set;
	__u16 cpu;
	__u16 reserved;
};

#endif /* _UAPI_LINUX_PERFMON_RING_H */
