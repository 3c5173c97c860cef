// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: the contexts stat and record monitor with, one per thread
 * or per CPU, and the loop that runs while they count.
 *
 * A command is forked, traced with ptrace before it execs, and every
 * thread and process it creates gets a context of its own before it
 * runs its first instruction (perfmon2 contexts are not inherited, as
 * pfmon did).  Tracing also stops each process at exec and at exit,
 * where its mappings can still be read for the report.  The command's
 * own context is loaded before it execs but started in that exec's
 * stop: what pfmon's child does between fork() and execve() (and the
 * exec up to the new program's start) is not counted, as perf stat
 * counts from the exec.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pfmon.h"

/* -p: how often the session looks for new threads of the process (ms) */
#define FOLLOW_MS	50

uint64_t pfmon_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static struct pfmon_target *target_add(struct pfmon_session *s, int id)
{
	struct pfmon_target *n;

	n = realloc(s->tgt, (s->ntgt + 1) * sizeof(*n));
	if (!n) {
		pfmon_err("out of memory");
		return NULL;
	}
	s->tgt = n;
	n = &s->tgt[s->ntgt++];
	memset(n, 0, sizeof(*n));
	n->fd = -1;
	n->id = id;
	return n;
}

static struct pfmon_target *target_find(struct pfmon_session *s, int id)
{
	int i;

	for (i = 0; i < s->ntgt; i++)
		if (s->tgt[i].id == id)
			return &s->tgt[i];
	return NULL;
}

/**
 * pfmon_targets_cpus() - one context per CPU of a list
 * @s: the session
 * @cpus: "0-3,6", or NULL for every online CPU
 *
 * Return: 0, or -1 after a message.
 */
int pfmon_targets_cpus(struct pfmon_session *s, const char *cpus)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	char *copy, *tok, *save = NULL, *end;
	long a, b;
	int ret = 0;

	s->system_wide = true;
	if (!cpus) {
		for (a = 0; a < n; a++)
			if (!target_add(s, a))
				return -1;
		return 0;
	}
	copy = strdup(cpus);
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		a = strtol(tok, &end, 10);
		b = *end == '-' ? strtol(end + 1, &end, 10) : a;
		if (*end || a < 0 || b < a || b >= 4096) {
			pfmon_err("-C %s: a CPU list like 0-3,6", cpus);
			ret = -1;
		}
		for (; !ret && a <= b; a++)
			if (!target_find(s, a) && !target_add(s, a))
				ret = -1;
	}
	free(copy);
	return copy ? ret : -1;
}

/**
 * pfmon_targets_pid() - one context per thread of a running process
 * @s: the session
 * @pid: the process (or one thread id)
 *
 * Threads it creates later get theirs from the session loop
 * (follow_scan()).
 *
 * Return: 0, or -1 after a message.
 */
int pfmon_targets_pid(struct pfmon_session *s, pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d) {
		pfmon_err("-p %d: no such process", pid);
		return -1;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && !target_add(s, atoi(de->d_name)))
			break;
	closedir(d);
	s->follow = pid;
	return s->ntgt ? 0 : -1;
}

/**
 * pfmon_thread_tgid() - the process of a thread
 * @tid: the thread
 *
 * Return: its Tgid (/proc/TID/status), or -1 when it is gone.
 */
pid_t pfmon_thread_tgid(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* The forked command: wait for the go, then exec. */
static void child_exec(int go, char **argv, const sigset_t *mask)
{
	char c;

	sigprocmask(SIG_SETMASK, mask, NULL);
	if (read(go, &c, 1) != 1)
		_exit(127);	/* pfmon gave up */
	close(go);
	execvp(argv[0], argv);
	fprintf(stderr, "pfmon: cannot run '%s': %s\n", argv[0],
		strerror(errno));
	_exit(127);
}

/**
 * pfmon_targets_command() - fork the command, held until the session goes
 * @s: the session
 * @argv: the command, NULL-terminated
 *
 * Per-thread sessions trace it (see the top of this file); system-wide
 * ones just run it.
 *
 * Return: 0, or -1 after a message.
 */
int pfmon_targets_command(struct pfmon_session *s, char **argv)
{
	struct pfmon_target *t;
	sigset_t old;
	int go[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC)) {
		pfmon_err("pipe: %s", strerror(errno));
		return -1;
	}
	sigprocmask(SIG_BLOCK, NULL, &old);
	sigdelset(&old, SIGCHLD);
	sigdelset(&old, SIGINT);
	sigdelset(&old, SIGTERM);
	pid = fork();
	if (pid < 0) {
		pfmon_err("fork: %s", strerror(errno));
		return -1;
	}
	if (!pid)
		child_exec(go[0], argv, &old);
	close(go[0]);
	s->child = pid;
	s->go_fd = go[1];
	if (s->system_wide)
		return 0;
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACECLONE |
		   PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
		   PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
		   PTRACE_O_EXITKILL)) {
		pfmon_err("cannot trace the command: %s", strerror(errno));
		return -1;
	}
	s->traced = true;
	t = target_add(s, pid);
	if (!t)
		return -1;
	t->start_at_exec = true;
	return 0;
}

/**
 * pfmon_what_opt() - take one of the options stat and record share
 * @w: what they gather
 * @opt: the option: e, a, C, p or t
 * @arg: its argument
 *
 * Return: 1 taken, 0 not one of them, -1 a bad argument (said).
 */
int pfmon_what_opt(struct pfmon_what *w, int opt, const char *arg)
{
	char **n;

	switch (opt) {
	case 'e':
		n = realloc(w->ev_lists, (w->nlists + 1) * sizeof(*n));
		if (!n)
			return -1;
		w->ev_lists = n;
		n[w->nlists++] = (char *)arg;
		return 1;
	case 'C':
		w->cpus = arg;
		/* fall through */
	case 'a':
		w->system_wide = true;
		return 1;
	case 'p':
		w->pid = atoi(arg);
		if (w->pid > 0)
			return 1;
		pfmon_err("-p %s: a process id", arg);
		return -1;
	case 't':
		w->tid = atoi(arg);
		if (w->tid <= 0) {
			pfmon_err("-t %s: a thread id", arg);
			return -1;
		}
		w->pid = pfmon_thread_tgid(w->tid);
		if (w->pid > 0)
			return 1;
		pfmon_err("-t %s: no such thread", arg);
		return -1;
	default:
		return 0;
	}
}

/**
 * pfmon_what_check() - are the options of stat or record coherent?
 * @w: what they gathered
 * @command: a command follows them
 * @verb: "count" or "sample", for the message
 *
 * Return: 0, or -1 after a message.
 */
int pfmon_what_check(const struct pfmon_what *w, bool command,
		     const char *verb)
{
	if (w->pid && (w->system_wide || command)) {
		pfmon_err("-p and -t take neither -a/-C nor a command");
		return -1;
	}
	if (!w->pid && !w->system_wide && !command) {
		pfmon_err("nothing to %s: give a command, -p PID, -t TID or -a",
			  verb);
		return -1;
	}
	return 0;
}

/**
 * pfmon_session_targets() - the contexts the options ask for
 * @s: the session
 * @w: the options
 * @argc: words of the command (0: none)
 * @argv: the command
 *
 * Return: 0, or -1 after a message.
 */
int pfmon_session_targets(struct pfmon_session *s,
			  const struct pfmon_what *w, int argc, char **argv)
{
	s->system_wide = w->system_wide;
	if (w->system_wide && pfmon_targets_cpus(s, w->cpus))
		return -1;
	if (w->tid)
		return target_add(s, w->tid) ? 0 : -1;
	if (w->pid && pfmon_targets_pid(s, w->pid))
		return -1;
	if (argc > 0 && pfmon_targets_command(s, argv))
		return -1;
	return 0;
}

/**
 * pfmon_session_events() - parse and place the events of -e options
 * @s: the session, PMU open
 * @lists: the -e arguments (none: the PMU's default events)
 * @nlists: how many
 * @sets: --sets
 * @sampling: record
 *
 * Return: 0, or -1 after a message.
 */
int pfmon_session_events(struct pfmon_session *s, char **lists, int nlists,
			 bool sets, bool sampling)
{
	const char *dfl = pfmon_default_event(&s->pmu, sampling);
	int i;

	if (!nlists && !dfl) {
		pfmon_err("no default events for PMU '%s': name them with -e",
			  s->pmu.info.pmu_name);
		return -1;
	}
	if (!nlists && pfmon_parse_events(&s->pmu, dfl, 0, sampling,
					  &s->evs, &s->nev))
		return -1;
	for (i = 0; i < nlists; i++)
		if (pfmon_parse_events(&s->pmu, lists[i], i, sampling,
				       &s->evs, &s->nev))
			return -1;
	s->nsets = pfmon_assign(&s->pmu, s->evs, s->nev, sets);
	return s->nsets < 0 ? -1 : 0;
}

/* Create a context, its sets and registers for target t. */
static int target_program(struct pfmon_session *s, struct pfmon_target *t)
{
	struct pfm_ring_smpl_arg arg = { .data_pages = s->ring_pages };
	pfarg_setdesc_t sd[PFMON_MAX_SETS];
	pfarg_ctx_t ctx;
	pfarg_pmc_t pc;
	pfarg_pmd_t pd;
	int i;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = s->system_wide ? PFM_FL_SYSTEM_WIDE : 0;
	t->fd = s->sampling ?
		pfm_create_context(&ctx, PFM_RING_SMPL_NAME, &arg, sizeof(arg)) :
		pfm_create_context(&ctx, NULL, NULL, 0);
	if (t->fd < 0)
		return -1;
	/* The loop reads until nothing is left. */
	fcntl(t->fd, F_SETFL, fcntl(t->fd, F_GETFL) | O_NONBLOCK);
	memset(sd, 0, sizeof(sd));
	for (i = 0; i < s->nsets && s->nsets > 1; i++) {
		sd[i].set_id = i;
		sd[i].set_flags = PFM_SETFL_TIME_SWITCH;
		sd[i].set_timeout = s->switch_ns;
	}
	if (s->nsets > 1 && pfm_create_evtsets(t->fd, sd, s->nsets))
		return -1;
	for (i = 0; i < s->nev; i++) {
		const struct pfmon_event *ev = &s->evs[i];

		memset(&pc, 0, sizeof(pc));
		pc.reg_num = ev->pmc;
		pc.reg_set = ev->set;
		pc.reg_value = ev->pmc_value;
		memset(&pd, 0, sizeof(pd));
		pd.reg_num = ev->pmd;
		pd.reg_set = ev->set;
		if (ev->period) {
			pd.reg_flags = PFM_REGFL_OVFL_NOTIFY |
				       (s->callchain ? PFM_REGFL_CALLCHAIN : 0) |
				       (s->kcallchain ? PFM_REGFL_KCALLCHAIN : 0);
			pd.reg_value = -ev->period;
			pd.reg_short_reset = -ev->period;
			pd.reg_long_reset = -ev->period;
			pd.reg_smpl_eventid = i;
			if (ev->freq) {
				pd.reg_flags |= PFM_REGFL_FREQ;
				pd.reg_freq = ev->freq;
			}
		}
		if (pfm_write_pmcs(t->fd, &pc, 1) || pfm_write_pmds(t->fd, &pd, 1))
			return -1;
	}
	return s->sampling ? pfm_ring_map(t->fd, &t->ring) : 0;
}

/* Is thread @tid gone, or a zombie ("pid (comm) Z ..." in its stat)? */
static bool thread_gone(pid_t tid)
{
	char path[64], buf[512], *p = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	f = fopen(path, "re");
	if (!f)
		return true;
	if (fgets(buf, sizeof(buf), f))
		p = strrchr(buf, ')');
	fclose(f);
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/*
 * Load t's context.  perfmon monitors another process's thread only
 * while the caller traces it, so that Yama and the security modules
 * decide: a command's threads are traced all along; a thread of -p is
 * seized for the load and let go (it must be in a ptrace stop for
 * that).  The errno of a failure is kept.
 */
static int target_load(struct pfmon_session *s, struct pfmon_target *t,
		       pfarg_load_t *ld)
{
	bool seize = !s->system_wide && !s->traced;
	int ret, err, st;

	/* A zombie refuses the seize with EPERM: it ended (ESRCH). */
	if (seize && ptrace(PTRACE_SEIZE, t->id, 0, 0)) {
		if (errno == EPERM && thread_gone(t->id))
			errno = ESRCH;
		return -1;
	}
	ret = pfm_load_context(t->fd, ld);
	err = errno;
	if (seize && !ptrace(PTRACE_INTERRUPT, t->id, 0, 0) &&
	    waitpid(t->id, &st, __WALL) == t->id && WIFSTOPPED(st))
		ptrace(PTRACE_DETACH, t->id, 0, 0);
	errno = err;
	return ret;
}

/* Program and load target t; the errno of a failure is kept. */
static int target_load_one(struct pfmon_session *s, struct pfmon_target *t,
			   const char **step)
{
	pfarg_load_t ld;

	*step = "cannot create a context";
	if (target_program(s, t))
		return -1;
	memset(&ld, 0, sizeof(ld));
	ld.load_pid = t->id;
	*step = s->system_wide ? "cannot monitor CPU" : "cannot monitor thread";
	if (target_load(s, t, &ld))
		return -1;
	t->loaded = true;
	return 0;
}

/* The command's exec: its context starts counting now. */
static void target_exec(struct pfmon_session *s, struct pfmon_target *t)
{
	pfarg_start_t st;
	char what[64];

	if (!t || !t->start_at_exec)
		return;
	t->start_at_exec = false;
	if (!s->start_ns)
		s->start_ns = pfmon_now_ns();
	memset(&st, 0, sizeof(st));
	if (t->loaded && pfm_start(t->fd, &st)) {
		snprintf(what, sizeof(what), "cannot start %d", t->id);
		pfmon_explain(what, errno);
	}
}

/* Have the threads of a -p session all ended? */
static bool all_ended(struct pfmon_session *s)
{
	int i;

	for (i = 0; i < s->ntgt; i++)
		if (!s->tgt[i].ended)
			return false;
	return !s->system_wide && !s->child;
}

/*
 * Did @tid end, as perfmon's ESRCH says?  A thread in its exit may look
 * alive for a moment: it has 100 ms to go.
 */
static bool thread_ended(pid_t tid)
{
	int tries;

	for (tries = 0; tries < 20; tries++) {
		if (thread_gone(tid))
			return true;
		usleep(5000);
	}
	return false;
}

/* Load target t; 0 also for a thread of -p that ended, which is said. */
static int target_load_report(struct pfmon_session *s,
			      struct pfmon_target *t)
{
	const char *step;
	char what[96];

	if (!target_load_one(s, t, &step))
		return 0;
	/*
	 * A thread of -p that ended meanwhile is no failure, but it is
	 * said; it sends no PFM_MSG_END, so the loop must not wait for
	 * one.  One that is still there was refused: that is a failure.
	 */
	if (errno == ESRCH && !s->system_wide && !s->child) {
		if (thread_ended(t->id)) {
			fprintf(stderr, "pfmon: thread %d ended before it could be monitored\n",
				t->id);
			t->ended = true;
			return 0;
		}
		snprintf(what, sizeof(what), "%s %d (it is still running)",
			 step, t->id);
		pfmon_explain(what, ESRCH);
		return -1;
	}
	snprintf(what, sizeof(what), "%s %d", step, t->id);
	pfmon_explain(what, errno);
	return -1;
}

/* Start loaded target t, unless its command's exec will. */
static int target_go_report(struct pfmon_session *s, struct pfmon_target *t)
{
	pfarg_start_t st;
	char what[96];

	if (!t->loaded || t->start_at_exec)
		return 0;
	memset(&st, 0, sizeof(st));
	if (!pfm_start(t->fd, &st))
		return 0;
	/*
	 * One that ended between its load and its start: the end unloaded
	 * the context (PFM_START: EINVAL) and queued its PFM_MSG_END, which
	 * the loop takes as for any thread that ends.  A thread still
	 * there was refused for another reason: that is a failure.
	 */
	if (errno == EINVAL && !s->system_wide && !s->child) {
		if (thread_ended(t->id))
			return 0;
		snprintf(what, sizeof(what), "cannot start %d (it is still running)",
			 t->id);
		pfmon_explain(what, EINVAL);
		return -1;
	}
	snprintf(what, sizeof(what), "cannot start %d", t->id);
	pfmon_explain(what, errno);
	return -1;
}

/**
 * pfmon_session_start() - create, load and start every context
 * @s: the session, targets and events chosen
 *
 * Every thread is loaded first, then all are started in one short loop:
 * over pfm_perf a load takes up to tens of ms, and starting each as it
 * was loaded left the last threads of a process counting that much
 * less than the first.
 *
 * Return: 0, or -1 after a message.
 */
int pfmon_session_start(struct pfmon_session *s)
{
	int i;

	for (i = 0; i < s->ntgt; i++)
		if (target_load_report(s, &s->tgt[i]))
			return -1;
	for (i = 0; i < s->ntgt; i++)
		if (target_go_report(s, &s->tgt[i]))
			return -1;
	if (s->ntgt && all_ended(s)) {
		pfmon_err("every thread ended before it could be monitored: nothing to measure");
		return -1;
	}
	return 0;
}

/**
 * pfmon_session_go() - let the command exec
 * @s: the session
 */
void pfmon_session_go(struct pfmon_session *s)
{
	/* A command starts counting at its exec: target_exec() times it. */
	if (!s->child)
		s->start_ns = pfmon_now_ns();
	if (s->go_fd > 0) {
		if (write(s->go_fd, "g", 1) != 1)
			pfmon_warn("cannot release the command: %s",
				   strerror(errno));
		close(s->go_fd);
		s->go_fd = -1;
	}
}

/**
 * pfmon_session_stop() - stop every context; counts stay readable
 * @s: the session
 *
 * Return: 0.
 */
int pfmon_session_stop(struct pfmon_session *s)
{
	int i;

	for (i = 0; i < s->ntgt; i++)
		if (s->tgt[i].loaded && !s->tgt[i].ended)
			pfm_stop(s->tgt[i].fd);
	return 0;
}

void pfmon_session_free(struct pfmon_session *s)
{
	int i;

	if (s->throttles)
		fprintf(stderr,
			"pfmon: overflows came too fast: counting paused %lu times for a tick, those events are missing (use a longer period, or raise /sys/kernel/perfmon/max_ovfl_rate)\n",
			s->throttles);

	for (i = 0; i < s->ntgt; i++) {
		pfm_ring_unmap(&s->tgt[i].ring);
		if (s->tgt[i].fd >= 0)
			close(s->tgt[i].fd);
	}
	free(s->tgt);
	free(s->evs);
	pfmon_pmu_close(&s->pmu);
	if (s->go_fd > 0)
		close(s->go_fd);
	if (s->sfd > 0)
		close(s->sfd);
}

/* Per target, the value of event i scaled to all the time it counted. */
static int target_counts(struct pfmon_session *s, struct pfmon_target *t,
			 uint64_t *vals, uint64_t *set_ns)
{
	pfarg_setinfo_t si;
	pfarg_pmd_t pd;
	int i;

	for (i = 0; i < s->nsets; i++) {
		memset(&si, 0, sizeof(si));
		si.set_id = i;
		if (pfm_getinfo_evtsets(t->fd, &si, 1))
			return -1;
		set_ns[i] += si.set_act_duration;
	}
	for (i = 0; i < s->nev; i++) {
		memset(&pd, 0, sizeof(pd));
		pd.reg_num = s->evs[i].pmd;
		pd.reg_set = s->evs[i].set;
		if (pfm_read_pmds(t->fd, &pd, 1))
			return -1;
		vals[i] += pd.reg_value;
	}
	return 0;
}

/**
 * pfmon_read_counts() - the counts of every event, summed over targets
 * @s: the session
 * @vals: nev entries: raw counts
 * @set_ns: nsets entries: ns each set counted, summed over targets
 *
 * Return: 0, or -1 after a message.
 */
int pfmon_read_counts(struct pfmon_session *s, uint64_t *vals,
		      uint64_t *set_ns)
{
	int i;

	memset(vals, 0, s->nev * sizeof(*vals));
	memset(set_ns, 0, s->nsets * sizeof(*set_ns));
	for (i = 0; i < s->ntgt; i++) {
		if (!s->tgt[i].loaded)
			continue;
		if (target_counts(s, &s->tgt[i], vals, set_ns)) {
			pfmon_explain("cannot read the counters", errno);
			return -1;
		}
	}
	return 0;
}

/* SIGCHLD, SIGINT, SIGTERM through a signalfd, blocked from now on. */
static int signals_open(struct pfmon_session *s)
{
	sigset_t m;

	sigemptyset(&m);
	sigaddset(&m, SIGCHLD);
	sigaddset(&m, SIGINT);
	sigaddset(&m, SIGTERM);
	sigprocmask(SIG_BLOCK, &m, NULL);
	s->sfd = signalfd(-1, &m, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sfd < 0) {
		pfmon_err("signalfd: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/**
 * pfmon_session_init() - set up a session before its targets
 * @s: zeroed session
 *
 * Return: 0, or -1 after a message.
 */
int pfmon_session_init(struct pfmon_session *s)
{
	s->go_fd = -1;
	s->sfd = -1;
	return signals_open(s);
}

/* A thread found once the session runs: monitor it too. */
static void target_new(struct pfmon_session *s, pid_t tid,
		       const struct pfmon_loop_ops *ops)
{
	struct pfmon_target *t = target_add(s, tid);

	if (!t)
		return;
	if (target_load_report(s, t) || target_go_report(s, t))
		pfmon_warn("thread %d runs unmonitored", tid);
	if (ops->proc_event)
		ops->proc_event(s, tid, PFMON_PROC_NEW, ops->arg);
}

/* A new thread or process of the traced command. */
static void traced_new(struct pfmon_session *s, pid_t tid,
		       const struct pfmon_loop_ops *ops)
{
	if (target_find(s, tid))
		return;
	target_new(s, tid, ops);
	s->live++;
}

/* One ptrace stop of a traced thread: handle it and let it go on. */
static void traced_stop(struct pfmon_session *s, pid_t tid, int status,
			const struct pfmon_loop_ops *ops)
{
	int ev = status >> 16, sig = WSTOPSIG(status);
	unsigned long msg;

	if (!target_find(s, tid))
		traced_new(s, tid, ops);	/* its stop came before the event */
	switch (ev) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		if (!ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg))
			traced_new(s, msg, ops);
		sig = 0;
		break;
	case PTRACE_EVENT_EXEC:
		target_exec(s, target_find(s, tid));
		/* fall through */
	case PTRACE_EVENT_EXIT:
		if (ops->proc_event)
			ops->proc_event(s, tid, ev == PTRACE_EVENT_EXEC ?
					PFMON_PROC_EXEC : PFMON_PROC_EXIT,
					ops->arg);
		sig = 0;
		break;
	case PTRACE_EVENT_STOP:
		sig = 0;	/* attach or group stop: go on (no job control) */
		break;
	default:
		break;		/* a signal for the thread: deliver it */
	}
	ptrace(PTRACE_CONT, tid, 0, sig);
}

/* Reap every child state change; false once the command is over. */
static bool reap(struct pfmon_session *s, const struct pfmon_loop_ops *ops)
{
	int status;
	pid_t tid;

	while ((tid = waitpid(-1, &status, WNOHANG | __WALL)) > 0) {
		if (WIFSTOPPED(status)) {
			traced_stop(s, tid, status, ops);
			continue;
		}
		if (tid == s->child) {
			s->child_status = status;
			s->child_done = true;
		}
		if (s->traced && s->live > 0)
			s->live--;
	}
	return !s->child_done || (s->traced && s->live > 0);
}

/* Signals: a child changed state, or the user wants out. */
static bool signals_read(struct pfmon_session *s,
			 const struct pfmon_loop_ops *ops)
{
	struct signalfd_siginfo si;
	bool go_on = true;

	while (read(s->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue;
		if (s->child && !s->child_done)
			kill(s->child, si.ssi_signo);	/* it ends, we report */
		else
			go_on = false;
	}
	if (s->child)
		go_on = reap(s, ops) && go_on;
	return go_on;
}

/*
 * poll() timeout until the next interval tick, in ms (-1: none).  The
 * intervals run from the start of counting (a command's exec), so the
 * first one is not cut by the time a slow exec takes.
 */
static int next_tick_ms(const struct pfmon_session *s,
			const struct pfmon_loop_ops *ops, uint64_t *next)
{
	uint64_t now = pfmon_now_ns();

	if (!ops->interval_ms || !s->start_ns)
		return -1;
	if (!*next)
		*next = s->start_ns + ops->interval_ms * 1000000ULL;
	return now >= *next ? 0 : (int)((*next - now + 999999) / 1000000);
}

/*
 * An interval ended: report it, and return when the next one ends.  A
 * tick that came more than an interval late (the machine was busy)
 * reports the whole late interval once: the ticks it missed are
 * skipped, not reported as empty intervals right after it.
 */
static uint64_t interval_tick(struct pfmon_session *s,
			      const struct pfmon_loop_ops *ops, uint64_t next)
{
	uint64_t step = ops->interval_ms * 1000000ULL;
	uint64_t now;

	ops->tick(s, ops->arg);
	now = pfmon_now_ns();
	next += step;
	if (next <= now)
		next += (now - next) / step * step + step;
	return next;
}

/* Read what a context says: its thread ended, or its ring has data. */
static void target_wake(struct pfmon_session *s, struct pfmon_target *t,
			const struct pfmon_loop_ops *ops)
{
	union pfarg_msg msg;

	while (read(t->fd, &msg, sizeof(msg)) == sizeof(msg)) {
		if (msg.type == PFM_MSG_END)
			t->ended = true;
		else if (msg.type == PFM_MSG_THROTTLE)
			s->throttles++;
	}
	if (ops->drain)
		ops->drain(s, t, ops->arg);
}

/* Every context: ring data or END messages to act on. */
static int poll_targets(struct pfmon_session *s, struct pollfd *pfd,
			int timeout, const struct pfmon_loop_ops *ops)
{
	int i, n;

	pfd[0].fd = s->sfd;
	pfd[0].events = POLLIN;
	for (i = 0; i < s->ntgt; i++) {
		pfd[i + 1].fd = s->tgt[i].ended ? -1 : s->tgt[i].fd;
		pfd[i + 1].events = POLLIN;
		pfd[i + 1].revents = 0;
	}
	n = poll(pfd, s->ntgt + 1, timeout);
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	for (i = 0; i < s->ntgt && n; i++)
		if (pfd[i + 1].revents & POLLIN)
			target_wake(s, &s->tgt[i], ops);
	return 0;
}

/*
 * -p: the threads the process created since the last look get contexts
 * too, each counted from its load: up to FOLLOW_MS of a new thread's
 * start is not.  (A traced command's threads are taken at their clone,
 * but tracing a running process all along would keep its debugger out.)
 */
static void follow_scan(struct pfmon_session *s,
			const struct pfmon_loop_ops *ops)
{
	struct dirent *de;
	char path[64];
	pid_t tid;
	DIR *d;

	s->follow_ns = pfmon_now_ns() + FOLLOW_MS * 1000000ULL;
	snprintf(path, sizeof(path), "/proc/%d/task", s->follow);
	d = opendir(path);
	if (!d)
		return;		/* it ended: its threads' END messages say so */
	while ((de = readdir(d))) {
		tid = atoi(de->d_name);
		if (tid > 0 && !target_find(s, tid))
			target_new(s, tid, ops);
	}
	closedir(d);
}

/* poll()'s timeout: the next interval tick, or the next look for threads. */
static int loop_timeout(struct pfmon_session *s,
			const struct pfmon_loop_ops *ops, uint64_t *next)
{
	int ms = next_tick_ms(s, ops, next);

	if (s->follow && (ms < 0 || ms > FOLLOW_MS))
		ms = FOLLOW_MS;
	return ms;
}

/**
 * pfmon_session_loop() - run until the command ends or the user stops
 * @s: the session, started and let go
 * @ops: what to do on the way
 *
 * Ends when the command (and, traced, every thread it made) ended; for
 * -p when its threads ended, those it made since included; else at
 * SIGINT/SIGTERM.
 *
 * Return: 0, or -1 after a message.
 */
int pfmon_session_loop(struct pfmon_session *s,
		       const struct pfmon_loop_ops *ops)
{
	struct pollfd *pfd = NULL, *n;
	uint64_t next = 0;
	int ret = 0;

	if (s->child)
		s->live = 1;
	while (1) {
		n = realloc(pfd, (s->ntgt + 1) * sizeof(*pfd));
		if (!n) {
			ret = -1;
			break;
		}
		pfd = n;
		if (poll_targets(s, pfd, loop_timeout(s, ops, &next), ops)) {
			ret = -1;
			break;
		}
		if ((pfd[0].revents & POLLIN) && !signals_read(s, ops))
			break;
		if (s->follow && pfmon_now_ns() >= s->follow_ns)
			follow_scan(s, ops);
		if (all_ended(s))
			break;
		if (next && pfmon_now_ns() >= next)
			next = interval_tick(s, ops, next);
	}
	free(pfd);
	return ret;
}
