// SPDX-License-Identifier: GPL-2.0
/*
 * Event sets (multiplexing) on the software PMU: time-based switching
 * whose set durations add up to the counting time, per-set counts that
 * match their durations (set_runs and set_act_duration let a tool
 * scale), and overflow-based switching after reg_ovfl_switch_cnt
 * overflows.  The cap on sets per context (sets_per_ctx_max) and the
 * interrupts-off time of switching at that cap.
 */
#include <limits.h>
#include <linux/capability.h>
#include "pfm_test.h"
#include "kselftest_harness.h"

#define CAP_SYS_ADMIN_BIT	21

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
	double ratio;
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
	/*
	 * Set 1's timeout is twice set 0's: a ratio of 2, which no host
	 * moves down to 1.  A switch that comes late lengthens the set it
	 * ends, either set alike, so lateness pulls the ratio towards 1:
	 * below 1.5 only when switches come 10 ms late on average, or a
	 * host preemption of the vCPU over 100 ms lands in set 0.  An
	 * equal split (1.0) fails at any slack.  Measured at slack 2 beside
	 * a build: 392.4 ms against 207.1 ms, 1.90.  Above 2 only when such
	 * a preemption lands in set 1: the timing slack widens that side.
	 */
	ratio = (double)si[1].set_act_duration /
		(si[0].set_act_duration ? si[0].set_act_duration : 1);
	TH_LOG("set 1 against set 0: %.3f", ratio);
	EXPECT_LE(1.5, ratio);
	EXPECT_GE(2.0 * (1 + 0.25 * timing_slack()), ratio);
	close(fd);
}

/*
 * Per-thread: the timeout runs only while the thread runs.  The sets
 * count from PFM_START to PFM_STOP, which lie between the inner and the
 * outer readings of the thread's CPU clock: the sum is checked against
 * both.  (Against the inner span alone, a vCPU held off by the host
 * between PFM_START and the first reading, which the guest's clocks see
 * as the thread running, counted 5 ms more than the burn loop ran.)
 */
TEST(time_switching_per_thread_follows_cputime)
{
	uint64_t out0, c0, c1, out1, sum = 0;
	pfarg_setinfo_t si[3];
	int fd, i;

	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, add_set(fd, i, PFM_SETFL_TIME_SWITCH, 5 * MS,
				     SOFT_EV_TASK_CLOCK, 0, 0));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	out0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	burn_cpu(150 * MS);
	c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	ASSERT_EQ(0, pfm_stop(fd));
	out1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, pfm_set_info(fd, i, &si[i]));
		EXPECT_LE(5, si[i].set_runs);
		sum += pfm_read_pmd(fd, i, 0);
	}
	TH_LOG("3 sets: %llu ns counted in all; ran %llu ns inside, %llu outside",
	       (unsigned long long)sum, (unsigned long long)(c1 - c0),
	       (unsigned long long)(out1 - out0));
	EXPECT_LE((c1 - c0) / 100 * 98, sum);
	EXPECT_GE((out1 - out0) / 100 * 102, sum);
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
		 * 100 ms of 1 ms turns: about 50 each.  A busy host makes
		 * the clock's overflow late (16 turns of 3 ms were seen),
		 * never early: every turn lasts at least most of a period,
		 * and there are never more turns than periods.
		 */
		EXPECT_LE(10, si[i].set_runs);
		EXPECT_GE(65, si[i].set_runs);
		EXPECT_LE(si[i].set_runs * period * 9 / 10,
			  si[i].set_act_duration);
		EXPECT_EQ(1, si[i].set_ovfl_pmds[0]);
		memset(&pd, 0, sizeof(pd));
		pd.reg_set = i;
		ASSERT_EQ(0, pfm_read_pmds(fd, &pd, 1));
		EXPECT_EQ(start, pd.reg_last_reset_val);
		EXPECT_LE(start, pd.reg_value);	/* reset, below the wrap */
	}
	/* They alternate, set 0 first. */
	EXPECT_LE(si[1].set_runs, si[0].set_runs);
	EXPECT_GE(si[1].set_runs + 1, si[0].set_runs);
	close(fd);
}

/*
 * Create (or change) sets @first..@first + @n - 1 with @flags and
 * @timeout, PFM_MAX_ARRAY entries per call; 0 or -errno of the first
 * call that failed.  @flags with both PFM_SETFL_TIME_SWITCH and
 * PFM_SETFL_OVFL_SWITCH, which one set may not ask for, alternates
 * them: even ids switch on time, odd ones on overflows.
 */
static int create_sets(int fd, unsigned int first, unsigned int n,
		       uint32_t flags, uint64_t timeout)
{
	const uint32_t both = PFM_SETFL_TIME_SWITCH | PFM_SETFL_OVFL_SWITCH;
	pfarg_setdesc_t *sd = calloc(n, sizeof(*sd));
	unsigned int i, k;
	int ret = 0;

	if (!sd)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		sd[i].set_id = first + i;
		sd[i].set_flags = flags;
		if ((flags & both) == both)
			sd[i].set_flags &= (first + i) % 2 ?
					   ~PFM_SETFL_TIME_SWITCH :
					   ~PFM_SETFL_OVFL_SWITCH;
		sd[i].set_timeout = timeout;
	}
	for (i = 0; i < n && !ret; i += k) {
		k = n - i < PFM_MAX_ARRAY ? n - i : PFM_MAX_ARRAY;
		ret = pfm_array(fd, PFM_CREATE_EVTSETS, sd + i, k);
	}
	free(sd);
	return ret;
}

static int knob_write_num(const char *name, long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", v);
	return knob_write(name, buf);
}

/* Nobody may not write the knob (mode 0644); exit 0 or the step. */
static int sets_knob_nobody_child(void)
{
	if (become_nobody())
		return 100;
	return knob_write("sets_per_ctx_max", "100000") == -EACCES ? 0 : 101;
}

/* Root without CAP_SYS_ADMIN may not either: -EPERM. */
static int sets_knob_nocap_child(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return 100;
	d[0].effective &= ~(1u << CAP_SYS_ADMIN_BIT);
	if (syscall(SYS_capset, &h, d))
		return 101;
	if (knob_write("sets_per_ctx_max", "1000") != -EPERM)
		return 102;
	return knob_write("switch_irqoff_max_ns", "0") == -EPERM ? 0 : 103;
}

/*
 * sets_per_ctx_max sets per context, set 0 included: up to it creation
 * succeeds, one more fails with ENOSPC and creates nothing (the whole
 * array is refused), changing an existing set still works; root raises
 * the knob, nobody and root without CAP_SYS_ADMIN may not write it.
 */
/*
 * A set switches on time or on overflows, not both: perfmon2 v2.8
 * refused the pair with EINVAL at creation, and so does this.
 */
TEST(one_switch_reason_per_set)
{
	pfarg_setdesc_t sd[2];
	pfarg_setinfo_t si;
	int fd = pfm_new_ctx(0);

	ASSERT_LE(0, fd);
	memset(sd, 0, sizeof(sd));
	sd[0].set_id = 1;
	sd[0].set_flags = PFM_SETFL_OVFL_SWITCH;
	sd[1].set_id = 2;
	sd[1].set_flags = PFM_SETFL_TIME_SWITCH | PFM_SETFL_OVFL_SWITCH;
	sd[1].set_timeout = MS;
	EXPECT_EQ(-EINVAL, pfm_array(fd, PFM_CREATE_EVTSETS, sd, 2));
	EXPECT_EQ(0, sd[0].set_flags & PFM_REG_RETFL_MASK);
	EXPECT_EQ(PFM_REG_RETFL_EINVAL, sd[1].set_flags & PFM_REG_RETFL_MASK);
	/* the call is all or nothing: set 1 was not created either */
	memset(&si, 0, sizeof(si));
	si.set_id = 1;
	EXPECT_EQ(-EINVAL, pfm_array(fd, PFM_GETINFO_EVTSETS, &si, 1));
	sd[1].set_flags = PFM_SETFL_TIME_SWITCH;
	EXPECT_EQ(0, pfm_array(fd, PFM_CREATE_EVTSETS, sd, 2));
	close(fd);
}

TEST(sets_per_ctx_cap)
{
	long long cap = knob_read("sets_per_ctx_max");
	pfarg_setinfo_t si;
	int fd;

	if (getuid() != 0)
		SKIP(return, "needs root to write the knob");
	ASSERT_LT(0, cap) {
		TH_LOG("no /sys/kernel/perfmon/sets_per_ctx_max");
	}
	ksft_print_msg("sets_per_ctx_max: %lld\n", cap);
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, create_sets(fd, 1, cap - 1, 0, 0));
	EXPECT_EQ(-ENOSPC, create_sets(fd, cap, 1, 0, 0));
	EXPECT_EQ(-EINVAL, pfm_set_info(fd, cap, &si));
	/* Existing sets are not new ones. */
	EXPECT_EQ(0, create_sets(fd, cap - 2, 2, PFM_SETFL_TIME_SWITCH, MS));

	ASSERT_EQ(0, knob_write_num("sets_per_ctx_max", cap + 1));
	EXPECT_EQ(cap + 1, knob_read("sets_per_ctx_max"));
	/* Two new sets, room for one: none is created. */
	EXPECT_EQ(-ENOSPC, create_sets(fd, cap, 2, 0, 0));
	EXPECT_EQ(-EINVAL, pfm_set_info(fd, cap, &si));
	EXPECT_EQ(0, create_sets(fd, cap, 1, 0, 0));
	EXPECT_EQ(0, pfm_set_info(fd, cap, &si));
	EXPECT_EQ(-ENOSPC, create_sets(fd, cap + 1, 1, 0, 0));
	/* Lowering it keeps the sets; no new one. */
	ASSERT_EQ(0, knob_write_num("sets_per_ctx_max", 2));
	EXPECT_EQ(0, pfm_set_info(fd, cap, &si));
	EXPECT_EQ(-ENOSPC, create_sets(fd, cap + 1, 1, 0, 0));

	EXPECT_EQ(-EINVAL, knob_write("sets_per_ctx_max", "0"));
	EXPECT_EQ(-EINVAL, knob_write("sets_per_ctx_max", "65537"));
	EXPECT_EQ(0, run_child(sets_knob_nobody_child));
	EXPECT_EQ(0, run_child(sets_knob_nocap_child));
	EXPECT_EQ(2, knob_read("sets_per_ctx_max"));
	EXPECT_EQ(0, knob_write_num("sets_per_ctx_max", cap));
	close(fd);
}

/*
 * One run for switch_irqoff_max: a thread's context with @nsets sets,
 * switching on the smallest timeout (100 us; even set ids) or after
 * every overflow of the set's task-clock counter, 150 us below the wrap
 * (odd ids), so that both the timer and the overflow switch, with the
 * control page mapped
 * (its time_enabled once summed every set), counting for @burn ns of
 * CPU time.  Returns the longest interrupts-off section the kernel
 * noted; *@runs gets the switches.
 */
static long long irqoff_run(struct __test_metadata *_metadata,
			    unsigned int nsets, uint64_t burn, uint64_t *runs)
{
	const uint64_t period = 150000;
	pfarg_setinfo_t *si = calloc(nsets, sizeof(*si));
	pfarg_pmc_t *pc = calloc(nsets, sizeof(*pc));
	pfarg_pmd_t *pd = calloc(nsets, sizeof(*pd));
	unsigned int i, k;
	long long max;
	void *pg;
	int fd;

	if (!si || !pc || !pd)
		return -1;
	fd = pfm_new_ctx(0);
	if (fd < 0)
		return -1;
	if (create_sets(fd, 0, nsets,
			PFM_SETFL_TIME_SWITCH | PFM_SETFL_OVFL_SWITCH, 1))
		return -2;
	for (i = 0; i < nsets; i++) {
		pc[i].reg_set = i;
		pc[i].reg_value = SOFT_EV_TASK_CLOCK;
		pfm_pmd_prep(&pd[i], i, 0, 0, -period, -period);
		pd[i].reg_ovfl_switch_cnt = 1;
		si[i].set_id = i;
	}
	for (i = 0; i < nsets; i += k) {
		k = nsets - i < PFM_MAX_ARRAY ? nsets - i : PFM_MAX_ARRAY;
		if (pfm_array(fd, PFM_WRITE_PMCS, pc + i, k) ||
		    pfm_array(fd, PFM_WRITE_PMDS, pd + i, k))
			return -3;
	}
	pg = mmap(NULL, page_size(), PROT_READ, MAP_SHARED, fd,
		  PFM_USER_PAGE_OFFSET);
	if (pg == MAP_FAILED)
		return -4;
	if (pfm_load(fd, gettid()) ||
	    knob_write("switch_irqoff_max_ns", "0") || pfm_start(fd, NULL))
		return -5;
	burn_cpu(burn);
	if (pfm_stop(fd))
		return -6;
	max = knob_read("switch_irqoff_max_ns");
	*runs = 0;
	for (i = 0; i < nsets; i += k) {
		k = nsets - i < PFM_MAX_ARRAY ? nsets - i : PFM_MAX_ARRAY;
		if (pfm_array(fd, PFM_GETINFO_EVTSETS, si + i, k))
			return -7;
	}
	for (i = 0; i < nsets; i++)
		*runs += si[i].set_runs;
	munmap(pg, page_size());
	close(fd);
	free(si);
	free(pc);
	free(pd);
	return max;
}

/* Runs of irqoff_run() per set count: the least maximum is kept. */
#define IRQOFF_RUNS	5

/*
 * The longest interrupts-off section of a set switch or an overflow
 * (switch_irqoff_max_ns, kept by the kernel) with 2 sets, at the cap
 * and at 16 times the cap, after a warm-up run.  Nothing on those paths
 * walks the sets, so the three are alike.  A maximum is the figure a
 * host preemption of the vCPU inflates (guest time runs on meanwhile),
 * so each is the least of IRQOFF_RUNS runs' maxima, and each is within
 * IRQOFF_RATIO (times the timing slack) of the least of the three.
 * Measured at slack 2 beside a build (x86_64, 6.1): maxima of one run
 * from 0.21 to 7.9 ms for each count of sets; least of 3: 0.22, 1.89
 * and 0.21 ms for 2, 64 and 1024 sets (9.0 times the least).  On a
 * quiet host, least of 5: 71 to 117 us for each count, in six runs.
 * The runs take turns between the counts: run count by count, the five
 * of 1024 sets fell in a busy spell of the host (make check's other
 * lane) and read 1.50 to 2.15 ms, the least of 2 sets 94 us (16 times).
 */
#define IRQOFF_RATIO	8

TEST(switch_irqoff_at_cap)
{
	long long cap = knob_read("sets_per_ctx_max"), max, best[3], least;
	unsigned int n[3], i, j;
	uint64_t runs, burn;

	if (getuid() != 0)
		SKIP(return, "needs root to reset the figure and raise the cap");
	ASSERT_LT(0, cap);
	ASSERT_LE(0, knob_read("switch_irqoff_max_ns"));
	n[0] = 2;
	n[1] = cap;
	n[2] = 16 * cap < 65536 ? 16 * cap : 65536;
	ASSERT_EQ(0, knob_write_num("sets_per_ctx_max", n[2]));
	/*
	 * As long for each (a maximum grows with the samples): about two
	 * turns of the most sets.  Under TCG the first run of a path
	 * includes its translation: a warm-up run first.
	 */
	burn = 100 * MS + n[2] * 500000ull;
	EXPECT_LT(0, irqoff_run(_metadata, n[0], 100 * MS, &runs));
	least = LLONG_MAX;
	for (i = 0; i < 3; i++)
		best[i] = LLONG_MAX;
	/* Round robin: a busy spell of the host falls on every count. */
	for (j = 0; j < IRQOFF_RUNS; j++) {
		for (i = 0; i < 3; i++) {
			max = irqoff_run(_metadata, n[i], burn, &runs);
			EXPECT_LT(0, max) {
				TH_LOG("%u sets: step %lld failed", n[i], max);
			}
			ksft_print_msg("switch_irqoff_max_ns: %lld ns, %u sets, %llu switches\n",
				       max, n[i], (unsigned long long)runs);
			EXPECT_LT(0, runs);
			if (max > 0 && max < best[i])
				best[i] = max;
		}
	}
	for (i = 0; i < 3; i++)
		least = best[i] < least ? best[i] : least;
	/* A host preemption of the vCPU moves a maximum up: the slack. */
	for (i = 0; i < 3; i++) {
		TH_LOG("%u sets: %lld ns, %.2f times the least", n[i],
		       best[i], (double)best[i] / least);
		EXPECT_GE(IRQOFF_RATIO * timing_slack() * least, best[i]);
	}
	EXPECT_EQ(0, knob_write_num("sets_per_ctx_max", cap));
}

TEST_HARNESS_MAIN
