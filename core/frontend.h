/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the front ends may use of the core: the /dev/perfmon device
 * (core/dev.c) and the pfmk_* kernel API (kapi/kapi.c) include this
 * header alone.  A context is opaque to them: they create, call and
 * release it, and the core checks its state under its lock.
 *
 * The calls take their arguments in kernel memory; copying from and
 * to user space is the device's.  Each runs its __pfm_* core entry
 * point (context lock held) where the context is live.
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

/**
 * struct pfm_args - the arguments of one call, in kernel memory
 * @req: the call's argument: an array of @count entries, or one
 *       structure (load, start, create); NULL for the calls without
 * @pmcs: @req of PFM_WRITE_PMCS
 * @pmds: @req of PFM_WRITE_PMDS and PFM_READ_PMDS
 * @setd: @req of PFM_CREATE_EVTSETS and PFM_DELETE_EVTSETS
 * @setinfo: @req of PFM_GETINFO_EVTSETS
 * @cfg: @req of PFM_SET_DRV_CONFIG and PFM_GET_DRV_CONFIG
 * @ctx: @req of PFM_CREATE_CONTEXT
 * @load: @req of PFM_LOAD_CONTEXT
 * @start: @req of PFM_START
 * @values: @req of PFM_READ_VALUES
 * @count: entries at @req (array calls)
 * @create: PFM_CREATE_CONTEXT's sampling format
 * @core: the core's, from a call's preparation to its end (as an
 *        sk_buff's cb): set by the call's prepare step, so the front
 *        end need not initialize it
 */
struct pfm_args {
	union {
		void *req;
		struct pfarg_pmc *pmcs;
		struct pfarg_pmd *pmds;
		struct pfarg_setdesc *setd;
		struct pfarg_setinfo *setinfo;
		struct pfarg_drv_cfg *cfg;
		const struct pfarg_ctx *ctx;
		const struct pfarg_load *load;
		const struct pfarg_start *start;
		struct pfm_values *values;
	};
	unsigned int count;
	const struct pfm_create_args *create;
	unsigned long core[5];
};

/*
 * core/calls.c: the calls both front ends make, one per ioctl.  Each
 * runs its __pfm_* core entry point under the context lock where the
 * context is live, with what must sleep before and after it.
 */
struct pfm_op;
extern const struct pfm_op pfm_op_create_context;
extern const struct pfm_op pfm_op_write_pmcs;
extern const struct pfm_op pfm_op_write_pmds;
extern const struct pfm_op pfm_op_read_pmds;
extern const struct pfm_op pfm_op_load_context;
extern const struct pfm_op pfm_op_unload_context;
extern const struct pfm_op pfm_op_start;
extern const struct pfm_op pfm_op_stop;
extern const struct pfm_op pfm_op_restart;
extern const struct pfm_op pfm_op_create_evtsets;
extern const struct pfm_op pfm_op_delete_evtsets;
extern const struct pfm_op pfm_op_getinfo_evtsets;
extern const struct pfm_op pfm_op_set_drv_config;
extern const struct pfm_op pfm_op_get_drv_config;

/* core/run.c: run one of them */
int pfm_call(struct pfm_context *ctx, const struct pfm_op *op,
	     struct pfm_args *a);
/* core/calls.c: PFM_READ_VALUES, the polling call, has its own entry */
int pfm_call_read_values(struct pfm_context *ctx, struct pfm_values *v);

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
