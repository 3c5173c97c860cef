// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon export --format pprof: a recording as pprof's profile.proto
 * (github.com/google/pprof, proto/profile.proto), gzip'd, the format the
 * pprof tool, Grafana Pyroscope and Parca take.
 *
 * Sample types: "samples"/"count", then one per event of the recording,
 * its name with its unit ("nanoseconds" for the software clocks, else
 * "count").  Each sample counts 1 and its period in its event's column
 * (0 in the others); its locations are its IP and call chain, innermost
 * first, each with its mapping (file, range, offset, build id) and its
 * function (symbol and object as pfmon report names them; a return
 * address is looked up one byte back, as report does); its labels pid,
 * tid, cpu (in decimal) and thread (the command the recorder saw for
 * the process), all string labels.
 * time_nanos is the recording's start on the wall clock (its monotonic
 * start moved by the two clocks' offset at export), duration_nanos its
 * length, period_type and period the first event's.
 *
 * As in pfmon report, a mapping may come after the samples that fall in
 * it, so samples are kept as read and resolved after the whole file.
 * The file is written beside the output and renamed over it once whole:
 * a recording that cannot be read leaves no file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "pfmon.h"
#include "datafile.h"
#include "pprof.h"
#include "symbols.h"
#include "report_image.h"

#define KERNEL_START	(1ULL << 63)	/* the upper half, x86_64 and arm64 */
#define BUILD_ID_MAX	64

/* A growable byte buffer: what the encoder writes. */
struct buf {
	uint8_t *p;
	size_t len, cap;
};

/* A sample as read: resolved after the whole file. */
struct psample {
	struct image *image;
	uint32_t epoch;
	uint32_t event;
	uint32_t pid, tid, cpu;
	uint64_t period;
	uint32_t nr, nr_exact;	/* frames; the first nr_exact are IPs */
	uint64_t *ips;
};

/*
 * A table of ids by a key of 4 words (open addressing; id 0 a free
 * slot); @keys holds them in id order, for the encoding.
 */
struct idtab {
	uint32_t *slots;
	size_t cap;
	uint64_t (*keys)[4];
	size_t nr, cap_keys;
};

/* The strings of the profile: index 0 is "", as the format wants. */
struct strtab {
	char **strs;
	size_t nr, cap;
	uint32_t *slots;	/* index + 1; 0 free */
	size_t cap_slots;
};

struct pprof {
	struct pfmon_data data;
	struct symbols *syms;
	struct images *images;
	char (*names)[65];	/* by event id */
	uint64_t period0;	/* event 0's period */
	struct psample *samples;
	size_t nr_samples, cap_samples;
	struct psample *last;	/* a call chain after it is its own */
	uint64_t last_ns;
	struct strtab strs;
	struct idtab funcs;	/* name, object */
	struct idtab maps;	/* path, start, limit, offset */
	struct idtab locs;	/* mapping id, address, function id */
};

static void buf_put(struct buf *b, const void *d, size_t n)
{
	if (b->len + n > b->cap) {
		while (b->len + n > b->cap)
			b->cap = b->cap ? 2 * b->cap : 256;
		b->p = pfmon_xrealloc(b->p, b->cap, 1);
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void put_varint(struct buf *b, uint64_t v)
{
	uint8_t out[10];
	size_t n = 0;

	do {
		out[n] = v & 0x7f;
		v >>= 7;
		out[n++] |= v ? 0x80 : 0;
	} while (v);
	buf_put(b, out, n);
}

/* Field @field, wire type 0 (varint); 0 is the default, not written. */
static void put_uint(struct buf *b, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	put_varint(b, (uint64_t)field << 3);
	put_varint(b, v);
}

/* Field @field, wire type 2 (length-delimited). */
static void put_bytes(struct buf *b, unsigned int field, const void *d,
		      size_t n)
{
	put_varint(b, (uint64_t)field << 3 | 2);
	put_varint(b, n);
	buf_put(b, d, n);
}

/* @m as field @field of @b, then @m emptied for the next message. */
static void put_msg(struct buf *b, unsigned int field, struct buf *m)
{
	put_bytes(b, field, m->p, m->len);
	m->len = 0;
}

/* A packed repeated varint field. */
static void put_packed(struct buf *b, unsigned int field, const uint64_t *v,
		       size_t n)
{
	struct buf m = { };
	size_t i;

	for (i = 0; i < n; i++)
		put_varint(&m, v[i]);
	put_bytes(b, field, m.p, m.len);
	free(m.p);
}

static void str_slot_put(struct strtab *t, uint32_t idx)
{
	size_t i = hash_str(t->strs[idx]) & (t->cap_slots - 1);

	while (t->slots[i])
		i = (i + 1) & (t->cap_slots - 1);
	t->slots[i] = idx + 1;
}

/* The index of @s in the string table, added if new. */
static uint64_t str_id(struct strtab *t, const char *s)
{
	size_t i;

	if (2 * (t->nr + 1) > t->cap_slots) {
		free(t->slots);
		t->cap_slots = t->cap_slots ? 2 * t->cap_slots : 1024;
		t->slots = pfmon_xcalloc(t->cap_slots, sizeof(*t->slots));
		for (i = 0; i < t->nr; i++)
			str_slot_put(t, i);
	}
	for (i = hash_str(s) & (t->cap_slots - 1); t->slots[i];
	     i = (i + 1) & (t->cap_slots - 1))
		if (!strcmp(t->strs[t->slots[i] - 1], s))
			return t->slots[i] - 1;
	if (t->nr == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->strs = pfmon_xrealloc(t->strs, t->cap, sizeof(*t->strs));
	}
	t->strs[t->nr] = pfmon_xcalloc(strlen(s) + 1, 1);
	memcpy(t->strs[t->nr], s, strlen(s));
	t->slots[i] = ++t->nr;
	return t->nr - 1;
}

static uint64_t key_hash(const uint64_t *k)
{
	return hash64(hash64(hash64(hash64(k[0]) ^ k[1]) ^ k[2]) ^ k[3]);
}

/* The id of key @k (4 words), from 1; *@fresh when it is new. */
static uint32_t id_of(struct idtab *t, const uint64_t *k, bool *fresh)
{
	size_t i, j;

	if (2 * (t->nr + 1) > t->cap) {
		free(t->slots);
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->slots = pfmon_xcalloc(t->cap, sizeof(*t->slots));
		for (j = 0; j < t->nr; j++) {
			i = key_hash(t->keys[j]) & (t->cap - 1);
			while (t->slots[i])
				i = (i + 1) & (t->cap - 1);
			t->slots[i] = j + 1;
		}
	}
	for (i = key_hash(k) & (t->cap - 1); t->slots[i];
	     i = (i + 1) & (t->cap - 1))
		if (!memcmp(t->keys[t->slots[i] - 1], k, sizeof(t->keys[0]))) {
			*fresh = false;
			return t->slots[i];
		}
	if (t->nr == t->cap_keys) {
		t->cap_keys = t->cap_keys ? 2 * t->cap_keys : 1024;
		t->keys = pfmon_xrealloc(t->keys, t->cap_keys,
					 sizeof(*t->keys));
	}
	memcpy(t->keys[t->nr], k, sizeof(t->keys[0]));
	t->slots[i] = ++t->nr;
	*fresh = true;
	return t->nr;
}

static void on_event(void *arg, const struct pfmon_rec_event *e,
		     const char *name)
{
	struct pprof *pp = arg;

	pp->last = NULL;
	snprintf(pp->names[e->id], sizeof(pp->names[0]), "%s", name);
	if (!e->id)
		pp->period0 = e->period;
}

static void on_sample(void *arg, const struct pfmon_rec_sample *s)
{
	struct pprof *pp = arg;
	struct psample *ps;

	if (pp->nr_samples == pp->cap_samples) {
		pp->cap_samples = pp->cap_samples ? 2 * pp->cap_samples : 4096;
		pp->samples = pfmon_xrealloc(pp->samples, pp->cap_samples,
					     sizeof(*pp->samples));
	}
	ps = &pp->samples[pp->nr_samples++];
	*ps = (struct psample){
		.image = image_get(pp->images, s->pid),
		.event = s->event, .pid = s->pid, .tid = s->tid,
		.cpu = s->cpu, .period = s->period, .nr = 1, .nr_exact = 1,
	};
	ps->epoch = image_epoch(ps->image);
	ps->ips = pfmon_xcalloc(1, sizeof(uint64_t));
	ps->ips[0] = s->ip;
	pp->last = ps;
	if (s->time_ns > pp->last_ns)
		pp->last_ns = s->time_ns;
}

/*
 * The last sample's call chain, as pfmon report reads it: the kernel's
 * chain when the recorder had it (it begins at the sample's IP, the one
 * exact entry), else the sample's IP when shown and not the chain's
 * first, then the user chain, whose first entry is exact too.
 */
static void on_callchain(void *arg, const struct pfmon_rec_callchain *c,
			 const uint64_t *ips)
{
	struct pprof *pp = arg;
	struct psample *ps = pp->last;
	uint64_t ip;
	bool lead;

	pp->last = NULL;
	if (!ps || !c->nr)
		return;
	ip = ps->ips[0];
	lead = pfmon_chain_needs_ip(c, ips, ip);
	ps->ips = pfmon_xrealloc(ps->ips, c->nr + 1, sizeof(uint64_t));
	ps->ips[0] = ip;
	memcpy(ps->ips + lead, ips, c->nr * sizeof(uint64_t));
	ps->nr = c->nr + lead;
	ps->nr_exact = 1 + lead;
}

static void on_comm(void *arg, const struct pfmon_rec_comm *c, size_t len)
{
	struct pprof *pp = arg;

	pp->last = NULL;
	image_name(pp->images, c, len);
}

static void on_mmap(void *arg, const struct pfmon_rec_mmap *m,
		    const char *path, size_t len)
{
	struct pprof *pp = arg;

	pp->last = NULL;
	image_map(pp->images, m, path, len);
}

static void on_exec(void *arg, const struct pfmon_rec_exec *x)
{
	struct pprof *pp = arg;

	pp->last = NULL;
	image_exec(pp->images, x->pid);
}

static void on_other(void *arg, const struct pfmon_rec_lost *l)
{
	((struct pprof *)arg)->last = NULL;
}

static void on_skip(void *arg, enum pfmon_skip why,
		    const union pfmon_rec_any *r)
{
	((struct pprof *)arg)->last = NULL;
}

static const struct pfmon_data_ops pprof_ops = {
	.event = on_event,
	.sample = on_sample,
	.callchain = on_callchain,
	.comm = on_comm,
	.mmap = on_mmap,
	.lost = on_other,
	.exec = on_exec,
	.skip = on_skip,
};

/* The mapping id of frame @ip of @ps; 0 for none (a hidden IP). */
static uint64_t mapping_id(struct pprof *pp, const struct psample *ps,
			   uint64_t ip, const char *obj)
{
	struct image_map_info m = { KERNEL_START, UINT64_MAX, 0, obj };
	uint64_t key[4];
	bool fresh;

	if (!ip)
		return 0;
	if (!image_mapping(ps->image, ps->epoch, ip, &m) && ip < KERNEL_START)
		m = (struct image_map_info){ 0, 0, 0, obj };
	key[0] = str_id(&pp->strs, m.path);
	key[1] = m.start;
	key[2] = m.end;
	key[3] = m.pgoff;
	return id_of(&pp->maps, key, &fresh);
}

/* The location id of frame @i of @ps, its function's and mapping's made. */
static uint64_t location_id(struct pprof *pp, const struct psample *ps,
			    uint32_t i)
{
	uint64_t ip = ps->ips[i], key[4] = { 0 };
	const char *obj, *sym;
	bool fresh;

	image_resolve(pp->images, ps->image, ps->epoch,
		      i < ps->nr_exact || !ip ? ip : ip - 1, &obj, &sym);
	key[0] = str_id(&pp->strs, sym);
	key[1] = str_id(&pp->strs, obj);
	key[2] = id_of(&pp->funcs, key, &fresh);
	key[1] = ip;
	key[0] = mapping_id(pp, ps, ip, obj);
	return id_of(&pp->locs, key, &fresh);
}

/*
 * Label @key of a sample in @b, string @str, or @num in decimal: the
 * fleet profilers (Pyroscope) keep string labels only, and pprof drops
 * a number label of 0 without a unit (CPU 0, pid 0).
 */
static void put_label(struct buf *b, struct buf *m, struct pprof *pp,
		      const char *key, const char *str, uint64_t num)
{
	char dec[24];

	if (!str) {
		snprintf(dec, sizeof(dec), "%" PRIu64, num);
		str = dec;
	}
	put_uint(m, 1, str_id(&pp->strs, key));
	put_uint(m, 2, str_id(&pp->strs, str));
	put_msg(b, 3, m);
}

/* Sample @ps as field 2 of @out. */
static void put_sample(struct pprof *pp, const struct psample *ps,
		       struct buf *out)
{
	uint32_t nev = pp->data.hdr.nr_events, i;
	uint64_t locs[PFMON_MAX_CHAIN + 1], vals[65] = { 1 };
	struct buf s = { }, m = { };

	for (i = 0; i < ps->nr && i <= PFMON_MAX_CHAIN; i++)
		locs[i] = location_id(pp, ps, i);
	put_packed(&s, 1, locs, i);
	if (ps->event < 64)
		vals[1 + ps->event] = ps->period;
	put_packed(&s, 2, vals, 1 + (nev < 64 ? nev : 64));
	put_label(&s, &m, pp, "pid", NULL, ps->pid);
	put_label(&s, &m, pp, "tid", NULL, ps->tid);
	put_label(&s, &m, pp, "cpu", NULL, ps->cpu);
	put_label(&s, &m, pp, "thread", image_comm(pp->images, ps->image),
		  0);
	put_msg(out, 2, &s);
	free(s.p);
	free(m.p);
}

static const char *event_unit(const char *name)
{
	if (!strcmp(name, "task-clock") || !strcmp(name, "cpu-clock"))
		return "nanoseconds";
	return "count";
}

static void put_value_type(struct buf *b, unsigned int field,
			   struct pprof *pp, const char *type,
			   const char *unit)
{
	struct buf m = { };

	put_uint(&m, 1, str_id(&pp->strs, type));
	put_uint(&m, 2, str_id(&pp->strs, unit));
	put_msg(b, field, &m);
	free(m.p);
}

static void put_mappings(struct pprof *pp, struct buf *out)
{
	unsigned char id[BUILD_ID_MAX];
	char hex[2 * BUILD_ID_MAX + 1];
	struct buf m = { };
	const char *path;
	size_t i, j, n;

	for (i = 0; i < pp->maps.nr; i++) {
		path = pp->strs.strs[pp->maps.keys[i][0]];
		n = path[0] == '/' ? symbols_build_id(path, id, sizeof(id)) : 0;
		for (j = 0; j < n; j++)
			snprintf(hex + 2 * j, 3, "%02x", id[j]);
		hex[2 * n] = '\0';
		put_uint(&m, 1, i + 1);
		put_uint(&m, 2, pp->maps.keys[i][1]);
		put_uint(&m, 3, pp->maps.keys[i][2]);
		put_uint(&m, 4, pp->maps.keys[i][3]);
		put_uint(&m, 5, pp->maps.keys[i][0]);
		if (n)
			put_uint(&m, 6, str_id(&pp->strs, hex));
		put_uint(&m, 7, 1);	/* has_functions */
		put_msg(out, 3, &m);
	}
	free(m.p);
}

static void put_locations(struct pprof *pp, struct buf *out)
{
	struct buf m = { }, line = { };
	size_t i;

	for (i = 0; i < pp->locs.nr; i++) {
		put_uint(&m, 1, i + 1);
		put_uint(&m, 2, pp->locs.keys[i][0]);
		put_uint(&m, 3, pp->locs.keys[i][1]);
		put_uint(&line, 1, pp->locs.keys[i][2]);
		put_msg(&m, 4, &line);
		put_msg(out, 4, &m);
	}
	free(m.p);
	free(line.p);
}

static void put_functions(struct pprof *pp, struct buf *out)
{
	struct buf m = { };
	size_t i;

	for (i = 0; i < pp->funcs.nr; i++) {
		put_uint(&m, 1, i + 1);
		put_uint(&m, 2, pp->funcs.keys[i][0]);
		put_uint(&m, 3, pp->funcs.keys[i][0]);
		put_uint(&m, 4, pp->funcs.keys[i][1]);
		put_msg(out, 5, &m);
	}
	free(m.p);
}

/* The recording's start on the wall clock, from its monotonic time. */
static uint64_t wall_ns(uint64_t mono_ns)
{
	struct timespec r, m;

	if (clock_gettime(CLOCK_REALTIME, &r) ||
	    clock_gettime(CLOCK_MONOTONIC, &m))
		return 0;
	return mono_ns + (uint64_t)(r.tv_sec - m.tv_sec) * 1000000000ULL +
	       r.tv_nsec - m.tv_nsec;
}

/* The whole profile, encoded. */
static void pprof_encode(struct pprof *pp, struct buf *out)
{
	const struct pfmon_file_header *h = &pp->data.hdr;
	uint64_t end = h->end_ns ? h->end_ns : pp->last_ns;
	struct buf samples = { };
	uint32_t i, nev = h->nr_events < 64 ? h->nr_events : 64;
	size_t s;

	str_id(&pp->strs, "");
	put_value_type(out, 1, pp, "samples", "count");
	for (i = 0; i < nev; i++)
		put_value_type(out, 1, pp, pp->names[i],
			       event_unit(pp->names[i]));
	for (s = 0; s < pp->nr_samples; s++)
		put_sample(pp, &pp->samples[s], &samples);
	buf_put(out, samples.p, samples.len);
	free(samples.p);
	put_mappings(pp, out);
	put_locations(pp, out);
	put_functions(pp, out);
	for (s = 0; s < pp->strs.nr; s++)
		put_bytes(out, 6, pp->strs.strs[s], strlen(pp->strs.strs[s]));
	put_uint(out, 9, wall_ns(h->start_ns));
	put_uint(out, 10, end > h->start_ns ? end - h->start_ns : 0);
	if (nev) {
		put_value_type(out, 11, pp, pp->names[0],
			       event_unit(pp->names[0]));
		put_uint(out, 12, pp->period0);
	}
}

/* @b gzip'd into @path, through a file renamed over it once whole. */
static int write_gzip(const char *path, const struct buf *b)
{
	char tmp[4096];
	mode_t mask;
	gzFile gz;
	int fd, ok;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	errno = 0;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	/*
	 * mkstemp() makes it 0600; the profile is made as any file the
	 * user writes (perf.data, the folded stacks): 0666 less the umask.
	 */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask)) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	gz = gzdopen(fd, "wb9");
	if (!gz) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	ok = !b->len || gzwrite(gz, b->p, b->len) == (int)b->len;
	if (gzclose(gz) != Z_OK)
		ok = 0;
	if (!ok || rename(tmp, path)) {
		if (!errno)
			errno = EIO;
		unlink(tmp);
		return -1;
	}
	return 0;
}

static void pprof_free(struct pprof *pp)
{
	size_t i;

	for (i = 0; i < pp->nr_samples; i++)
		free(pp->samples[i].ips);
	free(pp->samples);
	for (i = 0; i < pp->strs.nr; i++)
		free(pp->strs.strs[i]);
	free(pp->strs.strs);
	free(pp->strs.slots);
	free(pp->funcs.slots);
	free(pp->funcs.keys);
	free(pp->maps.slots);
	free(pp->maps.keys);
	free(pp->locs.slots);
	free(pp->locs.keys);
	free(pp->names);
	if (pp->images)
		images_free(pp->images);
	if (pp->syms)
		symbols_free(pp->syms);
}

/**
 * pprof_export() - write a recording as a gzip'd pprof profile
 * @input: the recording
 * @output: the profile's file
 *
 * Return: 0, or 1 with a message: nothing is left at @output then.
 */
int pprof_export(const char *input, const char *output)
{
	struct pprof pp = { };
	struct buf out = { };
	int ret;

	pp.syms = symbols_new(NULL);
	if (!pp.syms)
		return 1;
	ret = pfmon_data_open(&pp.data, input);
	if (ret) {
		pprof_free(&pp);
		return ret;
	}
	pp.images = images_new(pp.syms,
			       pp.data.hdr.flags & PFMON_F_KERNEL_HIDDEN);
	pp.names = pfmon_xcalloc(pp.data.hdr.nr_events + 1,
				 sizeof(*pp.names));
	ret = pfmon_data_walk(&pp.data, &pprof_ops, &pp);
	pfmon_data_close(&pp.data);
	if (!ret) {
		pprof_encode(&pp, &out);
		if (write_gzip(output, &out)) {
			pfmon_err("%s: %s", output, strerror(errno));
			ret = 1;
		}
	}
	if (!ret)
		fprintf(stderr, "pfmon export: %zu samples, %zu locations, %zu functions in %s (pprof)\n",
			pp.nr_samples, pp.locs.nr, pp.funcs.nr, output);
	free(out.p);
	pprof_free(&pp);
	return ret;
}
