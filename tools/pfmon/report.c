// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon report: the top symbols of a recording, or its folded stacks,
 * its call graph or its flame graph.  This half prints: the options,
 * then the tables report_agg.c counts (report.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pfmon.h"
#include "flame.h"
#include "callgraph.h"
#include "report.h"

#define DEFAULT_INPUT	"pfmon.data"
#define DEFAULT_TOP	20

static size_t shown_rows(const struct report *rep, size_t nr)
{
	if (rep->opt.top && rep->opt.top < nr)
		return rep->opt.top;
	return nr;
}

static int column_width(const struct report_row *rows, size_t nr, size_t field,
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

/*
 * The Overhead column is each row's share of @total, the event's
 * weight: the events its samples stand for, as perf report's is of
 * their periods; Samples is how many there are.
 */
static void print_rows(const struct report *rep, const struct report_row *rows,
		       size_t nr, uint64_t total)
{
	size_t i, shown = shown_rows(rep, nr);
	int wc, wo, ws = 7, len;
	uint64_t rest = 0;
	char num[24];

	wc = column_width(rows, shown, 0, 16, 32);
	wo = rep->opt.sort >= SORT_DSO ?
	     column_width(rows, shown, 1, 21, 48) : 0;
	for (i = 0; i < shown; i++) {
		len = snprintf(num, sizeof(num), "%" PRIu64, rows[i].count);
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
		       100.0 * rows[i].weight / total, ws, rows[i].count);
		if (rep->opt.sort == SORT_COMM)
			printf("%s\n", rows[i].comm);
		else if (rep->opt.sort == SORT_DSO)
			printf("%-*s %s\n", wc, rows[i].comm, rows[i].obj);
		else
			printf("%-*s %-*s %s\n", wc, rows[i].comm,
			       wo, rows[i].obj, rows[i].sym);
	}
	for (i = shown; i < nr; i++)
		rest += rows[i].weight;
	if (shown < nr)
		printf("# %zu more lines, %.2f%% of the overhead (-n 0 shows all)\n",
		       nr - shown, 100.0 * rest / total);
}

static void print_event(struct report *rep, uint32_t id)
{
	struct report_row *rows;
	size_t nr;

	nr = report_rows(rep, id, &rows);
	if (nr)
		print_rows(rep, rows, nr, rep->events[id].weight);
	else
		printf("# no samples\n");
	free(rows);
}

static const char *event_name(struct report *rep, uint32_t id,
			      char *buf, size_t len)
{
	struct report_event *ev = &rep->events[id];

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
 * The folded stacks of one event (--event, else the first) as rows
 * whose comm is the whole line: with call chains (record -g) whole
 * stacks, else "comm;obj;sym".  -1 without events.
 */
static ssize_t folded_rows(struct report *rep, int64_t only,
			   struct report_row **rowsp)
{
	char name[128];
	size_t nr;

	if (!rep->hdr.nr_events)
		return -1;
	if (only < 0) {
		only = 0;
		if (rep->hdr.nr_events > 1)
			pfmon_warn("%u events recorded: the stacks of %s (--event chooses)",
				   rep->hdr.nr_events,
				   event_name(rep, 0, name, sizeof(name)));
	}
	nr = report_stack_rows(rep, only, rowsp);
	if (nr)
		return nr;
	free(*rowsp);
	nr = report_rows(rep, only, rowsp);
	report_fold_rows(rep, *rowsp, nr);
	return nr;
}

static void print_folded(struct report *rep, int64_t only)
{
	struct report_row *rows;
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
	struct report_row *rows;
	uint64_t *counts, samples = 0;
	size_t i, nr;

	if (!rep->hdr.nr_events) {
		print_heading(rep, -1);
		printf("# no samples\n");
		return 0;
	}
	only = only < 0 ? 0 : only;
	nr = report_stack_rows(rep, only, &rows);
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
		counts[i] = rows[i].weight;
		samples += rows[i].count;
	}
	/* Shares of the periods, as the table's Overhead. */
	callgraph_print(stdout, stacks, counts, nr, samples,
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
	struct report_row *rows = NULL;
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
static int parse_options(struct report_opts *opt, int argc, char **argv)
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
	};
	int ret;

	ret = parse_options(&rep.opt, argc, argv);
	if (ret >= 0)
		return ret;
	ret = report_read(&rep);
	if (!ret)
		ret = print_report(&rep);
	report_free(&rep);
	return ret;
}
