/* SPDX-License-Identifier: GPL-2.0 */
/* Flame graphs of folded stacks, as SVG (flame.c). */
#ifndef PFMON_FLAME_H
#define PFMON_FLAME_H

#include <stdint.h>
#include <stdio.h>

int flame_write(FILE *f, const char *title, const char *const *stacks,
		const uint64_t *counts, size_t n);
int cmd_flame(int argc, char **argv);

#endif /* PFMON_FLAME_H */
