// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a pfmon recording (pfmon_data.h): the header checked, then
 * each record handed to the caller, in file order.  A file cut short
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
 * pfmon_sample_copy() - a sample record, whatever its recorder's version
 * @rec: the record, at least PFMON_REC_SAMPLE_MIN bytes
 * @event_period: its event's period, for a record without one
 * @out: the whole record
 */
void pfmon_sample_copy(const struct pfmon_rec_sample *rec,
		       uint64_t event_period, struct pfmon_rec_sample *out)
{
	size_t n = rec->hdr.size < sizeof(*out) ? rec->hdr.size : sizeof(*out);

	memset(out, 0, sizeof(*out));
	memcpy(out, rec, n);
	if (n < sizeof(*out) || !out->period)
		out->period = event_period;
}

/* Bytes a known record type needs at least; 0 for an unknown type. */
size_t pfmon_rec_min_size(uint32_t type)
{
	switch (type) {
	case PFMON_REC_EVENT:
		return sizeof(struct pfmon_rec_event);
	case PFMON_REC_SAMPLE:
		return PFMON_REC_SAMPLE_MIN;
	case PFMON_REC_COMM:
		return sizeof(struct pfmon_rec_comm);
	case PFMON_REC_MMAP:
		return sizeof(struct pfmon_rec_mmap);
	case PFMON_REC_LOST:
		return sizeof(struct pfmon_rec_lost);
	case PFMON_REC_EXEC:
		return sizeof(struct pfmon_rec_exec);
	case PFMON_REC_CALLCHAIN:
		return sizeof(struct pfmon_rec_callchain);
	default:
		return 0;
	}
}

/*
 * Whether a record running past the end of the file looks like one the
 * recorder was writing when it died, rather than garbage.
 */
static bool rec_plausible(const struct pfmon_rec *rec)
{
	size_t min = pfmon_rec_min_size(rec->type);

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

/**
 * pfmon_data_walk() - hand each record of a recording to @fn
 * @d: the recording, opened
 * @fn: called for each whole record, in file order
 * @arg: passed to @fn
 *
 * Return: 0, or 1 (with a message) when a record is corrupt.
 */
int pfmon_data_walk(const struct pfmon_data *d, pfmon_rec_fn fn, void *arg)
{
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
		if (!fn(arg, data + off, &rec))
			return rec_corrupt(d, off, &rec);
		off += rec.size;
	}
	return 0;
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
