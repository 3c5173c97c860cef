// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon report's counting: the samples of a recording counted as
 * pfmon_data_walk() hands them over, then turned into the tables
 * report.c prints (struct report_row).
 *
 * Samples, mappings and command names belong to the image of their pid
 * current where they appear in the file (report_image.c).  A mapping may
 * come after the samples that fall in it (the recorder reads mappings
 * again when a process exits), so the samples are counted per (event,
 * image, epoch, IP) as they are read and turned into (command, object,
 * symbol) at the end, each distinct IP once; the table groups those by
 * the sort key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfmon.h"
#include "datafile.h"
#include "symbols.h"
#include "report.h"
#include "report_image.h"

/*
 * A count of samples of one IP of an image, between two of its maps,
 * and the events they stand for (@weight: their periods summed).
 */
struct entry {
	struct image *image;
	uint64_t ip;
	uint32_t event;
	uint32_t epoch;
	uint64_t count;		/* 0: a free slot */
	uint64_t weight;
};

/*
 * A count of samples with one call chain (record -g), of an image
 * between two of its maps: @ips innermost first, the first @nr_exact
 * of them IPs (the sample's kernel IP when shown, the user IP), the
 * rest return addresses; @weight as struct entry's.
 */
struct stack {
	struct image *image;
	uint32_t event;
	uint32_t epoch;
	uint32_t nr;
	uint32_t nr_exact;
	uint64_t *ips;
	uint64_t count;		/* 0: a free slot */
	uint64_t weight;
};

/* The last sample read, which a call chain record that follows is of. */
struct last_sample {
	bool valid;
	struct image *image;
	uint32_t event;
	uint32_t epoch;
	uint64_t ip;
	uint64_t period;
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

/**
 * struct report_agg - the counts behind the tables
 * @syms: symbol lookup
 * @images: the processes, and the report's strings
 * @entries: struct entry, by event, image, epoch and IP
 * @stacks: struct stack, by event, image, epoch and call chain
 * @last: the last sample, which a call chain may follow
 */
struct report_agg {
	struct symbols *syms;
	struct images *images;
	struct counts entries;	/* struct entry */
	struct counts stacks;	/* struct stack */
	struct last_sample last;
};

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
static void stack_count(struct report_agg *a, const struct stack *key)
{
	struct stack *s;
	bool fresh;

	s = counts_add(&a->stacks, key, &fresh);
	if (fresh) {
		s->ips = pfmon_xcalloc(key->nr, sizeof(*key->ips));
		memcpy(s->ips, key->ips, key->nr * sizeof(*key->ips));
	}
	s->weight += a->last.period;
}

/*
 * The call chain of the last sample: its user IP and return addresses,
 * after the sample's own IP when that is a kernel address shown, or
 * after the kernel chain when the recorder had it (which begins with
 * that IP; the user IP after it is where a system call returns to,
 * looked up as the return address it is).  A second chain is no
 * sample's.
 */
static void rec_callchain(void *arg, const struct pfmon_rec_callchain *c,
			  const uint64_t *ips)
{
	struct report_agg *a = ((struct report *)arg)->agg;
	uint64_t frames[PFMON_MAX_CHAIN + 1];
	struct stack key = { .ips = frames + 1 };
	uint32_t nr = c->nr;

	if (!a->last.valid)
		return;
	memcpy(frames + 1, ips, nr * sizeof(uint64_t));
	key.nr_exact = nr ? 1 : 0;
	if (pfmon_chain_needs_ip(c, ips, a->last.ip)) {
		frames[0] = a->last.ip;
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
	key.image = a->last.image;
	key.event = a->last.event;
	key.epoch = a->last.epoch;
	stack_count(a, &key);
	a->last.valid = false;
}

static void rec_sample(void *arg, const struct pfmon_rec_sample *s)
{
	struct report *rep = arg;
	struct report_agg *a = rep->agg;
	struct entry key = { .event = s->event, .ip = s->ip };
	struct entry *e;
	bool fresh;

	key.image = image_get(a->images, s->pid);
	key.epoch = image_epoch(key.image);
	e = counts_add(&a->entries, &key, &fresh);
	/*
	 * The key's weight was copied in as 0.  A sample of period 0 (a
	 * damaged file) still weighs: it is on some line.
	 */
	e->weight += s->period ? s->period : 1;
	a->last = (struct last_sample){ true, key.image, key.event,
					key.epoch, key.ip,
					s->period ? s->period : 1 };
	rep->events[s->event].samples++;
	rep->events[s->event].weight += a->last.period;
	if (!s->ip && (rep->hdr.flags & PFMON_F_KERNEL_HIDDEN))
		rep->hidden++;
	if (s->time_ns > rep->last_ns)
		rep->last_ns = s->time_ns;
}

static void rec_event(void *arg, const struct pfmon_rec_event *e,
		      const char *name)
{
	struct report *rep = arg;
	struct report_event *ev = &rep->events[e->id];

	rep->agg->last.valid = false;
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	ev->period = e->period;
	ev->freq = e->freq;
	ev->named = true;
}

static void rec_comm(void *arg, const struct pfmon_rec_comm *c, size_t len)
{
	struct report_agg *a = ((struct report *)arg)->agg;

	a->last.valid = false;
	image_name(a->images, c, len);
}

static void rec_mmap(void *arg, const struct pfmon_rec_mmap *m,
		     const char *path, size_t len)
{
	struct report_agg *a = ((struct report *)arg)->agg;

	a->last.valid = false;
	image_map(a->images, m, path, len);
}

static void rec_lost(void *arg, const struct pfmon_rec_lost *l)
{
	struct report *rep = arg;

	rep->agg->last.valid = false;
	rep->lost += l->lost;
}

/* The samples, names and maps of @pid that follow are a new image's. */
static void rec_exec(void *arg, const struct pfmon_rec_exec *x)
{
	struct report_agg *a = ((struct report *)arg)->agg;

	a->last.valid = false;
	image_exec(a->images, x->pid);
}

/*
 * A record pfmon_data_walk() passes over.  A sample of an event the
 * header does not have is only counted: a call chain after it counts as
 * the last good sample's.
 */
static void rec_skip(void *arg, enum pfmon_skip why,
		     const union pfmon_rec_any *r)
{
	struct report *rep = arg;

	if (why == PFMON_SKIP_SAMPLE_EVENT) {
		rep->bad_event++;
		return;
	}
	rep->agg->last.valid = false;
	if (why == PFMON_SKIP_EVENT_ID)
		pfmon_warn("%s: event id %u beyond the header's %u events: ignored",
			   rep->opt.input, r->event.id, rep->hdr.nr_events);
	else if (why == PFMON_SKIP_EMPTY_MAP)
		rep->bad_maps++;
}

static const struct pfmon_data_ops report_ops = {
	.event = rec_event,
	.sample = rec_sample,
	.callchain = rec_callchain,
	.comm = rec_comm,
	.mmap = rec_mmap,
	.lost = rec_lost,
	.exec = rec_exec,
	.skip = rec_skip,
};

static struct report_agg *agg_new(void)
{
	struct report_agg *a = pfmon_xcalloc(1, sizeof(*a));

	a->entries = (struct counts){
		.esize = sizeof(struct entry),
		.count_off = offsetof(struct entry, count),
		.min_cap = 1024,
		.hash = entry_hash,
		.same = entry_same,
	};
	a->stacks = (struct counts){
		.esize = sizeof(struct stack),
		.count_off = offsetof(struct stack, count),
		.min_cap = 256,
		.hash = stack_hash,
		.same = stack_same,
	};
	return a;
}

/**
 * report_read() - count the samples of the recording @rep->opt names
 * @rep: the report, options set; report_free() frees what this takes
 *
 * Return: 0, or 1 with a message (no symbols, a file unreadable or
 * corrupt).
 */
int report_read(struct report *rep)
{
	struct pfmon_data data;
	int ret;

	rep->agg = agg_new();
	rep->agg->syms = symbols_new(rep->opt.kallsyms);
	if (!rep->agg->syms)
		return 1;
	ret = pfmon_data_open(&data, rep->opt.input);
	if (ret)
		return ret;
	rep->hdr = data.hdr;
	rep->agg->images = images_new(rep->agg->syms, rep->hdr.flags &
				      PFMON_F_KERNEL_HIDDEN);
	rep->events = pfmon_xcalloc(rep->hdr.nr_events, sizeof(*rep->events));
	ret = pfmon_data_walk(&data, &report_ops, rep);
	pfmon_data_close(&data);
	return ret;
}

static int strcmp0(const char *a, const char *b)
{
	if (a == b)
		return 0;
	if (!a || !b)
		return a ? 1 : -1;
	return strcmp(a, b);
}

static int row_key_cmp(const struct report_row *a, const struct report_row *b)
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

static int row_weight_qcmp(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return row_key_cmp(x, y);
}

/* Rows of one key made one, their counts summed; most weight first. */
static size_t rows_group(struct report_row *rows, size_t nr)
{
	size_t i, out;

	qsort(rows, nr, sizeof(*rows), row_key_qcmp);
	for (i = 1, out = nr ? 1 : 0; i < nr; i++) {
		if (row_key_cmp(&rows[i], &rows[out - 1])) {
			rows[out++] = rows[i];
		} else {
			rows[out - 1].count += rows[i].count;
			rows[out - 1].weight += rows[i].weight;
		}
	}
	qsort(rows, out, sizeof(*rows), row_weight_qcmp);
	return out;
}

/**
 * report_rows() - the table of an event
 * @rep: the report, read
 * @event: the event's id
 * @rowsp: set to the rows, which the caller frees
 *
 * Return: rows of @event grouped by the sort key, most weight first.
 */
size_t report_rows(struct report *rep, uint32_t event,
		   struct report_row **rowsp)
{
	struct report_agg *a = rep->agg;
	struct report_row *rows = pfmon_xcalloc(a->entries.nr + 1,
						sizeof(*rows));
	enum sort_key sort = rep->opt.sort;
	const struct entry *e;
	size_t i, nr = 0;

	for (i = 0; i < a->entries.cap; i++) {
		e = counts_at(&a->entries, i);
		if (!e->count || e->event != event)
			continue;
		rows[nr].comm = image_comm(a->images, e->image);
		image_resolve(a->images, e->image, e->epoch, e->ip,
			      &rows[nr].obj, &rows[nr].sym);
		if (sort < SORT_DSO)
			rows[nr].obj = NULL;
		if (sort < SORT_SYM)
			rows[nr].sym = NULL;
		rows[nr].count = e->count;
		rows[nr].weight = e->weight;
		nr++;
	}
	*rowsp = rows;
	return rows_group(rows, nr);
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
static const char *stack_line(struct images *ims, const struct stack *s)
{
	char line[PFMON_MAX_CHAIN * 64 + 64];
	const char *obj, *sym;
	size_t len = 0;
	uint32_t i;
	uint64_t ip;

	len = line_add(line, sizeof(line), len, image_comm(ims, s->image));
	for (i = s->nr; i--;) {
		ip = i < s->nr_exact ? s->ips[i] : s->ips[i] - 1;
		image_resolve(ims, s->image, s->epoch, ip, &obj, &sym);
		if (len + 1 < sizeof(line))
			line[len++] = ';';
		len = line_add(line, sizeof(line), len,
			       strcmp(sym, SYM_UNKNOWN) ? sym : obj);
	}
	return images_intern(ims, line, len);
}

/**
 * report_stack_rows() - the folded call chains of an event
 * @rep: the report, read
 * @event: the event's id
 * @rowsp: set to the rows, which the caller frees
 *
 * Return: rows whose @comm is a whole folded stack, most weight first;
 * 0 for a recording without call chains (record -g).
 */
size_t report_stack_rows(struct report *rep, uint32_t event,
			 struct report_row **rowsp)
{
	struct report_agg *a = rep->agg;
	struct report_row *rows = pfmon_xcalloc(a->stacks.nr + 1,
						sizeof(*rows));
	const struct stack *s;
	size_t i, nr = 0;

	for (i = 0; i < a->stacks.cap; i++) {
		s = counts_at(&a->stacks, i);
		if (!s->count || s->event != event)
			continue;
		rows[nr].comm = stack_line(a->images, s);
		rows[nr].weight = s->weight;
		rows[nr++].count = s->count;
	}
	*rowsp = rows;
	return rows_group(rows, nr);
}

/**
 * report_fold_rows() - rows of report_rows() as folded lines
 * @rep: the report
 * @rows: the rows; each becomes "comm;obj;sym" in @comm, ';' in names
 *        as ':', @obj and @sym NULL
 * @nr: how many
 */
void report_fold_rows(struct report *rep, struct report_row *rows,
		      size_t nr)
{
	char line[1024];
	size_t i, len;

	for (i = 0; i < nr; i++) {
		len = line_add(line, sizeof(line), 0, rows[i].comm);
		if (rows[i].obj && len + 1 < sizeof(line)) {
			line[len++] = ';';
			len = line_add(line, sizeof(line), len, rows[i].obj);
		}
		if (rows[i].sym && len + 1 < sizeof(line)) {
			line[len++] = ';';
			len = line_add(line, sizeof(line), len, rows[i].sym);
		}
		rows[i].comm = images_intern(rep->agg->images, line, len);
		rows[i].obj = NULL;
		rows[i].sym = NULL;
	}
}

/**
 * report_free() - free what report_read() and the tables took
 * @rep: the report
 */
void report_free(struct report *rep)
{
	struct report_agg *a = rep->agg;
	size_t i;

	free(rep->events);
	if (!a)
		return;
	images_free(a->images);
	free(a->entries.slots);
	for (i = 0; i < a->stacks.cap; i++)
		free(((struct stack *)counts_at(&a->stacks, i))->ips);
	free(a->stacks.slots);
	symbols_free(a->syms);
	free(a);
}
