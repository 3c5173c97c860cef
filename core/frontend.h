/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the front ends may use of the core: the /dev/perfmon device
 * (core/dev.c) and the pfmk_* kernel API (kapi/kapi.c) include this
 * header alone.  A context is opaque to them: they create, call and
 * release it, and the core checks its state under its lock.
 *
 * The calls take their arguments in kernel memory; copying from and
 * to user space is the device's.  Each is one named function, beside
 * the __pfm_* core entry point it runs under the context lock where the
 * context is live (pfm_run(), core/run.c).
 */
#ifndef _PERFMON_FRONTEND_H
#define _PERFMON_FRONTEND_H

#include <linux/poll.h>
#include <linux/types.h>
#include <uapi/linux/perfmon.h>

struct completion;
struct file;
struct pfm_context;
struct vm_area_struct;

/* core/create.c: a context's life */
struct pfm_context *pfm_context_alloc(struct completion *kcompl);

/* core/load.c */
void pfm_ctx_release(struct pfm_context *ctx);
void pfm_ctx_release_sync(struct pfm_context *ctx);

/**
 * struct pfm_create_args - the sampling format of a context creation
 * @fmt_name: format name, or NULL / "" for none
 * @fmt_arg: its argument (kernel memory), or NULL
 * @fmt_arg_size: bytes at @fmt_arg
 * @charge: charge the buffer to the caller's RLIMIT_MEMLOCK (user
 *          callers; kernel buffers are not a user's)
 */
struct pfm_create_args {
	const char *fmt_name;
	const void *fmt_arg;
	size_t fmt_arg_size;
	bool charge;
};

/**
 * struct pfm_values - PFM_READ_VALUES in kernel memory
 * @pmds: the PMDs to read: bit n is PMD @first + n
 * @vals: out: one value per bit of @pmds, lowest PMD first
 * @first: the PMD of bit 0
 * @set: the event set read
 * @nr: out: values written
 */
struct pfm_values {
	u64 pmds;
	u64 *vals;
	u16 first;
	u16 set;
	unsigned int nr;
};

/*
 * The calls, one per ioctl, in kernel memory; an array call's @count is
 * at least 1 (the front ends check it).
 */

/* core/create.c */
int pfm_create_context(struct pfm_context *ctx, const struct pfarg_ctx *req,
		       const struct pfm_create_args *fmt);

/* core/regs.c */
int pfm_write_pmcs(struct pfm_context *ctx, struct pfarg_pmc *req,
		   unsigned int count);
int pfm_write_pmds(struct pfm_context *ctx, struct pfarg_pmd *req,
		   unsigned int count);
int pfm_read_pmds(struct pfm_context *ctx, struct pfarg_pmd *req,
		  unsigned int count);
int pfm_read_values(struct pfm_context *ctx, struct pfm_values *v);

/* core/load.c */
int pfm_load_context(struct pfm_context *ctx, const struct pfarg_load *req);
int pfm_unload_context(struct pfm_context *ctx);

/* core/control.c */
int pfm_start(struct pfm_context *ctx, const struct pfarg_start *req);
int pfm_stop(struct pfm_context *ctx);
int pfm_restart(struct pfm_context *ctx);

/* core/sets.c */
int pfm_create_evtsets(struct pfm_context *ctx, struct pfarg_setdesc *req,
		       unsigned int count);
int pfm_delete_evtsets(struct pfm_context *ctx, struct pfarg_setdesc *req,
		       unsigned int count);
int pfm_getinfo_evtsets(struct pfm_context *ctx, struct pfarg_setinfo *req,
			unsigned int count);

/* core/drvcfg.c */
int pfm_set_drv_config(struct pfm_context *ctx, struct pfarg_drv_cfg *req,
		       unsigned int count);
int pfm_get_drv_config(struct pfm_context *ctx, struct pfarg_drv_cfg *req,
		       unsigned int count);

/* core/pmu.c: the registered PMU description */
int pfm_pmu_info(struct pfarg_pmu_info *info);
int pfm_pmu_reg_info(struct pfarg_reg_info *req, unsigned int count);

/* core/msg.c: notifications */
ssize_t pfm_msg_take(struct pfm_context *ctx, union pfarg_msg *msg);
ssize_t pfm_msg_read(struct pfm_context *ctx, char __user *buf, size_t size,
		     bool nonblock);
__poll_t pfm_msg_poll(struct pfm_context *ctx, struct file *filp,
		      poll_table *wait);
int pfm_msg_fasync(struct pfm_context *ctx, int fd, struct file *filp,
		   int on);

/* core/smpl.c, core/upage.c: the buffers a context maps */
int pfm_smpl_mmap(struct pfm_context *ctx, struct vm_area_struct *vma);
int pfm_smpl_copy(struct pfm_context *ctx, u64 pos, size_t len,
		  int (*fn)(void *priv, const void *chunk, size_t len),
		  void *priv);
void *pfm_smpl_area(struct pfm_context *ctx, size_t *size);
int pfm_upage_mmap(struct pfm_context *ctx, struct vm_area_struct *vma);

/* core/dev.c: the device, registered by core/main.c */
int pfm_dev_init(void);
void pfm_dev_exit(void);

#endif /* _PERFMON_FRONTEND_H */
