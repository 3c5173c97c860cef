/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sampling formats: modules that record what a counter overflow should
 * leave behind, in a buffer the core allocates for a context.  A format
 * registers by name; a context picks one at creation with an argument.
 * Documentation/sampling.rst says how to write one.
 */
#ifndef _PERFMON_SMPL_FMT_H
#define _PERFMON_SMPL_FMT_H

#include <linux/list.h>
#include <linux/types.h>
#include <uapi/linux/perfmon.h>

struct kobject;
struct module;
struct pfm_smpl_buf;

/**
 * struct pfm_ovfl_arg - one 64-bit counter overflow, for a format's handler
 * @ovfl_pmd: the PMD that overflowed
 * @active_set: event set active at the overflow
 * @cpu: CPU of the overflow
 * @nr_values: entries of @values used
 * @pid: process id of the interrupted thread (0: idle)
 * @tid: its thread id
 * @ip: instruction pointer at the overflow interrupt, 0 when unknown
 * @tstamp: CLOCK_MONOTONIC at the overflow, ns
 * @last_reset_val: value the PMD was last reloaded with
 * @eventid: the PMD's reg_smpl_eventid
 * @callchain: the PMD asked for call chains (PFM_REGFL_CALLCHAIN or
 *             PFM_REGFL_KCALLCHAIN): the sample records @ips, even when
 *             @nr_ips is 0
 * @nr_ips: entries of @ips used
 * @nr_kips: of them the first, kernel ones
 * @values: 64-bit values of the PMD's reg_smpl_pmds, increasing PMD order
 * @ips: the kernel call chain, then the user one, each innermost first:
 *       an instruction pointer, then return addresses (core/callchain.c)
 */
struct pfm_ovfl_arg {
	u16 ovfl_pmd;
	u16 active_set;
	u16 cpu;
	u16 nr_values;
	u32 pid;
	u32 tid;
	u64 ip;
	u64 tstamp;
	u64 last_reset_val;
	u64 eventid;
	bool callchain;
	u16 nr_ips;
	u16 nr_kips;
	u64 values[PFM_MAX_PMDS];
	u64 ips[PFM_MAX_CALLCHAIN];
};

/* What a format's handler asks of the core (bits of its return value). */
#define PFM_FMT_RESET	0x1	/* reload the PMD with its short reset value */
#define PFM_FMT_NOTIFY	0x2	/* notify the monitor and mask until restart */
#define PFM_FMT_WAKE	0x4	/* wake readers without a message */

/* pfm_smpl_buf.flags */
#define PFM_SMPL_MAP_WRITE	0x1	/* the buffer may be mapped writable */

/**
 * struct pfm_smpl_buf - a context's sampling buffer
 * @fmt: its format (module reference held)
 * @addr: the buffer, vmalloc_user()'ed, zeroed, @size bytes
 * @size: bytes, a multiple of PAGE_SIZE
 * @flags: PFM_SMPL_*, set by the format's @init
 * @priv: the format's own state (never mapped); set by @init
 * @mm: the address space whose VmLck shows the pages
 * @user: the user charged for them (its locked_vm, within its
 *        allowance and RLIMIT_MEMLOCK; Documentation/security.rst)
 */
struct pfm_smpl_buf {
	const struct pfm_smpl_fmt *fmt;
	void *addr;
	size_t size;
	u32 flags;
	void *priv;
	struct mm_struct *mm;
	struct user_struct *user;
};

/**
 * struct pfm_smpl_fmt - a sampling format
 * @name: unique name users pass at context creation (< PFM_NAME_LEN)
 * @owner: THIS_MODULE
 * @arg_size: exact size of the format's argument structure
 * @validate: check the argument (@ctx_flags: PFM_FL_*); 0 or -EINVAL.
 *            Process context, may sleep.
 * @getsize: bytes of buffer the (valid) argument asks for; the core
 *           rounds them up to pages and charges RLIMIT_MEMLOCK.
 * @init: prepare the zeroed buffer @buf (and @buf->priv, @buf->flags);
 *        0 or a negative errno.  Process context, may sleep.
 * @handler: record one overflow; returns PFM_FMT_* bits.  Runs under
 *           the context lock with interrupts disabled: no sleeping.
 * @restart: the monitor restarted the context after a notification
 *           (optional).  Context lock held.
 * @set_switch: the context switched from set @from to set @to
 *              (optional).  Context lock held, interrupts disabled.
 * @exit: release what @init set up (optional).  Process context.
 * @data_area: where the records are, for the kernel API's copy-out
 *             (optional): *@base and *@size bytes; *@ring when offsets
 *             run free and wrap modulo *@size (a power of two)
 * @list: the core's list of formats (the core's; leave zero)
 * @kobj: its sysfs directory (the core's; leave zero)
 *
 * The core calls @handler for each 64-bit overflow of a PMD written with
 * PFM_REGFL_OVFL_NOTIFY.  Anything in @buf->addr may be rewritten by
 * the user when the format allows a writable mapping: the format must
 * check what it reads back from there.
 */
struct pfm_smpl_fmt {
	const char *name;
	struct module *owner;
	size_t arg_size;
	int (*validate)(u32 ctx_flags, const void *arg);
	size_t (*getsize)(const void *arg);
	int (*init)(struct pfm_smpl_buf *buf, u32 ctx_flags, const void *arg);
	u32 (*handler)(struct pfm_smpl_buf *buf, const struct pfm_ovfl_arg *arg);
	void (*restart)(struct pfm_smpl_buf *buf);
	void (*set_switch)(struct pfm_smpl_buf *buf, u16 from, u16 to,
			   u16 cpu, u64 tstamp);
	void (*exit)(struct pfm_smpl_buf *buf);
	void (*data_area)(struct pfm_smpl_buf *buf, void **base, size_t *size,
			  bool *ring);
	struct list_head list;
	struct kobject *kobj;
};

int pfm_fmt_register(struct pfm_smpl_fmt *fmt);
void pfm_fmt_unregister(struct pfm_smpl_fmt *fmt);

#endif /* _PERFMON_SMPL_FMT_H */
