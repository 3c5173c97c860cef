// SPDX-License-Identifier: GPL-2.0
/*
 * Frequency sampling (PFM_REGFL_FREQ): the kernel sets a sampling PMD's
 * next period from the rate of the periods before it, so that its
 * overflows come at reg_freq per second of counting.  On the software
 * PMU's system-call event (SOFT_EV_SYSCALLS), exact and under the
 * test's control: a loop of raw system calls is the rate, and each
 * sample's period is the calls it stands for.
 *
 * A program of its own, apart from smpl_test, so that a guest can run
 * it alone under conditions the rest would not stand: make check runs
 * it in one whose ticks come late (vm --hold-ticks), where the kernel's
 * clock stands still between them, with PFM_FREQ_ROUNDS=N.
 */
#include <perfmon/perfmon_dfl_smpl.h>

#include "pfm_test.h"
#include "kselftest_harness.h"

#define DFL_HDR		sizeof(struct pfm_dfl_smpl_hdr)
#define DFL_ENTRY_V2	sizeof(struct pfm_dfl_smpl_entry_v2)

/* For the logs. */
#define ULL(x)		((unsigned long long)(x))

#define FREQ_HZ		2000
#define FREQ_TAIL	50
/* Batches of 101 calls the loop times (the first ones, on a fast host). */
#define FREQ_BATCHES	8192

/* /sys/kernel/perfmon/max_ovfl_rate, or -1. */
static long long ovfl_rate_max(void)
{
	FILE *f = fopen("/sys/kernel/perfmon/max_ovfl_rate", "r");
	long long v = -1;

	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/*
 * A context on this thread whose system-call counter asks for FREQ_HZ
 * overflows a second, first period 1, sampled into a default-format
 * buffer of @len bytes mapped at *@hdr: its fd, or -errno.
 */
static int freq_ctx(struct pfm_dfl_smpl_hdr **hdr, size_t len)
{
	struct pfm_dfl_smpl_arg arg = { .buf_size = len,
					.buf_flags = PFM_DFL_SMPL_FL_V2 };
	pfarg_pmd_t pd;
	int fd, err;

	fd = pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, &arg, sizeof(arg));
	if (fd < 0)
		return fd;
	pfm_pmd_prep(&pd, 0, 0, PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_FREQ,
		     -1, -1);
	pd.reg_freq = FREQ_HZ;
	err = pfm_write_pmc(fd, 0, 0, SOFT_EV_SYSCALLS);
	if (!err)
		err = neg_errno(pfm_write_pmds(fd, &pd, 1));
	*hdr = err ? MAP_FAILED : pfm_map_buf(fd, len, PROT_READ);
	if (!err && *hdr == MAP_FAILED)
		err = -errno;
	if (!err)
		err = pfm_load(fd, gettid());
	if (err) {
		if (*hdr != MAP_FAILED)
			munmap(*hdr, len);
		close(fd);
		return err;
	}
	return fd;
}

/*
 * A system-call counter asked for FREQ_HZ overflows per second of
 * counting, from a first period of 1, over 300 ms of the thread's CPU
 * time: the samples number FREQ_HZ per second (within 20%: the first
 * few periods are short) of the time the thread ran at least, of the
 * time the set counted at most; the periods recorded add up to the
 * calls made (the CPU clock's too, a system call for a thread clock),
 * and the last one is within a factor of 4 of the loop's calls per
 * 1 / FREQ_HZ s (the recent rate is logged).
 *
 * The two times differ under TCG without -icount: a vCPU the host
 * takes off its CPU stops, while the guest's clocks, the set's counting
 * time and the thread's CPU clock with them, go on.  "Ran" is the
 * loop's batches of calls times the median batch's CPU time.  With a
 * kernel build on the host's 2 cores beside the guest (make check's
 * other lane at a fresh clone), the loop made 23,000 to 29,000 calls
 * where 63,000 fit an idle host's 300 ms, and 323 to 347 samples came
 * where the whole window wanted 600, every call accounted for in the
 * periods: perfmon follows the rate it sees, which the host made
 * uneven.  Alone: 579 and 580 samples of 547 and 566 ran, 600 counted.
 *
 * A late tick stops the set's clock (local_clock(), held at its tick's
 * bound on x86 under QEMU) while the calls go on.  A kernel that kept a
 * first period of 1 until the clock moved took a sample per call
 * meanwhile: 728 to 913 samples where 600 were wanted, 11 rounds of 16
 * with the guest's ticks held 5 ms at a time (vm --hold-ticks 5,2), and
 * once in make check (839).  There the thread's CPU clock stands still
 * too, most batches take 0 ns, and the lower bound says nothing.
 */
static void freq_settles_round(struct __test_metadata *_metadata)
{
	const size_t len = page_align(256 * 1024);
	const struct pfm_dfl_smpl_entry_v2 *e;
	uint64_t calls = 0, t0, sum = 0, last = 0, k;
	uint64_t tail = 0, t_tail = 0, t_last = 0;
	static uint64_t batch[FREQ_BATCHES];
	uint64_t now, prev = 0, run_ns;
	unsigned int nb = 0;
	struct pfm_dfl_smpl_hdr *hdr;
	double secs, want, ran, rate, avg;
	pfarg_setinfo_t si;
	pfarg_pmd_t pd;
	int fd;

	fd = freq_ctx(&hdr, len);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(-fd));
	t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	for (; (now = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0) < 300000000;
	     prev = now) {
		if (prev && nb < FREQ_BATCHES)
			batch[nb++] = now - prev;
		raw_getppid(100);
		calls += 101;	/* and the thread clock's own system call */
	}
	ASSERT_EQ(0, pfm_stop(fd));
	ASSERT_EQ(0, pfm_set_info(fd, 0, &si));
	pfm_pmd_prep(&pd, 0, 0, 0, 0, 0);
	ASSERT_EQ(0, neg_errno(pfm_read_pmds(fd, &pd, 1)));
	for (k = 0; k < hdr->hdr_count; k++) {
		e = (const void *)((const char *)hdr + DFL_HDR +
				   k * DFL_ENTRY_V2);
		last = -e->last_reset_val;
		sum += last;
		/* the periods of the last FREQ_TAIL samples, and their time */
		if (k + FREQ_TAIL == hdr->hdr_count)
			t_tail = e->tstamp;
		if (k + FREQ_TAIL > hdr->hdr_count) {
			tail += last;
			t_last = e->tstamp;
		}
	}
	secs = si.set_act_duration / 1e9;
	/* A faster machine fills the table: its first batches time it. */
	ASSERT_LT(10, nb);
	qsort(batch, nb, sizeof(batch[0]), u64_cmp);
	run_ns = batch[nb / 2] * (calls / 101);
	want = FREQ_HZ * secs;
	ran = FREQ_HZ * (run_ns < si.set_act_duration ? run_ns / 1e9 : secs);
	ASSERT_LT(FREQ_TAIL, hdr->hdr_count);
	/* the loop's recent speed, for the log */
	rate = tail / ((t_last - t_tail) / 1e9);
	TH_LOG("%llu calls in %.3f s counted: %llu samples (want %.0f to %.0f)",
	       ULL(calls), secs, ULL(hdr->hdr_count), ran, want);
	TH_LOG("periods add up to %llu", ULL(sum));
	TH_LOG("last period %llu, then %llu; calls per 1/%u s over the last %d samples %.0f",
	       ULL(last), ULL(-pd.reg_last_reset_val), FREQ_HZ, FREQ_TAIL,
	       rate / FREQ_HZ);
	TH_LOG("%u batches of 101 calls, median %.1f us, longest %.1f ms: ran %.3f s",
	       nb, batch[nb / 2] / 1e3, batch[nb - 1] / 1e6, run_ns / 1e9);
	EXPECT_EQ(0, hdr->hdr_overflows);
	EXPECT_LE(ran * 0.8, hdr->hdr_count);
	EXPECT_GE(want * 1.2, hdr->hdr_count);
	/*
	 * Each sample's period is the calls it stands for; the calls after
	 * the last sample are in the period under way (the reset value the
	 * last overflow set, which may be more than twice the last period:
	 * 67, then 185, on 6.12-rt).
	 */
	EXPECT_GE(calls + 2, sum);
	EXPECT_LE(calls - 2, sum + ULL(-pd.reg_last_reset_val));
	/*
	 * The period follows the loop's speed an eighth at a time, and
	 * that speed changes along the run under TCG (65 against 123 calls
	 * per 500 us over the last 50 samples, on 6.12-rt): the last
	 * period is only bounded by a factor of 4 of the run's average.
	 */
	avg = calls / secs / FREQ_HZ;
	EXPECT_LE(avg / 4, last);
	EXPECT_GE(avg * 4, last);
	munmap(hdr, len);
	close(fd);
}

/* PFM_FREQ_ROUNDS=N rounds (make check's late-tick guest), else one. */
TEST(freq_settles)
{
	const char *s = getenv("PFM_FREQ_ROUNDS");
	int i, rounds = s && atoi(s) > 0 ? atoi(s) : 1;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	for (i = 0; i < rounds; i++) {
		if (rounds > 1)
			TH_LOG("round %d of %d", i + 1, rounds);
		freq_settles_round(_metadata);
	}
}

/* Spin in user space, no system call, about @ns of CPU time at @per_ms. */
static void spin_for(uint64_t ns, uint64_t per_ms)
{
	uint64_t i, n = ns / 1000000 * per_ms;

	/* The empty asm keeps the loop: the compiler sees it use @i. */
	for (i = 0; i < n; i++)
		asm volatile("" : : "r"(i));
}

/* Loop iterations of spin_for() per ms of the thread's CPU time. */
static uint64_t spin_rate(void)
{
	uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), ns;

	spin_for(1000000, 2000000);
	ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	return 2000000ULL * 1000000 / (ns ?: 1);
}

/* FREQ_HZ's system calls for @ns of the thread's CPU time; the count. */
static uint64_t freq_calls(uint64_t ns)
{
	uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), calls = 0;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0 < ns) {
		raw_getppid(100);
		calls += 101;
	}
	return calls;
}

/*
 * A stall of the counting thread in one period: the thread spins in
 * user space for FREQ_STALL_NS (no system call, so no event) in the
 * middle of a run of system calls sampled at FREQ_HZ, as a host that
 * takes the vCPU off its CPU stalls it under TCG (33 ms once, at a
 * fresh clone).  The period that ends across the stall timed 40 of its
 * periods' events over 40 periods' time: the next period must not
 * follow it down to a 40th, or come back up past 4 times the rate
 * either; every sample after the stall stands for a period within a
 * factor of 4 of those before it.  A kernel that takes a period more
 * than 2 times off whole failed this with 5 where the average was 200.
 */
#define FREQ_STALL_NS	20000000

TEST(freq_rides_out_a_stall)
{
	const size_t len = page_align(256 * 1024);
	const struct pfm_dfl_smpl_entry_v2 *e;
	uint64_t k, n0, n1, per_ms, sum = 0, period, lo = ~0ULL, hi = 0;
	struct pfm_dfl_smpl_hdr *hdr;
	double avg;
	pfarg_pmd_t pd;
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	per_ms = spin_rate();
	fd = freq_ctx(&hdr, len);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(-fd));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	/* Settled by half of it: the second half is the rate. */
	freq_calls(50000000);
	n0 = hdr->hdr_count;
	freq_calls(50000000);
	n1 = hdr->hdr_count;
	spin_for(FREQ_STALL_NS, per_ms);
	freq_calls(30000000);
	ASSERT_EQ(0, pfm_stop(fd));
	pfm_pmd_prep(&pd, 0, 0, 0, 0, 0);
	ASSERT_EQ(0, neg_errno(pfm_read_pmds(fd, &pd, 1)));
	ASSERT_LT(n0 + 10, n1);
	ASSERT_LT(n1 + 10, hdr->hdr_count);
	for (k = 0; k < hdr->hdr_count; k++) {
		e = (const void *)((const char *)hdr + DFL_HDR +
				   k * DFL_ENTRY_V2);
		period = -e->last_reset_val;
		if (k >= n0 && k < n1)
			sum += period;
		/* The first after the stall was set before it. */
		if (k > n1) {
			lo = period < lo ? period : lo;
			hi = period > hi ? period : hi;
		}
	}
	avg = (double)sum / (n1 - n0);
	TH_LOG("%llu samples before the stall, average period %.0f of the last %llu",
	       ULL(n1), avg, ULL(n1 - n0));
	TH_LOG("%llu samples after it, periods %llu to %llu, then %llu",
	       ULL(hdr->hdr_count - n1), ULL(lo), ULL(hi),
	       ULL(-pd.reg_last_reset_val));
	EXPECT_EQ(0, hdr->hdr_overflows);
	EXPECT_LE(avg / 4, lo);
	EXPECT_GE(avg * 4, hi);
	munmap(hdr, len);
	close(fd);
}

/*
 * PFM_REGFL_FREQ without a rate, or above max_ovfl_rate (the throttle
 * would cut it): -EINVAL, PFM_REG_RETFL_EINVAL, the context unchanged.
 * reg_freq without the flag is regs_test's.
 */
TEST(freq_refusals)
{
	long long max = ovfl_rate_max();
	pfarg_pmd_t pd;
	int fd, i;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = pfm_fmt_ctx(0, NULL, NULL, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_write_pmc(fd, 0, 0, SOFT_EV_SYSCALLS));
	for (i = 0; i < 2; i++) {
		if (i == 1 && max <= 0)
			continue;	/* no limit to go above */
		pfm_pmd_prep(&pd, 0, 0, PFM_REGFL_FREQ, -100, -100);
		pd.reg_freq = i ? max + 1 : 0;
		EXPECT_EQ(-EINVAL, neg_errno(pfm_write_pmds(fd, &pd, 1)))
			TH_LOG("reg_freq %u", pd.reg_freq);
		EXPECT_EQ(PFM_REG_RETFL_EINVAL,
			  pd.reg_flags & PFM_REG_RETFL_MASK);
	}
	pfm_pmd_prep(&pd, 0, 0, PFM_REGFL_FREQ, -100, -100);
	pd.reg_freq = 100;
	EXPECT_EQ(0, neg_errno(pfm_write_pmds(fd, &pd, 1)));
	close(fd);
}

TEST_HARNESS_MAIN
