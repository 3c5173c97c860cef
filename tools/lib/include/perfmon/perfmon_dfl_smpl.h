/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libperfmon: the "default" sampling format as perfmon2 v2.8 programs
 * name it.  The layout is the kernel's header, installed next to this
 * one as <perfmon/perfmon_dfl_smpl_abi.h> (Documentation/sampling.rst).
 */
#ifndef _PERFMON_PERFMON_DFL_SMPL_H
#define _PERFMON_PERFMON_DFL_SMPL_H

#include <perfmon/perfmon.h>
#include <perfmon/perfmon_dfl_smpl_abi.h>

/* perfmon2 v2.8 type names */
typedef struct pfm_dfl_smpl_arg		pfm_dfl_smpl_arg_t;
typedef struct pfm_dfl_smpl_hdr		pfm_dfl_smpl_hdr_t;
typedef struct pfm_dfl_smpl_entry	pfm_dfl_smpl_entry_t;
typedef struct pfm_dfl_smpl_entry_v2	pfm_dfl_smpl_entry_v2_t;

#endif /* _PERFMON_PERFMON_DFL_SMPL_H */
