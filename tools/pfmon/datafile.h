/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading the file pfmon record writes (pfmon_data.h): its header
 * checked, then its records one by one, for pfmon report and pfmon
 * export alike.
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

/*
 * One record of @rec->size bytes at @data, which may be unaligned: false
 * when the record is too short for its type (the file is corrupt).
 */
typedef bool (*pfmon_rec_fn)(void *arg, const unsigned char *data,
			     const struct pfmon_rec *rec);

int pfmon_data_open(struct pfmon_data *d, const char *path);
int pfmon_data_walk(const struct pfmon_data *d, pfmon_rec_fn fn, void *arg);
void pfmon_data_close(struct pfmon_data *d);
size_t pfmon_rec_min_size(uint32_t type);
void pfmon_sample_copy(const struct pfmon_rec_sample *rec,
		       uint64_t event_period, struct pfmon_rec_sample *out);
void pfmon_sanitize(char *s);

#endif /* PFMON_DATAFILE_H */
