// SPDX-License-Identifier: GPL-2.0
/*
 * Symbol resolution for "pfmon report".
 *
 * Kernel IPs: the text symbols of kallsyms, sorted; an IP belongs to
 * the greatest symbol at or below it.  User IPs: the function symbols
 * of the mapped ELF file, read once per file through libelf; the IP is
 * turned into a file offset through its mapping, then into a virtual
 * address of the file through the PT_LOAD segment holding that offset,
 * which is how a PIE or a shared library loaded anywhere resolves.  A
 * stripped file's full symbol table comes from its separate debug file
 * when one is installed (found by build id), else its .dynsym serves.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pfmon.h"
#include "symbols.h"

/*
 * How many symbols below the nearest one a lookup examines for a sized
 * symbol containing the address: labels and size-less aliases may sit
 * inside a function.
 */
#define LOOKBACK	16

/* Separate debug files, by build id (.build-id/xx/yyyy.debug). */
#define DEBUG_DIR	"/usr/lib/debug/.build-id"

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module;	/* "[module]", NULL for the kernel proper */
	bool global;		/* T or W, not t or w */
};

struct ksyms {
	bool loaded;
	bool hidden;		/* every address read as 0 */
	bool noted;		/* the user was told why symbols are missing */
	int err;		/* errno of reading the file, 0 if it was read */
	uint64_t low;		/* lowest text address */
	struct ksym *syms;
	size_t nr;
	char *text;		/* the file; names and modules point into it */
};

/* A PT_LOAD segment: file offsets [offset, offset + filesz) at vaddr. */
struct load {
	uint64_t offset;
	uint64_t filesz;
	uint64_t vaddr;
};

struct esym {
	uint64_t addr;
	uint64_t end;		/* first address past the symbol */
	uint64_t size;		/* st_size, 0 when the symbol has none */
	const char *name;
	bool func;		/* FUNC or IFUNC, not a label */
	int bind;		/* global 2, weak 1, local 0 */
};

struct dso {
	struct dso *next;
	char *path;
	const char *name;
	bool loaded;
	struct load *loads;
	size_t nr_loads;
	struct esym *syms;
	size_t nr_syms;
	char *names;		/* the symbols' names, copied from the file */
};

struct symbols {
	char *kallsyms;
	struct ksyms k;
	/*
	 * A list: the report asks once per mapping, not per sample, and
	 * a recording holds at most a few hundred files.
	 */
	struct dso *dsos;
};

static void *xzalloc(size_t size)
{
	return memset(pfmon_xrealloc(NULL, 1, size), 0, size);
}

static char *xstrdup(const char *s)
{
	return strcpy(pfmon_xrealloc(NULL, strlen(s) + 1, 1), s);
}

/* Grow *array of *cap elements of @size so that it holds @nr + 1. */
static void *grow(void *array, size_t *cap, size_t nr, size_t size)
{
	if (nr < *cap)
		return array;
	*cap = *cap ? *cap * 2 : 64;
	return pfmon_xrealloc(array, *cap, size);
}

struct symbols *symbols_new(const char *kallsyms)
{
	struct symbols *syms;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		pfmon_err("libelf: %s", elf_errmsg(-1));
		return NULL;
	}
	syms = xzalloc(sizeof(*syms));
	syms->kallsyms = xstrdup(kallsyms ? kallsyms : "/proc/kallsyms");
	return syms;
}

static void dso_free(struct dso *dso)
{
	free(dso->path);
	free(dso->loads);
	free(dso->syms);
	free(dso->names);
	free(dso);
}

void symbols_free(struct symbols *syms)
{
	struct dso *dso, *next;

	if (!syms)
		return;
	for (dso = syms->dsos; dso; dso = next) {
		next = dso->next;
		dso_free(dso);
	}
	free(syms->k.syms);
	free(syms->k.text);
	free(syms->kallsyms);
	free(syms);
}

/* The whole of @path, NUL-terminated; /proc files have no size. */
static char *slurp(const char *path, int *err)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 1 << 20;
			buf = pfmon_xrealloc(buf, cap, 1);
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	if (n < 0) {
		*err = errno;
		free(buf);
		buf = NULL;
	} else {
		buf[len] = '\0';
	}
	close(fd);
	return buf;
}

static bool is_text_type(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/*
 * Split "ADDR TYPE NAME[\t[MODULE]]" in place.  Returns false for a line
 * that is not a text symbol.
 */
static bool ksym_parse(char *line, struct ksym *ks)
{
	char *p = line, *end;

	if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
	      (*p >= 'A' && *p <= 'F')))
		return false;
	errno = 0;
	ks->addr = strtoull(p, &end, 16);
	if (errno || *end != ' ' || !is_text_type(end[1]) || end[2] != ' ')
		return false;
	ks->global = end[1] == 'T' || end[1] == 'W';
	p = end + 3;
	ks->name = p;
	p += strcspn(p, " \t");
	if (*p)
		*p++ = '\0';
	if (!*ks->name || *ks->name == '$')
		return false;
	ks->module = NULL;
	p += strspn(p, " \t");
	if (*p == '[') {
		end = strchr(p, ']');
		if (end && end > p + 1) {
			end[1] = '\0';
			ks->module = p;
		}
	}
	return true;
}

uint64_t symbols_kernel_text(const char *kallsyms)
{
	uint64_t text = 0, stext = 0;
	char line[512];
	struct ksym ks;
	FILE *f = fopen(kallsyms ? kallsyms : "/proc/kallsyms", "re");

	if (!f)
		return 0;
	/* Near the top: read up to it, not the whole list. */
	while (!text && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!ksym_parse(line, &ks))
			continue;
		if (!strcmp(ks.name, "_text"))
			text = ks.addr;
		else if (!strcmp(ks.name, "_stext"))
			stext = ks.addr;
	}
	fclose(f);
	return text ? text : stext;
}

static size_t underscores(const char *name)
{
	return strspn(name, "_");
}

/*
 * By address; at one address the alias to show first: "startup_64" over
 * "_text", global over local.
 */
static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	size_t ux, uy;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	ux = underscores(x->name);
	uy = underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	if (x->global != y->global)
		return x->global ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void ksyms_parse(struct ksyms *k)
{
	const char *last_module = NULL;
	size_t cap = 0, i, nr;
	char *line, *next;
	uint64_t high = 0;
	struct ksym ks;

	for (line = k->text; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (!ksym_parse(line, &ks))
			continue;
		/* Share one string per module: lines come by module. */
		if (ks.module && last_module && !strcmp(ks.module, last_module))
			ks.module = last_module;
		else if (ks.module)
			last_module = ks.module;
		k->syms = grow(k->syms, &cap, k->nr, sizeof(*k->syms));
		k->syms[k->nr++] = ks;
		if (ks.addr > high)
			high = ks.addr;
	}
	if (!k->nr)
		return;
	/* kptr_restrict: an unprivileged reader sees every address as 0. */
	if (!high) {
		k->hidden = true;
		return;
	}
	qsort(k->syms, k->nr, sizeof(*k->syms), ksym_cmp);
	for (i = 1, nr = 1; i < k->nr; i++)
		if (k->syms[i].addr != k->syms[nr - 1].addr)
			k->syms[nr++] = k->syms[i];
	k->nr = nr;
	/* Some kernels list a few symbols at 0 even to root. */
	for (i = 0; i < k->nr && !k->syms[i].addr; i++)
		;
	k->low = i < k->nr ? k->syms[i].addr : 0;
}

static void ksyms_load(struct symbols *syms)
{
	struct ksyms *k = &syms->k;

	if (k->loaded)
		return;
	k->loaded = true;
	k->text = slurp(syms->kallsyms, &k->err);
	if (k->text)
		ksyms_parse(k);
}

bool symbols_is_kernel(struct symbols *syms, uint64_t ip)
{
	struct ksyms *k = &syms->k;

	/* No user space reaches the upper half of a 64-bit space. */
	if (ip >> 63)
		return true;
	ksyms_load(syms);
	return k->low && ip >= k->low;
}

/* Tell once why kernel samples have no symbols. */
static void ksyms_note(struct symbols *syms)
{
	struct ksyms *k = &syms->k;

	if (k->noted)
		return;
	k->noted = true;
	if (k->err)
		pfmon_warn("cannot read %s: %s: kernel samples have no symbols",
			   syms->kallsyms, strerror(k->err));
	else if (k->hidden)
		pfmon_warn("%s hides kernel addresses: kernel symbols need root or kernel.kptr_restrict=0",
			   syms->kallsyms);
	else
		pfmon_warn("%s lists no kernel text symbols", syms->kallsyms);
}

void symbols_kernel(struct symbols *syms, uint64_t ip,
		    const char **obj, const char **sym)
{
	struct ksyms *k = &syms->k;
	size_t lo = 0, hi, mid;

	*obj = OBJ_KERNEL;
	*sym = SYM_UNKNOWN;
	ksyms_load(syms);
	if (k->err || k->hidden || !k->nr) {
		if (k->hidden)
			*sym = SYM_HIDDEN;
		ksyms_note(syms);
		return;
	}
	/* lo: how many symbols start at or below ip. */
	hi = k->nr;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || !k->syms[lo - 1].addr)
		return;
	*sym = k->syms[lo - 1].name;
	if (k->syms[lo - 1].module)
		*obj = k->syms[lo - 1].module;
}

struct dso *symbols_dso(struct symbols *syms, const char *path)
{
	struct dso *dso;
	const char *slash;

	for (dso = syms->dsos; dso; dso = dso->next)
		if (!strcmp(dso->path, path))
			return dso;
	dso = xzalloc(sizeof(*dso));
	dso->path = xstrdup(path);
	slash = strrchr(dso->path, '/');
	if (!*dso->path)
		dso->name = "[anon]";
	else if (*dso->path == '[' || !slash || !slash[1])
		dso->name = dso->path;
	else
		dso->name = slash + 1;
	dso->next = syms->dsos;
	syms->dsos = dso;
	return dso;
}

const char *dso_name(const struct dso *dso)
{
	return dso->name;
}

static bool dso_read_loads(struct dso *dso, Elf *elf)
{
	size_t i, n, cap = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		dso->loads = grow(dso->loads, &cap, dso->nr_loads,
				  sizeof(*dso->loads));
		dso->loads[dso->nr_loads].offset = ph.p_offset;
		dso->loads[dso->nr_loads].filesz = ph.p_filesz;
		dso->loads[dso->nr_loads].vaddr = ph.p_vaddr;
		dso->nr_loads++;
	}
	return dso->nr_loads;
}

static int esym_bind(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 2;
	case STB_WEAK:
		return 1;
	default:
		return 0;
	}
}

/*
 * The functions of symbol table @scn, names still in libelf's memory.
 * Labels (NOTYPE) count only in executable sections, as on hand-written
 * assembly; "$x"-style mapping symbols and ".L" locals never do.
 */
static void dso_collect(struct dso *dso, Elf *elf, Elf_Scn *scn,
			size_t *cap)
{
	GElf_Shdr sh, ssh;
	Elf_Data *data;
	GElf_Ehdr eh;
	GElf_Sym sym;
	const char *name;
	struct esym *es;
	Elf_Scn *sec;
	int type;
	size_t i;

	if (!gelf_getshdr(scn, &sh) || !gelf_getehdr(elf, &eh))
		return;
	data = elf_getdata(scn, NULL);
	if (!data)
		return;
	for (i = 0; gelf_getsym(data, i, &sym); i++) {
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    type != STT_NOTYPE)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		sec = elf_getscn(elf, sym.st_shndx);
		if (!sec || !gelf_getshdr(sec, &ssh) ||
		    !(ssh.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name || *name == '$' || !strncmp(name, ".L", 2))
			continue;
		dso->syms = grow(dso->syms, cap, dso->nr_syms,
				 sizeof(*dso->syms));
		es = &dso->syms[dso->nr_syms++];
		es->addr = sym.st_value;
		/* Thumb functions have bit 0 set in their address. */
		if (eh.e_machine == EM_ARM)
			es->addr &= ~1ULL;
		es->size = sym.st_size;
		/* Until sorted, end is that of the symbol's section. */
		es->end = ssh.sh_addr + ssh.sh_size;
		es->name = name;
		es->func = type != STT_NOTYPE;
		es->bind = esym_bind(&sym);
	}
}

/* glibc's internal aliases: "__GI_memcpy" is memcpy. */
static bool internal_alias(const char *name)
{
	return !strncmp(name, "__GI_", 5);
}

/*
 * By address; at one address the alias to show first: a function over a
 * label, "getpid" over "__getpid" and "__GI___getpid", global over weak
 * over local, the shorter name.
 */
static int esym_cmp(const void *a, const void *b)
{
	const struct esym *x = a, *y = b;
	size_t ux, uy;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->func != y->func)
		return x->func ? -1 : 1;
	if (internal_alias(x->name) != internal_alias(y->name))
		return internal_alias(x->name) ? 1 : -1;
	ux = underscores(x->name);
	uy = underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	if (x->bind != y->bind)
		return y->bind - x->bind;
	ux = strlen(x->name);
	uy = strlen(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* A name without its symbol version: "memcpy@GLIBC_2.2.5" is memcpy. */
static size_t name_len(const char *name)
{
	size_t n = strcspn(name, "@");

	return n ? n : strlen(name);
}

/*
 * Sort, keep one symbol per address, bound each symbol and copy the
 * names out of libelf's memory, which goes with the file.
 */
static void dso_finish(struct dso *dso)
{
	size_t i, nr, len = 0, n;
	struct esym *es;
	uint64_t end;
	char *p;

	if (!dso->nr_syms)
		return;
	qsort(dso->syms, dso->nr_syms, sizeof(*dso->syms), esym_cmp);
	for (i = 1, nr = 1; i < dso->nr_syms; i++)
		if (dso->syms[i].addr != dso->syms[nr - 1].addr)
			dso->syms[nr++] = dso->syms[i];
	dso->nr_syms = nr;
	for (i = 0; i < nr; i++) {
		es = &dso->syms[i];
		if (es->size) {
			end = es->addr + es->size;
			es->end = end < es->addr ? UINT64_MAX : end;
		} else if (i + 1 < nr && dso->syms[i + 1].addr < es->end) {
			/* A label lasts until the next symbol. */
			es->end = dso->syms[i + 1].addr;
		}
		len += name_len(es->name) + 1;
	}
	dso->names = pfmon_xrealloc(NULL, len, 1);
	for (i = 0, p = dso->names; i < nr; i++) {
		n = name_len(dso->syms[i].name);
		memcpy(p, dso->syms[i].name, n);
		p[n] = '\0';
		dso->syms[i].name = p;
		p += n + 1;
	}
}

static Elf_Scn *find_scn(Elf *elf, uint32_t type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	return NULL;
}

/* The GNU build id of @elf into @id (@max bytes): its length, or 0. */
static size_t elf_build_id(Elf *elf, unsigned char *id, size_t max)
{
	size_t off, next, name_off, desc_off;
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Nhdr nh;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		for (off = 0; data; off = next) {
			next = gelf_getnote(data, off, &nh, &name_off, &desc_off);
			if (!next)
				break;
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)data->d_buf + name_off, "GNU", 4) ||
			    nh.n_descsz < 2 || nh.n_descsz > max)
				continue;
			memcpy(id, (const char *)data->d_buf + desc_off,
			       nh.n_descsz);
			return nh.n_descsz;
		}
	}
	return 0;
}

/*
 * The file's build id as a path under DEBUG_DIR: where Debian's -dbg and
 * -dbgsym packages put the symbols stripped from it.
 */
static bool debug_path(Elf *elf, char *path, size_t len)
{
	unsigned char id[64];
	size_t i, n, nr = elf_build_id(elf, id, sizeof(id));

	if (!nr)
		return false;
	n = snprintf(path, len, "%s/%02x/", DEBUG_DIR, id[0]);
	for (i = 1; i < nr && n + 3 < len; i++)
		n += snprintf(path + n, len - n, "%02x", id[i]);
	snprintf(path + n, len - n, ".debug");
	return true;
}

/**
 * symbols_build_id() - the GNU build id of an ELF file
 * @path: the file
 * @id: where to put it
 * @max: bytes of @id
 *
 * Return: its length in bytes, or 0 when the file cannot be read, is not
 * ELF or has no build id of at most @max bytes.
 */
size_t symbols_build_id(const char *path, unsigned char *id, size_t max)
{
	size_t nr = 0;
	Elf *elf;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		nr = elf_build_id(elf, id, max);
	if (elf)
		elf_end(elf);
	close(fd);
	return nr;
}

/* The separate debug file of @elf, if installed; *fd to close. */
static Elf *debug_open(Elf *elf, int *fd)
{
	char path[sizeof(DEBUG_DIR) + 160];
	Elf *dbg;

	*fd = -1;
	if (!debug_path(elf, path, sizeof(path)))
		return NULL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	dbg = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (dbg && elf_kind(dbg) != ELF_K_ELF) {
		elf_end(dbg);
		dbg = NULL;
	}
	if (dbg && pfmon_verbose > 1)
		pfmon_warn("symbols from %s", path);
	return dbg;
}

/*
 * .symtab; for a stripped file, that of its debug file, else .dynsym.
 * The debug file has the same addresses, and its own sections, which
 * its symbols refer to.
 */
static void dso_read_syms(struct dso *dso, Elf *elf)
{
	Elf_Scn *scn = find_scn(elf, SHT_SYMTAB);
	Elf *dbg = NULL;
	size_t cap = 0;
	int fd = -1;

	if (scn) {
		dso_collect(dso, elf, scn, &cap);
	} else {
		dbg = debug_open(elf, &fd);
		scn = dbg ? find_scn(dbg, SHT_SYMTAB) : NULL;
		if (scn)
			dso_collect(dso, dbg, scn, &cap);
	}
	scn = dso->nr_syms ? NULL : find_scn(elf, SHT_DYNSYM);
	if (scn)
		dso_collect(dso, elf, scn, &cap);
	/* Copies the names out before their file goes. */
	dso_finish(dso);
	elf_end(dbg);
	if (fd >= 0)
		close(fd);
}

static void dso_load(struct dso *dso)
{
	Elf *elf;
	int fd;

	dso->loaded = true;
	/* "[vdso]", "[anon]" and such are no files. */
	if (*dso->path != '/')
		return;
	fd = open(dso->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (pfmon_verbose)
			pfmon_warn("%s: %s", dso->path, strerror(errno));
		return;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && dso_read_loads(dso, elf))
		dso_read_syms(dso, elf);
	else if (pfmon_verbose)
		pfmon_warn("%s: not an ELF file with segments", dso->path);
	if (pfmon_verbose && dso->nr_loads && !dso->nr_syms)
		pfmon_warn("%s: no symbols", dso->path);
	elf_end(elf);
	close(fd);
}

/* The symbol containing @vaddr: a sized one first, else a label. */
static const char *dso_find(const struct dso *dso, uint64_t vaddr)
{
	const char *label = NULL;
	size_t lo = 0, hi = dso->nr_syms, mid, i;
	const struct esym *es;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (dso->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i > 0 && lo - i < LOOKBACK; i--) {
		es = &dso->syms[i - 1];
		if (vaddr >= es->end)
			continue;
		if (es->size)
			return es->name;
		if (!label)
			label = es->name;
	}
	return label ? label : SYM_UNKNOWN;
}

const char *dso_symbol(struct dso *dso, uint64_t ip, uint64_t start,
		       uint64_t pgoff)
{
	const struct load *l;
	uint64_t off;
	size_t i;

	if (!dso->loaded)
		dso_load(dso);
	off = ip - start + pgoff;
	for (i = 0; i < dso->nr_loads; i++) {
		l = &dso->loads[i];
		if (off >= l->offset && off - l->offset < l->filesz)
			return dso_find(dso, off - l->offset + l->vaddr);
	}
	return SYM_UNKNOWN;
}
