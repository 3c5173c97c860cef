/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pfmon: the profiling tool over /dev/perfmon.  What the subcommands
 * share.
 */
#ifndef PFMON_H
#define PFMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <perfmon/perfmon.h>

/* Subcommands: argv[0] is the subcommand's name; return the exit code. */
int cmd_stat(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_export(int argc, char **argv);

/* Messages: "pfmon: ..." on stderr. */
void pfmon_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pfmon_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int pfmon_verbose;

/* Allocate or exit 1 with a message. */
void *pfmon_xrealloc(void *p, size_t nmemb, size_t size);
void *pfmon_xcalloc(size_t nmemb, size_t size);

/* Event sets pfmon multiplexes at most. */
#define PFMON_MAX_SETS		64

/* Privilege levels an event counts at. */
#define PFMON_PLM_USER		0x1
#define PFMON_PLM_KERNEL	0x2

/* What an event means to derived metrics. */
enum pfmon_role {
	PFMON_ROLE_OTHER,
	PFMON_ROLE_CYCLES,
	PFMON_ROLE_INSTRUCTIONS,
	PFMON_ROLE_TASK_CLOCK,
};

/**
 * struct pfmon_event - one event the user asked for
 * @spec: as written, modifiers and period included
 * @name: the name shown
 * @code: the PMC's event field
 * @pmc_value: the whole PMC value, privilege filters included
 * @pmc: PMC programmed (assigned by pfmon_assign())
 * @pmd: PMD counting it
 * @fixed: pmcN=V: @pmc and @pmd are the user's
 * @plm: PFMON_PLM_*
 * @period: sampling period, 0 for counting (with @freq: the first guess)
 * @period_set: the user gave @period (EV/PERIOD)
 * @freq: record -F: overflows per second of counting, the kernel adjusts
 *        the period (PFM_REGFL_FREQ); 0: a fixed period
 * @set: event set it counts in
 * @group: which -e option it came from
 * @role: for derived metrics
 * @unit: unit of its counts ("ns"), or NULL
 */
struct pfmon_event {
	char spec[128];
	char name[128];
	uint64_t code;
	uint64_t pmc_value;
	int pmc;
	int pmd;
	bool fixed;
	unsigned int plm;
	uint64_t period;
	bool period_set;
	unsigned int freq;
	int set;
	int group;
	enum pfmon_role role;
	const char *unit;
};

struct pfmon_model;

/**
 * struct pfmon_pmu - the PMU perfmon drives, as the tool uses it
 * @info: PFM_GET_PMU_INFO's answer
 * @model: how to program its PMCs; NULL for an unknown description
 * @gen: general-purpose counters (PMC i programs PMD i)
 * @ngen: entries of @gen
 * @cycle_pmd: PMD that counts only cycles, or -1
 * @events: events the description names (sysfs)
 * @nevents: entries of @events
 */
struct pfmon_pmu {
	struct pfarg_pmu_info info;
	const struct pfmon_model *model;
	int gen[64];
	int ngen;
	int cycle_pmd;
	struct pfm_event_name *events;
	int nevents;
};

/* events.c */
int pfmon_pmu_open(struct pfmon_pmu *pmu);
void pfmon_pmu_close(struct pfmon_pmu *pmu);
int pfmon_parse_events(struct pfmon_pmu *pmu, const char *list, int group,
		       bool sampling, struct pfmon_event **evs, int *nev);
int pfmon_assign(struct pfmon_pmu *pmu, struct pfmon_event *evs, int nev,
		 bool split_groups);
const char *pfmon_default_event(const struct pfmon_pmu *pmu, bool sampling);
void pfmon_list_libpfm(bool verbose);
const char *pfmon_model_aliases(const struct pfmon_pmu *pmu);

/* diag.c: explain a failure with what the user can do about it. */
void pfmon_explain(const char *what, int err);
void pfmon_explain_no_pmu(void);

/**
 * struct pfmon_target - one context: a thread or a CPU
 * @fd: the context
 * @id: thread id, or CPU number
 * @loaded: load succeeded
 * @ended: the thread ended (PFM_MSG_END)
 * @start_at_exec: loaded, to be started at the command's exec
 * @ring: the ring buffer when sampling
 */
struct pfmon_target {
	int fd;
	int id;
	bool loaded;
	bool ended;
	bool start_at_exec;
	struct pfm_ring ring;
};

/**
 * struct pfmon_session - what stat and record monitor
 * @pmu: the PMU
 * @evs: the events, assigned
 * @nev: entries of @evs
 * @nsets: event sets used
 * @switch_ns: set switch timeout
 * @system_wide: one context per CPU
 * @tgt: the contexts
 * @ntgt: entries of @tgt
 * @child: the command run, or 0
 * @go_fd: write end of the pipe that lets @child exec
 * @ring_pages: data pages of each ring (sampling)
 * @sampling: contexts carry a ring buffer
 * @callchain: samples carry the user call chain (PFM_REGFL_CALLCHAIN)
 * @kcallchain: and the kernel's (PFM_REGFL_KCALLCHAIN)
 * @sfd: signalfd of SIGCHLD, SIGINT, SIGTERM
 * @traced: @child and its descendants are traced (per-thread sessions)
 * @live: traced threads not reaped yet
 * @child_done: @child was reaped
 * @child_status: its wait status
 * @throttles: PFM_MSG_THROTTLE read: ticks some context did not count
 * @start_ns: when counting started
 * @follow: -p's process, whose new threads get contexts too (0: none)
 * @follow_ns: when the session next looks for them
 */
struct pfmon_session {
	struct pfmon_pmu pmu;
	struct pfmon_event *evs;
	int nev;
	int nsets;
	uint64_t switch_ns;
	bool system_wide;
	struct pfmon_target *tgt;
	int ntgt;
	pid_t child;
	int go_fd;
	unsigned int ring_pages;
	bool sampling;
	bool callchain;
	bool kcallchain;
	int sfd;
	bool traced;
	int live;
	bool child_done;
	int child_status;
	unsigned long throttles;
	uint64_t start_ns;
	pid_t follow;
	uint64_t follow_ns;
};

/* pfmon_loop_ops.proc_event: what happened to a traced thread */
#define PFMON_PROC_NEW		1	/* created; its context is loaded */
#define PFMON_PROC_EXEC		2	/* exec'd: new mappings */
#define PFMON_PROC_EXIT		3	/* exiting: mappings still readable */

/**
 * struct pfmon_loop_ops - what a session loop calls
 * @interval_ms: call @tick this often (0: never)
 * @tick: an interval elapsed
 * @drain: a context woke (ring data, or its thread ended)
 * @proc_event: a traced thread was created, exec'd or is exiting
 * @arg: passed to each
 */
struct pfmon_loop_ops {
	unsigned int interval_ms;
	void (*tick)(struct pfmon_session *s, void *arg);
	void (*drain)(struct pfmon_session *s, struct pfmon_target *t,
		      void *arg);
	void (*proc_event)(struct pfmon_session *s, pid_t tid, int what,
			   void *arg);
	void *arg;
};

/**
 * struct pfmon_what - what stat and record monitor, from their options
 * @ev_lists: the -e arguments
 * @nlists: how many
 * @system_wide: -a or -C
 * @cpus: -C's CPU list, or NULL
 * @pid: -p's process, or 0
 */
struct pfmon_what {
	char **ev_lists;
	int nlists;
	bool system_wide;
	const char *cpus;
	pid_t pid;
	pid_t tid;
};

/* session.c */
int pfmon_what_opt(struct pfmon_what *w, int opt, const char *arg);
int pfmon_what_check(const struct pfmon_what *w, bool command,
		     const char *verb);
int pfmon_session_targets(struct pfmon_session *s,
			  const struct pfmon_what *w, int argc, char **argv);
int pfmon_session_events(struct pfmon_session *s, char **lists, int nlists,
			 bool sets, bool sampling);
int pfmon_session_init(struct pfmon_session *s);
int pfmon_session_loop(struct pfmon_session *s,
		       const struct pfmon_loop_ops *ops);
int pfmon_targets_cpus(struct pfmon_session *s, const char *cpus);
int pfmon_targets_pid(struct pfmon_session *s, pid_t pid);
int pfmon_targets_command(struct pfmon_session *s, char **argv);
int pfmon_session_start(struct pfmon_session *s);
void pfmon_session_go(struct pfmon_session *s);
int pfmon_session_stop(struct pfmon_session *s);
void pfmon_session_free(struct pfmon_session *s);
int pfmon_read_counts(struct pfmon_session *s, uint64_t *vals,
		      uint64_t *set_ns);
uint64_t pfmon_now_ns(void);
pid_t pfmon_thread_tgid(pid_t tid);

#endif /* PFMON_H */
