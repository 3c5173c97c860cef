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
#include <stdint.h>
#include <sys/types.h>		/* pid_t, as perfmon2 v2.8's header gave */
#include <perfmon/perfmon_abi.h>
#include <perfmon/perfmon_ring.h>

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
typedef struct pfarg_ovfl_msg	pfarg_ovfl_msg_t;
typedef struct pfarg_ovfl_msg	pfm_ovfl_msg_t;	/* before v2.8 */
typedef int			os_err_t;	/* v2.8's return type */

/* perfmon2 v2.8 and earlier names (Documentation/library.rst) */
#define PFM_BPL			(sizeof(uint64_t) << 3)	/* bits a vector word */
#define PFM_REG_HAS_ERROR(flag)	(((flag) & PFM_REG_RETFL_MASK) != 0)
/* v2.2's remapped sets: never done here, so PFM_CREATE_CONTEXT refuses it. */
#define PFM_FL_MAP_SETS		0x10

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

/*
 * Extensions: each opens /dev/perfmon for the query and closes it.
 * pfm_get_abi_version() and pfm_get_pmu_desc() were pfm_get_version()
 * and pfm_get_pmu_info() before 0.3, names libpfm4 uses for its own
 * calls: the old names remain, weak and deprecated, and are not declared
 * when <perfmon/pfmlib.h> came first or PFM_NO_LEGACY_NAMES is defined.
 */
int pfm_get_abi_version(unsigned int *major, unsigned int *minor);
int pfm_get_pmu_desc(struct pfarg_pmu_info *info);
int pfm_get_reg_info(struct pfarg_reg_info *info, int count);

#if !defined(__PFMLIB_H__) && !defined(PFM_NO_LEGACY_NAMES)
int pfm_get_version(unsigned int *major, unsigned int *minor)
	__attribute__((deprecated("pfm_get_abi_version")));
int pfm_get_pmu_info(struct pfarg_pmu_info *info)
	__attribute__((deprecated("pfm_get_pmu_desc")));
#endif

/* Extensions on a context: PMU driver settings (since 0.2). */
int pfm_set_drv_config(int fd, struct pfarg_drv_cfg *cfg, int count);
int pfm_get_drv_config(int fd, struct pfarg_drv_cfg *cfg, int count);

/*
 * Extension since 0.4 (ABI 2.97): the values of up to 64 PMDs of one
 * set, bit n of pmds for PMD first + n, into values[] (one per bit set,
 * lowest PMD first): PFM_READ_PMDS for a monitor that only wants the
 * counts, 8 bytes a PMD instead of 176.
 */
int pfm_read_values(int fd, uint16_t set, uint16_t first, uint64_t pmds,
		    uint64_t *values);

/* Extensions since 0.3: events the PMU description names (sysfs). */
struct pfm_event_name {
	char name[PFM_NAME_LEN];	/* as in pmu_desc/events/ */
	uint64_t code;			/* the PMC's event field */
};

int pfm_get_pmu_events(struct pfm_event_name *ev, int count);

/*
 * Extensions since 0.3: the reader of the "ring" sampling format
 * (<perfmon/perfmon_ring.h>).  pfm_ring_map() maps the buffer of a
 * context created with it; pfm_ring_read() hands the unread records to
 * a callback, oldest first, each contiguous even when it wrapped, and
 * releases them to the kernel.
 */
struct pfm_ring {
	struct pfm_ring_ctrl *ctrl;	/* the control page */
	unsigned char *data;		/* the data area */
	size_t map_len;			/* bytes mapped */
	uint64_t data_size;		/* bytes of the data area */
	int read_only;			/* overwrite mode: nothing released */
	void *bounce;			/* private: a wrapped record */
};

/* Return non-zero to stop after this record. */
typedef int (*pfm_ring_fn)(const struct pfm_ring_rec *rec, void *arg);

int pfm_ring_map(int fd, struct pfm_ring *ring);
int pfm_ring_read(struct pfm_ring *ring, pfm_ring_fn fn, void *arg);
void pfm_ring_unmap(struct pfm_ring *ring);

#ifdef __cplusplus
}
#endif

#endif /* _PERFMON_PERFMON_H */
