/* SPDX-License-Identifier: GPL-2.0 */
/* pfmon export --format pprof (pprof.c). */
#ifndef PFMON_PPROF_H
#define PFMON_PPROF_H

int pprof_export(const char *input, const char *output);

#endif /* PFMON_PPROF_H */
