// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel API (pfmk_*, include/perfmon/kapi.h), driven from kernel
 * threads by the test module pfm_kapi_test.ko
 * (tools/selftests/perfmon/kapi/): each test loads it, writes a
 * scenario's name to debugfs pfm_kapi_test/run, checks the key=value
 * lines of pfm_kapi_test/result, and unloads it.  After each unload no
 * session is left and perfmon.ko's reference count is back to where it
 * was (a closed context frees itself, and drops its module reference,
 * from a workqueue: that is waited for).
 *
 * The rig puts the module in the guest's /modules without loading it;
 * the tests skip without it, without root, without perfmon.ko or with
 * a PMU description other than the software PMU's (pfm_soft, the test
 * guests' default).
 */
#include <limits.h>
#include <stdlib.h>

#include <perfmon/perfmon_dfl_smpl.h>

#include "pfm_test.h"
#include "kselftest_harness.h"

#define KAPI_KO		"/modules/pfm_kapi_test.ko"
#define KAPI_MOD	"pfm_kapi_test"
#define KAPI_DIR	"/sys/kernel/debug/pfm_kapi_test/"
#define SYSFS		"/sys/kernel/perfmon/"
#define RESULT_SIZE	4096
#define MS		1000000ll
#define NO_KEY		LLONG_MIN

/*
 * Unload the test module; 0 or -errno.  It is busy while a file of its
 * debugfs folder is open: retry for up to 2 s.
 */
static int kapi_unload(void)
{
	int ret, tries = 200;

	while ((ret = module_unload(KAPI_MOD)) == -EAGAIN && --tries)
		usleep(10000);
	return ret;
}

/* Load the test module, unloading a copy left behind first. */
static int kapi_load(void)
{
	int ret = module_load(KAPI_KO, "");

	if (ret == -EEXIST) {
		ret = kapi_unload();
		if (!ret)
			ret = module_load(KAPI_KO, "");
	}
	return ret;
}

/* Run @scenario; its result into @res (NUL-terminated).  0 or -errno. */
static int kapi_run(const char *scenario, char *res, size_t size)
{
	ssize_t n;
	int fd;

	res[0] = 0;
	fd = open(KAPI_DIR "run", O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, scenario, strlen(scenario));
	close(fd);
	if (n != (ssize_t)strlen(scenario))
		return n < 0 ? -errno : -EIO;
	fd = open(KAPI_DIR "result", O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, res, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	res[n] = 0;
	return 0;
}

/* The value of line @key=VALUE of @res; NO_KEY when there is none. */
static long long res_val(const char *res, const char *key)
{
	size_t len = strlen(key);
	const char *p = res;

	while (p && *p) {
		if (!strncmp(p, key, len) && p[len] == '=')
			return strtoll(p + len + 1, NULL, 0);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NO_KEY;
}

/* The value of line ROUND_NAME=VALUE of @res; NO_KEY when there is none. */
static long long round_val(const char *res, const char *round,
			   const char *name)
{
	char key[64];

	snprintf(key, sizeof(key), "%s_%s", round, name);
	return res_val(res, key);
}

/* @res on one line, for the log. */
static const char *one_line(const char *res)
{
	static char buf[RESULT_SIZE];
	size_t i;

	for (i = 0; res[i] && i < sizeof(buf) - 1; i++)
		buf[i] = res[i] == '\n' ? ' ' : res[i];
	buf[i] = 0;
	return buf;
}

#define V(key)	res_val(self->res, key)

/* One expected key=value of a result. */
struct kapi_want {
	const char *key;
	long long value;
};

FIXTURE(kapi) {
	bool loaded;
	long long refcnt;
	char res[RESULT_SIZE];
};

FIXTURE_SETUP(kapi)
{
	if (getuid())
		SKIP(return, "needs root");
	if (access(KAPI_KO, R_OK))
		SKIP(return, "no " KAPI_KO);
	if (access(PERFMON_MOD, F_OK))
		SKIP(return, "perfmon.ko is not loaded");
	if (!pmu_is("soft"))
		SKIP(return, "the scenarios count pfm_soft's events");
	self->refcnt = perfmon_refcnt();
	ASSERT_LE(0, self->refcnt);
	ASSERT_EQ(0, kapi_load());
	self->loaded = true;
}

/* Every scenario leaves nothing behind once the module is gone. */
FIXTURE_TEARDOWN(kapi)
{
	if (self->loaded)
		EXPECT_EQ(0, kapi_unload());
	if (self->refcnt <= 0)
		return;
	EXPECT_EQ(self->refcnt, refcnt_settle(self->refcnt));
	EXPECT_EQ(0, sessions("task"));
	EXPECT_EQ(0, sessions("sys"));
}

/* Run @name, log its result, and check that it did not fail. */
#define RUN_OK(name) do {						\
	const char *_sc = (name);					\
									\
	ASSERT_EQ(0, kapi_run(_sc, self->res, sizeof(self->res)));	\
	TH_LOG("%s: %s", _sc, one_line(self->res));			\
	ASSERT_EQ(0, V("err"));						\
} while (0)

/* cpu-clock of CPU 0 over a 50 ms busy loop of a kernel thread there. */
TEST_F(kapi, system_wide_cpu_clock)
{
	if (!self->loaded)
		return;
	RUN_OK("system");
	EXPECT_EQ(0, V("cpu"));
	EXPECT_LE(50 * MS, V("elapsed"));
	EXPECT_TRUE(within_pct(V("count"), V("elapsed"), 5));
	EXPECT_EQ(V("count"), V("value"));	/* pfmk_read_values() */
}

/*
 * task-clock of a kernel thread monitoring itself, busy on CPU 0 for
 * 50 ms while a spinning thread of ours shares that CPU: the count is
 * the kernel thread's CPU time ("runtime", the scheduler's figure taken
 * around start and stop), not the wall time.  Without the spinner, a
 * fully preemptible kernel (the debug and -rt kernels) gave the CPU to
 * whatever else woke there, and a comparison with the wall time failed:
 * 42.5 ms counted in 59.6 ms.
 *
 * The scheduler charges a thread from the start of the switch that
 * brings it in; the count starts at perfmon's preempt notifier, at the
 * end of that switch.  So the count is at most the runtime, and less by
 * start's and stop's cost plus that much per switch ("switches", the
 * thread's): with none, 0.1 to 0.9 ms less; with 3 and 4, 1.0 and 1.7
 * ms less (arm64 6.1 under TCG, the slowest guest).  A millisecond each,
 * times the slack, is the bound.
 */
TEST_F(kapi, thread_task_clock)
{
	long long lost_max;
	struct spinner sp;
	int tid;

	if (!self->loaded)
		return;
	tid = spinner_start(&sp);
	ASSERT_LT(0, tid);
	EXPECT_EQ(0, pin_tid_to_cpu(tid, 0));
	EXPECT_EQ(0, kapi_run("thread", self->res, sizeof(self->res)));
	spinner_stop(&sp);
	TH_LOG("thread: %s", one_line(self->res));
	ASSERT_EQ(0, V("err"));
	EXPECT_EQ(0, V("cpu"));
	EXPECT_LE(50 * MS, V("elapsed"));
	/* The spinner ran there too, and its time is not counted. */
	EXPECT_LE(1, V("switches"));
	EXPECT_GT(V("elapsed") * 9 / 10, V("count"));
	EXPECT_LE(V("count"), V("runtime"));
	lost_max = (long long)((1 + V("switches")) * MS * timing_slack());
	EXPECT_LE(V("runtime") - V("count"), lost_max);
	EXPECT_EQ(V("count"), V("value"));	/* pfmk_read_values() */
}

/*
 * The ring read by a kernel thread: records parse, every overflow is a
 * sample or a lost one, a lost record follows the drops, the range
 * copied last wraps and comes in two chunks, watermark wake-ups.
 */
TEST_F(kapi, ring_copy_and_parse)
{
	long long samples, records;

	if (!self->loaded)
		return;
	RUN_OK("ring");
	samples = V("samples");
	records = V("records");
	EXPECT_EQ((long long)page_size(), V("data_size"));
	EXPECT_LE(1, samples);
	EXPECT_EQ(0, V("bad"));
	EXPECT_EQ(0, V("unknown"));
	EXPECT_EQ(0, V("switches"));
	EXPECT_EQ(0, V("mismatch"));
	EXPECT_EQ(0, V("big_chunks"));
	EXPECT_EQ(V("ctrl_records"), records);
	EXPECT_EQ(samples + V("lost_recs"), records);
	/* Each overflow of PMD0, counted by its countdown, is one or other. */
	EXPECT_EQ(V("overflows"), samples + V("ctrl_lost"));
	EXPECT_LE(1, V("ctrl_lost"));
	EXPECT_LE(1, V("lost_recs"));
	EXPECT_LE(V("lost_recs"), V("lost_sum"));
	EXPECT_LE(V("lost_sum"), V("ctrl_lost"));
	EXPECT_EQ(1, V("wrapped"));
	EXPECT_LE(2, V("chunks"));
	EXPECT_EQ(0, V("pos") % 8);
	EXPECT_EQ(0, V("bytes") % 8);
	EXPECT_LE(V("bytes"), V("data_size"));
	EXPECT_LE(1, V("early_drains"));
	/* wakeup_events 8: one wake-up per 8 records at most. */
	EXPECT_LE(1, V("ctrl_wakeups"));
	EXPECT_LE(V("ctrl_wakeups"), records / 8);
	EXPECT_LE(1, V("reads_woken"));
	EXPECT_LE(V("reads_woken"), V("ctrl_wakeups"));
	EXPECT_EQ(0, V("reads_msg"));
}

/*
 * The default format with room for 8 entries: the full-buffer message
 * by a blocking read, 8 entries of this thread, restart empties it and
 * the second round is the same.
 */
TEST_F(kapi, dfl_full_buffer)
{
	static const char * const rounds[] = { "first", "second" };
	const long long size = sizeof(struct pfm_dfl_smpl_hdr) +
			       8 * sizeof(struct pfm_dfl_smpl_entry);
	const char *r;
	unsigned int i;

	if (!self->loaded)
		return;
	RUN_OK("dfl");
	EXPECT_EQ(size, V("buf_size"));
	EXPECT_LE(size, V("smpl_size"));
	for (i = 0; i < 2; i++) {
		r = rounds[i];
		EXPECT_EQ(PFM_MSG_OVFL, round_val(self->res, r, "msg_type"));
		EXPECT_EQ(1, round_val(self->res, r, "msg_pmds"));
		EXPECT_EQ(1, round_val(self->res, r, "msg_tid_ok"));
		EXPECT_EQ(8, round_val(self->res, r, "count"));
		EXPECT_EQ(size, round_val(self->res, r, "cur_offs"));
		EXPECT_EQ(0, round_val(self->res, r, "overflows"));
		EXPECT_EQ(0, round_val(self->res, r, "bad"));
		EXPECT_LE(1, round_val(self->res, r, "chunks"));
	}
}

/* Every refused input, with its errno. */
TEST_F(kapi, refusals)
{
	static const struct kapi_want want[] = {
		{ "null_write_pmcs", -EBADF },
		{ "null_start", -EBADF },
		{ "null_stop", -EBADF },
		{ "null_read", -EBADF },
		{ "null_smpl_copy", -EBADF },
		{ "null_close", -EBADF },
		{ "closed_create", 0 },
		{ "closed_first_close", 0 },
		{ "closed_write_pmcs", -EBADF },
		{ "closed_start", -EBADF },
		{ "closed_unload", -EBADF },
		{ "closed_read", -EBADF },
		{ "closed_close", -EBADF },
		{ "write_pmcs_count0", -EINVAL },
		{ "write_pmcs_count_neg", -EINVAL },
		{ "write_pmcs_count_max1", -EINVAL },
		{ "write_pmds_count0", -EINVAL },
		{ "read_pmds_count_neg", -EINVAL },
		{ "create_evtsets_count0", -EINVAL },
		{ "getinfo_evtsets_count_max1", -EINVAL },
		{ "set_drv_config_count0", -EINVAL },
		{ "write_pmcs_null", -EINVAL },
		{ "read_pmds_null", -EINVAL },
		{ "read_values_null", -EINVAL },
		{ "read_values_none", -EINVAL },
		{ "read_values_unused", -EINVAL },
		{ "load_null", -EINVAL },
		{ "start_null", -EINVAL },
		{ "read_small", -EINVAL },
		{ "read_empty", -EAGAIN },
		{ "smpl_copy_nobuf", -ENODEV },
		{ "dfl_copy_past_end", -EINVAL },
		{ "dfl_copy_at_end", -EINVAL },
		{ "dfl_copy_pos_wraps", -EINVAL },
		{ "dfl_copy_last_byte", 0 },
		{ "dfl_copy_fn_error", -E2BIG },
		{ "dfl_copy_fn_error_calls", 1 },
		{ "dfl_copy_no_fn", -EINVAL },
		{ "ring_copy_too_long", -EINVAL },
		{ "ring_copy_far_pos", 0 },
		{ "ring_copy_far_pos_chunks", 2 },
		{ "create_block_system", -EINVAL },
		{ "create_null_req", -EINVAL },
		{ "create_null_completion", -EINVAL },
		{ "create_fmt_arg_size", -EINVAL },
		{ "create_reserved", -EINVAL },
	};
	unsigned int i;
	long long v;

	if (!self->loaded)
		return;
	RUN_OK("refusals");
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		v = V(want[i].key);
		if (v != want[i].value)
			TH_LOG("%s=%lld, expected %lld", want[i].key, v,
			       want[i].value);
		EXPECT_EQ(want[i].value, v);
	}
}

/*
 * The kernel API never loads a PMU description (Documentation/kapi.rst):
 * with none registered and modprobe able to load one (perfmon.pmu names
 * it, its module installed), pfmk_create_context() fails with -ENODEV,
 * logs the line naming the fix, and loads nothing; a context of
 * /dev/perfmon then does load it.  The description's module is
 * uninstalled afterwards: pmu_module_test counts on nothing loading.
 */
TEST_F(kapi, no_pmu_never_loads)
{
	const char *choice;
	struct pmu_mod pm;
	char mods[160];
	int fd, logged;

	if (!self->loaded)
		return;
	if (!pmu_mod_get(&pm))
		SKIP(return, "needs root and the description's module in /modules/");
	choice = strcmp(pm.name, "pfm_perf") ? "soft" : "perf";
	snprintf(mods, sizeof(mods), "/modules/perfmon.ko %s", pm.ko);
	ASSERT_EQ(0, install_modules(mods));
	ASSERT_EQ(0, write_str(PMU_PARAM, choice));
	ASSERT_EQ(0, module_unload(pm.name));
	logged = klog_count("the kernel API loads none");
	RUN_OK("create");
	EXPECT_EQ(-ENODEV, V("create"));
	EXPECT_EQ(logged + 1, klog_count("the kernel API loads none"));
	EXPECT_FALSE(pmu_module_is(pm.name));

	/* The user's path loads it, as perfmon.pmu says. */
	fd = pfm_new_ctx(0);
	EXPECT_LE(0, fd);
	EXPECT_TRUE(pmu_module_is(pm.name));
	if (fd >= 0)
		close(fd);
	EXPECT_EQ(0, write_str(PMU_PARAM, "auto"));
	EXPECT_EQ(0, uninstall_modules());
	/* Loaded again by hand when the autoload failed. */
	if (!pmu_module_is(pm.name))
		ASSERT_EQ(0, module_load(pm.ko, ""));
}

/*
 * pfmk_close() racing other kernel threads' calls on the same
 * descriptor (Documentation/kapi.rst): a loader loads, starts, reads,
 * stops and unloads in a loop, a reader waits in pfmk_read(), and the
 * close lands at a random point.  Every call answers 0 or -EBADF, each
 * racer ends its round on -EBADF (the reader woken by the close), and
 * no session is left (a load that raced the close is undone by it).
 * Under KASAN a context freed while still loaded, or a completion
 * completed after the close, is a report, which fails the rig's run.
 */
TEST_F(kapi, close_racing_calls)
{
	long long rounds;

	if (!self->loaded)
		return;
	RUN_OK("close_race");
	rounds = V("rounds");
	EXPECT_LE(50, rounds);
	EXPECT_EQ(0, V("odd"));
	EXPECT_EQ(rounds, V("ebadf"));
	EXPECT_EQ(rounds, V("reads_closed"));
	EXPECT_LE(1, V("loads"));
	/*
	 * The race itself: the loader is inside a call when the close
	 * comes (races_hit) in most rounds, as it is outside one only
	 * between its load and start and at its cond_resched(); and a
	 * load returns while the close runs (loads_closing).  Measured
	 * (x86_64 6.1, slack 2, beside a build): 521 and 363 of 524 rounds.
	 */
	EXPECT_LE(rounds / 2, V("races_hit"));
	EXPECT_LE(1, V("loads_closing"));
	EXPECT_EQ(0, sessions("task"));
	EXPECT_EQ(0, sessions("sys"));
}

/* Let a "long" scenario run 200 ms, unload the module under it. */
static int unload_under_run(long long *sys_after, long long *task_after)
{
	int ret;

	usleep(200000);
	ret = kapi_unload();
	*sys_after = sessions("sys");
	*task_after = sessions("task");
	return ret;
}

/*
 * Unload in the middle: a kernel thread with a system-wide context and
 * a per-thread ring context runs when the module goes; its exit stops
 * the thread, which closes them.  The core keeps per-thread and
 * system-wide sessions apart: the ring context's load is refused
 * (-EBUSY) while the system-wide one is loaded, and it stays unloaded.
 */
TEST_F(kapi, long_run_unloaded)
{
	long long sys, task;

	if (!self->loaded)
		return;
	RUN_OK("long");
	EXPECT_EQ(1, V("sys_started"));
	EXPECT_EQ(-EBUSY, V("ring_open"));
	EXPECT_EQ(1, sessions("sys"));
	EXPECT_EQ(0, sessions("task"));
	ASSERT_EQ(0, unload_under_run(&sys, &task));
	self->loaded = false;
	EXPECT_EQ(0, sys);
	EXPECT_EQ(0, task);
	EXPECT_EQ(self->refcnt, refcnt_settle(self->refcnt));
}

/* The same with the ring context alone, loaded and sampling. */
TEST_F(kapi, long_ring_run_unloaded)
{
	long long sys, task;

	if (!self->loaded)
		return;
	RUN_OK("long_ring");
	EXPECT_EQ(0, V("sys_started"));
	EXPECT_EQ(0, V("ring_open"));
	EXPECT_LE(1, V("ready_samples"));
	EXPECT_EQ(0, sessions("sys"));
	EXPECT_EQ(1, sessions("task"));
	ASSERT_EQ(0, unload_under_run(&sys, &task));
	self->loaded = false;
	EXPECT_EQ(0, sys);
	EXPECT_EQ(0, task);
	EXPECT_EQ(self->refcnt, refcnt_settle(self->refcnt));
}

TEST_HARNESS_MAIN
