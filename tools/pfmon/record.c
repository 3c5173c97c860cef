// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon record: sample events into a file with the "ring" sampling
 * format, for pfmon report.
 *
 * Each context (thread or CPU) has its own ring; the loop drains a ring
 * when the kernel wakes the reader (half full) and when its thread ends,
 * and every ring once more at the end, so no sample is left behind and
 * every one that did not fit is counted (lost records).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pfmon.h"
#include "pfmon_data.h"

#define CAP_SYS_ADMIN_BIT	21
#define CAP_PERFMON_BIT		38

struct record_opts {
	struct pfmon_what w;
	const char *out;
	unsigned int pages;
	bool quiet;
	bool callchain;
	unsigned int freq;
};

struct record_run {
	struct pfmon_session *s;
	struct record_opts *o;
	FILE *f;
	uint64_t samples;
	uint64_t lost;
	uint64_t t0;
	bool progress;
};

static void record_usage(FILE *f)
{
	fprintf(f,
		"usage: pfmon record [-e EV[/PERIOD],...]... [-a | -C CPUS | -p PID | -t TID]\n"
		"                    [-g] [-F HZ] [-o FILE] [-m PAGES] [-q] [-- CMD [ARGS]]\n"
		"  -e EV/PERIOD  sample EV every PERIOD events (default: the PMU's\n"
		"                cycles or task-clock, every 1000000)\n"
		"  -F HZ         sample the events without a PERIOD HZ times per second\n"
		"                of counting: the kernel adjusts their period\n"
		"  -a, -C CPUS   every CPU, or those; -p PID: a running process\n"
		"  -t TID        one thread of a running process\n"
		"  -g            record user call chains (frame pointers)\n"
		"  -o FILE       output (pfmon.data)\n"
		"  -m PAGES      ring data pages per thread or CPU, a power of 2 (64)\n"
		"  -q            no progress line\n"
		"Without -a, -C, -p or -t, samples CMD and every thread and process it starts.\n");
}

/*
 * -F HZ: from 1 to what the kernel's overflow throttle lets a CPU take
 * (max_ovfl_rate; 0 there is no limit), which it would refuse anyway.
 */
static int freq_parse(const char *arg, unsigned int *freq)
{
	unsigned long long max = 0, v;
	char *end;
	FILE *f;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || !v || v > UINT32_MAX) {
		pfmon_err("-F %s: samples per second, a number from 1", arg);
		return -1;
	}
	f = fopen("/sys/kernel/perfmon/max_ovfl_rate", "re");
	if (f) {
		if (fscanf(f, "%llu", &max) != 1)
			max = 0;
		fclose(f);
	}
	if (max && v > max) {
		pfmon_err("-F %s: above the %llu overflows per second a CPU may take (/sys/kernel/perfmon/max_ovfl_rate): ask fewer, or raise it",
			  arg, max);
		return -1;
	}
	*freq = v;
	return 0;
}

/* -F: the events without a period of their own sample at a frequency. */
static void freq_apply(struct pfmon_session *s, unsigned int freq)
{
	int i;

	for (i = 0; i < s->nev && freq; i++) {
		if (s->evs[i].period_set)
			continue;
		s->evs[i].freq = freq;
		s->evs[i].period = 1;	/* the first guess: settles in a few */
	}
}

static int record_parse(int argc, char **argv, struct record_opts *o)
{
	static const struct option lo[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "call-graph", no_argument, NULL, 'g' },
		{ "freq", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	int c, ret;

	o->out = "pfmon.data";
	o->pages = 64;
	while ((c = getopt_long(argc, argv, "+e:aC:p:t:o:m:qgF:h", lo, NULL)) != -1) {
		ret = pfmon_what_opt(&o->w, c, optarg);
		if (ret < 0)
			return -1;
		if (ret)
			continue;
		switch (c) {
		case 'o':
			o->out = optarg;
			break;
		case 'm':
			o->pages = atoi(optarg);
			if (!o->pages || (o->pages & (o->pages - 1)) ||
			    o->pages > (1U << PFM_RING_MAX_ORDER)) {
				pfmon_err("-m %s: a power of 2 from 1 to %u", optarg,
					  1U << PFM_RING_MAX_ORDER);
				return -1;
			}
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'g':
			o->callchain = true;
			break;
		case 'F':
			if (freq_parse(optarg, &o->freq))
				return -1;
			break;
		case 'h':
			record_usage(stdout);
			exit(0);
		default:
			record_usage(stderr);
			return -1;
		}
	}
	if (pfmon_what_check(&o->w, optind < argc, "sample")) {
		record_usage(stderr);
		return -1;
	}
	return optind;
}

static void put(struct record_run *r, const void *rec, size_t len)
{
	fwrite(rec, len, 1, r->f);
}

static void put_comm(struct record_run *r, pid_t pid, pid_t tid)
{
	struct pfmon_rec_comm c = {
		.hdr = { PFMON_REC_COMM, sizeof(c) }, .pid = pid, .tid = tid,
	};
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(c.comm, sizeof(c.comm), f)) {
		c.comm[strcspn(c.comm, "\n")] = '\0';
		put(r, &c, sizeof(c));
	}
	fclose(f);
}

/* One line of /proc/PID/maps, when it maps code. */
static void put_map_line(struct record_run *r, pid_t pid, const char *line)
{
	unsigned long long start, end, off;
	char perms[8], path[4096] = "";
	struct pfmon_rec_mmap *m;
	size_t len;

	if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &start, &end,
		   perms, &off, path) < 4 || perms[2] != 'x')
		return;
	if (!path[0])
		snprintf(path, sizeof(path), "[anon]");
	len = (sizeof(*m) + strlen(path) + 1 + 7) & ~7UL;
	m = calloc(1, len);
	if (!m)
		return;
	m->hdr.type = PFMON_REC_MMAP;
	m->hdr.size = len;
	m->pid = pid;
	m->start = start;
	m->end = end;
	m->pgoff = off;
	strcpy(m->path, path);
	put(r, m, len);
	free(m);
}

static void put_maps(struct record_run *r, pid_t pid)
{
	char path[64], line[4352];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		put_map_line(r, pid, line);
	fclose(f);
}

/* A process seen whole: the comm of each thread, its mappings. */
static void put_process(struct record_run *r, pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			put_comm(r, pid, atoi(de->d_name));
	closedir(d);
	put_maps(r, pid);
}

/* -a: every process there is, at the start and at the end. */
static void put_all_processes(struct record_run *r)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return;
	while ((de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			put_process(r, atoi(de->d_name));
	closedir(d);
}

/* A sample's call chain, right after the sample in both files. */
static void put_chain(struct record_run *r, const struct pfm_ring_rec *rec)
{
	const struct pfm_ring_callchain *rc = (const void *)rec;
	struct pfmon_rec_callchain c = { .hdr = { PFMON_REC_CALLCHAIN } };

	if (rec->size < sizeof(*rc) || rc->nr > PFM_MAX_CALLCHAIN ||
	    rec->size < sizeof(*rc) + rc->nr * sizeof(uint64_t))
		return;
	c.nr = rc->nr;
	c.nr_kernel = rc->nr_kernel <= rc->nr ? rc->nr_kernel : 0;
	c.hdr.size = sizeof(c) + c.nr * sizeof(uint64_t);
	put(r, &c, sizeof(c));
	put(r, rc->ips, c.nr * sizeof(uint64_t));
}

static int drain_one(const struct pfm_ring_rec *rec, void *arg)
{
	struct record_run *r = arg;
	const struct pfm_ring_sample *rs = (const void *)rec;
	const struct pfm_ring_lost *rl = (const void *)rec;
	struct pfmon_rec_sample s = { .hdr = { PFMON_REC_SAMPLE, sizeof(s) } };
	struct pfmon_rec_lost l = { .hdr = { PFMON_REC_LOST, sizeof(l) } };

	if (rec->type == PFM_RING_REC_SAMPLE && rec->size >= sizeof(*rs)) {
		s.pid = rs->pid;
		s.tid = rs->tid;
		s.ip = rs->ip;
		s.time_ns = rs->tstamp;
		s.cpu = rs->cpu;
		s.event = rs->eventid;
		s.period = -rs->last_reset_val;
		put(r, &s, sizeof(s));
		r->samples++;
	} else if (rec->type == PFM_RING_REC_LOST && rec->size >= sizeof(*rl)) {
		l.lost = rl->lost;
		put(r, &l, sizeof(l));
		r->lost += rl->lost;
	} else if (rec->type == PFM_RING_REC_CALLCHAIN) {
		put_chain(r, rec);
	}
	return 0;
}

static void record_drain(struct pfmon_session *s, struct pfmon_target *t,
			 void *arg)
{
	if (t->ring.ctrl && pfm_ring_read(&t->ring, drain_one, arg) < 0)
		pfmon_warn("ring of %d: %s", t->id, strerror(errno));
}

static void drain_all(struct record_run *r)
{
	int i;

	for (i = 0; i < r->s->ntgt; i++)
		record_drain(r->s, &r->s->tgt[i], r);
}

/* A traced thread: new (its name), exec (a new image), exit (mappings). */
static void record_proc(struct pfmon_session *s, pid_t tid, int what,
			void *arg)
{
	struct record_run *r = arg;
	struct pfmon_rec_exec x = { .hdr = { PFMON_REC_EXEC, sizeof(x) } };
	pid_t pid = pfmon_thread_tgid(tid);

	if (pid < 0)	/* gone already: filed under its own id */
		pid = tid;
	switch (what) {
	case PFMON_PROC_NEW:
		put_comm(r, pid, tid);
		break;
	case PFMON_PROC_EXEC:
		/* Samples of the old image go before the new one starts. */
		drain_all(r);
		x.pid = pid;
		x.time_ns = pfmon_now_ns();
		put(r, &x, sizeof(x));
		put_process(r, pid);
		break;
	case PFMON_PROC_EXIT:
		put_comm(r, pid, tid);
		if (pid == tid)
			put_maps(r, pid);
		break;
	}
}

/* Every second: drain (so the count is true), then show progress. */
static void record_tick(struct pfmon_session *s, void *arg)
{
	struct record_run *r = arg;

	drain_all(r);
	if (r->progress)
		fprintf(stderr, "\rpfmon record: %.1f s, %" PRIu64 " samples, %" PRIu64 " lost ",
			(pfmon_now_ns() - r->t0) / 1e9, r->samples, r->lost);
}

/*
 * Does the kernel show us kernel addresses (CAP_PERFMON, CAP_SYS_ADMIN,
 * or /sys/kernel/perfmon/paranoid at 1 or below)?
 */
static bool sees_kernel(void)
{
	unsigned long long caps = 0;
	char line[128];
	FILE *f = fopen("/sys/kernel/perfmon/paranoid", "re");
	int level = 2;

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = 2;
		fclose(f);
		if (level <= 1)
			return true;
	}
	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps & (1ULL << CAP_PERFMON_BIT | 1ULL << CAP_SYS_ADMIN_BIT);
}

static void put_header(struct record_run *r, int argc, char **argv)
{
	struct pfmon_file_header h = { .version = PFMON_DATA_VERSION };
	size_t o = 0;
	int i;

	memcpy(h.magic, PFMON_DATA_MAGIC, sizeof(h.magic));
	h.hdr_size = sizeof(h);
	h.flags = (r->o->w.system_wide ? PFMON_F_SYSTEM_WIDE : 0) |
		  (sees_kernel() ? 0 : PFMON_F_KERNEL_HIDDEN);
	h.nr_events = r->s->nev;
	h.start_ns = r->t0;
	snprintf(h.pmu, sizeof(h.pmu), "%s", r->s->pmu.info.pmu_name);
	for (i = 0; i < argc && o + 1 < sizeof(h.command); i++)
		o += snprintf(h.command + o, sizeof(h.command) - o, "%s%s",
			      i ? " " : "", argv[i]);
	if (!argc)
		snprintf(h.command, sizeof(h.command), "%s",
			 r->o->w.tid ? "-t" : r->o->w.pid ? "-p" : "-a");
	put(r, &h, sizeof(h));
}

static void put_events(struct record_run *r)
{
	struct pfmon_rec_event e = { .hdr = { PFMON_REC_EVENT, sizeof(e) } };
	int i;

	for (i = 0; i < r->s->nev; i++) {
		e.id = i;
		e.period = r->s->evs[i].period;
		e.freq = r->s->evs[i].freq;
		snprintf(e.name, sizeof(e.name), "%.63s", r->s->evs[i].name);
		put(r, &e, sizeof(e));
	}
}

/* The end time into the header; then the file is complete. */
static int record_close(struct record_run *r)
{
	uint64_t end = pfmon_now_ns();
	int bad;

	fseek(r->f, offsetof(struct pfmon_file_header, end_ns), SEEK_SET);
	fwrite(&end, sizeof(end), 1, r->f);
	bad = ferror(r->f);
	if (fclose(r->f) || bad) {
		pfmon_err("%s: write error: %s", r->o->out, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * What was recorded.  A recording without a sample is no success: the
 * file is complete, but the exit status says so.  Return: 0 or 1.
 */
static int record_summary(struct record_run *r)
{
	if (r->progress)
		fputc('\n', stderr);
	fprintf(stderr, "pfmon record: %" PRIu64 " samples in %s, %" PRIu64 " lost\n",
		r->samples, r->o->out, r->lost);
	if (r->lost)
		fprintf(stderr, "  samples were lost: a bigger -m or a longer period keeps them\n");
	if (r->samples || r->lost)
		return 0;
	pfmon_err("no sample recorded: the events did not reach their period while the targets ran (a shorter period, or -F, samples more)");
	return 1;
}

static int record_start(struct record_run *r, int argc, char **argv)
{
	r->f = fopen(r->o->out, "we");
	if (!r->f) {
		pfmon_err("%s: %s", r->o->out, strerror(errno));
		return -1;
	}
	r->t0 = pfmon_now_ns();
	put_header(r, argc, argv);
	put_events(r);
	if (r->o->w.system_wide)
		put_all_processes(r);
	else if (r->o->w.pid)
		put_process(r, r->o->w.pid);
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct pfmon_session s = { };
	struct record_opts o = { };
	struct record_run r = { .s = &s, .o = &o };
	struct pfmon_loop_ops ops = {
		.tick = record_tick, .drain = record_drain,
		.proc_event = record_proc, .arg = &r,
	};
	int first, ret = 1;

	first = record_parse(argc, argv, &o);
	if (first < 0)
		return 2;
	if (pfmon_session_init(&s) || pfmon_pmu_open(&s.pmu))
		goto out;
	s.sampling = true;
	s.callchain = o.callchain;
	/* the kernel's chain too, where the kernel shows its addresses */
	s.kcallchain = o.callchain && sees_kernel();
	s.ring_pages = o.pages;
	s.switch_ns = 10000000ULL;
	if (pfmon_session_events(&s, o.w.ev_lists, o.w.nlists, false, true))
		goto out;
	freq_apply(&s, o.freq);
	if (pfmon_session_targets(&s, &o.w, argc - first, argv + first) ||
	    record_start(&r, argc - first, argv + first) ||
	    pfmon_session_start(&s))
		goto out;
	r.progress = !o.quiet && isatty(STDERR_FILENO);
	ops.interval_ms = 1000;
	pfmon_session_go(&s);
	if (pfmon_session_loop(&s, &ops))
		goto out;
	pfmon_session_stop(&s);
	drain_all(&r);
	if (o.w.system_wide)
		put_all_processes(&r);
	ret = record_close(&r) ? 1 : 0;
	r.f = NULL;
	ret |= record_summary(&r);
out:
	if (r.f)
		fclose(r.f);
	pfmon_session_free(&s);
	free(o.w.ev_lists);
	return ret;
}
