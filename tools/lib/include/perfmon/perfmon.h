/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libperfmon: the perfmon2 v2.8 calls over the ioctls of /dev/perfmon.
 *
 * The structures, flags and constants come from the kernel's user ABI
 * header, installed next to this one as <perfmon/perfmon_abi.h>.
 *
 * Every call returns 0 (pfm_create_context(): the context's file
 * descriptor) on success, and -1 with errno set on failure.
 */
#ifndef _PERFMON_PERFMON_H
#define _PERFMON_PERFMON_H

#include <stddef.h>
#include <perfmon/perfmon_abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* perfmon2 type names */
typedef struct pfarg_ctx	pfarg_ctx_t;
typedef struct pfarg_pmc	pfarg_pmc_t;
typedef struct pfarg_pmd	pfarg_pmd_t;
typedef struct pfarg_start	pfarg_start_t;
typedef struct pfarg_load	pfarg_load_t;
typedef struct pfarg_setdesc	pfarg_setdesc_t;
typedef struct pfarg_setinfo	pfarg_setinfo_t;
typedef union pfarg_msg		pfarg_msg_t;
typedef struct pfarg_ovfl_msg	pfm_ovfl_msg_t;

/* perfmon2 v2.8 calls */
int pfm_create_context(pfarg_ctx_t *ctx, char *smpl_name, void *smpl_arg,
		       size_t smpl_size);
int pfm_write_pmcs(int fd, pfarg_pmc_t *pmcs, int count);
int pfm_write_pmds(int fd, pfarg_pmd_t *pmds, int count);
int pfm_read_pmds(int fd, pfarg_pmd_t *pmds, int count);
int pfm_load_context(int fd, pfarg_load_t *load);
int pfm_start(int fd, pfarg_start_t *start);
int pfm_stop(int fd);
int pfm_restart(int fd);
int pfm_create_evtsets(int fd, pfarg_setdesc_t *setd, int count);
int pfm_delete_evtsets(int fd, pfarg_setdesc_t *setd, int count);
int pfm_getinfo_evtsets(int fd, pfarg_setinfo_t *info, int count);
int pfm_unload_context(int fd);

/* Extensions: each opens /dev/perfmon for the query and closes it. */
int pfm_get_version(unsigned int *major, unsigned int *minor);
int pfm_get_pmu_info(struct pfarg_pmu_info *info);
int pfm_get_reg_info(struct pfarg_reg_info *info, int count);

/* Extensions on a context: PMU driver settings (since 0.2). */
int pfm_set_drv_config(int fd, struct pfarg_drv_cfg *cfg, int count);
int pfm_get_drv_config(int fd, struct pfarg_drv_cfg *cfg, int count);

#ifdef __cplusplus
}
#endif

#endif /* _PERFMON_PERFMON_H */
