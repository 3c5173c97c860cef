// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon stat: count events of a command, of threads, or of CPUs.
 *
 * More events than counters are spread over event sets that perfmon
 * switches every --switch ms; each count is then scaled to the whole
 * time by the share of time its set counted, which is printed with it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "pfmon.h"

struct stat_opts {
	struct pfmon_what w;
	bool sets;
	unsigned int switch_ms;
	unsigned int interval_ms;
	const char *sep;
	bool json;
};

/* What one print shows: scaled counts and their share of the time. */
struct stat_view {
	uint64_t *raw;
	uint64_t *set_ns;
	double *est;
	double *share;
};

struct stat_run {
	struct pfmon_session *s;
	struct stat_opts *o;
	struct stat_view now;
	struct stat_view last;
	uint64_t t0;
	uint64_t last_ns;
};

static void stat_usage(FILE *f)
{
	fprintf(f,
		"usage: pfmon stat [-e EV,...]... [--sets] [--switch MS]\n"
		"                  [-a | -C CPUS | -p PID | -t TID] [-I MS] [-x SEP | -j]\n"
		"                  [-- CMD [ARGS]]\n"
		"  -e EV,...   events (pfmon list); EV:u, EV:k user or kernel only;\n"
		"              rHEX raw event code; pmcN=VALUE[@pmdM] a PMC as is\n"
		"  --sets      each -e is an event set of its own (else sets are made\n"
		"              only when the events outnumber the counters)\n"
		"  --switch MS multiplexing: switch sets every MS ms of counting (10)\n"
		"  -a          every CPU (all threads on them); -C CPUS: those CPUs\n"
		"  -p PID      the threads of a running process\n"
		"  -t TID      one thread of a running process\n"
		"  -I MS       print the counts of every MS ms interval\n"
		"  -x SEP      one line per event: value SEP unit SEP event SEP %%time\n"
		"  -j          one JSON object per line per event (see tool.rst)\n"
		"Without -a, -C, -p or -t, counts CMD and every thread and process it starts.\n");
}

static int stat_parse(int argc, char **argv, struct stat_opts *o)
{
	static const struct option lo[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "sets", no_argument, NULL, 'S' },
		{ "switch", required_argument, NULL, 'W' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'I' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	int c, ret;

	o->switch_ms = 10;
	while ((c = getopt_long(argc, argv, "+e:aC:p:t:I:x:jh", lo, NULL)) != -1) {
		ret = pfmon_what_opt(&o->w, c, optarg);
		if (ret < 0)
			return -1;
		if (ret)
			continue;
		switch (c) {
		case 'S':
			o->sets = true;
			break;
		case 'W':
			o->switch_ms = atoi(optarg);
			if (o->switch_ms < 1 || o->switch_ms > 60000) {
				pfmon_err("--switch %s: 1 to 60000 ms", optarg);
				return -1;
			}
			break;
		case 'I':
			o->interval_ms = atoi(optarg);
			if (o->interval_ms < 10) {
				pfmon_err("-I %s: at least 10 ms", optarg);
				return -1;
			}
			break;
		case 'x':
			o->sep = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			stat_usage(stdout);
			exit(0);
		default:
			stat_usage(stderr);
			return -1;
		}
	}
	if (o->json && o->sep) {
		pfmon_err("-x and -j: one output format");
		stat_usage(stderr);
		return -1;
	}
	if (pfmon_what_check(&o->w, optind < argc, "count")) {
		stat_usage(stderr);
		return -1;
	}
	return optind;
}

/* Scale raw counts by the share of time their set counted. */
static void view_scale(struct pfmon_session *s, struct stat_view *v)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i < s->nsets; i++)
		total += v->set_ns[i];
	for (i = 0; i < s->nev; i++) {
		uint64_t ns = v->set_ns[s->evs[i].set];

		if (s->nsets == 1) {
			v->est[i] = v->raw[i];
			v->share[i] = 1.0;
		} else {
			v->share[i] = total ? (double)ns / total : 0.0;
			v->est[i] = ns ? (double)v->raw[i] * total / ns : 0.0;
		}
	}
}

static int view_alloc(struct pfmon_session *s, struct stat_view *v)
{
	v->raw = calloc(s->nev, sizeof(*v->raw));
	v->set_ns = calloc(s->nsets, sizeof(*v->set_ns));
	v->est = calloc(s->nev, sizeof(*v->est));
	v->share = calloc(s->nev, sizeof(*v->share));
	return v->raw && v->set_ns && v->est && v->share ? 0 : -1;
}

static void view_free(struct stat_view *v)
{
	free(v->raw);
	free(v->set_ns);
	free(v->est);
	free(v->share);
}

/* 1234567 -> "1,234,567" */
static const char *grouped(double v, char *buf, size_t len)
{
	char digits[32];
	size_t n, i, o = 0;

	snprintf(digits, sizeof(digits), "%.0f", v);
	n = strlen(digits);
	for (i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

static int find_role(struct pfmon_session *s, enum pfmon_role r)
{
	int i;

	for (i = 0; i < s->nev; i++)
		if (s->evs[i].role == r)
			return i;
	return -1;
}

/* "# 1.23 insn per cycle" where both inputs were counted. */
static void derived(struct pfmon_session *s, const struct stat_view *v,
		    int i, double wall_ns, char *buf, size_t len)
{
	int cyc = find_role(s, PFMON_ROLE_CYCLES);

	buf[0] = '\0';
	if (s->evs[i].role == PFMON_ROLE_INSTRUCTIONS && cyc >= 0 &&
	    v->est[cyc] > 0)
		snprintf(buf, len, "#  %.2f insn per cycle", v->est[i] / v->est[cyc]);
	else if (s->evs[i].role == PFMON_ROLE_TASK_CLOCK && wall_ns > 0)
		snprintf(buf, len, "#  %.3f CPUs utilized", v->est[i] / wall_ns);
}

/* @s as a JSON string: quotes, backslashes and control characters escaped. */
static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

/*
 * -j: {"interval": S (with -I), "counter-value": N, "raw-value": N,
 * "unit": U, "event": E, "pcnt-running": P[, "metric-value": M,
 * "metric-unit": U]}, one line.
 */
static void print_json(struct stat_run *r, const struct stat_view *v, int i,
		       double wall_ns, double interval_s)
{
	struct pfmon_session *s = r->s;
	const struct pfmon_event *ev = &s->evs[i];
	double metric;
	char d[64];

	putchar('{');
	if (interval_s >= 0)
		printf("\"interval\": %.6f, ", interval_s);
	printf("\"counter-value\": %.0f, \"raw-value\": %" PRIu64 ", \"unit\": ",
	       v->est[i], v->raw[i]);
	json_string(ev->unit ? ev->unit : "");
	printf(", \"event\": ");
	json_string(ev->name);
	printf(", \"pcnt-running\": %.2f", v->share[i] * 100.0);
	derived(s, v, i, wall_ns, d, sizeof(d));
	if (d[0] && sscanf(d, "#  %lf", &metric) == 1) {
		printf(", \"metric-value\": %.6f, \"metric-unit\": ", metric);
		json_string(strchr(d + 3, ' ') + 1);
	}
	printf("}\n");
}

static void print_event(struct stat_run *r, const struct stat_view *v, int i,
			double wall_ns, const char *prefix)
{
	struct pfmon_session *s = r->s;
	const struct pfmon_event *ev = &s->evs[i];
	char num[48], d[64], share[16] = "";

	if (r->o->sep) {
		printf("%s%.0f%s%s%s%s%s%.2f\n", prefix, v->est[i], r->o->sep,
		       ev->unit ? ev->unit : "", r->o->sep, ev->name,
		       r->o->sep, v->share[i] * 100.0);
		return;
	}
	if (s->nsets > 1)
		snprintf(share, sizeof(share), "(%.2f%%)", v->share[i] * 100.0);
	if (s->nsets > 1 && v->share[i] == 0.0) {
		printf("%s%20s      %-24s\n", prefix, "<not counted>", ev->name);
		return;
	}
	derived(s, v, i, wall_ns, d, sizeof(d));
	printf("%s%20s %-4s %-24s %-28s %s\n", prefix,
	       grouped(v->est[i], num, sizeof(num)), ev->unit ? ev->unit : "",
	       ev->name, d, share);
}

/* -I: the counts of the interval that just ended. */
static void stat_tick(struct pfmon_session *s, void *arg)
{
	struct stat_run *r = arg;
	uint64_t now = pfmon_now_ns();
	struct stat_view d;
	char prefix[32];
	int i;

	if (pfmon_read_counts(s, r->now.raw, r->now.set_ns))
		return;
	/* The first interval runs from the command's exec, not from fork. */
	if (r->last_ns < s->start_ns)
		r->last_ns = s->start_ns;
	if (view_alloc(s, &d))
		goto out;
	for (i = 0; i < s->nev; i++)
		d.raw[i] = r->now.raw[i] - r->last.raw[i];
	for (i = 0; i < s->nsets; i++)
		d.set_ns[i] = r->now.set_ns[i] - r->last.set_ns[i];
	view_scale(s, &d);
	snprintf(prefix, sizeof(prefix), "%s%.6f%s",
		 r->o->sep ? "" : "  ", (now - r->t0) / 1e9,
		 r->o->sep ? r->o->sep : " ");
	for (i = 0; i < s->nev; i++) {
		if (r->o->json)
			print_json(r, &d, i, now - r->last_ns,
				   (now - r->t0) / 1e9);
		else
			print_event(r, &d, i, now - r->last_ns, prefix);
	}
	fflush(stdout);
	memcpy(r->last.raw, r->now.raw, s->nev * sizeof(*r->now.raw));
	memcpy(r->last.set_ns, r->now.set_ns, s->nsets * sizeof(uint64_t));
	r->last_ns = now;
out:
	view_free(&d);
}

static void stat_title(struct stat_run *r, int argc, char **argv)
{
	int i;

	if (r->o->sep || r->o->json)
		return;
	printf("\n Performance counter stats for ");
	if (r->o->w.tid)
		printf("thread %d", r->o->w.tid);
	else if (r->o->w.pid)
		printf("process %d", r->o->w.pid);
	else if (r->o->w.system_wide && r->o->w.cpus)
		printf("CPUs %s", r->o->w.cpus);
	else if (r->o->w.system_wide)
		printf("all CPUs");
	else
		for (i = 0; i < argc; i++)
			printf(i ? " %s" : "'%s", argv[i]);
	printf("%s (perfmon, PMU %s%s):\n\n", !r->o->w.pid && !r->o->w.system_wide ?
	       "'" : "", r->s->pmu.info.pmu_name,
	       r->s->nsets > 1 ? ", multiplexed" : "");
}

static int stat_final(struct stat_run *r, int argc, char **argv)
{
	struct pfmon_session *s = r->s;
	uint64_t wall = pfmon_now_ns() - r->t0;
	int i;

	if (pfmon_read_counts(s, r->now.raw, r->now.set_ns))
		return -1;
	view_scale(s, &r->now);
	stat_title(r, argc, argv);
	for (i = 0; i < s->nev; i++) {
		if (r->o->json)
			print_json(r, &r->now, i, wall, -1);
		else
			print_event(r, &r->now, i, wall, "");
	}
	if (!r->o->sep && !r->o->json)
		printf("\n%18.6f seconds time elapsed\n\n", wall / 1e9);
	return 0;
}

/* Exit code: the command's, as a shell would give it. */
static int child_exit_code(const struct pfmon_session *s)
{
	if (!s->child || !s->child_done)
		return 0;
	if (WIFEXITED(s->child_status))
		return WEXITSTATUS(s->child_status);
	return 128 + WTERMSIG(s->child_status);
}

int cmd_stat(int argc, char **argv)
{
	struct pfmon_session s = { };
	struct stat_opts o = { };
	struct stat_run r = { .s = &s, .o = &o };
	struct pfmon_loop_ops ops = { .tick = stat_tick, .arg = &r };
	int first, ret = 1;

	first = stat_parse(argc, argv, &o);
	if (first < 0)
		return 2;
	if (pfmon_session_init(&s) || pfmon_pmu_open(&s.pmu))
		goto out;
	s.switch_ns = o.switch_ms * 1000000ULL;
	if (pfmon_session_events(&s, o.w.ev_lists, o.w.nlists, o.sets, false) ||
	    view_alloc(&s, &r.now) || view_alloc(&s, &r.last) ||
	    pfmon_session_targets(&s, &o.w, argc - first, argv + first) ||
	    pfmon_session_start(&s))
		goto out;
	ops.interval_ms = o.interval_ms;
	r.t0 = pfmon_now_ns();
	r.last_ns = r.t0;
	pfmon_session_go(&s);
	if (pfmon_session_loop(&s, &ops))
		goto out;
	pfmon_session_stop(&s);
	if (!stat_final(&r, argc - first, argv + first))
		ret = child_exit_code(&s);
out:
	view_free(&r.now);
	view_free(&r.last);
	pfmon_session_free(&s);
	free(o.w.ev_lists);
	return ret;
}
