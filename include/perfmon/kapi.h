/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pfmk_*: the perfmon calls for kernel code (kernel threads, modules).
 * They take the same arguments as the ioctls of /dev/perfmon, in kernel
 * memory, and call the same locked core.  Documentation/kapi.rst.
 *
 * Every call returns 0 (pfmk_read(): a size) or a negative errno, and
 * -EBADF for a descriptor that is NULL or was closed.  Every call may
 * sleep: call them from process context (a kernel thread, a module's
 * init or exit, a work item), never from atomic context.
 */
#ifndef _PERFMON_KAPI_H
#define _PERFMON_KAPI_H

#include <linux/types.h>
#include <uapi/linux/perfmon.h>

struct completion;
struct pfmk_ctx;

/**
 * struct pfmk_smpl - a kernel context's sampling buffer
 * @addr: kernel address of the buffer (never mapped to user space); its
 *        layout is the format's (perfmon_dfl_smpl.h, perfmon_ring.h)
 * @size: bytes of the buffer
 */
struct pfmk_smpl {
	void *addr;
	size_t size;
};

/**
 * typedef pfmk_copy_fn - receives one chunk of a sampling buffer
 * @priv: the caller's pointer given to pfmk_smpl_copy()
 * @chunk: the bytes (kernel memory, valid during the call)
 * @len: their count, at most PAGE_SIZE
 *
 * May sleep when pfmk_smpl_copy() was called where sleeping is allowed.
 * Return: 0 to go on, or a negative errno that stops the copy.
 */
typedef int (*pfmk_copy_fn)(void *priv, const void *chunk, size_t len);

int pfmk_create_context(const struct pfarg_ctx *req, const char *fmt_name,
			const void *fmt_arg, size_t fmt_arg_size,
			struct completion *c, struct pfmk_ctx **desc,
			struct pfmk_smpl *smpl);
int pfmk_write_pmcs(struct pfmk_ctx *desc, struct pfarg_pmc *req, int count);
int pfmk_write_pmds(struct pfmk_ctx *desc, struct pfarg_pmd *req, int count);
int pfmk_read_pmds(struct pfmk_ctx *desc, struct pfarg_pmd *req, int count);
int pfmk_read_values(struct pfmk_ctx *desc, u16 set, u16 first, u64 pmds,
		     u64 *values);
int pfmk_load_context(struct pfmk_ctx *desc, const struct pfarg_load *req);
int pfmk_unload_context(struct pfmk_ctx *desc);
int pfmk_start(struct pfmk_ctx *desc, const struct pfarg_start *req);
int pfmk_stop(struct pfmk_ctx *desc);
int pfmk_restart(struct pfmk_ctx *desc);
int pfmk_create_evtsets(struct pfmk_ctx *desc, struct pfarg_setdesc *req,
			int count);
int pfmk_delete_evtsets(struct pfmk_ctx *desc, struct pfarg_setdesc *req,
			int count);
int pfmk_getinfo_evtsets(struct pfmk_ctx *desc, struct pfarg_setinfo *req,
			 int count);
int pfmk_set_drv_config(struct pfmk_ctx *desc, struct pfarg_drv_cfg *req,
			int count);
int pfmk_get_drv_config(struct pfmk_ctx *desc, struct pfarg_drv_cfg *req,
			int count);
ssize_t pfmk_read(struct pfmk_ctx *desc, union pfarg_msg *msg, size_t size,
		  bool noblock);
int pfmk_smpl_copy(struct pfmk_ctx *desc, u64 pos, size_t len,
		   pfmk_copy_fn fn, void *priv);
int pfmk_close(struct pfmk_ctx *desc);

#endif /* _PERFMON_KAPI_H */
