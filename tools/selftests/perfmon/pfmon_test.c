// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon, the profiling tool (tools/pfmon), run as its users run it: a
 * shell command line, its output parsed and checked against what this
 * test counts itself through the user library, against the workload's
 * known profile (hotspot: hot_loop 16, warm_loop 4, cold_loop 1 units of
 * work per round, about 76%, 19% and 5%) and against itself.
 *
 * Built as pfmon_test, and as pmuv3_pfmon_test on arm64 so that it runs
 * in the guest with the PMUv3 description (-icount 0) too.  Each case
 * looks at the registered description: the software PMU (pfm_soft) or
 * armv8_pmuv3; cases that need the other one skip.  pfmon and hotspot
 * must be on PATH (the rig puts them in /bin).
 *
 * Two properties of the QEMU guests shape the checks:
 * - TCG runs both vCPUs on one host thread: two busy vCPUs each run at
 *   half speed, in guest time (soft PMU) and in instructions (QEMU's
 *   instruction count is global under -icount).  Cases that compare
 *   thread counts run everything on CPU 0, and the exact PMUv3
 *   comparison takes CPU 1 offline (as pmuv3_test.c does).
 * - The first run of a program is its slowest: QEMU translates its
 *   code.  Time comparisons run the workload once beforehand.
 */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/personality.h>

#include "pfm_test.h"
#include "pfmon_data.h"
#include "kselftest_harness.h"

#define EV_INST_RETIRED	0x08
#define EXCL_EL1	0x80000000ull	/* PMEVTYPER P bit: not at EL1 */
#define MAX_LINES	64

/**
 * struct pmu_names - what the cases name on a PMU description
 * @model: the description's model name
 * @work: an event counting the workload's threads' time, for -e
 * @work_name: @work as pfmon prints it
 * @listed: an event pfmon list shows
 * @bad_raw: a raw code with bits outside the event field
 */
struct pmu_names {
	const char *model;
	const char *work;
	const char *work_name;
	const char *listed;
	const char *bad_raw;
};

static const struct pmu_names pmus[] = {
	{ "soft", "task-clock", "task-clock", "task-clock", "r0x1ff" },
	{ "armv8_pmuv3", "cycles:u", "cycles:u", "cpu_cycles", "r0x1ffff" },
};

/* The names for the registered description, or NULL. */
static const struct pmu_names *this_pmu(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pmus); i++)
		if (pmu_is(pmus[i].model))
			return &pmus[i];
	return NULL;
}

/* A growing NUL-terminated buffer. */
struct buf {
	char *p;
	size_t len;
	size_t cap;
};

/* Room for more, and a NUL at the end; false without memory. */
static bool buf_room(struct buf *b)
{
	char *p;

	if (b->cap - b->len < 4096) {
		p = realloc(b->p, b->cap + 65536);
		if (!p)
			return false;
		b->p = p;
		b->cap += 65536;
	}
	b->p[b->len] = '\0';
	return true;
}

/* Append what @fd has; its read()'s result (0: end of file). */
static ssize_t buf_read(struct buf *b, int fd)
{
	ssize_t n;

	if (!buf_room(b))
		return -1;
	n = read(fd, b->p + b->len, b->cap - b->len - 1);
	if (n > 0)
		b->len += n;
	b->p[b->len] = '\0';
	return n;
}

/**
 * struct run - a shell command line that ran
 * @out: its standard output, NUL-terminated
 * @err: its standard error
 * @status: its exit code, 128 + the signal that killed it, or -1
 */
struct run {
	char *out;
	char *err;
	int status;
};

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = NULL;
	r->err = NULL;
}

/* run_sh() runs its command as uid 65534 outside /dev/perfmon's group. */
static bool run_outsider;

/*
 * Run a command line with "sh -c", its stdout and stderr captured apart
 * (both read as they come: neither pipe can fill and block it).  Any
 * @r->out and @r->err are freed first.  Returns @r->status.
 */
static int run_sh(struct run *r, const char *fmt, ...)
{
	struct buf b[2] = { };
	struct pollfd pfd[2];
	int out[2], err[2], status, i, nopen = 2;
	char cmd[1024];
	va_list ap;
	pid_t pid;

	run_free(r);
	r->status = -1;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (pipe2(out, O_CLOEXEC))
		return -1;
	if (pipe2(err, O_CLOEXEC)) {
		close(out[0]);
		close(out[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		dup2(out[1], STDOUT_FILENO);
		dup2(err[1], STDERR_FILENO);
		if (run_outsider && (setgroups(0, NULL) ||
				     setresgid(65534, 65534, 65534) ||
				     setresuid(65534, 65534, 65534)))
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	pfd[0].fd = pid < 0 ? -1 : out[0];
	pfd[1].fd = pid < 0 ? -1 : err[0];
	pfd[0].events = POLLIN;
	pfd[1].events = POLLIN;
	/* An empty string at least. */
	if (!buf_room(&b[0]) || !buf_room(&b[1]))
		nopen = 0;
	while (pid > 0 && nopen) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < 2; i++) {
			if (pfd[i].fd < 0 || !pfd[i].revents)
				continue;
			if (buf_read(&b[i], pfd[i].fd) <= 0) {
				pfd[i].fd = -1;
				nopen--;
			}
		}
	}
	close(out[0]);
	close(err[0]);
	r->out = b[0].p;
	r->err = b[1].p;
	if (pid > 0 && waitpid(pid, &status, 0) == pid)
		r->status = WIFEXITED(status) ? WEXITSTATUS(status) :
			    128 + WTERMSIG(status);
	return r->status;
}

/* Does @s (NULL: nothing) contain @what? */
static bool has(const char *s, const char *what)
{
	return s && strstr(s, what);
}

/*
 * Why a case that needs the PMU description @model (NULL: any this test
 * knows) cannot run here, or NULL.
 */
static const char *cannot_run(const char *model)
{
	static char why[64];
	struct run r = { };
	int ret;

	if (!this_pmu())
		return "PMU description is neither soft nor armv8_pmuv3";
	if (model && !pmu_is(model)) {
		snprintf(why, sizeof(why), "PMU is not %s", model);
		return why;
	}
	ret = run_sh(&r, "command -v pfmon && command -v hotspot");
	run_free(&r);
	return ret ? "pfmon and hotspot are not on PATH" : NULL;
}

/* Does the PMUv3 description list INST_RETIRED (PMCEID0_EL0 bit 8)? */
static bool inst_retired_listed(void)
{
	return !access(PFM_SYSFS "pmu_desc/events/inst_retired", F_OK);
}

/* Split @line (modified) at @sep into at most @max fields; how many. */
static int split(char *line, char sep, char **f, int max)
{
	int n = 0;

	while (n < max) {
		f[n++] = line;
		line = strchr(line, sep);
		if (!line)
			return n;
		*line++ = '\0';
	}
	return n + 1;	/* more than @max */
}

static bool is_uint(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* The next line of @*text into @line (cut at @len); false at the end. */
static bool next_line(const char **text, char *line, size_t len)
{
	const char *s = *text, *nl;
	size_t n;

	if (!*s)
		return false;
	nl = strchrnul(s, '\n');
	n = nl - s < (ptrdiff_t)len - 1 ? (size_t)(nl - s) : len - 1;
	memcpy(line, s, n);
	line[n] = '\0';
	*text = *nl ? nl + 1 : nl;
	return true;
}

/* A "-x," line: [time,]value,unit,event,percent */
struct stat_line {
	double time;
	uint64_t value;
	double pct;
};

/*
 * The "-x," lines of pfmon stat's output @out that show event @name, in
 * order, up to @max: with @interval the lines of -I (a time first), else
 * the final ones.  Other lines (the command's own output) do not match:
 * a value is digits only.  Returns how many were found.
 */
static int stat_lines(const char *out, const char *name, bool interval,
		      struct stat_line *sl, int max)
{
	int nf = interval ? 5 : 4, o = interval ? 1 : 0, n = 0;
	char line[512], *f[6], *end;

	while (n < max && next_line(&out, line, sizeof(line))) {
		if (split(line, ',', f, 6) != nf || !is_uint(f[o]) ||
		    strcmp(f[o + 2], name))
			continue;
		sl[n].time = interval ? strtod(f[0], &end) : 0;
		if (interval && (end == f[0] || *end))
			continue;
		sl[n].value = strtoull(f[o], NULL, 10);
		sl[n].pct = strtod(f[o + 3], &end);
		if (end == f[o + 3] || *end)
			continue;
		n++;
	}
	return n;
}

/* The one final "-x," value of @name in @out, or -1 (none, or several). */
static int64_t stat_value(const char *out, const char *name)
{
	struct stat_line sl[2];

	if (stat_lines(out, name, false, sl, 2) != 1)
		return -1;
	return sl[0].value;
}

/* A line of pfmon report's table: overhead, samples, command, object, symbol */
struct report_row {
	double pct;
	uint64_t samples;
	char comm[64];
	char obj[256];
	char sym[256];
};

/*
 * The table lines of pfmon report's output @out (not "#..."): the first
 * @max into @rows, and the sum of the samples of all into @total.
 * Returns how many lines there are, or -1 for one that is not a row.
 */
static int report_rows(const char *out, struct report_row *rows, int max,
		       uint64_t *total)
{
	unsigned long long samples;
	struct report_row row;
	char line[1024];
	int n = 0;

	*total = 0;
	while (next_line(&out, line, sizeof(line))) {
		if (line[0] == '#' || !line[0])
			continue;
		if (sscanf(line, "%lf%% %llu %63s %255s %255s", &row.pct,
			   &samples, row.comm, row.obj, row.sym) != 5)
			return -1;
		row.samples = samples;
		*total += samples;
		if (n < max)
			rows[n] = row;
		n++;
	}
	return n;
}

/* What a pfmon data file holds, per thread. */
struct data_stats {
	uint64_t samples;
	uint64_t lost;
	int ntids;
	uint32_t tid[16];
	uint32_t pid[16];
	uint64_t tid_samples[16];
	uint64_t t_first, t_last;	/* times of the first and last samples */
	uint64_t p_first, p_last;	/* and their periods */
};

/* Read the file pfmon record wrote (pfmon_data.h); 0, or -1 when bad. */
static int data_read(const char *path, struct data_stats *ds)
{
	const struct pfmon_file_header *h;
	const struct pfmon_rec_sample *s;
	const struct pfmon_rec_lost *l;
	const struct pfmon_rec *rec;
	struct buf b = { };
	int fd, i, ret = -1;
	size_t off;

	memset(ds, 0, sizeof(*ds));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (buf_read(&b, fd) > 0)
		;
	close(fd);
	h = (const void *)b.p;
	if (b.len < sizeof(*h) || memcmp(h->magic, PFMON_DATA_MAGIC, 8) ||
	    h->version != PFMON_DATA_VERSION || h->hdr_size < sizeof(*h))
		goto out;
	for (off = h->hdr_size; off + sizeof(*rec) <= b.len; off += rec->size) {
		rec = (const void *)(b.p + off);
		if (rec->size < sizeof(*rec) || rec->size % 8 ||
		    rec->size > b.len - off)
			goto out;
		if (rec->type == PFMON_REC_LOST && rec->size >= sizeof(*l)) {
			l = (const void *)rec;
			ds->lost += l->lost;
		}
		if (rec->type != PFMON_REC_SAMPLE || rec->size < sizeof(*s))
			continue;
		s = (const void *)rec;
		if (!ds->samples++) {
			ds->t_first = s->time_ns;
			ds->p_first = s->period;
		}
		ds->t_last = s->time_ns;
		ds->p_last = s->period;
		for (i = 0; i < ds->ntids && ds->tid[i] != s->tid; i++)
			;
		if (i == 16)
			continue;
		if (i == ds->ntids) {
			ds->tid[ds->ntids] = s->tid;
			ds->pid[ds->ntids++] = s->pid;
		}
		ds->tid_samples[i]++;
	}
	ret = off == b.len ? 0 : -1;
out:
	free(b.p);
	return ret;
}

/* The only environment of a command counted exactly, pfmon's or direct. */
#define DIRECT_PATH	"PATH=/bin:/sbin:/usr/bin"

/*
 * Count "hotspot -r @rounds" directly: PMC i = @evtsel[i] and PMD i for
 * i < @n, into @vals.  The command runs as pfmon stat runs one: a child
 * held in read() on a pipe while its context is loaded, then close() of
 * the pipe, execvp(), the command, with stdout on a pipe; counting
 * starts in the ptrace stop of the exec.
 * Returns 0, or -1 (the command failed too).
 */
static int direct_count(const uint64_t *evtsel, int n, const char *rounds,
			uint64_t *vals)
{
	char *argv[4] = { "hotspot", "-r", (char *)rounds, NULL };
	int go[2], out[2], fd = -1, i, status, ret = -1;
	char c = 'g', sink[256];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -1;
	if (pipe2(out, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		dup2(out[1], STDOUT_FILENO);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		close(go[0]);
		/*
		 * The environment pfmon's command gets (DIRECT_PATH alone): the
		 * C library's start-up reads it a word at a time, so its
		 * size and alignment change the count by a few instructions.
		 */
		clearenv();
		putenv(DIRECT_PATH);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	close(out[1]);
	if (pid < 0) {
		close(go[1]);
		goto out;
	}
	/* Asleep ('S') is in that read(): its entry is not counted. */
	fd = task_wait_state(pid, 'S', 5000) ? pfm_new_ctx(0) : -1;
	for (i = 0; fd >= 0 && i < n; i++)
		if (pfm_add_ctr(fd, 0, i, evtsel[i], 0, 0))
			break;
	/*
	 * Loading needs the caller to trace the child; it stays traced
	 * to its end.  Counting starts in the stop at its exec, as pfmon
	 * does it.
	 */
	if (i == n && !ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACEEXEC) &&
	    !pfm_load(fd, pid) && write(go[1], &c, 1) == 1 &&
	    waitpid(pid, &status, __WALL) == pid && WIFSTOPPED(status) &&
	    status >> 8 == (SIGTRAP | PTRACE_EVENT_EXEC << 8) &&
	    !pfm_start(fd, NULL) && !ptrace(PTRACE_CONT, pid, 0, 0))
		ret = 0;
	close(go[1]);	/* on failure, the child ends in read() */
	if (ret)
		kill(pid, SIGKILL);	/* or in its exec stop */
	while (read(out[0], sink, sizeof(sink)) > 0)
		;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		ret = -1;
	for (i = 0; !ret && i < n; i++)
		vals[i] = pfm_read_pmd(fd, 0, i);
out:
	close(out[0]);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* Run hotspot once, so that timed runs find its code translated. */
static void warm_up(void)
{
	struct run r = { };

	run_sh(&r, "hotspot -r 20");
	run_free(&r);
}

/* Run on every online CPU again (after pin_to_cpu()); 0 or -errno. */
static int unpin(void)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/*
 * soft: pfmon stat's syscalls equal, exactly, a direct count of the same
 * command, up to what pfmon's own child does before it blocks (below);
 * task-clock is the same quantity, within a factor of 2.  Task-clock is
 * the best of 3 runs of each: the guest's two vCPUs share one host
 * thread, so anything running on the other vCPU stretches a run's time.
 * With another guest on the other host core the best runs still
 * differed both ways, by more than any percentage a time could be held
 * to (make check, -rt guest: 163.8 ms under pfmon against 101.0 direct;
 * 83 against 159; alone: 79 against 93, then 73.6 against 72.9): the
 * exact check is the syscall count, this one that task-clock counts the
 * command's time and not something else.
 */
TEST(stat_matches_library_soft)
{
	const char *why;
	const uint64_t ev[2] = { SOFT_EV_SYSCALLS, SOFT_EV_TASK_CLOCK };
	uint64_t direct[2], direct_tc = UINT64_MAX;
	int64_t sc = 0, tc = INT64_MAX, v;
	struct run r = { };
	int i;

	why = cannot_run("soft");
	if (why)
		SKIP(return, "%s", why);
	warm_up();
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, run_sh(&r, "env -i %s pfmon stat -x, -e %s -- hotspot -r 20",
				    DIRECT_PATH, "syscalls,task-clock"))
			TH_LOG("stderr: %s", r.err);
		if (!i)
			sc = stat_value(r.out, "syscalls");
		v = stat_value(r.out, "task-clock");
		ASSERT_LT(0, v) TH_LOG("stdout: %s", r.out);
		tc = v < tc ? v : tc;
		run_free(&r);
		ASSERT_EQ(0, direct_count(ev, 2, "20", direct));
		direct_tc = direct[1] < direct_tc ? direct[1] : direct_tc;
	}
	TH_LOG("syscalls: pfmon %lld, direct %llu; task-clock: pfmon %lld ns, direct %llu ns",
	       (long long)sc, (unsigned long long)direct[0], (long long)tc,
	       (unsigned long long)direct_tc);
	ASSERT_LT(0, sc);
	/*
	 * Both start counting in the exec's ptrace stop: what the child
	 * did from fork() to execve() is not counted (it was, +4 and
	 * more, when pfmon started at the fork), so the counts agree.
	 */
	EXPECT_EQ(direct[0], (uint64_t)sc);
	EXPECT_LE((uint64_t)tc, 2 * direct_tc);
	EXPECT_GE(2 * (uint64_t)tc, direct_tc);
}

/*
 * armv8_pmuv3 under -icount: pfmon's instructions:u equal a direct
 * INST_RETIRED count with EL1 excluded within 0.5%; cycles:u count too
 * (the same, under -icount 0).  CPU 1 is offline meanwhile: QEMU's
 * instruction count is global (see the file comment).
 *
 * Both runs of hotspot start with address randomization off
 * (ADDR_NO_RANDOMIZE, inherited through pfmon's fork and both execs):
 * a static program's start-up takes strlen() of the AT_PLATFORM string
 * ("aarch64"), which the kernel puts at a random 16-byte slot of its
 * stack page (arch_align_stack()), and the C library's strlen() reads a
 * string within 32 bytes of a page's end by its page-crossing path.
 * Of 600 randomized runs of a probe printing that address, the 8 whose
 * string lay at page offset 0xfe8 or 0xff8 counted 2 more user
 * instructions, and no other did; CI saw this case fail so
 * (168012928 against 168012926).  The harness runs each case in a
 * child of its own, so the personality ends with it.
 */
TEST(stat_matches_library_pmuv3)
{
	const char *why;
	const uint64_t ev = EV_INST_RETIRED | EXCL_EL1;
	bool offline = false;
	int64_t inst, cyc;
	uint64_t direct = 0;
	struct run r = { };
	int ret;

	why = cannot_run("armv8_pmuv3");
	if (why)
		SKIP(return, "%s", why);
	if (!inst_retired_listed()) {
		ASSERT_FALSE(icount_guest())
			TH_LOG("QEMU implements INST_RETIRED under -icount");
		SKIP(return, "the PMU implements no INST_RETIRED (QEMU's: only under -icount)");
	}
	ASSERT_LE(0, personality(ADDR_NO_RANDOMIZE | personality(0xffffffff)));
	if (online_cpus() >= 2) {
		ASSERT_EQ(0, pin_to_cpu(0));
		ASSERT_EQ(0, cpu_set_online(1, 0));
		offline = true;
	}
	run_sh(&r, "env -i %s pfmon stat -x, -e instructions:u,cycles:u -- hotspot -r 20",
	       DIRECT_PATH);
	ret = direct_count(&ev, 1, "20", &direct);
	if (offline)
		EXPECT_EQ(0, cpu_set_online(1, 1));
	ASSERT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(0, ret);
	inst = stat_value(r.out, "instructions:u");
	cyc = stat_value(r.out, "cycles:u");
	TH_LOG("instructions:u: pfmon %lld, direct %llu (%+lld); cycles:u %lld",
	       (long long)inst, (unsigned long long)direct,
	       (long long)(inst - (int64_t)direct), (long long)cyc);
	ASSERT_LT(0, inst) TH_LOG("stdout: %s", r.out);
	ASSERT_LT(0, cyc) TH_LOG("stdout: %s", r.out);
	EXPECT_TRUE(within_pct(inst, direct, 0.5));
	EXPECT_TRUE(within_pct(cyc, inst, 0.5));
	/*
	 * With CPU 1 offline, both count from the exec's ptrace stop the
	 * same user instructions: equal (they differed by the 155 to 181
	 * of the children's code around read() and execvp() when pfmon
	 * started at the fork).  Counting EL1 too would add far more
	 * (system calls, page faults: 726052 measured), yet less than
	 * 0.5%.
	 */
	if (offline)
		EXPECT_EQ((int64_t)direct, inst);
	run_free(&r);
}

/*
 * Rows of one event with other privilege filters are told apart: stat
 * names each as it was asked for.  Counted in one run, started and
 * stopped together, the user and the kernel rows add up to the row
 * without a filter.
 */
TEST(stat_names_keep_modifiers)
{
	const char *why;
	int64_t u, k, all;
	struct run r = { };

	why = cannot_run("armv8_pmuv3");
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, run_sh(&r, "pfmon stat -x, -e %s -- hotspot -r 2",
			    "cpu_cycles:u,cpu_cycles:k,cpu_cycles"))
		TH_LOG("stderr: %s", r.err);
	u = stat_value(r.out, "cpu_cycles:u");
	k = stat_value(r.out, "cpu_cycles:k");
	all = stat_value(r.out, "cpu_cycles");
	TH_LOG("cpu_cycles:u %lld + cpu_cycles:k %lld = %lld; cpu_cycles %lld",
	       (long long)u, (long long)k, (long long)(u + k), (long long)all);
	ASSERT_LT(0, u) TH_LOG("stdout: %s", r.out);
	ASSERT_LT(0, k) TH_LOG("stdout: %s", r.out);
	ASSERT_LT(0, all) TH_LOG("stdout: %s", r.out);
	EXPECT_LT(k, u);
	EXPECT_TRUE(within_pct(u + k, all, 1.0));
	run_free(&r);
}

/* pfmon record of "hotspot -r @rounds" into @path; its exit code. */
static int record_hotspot(struct run *r, const char *path, const char *args)
{
	unlink(path);
	return run_sh(r, "pfmon record -q -o %s -- hotspot %s", path, args);
}

/*
 * The report's first line is hot_loop, the second warm_loop, with their
 * shares of the work; the samples it shows are those in the file.
 */
TEST(record_report_hot_symbol_first)
{
	const char *why;
	const char *path = "/tmp/pfmon_test_report.data";
	struct report_row rows[MAX_LINES];
	struct data_stats ds;
	struct run r = { };
	uint64_t sum;
	int n;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, record_hotspot(&r, path, "-r 100"))
		TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(0, data_read(path, &ds));
	ASSERT_EQ(0, run_sh(&r, "pfmon report -i %s -n 3", path))
		TH_LOG("stderr: %s", r.err);
	n = report_rows(r.out, rows, MAX_LINES, &sum);
	ASSERT_LE(2, n) TH_LOG("report:\n%s", r.out);
	TH_LOG("%llu samples, %llu lost; %s %.2f%% (%llu), %s %.2f%% (%llu)",
	       (unsigned long long)ds.samples, (unsigned long long)ds.lost,
	       rows[0].sym, rows[0].pct, (unsigned long long)rows[0].samples,
	       rows[1].sym, rows[1].pct, (unsigned long long)rows[1].samples);
	EXPECT_GE(3, n);
	EXPECT_EQ(0, ds.lost);
	EXPECT_STREQ("hotspot", rows[0].comm);
	EXPECT_STREQ("hot_loop", rows[0].sym);
	EXPECT_LE(60.0, rows[0].pct);
	EXPECT_GE(90.0, rows[0].pct);
	EXPECT_STREQ("warm_loop", rows[1].sym);
	EXPECT_LE(10.0, rows[1].pct);
	EXPECT_GE(30.0, rows[1].pct);

	/* Every sample of the file, on some line of the whole table. */
	ASSERT_EQ(0, run_sh(&r, "pfmon report -i %s -n 0", path));
	n = report_rows(r.out, rows, MAX_LINES, &sum);
	TH_LOG("-n 0: %d lines, %llu samples", n, (unsigned long long)sum);
	ASSERT_LT(0, n);
	EXPECT_EQ(ds.samples, sum);
	run_free(&r);
	unlink(path);
}

/*
 * --folded: "stack count" lines, hot_loop's count that of the table,
 * every sample of the file on some line.
 */
TEST(report_folded)
{
	const char *why;
	const char *path = "/tmp/pfmon_test_folded.data";
	const char *hot = "hotspot;hotspot;hot_loop";
	struct report_row rows[MAX_LINES];
	int64_t hot_folded = -1, hot_table = -1;
	const char *text;
	struct data_stats ds;
	char line[1024], *sp;
	uint64_t sum, folded = 0;
	struct run r = { };
	int n, i, bad = 0, lines = 0;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, record_hotspot(&r, path, "-r 100"))
		TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(0, data_read(path, &ds));
	ASSERT_EQ(0, run_sh(&r, "pfmon report -i %s -n 0", path));
	n = report_rows(r.out, rows, MAX_LINES, &sum);
	for (i = 0; i < n && i < MAX_LINES; i++)
		if (!strcmp(rows[i].sym, "hot_loop") &&
		    !strcmp(rows[i].obj, "hotspot"))
			hot_table = rows[i].samples;

	ASSERT_EQ(0, run_sh(&r, "pfmon report -i %s --folded", path))
		TH_LOG("stderr: %s", r.err);
	text = r.out;
	while (next_line(&text, line, sizeof(line))) {
		lines++;
		/* ^[^ ]+ [0-9]+$ */
		sp = strchr(line, ' ');
		if (!sp || sp == line || !is_uint(sp + 1)) {
			TH_LOG("not 'stack count': '%s'", line);
			bad++;
			continue;
		}
		*sp = '\0';
		folded += strtoull(sp + 1, NULL, 10);
		if (!strcmp(line, hot))
			hot_folded = strtoull(sp + 1, NULL, 10);
	}
	TH_LOG("%d folded lines, %llu samples (file: %llu); %s %lld, table %lld",
	       lines, (unsigned long long)folded,
	       (unsigned long long)ds.samples,
	       hot, (long long)hot_folded, (long long)hot_table);
	EXPECT_LT(0, lines);
	EXPECT_EQ(0, bad);
	EXPECT_LT(0, hot_folded) TH_LOG("folded:\n%s", r.out);
	EXPECT_EQ(hot_table, hot_folded);
	EXPECT_EQ(sum, folded);
	EXPECT_EQ(ds.samples, folded);
	run_free(&r);
	unlink(path);
}

/*
 * record -g, report --folded: whole call chains, from main down to each
 * loop through its real callers, in the workload's proportions; every
 * sample of the file on some line.
 */
TEST(report_folded_call_chains)
{
	static const char * const tails[] = {
		";main;worker;hot_loop", ";main;worker;warm_loop",
		";main;worker;cold_loop;spin",
	};
	const char *path = "/tmp/pfmon_test_chains.data";
	uint64_t folded = 0, cnt[3] = { 0 }, loops, v;
	struct data_stats ds;
	const char *why, *text;
	char line[4096], *sp;
	struct run r = { };
	size_t len, tl;
	int i;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	unlink(path);
	ASSERT_EQ(0, run_sh(&r, "pfmon record -g -q -o %s -- hotspot -r 100",
			    path)) TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(0, data_read(path, &ds));
	ASSERT_EQ(0, run_sh(&r, "pfmon report -i %s --folded", path))
		TH_LOG("stderr: %s", r.err);
	text = r.out;
	while (next_line(&text, line, sizeof(line))) {
		sp = strrchr(line, ' ');
		ASSERT_TRUE(sp && is_uint(sp + 1)) TH_LOG("'%s'", line);
		*sp = '\0';
		v = strtoull(sp + 1, NULL, 10);
		folded += v;
		len = strlen(line);
		for (i = 0; i < 3; i++) {
			tl = strlen(tails[i]);
			if (len > tl && !strcmp(line + len - tl, tails[i]) &&
			    !strncmp(line, "hotspot;", 8))
				cnt[i] += v;
		}
	}
	loops = cnt[0] + cnt[1] + cnt[2];
	TH_LOG("%llu samples folded (file: %llu): hot %llu, warm %llu, cold %llu",
	       (unsigned long long)folded, (unsigned long long)ds.samples,
	       (unsigned long long)cnt[0], (unsigned long long)cnt[1],
	       (unsigned long long)cnt[2]);
	EXPECT_EQ(ds.samples, folded);
	ASSERT_LT(0, loops) TH_LOG("folded:\n%s", r.out);
	/* 16:4:1 of the work: 76%, 19%, 5% (as the table's test allows) */
	EXPECT_LE(60.0, 100.0 * cnt[0] / loops);
	EXPECT_GE(90.0, 100.0 * cnt[0] / loops);
	EXPECT_LE(10.0, 100.0 * cnt[1] / loops);
	EXPECT_GE(30.0, 100.0 * cnt[1] / loops);
	EXPECT_LT(0, cnt[2]);
	/* Nearly every sample is in the loops, through their callers. */
	EXPECT_LE(80.0, 100.0 * loops / folded);
	run_free(&r);
	unlink(path);
}

/* The sum of attribute @attr of the SVG's boxes whose @key is @val. */
static uint64_t svg_sum(const char *svg, const char *key, const char *val,
			const char *attr, int *boxes)
{
	char want[128], *end;
	const char *g, *a;
	uint64_t sum = 0;

	snprintf(want, sizeof(want), "%s=\"%s\"", key, val);
	*boxes = 0;
	for (g = strstr(svg, "<g class=\"f\""); g;
	     g = strstr(g + 1, "<g class=\"f\"")) {
		end = strchr(g, '>');
		a = strstr(g, want);
		if (!end || !a || a > end)
			continue;
		a = strstr(g, attr);
		if (a && a < end) {
			sum += strtoull(a + strlen(attr) + 2, NULL, 10);
			(*boxes)++;
		}
	}
	return sum;
}

/*
 * report --flame: an SVG whose bottom box holds every sample of the
 * file, the boxes above it as many together, and hot_loop's boxes the
 * samples of the folded stacks through it (hot_loop does not recurse,
 * so each stack holds it once at most); its script and style inside
 * (no link out).
 */
TEST(report_flame_svg)
{
	const char *path = "/tmp/pfmon_test_flame.data";
	const char *svg_path = "/tmp/pfmon_test_flame.svg";
	uint64_t all, level1, hot, hot_folded = 0;
	struct data_stats ds;
	const char *why, *text;
	char line[4096], *sp;
	struct buf svg = { };
	struct run r = { };
	int n, fd;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	unlink(path);
	ASSERT_EQ(0, run_sh(&r, "pfmon record -g -q -o %s -- hotspot -r 50",
			    path)) TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(0, data_read(path, &ds));
	ASSERT_EQ(0, run_sh(&r, "pfmon report -i %s --flame %s", path,
			    svg_path)) TH_LOG("stderr: %s", r.err);
	fd = open(svg_path, O_RDONLY);
	ASSERT_LE(0, fd);
	while (buf_read(&svg, fd) > 0)
		;
	close(fd);
	ASSERT_NE(NULL, svg.p);
	EXPECT_EQ(0, strncmp(svg.p, "<?xml", 5));
	EXPECT_TRUE(has(svg.p, "<script") && has(svg.p, "</svg>"));
	/* Self-contained: nothing fetched from elsewhere. */
	EXPECT_FALSE(has(svg.p, "xlink:href") || has(svg.p, "src=\""));
	all = svg_sum(svg.p, "data-d", "0", "data-samples", &n);
	EXPECT_EQ(1, n);
	level1 = svg_sum(svg.p, "data-d", "1", "data-samples", &n);
	hot = svg_sum(svg.p, "data-n", "hot_loop", "data-samples", &n);
	ASSERT_EQ(0, run_sh(&r, "pfmon report -i %s --folded", path));
	text = r.out;
	/* hot_loop as the leaf, or below done() and what it calls */
	while (next_line(&text, line, sizeof(line))) {
		sp = strrchr(line, ' ');
		if (sp && (strstr(line, ";hot_loop ") ||
			   strstr(line, ";hot_loop;")))
			hot_folded += strtoull(sp + 1, NULL, 10);
	}
	TH_LOG("%llu samples: all %llu, level 1 %llu, hot_loop %llu (folded %llu)",
	       (unsigned long long)ds.samples, (unsigned long long)all,
	       (unsigned long long)level1, (unsigned long long)hot,
	       (unsigned long long)hot_folded);
	EXPECT_EQ(ds.samples, all);
	EXPECT_EQ(ds.samples, level1);
	EXPECT_LT(0, hot);
	EXPECT_EQ(hot_folded, hot);
	free(svg.p);
	run_free(&r);
	unlink(path);
	unlink(svg_path);
}

/*
 * The share (%) report -g gives: of function @fn's total when @callee
 * is NULL, else of its call to @callee; -1 when not shown.
 */
static double callgraph_pct(const char *out, const char *fn,
			    const char *callee)
{
	char line[1024], name[256], *pc;
	const char *text = out;
	bool in_fn = false, calls = false;
	double total, self, p;

	while (next_line(&text, line, sizeof(line))) {
		if (line[0] == '#' || !line[0])
			continue;
		if (sscanf(line, "%lf%% %lf%% %255s", &total, &self, name) == 3) {
			in_fn = !strcmp(name, fn);
			calls = false;
			if (in_fn && !callee)
				return total;
			continue;
		}
		if (strstr(line, "called by"))
			calls = false;
		else if (strstr(line, " calls "))
			calls = true;
		pc = strchr(line, '%');
		if (!in_fn || !calls || !pc)
			continue;
		while (pc > line && pc[-1] != ' ')
			pc--;
		if (sscanf(pc, "%lf%% %255s", &p, name) == 2 &&
		    !strcmp(name, callee))
			return p;
	}
	return -1;
}

/* The number after "@key": in JSON line @line, or -1. */
static double json_num(const char *line, const char *key)
{
	char want[64];
	const char *p;

	snprintf(want, sizeof(want), "\"%s\": ", key);
	p = strstr(line, want);
	return p ? strtod(p + strlen(want), NULL) : -1;
}

/*
 * stat -j: one JSON object a line per event, each interval's with
 * "interval" (-I), the final one without; the intervals add up to no
 * more than the final count.  -x and -j together are refused.
 */
TEST(stat_json)
{
	const struct pmu_names *p = this_pmu();
	char line[1024], want[128];
	double sum = 0, final = -1, v;
	int intervals = 0, finals = 0;
	struct run r = { };
	const char *why, *text;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, run_sh(&r, "pfmon stat -j -I 100 -e %s -- hotspot -r 200",
			    p->work)) TH_LOG("stderr: %s", r.err);
	snprintf(want, sizeof(want), "\"event\": \"%s\"", p->work_name);
	text = r.out;
	while (next_line(&text, line, sizeof(line))) {
		if (line[0] != '{')
			continue;
		EXPECT_EQ('}', line[strlen(line) - 1]) TH_LOG("%s", line);
		EXPECT_TRUE(has(line, want)) TH_LOG("%s", line);
		EXPECT_LE(0, json_num(line, "raw-value")) TH_LOG("%s", line);
		EXPECT_LT(99.99, json_num(line, "pcnt-running"));
		v = json_num(line, "counter-value");
		if (has(line, "\"interval\": ")) {
			intervals++;
			sum += v;
		} else {
			finals++;
			final = v;
		}
	}
	TH_LOG("%d intervals, sum %.0f, final %.0f", intervals, sum, final);
	EXPECT_LE(3, intervals) TH_LOG("stdout: %s", r.out);
	EXPECT_EQ(1, finals);
	EXPECT_LT(0, final);
	EXPECT_GE(final, sum);
	EXPECT_LE(final / 2, sum);
	EXPECT_NE(0, run_sh(&r, "pfmon stat -j -x, -- true"));
	EXPECT_TRUE(has(r.err, "one output format")) TH_LOG("%s", r.err);
	run_free(&r);
}

/*
 * report -g: each function's total share, and each call's, are those of
 * the folded stacks through it (to the 0.01% printed): worker's total,
 * worker calling hot_loop, hot_loop's total.  Without call chains it
 * refuses, naming record -g.
 */
TEST(report_call_graph)
{
	const char *path = "/tmp/pfmon_test_cg.data";
	uint64_t all = 0, worker = 0, w_hot = 0, hot = 0, n;
	double got, want;
	char line[4096], *sp;
	struct run r = { };
	const char *why, *text;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, run_sh(&r, "pfmon record -g -q -o %s -- hotspot -r 50",
			    path)) TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(0, run_sh(&r, "pfmon report -i %s --folded", path));
	text = r.out;
	while (next_line(&text, line, sizeof(line))) {
		sp = strrchr(line, ' ');
		if (!sp)
			continue;
		n = strtoull(sp + 1, NULL, 10);
		*sp = ';';	/* every frame between ';' */
		all += n;
		worker += strstr(line, ";worker;") ? n : 0;
		w_hot += strstr(line, ";worker;hot_loop;") ? n : 0;
		hot += strstr(line, ";hot_loop;") ? n : 0;
	}
	ASSERT_LT(0, all);
	ASSERT_EQ(0, run_sh(&r, "pfmon report -i %s -g -n 0", path))
		TH_LOG("stderr: %s", r.err);
	got = callgraph_pct(r.out, "worker", NULL);
	want = 100.0 * worker / all;
	TH_LOG("worker %.2f%% (folded %.2f%%)", got, want);
	EXPECT_GT(0.006, fabs(got - want));
	got = callgraph_pct(r.out, "worker", "hot_loop");
	want = 100.0 * w_hot / all;
	TH_LOG("worker calls hot_loop %.2f%% (folded %.2f%%)", got, want);
	EXPECT_GT(0.006, fabs(got - want));
	got = callgraph_pct(r.out, "hot_loop", NULL);
	want = 100.0 * hot / all;
	TH_LOG("hot_loop %.2f%% (folded %.2f%%)", got, want);
	EXPECT_GT(0.006, fabs(got - want));
	/* hotspot's hot_loop: 16 of 21 parts of the work */
	EXPECT_LT(60.0, got);
	ASSERT_EQ(0, run_sh(&r, "pfmon record -q -o %s -- hotspot -r 5", path));
	EXPECT_EQ(1, run_sh(&r, "pfmon report -i %s -g", path));
	EXPECT_TRUE(has(r.err, "record with -g")) TH_LOG("%s", r.err);
	run_free(&r);
	unlink(path);
}

/* Copy @src to @dst, its last @cut bytes left out; 0 or -1. */
static int copy_cut(const char *src, const char *dst, size_t cut,
		    struct buf *b)
{
	int fd = open(src, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	b->len = 0;
	while (buf_read(b, fd) > 0)
		;
	close(fd);
	if (!b->p || b->len <= cut)
		return -1;
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	ret = write(fd, b->p, b->len - cut) == (ssize_t)(b->len - cut) ? 0 : -1;
	close(fd);
	return ret;
}

/* The offset of the last record of @type, @min bytes at least, or 0. */
static size_t last_rec_of(const struct buf *b, uint32_t type, uint32_t min)
{
	const struct pfmon_file_header *h = (const void *)b->p;
	const struct pfmon_rec *rec;
	size_t off, last = 0;

	if (b->len < sizeof(*h))
		return 0;
	for (off = h->hdr_size; off + sizeof(*rec) <= b->len; off += rec->size) {
		rec = (const void *)(b->p + off);
		if (rec->size < sizeof(*rec) || rec->size > b->len - off)
			break;
		if (rec->type == type && rec->size >= min)
			last = off;
	}
	return last;
}

/* Whether @path starts with perf.data's magic. */
static bool is_perf_data(const char *path)
{
	char magic[8];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = read(fd, magic, 8) == 8 && !memcmp(magic, "PERFILE2", 8);
	close(fd);
	return ok;
}

/*
 * pfmon export writes perf.data (check-export.sh has perf read one on
 * the host); pfmon report and export on a recording cut short (the
 * recorder killed mid-record) keep the records before the cut, with a
 * warning; on a corrupt record both fail naming its offset, export
 * writing nothing.
 */
TEST(export_and_damaged_recordings)
{
	const char *path = "/tmp/pfmon_test_dmg.data";
	const char *cut = "/tmp/pfmon_test_dmg_cut.data";
	const char *bad = "/tmp/pfmon_test_dmg_bad.data";
	const char *out = "/tmp/pfmon_test_dmg.perf";
	const struct pfmon_file_header *h;
	char want[96];
	struct data_stats ds;
	size_t chain;
	int i;
	struct buf b = { };
	struct run r = { };
	const char *why;
	uint32_t size;
	int fd;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, run_sh(&r, "pfmon record -g -q -o %s -- hotspot -r 30",
			    path)) TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(0, data_read(path, &ds));
	unlink(out);
	EXPECT_EQ(0, run_sh(&r, "pfmon export -i %s -o %s", path, out))
		TH_LOG("stderr: %s", r.err);
	snprintf(want, sizeof(want), "%llu samples (%llu with call chains)",
		 (unsigned long long)ds.samples, (unsigned long long)ds.samples);
	EXPECT_TRUE(has(r.err, want)) TH_LOG("want %s: %s", want, r.err);
	EXPECT_TRUE(is_perf_data(out));

	/*
	 * Cut short 20 bytes before the end (in whichever record is
	 * last), then in the middle of the last call chain record of two
	 * frames or more.
	 */
	ASSERT_EQ(0, copy_cut(path, cut, 20, &b));
	for (i = 0; i < 2; i++) {
		if (i) {
			chain = last_rec_of(&b, PFMON_REC_CALLCHAIN, 32);
			ASSERT_LT(0, chain);
			ASSERT_LT(chain + 20, b.len);
			ASSERT_EQ(0, copy_cut(path, cut, b.len - chain - 20, &b))
				TH_LOG("%zu bytes, the last chain at %zu", b.len,
				       chain);
		}
		EXPECT_EQ(0, run_sh(&r, "pfmon report -i %s -n 3", cut));
		EXPECT_TRUE(has(r.err, "truncated at offset")) TH_LOG("%s", r.err);
		EXPECT_TRUE(has(r.out, "hot_loop")) TH_LOG("%s", r.out);
		unlink(out);
		EXPECT_EQ(0, run_sh(&r, "pfmon export -i %s -o %s", cut, out));
		EXPECT_TRUE(has(r.err, "truncated at offset")) TH_LOG("%s", r.err);
		EXPECT_TRUE(is_perf_data(out));
	}

	/* The first record's size not a multiple of 8: corrupt. */
	h = (const void *)b.p;
	ASSERT_LE(sizeof(*h) + 8, b.len);
	size = 12;
	fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)b.len, write(fd, b.p, b.len));
	ASSERT_EQ(4, pwrite(fd, &size, 4, h->hdr_size + 4));
	close(fd);
	snprintf(want, sizeof(want), "corrupt record at offset %u (type",
		 h->hdr_size);
	EXPECT_EQ(1, run_sh(&r, "pfmon report -i %s", bad));
	EXPECT_TRUE(has(r.err, want)) TH_LOG("want %s: %s", want, r.err);
	unlink(out);
	EXPECT_EQ(1, run_sh(&r, "pfmon export -i %s -o %s", bad, out));
	EXPECT_TRUE(has(r.err, want)) TH_LOG("want %s: %s", want, r.err);
	EXPECT_NE(0, access(out, F_OK));
	EXPECT_EQ(1, run_sh(&r, "pfmon export -i /proc/version -o %s", out));
	EXPECT_TRUE(has(r.err, "not a pfmon data file")) TH_LOG("%s", r.err);
	free(b.p);
	run_free(&r);
	unlink(path);
	unlink(cut);
	unlink(bad);
	unlink(out);
}

/*
 * record -g of a program built without frame pointers (the guest's
 * busybox-static, Debian's: 116 frame setups in its 5,600 returns
 * on x86_64): its frame pointer register holds
 * anything, so chains stop at the first frame the kernel cannot read
 * or that does not go up the stack.  The recording and its report
 * still hold every sample, no chain over PFM_MAX_CALLCHAIN frames.
 */
TEST(callchains_without_frame_pointers)
{
	const char *path = "/tmp/pfmon_test_nofp.data";
	uint64_t folded = 0, lines = 0, deepest = 0, frames;
	char line[8192], *sp, *c;
	struct data_stats ds;
	struct run r = { };
	const char *why, *text;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	if (access("/bin/busybox", X_OK))
		SKIP(return, "no /bin/busybox in this guest");
	ASSERT_EQ(0, run_sh(&r, "pfmon record -g -q -o %s -- /bin/busybox sh -c %s",
			    path, "'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'"))
		TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(0, data_read(path, &ds));
	ASSERT_EQ(0, run_sh(&r, "pfmon report -i %s --folded", path))
		TH_LOG("stderr: %s", r.err);
	text = r.out;
	while (next_line(&text, line, sizeof(line))) {
		sp = strrchr(line, ' ');
		if (!sp)
			continue;
		folded += strtoull(sp + 1, NULL, 10);
		lines++;
		for (frames = 1, c = line; c < sp; c++)
			frames += *c == ';';
		deepest = frames > deepest ? frames : deepest;
	}
	TH_LOG("%llu samples, %llu stacks, the deepest %llu frames",
	       (unsigned long long)ds.samples, (unsigned long long)lines,
	       (unsigned long long)deepest);
	EXPECT_LT(0, ds.samples);
	EXPECT_EQ(ds.samples, folded);
	/* comm, the kernel IP, the user chain */
	EXPECT_GE(2 + PFMON_MAX_CHAIN, deepest);
	run_free(&r);
	unlink(path);
}

/* The CPU time (ns) hotspot's last line in @out gives, or -1. */
static int64_t hotspot_cpu_ns(const char *out)
{
	const char *line = strstr(out, "hotspot: ");
	const char *cpu = line ? strstr(line, ", cpu ") : NULL;
	long long us;

	if (!cpu || sscanf(cpu, ", cpu %lld us", &us) != 1)
		return -1;
	return us * 1000;
}

/*
 * pfmon stat's count of hotspot with @threads threads, and in *@cpu the
 * CPU time the kernel accounted to hotspot itself (not to pfmon or the
 * shell, which a slow guest's exec and startup make a large share).
 */
static int64_t stat_threads(struct __test_metadata *_metadata,
			    const struct pmu_names *p, int threads,
			    int64_t *cpu)
{
	struct run r = { };
	int64_t v;

	if (run_sh(&r, "pfmon stat -x, -e %s -- hotspot -r 50 -t %d",
		   p->work, threads)) {
		TH_LOG("stderr: %s", r.err);
		run_free(&r);
		return -1;
	}
	*cpu = hotspot_cpu_ns(r.out);
	v = stat_value(r.out, p->work_name);
	run_free(&r);
	return v;
}

/*
 * The threads a command creates are followed: stat counts both threads,
 * and record has samples of both.  On CPU 0 only, each count is
 * compared with the CPU time the kernel accounted to the same run (a
 * clock within 20% of it; cycles at the same rate for one thread as for
 * two), because a guest whose vCPU the host preempts runs one thread
 * longer (seen with two guests on two host cores: 1 thread 458 ms, 2
 * threads 497 ms).  One thread of two missed would count half the time.
 */

TEST(threads_followed)
{
	const char *why;
	const char *path = "/tmp/pfmon_test_threads.data";
	const struct pmu_names *p = this_pmu();
	bool clock = !strcmp(p->work, "task-clock");
	int64_t count[3], cpu[3];
	struct data_stats ds;
	struct run r = { };
	int i;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, pin_to_cpu(0));
	warm_up();
	for (i = 1; i <= 2; i++) {
		count[i] = stat_threads(_metadata, p, i, &cpu[i]);
		ASSERT_LT(0, count[i]);
		ASSERT_LT(0, cpu[i]);
		TH_LOG("%s: %d thread(s) %lld, CPU time of hotspot %lld ns",
		       p->work, i, (long long)count[i], (long long)cpu[i]);
		if (clock)
			EXPECT_TRUE(within_pct(count[i], cpu[i], 20.0));
	}
	ASSERT_EQ(0, unpin());
	/*
	 * Events per ns of CPU time, alike for one thread and two: without
	 * -icount the host's preemption gives the two threads less CPU
	 * than twice one's (1 thread 454 ms, 2 threads 739 ms; cycles:u
	 * 411 and 613 million: 25% under twice one's count).
	 */
	if (!clock)
		EXPECT_TRUE(within_pct(count[2] * (double)cpu[1],
				       count[1] * (double)cpu[2], 20.0));

	/* Both threads of one process, each about half of the samples. */
	ASSERT_EQ(0, record_hotspot(&r, path, "-r 50 -t 2"))
		TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(0, data_read(path, &ds));
	for (i = 0; i < ds.ntids; i++)
		TH_LOG("pid %u tid %u: %llu of %llu samples", ds.pid[i],
		       ds.tid[i], (unsigned long long)ds.tid_samples[i],
		       (unsigned long long)ds.samples);
	ASSERT_EQ(2, ds.ntids);
	EXPECT_EQ(ds.pid[0], ds.pid[1]);
	EXPECT_TRUE(ds.tid[0] == ds.pid[0] || ds.tid[1] == ds.pid[0]);
	for (i = 0; i < 2; i++)
		EXPECT_LE(ds.samples * 3 / 10, ds.tid_samples[i]);
	run_free(&r);
	unlink(path);
}

/*
 * soft: five events on four counters go in two sets; task-clock, in
 * each, counts about half of the time and is scaled to about what the
 * run took: the two sets' unscaled counts added up, since the sets
 * share the thread's time, and within 20% of the CPU time hotspot says
 * it took (which counts its exec and start too).  hotspot sleeps 200 us
 * a round: alone on
 * an idle CPU it may not be switched out once, and context-switches (in
 * one set) would rightly be 0.
 */
TEST(multiplexed_estimates)
{
	const char *why;
	struct stat_line tc[4];
	int64_t cpu;
	double run_ns = 0;
	struct run r = { };
	int n, i;

	why = cannot_run("soft");
	if (why)
		SKIP(return, "%s", why);
	warm_up();
	ASSERT_EQ(0, run_sh(&r, "pfmon stat -x, -e %s -- hotspot -r 100 -s 200",
			    "task-clock,cpu-clock,context-switches,syscalls,task-clock"))
		TH_LOG("stderr: %s", r.err);
	/*
	 * The reference is the CPU time of the same run: under TCG one
	 * run of hotspot took 433 ms and the next 801.
	 */
	cpu = hotspot_cpu_ns(r.out);
	ASSERT_LT(0, cpu) TH_LOG("stdout: %s", r.out);
	n = stat_lines(r.out, "task-clock", false, tc, 4);
	ASSERT_EQ(2, n) TH_LOG("stdout: %s", r.out);
	for (i = 0; i < n; i++)
		run_ns += tc[i].value * tc[i].pct / 100.0;
	for (i = 0; i < n; i++) {
		TH_LOG("task-clock %d: %llu ns at %.2f%% (run: %.0f ns, hotspot's CPU: %lld ns)",
		       i, (unsigned long long)tc[i].value, tc[i].pct, run_ns,
		       (long long)cpu);
		EXPECT_LE(30.0, tc[i].pct);
		EXPECT_GE(70.0, tc[i].pct);
		EXPECT_TRUE(within_pct(tc[i].value, (uint64_t)run_ns, 15.0));
		EXPECT_TRUE(within_pct(tc[i].value, cpu, 20.0));
	}
	/* The two sets share the time. */
	EXPECT_TRUE(tc[0].pct + tc[1].pct > 99.9 && tc[0].pct + tc[1].pct < 100.1);
	EXPECT_LT(0, stat_value(r.out, "cpu-clock"));
	TH_LOG("context-switches %lld, syscalls %lld",
	       (long long)stat_value(r.out, "context-switches"),
	       (long long)stat_value(r.out, "syscalls"));
	EXPECT_LT(0, stat_value(r.out, "context-switches"));
	EXPECT_LT(0, stat_value(r.out, "syscalls"));
	run_free(&r);
}

/*
 * -I 100: a line per 100 ms, times increasing; they are differences of
 * the running count, so they add up to no more than the final count.
 */
TEST(interval_output)
{
	const char *why;
	const struct pmu_names *p = this_pmu();
	struct stat_line iv[MAX_LINES];
	uint64_t sum = 0;
	int64_t total;
	struct run r = { };
	double dt;
	int n, i;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, run_sh(&r, "pfmon stat -x, -I 100 -e %s -- hotspot -r 200",
			    p->work)) TH_LOG("stderr: %s", r.err);
	n = stat_lines(r.out, p->work_name, true, iv, MAX_LINES);
	total = stat_value(r.out, p->work_name);
	ASSERT_LE(3, n) TH_LOG("stdout: %s", r.out);
	ASSERT_LT(0, total) TH_LOG("stdout: %s", r.out);
	for (i = 0; i < n; i++) {
		dt = iv[i].time - (i ? iv[i - 1].time : 0);
		TH_LOG("%.6f s (+%.3f): %llu %.2f%%", iv[i].time, dt,
		       (unsigned long long)iv[i].value, iv[i].pct);
		sum += iv[i].value;
		/*
		 * pfmon keeps to a 100 ms grid: a late line is followed by
		 * a short one (the debug kernel: +0.228 s, then +0.024 s),
		 * where the host's preemption of the vCPU makes it late
		 * (the slack).  Under -icount guest time is the
		 * instructions run, yet the lines are not all 100 ms apart
		 * there: on 6.1 +0.01% after the first (natively; over
		 * pfm_perf up to 3.9 ms late, the next as much early), on
		 * 6.12 natively every line 200 ms after the last (+0.200 s,
		 * 200 million instructions each), a cause not found yet; so
		 * no tighter bound than elsewhere.
		 */
		EXPECT_LT(0.05 / timing_slack(), dt);
		EXPECT_GT(0.5 * timing_slack(), dt);
		EXPECT_LT(0, iv[i].value);
		EXPECT_TRUE(iv[i].pct > 99.99);
		/* One thread's task-clock cannot outrun the interval. */
		if (pmu_is("soft"))
			EXPECT_GE(dt * 1.2e9, (double)iv[i].value);
	}
	TH_LOG("%d intervals, sum %llu, final %lld", n,
	       (unsigned long long)sum, (long long)total);
	EXPECT_GE((uint64_t)total, sum);
	EXPECT_LE((uint64_t)total / 2, sum);
	run_free(&r);
}

/* soft, -a: cpu-clock counts the wall time of every CPU. */
TEST(system_wide)
{
	const char *why;
	const double secs = 0.3;
	int cpus = online_cpus();
	struct stat_line sl[2];
	struct run r = { };
	uint64_t t0, wall;

	why = cannot_run("soft");
	if (why)
		SKIP(return, "%s", why);
	if (getuid() != 0)
		SKIP(return, "CPU-wide sessions need root");
	t0 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, run_sh(&r, "pfmon stat -a -x, -e cpu-clock -- sleep %.1f",
			    secs)) TH_LOG("stderr: %s", r.err);
	wall = clock_ns(CLOCK_MONOTONIC) - t0;
	ASSERT_EQ(1, stat_lines(r.out, "cpu-clock", false, sl, 2))
		TH_LOG("stdout: %s", r.out);
	TH_LOG("cpu-clock %llu ns over %d CPUs: %.3f s per CPU, pfmon ran %.3f s",
	       (unsigned long long)sl[0].value, cpus,
	       sl[0].value / 1e9 / cpus, wall / 1e9);
	/* Every CPU counted while the command slept, and not past pfmon. */
	EXPECT_LE((uint64_t)(secs * 1e9 * cpus), sl[0].value);
	EXPECT_GE(wall * cpus, sl[0].value);
	EXPECT_TRUE(sl[0].pct > 99.99);
	run_free(&r);
}

/*
 * An event the PMU does not implement (PMUv3: not in PMCEID, so not in
 * pmu_desc/events/) is refused by name, and stat's default set leaves
 * it out: QEMU implements INST_RETIRED only under -icount.
 */
TEST(unimplemented_event_refused)
{
	struct run r = { };
	const char *why;

	why = cannot_run("armv8_pmuv3");
	if (why)
		SKIP(return, "%s", why);
	if (inst_retired_listed())
		SKIP(return, "the PMU implements INST_RETIRED");
	EXPECT_EQ(1, run_sh(&r, "pfmon stat -e instructions:u -- true"));
	EXPECT_TRUE(has(r.err, "does not implement event 0x8"))
		TH_LOG("stderr: %s", r.err);
	EXPECT_EQ(0, run_sh(&r, "pfmon stat -x, -- hotspot -r 5"))
		TH_LOG("stderr: %s", r.err);
	EXPECT_LT(0, stat_value(r.out, "cycles"));
	EXPECT_FALSE(has(r.out, "instructions")) TH_LOG("%s", r.out);
	run_free(&r);
}

/**
 * struct refusal - a command pfmon must refuse
 * @cmd: the command line
 * @status: its exit code
 * @msg: what its stderr says
 * @soft_only: only the soft PMU refuses it
 */
struct refusal {
	const char *cmd;
	int status;
	const char *msg;
	bool soft_only;
};

/* Each refusal: its exit code, a message that says why. */
TEST(refusals)
{
	const char *why;
	const struct pmu_names *p = this_pmu();
	char bad_raw[128], empty[160];
	const struct refusal ref[] = {
		{ "pfmon stat -e bogus -- true", 1, "unknown event" },
		{ bad_raw, 1, "bits outside the event field" },
		{ "pfmon stat -e task-clock:u -- true", 1, "cannot filter", true },
		{ "pfmon record -m 3 -- true", 2, "power of 2" },
		{ "pfmon stat", 2, "nothing to count" },
		{ "pfmon report -i /nonexistent", 1, "/nonexistent" },
		{ "pfmon report -i /tmp/pfmon_test_garbage", 1,
		  "not a pfmon data file" },
		{ "pfmon stat -- /nonexistent-cmd", 127, "cannot run" },
		{ "pfmon stat -p 999999", 1, "no such process" },
		{ "pfmon record -t 999999", 2, "no such thread" },
		{ "pfmon record -F 0 -- true", 2, "a number from 1" },
		{ "pfmon record -F 4000000000 -- true", 2, "max_ovfl_rate" },
		{ "pfmon stat -t 1 -- true", 2, "neither -a/-C nor a command" },
		/* a period of 10^12: a recording with no sample fails */
		{ empty, 1, "no sample recorded" },
	};
	struct run r = { };
	size_t i;
	int fd;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	snprintf(bad_raw, sizeof(bad_raw), "pfmon stat -e %s -- true",
		 p->bad_raw);
	snprintf(empty, sizeof(empty),
		 "pfmon record -q -o /tmp/pfmon_test_empty.data -e %s/1000000000000 -- true",
		 p->work);
	/* Not a pfmon file: text longer than a header. */
	fd = open("/tmp/pfmon_test_garbage", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, fd);
	for (i = 0; i < 64; i++)
		ASSERT_EQ(16, write(fd, "not pfmon data\n\n", 16));
	close(fd);
	for (i = 0; i < ARRAY_SIZE(ref); i++) {
		if (ref[i].soft_only && !pmu_is("soft"))
			continue;
		run_sh(&r, "%s", ref[i].cmd);
		TH_LOG("%s: exit %d, %.*s", ref[i].cmd, r.status,
		       (int)strcspn(r.err, "\n"), r.err);
		EXPECT_EQ(ref[i].status, r.status);
		EXPECT_TRUE(has(r.err, ref[i].msg))
			TH_LOG("stderr: %s", r.err);
	}
	run_free(&r);
	unlink("/tmp/pfmon_test_garbage");
	unlink("/tmp/pfmon_test_empty.data");
}

/*
 * A user outside /dev/perfmon's group (the guests give it to one, as the
 * udev rule does) is told how to get in, and pfmon fails.
 */
TEST(device_closed_explained)
{
	const char *why;
	struct run r = { };

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	if (getuid() != 0)
		SKIP(return, "needs root to switch users");
	run_outsider = true;
	run_sh(&r, "pfmon stat -e %s -- true", this_pmu()->work);
	run_outsider = false;
	TH_LOG("exit %d, stderr: %s", r.status, r.err);
	EXPECT_EQ(1, r.status);
	EXPECT_TRUE(has(r.err, "Permission denied"));
	EXPECT_TRUE(has(r.err, "\"The device node\""));
	run_free(&r);
}

/*
 * Start hotspot with @argv (stdout to /dev/null) and wait, up to 2 s,
 * until @ready(pid, @data) says it has come far enough: its pid, or -1
 * (the child killed and reaped).
 */
static pid_t hotspot_spawn(char *const argv[],
			   bool (*ready)(pid_t pid, void *data), void *data)
{
	int tries;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execvp("hotspot", argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	for (tries = 0; tries < 2000; tries++) {
		if (ready(pid, data))
			return pid;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/* What hotspot_n() waits for: @threads threads, one of them in *@tid. */
struct threads_up {
	int threads;
	pid_t *tid;
};

static bool all_threads_up(pid_t pid, void *data)
{
	struct threads_up *up = data;
	struct dirent *de;
	char path[64];
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	*up->tid = 0;
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.' && ++n && atoi(de->d_name) != pid)
			*up->tid = atoi(de->d_name);
	if (d)
		closedir(d);
	return n == up->threads && *up->tid;
}

/*
 * Start "hotspot -t @threads -r @rounds"; when all its threads exist, its
 * pid, and one that is not the main one in *@tid.
 */
static pid_t hotspot_n(int threads, const char *rounds, pid_t *tid)
{
	struct threads_up up = { .threads = threads, .tid = tid };
	char nt[16];
	char *argv[6] = { "hotspot", "-t", nt, "-r", (char *)rounds, NULL };

	snprintf(nt, sizeof(nt), "%d", threads);
	return hotspot_spawn(argv, all_threads_up, &up);
}

/* hotspot_n() of 2 threads. */
static pid_t hotspot_threads(const char *rounds, pid_t *tid)
{
	return hotspot_n(2, rounds, tid);
}

/*
 * -t TID samples that thread alone, -p PID every thread of the process.
 * hotspot runs far longer than the test (1,000,000 rounds) and a
 * subshell kills it 2 s after pfmon starts, which ends pfmon: a thread
 * that ended on its own before pfmon attached, on a busy host, made
 * -t fail and -p see one thread.
 */
TEST(attach_pid_and_tid)
{
	const char *path = "/tmp/pfmon_test_attach.data";
	struct data_stats ds;
	struct run r = { };
	const char *why;
	pid_t pid, tid;
	int status;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	pid = hotspot_threads("1000000", &tid);
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, run_sh(&r, "(sleep 2; kill %d) & pfmon record -q -o %s -t %d",
			    pid, path, tid))
		TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, data_read(path, &ds));
	TH_LOG("-t %d: %llu samples, %d thread(s), the first %u of pid %u",
	       tid, (unsigned long long)ds.samples, ds.ntids, ds.tid[0],
	       ds.pid[0]);
	EXPECT_LT(0, ds.samples);
	EXPECT_EQ(1, ds.ntids);
	EXPECT_EQ((uint32_t)tid, ds.tid[0]);
	EXPECT_EQ((uint32_t)pid, ds.pid[0]);
	EXPECT_EQ(0, run_sh(&r, "pfmon report -i %s -n 2", path));
	EXPECT_TRUE(has(r.out, "hot_loop")) TH_LOG("%s", r.out);

	pid = hotspot_threads("1000000", &tid);
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, run_sh(&r, "(sleep 2; kill %d) & pfmon record -q -o %s -p %d",
			    pid, path, pid))
		TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, data_read(path, &ds));
	TH_LOG("-p %d: %llu samples, %d thread(s)", pid,
	       (unsigned long long)ds.samples, ds.ntids);
	EXPECT_LT(0, ds.samples);
	EXPECT_EQ(2, ds.ntids);
	EXPECT_FALSE(has(r.err, "ended before")) TH_LOG("stderr: %s", r.err);
	run_free(&r);
	unlink(path);
}

/* hotspot_late() waits until the child runs hotspot, not the test. */
static bool runs_hotspot(pid_t pid, void *data)
{
	char path[64], comm[32] = "";
	FILE *f;

	(void)data;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (f && !fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	if (f)
		fclose(f);
	return !strcmp(comm, "hotspot\n");
}

/*
 * "hotspot -t 3 -l 500000": its pid once it runs hotspot, with one
 * thread; two more come 0.5 s later.
 */
static pid_t hotspot_late(void)
{
	char *argv[8] = { "hotspot", "-t", "3", "-l", "500000",
			 "-r", "1000000", NULL };

	return hotspot_spawn(argv, runs_hotspot, NULL);
}

/*
 * record -p follows the threads the process creates after pfmon
 * attached: all three have samples, in the one recording.
 */
TEST(attach_pid_follows_new_threads)
{
	const char *path = "/tmp/pfmon_test_follow.data";
	struct data_stats ds;
	struct run r = { };
	const char *why;
	int i, status;
	pid_t pid;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	pid = hotspot_late();
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, run_sh(&r, "(sleep 2; kill %d) & pfmon record -q -o %s -p %d",
			    pid, path, pid))
		TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, data_read(path, &ds));
	TH_LOG("-p %d: %llu samples, %d thread(s)", pid,
	       (unsigned long long)ds.samples, ds.ntids);
	EXPECT_EQ(3, ds.ntids);
	for (i = 0; i < ds.ntids; i++) {
		TH_LOG("thread %u of %u: %llu samples", ds.tid[i], ds.pid[i],
		       (unsigned long long)ds.tid_samples[i]);
		EXPECT_EQ((uint32_t)pid, ds.pid[i]);
		EXPECT_LT(0, ds.tid_samples[i]);
	}
	EXPECT_FALSE(has(r.err, "unmonitored")) TH_LOG("stderr: %s", r.err);
	run_free(&r);
	unlink(path);
}

/*
 * attach_soak's window starts once pfmon loaded a context on each of the
 * 4 threads (up to 2 s): over pfm_perf an attach takes 20 to 35 ms a
 * thread, and pfmon's start some more, so a window timed from pfmon's
 * launch left the last thread 0 to 5 ms of counting in 3 rounds of 100
 * (start to stop 0.5 to 1.4 ms, no sample).
 */
#define SOAK_ATTACHED \
	"i=0; while [ $(cat " PFM_SYSFS "task_sessions_count) -lt 4 ] && " \
	"[ $i -lt 200 ]; do sleep 0.01; i=$((i + 1)); done"
/* ... then 0.3 s, and Ctrl-C to pfmon ($m). */
#define SOAK_WINDOW	"sleep 0.3; kill -INT $m; wait $m"

/* Rounds of attach_soak: PFM_SOAK_ROUNDS (make soak), else none. */
static int soak_rounds(void)
{
	const char *v = getenv("PFM_SOAK_ROUNDS");

	return v && atoi(v) > 0 ? atoi(v) : 0;
}

FIXTURE(soak) {
	int unused;
};

FIXTURE_SETUP(soak)
{
}

FIXTURE_TEARDOWN(soak)
{
}

/*
 * A soak of the attach path (make soak): a running process of 4 threads
 * is counted (stat -p), then sampled (record -p), 0.3 s each once
 * attached, then let go, round after round.  Each round counts and has
 * samples of all 4 threads; the process runs on untouched; no session
 * is left.  About 1 s a round: the harness's 30 s would cut it short.
 */
TEST_F_TIMEOUT(soak, attach_soak, 1200)
{
	const char *path = "/tmp/pfmon_test_soak.data";
	const struct pmu_names *p = this_pmu();
	int i, k, rounds = soak_rounds(), bad = 0;
	struct data_stats ds;
	struct run r = { };
	const char *why;
	pid_t pid, tid;
	int64_t v;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	if (!rounds)
		SKIP(return, "a soak: PFM_SOAK_ROUNDS=N (make soak)");
	pid = hotspot_n(4, "100000000", &tid);
	ASSERT_LT(0, pid);
	for (i = 0; i < rounds; i++) {
		/* Without the stat between, no round failed (60 of 60). */
		if (getenv("PFM_SOAK_NOSTAT"))
			goto record;
		run_sh(&r, "pfmon stat -x, -e %s -p %d & m=$!; %s; %s",
		       p->work, pid, SOAK_ATTACHED, SOAK_WINDOW);
		v = stat_value(r.out, p->work_name);
		if (r.status || v <= 0) {
			bad++;
			TH_LOG("round %d: stat exit %d, %lld counted: %s", i,
			       r.status, (long long)v, r.err);
		}
record:
		run_sh(&r, "pfmon record -q -o %s -p %d & m=$!; %s; %s",
		       path, pid, SOAK_ATTACHED, SOAK_WINDOW);
		memset(&ds, 0, sizeof(ds));
		if (r.status || data_read(path, &ds) || ds.ntids != 4 ||
		    !ds.tid_samples[0] || !ds.tid_samples[1] ||
		    !ds.tid_samples[2] || !ds.tid_samples[3]) {
			bad++;
			TH_LOG("round %d: record exit %d, %d thread(s): %s",
			       i, r.status, ds.ntids, r.err);
			for (k = 0; k < ds.ntids; k++)
				TH_LOG("  thread %u: %llu samples", ds.tid[k],
				       (unsigned long long)ds.tid_samples[k]);
		}
		EXPECT_EQ(0, kill(pid, 0)) TH_LOG("round %d: hotspot is gone", i);
	}
	TH_LOG("%d rounds of stat -p and record -p, %d bad", rounds, bad);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, waitpid(pid, NULL, WNOHANG));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	EXPECT_EQ(0, sessions("task"));
	run_free(&r);
	unlink(path);
}

/*
 * Ten -t attaches in a row, 0.4 s each, to a thread whose sibling spins
 * beside it: each time the thread's own loop leads its samples.  Under
 * Debian 12's QEMU 7.2 with -icount, about one round in ten went wrong:
 * the vCPU that reloaded the cycle counter at the thread's switch-in,
 * interrupts masked, was held off while the other vCPU ran its sibling,
 * found the counter (which QEMU counts in guest time) wrapped again each
 * time it came back, and livelocked in the overflow interrupt (every
 * sample in pfm_hook_sched_in()), or stalled 10 s (hard LOCKUP).
 */
TEST(attach_rounds)
{
	const char *path = "/tmp/pfmon_test_rounds.data";
	struct run r = { };
	const char *why;
	int i, status, bad = 0;
	pid_t pid, tid;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	for (i = 0; i < 10; i++) {
		pid = hotspot_threads("1000000", &tid);
		ASSERT_LT(0, pid);
		EXPECT_EQ(0, run_sh(&r, "(sleep 0.4; kill %d) & pfmon record -q -o %s -t %d",
				    pid, path, tid))
			TH_LOG("round %d: %s", i, r.err);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_EQ(0, run_sh(&r, "pfmon report -i %s -n 1", path));
		if (!has(r.out, "hot_loop")) {
			bad++;
			TH_LOG("round %d, thread %d: not led by hot_loop:\n%s",
			       i, tid, r.out);
		}
	}
	EXPECT_EQ(0, bad);
	run_free(&r);
	unlink(path);
}

/*
 * -p of a process that ended (a zombie, not reaped yet): pfmon says each
 * thread ended before it could be monitored, that nothing is left to
 * measure, and fails; it does not record nothing and exit 0.
 */
TEST(attach_ended_process_explained)
{
	const char *path = "/tmp/pfmon_test_zombie.data";
	struct run r = { };
	const char *why;
	pid_t pid;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(0);
	ASSERT_TRUE(task_wait_state(pid, 'Z', 1000))
		TH_LOG("state %c", task_state(pid));
	EXPECT_EQ(1, run_sh(&r, "pfmon record -q -o %s -p %d", path, pid));
	TH_LOG("stderr: %s", r.err);
	EXPECT_TRUE(has(r.err, "ended before it could be monitored"));
	EXPECT_TRUE(has(r.err, "nothing to measure"));
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	run_free(&r);
	unlink(path);
}

/* Append record @rec of @size bytes (a multiple of 8) of @type to @f. */
static int put_rec(FILE *f, void *rec, uint32_t type, uint32_t size)
{
	struct pfmon_rec *h = rec;

	h->type = type;
	h->size = size;
	return fwrite(rec, size, 1, f) == 1 ? 0 : -1;
}

/*
 * A recording of one event whose samples have other periods, as record
 * -F writes them: @heavy samples at weight_heavy of @heavy_period
 * events each, @light at weight_light of @light_period, both kernel
 * IPs named by the kallsyms file @ksyms this writes too.
 */
static int write_weighted(const char *path, const char *ksyms, int heavy,
			  uint64_t heavy_period, int light,
			  uint64_t light_period)
{
	struct pfmon_file_header h = { .version = PFMON_DATA_VERSION,
				       .hdr_size = sizeof(h), .nr_events = 1,
				       .end_ns = 1000000000 };
	struct pfmon_rec_event ev = { .freq = 100, .period = light_period };
	struct pfmon_rec_comm comm = { .pid = 42, .tid = 42 };
	struct pfmon_rec_sample smp = { .pid = 42, .tid = 42 };
	FILE *f = fopen(ksyms, "we");
	int i, ret = 0;

	if (!f)
		return -1;
	fprintf(f, "ffffffff81000000 T weight_heavy\n"
		   "ffffffff81001000 T weight_light\n"
		   "ffffffff81002000 T weight_end\n");
	if (fclose(f))
		return -1;
	f = fopen(path, "we");
	if (!f)
		return -1;
	memcpy(h.magic, PFMON_DATA_MAGIC, sizeof(h.magic));
	strcpy(h.pmu, "soft");
	strcpy(h.command, "weights");
	strcpy(ev.name, "w");
	strcpy(comm.comm, "weights");
	ret |= fwrite(&h, sizeof(h), 1, f) == 1 ? 0 : -1;
	ret |= put_rec(f, &ev, PFMON_REC_EVENT, sizeof(ev));
	ret |= put_rec(f, &comm, PFMON_REC_COMM, sizeof(comm));
	for (i = 0; i < heavy + light; i++) {
		smp.ip = i < heavy ? 0xffffffff81000010ull : 0xffffffff81001010ull;
		smp.period = i < heavy ? heavy_period : light_period;
		smp.time_ns = 1000 + i;
		ret |= put_rec(f, &smp, PFMON_REC_SAMPLE, sizeof(smp));
	}
	if (fclose(f))
		ret = -1;
	return ret;
}

/*
 * report weighs each sample by its period, as perf report does: under
 * -F the periods differ, and a count of samples would give the share
 * of the samples, not of the events.  1 sample of 6000 events against
 * 4 of 1000: 60% and 40%, the heavy one first; the Samples column
 * still counts 1 and 4.
 */
TEST(report_weighs_by_period)
{
	const char *path = "/tmp/pfmon_test_weights.data";
	const char *ksyms = "/tmp/pfmon_test_weights.kallsyms";
	struct report_row rows[MAX_LINES];
	struct run r = { };
	uint64_t sum;
	int n;

	ASSERT_EQ(0, write_weighted(path, ksyms, 1, 6000, 4, 1000));
	ASSERT_EQ(0, run_sh(&r, "pfmon report -i %s --kallsyms %s -n 0",
			    path, ksyms))
		TH_LOG("stderr: %s", r.err);
	n = report_rows(r.out, rows, MAX_LINES, &sum);
	ASSERT_EQ(2, n) TH_LOG("report:\n%s", r.out);
	TH_LOG("%s %.2f%% (%llu), %s %.2f%% (%llu)",
	       rows[0].sym, rows[0].pct, (unsigned long long)rows[0].samples,
	       rows[1].sym, rows[1].pct, (unsigned long long)rows[1].samples);
	EXPECT_STREQ("weight_heavy", rows[0].sym);
	EXPECT_EQ(60.0, rows[0].pct);
	EXPECT_EQ(1, rows[0].samples);
	EXPECT_STREQ("weight_light", rows[1].sym);
	EXPECT_EQ(40.0, rows[1].pct);
	EXPECT_EQ(4, rows[1].samples);
	EXPECT_EQ(5, sum);
	run_free(&r);
	unlink(path);
	unlink(ksyms);
}

/*
 * record -F 1000: the default event's period starts at 1 and the kernel
 * adjusts it (PFM_REGFL_FREQ), so that hotspot is sampled about 1,000
 * times per second of its CPU time (what a thread's context counts in),
 * whatever the event's rate.
 */
TEST(record_frequency)
{
	const char *path = "/tmp/pfmon_test_freq.data";
	struct data_stats ds;
	struct run r = { };
	const char *why;
	int64_t cpu;
	double hz;

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, run_sh(&r, "pfmon record -q -F 1000 -o %s -- hotspot -r 60",
			    path)) TH_LOG("stderr: %s", r.err);
	cpu = hotspot_cpu_ns(r.out);
	ASSERT_LT(0, cpu) TH_LOG("stdout: %s", r.out);
	ASSERT_EQ(0, data_read(path, &ds));
	hz = ds.samples / (cpu / 1e9);
	TH_LOG("%llu samples over %.3f s of CPU: %.0f a second",
	       (unsigned long long)ds.samples, cpu / 1e9, hz);
	TH_LOG("periods %llu first, %llu last",
	       (unsigned long long)ds.p_first, (unsigned long long)ds.p_last);
	EXPECT_EQ(0, ds.lost);
	EXPECT_EQ(1, ds.p_first);
	EXPECT_LT(100, ds.p_last);
	/*
	 * Fewer when overflows are handled late: each period starts at
	 * the reset, and what the thread ran from the overflow to it
	 * counts in no period.  Under TCG that is the timer's delay and,
	 * over pfm_perf, the irq_work that reports a software event's
	 * overflow: x86_64 6.1 over pfm_perf, a 1 ms task-clock period
	 * gave a sample every 1.15 to 1.17 ms, 753 to 865 a second of
	 * hotspot's CPU time where the software PMU gave 921 to 934
	 * (issue 38: the overflow made a sample in perf's callback).
	 * The check stages' slack covers it.  Under -icount (PFM_ICOUNT)
	 * no host moves guest time: within 2% (times the slack);
	 * measured 1004 a second natively, 996 over pfm_perf (6.1,
	 * slack 1).
	 */
	EXPECT_LE(1000 * 0.8 / timing_slack(), hz);
	EXPECT_GE(1000 * 1.2, hz);
	if (icount_guest())
		EXPECT_TRUE(within_pct(hz, 1000, 2.0));
	EXPECT_EQ(0, run_sh(&r, "pfmon report -i %s -n 1", path));
	EXPECT_TRUE(has(r.out, "(-F 1000)")) TH_LOG("%s", r.out);
	run_free(&r);
	unlink(path);
}

/*
 * record -g as root also records the kernel's chain of a sample that
 * interrupted the kernel (PFM_REGFL_KCALLCHAIN): dd reading /dev/zero a
 * megabyte at a time spends its time in read(), and the folded stacks
 * show read's kernel path (ksys_read or vfs_read) inside dd's stacks,
 * the kernel frames after dd's own.
 */
TEST(record_kernel_chains)
{
	const char *path = "/tmp/pfmon_test_kchain.data";
	uint64_t total = 0, inread = 0, v;
	char line[4096], *sp;
	const char *why, *text;
	struct run r = { };

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	if (getuid() != 0)
		SKIP(return, "needs root to see kernel addresses");
	ASSERT_EQ(0, run_sh(&r, "pfmon record -q -g -o %s -- %s", path,
			    "dd if=/dev/zero of=/dev/null bs=1M count=300"))
		TH_LOG("stderr: %s", r.err);
	ASSERT_EQ(0, run_sh(&r, "pfmon report -i %s --folded", path))
		TH_LOG("stderr: %s", r.err);
	text = r.out;
	while (next_line(&text, line, sizeof(line))) {
		sp = strrchr(line, ' ');
		if (!sp || !is_uint(sp + 1))
			continue;
		*sp = '\0';
		v = strtoull(sp + 1, NULL, 10);
		total += v;
		if (!strncmp(line, "dd;", 3) &&
		    (strstr(line, ";ksys_read;") || strstr(line, ";vfs_read;")))
			inread += v;
		if (v > 20 && strstr(line, "_read;"))
			TH_LOG("%.200s %llu", line, (unsigned long long)v);
	}
	TH_LOG("%llu samples, %llu through read()'s kernel path",
	       (unsigned long long)total, (unsigned long long)inread);
	EXPECT_LT(0, total);
	EXPECT_LE(total / 2, inread);
	run_free(&r);
	unlink(path);
}

/* pfmon list names the PMU description and its events. */
TEST(list_names_events)
{
	const char *why;
	const struct pmu_names *p = this_pmu();
	struct run r = { };
	char model[96];

	why = cannot_run(NULL);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, run_sh(&r, "pfmon list")) TH_LOG("stderr: %s", r.err);
	snprintf(model, sizeof(model), "PMU: %s,", p->model);
	TH_LOG("%.*s", (int)strcspn(r.out, "\n"), r.out);
	EXPECT_TRUE(has(r.out, model));
	EXPECT_TRUE(has(r.out, p->listed));
	run_free(&r);
}

/*
 * soft: without a PMU description, pfmon says so and names the modules
 * to load.  The description's module (pfm_soft, or pfm_perf over perf)
 * is back before anything is checked.
 */
TEST(no_pmu_description_explained)
{
	struct run r = { }, un = { }, in = { };
	char model[32] = "", cmd[96];
	struct pmu_mod pm;
	const char *why;

	why = cannot_run("soft");
	if (why)
		SKIP(return, "%s", why);
	if (!pmu_mod_get(&pm))
		SKIP(return, "needs root and the description's module in /modules/");
	snprintf(cmd, sizeof(cmd), "rmmod %s", pm.name);
	run_sh(&un, cmd);
	if (!un.status)
		run_sh(&r, "pfmon list");
	/* Back, whatever happened (a failed rmmod left it in). */
	if (!pmu_is("soft")) {
		snprintf(cmd, sizeof(cmd), "insmod %s", pm.ko);
		run_sh(&in, cmd);
	}
	snprintf(model, sizeof(model), "%s", pmu_desc_str("model"));

	ASSERT_EQ(0, un.status) TH_LOG("rmmod: %s", un.err);
	ASSERT_STREQ("soft", model)
		TH_LOG("insmod: exit %d, %s", in.status, in.err ? in.err : "");
	ASSERT_STREQ(pm.name, pmu_desc_str("module"));
	TH_LOG("pfmon list without a description: exit %d, %s", r.status,
	       r.err);
	EXPECT_EQ(1, r.status);
	EXPECT_TRUE(has(r.err, "no PMU description"));
	EXPECT_TRUE(has(r.err, "modprobe pfm_soft"));
	EXPECT_TRUE(has(r.err, "modprobe pfm_perf"));
	run_free(&r);
	run_free(&un);
	run_free(&in);
}

TEST_HARNESS_MAIN
