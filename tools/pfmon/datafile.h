/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading the file pfmon record writes (pfmon_data.h): its header
 * checked, then each record checked and handed to the reader's callback
 * for its kind, for pfmon report and pfmon export alike.
 */
#ifndef PFMON_DATAFILE_H
#define PFMON_DATAFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "pfmon_data.h"

/**
 * struct pfmon_data - a recording, in memory
 * @path: where it was read from, for messages
 * @buf: its bytes (mapped, or read from a pipe)
 * @size: bytes of @buf
 * @mapped: whether @buf is a mapping
 * @hdr: its header, names made printable
 */
struct pfmon_data {
	const char *path;
	unsigned char *buf;
	size_t size;
	bool mapped;
	struct pfmon_file_header hdr;
};

/* Any record, as pfmon_data_walk() copies it: aligned, whole. */
union pfmon_rec_any {
	struct pfmon_rec hdr;
	struct pfmon_rec_event event;
	struct pfmon_rec_sample sample;
	struct pfmon_rec_comm comm;
	struct pfmon_rec_mmap mmap;
	struct pfmon_rec_lost lost;
	struct pfmon_rec_exec exec;
	struct pfmon_rec_callchain chain;
};

/* Why pfmon_data_walk() hands a record to pfmon_data_ops.skip. */
enum pfmon_skip {
	PFMON_SKIP_NEWER,		/* a type a newer pfmon writes */
	PFMON_SKIP_EVENT_ID,		/* an event beyond the header's */
	PFMON_SKIP_SAMPLE_EVENT,	/* a sample of such an event */
	PFMON_SKIP_EMPTY_MAP,		/* a mapping ending at its start */
};

/**
 * struct pfmon_data_ops - what a reader does with each kind of record
 * @event: an event of the header's; @name its name, NUL-terminated and
 *         printable
 * @sample: a sample of one of them, whole: @period is its event's when
 *          the recorder wrote none (pfmon_data.h)
 * @callchain: a call chain; @ips its @nr entries
 * @comm: a command name, @len bytes of @comm (no NUL in them)
 * @mmap: a mapping that is not empty; @path its file, @len bytes (no
 *        NUL in them)
 * @lost: samples lost
 * @exec: an exec
 * @skip: a record none of the above is given, and why
 *
 * pfmon_data_walk() calls them in file order, with a copy of each record
 * checked: long enough for its type, its fields in range.  NULL: that
 * kind of record is passed over.
 */
struct pfmon_data_ops {
	void (*event)(void *priv, const struct pfmon_rec_event *e,
		      const char *name);
	void (*sample)(void *priv, const struct pfmon_rec_sample *s);
	void (*callchain)(void *priv, const struct pfmon_rec_callchain *c,
			  const uint64_t *ips);
	void (*comm)(void *priv, const struct pfmon_rec_comm *c, size_t len);
	void (*mmap)(void *priv, const struct pfmon_rec_mmap *m,
		     const char *path, size_t len);
	void (*lost)(void *priv, const struct pfmon_rec_lost *l);
	void (*exec)(void *priv, const struct pfmon_rec_exec *x);
	void (*skip)(void *priv, enum pfmon_skip why,
		     const union pfmon_rec_any *r);
};

/*
 * Does the sample's IP @ip go before its call chain @c (@ips) as the
 * innermost frame?  Not when the chain starts with the kernel's, whose
 * first entry is the sample's IP, nor when the user chain already starts
 * there; never for a hidden IP (0).
 */
static inline bool pfmon_chain_needs_ip(const struct pfmon_rec_callchain *c,
					const uint64_t *ips, uint64_t ip)
{
	if (c->nr_kernel && c->nr_kernel <= c->nr)
		return false;
	return ip && (!c->nr || ips[0] != ip);
}

int pfmon_data_open(struct pfmon_data *d, const char *path);
int pfmon_data_walk(const struct pfmon_data *d,
		    const struct pfmon_data_ops *ops, void *priv);
void pfmon_data_close(struct pfmon_data *d);
void pfmon_sanitize(char *s);

#endif /* PFMON_DATAFILE_H */
