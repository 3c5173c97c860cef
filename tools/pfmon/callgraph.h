/* SPDX-License-Identifier: GPL-2.0 */
/* Call graphs of folded stacks: callers and callees (callgraph.c). */
#ifndef PFMON_CALLGRAPH_H
#define PFMON_CALLGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

size_t callgraph_print(FILE *f, const char *const *stacks,
		       const uint64_t *counts, size_t n, uint64_t samples,
		       size_t top);

#endif /* PFMON_CALLGRAPH_H */
