// SPDX-License-Identifier: GPL-2.0
/*
 * Context lifetime: close() in every state leaves no session and no
 * hook behind (the thread can be monitored again and counts right),
 * register writes on a loaded context, and /sys/kernel/perfmon.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "pfm_test.h"
#include "kselftest_harness.h"

#define MS	1000000ull
#define SYSFS	"/sys/kernel/perfmon/"

/* A sysfs file's first line, newline stripped, into @buf. */
static int sysfs_read(const char *name, char *buf, size_t size)
{
	int fd = open(name, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Permission bits of file @name, or -1. */
static int sysfs_mode(const char *name)
{
	struct stat st;

	return stat(name, &st) ? -1 : (int)(st.st_mode & 0777);
}

/* Attach a task-clock context to @tid, started; its fd. */
static int attach_started(int tid)
{
	int fd = pfm_counting_ctx(0, SOFT_EV_TASK_CLOCK, 0);

	if (fd < 0)
		return fd;
	if (pfm_load(fd, tid) || pfm_start(fd, NULL)) {
		close(fd);
		return -errno;
	}
	return fd;
}

TEST(close_in_every_state)
{
	struct spinner sp;
	clockid_t cid;
	uint64_t c0, c0i, c1i, c1, v;
	int fd, tid;

	/* NEW, then UNLOADED. */
	fd = pfm_open();
	ASSERT_LE(0, fd);
	close(fd);
	fd = pfm_counting_ctx(0, SOFT_EV_TASK_CLOCK, 0);
	ASSERT_LE(0, fd);
	close(fd);
	/* LOADED on this thread, counting. */
	fd = attach_started(gettid());
	ASSERT_LE(0, fd);
	EXPECT_EQ(1, sessions("task"));
	close(fd);
	EXPECT_EQ(0, sessions("task"));
	/* LOADED on another thread, counting, closed while it runs. */
	tid = spinner_start(&sp);
	ASSERT_LT(0, tid);
	ASSERT_EQ(0, pthread_getcpuclockid(sp.thread, &cid));
	fd = attach_started(tid);
	ASSERT_LE(0, fd);
	usleep(50000);
	close(fd);
	EXPECT_EQ(0, sessions("task"));
	/* The old hook is gone or inert: a new context counts right. */
	usleep(20000);
	fd = attach_started(tid);
	ASSERT_LE(0, fd);
	usleep(20000);
	ASSERT_EQ(0, pfm_stop(fd));
	ASSERT_EQ(0, pfm_write_pmds(fd, &(pfarg_pmd_t){ .reg_num = 0 }, 1));
	/*
	 * The spinner runs on while we call: its clock read just outside
	 * start and stop bounds the count from above, just inside from below.
	 */
	c0 = clock_ns(cid);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	c0i = clock_ns(cid);
	usleep(100000);
	c1i = clock_ns(cid);
	ASSERT_EQ(0, pfm_stop(fd));
	c1 = clock_ns(cid);
	v = pfm_read_pmd(fd, 0, 0);
	TH_LOG("after a close while running: %llu ns counted, %llu..%llu ns ran",
	       (unsigned long long)v, (unsigned long long)(c1i - c0i),
	       (unsigned long long)(c1 - c0));
	EXPECT_LE(v, (c1 - c0) * (1 + 0.01 * timing_slack()));
	EXPECT_GE(v, (c1i - c0i) * (1 - 0.01 * timing_slack()));
	close(fd);
	spinner_stop(&sp);
	/* System-wide, counting. */
	fd = pfm_counting_ctx(PFM_FL_SYSTEM_WIDE, SOFT_EV_CPU_CLOCK, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_load(fd, 0));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	EXPECT_EQ(1, sessions("sys"));
	close(fd);
	EXPECT_EQ(0, sessions("sys"));
}

/* A thread asleep in read() on a pipe until it is written to. */
struct sleeper {
	pthread_t thread;
	int pipe[2];
	atomic_int tid;
};

static void *sleeper_fn(void *arg)
{
	struct sleeper *s = arg;
	char c;

	atomic_store(&s->tid, gettid());
	while (read(s->pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

/*
 * A thread sleeping in the kernel does not run the work that would
 * unlink its hook; contexts loaded on it and closed must still go at
 * once (twice the per-user limit of them), and the thread then holds
 * one hook: one module reference more, until it runs.  As root the
 * limit is lowered to 32 meanwhile: 512 loads and closes outlast the
 * harness's 30 s on the debug kernel beside another guest.
 */
TEST(close_while_thread_sleeps)
{
	long long saved = knob_read("ctx_per_user_max");
	bool lowered = getuid() == 0 && !knob_write("ctx_per_user_max", "32");
	long long max = knob_read("ctx_per_user_max");
	long long base = perfmon_refcnt();
	struct sleeper sl = { 0 };
	int fd;
	char buf[32];
	long long i;

	ASSERT_LT(0, max);
	ASSERT_LE(0, base);
	ASSERT_EQ(0, pipe(sl.pipe));
	ASSERT_EQ(0, pthread_create(&sl.thread, NULL, sleeper_fn, &sl));
	/* Its id first: the thread stores it as it starts. */
	while (!atomic_load(&sl.tid))
		sched_yield();
	ASSERT_TRUE(task_wait_state(atomic_load(&sl.tid), 'S', 1000))
		TH_LOG("state %c", task_state(atomic_load(&sl.tid)));
	for (i = 0; i < 2 * max; i++) {
		fd = attach_started(atomic_load(&sl.tid));
		ASSERT_LE(0, fd) TH_LOG("context %lld: %s", i, strerror(-fd));
		close(fd);
	}
	EXPECT_EQ('S', task_state(atomic_load(&sl.tid)));
	EXPECT_EQ(base + 1, refcnt_settle(base + 1));
	EXPECT_EQ(0, sessions("task"));
	ASSERT_EQ(1, write(sl.pipe[1], "x", 1));
	pthread_join(sl.thread, NULL);
	EXPECT_EQ(base, refcnt_settle(base));
	close(sl.pipe[0]);
	close(sl.pipe[1]);
	snprintf(buf, sizeof(buf), "%lld", saved);
	if (lowered)
		EXPECT_EQ(0, knob_write("ctx_per_user_max", buf));
}

/* A PMD written while the context counts takes effect at once. */
TEST(write_pmds_while_loaded)
{
	pfarg_pmd_t pd;
	uint64_t v;
	int fd = attach_started(gettid());

	ASSERT_LE(0, fd);
	burn_cpu(50 * MS);
	memset(&pd, 0, sizeof(pd));
	pd.reg_value = 1ull << 40;
	ASSERT_EQ(0, pfm_write_pmds(fd, &pd, 1));
	burn_cpu(10 * MS);
	v = pfm_read_pmd(fd, 0, 0);
	EXPECT_LE(1ull << 40, v);
	/* 10 ms burnt, and the calls around them (slow on a debug kernel). */
	EXPECT_GT((1ull << 40) + 20 * MS * timing_slack(), v);
	close(fd);
}

/*
 * A system-wide context whose CPU goes offline keeps its count and
 * counts again once the CPU is back: the count lies between the time
 * the CPU was surely online while counting and the whole window.
 */
TEST(cpu_hotplug_keeps_system_wide_counts)
{
	uint64_t t0, t1, t2, t3, t4, t5, v;
	int fd;

	if (online_cpus() < 2 || getuid() != 0)
		SKIP(return, "needs 2 CPUs and root");
	ASSERT_EQ(0, pin_to_cpu(0));
	fd = pfm_counting_ctx(PFM_FL_SYSTEM_WIDE, SOFT_EV_CPU_CLOCK, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_load(fd, 1));
	t0 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	t1 = clock_ns(CLOCK_MONOTONIC);
	usleep(50000);
	t2 = clock_ns(CLOCK_MONOTONIC);
	if (cpu_set_online(1, 0)) {
		close(fd);
		SKIP(return, "CPU1 cannot go offline here");
	}
	usleep(50000);
	ASSERT_EQ(0, cpu_set_online(1, 1));
	t3 = clock_ns(CLOCK_MONOTONIC);
	usleep(50000);
	t4 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, pfm_stop(fd));
	t5 = clock_ns(CLOCK_MONOTONIC);
	v = pfm_read_pmd(fd, 0, 0);
	TH_LOG("counted %llu ns: online >= %llu, window %llu, offline %llu",
	       (unsigned long long)v,
	       (unsigned long long)((t2 - t1) + (t4 - t3)),
	       (unsigned long long)(t5 - t0), (unsigned long long)(t3 - t2));
	EXPECT_LE((t2 - t1) + (t4 - t3), v);
	/* The offline time is not counted. */
	EXPECT_GT(t5 - t0 - 40 * MS, v);
	close(fd);
}

TEST(sysfs_layout)
{
	char buf[64], want[16];

	ASSERT_EQ(0, sysfs_read(SYSFS "version", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%u.%u", PFM_VERSION_MAJ, PFM_VERSION_MIN);
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, sysfs_read(SYSFS "pmu_desc/model", buf, sizeof(buf)));
	EXPECT_STREQ("soft", buf);
	ASSERT_EQ(0, sysfs_read(SYSFS "pmu_desc/counter_width", buf,
				sizeof(buf)));
	EXPECT_STREQ("32", buf);
	ASSERT_EQ(0, sysfs_read(SYSFS "pmu_desc/pmc0/name", buf, sizeof(buf)));
	EXPECT_STREQ("SOFT_EVTSEL0", buf);
	ASSERT_EQ(0, sysfs_read(SYSFS "pmu_desc/pmc0/rsvd_msk", buf,
				sizeof(buf)));
	EXPECT_STREQ("0xffffffffffffff00", buf);
	ASSERT_EQ(0, sysfs_read(SYSFS "pmu_desc/pmd3/name", buf, sizeof(buf)));
	EXPECT_STREQ("SOFT_CTR3", buf);
	EXPECT_EQ(-ENOENT, sysfs_read(SYSFS "pmu_desc/pmd4/name", buf,
				      sizeof(buf)));
	EXPECT_EQ(0, access(SYSFS "formats", X_OK));
	ASSERT_EQ(0, sysfs_read(SYSFS "ctx_per_user_max", buf, sizeof(buf)));
	EXPECT_LT(0, strtol(buf, NULL, 0));
	/* Permissions and limits (Documentation/security.rst). */
	ASSERT_EQ(0, sysfs_read(SYSFS "paranoid", buf, sizeof(buf)));
	EXPECT_STREQ("2", buf);
	ASSERT_EQ(0, sysfs_read(SYSFS "smpl_buffer_mem_max", buf, sizeof(buf)));
	EXPECT_LT(0, strtoll(buf, NULL, 0));
	ASSERT_EQ(0, sysfs_read(SYSFS "smpl_buffer_mem_cur", buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);
	EXPECT_EQ(0644, sysfs_mode(SYSFS "paranoid"));
	EXPECT_EQ(0644, sysfs_mode(SYSFS "smpl_buffer_mem_max"));
	EXPECT_EQ(0444, sysfs_mode(SYSFS "smpl_buffer_mem_cur"));
}

TEST_HARNESS_MAIN
