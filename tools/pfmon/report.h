/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pfmon report, between its two halves: what report_agg.c counts of a
 * recording and turns into tables (struct report_row), and what
 * report.c prints of them.
 */
#ifndef PFMON_REPORT_H
#define PFMON_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pfmon_data.h"

/* Key fields, in order: a key uses the first 1, 2 or 3. */
enum sort_key {
	SORT_COMM = 1,
	SORT_DSO,
	SORT_SYM,
};

/**
 * struct report_opts - pfmon report's options (report_usage())
 * @input: -i, the recording
 * @kallsyms: --kallsyms, or NULL for /proc/kallsyms
 * @event: -e, the one event shown, or NULL
 * @top: -n, lines shown (0: all)
 * @top_set: -n was given
 * @sort: --sort
 * @folded: --folded
 * @callgraph: -g
 * @flame: --flame, the SVG file, or NULL
 */
struct report_opts {
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

/**
 * struct report_event - an event of the recording
 * @name: as its EVENT record names it, if @named
 * @period: its sampling period (with @freq, the first guess)
 * @samples: samples of it counted
 * @weight: the events they stand for, their periods summed
 * @freq: record -F: overflows per second asked, else 0
 * @named: an EVENT record described it
 */
struct report_event {
	char name[sizeof(((struct pfmon_rec_event *)0)->name) + 1];
	uint64_t period;
	uint64_t samples;
	uint64_t weight;
	uint32_t freq;
	bool named;
};

/*
 * A line of a table: samples of a command, object and symbol (NULL
 * past the sort key), or of a folded stack, whole in @comm; @weight is
 * the events they stand for (their periods summed), which the shares
 * are of: under record -F the periods differ from sample to sample.
 */
struct report_row {
	const char *comm;
	const char *obj;
	const char *sym;
	uint64_t count;
	uint64_t weight;
};

struct report_agg;

/**
 * struct report - a recording read for pfmon report
 * @opt: the options
 * @hdr: the recording's header
 * @events: by event id, @hdr.nr_events of them
 * @lost: samples the kernel dropped
 * @bad_event: samples of an event id out of range, left out
 * @hidden: samples at a hidden kernel address
 * @bad_maps: empty mappings, left out
 * @last_ns: time of the latest sample
 * @agg: the counts behind the tables (report_agg.c's)
 */
struct report {
	struct report_opts opt;
	struct pfmon_file_header hdr;
	struct report_event *events;
	uint64_t lost;
	uint64_t bad_event;
	uint64_t hidden;
	uint64_t bad_maps;
	uint64_t last_ns;
	struct report_agg *agg;
};

/* report_agg.c */
int report_read(struct report *rep);
size_t report_rows(struct report *rep, uint32_t event,
		   struct report_row **rowsp);
size_t report_stack_rows(struct report *rep, uint32_t event,
			 struct report_row **rowsp);
void report_fold_rows(struct report *rep, struct report_row *rows,
		      size_t nr);
void report_free(struct report *rep);

#endif /* PFMON_REPORT_H */
