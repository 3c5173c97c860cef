// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a pfmon recording (pfmon_data.h): the header checked, then
 * each record, in file order, checked once here (its size for its type,
 * its fields) and handed to the reader's callback for its kind
 * (struct pfmon_data_ops), whichever subcommand reads.  A file cut short
 * (the recorder killed) is read up to its last whole record, with a
 * warning; a record that cannot be what the recorder wrote ends the
 * read with an error naming its offset.
 */
#include <byteswap.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pfmon.h"
#include "datafile.h"

/* More events than any PMU counts at once: a corrupt header. */
#define MAX_EVENTS	4096

/*
 * The largest record a recorder cut short can have been writing: the
 * biggest known one, a mapping with a PATH_MAX path.  A record claiming
 * more past the end of the file is corrupt, not truncated.
 */
#define MAX_PLAUSIBLE_REC	(sizeof(struct pfmon_rec_mmap) + 4096 + 8)

/*
 * Names come from the file and from processes that name themselves:
 * no control character reaches the terminal.
 */
void pfmon_sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/**
 * struct walk - a pfmon_data_walk() under way
 * @d: the recording
 * @ops: the reader's callbacks
 * @priv: passed to them
 * @periods: by event id, the period of the last EVENT record: that of
 *           the samples whose recorder wrote none
 */
struct walk {
	const struct pfmon_data *d;
	const struct pfmon_data_ops *ops;
	void *priv;
	uint64_t *periods;
};

/*
 * A record of a known type, at @data and copied in @r, to check and
 * hand on: false when it cannot be what the recorder wrote.
 */
typedef bool (*rec_hand_fn)(struct walk *w, union pfmon_rec_any *r,
			    const unsigned char *data);

/**
 * struct rec_kind - a known record type
 * @min: bytes a record of it has at least
 * @size: bytes of its struct, that a longer record's copy stops at
 * @hand: checks it and calls the reader
 */
struct rec_kind {
	size_t min;
	size_t size;
	rec_hand_fn hand;
};

static bool skip(struct walk *w, enum pfmon_skip why,
		 const union pfmon_rec_any *r)
{
	if (w->ops->skip)
		w->ops->skip(w->priv, why, r);
	return true;
}

static bool hand_event(struct walk *w, union pfmon_rec_any *r,
		       const unsigned char *data)
{
	const struct pfmon_rec_event *e = &r->event;
	char name[sizeof(e->name) + 1];

	if (e->id >= w->d->hdr.nr_events)
		return skip(w, PFMON_SKIP_EVENT_ID, r);
	w->periods[e->id] = e->period;
	memcpy(name, e->name, sizeof(e->name));
	name[sizeof(e->name)] = '\0';
	pfmon_sanitize(name);
	if (w->ops->event)
		w->ops->event(w->priv, e, name);
	return true;
}

/* A sample of a pfmon before -F, without a period: its event's. */
static bool hand_sample(struct walk *w, union pfmon_rec_any *r,
			const unsigned char *data)
{
	struct pfmon_rec_sample *s = &r->sample;

	if (s->event >= w->d->hdr.nr_events)
		return skip(w, PFMON_SKIP_SAMPLE_EVENT, r);
	if (!s->period)
		s->period = w->periods[s->event];
	if (w->ops->sample)
		w->ops->sample(w->priv, s);
	return true;
}

static bool hand_callchain(struct walk *w, union pfmon_rec_any *r,
			   const unsigned char *data)
{
	const struct pfmon_rec_callchain *c = &r->chain;
	uint64_t ips[PFMON_MAX_CHAIN];

	if (c->nr > PFMON_MAX_CHAIN ||
	    c->hdr.size < sizeof(*c) + c->nr * sizeof(uint64_t))
		return false;
	memcpy(ips, data + sizeof(*c), c->nr * sizeof(uint64_t));
	if (w->ops->callchain)
		w->ops->callchain(w->priv, c, ips);
	return true;
}

static bool hand_comm(struct walk *w, union pfmon_rec_any *r,
		      const unsigned char *data)
{
	const struct pfmon_rec_comm *c = &r->comm;

	if (w->ops->comm)
		w->ops->comm(w->priv, c, strnlen(c->comm, sizeof(c->comm)));
	return true;
}

/* The path follows the fixed part, NUL-padded to the record's end. */
static bool hand_mmap(struct walk *w, union pfmon_rec_any *r,
		      const unsigned char *data)
{
	const struct pfmon_rec_mmap *m = &r->mmap;
	const char *path = (const char *)data + sizeof(*m);

	if (m->start >= m->end)
		return skip(w, PFMON_SKIP_EMPTY_MAP, r);
	if (w->ops->mmap)
		w->ops->mmap(w->priv, m, path,
			     strnlen(path, m->hdr.size - sizeof(*m)));
	return true;
}

static bool hand_lost(struct walk *w, union pfmon_rec_any *r,
		      const unsigned char *data)
{
	if (w->ops->lost)
		w->ops->lost(w->priv, &r->lost);
	return true;
}

static bool hand_exec(struct walk *w, union pfmon_rec_any *r,
		      const unsigned char *data)
{
	if (w->ops->exec)
		w->ops->exec(w->priv, &r->exec);
	return true;
}

static const struct rec_kind kinds[] = {
	[PFMON_REC_EVENT] = { sizeof(struct pfmon_rec_event),
			      sizeof(struct pfmon_rec_event), hand_event },
	[PFMON_REC_SAMPLE] = { PFMON_REC_SAMPLE_MIN,
			       sizeof(struct pfmon_rec_sample), hand_sample },
	[PFMON_REC_COMM] = { sizeof(struct pfmon_rec_comm),
			     sizeof(struct pfmon_rec_comm), hand_comm },
	[PFMON_REC_MMAP] = { sizeof(struct pfmon_rec_mmap),
			     sizeof(struct pfmon_rec_mmap), hand_mmap },
	[PFMON_REC_LOST] = { sizeof(struct pfmon_rec_lost),
			     sizeof(struct pfmon_rec_lost), hand_lost },
	[PFMON_REC_EXEC] = { sizeof(struct pfmon_rec_exec),
			     sizeof(struct pfmon_rec_exec), hand_exec },
	[PFMON_REC_CALLCHAIN] = { sizeof(struct pfmon_rec_callchain),
				  sizeof(struct pfmon_rec_callchain),
				  hand_callchain },
};

/* A known record type; NULL for a newer recorder's. */
static const struct rec_kind *rec_kind(uint32_t type)
{
	if (type >= sizeof(kinds) / sizeof(kinds[0]) || !kinds[type].hand)
		return NULL;
	return &kinds[type];
}

/*
 * Whether a record running past the end of the file looks like one the
 * recorder was writing when it died, rather than garbage.
 */
static bool rec_plausible(const struct pfmon_rec *rec)
{
	const struct rec_kind *k = rec_kind(rec->type);
	size_t min = k ? k->min : 0;

	if (rec->type == PFMON_REC_MMAP)
		return rec->size <= MAX_PLAUSIBLE_REC;
	/* a call chain: its fixed part, then up to PFMON_MAX_CHAIN IPs */
	if (rec->type == PFMON_REC_CALLCHAIN)
		return rec->size >= min &&
		       rec->size <= min + PFMON_MAX_CHAIN * sizeof(uint64_t);
	/* a sample: as an older pfmon wrote it, or with its period */
	if (rec->type == PFMON_REC_SAMPLE)
		return rec->size == min ||
		       rec->size == sizeof(struct pfmon_rec_sample);
	if (min)
		return rec->size == ((min + 7) & ~(size_t)7);
	return rec->size <= MAX_PLAUSIBLE_REC;
}

static int rec_corrupt(const struct pfmon_data *d, size_t off,
		       const struct pfmon_rec *rec)
{
	pfmon_err("%s: corrupt record at offset %zu (type %u, size %u)",
		  d->path, off, rec->type, rec->size);
	return 1;
}

static void warn_truncated(const struct pfmon_data *d, size_t off)
{
	pfmon_warn("%s: truncated at offset %zu (was the recorder killed?): reporting the records before it",
		   d->path, off);
}

/*
 * One whole record of @rec->size bytes at @data, unaligned: checked and
 * handed to the reader.  False when it is corrupt.
 */
static bool rec_dispatch(struct walk *w, const unsigned char *data,
			 const struct pfmon_rec *rec)
{
	const struct rec_kind *k = rec_kind(rec->type);
	union pfmon_rec_any r;

	/* zeroes past a shorter record: a sample without its period */
	memset(&r, 0, sizeof(r));
	r.hdr = *rec;
	if (!k)
		return skip(w, PFMON_SKIP_NEWER, &r);
	if (rec->size < k->min)
		return false;
	memcpy(&r, data, rec->size < k->size ? rec->size : k->size);
	return k->hand(w, &r, data);
}

static int walk_records(struct walk *w)
{
	const struct pfmon_data *d = w->d;
	size_t off = d->hdr.hdr_size, size = d->size;
	const unsigned char *data = d->buf;
	struct pfmon_rec rec;

	while (off < size) {
		if (size - off < sizeof(rec)) {
			warn_truncated(d, off);
			break;
		}
		memcpy(&rec, data + off, sizeof(rec));
		if (rec.size < sizeof(rec) || rec.size % 8)
			return rec_corrupt(d, off, &rec);
		if (rec.size > size - off) {
			if (!rec_plausible(&rec))
				return rec_corrupt(d, off, &rec);
			warn_truncated(d, off);
			break;
		}
		if (!rec_dispatch(w, data + off, &rec))
			return rec_corrupt(d, off, &rec);
		off += rec.size;
	}
	return 0;
}

/**
 * pfmon_data_walk() - check each record of a recording and hand it on
 * @d: the recording, opened
 * @ops: the reader's callbacks, by kind of record
 * @priv: passed to them
 *
 * Return: 0, or 1 (with a message) when a record is corrupt.
 */
int pfmon_data_walk(const struct pfmon_data *d,
		    const struct pfmon_data_ops *ops, void *priv)
{
	struct walk w = {
		.d = d,
		.ops = ops,
		.priv = priv,
		.periods = pfmon_xcalloc(d->hdr.nr_events, sizeof(uint64_t)),
	};
	int ret;

	ret = walk_records(&w);
	free(w.periods);
	return ret;
}

static int read_header(struct pfmon_data *d)
{
	struct pfmon_file_header *h = &d->hdr;
	const unsigned char *data = d->buf;
	const char *in = d->path;
	size_t size = d->size;
	uint32_t version;

	if (size < sizeof(h->magic) ||
	    memcmp(data, PFMON_DATA_MAGIC, sizeof(h->magic))) {
		pfmon_err("%s: not a pfmon data file", in);
		return 1;
	}
	if (size < offsetof(struct pfmon_file_header, version) + 4) {
		pfmon_err("%s: truncated in its header", in);
		return 1;
	}
	memcpy(&version, data + offsetof(struct pfmon_file_header, version),
	       sizeof(version));
	if (version != PFMON_DATA_VERSION) {
		if (bswap_32(version) == PFMON_DATA_VERSION)
			pfmon_err("%s: recorded on a machine of the other byte order",
				  in);
		else
			pfmon_err("%s: format version %u; this pfmon reads version %d",
				  in, version, PFMON_DATA_VERSION);
		return 1;
	}
	if (size < sizeof(*h)) {
		pfmon_err("%s: truncated in its header", in);
		return 1;
	}
	memcpy(h, data, sizeof(*h));
	if (h->hdr_size < sizeof(*h) || h->nr_events > MAX_EVENTS) {
		pfmon_err("%s: corrupt header (hdr_size %u, nr_events %u)",
			  in, h->hdr_size, h->nr_events);
		return 1;
	}
	if (h->hdr_size > size) {
		pfmon_err("%s: truncated in its header", in);
		return 1;
	}
	h->command[sizeof(h->command) - 1] = '\0';
	h->pmu[sizeof(h->pmu) - 1] = '\0';
	pfmon_sanitize(h->command);
	pfmon_sanitize(h->pmu);
	return 0;
}

/* The file's bytes: mapped, or read when it cannot be (a pipe). */
static int load(struct pfmon_data *d)
{
	unsigned char *buf = NULL;
	size_t cap = 0, size = 0;
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(d->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		pfmon_err("%s: %s", d->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	d->mapped = S_ISREG(st.st_mode) && st.st_size > 0;
	if (d->mapped) {
		d->size = st.st_size;
		d->buf = mmap(NULL, d->size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (d->buf == MAP_FAILED) {
			pfmon_err("%s: %s", d->path, strerror(errno));
			d->buf = NULL;
			return 1;
		}
		return 0;
	}
	for (;;) {
		if (cap - size < 65536) {
			cap = cap ? 2 * cap : 1 << 20;
			buf = pfmon_xrealloc(buf, cap, 1);
		}
		n = read(fd, buf + size, cap - size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		size += n;
	}
	if (n < 0) {
		pfmon_err("%s: %s", d->path, strerror(errno));
		free(buf);
		close(fd);
		return 1;
	}
	close(fd);
	d->buf = buf;
	d->size = size;
	return 0;
}

/**
 * pfmon_data_open() - read a recording and check its header
 * @d: filled in; pfmon_data_close() frees it
 * @path: the file
 *
 * Return: 0, or 1 with a message (unreadable, not a recording, another
 * version or byte order, a header cut short or corrupt).
 */
int pfmon_data_open(struct pfmon_data *d, const char *path)
{
	memset(d, 0, sizeof(*d));
	d->path = path;
	if (load(d))
		return 1;
	if (read_header(d)) {
		pfmon_data_close(d);
		return 1;
	}
	return 0;
}

/**
 * pfmon_data_close() - free what pfmon_data_open() took
 * @d: the recording
 */
void pfmon_data_close(struct pfmon_data *d)
{
	if (d->mapped)
		munmap(d->buf, d->size);
	else
		free(d->buf);
	d->buf = NULL;
}
