/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbol resolution for "pfmon report": kernel IPs through kallsyms,
 * user IPs through the ELF symbol tables (libelf) of the mapped files.
 *
 * Every string handed out lives as long as the struct symbols it came
 * from, so the report can keep and compare the pointers.
 */
#ifndef PFMON_SYMBOLS_H
#define PFMON_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYM_UNKNOWN	"[unknown]"
#define SYM_HIDDEN	"[hidden]"
#define OBJ_KERNEL	"[kernel]"

struct symbols;
struct dso;

/*
 * @kallsyms: the kernel's symbols, read when a kernel IP first needs
 * them; NULL for /proc/kallsyms.  Returns NULL when libelf is unusable.
 */
struct symbols *symbols_new(const char *kallsyms);
void symbols_free(struct symbols *syms);

/*
 * The kernel's load address in @kallsyms (NULL: /proc/kallsyms): _text's,
 * _stext's where there is no _text; 0 when it cannot be read or hides
 * the addresses (all zero).
 */
uint64_t symbols_kernel_text(const char *kallsyms);

/* Whether @ip, found in no user mapping, is a kernel address. */
bool symbols_is_kernel(struct symbols *syms, uint64_t ip);

/* The kernel object ("[kernel]", "[module]") and symbol of @ip. */
void symbols_kernel(struct symbols *syms, uint64_t ip,
		    const char **obj, const char **sym);

/*
 * The file mapped at @path, opened and its symbols read on first
 * symbol lookup, then kept: look it up once per mapping, not per
 * sample.
 */
struct dso *symbols_dso(struct symbols *syms, const char *path);

/* The object name shown for @dso: the path's basename, "[vdso]". */
const char *dso_name(const struct dso *dso);
size_t symbols_build_id(const char *path, unsigned char *id, size_t max);

/*
 * The function containing @ip, mapped from file offset @pgoff at
 * @start, or SYM_UNKNOWN.
 */
const char *dso_symbol(struct dso *dso, uint64_t ip, uint64_t start,
		       uint64_t pgoff);

#endif /* PFMON_SYMBOLS_H */
