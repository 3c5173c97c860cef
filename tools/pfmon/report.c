// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon report: the top symbols of a recording, or its folded stacks.
 *
 * Samples, mappings and command names belong to the image of their pid
 * current where they appear in the file; an EXEC record starts a new one
 * (see pfmon_data.h).  A mapping may come after the samples that fall in
 * it (the recorder reads mappings again when a process exits), so the
 * samples are counted per (event, image, IP) as they are read and turned
 * into (command, object, symbol) at the end, each distinct IP once; the
 * table groups those by the sort key.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pfmon.h"
#include "pfmon_data.h"
#include "datafile.h"
#include "symbols.h"
#include "flame.h"
#include "callgraph.h"

#define DEFAULT_INPUT	"pfmon.data"
#define DEFAULT_TOP	20

/* Key fields, in order: a key uses the first 1, 2 or 3. */
enum sort_key {
	SORT_COMM = 1,
	SORT_DSO,
	SORT_SYM,
};

struct options {
	const char *input;
	const char *kallsyms;
	const char *event;
	unsigned long top;
	bool top_set;
	enum sort_key sort;
	bool folded;
	bool callgraph;
	const char *flame;
};

/* The number of a map that no later map replaced. */
#define NOT_REPLACED	UINT32_MAX

/**
 * struct map - a mapping of an image
 * @replaced_by: number of the first later map of the image overlapping
 *               it, or NOT_REPLACED
 * @dso: its file, looked up at its first sample
 */
struct map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	const char *path;
	uint32_t replaced_by;
	struct dso *dso;
};

/**
 * struct image - what a process runs, from an exec to the next
 * @prev: the image before the last exec of the pid, or NULL
 * @comm: its command, NULL while no COMM record named it
 * @comm_main: @comm is the main thread's
 * @maps: every map of the image in file order; a map's number is its
 *        index, and a sample's epoch is how many came before it
 */
struct image {
	struct image *prev;
	uint32_t pid;
	bool comm_main;
	const char *comm;
	struct map *maps;
	uint32_t nr_maps;
	uint32_t cap_maps;
};

struct event {
	char name[sizeof(((struct pfmon_rec_event *)0)->name) + 1];
	uint64_t period;
	uint64_t samples;
	uint32_t freq;
	bool named;
};

/* A count of samples of one IP of an image, between two of its maps. */
struct entry {
	struct image *image;
	uint64_t ip;
	uint32_t event;
	uint32_t epoch;
	uint64_t count;		/* 0: a free slot */
};

/*
 * A count of samples with one call chain (record -g), of an image
 * between two of its maps: @ips innermost first, the first @nr_exact
 * of them IPs (the sample's kernel IP when shown, the user IP), the
 * rest return addresses.
 */
struct stack {
	struct image *image;
	uint32_t event;
	uint32_t epoch;
	uint32_t nr;
	uint32_t nr_exact;
	uint64_t *ips;
	uint64_t count;		/* 0: a free slot */
};

/* The last sample read, which a call chain record that follows is of. */
struct last_sample {
	bool valid;
	struct image *image;
	uint32_t event;
	uint32_t epoch;
	uint64_t ip;
};

struct row {
	const char *comm;
	const char *obj;
	const char *sym;
	uint64_t count;
};

/**
 * struct counts - a hash table of counted keys (open addressing, a
 *                 power of 2 slots of @esize bytes; a slot is free while
 *                 the count at @count_off in it is 0)
 * @slots: the slots
 * @nr: slots used
 * @cap: slots
 * @esize: bytes of a slot
 * @count_off: offset of the count in a slot
 * @min_cap: slots at the first insertion
 * @hash: hash of a key
 * @same: whether two keys are the same
 */
struct counts {
	void *slots;
	size_t nr, cap, esize, count_off, min_cap;
	uint64_t (*hash)(const void *key);
	bool (*same)(const void *a, const void *b);
};

struct report {
	struct options opt;
	struct pfmon_data data;
	struct pfmon_file_header hdr;
	struct event *events;
	struct symbols *syms;
	/* Hash tables, open addressing, a power of 2 slots each. */
	struct image **images;	/* current image by pid */
	size_t nr_images, cap_images;
	struct image *last_image;
	struct counts entries;	/* struct entry */
	struct counts stacks;	/* struct stack */
	struct last_sample last;
	char **strs;
	size_t nr_strs, cap_strs;
	uint64_t lost;
	uint64_t bad_event;	/* samples of an event id out of range */
	uint64_t hidden;	/* samples at a hidden kernel address */
	uint64_t bad_maps;
	uint64_t last_ns;	/* time of the latest sample */
};

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

static void strs_insert(char **strs, size_t cap, char *s)
{
	size_t i = hash_str(s) & (cap - 1);

	while (strs[i])
		i = (i + 1) & (cap - 1);
	strs[i] = s;
}

/* One copy of each string, so that keys compare as pointers. */
static const char *intern(struct report *rep, const char *s, size_t len)
{
	char *copy = pfmon_xrealloc(NULL, len + 1, 1), **old;
	size_t i, cap;

	memcpy(copy, s, len);
	copy[len] = '\0';
	pfmon_sanitize(copy);
	if (rep->cap_strs) {
		i = hash_str(copy) & (rep->cap_strs - 1);
		for (; rep->strs[i]; i = (i + 1) & (rep->cap_strs - 1)) {
			if (!strcmp(rep->strs[i], copy)) {
				free(copy);
				return rep->strs[i];
			}
		}
	}
	if (2 * (rep->nr_strs + 1) > rep->cap_strs) {
		old = rep->strs;
		cap = rep->cap_strs;
		rep->cap_strs = cap ? 2 * cap : 256;
		rep->strs = pfmon_xcalloc(rep->cap_strs, sizeof(*rep->strs));
		for (i = 0; i < cap; i++)
			if (old[i])
				strs_insert(rep->strs, rep->cap_strs, old[i]);
		free(old);
	}
	strs_insert(rep->strs, rep->cap_strs, copy);
	rep->nr_strs++;
	return copy;
}

static void images_insert(struct image **images, size_t cap,
			  struct image *img)
{
	size_t i = hash64(img->pid) & (cap - 1);

	while (images[i] && images[i]->pid != img->pid)
		i = (i + 1) & (cap - 1);
	images[i] = img;
}

static struct image *image_find(struct report *rep, uint32_t pid)
{
	size_t i;

	if (rep->last_image && rep->last_image->pid == pid)
		return rep->last_image;
	if (!rep->cap_images)
		return NULL;
	i = hash64(pid) & (rep->cap_images - 1);
	for (; rep->images[i]; i = (i + 1) & (rep->cap_images - 1)) {
		if (rep->images[i]->pid == pid) {
			rep->last_image = rep->images[i];
			return rep->last_image;
		}
	}
	return NULL;
}

/* A new image of @pid, after @prev, becomes its current one. */
static struct image *image_new(struct report *rep, uint32_t pid,
			       struct image *prev)
{
	struct image *img, **old;
	size_t i, cap;

	if (!prev && 2 * (rep->nr_images + 1) > rep->cap_images) {
		old = rep->images;
		cap = rep->cap_images;
		rep->cap_images = cap ? 2 * cap : 64;
		rep->images = pfmon_xcalloc(rep->cap_images, sizeof(*rep->images));
		for (i = 0; i < cap; i++)
			if (old[i])
				images_insert(rep->images, rep->cap_images,
					      old[i]);
		free(old);
	}
	img = pfmon_xcalloc(1, sizeof(*img));
	img->pid = pid;
	img->prev = prev;
	images_insert(rep->images, rep->cap_images, img);
	if (!prev)
		rep->nr_images++;
	rep->last_image = img;
	return img;
}

/* The current image of @pid: a pid first seen starts one. */
static struct image *image_get(struct report *rep, uint32_t pid)
{
	struct image *img = image_find(rep, pid);

	return img ? img : image_new(rep, pid, NULL);
}

/* A map replaces every earlier one of the image it overlaps. */
static void map_add(struct image *img, const struct map *m)
{
	struct map *old;
	uint32_t i;

	if (img->nr_maps == NOT_REPLACED)
		return;
	for (i = 0; i < img->nr_maps; i++) {
		old = &img->maps[i];
		if (old->replaced_by == NOT_REPLACED &&
		    old->start < m->end && m->start < old->end)
			old->replaced_by = img->nr_maps;
	}
	if (img->nr_maps == img->cap_maps) {
		img->cap_maps = img->cap_maps ? 2 * img->cap_maps : 16;
		img->maps = pfmon_xrealloc(img->maps, img->cap_maps,
				     sizeof(*img->maps));
	}
	img->maps[img->nr_maps] = *m;
	img->maps[img->nr_maps].replaced_by = NOT_REPLACED;
	img->nr_maps++;
}

/*
 * The map of a sample at @ip after the image's first @epoch maps: the
 * one current then, else the first that came later (read at exit).
 */
static struct map *map_find(struct image *img, uint32_t epoch, uint64_t ip)
{
	struct map *m;
	uint32_t i;

	for (i = 0; i < img->nr_maps; i++) {
		m = &img->maps[i];
		if (ip < m->start || ip >= m->end)
			continue;
		if (i >= epoch || m->replaced_by >= epoch)
			return m;
	}
	return NULL;
}

static uint64_t *counts_count(const struct counts *t, void *slot)
{
	return (uint64_t *)((char *)slot + t->count_off);
}

static void *counts_at(const struct counts *t, size_t i)
{
	return (char *)t->slots + i * t->esize;
}

static void *counts_slot(const struct counts *t, const void *key)
{
	size_t i = t->hash(key) & (t->cap - 1);

	while (*counts_count(t, counts_at(t, i)) &&
	       !t->same(counts_at(t, i), key))
		i = (i + 1) & (t->cap - 1);
	return counts_at(t, i);
}

static void counts_grow(struct counts *t)
{
	struct counts old = *t;
	size_t i;

	t->cap = old.cap ? 2 * old.cap : t->min_cap;
	t->slots = pfmon_xcalloc(t->cap, t->esize);
	for (i = 0; i < old.cap; i++)
		if (*counts_count(&old, counts_at(&old, i)))
			memcpy(counts_slot(t, counts_at(&old, i)),
			       counts_at(&old, i), t->esize);
	free(old.slots);
}

/* Count one more of @key; its slot, *@fresh when @key was new there. */
static void *counts_add(struct counts *t, const void *key, bool *fresh)
{
	void *slot;

	if (2 * (t->nr + 1) > t->cap)
		counts_grow(t);
	slot = counts_slot(t, key);
	*fresh = !*counts_count(t, slot);
	if (*fresh) {
		memcpy(slot, key, t->esize);
		t->nr++;
	}
	++*counts_count(t, slot);
	return slot;
}

static uint64_t entry_hash(const void *key)
{
	const struct entry *e = key;
	uint64_t h = hash64(((uint64_t)e->event << 32) | e->epoch);

	h = hash64(h ^ (uintptr_t)e->image);
	return hash64(h ^ e->ip);
}

static bool entry_same(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;

	return a->image == b->image && a->ip == b->ip &&
	       a->event == b->event && a->epoch == b->epoch;
}

static void entry_count(struct report *rep, const struct entry *key)
{
	bool fresh;

	counts_add(&rep->entries, key, &fresh);
}

/* Object and symbol of @ip in @img, with the maps before @epoch. */
static void resolve_ip(struct report *rep, struct image *img, uint32_t epoch,
		       uint64_t ip, const char **obj, const char **sym)
{
	struct map *m = map_find(img, epoch, ip);

	*obj = SYM_UNKNOWN;
	*sym = SYM_UNKNOWN;
	if (!ip) {
		if (rep->hdr.flags & PFMON_F_KERNEL_HIDDEN) {
			*obj = OBJ_KERNEL;
			*sym = SYM_HIDDEN;
		}
	} else if (m) {
		if (!m->dso)
			m->dso = symbols_dso(rep->syms, m->path);
		*obj = dso_name(m->dso);
		*sym = dso_symbol(m->dso, ip, m->start, m->pgoff);
	} else if (symbols_is_kernel(rep->syms, ip)) {
		symbols_kernel(rep->syms, ip, obj, sym);
	}
}

/* Object and symbol of the samples of @e. */
static void resolve(struct report *rep, const struct entry *e,
		    const char **obj, const char **sym)
{
	resolve_ip(rep, e->image, e->epoch, e->ip, obj, sym);
}

static uint64_t stack_hash(const void *key)
{
	const struct stack *s = key;
	uint64_t h = hash64(((uint64_t)s->event << 32) | s->epoch);
	uint32_t i;

	h = hash64(h ^ (uintptr_t)s->image);
	h = hash64(h ^ s->nr_exact);
	for (i = 0; i < s->nr; i++)
		h = hash64(h ^ s->ips[i]);
	return h;
}

static bool stack_same(const void *x, const void *y)
{
	const struct stack *a = x, *b = y;

	return a->image == b->image && a->event == b->event &&
	       a->epoch == b->epoch && a->nr == b->nr &&
	       a->nr_exact == b->nr_exact &&
	       !memcmp(a->ips, b->ips, a->nr * sizeof(*a->ips));
}

/* A new stack keeps a copy of the frames: @key's are on the stack. */
static void stack_count(struct report *rep, const struct stack *key)
{
	struct stack *s;
	bool fresh;

	s = counts_add(&rep->stacks, key, &fresh);
	if (fresh) {
		s->ips = pfmon_xcalloc(key->nr, sizeof(*key->ips));
		memcpy(s->ips, key->ips, key->nr * sizeof(*key->ips));
	}
}

/*
 * The call chain of the last sample: its user IP and return addresses,
 * after the sample's own IP when that is a kernel address shown, or
 * after the kernel chain when the recorder had it (which begins with
 * that IP; the user IP after it is where a system call returns to,
 * looked up as the return address it is).
 */
static void rec_callchain(struct report *rep,
			  const struct pfmon_rec_callchain *c,
			  const unsigned char *ips, size_t len)
{
	uint64_t frames[PFMON_MAX_CHAIN + 1];
	struct stack key = { .ips = frames };
	uint32_t nr = c->nr;

	if (!rep->last.valid || nr > PFMON_MAX_CHAIN || len < nr * 8)
		return;
	memcpy(frames + 1, ips, nr * sizeof(uint64_t));
	key.ips = frames + 1;
	key.nr_exact = nr ? 1 : 0;
	if (c->nr_kernel && c->nr_kernel <= nr)
		;	/* the kernel chain first: only its IP is exact */
	else if (rep->last.ip && (!nr || frames[1] != rep->last.ip)) {
		frames[0] = rep->last.ip;
		key.ips = frames;
		nr++;
		key.nr_exact++;
	}
	if (!nr) {		/* no user state, a hidden kernel IP */
		frames[0] = 0;
		key.ips = frames;
		nr = key.nr_exact = 1;
	}
	key.nr = nr;
	key.image = rep->last.image;
	key.event = rep->last.event;
	key.epoch = rep->last.epoch;
	stack_count(rep, &key);
}

static void rec_sample(struct report *rep, const struct pfmon_rec_sample *s)
{
	struct entry key = { .event = s->event, .ip = s->ip };

	if (s->event >= rep->hdr.nr_events) {
		rep->bad_event++;
		return;
	}
	key.image = image_get(rep, s->pid);
	key.epoch = key.image->nr_maps;
	entry_count(rep, &key);
	rep->last = (struct last_sample){ true, key.image, key.event,
					  key.epoch, key.ip };
	rep->events[s->event].samples++;
	if (!s->ip && (rep->hdr.flags & PFMON_F_KERNEL_HIDDEN))
		rep->hidden++;
	if (s->time_ns > rep->last_ns)
		rep->last_ns = s->time_ns;
}

static void rec_event(struct report *rep, const struct pfmon_rec_event *e)
{
	struct event *ev;

	if (e->id >= rep->hdr.nr_events) {
		pfmon_warn("%s: event id %u beyond the header's %u events: ignored",
			   rep->opt.input, e->id, rep->hdr.nr_events);
		return;
	}
	ev = &rep->events[e->id];
	memcpy(ev->name, e->name, sizeof(e->name));
	ev->name[sizeof(e->name)] = '\0';
	pfmon_sanitize(ev->name);
	ev->period = e->period;
	ev->freq = e->freq;
	ev->named = true;
}

/* The main thread names its image; another thread only until then. */
static void rec_comm(struct report *rep, const struct pfmon_rec_comm *c)
{
	struct image *img = image_get(rep, c->pid);
	bool main_thread = c->pid == c->tid;

	if (img->comm_main && !main_thread)
		return;
	img->comm = intern(rep, c->comm, strnlen(c->comm, sizeof(c->comm)));
	img->comm_main = main_thread;
}

static void rec_mmap(struct report *rep, const struct pfmon_rec_mmap *m,
		     const char *path, size_t path_len)
{
	struct map map = {
		.start = m->start,
		.end = m->end,
		.pgoff = m->pgoff,
	};

	if (m->start >= m->end) {
		rep->bad_maps++;
		return;
	}
	map.path = intern(rep, path, strnlen(path, path_len));
	map_add(image_get(rep, m->pid), &map);
}

/* The samples, names and maps of @pid that follow are a new image's. */
static void rec_exec(struct report *rep, const struct pfmon_rec_exec *x)
{
	image_new(rep, x->pid, image_find(rep, x->pid));
}

/* pfmon_data_walk()'s callback: one record (see pfmon_rec_fn). */
static bool rec_handle(void *arg, const unsigned char *data,
		       const struct pfmon_rec *rec)
{
	struct report *rep = arg;
	union {
		struct pfmon_rec_event event;
		struct pfmon_rec_sample sample;
		struct pfmon_rec_comm comm;
		struct pfmon_rec_mmap mmap;
		struct pfmon_rec_lost lost;
		struct pfmon_rec_exec exec;
		struct pfmon_rec_callchain chain;
	} r;
	size_t min = pfmon_rec_min_size(rec->type);

	if (rec->type != PFMON_REC_SAMPLE && rec->type != PFMON_REC_CALLCHAIN)
		rep->last.valid = false;
	if (!min)
		return true;	/* a newer recorder's: skipped */
	if (rec->size < min)
		return false;
	memcpy(&r, data, min);
	switch (rec->type) {
	case PFMON_REC_EVENT:
		rec_event(rep, &r.event);
		break;
	case PFMON_REC_SAMPLE:
		rec_sample(rep, &r.sample);
		break;
	case PFMON_REC_COMM:
		rec_comm(rep, &r.comm);
		break;
	case PFMON_REC_MMAP:
		rec_mmap(rep, &r.mmap, (const char *)data + min,
			 rec->size - min);
		break;
	case PFMON_REC_LOST:
		rep->lost += r.lost.lost;
		break;
	case PFMON_REC_EXEC:
		rec_exec(rep, &r.exec);
		break;
	case PFMON_REC_CALLCHAIN:
		if (r.chain.nr > PFMON_MAX_CHAIN ||
		    rec->size < min + r.chain.nr * sizeof(uint64_t))
			return false;
		rec_callchain(rep, &r.chain, data + min, rec->size - min);
		rep->last.valid = false;
		break;
	}
	return true;
}

static int strcmp0(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a || !b)
		return a ? 1 : -1;
	return strcmp(a, b);
}

static int row_key_cmp(const struct row *a, const struct row *b)
{
	int c = strcmp0(a->comm, b->comm);

	if (!c)
		c = strcmp0(a->obj, b->obj);
	if (!c)
		c = strcmp0(a->sym, b->sym);
	return c;
}

static int row_key_qcmp(const void *a, const void *b)
{
	return row_key_cmp(a, b);
}

static int row_count_qcmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return row_key_cmp(x, y);
}

/*
 * The command of an image; for one no COMM record named, that of
 * another image of its pid, the latest.
 */
static const char *image_comm(struct report *rep, struct image *img)
{
	struct image *other;
	char buf[16];

	if (img->comm)
		return img->comm;
	for (other = image_find(rep, img->pid); other; other = other->prev)
		if (other->comm)
			return other->comm;
	if (!img->pid)
		return "swapper";
	snprintf(buf, sizeof(buf), ":%u", img->pid);
	return intern(rep, buf, strlen(buf));
}

/* The rows of @event grouped by the sort key, most samples first. */
static size_t event_rows(struct report *rep, uint32_t event,
			 struct row **rowsp)
{
	struct row *rows = pfmon_xcalloc(rep->entries.nr + 1, sizeof(*rows));
	enum sort_key sort = rep->opt.sort;
	const struct entry *e;
	size_t i, nr = 0, out;

	for (i = 0; i < rep->entries.cap; i++) {
		e = counts_at(&rep->entries, i);
		if (!e->count || e->event != event)
			continue;
		rows[nr].comm = image_comm(rep, e->image);
		resolve(rep, e, &rows[nr].obj, &rows[nr].sym);
		if (sort < SORT_DSO)
			rows[nr].obj = NULL;
		if (sort < SORT_SYM)
			rows[nr].sym = NULL;
		rows[nr].count = e->count;
		nr++;
	}
	qsort(rows, nr, sizeof(*rows), row_key_qcmp);
	for (i = 1, out = nr ? 1 : 0; i < nr; i++) {
		if (row_key_cmp(&rows[i], &rows[out - 1]))
			rows[out++] = rows[i];
		else
			rows[out - 1].count += rows[i].count;
	}
	qsort(rows, out, sizeof(*rows), row_count_qcmp);
	*rowsp = rows;
	return out;
}

static size_t shown_rows(const struct report *rep, size_t nr)
{
	if (rep->opt.top && rep->opt.top < nr)
		return rep->opt.top;
	return nr;
}

static int column_width(const struct row *rows, size_t nr, size_t field,
			int min, int max)
{
	const char *s;
	int w = min, len;
	size_t i;

	for (i = 0; i < nr; i++) {
		s = field == 0 ? rows[i].comm : rows[i].obj;
		len = strlen(s);
		if (len > w)
			w = len < max ? len : max;
	}
	return w;
}

static void print_rows(const struct report *rep, const struct row *rows,
		       size_t nr, uint64_t total)
{
	size_t i, shown = shown_rows(rep, nr);
	int wc, wo, ws = 7, len;
	uint64_t rest = 0;
	char num[24];

	wc = column_width(rows, shown, 0, 16, 32);
	wo = rep->opt.sort >= SORT_DSO ?
	     column_width(rows, shown, 1, 21, 48) : 0;
	if (shown) {
		len = snprintf(num, sizeof(num), "%" PRIu64, rows[0].count);
		if (len > ws)
			ws = len;
	}
	printf("# Overhead  %*s  ", ws, "Samples");
	if (rep->opt.sort == SORT_COMM)
		printf("Command\n");
	else if (rep->opt.sort == SORT_DSO)
		printf("%-*s Object\n", wc, "Command");
	else
		printf("%-*s %-*s Symbol\n", wc, "Command", wo, "Object");
	for (i = 0; i < shown; i++) {
		printf("%9.2f%%  %*" PRIu64 "  ",
		       100.0 * rows[i].count / total, ws, rows[i].count);
		if (rep->opt.sort == SORT_COMM)
			printf("%s\n", rows[i].comm);
		else if (rep->opt.sort == SORT_DSO)
			printf("%-*s %s\n", wc, rows[i].comm, rows[i].obj);
		else
			printf("%-*s %-*s %s\n", wc, rows[i].comm,
			       wo, rows[i].obj, rows[i].sym);
	}
	for (i = shown; i < nr; i++)
		rest += rows[i].count;
	if (shown < nr)
		printf("# %zu more lines, %.2f%% of the samples (-n 0 shows all)\n",
		       nr - shown, 100.0 * rest / total);
}

static void print_event(struct report *rep, uint32_t id)
{
	struct row *rows;
	size_t nr;

	nr = event_rows(rep, id, &rows);
	if (nr)
		print_rows(rep, rows, nr, rep->events[id].samples);
	else
		printf("# no samples\n");
	free(rows);
}

static const char *event_name(struct report *rep, uint32_t id,
			      char *buf, size_t len)
{
	struct event *ev = &rep->events[id];

	if (ev->named && ev->freq)
		snprintf(buf, len, "%s (-F %u)", ev->name, ev->freq);
	else if (ev->named && ev->period)
		snprintf(buf, len, "%s (period %" PRIu64 ")",
			 ev->name, ev->period);
	else if (ev->named)
		snprintf(buf, len, "%s", ev->name);
	else
		snprintf(buf, len, "event %u", id);
	return buf;
}

static void print_heading(struct report *rep, int64_t shown)
{
	const struct pfmon_file_header *h = &rep->hdr;
	uint64_t samples = 0, end = h->end_ns;
	char name[128];
	uint32_t i;

	for (i = 0; i < h->nr_events; i++)
		samples += rep->events[i].samples;
	printf("# pfmon report: ");
	if (h->command[0])
		printf("'%s', ", h->command);
	else if (h->flags & PFMON_F_SYSTEM_WIDE)
		printf("system-wide, ");
	if (shown >= 0)
		printf("%" PRIu64 " samples of %s", rep->events[shown].samples,
		       event_name(rep, shown, name, sizeof(name)));
	else
		printf("%" PRIu64 " samples of %u events", samples,
		       h->nr_events);
	printf(", %" PRIu64 " lost", rep->lost);
	/* A recorder that died left no end time: its last sample's. */
	if (!end)
		end = rep->last_ns;
	if (end > h->start_ns)
		printf(", %.2f s", (end - h->start_ns) / 1e9);
	if (!h->end_ns)
		printf(" (cut short)");
	printf("\n");
}

/* The id of --event: a name or a number; -1 for all events. */
static int64_t chosen_event(struct report *rep)
{
	const char *want = rep->opt.event;
	char *end;
	unsigned long id;
	uint32_t i;

	if (!want)
		return -1;
	for (i = 0; i < rep->hdr.nr_events; i++)
		if (rep->events[i].named && !strcmp(rep->events[i].name, want))
			return i;
	errno = 0;
	id = strtoul(want, &end, 10);
	if (!errno && *want && !*end && id < rep->hdr.nr_events)
		return id;
	pfmon_err("%s: no event '%s'; it recorded:", rep->opt.input, want);
	for (i = 0; i < rep->hdr.nr_events; i++)
		fprintf(stderr, "  %u %s\n", i,
			rep->events[i].named ? rep->events[i].name : "");
	return -2;
}

static void print_table(struct report *rep, int64_t only)
{
	char name[128];
	uint32_t i;

	if (!rep->hdr.nr_events) {
		print_heading(rep, -1);
		printf("# no samples\n");
	} else if (only >= 0 || rep->hdr.nr_events == 1) {
		if (only < 0)
			only = 0;
		print_heading(rep, only);
		if (rep->events[only].samples)
			printf("#\n");
		print_event(rep, only);
	} else {
		print_heading(rep, -1);
		for (i = 0; i < rep->hdr.nr_events; i++) {
			printf("%s#\n# event %s: %" PRIu64 " samples\n#\n",
			       i ? "\n" : "", event_name(rep, i, name,
							  sizeof(name)),
			       rep->events[i].samples);
			print_event(rep, i);
		}
	}
	if (rep->lost) {
		printf("# %" PRIu64 " samples lost ", rep->lost);
		puts("(the buffer was full; use a bigger -m or a longer period)");
	}
}

/*
 * Append frame @s to @line (of @cap bytes, @len used), ';' as ':':
 * flamegraph.pl splits frames at ';', so none may hold one.
 */
static size_t line_add(char *line, size_t cap, size_t len, const char *s)
{
	for (; *s && len + 1 < cap; s++)
		line[len++] = *s == ';' ? ':' : *s;
	line[len] = '\0';
	return len;
}

/*
 * Stack @s as a folded line: its command, then its frames from the
 * outermost in.  A return address is looked up one byte back: a call
 * that ends its function returns to the next one.
 */
static const char *stack_line(struct report *rep, const struct stack *s)
{
	char line[PFMON_MAX_CHAIN * 64 + 64];
	const char *obj, *sym;
	size_t len = 0;
	uint32_t i;
	uint64_t ip;

	len = line_add(line, sizeof(line), len, image_comm(rep, s->image));
	for (i = s->nr; i--;) {
		ip = i < s->nr_exact ? s->ips[i] : s->ips[i] - 1;
		resolve_ip(rep, s->image, s->epoch, ip, &obj, &sym);
		if (len + 1 < sizeof(line))
			line[len++] = ';';
		len = line_add(line, sizeof(line), len,
			       strcmp(sym, SYM_UNKNOWN) ? sym : obj);
	}
	return intern(rep, line, len);
}

/* The folded call chains of @event, most samples first; 0 without. */
static size_t stack_rows(struct report *rep, uint32_t event,
			 struct row **rowsp)
{
	struct row *rows = pfmon_xcalloc(rep->stacks.nr + 1, sizeof(*rows));
	const struct stack *s;
	size_t i, nr = 0, out;

	for (i = 0; i < rep->stacks.cap; i++) {
		s = counts_at(&rep->stacks, i);
		if (!s->count || s->event != event)
			continue;
		rows[nr].comm = stack_line(rep, s);
		rows[nr++].count = s->count;
	}
	qsort(rows, nr, sizeof(*rows), row_key_qcmp);
	for (i = 1, out = nr ? 1 : 0; i < nr; i++) {
		if (row_key_cmp(&rows[i], &rows[out - 1]))
			rows[out++] = rows[i];
		else
			rows[out - 1].count += rows[i].count;
	}
	qsort(rows, out, sizeof(*rows), row_count_qcmp);
	*rowsp = rows;
	return out;
}

/* "comm;obj;sym" of a row of one frame, ';' in names as ':'. */
static const char *row_line(struct report *rep, const struct row *r)
{
	char line[1024];
	size_t len;

	len = line_add(line, sizeof(line), 0, r->comm);
	if (r->obj && len + 1 < sizeof(line)) {
		line[len++] = ';';
		len = line_add(line, sizeof(line), len, r->obj);
	}
	if (r->sym && len + 1 < sizeof(line)) {
		line[len++] = ';';
		len = line_add(line, sizeof(line), len, r->sym);
	}
	return intern(rep, line, len);
}

/*
 * The folded stacks of one event (--event, else the first) as rows
 * whose comm is the whole line: with call chains (record -g) whole
 * stacks, else "comm;obj;sym".  -1 without events.
 */
static ssize_t folded_rows(struct report *rep, int64_t only,
			   struct row **rowsp)
{
	char name[128];
	size_t i, nr;

	if (!rep->hdr.nr_events)
		return -1;
	if (only < 0) {
		only = 0;
		if (rep->hdr.nr_events > 1)
			pfmon_warn("%u events recorded: the stacks of %s (--event chooses)",
				   rep->hdr.nr_events,
				   event_name(rep, 0, name, sizeof(name)));
	}
	nr = stack_rows(rep, only, rowsp);
	if (nr)
		return nr;
	free(*rowsp);
	nr = event_rows(rep, only, rowsp);
	for (i = 0; i < nr; i++) {
		(*rowsp)[i].comm = row_line(rep, &(*rowsp)[i]);
		(*rowsp)[i].obj = NULL;
		(*rowsp)[i].sym = NULL;
	}
	return nr;
}

static void print_folded(struct report *rep, int64_t only)
{
	struct row *rows;
	ssize_t i, nr = folded_rows(rep, only, &rows);

	if (nr < 0)
		return;
	if (rep->opt.top_set)
		nr = shown_rows(rep, nr);
	for (i = 0; i < nr; i++)
		printf("%s %" PRIu64 "\n", rows[i].comm, rows[i].count);
	free(rows);
}

/*
 * -g: the call graph of one event's call chains (--event, else the
 * first): each function's total and self shares, its callers and its
 * callees.  Needs a recording made with record -g.
 */
static int print_callgraph(struct report *rep, int64_t only)
{
	const char **stacks;
	struct row *rows;
	uint64_t *counts;
	size_t i, nr;

	if (!rep->hdr.nr_events) {
		print_heading(rep, -1);
		printf("# no samples\n");
		return 0;
	}
	only = only < 0 ? 0 : only;
	nr = stack_rows(rep, only, &rows);
	if (!nr && rep->events[only].samples) {
		free(rows);
		pfmon_err("%s: no call chains: record with -g for a call graph",
			  rep->opt.input);
		return 1;
	}
	print_heading(rep, only);
	printf("#\n");
	stacks = pfmon_xcalloc(nr + 1, sizeof(*stacks));
	counts = pfmon_xcalloc(nr + 1, sizeof(*counts));
	for (i = 0; i < nr; i++) {
		stacks[i] = rows[i].comm;
		counts[i] = rows[i].count;
	}
	callgraph_print(stdout, stacks, counts, nr,
			rep->opt.top_set ? rep->opt.top : DEFAULT_TOP);
	free(stacks);
	free(counts);
	free(rows);
	return 0;
}

/* --flame FILE: the folded stacks as an SVG flame graph. */
static int write_flame(struct report *rep, int64_t only)
{
	const char *path = rep->opt.flame;
	struct row *rows = NULL;
	ssize_t i, nr = folded_rows(rep, only, &rows);
	const char **stacks;
	uint64_t *counts;
	char title[320];
	FILE *f;
	int ret;

	nr = nr < 0 ? 0 : nr;
	stacks = pfmon_xcalloc(nr, sizeof(*stacks));
	counts = pfmon_xcalloc(nr, sizeof(*counts));
	for (i = 0; i < nr; i++) {
		stacks[i] = rows[i].comm;
		counts[i] = rows[i].count;
	}
	snprintf(title, sizeof(title), "pfmon report: %s", rep->hdr.command[0] ?
		 rep->hdr.command : "system-wide");
	f = fopen(path, "w");
	ret = f ? flame_write(f, title, stacks, counts, nr) : -1;
	if (f && fclose(f))
		ret = -1;
	if (ret)
		pfmon_err("%s: %s", path, strerror(errno));
	free(stacks);
	free(counts);
	free(rows);
	return ret ? 1 : 0;
}

/* What the reader should know about the samples, on stderr. */
static void print_notes(struct report *rep)
{
	if (rep->bad_event)
		pfmon_warn("%" PRIu64 " samples of events the file does not have: ignored",
			   rep->bad_event);
	if (rep->bad_maps)
		pfmon_warn("%" PRIu64 " empty mappings: ignored", rep->bad_maps);
	if (rep->hidden)
		pfmon_warn("%" PRIu64 " [hidden] samples: the recorder saw no kernel addresses",
			   rep->hidden);
}

static int print_report(struct report *rep)
{
	int64_t only = chosen_event(rep);

	if (only == -2)
		return 1;
	if (rep->opt.flame) {
		if (write_flame(rep, only))
			return 1;
	} else if (rep->opt.callgraph) {
		if (print_callgraph(rep, only))
			return 1;
	} else if (rep->opt.folded) {
		print_folded(rep, only);
	} else {
		print_table(rep, only);
	}
	print_notes(rep);
	if (fflush(stdout) || ferror(stdout)) {
		pfmon_err("writing the report: %s", strerror(errno));
		return 1;
	}
	return 0;
}

static void report_free(struct report *rep)
{
	struct image *img, *prev;
	size_t i;

	for (i = 0; i < rep->cap_images; i++) {
		for (img = rep->images[i]; img; img = prev) {
			prev = img->prev;
			free(img->maps);
			free(img);
		}
	}
	free(rep->images);
	for (i = 0; i < rep->cap_strs; i++)
		free(rep->strs[i]);
	free(rep->strs);
	free(rep->entries.slots);
	for (i = 0; i < rep->stacks.cap; i++)
		free(((struct stack *)counts_at(&rep->stacks, i))->ips);
	free(rep->stacks.slots);
	free(rep->events);
	symbols_free(rep->syms);
}

static int report_usage(FILE *f, int ret)
{
	fprintf(f,
		"usage: pfmon report [OPTIONS]\n"
		"\n"
		"The top symbols of a recording, per event.\n"
		"\n"
		"  -i, --input FILE     the recording (default " DEFAULT_INPUT ")\n"
		"  -n, --top N          lines shown (default %d; 0: all)\n"
		"      --sort KEY       sym: command, object and symbol (default)\n"
		"                       dso: command and object; comm: command\n"
		"      --folded         \"command;object;symbol COUNT\" lines, for\n"
		"                       flamegraph.pl, speedscope, inferno; whole\n"
		"                       call chains from record -g\n"
		"      --flame FILE     the same as an SVG flame graph (a browser\n"
		"                       opens it: hover for names, click to zoom)\n"
		"  -g, --call-graph     each function's share with what it calls,\n"
		"                       its callers and callees (record -g)\n"
		"  -e, --event EVENT    only this event, by name or number\n"
		"      --kallsyms FILE  kernel symbols (default /proc/kallsyms)\n"
		"  -h, --help           this help\n",
		DEFAULT_TOP);
	return ret;
}

enum {
	OPT_SORT = 256,
	OPT_FOLDED,
	OPT_FLAME,
	OPT_KALLSYMS,
};

static bool parse_top(const char *s, unsigned long *top)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*top = strtoul(s, &end, 10);
	return !errno && !*end;
}

/* Returns -1 to go on, else the exit code. */
static int parse_options(struct options *opt, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "top", required_argument, NULL, 'n' },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "flame", required_argument, NULL, OPT_FLAME },
		{ "call-graph", no_argument, NULL, 'g' },
		{ "event", required_argument, NULL, 'e' },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "i:n:e:gh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			opt->input = optarg;
			break;
		case 'n':
			if (!parse_top(optarg, &opt->top)) {
				pfmon_err("report: -n wants a number, not '%s'",
					  optarg);
				return report_usage(stderr, 2);
			}
			opt->top_set = true;
			break;
		case OPT_SORT:
			if (!strcmp(optarg, "sym")) {
				opt->sort = SORT_SYM;
			} else if (!strcmp(optarg, "dso")) {
				opt->sort = SORT_DSO;
			} else if (!strcmp(optarg, "comm")) {
				opt->sort = SORT_COMM;
			} else {
				pfmon_err("report: --sort sym, dso or comm, not '%s'",
					  optarg);
				return report_usage(stderr, 2);
			}
			break;
		case OPT_FOLDED:
			opt->folded = true;
			break;
		case OPT_FLAME:
			opt->flame = optarg;
			break;
		case 'g':
			opt->callgraph = true;
			break;
		case 'e':
			opt->event = optarg;
			break;
		case OPT_KALLSYMS:
			opt->kallsyms = optarg;
			break;
		case 'h':
			return report_usage(stdout, 0);
		default:
			return report_usage(stderr, 2);
		}
	}
	if (optind < argc) {
		pfmon_err("report: unexpected argument '%s'", argv[optind]);
		return report_usage(stderr, 2);
	}
	return -1;
}

int cmd_report(int argc, char **argv)
{
	struct report rep = {
		.opt = {
			.input = DEFAULT_INPUT,
			.top = DEFAULT_TOP,
			.sort = SORT_SYM,
		},
		.entries = {
			.esize = sizeof(struct entry),
			.count_off = offsetof(struct entry, count),
			.min_cap = 1024,
			.hash = entry_hash,
			.same = entry_same,
		},
		.stacks = {
			.esize = sizeof(struct stack),
			.count_off = offsetof(struct stack, count),
			.min_cap = 256,
			.hash = stack_hash,
			.same = stack_same,
		},
	};
	int ret;

	ret = parse_options(&rep.opt, argc, argv);
	if (ret >= 0)
		return ret;
	rep.syms = symbols_new(rep.opt.kallsyms);
	if (!rep.syms)
		return 1;
	ret = pfmon_data_open(&rep.data, rep.opt.input);
	if (!ret) {
		rep.hdr = rep.data.hdr;
		rep.events = pfmon_xcalloc(rep.hdr.nr_events,
					   sizeof(*rep.events));
		ret = pfmon_data_walk(&rep.data, rec_handle, &rep);
		pfmon_data_close(&rep.data);
	}
	if (!ret)
		ret = print_report(&rep);
	report_free(&rep);
	return ret;
}
