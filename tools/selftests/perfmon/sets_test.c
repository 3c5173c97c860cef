// SPDX-License-Identifier: GPL-2.0
/*
 * Event sets (multiplexing) on the software PMU: time-based switching
 * whose set durations add up to the counting time, per-set counts that
 * match their durations (set_runs and set_act_duration let a tool
 * scale), and overflow-based switching after reg_ovfl_switch_cnt
 * overflows.
 */
#include "pfm_test.h"
#include "kselftest_harness.h"

#define MS	1000000ull

/* Set @id switching every @timeout ns, PMC0/PMD0 counting @event. */
static int add_set(int fd, uint16_t id, uint32_t flags, uint64_t timeout,
		   uint64_t event, uint64_t value, uint64_t ovfl_cnt)
{
	pfarg_setdesc_t sd;
	pfarg_pmc_t pc;
	pfarg_pmd_t pd;

	memset(&sd, 0, sizeof(sd));
	memset(&pc, 0, sizeof(pc));
	memset(&pd, 0, sizeof(pd));
	sd.set_id = id;
	sd.set_flags = flags;
	sd.set_timeout = timeout;
	pc.reg_set = id;
	pc.reg_value = event;
	pd.reg_set = id;
	pd.reg_value = value;
	pd.reg_short_reset = value;
	pd.reg_ovfl_switch_cnt = ovfl_cnt;
	if (pfm_create_evtsets(fd, &sd, 1) || pfm_write_pmcs(fd, &pc, 1) ||
	    pfm_write_pmds(fd, &pd, 1))
		return -errno;
	return 0;
}

/*
 * System-wide on CPU 0, cpu-clock in both sets, 10 ms and 20 ms: the
 * durations add up to the time between start and stop, each set's
 * count equals its duration, and the 20 ms set got about twice the time.
 */
TEST(time_switching_durations_add_up)
{
	pfarg_setinfo_t si[2];
	uint64_t t0, t1, i0, i1, sum, v;
	int fd, i;

	fd = pfm_new_ctx(PFM_FL_SYSTEM_WIDE);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, add_set(fd, 0, PFM_SETFL_TIME_SWITCH, 10 * MS,
			     SOFT_EV_CPU_CLOCK, 0, 0));
	ASSERT_EQ(0, add_set(fd, 1, PFM_SETFL_TIME_SWITCH, 20 * MS,
			     SOFT_EV_CPU_CLOCK, 0, 0));
	ASSERT_EQ(0, pfm_load(fd, 0));
	t0 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	i0 = clock_ns(CLOCK_MONOTONIC);
	usleep(600000);
	i1 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, pfm_stop(fd));
	t1 = clock_ns(CLOCK_MONOTONIC);
	sum = 0;
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pfm_set_info(fd, i, &si[i]));
		v = pfm_read_pmd(fd, i, 0);
		TH_LOG("set %d: %llu runs, %llu ns active, %llu ns counted", i,
		       (unsigned long long)si[i].set_runs,
		       (unsigned long long)si[i].set_act_duration,
		       (unsigned long long)v);
		EXPECT_LE(5, si[i].set_runs);
		EXPECT_TRUE(within_pct(v, si[i].set_act_duration, 2.0));
		sum += si[i].set_act_duration;
	}
	TH_LOG("sum %llu ns, elapsed %llu..%llu ns", (unsigned long long)sum,
	       (unsigned long long)(i1 - i0), (unsigned long long)(t1 - t0));
	/*
	 * Within 2% of the counting time: between the window inside the
	 * start and stop calls and the one around them (IPI latency).
	 */
	EXPECT_LE((i1 - i0) * 98 / 100, sum);
	EXPECT_GE((t1 - t0) * 102 / 100, sum);
	EXPECT_TRUE(within_pct(si[1].set_act_duration,
			       2 * si[0].set_act_duration, 25.0));
	close(fd);
}

/* Per-thread: the timeout runs only while the thread runs. */
TEST(time_switching_per_thread_follows_cputime)
{
	pfarg_setinfo_t si[3];
	uint64_t c0, c1, sum = 0;
	int fd, i;

	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, add_set(fd, i, PFM_SETFL_TIME_SWITCH, 5 * MS,
				     SOFT_EV_TASK_CLOCK, 0, 0));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	burn_cpu(150 * MS);
	c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	ASSERT_EQ(0, pfm_stop(fd));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, pfm_set_info(fd, i, &si[i]));
		EXPECT_LE(5, si[i].set_runs);
		sum += pfm_read_pmd(fd, i, 0);
	}
	TH_LOG("3 sets: %llu ns counted in all, %llu ns ran",
	       (unsigned long long)sum, (unsigned long long)(c1 - c0));
	EXPECT_TRUE(within_pct(sum, c1 - c0, 2.0));
	close(fd);
}

/*
 * Overflow switching: each set's task-clock counter starts 1 ms below a
 * 64-bit overflow and switches after 1 overflow, so the sets alternate
 * every millisecond of CPU time.
 */
TEST(overflow_switching)
{
	const uint64_t period = 1 * MS, start = -period;
	pfarg_setinfo_t si[2];
	pfarg_pmd_t pd;
	int fd, i;

	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, add_set(fd, i, PFM_SETFL_OVFL_SWITCH, 0,
				     SOFT_EV_TASK_CLOCK, start, 1));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	burn_cpu(100 * MS);
	ASSERT_EQ(0, pfm_stop(fd));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pfm_set_info(fd, i, &si[i]));
		TH_LOG("set %d: %llu runs, %llu ns active", i,
		       (unsigned long long)si[i].set_runs,
		       (unsigned long long)si[i].set_act_duration);
		/*
		 * 100 ms of 1 ms turns: about 50 each; fewer when each
		 * switch takes a share of the time (timing slack).
		 */
		EXPECT_LE(35 / timing_slack(), si[i].set_runs);
		EXPECT_GE(65, si[i].set_runs);
		EXPECT_EQ(1, si[i].set_ovfl_pmds[0]);
		memset(&pd, 0, sizeof(pd));
		pd.reg_set = i;
		ASSERT_EQ(0, pfm_read_pmds(fd, &pd, 1));
		EXPECT_EQ(start, pd.reg_last_reset_val);
		EXPECT_LE(start, pd.reg_value);	/* reset, below the wrap */
	}
	close(fd);
}

TEST_HARNESS_MAIN
