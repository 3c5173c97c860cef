// SPDX-License-Identifier: GPL-2.0
/*
 * The Arm PMUv3 description on QEMU's emulated PMUv3 (arm64 guest, run
 * with -icount so that INST_RETIRED counts and guest time is a function
 * of instructions executed: every count here is reproducible).
 *
 * Exactness: user-mode instructions (EL1 excluded) between pfm_start()
 * returning and pfm_stop() entering are the loop plus a fixed number K
 * of library and wrapper instructions.  Two loop lengths differ by
 * exactly the loop's instruction count, and K comes out the same each
 * time.
 *
 * Two QEMU 7.2 limits, measured, shape the tests:
 * - under -icount, INST_RETIRED follows QEMU's instruction count, which
 *   is global: instructions the other vCPU runs meanwhile (its timer
 *   ticks) are added (+2843 over 600000 in one run).  The exact tests
 *   take CPU 1 offline while they count.
 * - INST_RETIRED overflows raise no interrupt while counting; QEMU
 *   notices them at the next PMU register access (pfm_stop() here).
 *   The cycle counter's overflow interrupts arrive on time (a few
 *   hundred cycles of skid), so the interrupt path is tested with it.
 */
#include <setjmp.h>
#include <signal.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <perfmon/perfmon_dfl_smpl.h>
#include <perfmon/perfmon_uread.h>
#include "pfm_test.h"
#include "kselftest_harness.h"

#define MS		1000000ull
#define EV_INST_RETIRED	0x08
#define EV_CPU_CYCLES	0x11
#define EXCL_EL1	0x80000000ull	/* PMEVTYPER/PMCCFILTR P bit */
#define CYCLE_IDX	31
#define NUM_CTRS_MAX	31

/*
 * 2 * @n user instructions.  @n goes through memory so that the code
 * around the loop is the same for every @n (an immediate would take one
 * or two instructions to load, depending on its value).
 */
static uint64_t loop_n;

static void loop2(uint64_t n)
{
	uint64_t left;

	__atomic_store_n(&loop_n, n, __ATOMIC_RELAXED);
	left = __atomic_load_n(&loop_n, __ATOMIC_RELAXED);
	__asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(left) : : "cc");
}

/* Only CPU 0 runs instructions (see the file comment); 0 or -errno. */
static int quiet_cpus(bool quiet)
{
	if (online_cpus() < 2 && quiet)
		return 0;
	if (quiet && pin_to_cpu(0))
		return -errno;
	return cpu_set_online(1, !quiet);
}

/*
 * The tests that count with CPU 1 offline (quiet_cpus()).  The teardown
 * runs even after an assertion ended the test: CPU 1 comes back, and a
 * failure does not make the tests after it skip for want of a CPU.
 */
FIXTURE(quiet) {
};

FIXTURE_SETUP(quiet)
{
}

FIXTURE_TEARDOWN(quiet)
{
	if (online_cpus() < 2)
		cpu_set_online(1, 1);
}

static int num_ctrs(void)
{
	struct pfarg_pmu_info info;
	int n = 0, i;

	memset(&info, 0, sizeof(info));
	if (pfm_get_pmu_desc(&info))
		return -1;
	for (i = 0; i < NUM_CTRS_MAX; i++)
		n += !!(info.pmu_impl_pmds[0] & (1ull << i));
	return n;
}

/* User instructions counted around loop2(@n), EL1 excluded. */
static uint64_t count_loop(int fd, uint64_t n)
{
	if (pfm_start(fd, NULL))
		return 0;
	loop2(n);
	if (pfm_stop(fd))
		return 0;
	return pfm_read_pmd(fd, 0, 0);
}

static int inst_ctx(uint64_t start, uint64_t reset)
{
	int fd = pfm_new_ctx(0);

	if (fd < 0 ||
	    pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, start, reset) ||
	    pfm_load(fd, gettid()))
		return -1;
	return fd;
}

/* The PMDs of set 0 that overflowed last. */
static int set_ovfl(int fd, uint64_t *ovfl)
{
	pfarg_setinfo_t si;
	int ret = pfm_set_info(fd, 0, &si);

	*ovfl = si.set_ovfl_pmds[0];
	return ret;
}

/*
 * el0_access: over pfm_perf, perf grants user-level reads only with
 * kernel.perf_user_access=1 (Documentation/pmu-description.rst); the
 * rig boots its pfm_perf guests so.  Without it the control page's
 * index stays 0 and programs read with PFM_READ_PMDS.
 */
static bool no_el0_access(void)
{
	return pmu_module_is("pfm_perf") &&
	       read_num_or("/proc/sys/kernel/perf_user_access", 0) != 1;
}

TEST(register_map)
{
	struct pfarg_reg_info ri[2];
	int n;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	n = num_ctrs();
	TH_LOG("%d event counters", n);
	ASSERT_LT(0, n);
	memset(ri, 0, sizeof(ri));
	ri[0].info_kind = PFM_REG_KIND_PMC;
	ri[0].info_num = CYCLE_IDX;
	ri[1].info_kind = PFM_REG_KIND_PMD;
	ri[1].info_num = CYCLE_IDX;
	ASSERT_EQ(0, pfm_get_reg_info(ri, 2));
	EXPECT_STREQ("PMCCFILTR_EL0", ri[0].info_name);
	EXPECT_STREQ("PMCCNTR_EL0", ri[1].info_name);
	/* Only the filter bits: P, U, NSK, NSU, NSH. */
	EXPECT_EQ(~0xf8000000ull, ri[0].info_rsvd_msk);
	EXPECT_TRUE(ri[1].info_type & PFM_REGT_CNTR);
}

/* Reserved bits and events the PMU does not implement are refused. */
TEST(write_checks)
{
	pfarg_pmc_t pc;
	int fd, ev, ok = 0, refused = 0;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	memset(&pc, 0, sizeof(pc));
	pc.reg_value = EV_INST_RETIRED | (1ull << 32);
	EXPECT_EQ(-1, pfm_write_pmcs(fd, &pc, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(pc.reg_flags & PFM_REG_RETFL_EINVAL);
	pc.reg_flags = 0;
	pc.reg_num = CYCLE_IDX;
	pc.reg_value = EV_CPU_CYCLES;	/* PMCCFILTR has no event field */
	EXPECT_EQ(-1, pfm_write_pmcs(fd, &pc, 1));
	for (ev = 0; ev < 0x40; ev++) {
		memset(&pc, 0, sizeof(pc));
		pc.reg_value = ev;
		if (pfm_write_pmcs(fd, &pc, 1) == 0)
			ok++;
		else if (errno == EINVAL && (pc.reg_flags & PFM_REG_RETFL_EINVAL))
			refused++;
	}
	TH_LOG("common events: %d implemented, %d refused", ok, refused);
	EXPECT_EQ(64, ok + refused);
	EXPECT_LT(0, refused);
	memset(&pc, 0, sizeof(pc));
	pc.reg_value = EV_INST_RETIRED;
	EXPECT_EQ(0, pfm_write_pmcs(fd, &pc, 1));
	pc.reg_value = EV_CPU_CYCLES;
	EXPECT_EQ(0, pfm_write_pmcs(fd, &pc, 1));
	close(fd);
}

#define NSK		0x20000000ull	/* Non-secure EL1 filter */
#define NSH		0x08000000ull	/* count EL2 */

/* The errno priv_child expects for filters that count EL1 or EL2. */
static int want_kernel;

/*
 * As uid 65534: a filter counting at EL0 only (P set, NSK and NSH
 * clear) needs nothing; one counting EL1 (P clear, or NSK set) or EL2
 * (NSH set) needs paranoid 1 or below, or CAP_PERFMON.  Both on an
 * event counter (PMEVTYPER0) and the cycle counter (PMCCFILTR).  Exit
 * status 0, or the step that went wrong.
 */
static int priv_child(void)
{
	int fd;

	if (become_nobody())
		return 100;
	fd = pfm_new_ctx(0);
	if (fd < 0)
		return 101;
	if (!pmc_write_as(fd, 0, EV_CPU_CYCLES | EXCL_EL1, 0))
		return 102;
	if (!pmc_write_as(fd, 0, EV_CPU_CYCLES, want_kernel))
		return 103;
	if (!pmc_write_as(fd, 0, EV_CPU_CYCLES | EXCL_EL1 | NSK, want_kernel))
		return 104;
	if (!pmc_write_as(fd, 0, EV_CPU_CYCLES | EXCL_EL1 | NSH, want_kernel))
		return 105;
	if (!pmc_write_as(fd, CYCLE_IDX, EXCL_EL1, 0))
		return 106;
	if (!pmc_write_as(fd, CYCLE_IDX, 0, want_kernel))
		return 107;
	close(fd);
	return 0;
}

TEST(kernel_level_needs_privilege)
{
	static const struct { int level, want; } step[] = {
		{ 2, EACCES }, { 1, 0 }, { 0, 0 },
	};
	long long saved = knob_read("paranoid");
	unsigned int i;
	int fd, status;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (getuid() != 0)
		SKIP(return, "needs root to switch users and set the level");
	ASSERT_EQ(2, saved);
	for (i = 0; i < ARRAY_SIZE(step); i++) {
		ASSERT_EQ(0, set_paranoid(step[i].level));
		want_kernel = step[i].want;
		status = run_child(priv_child);
		EXPECT_EQ(0, status) {
			TH_LOG("paranoid %d: child step %d failed",
			       step[i].level, status);
		}
	}
	/* CAP_PERFMON (root) bypasses the level. */
	EXPECT_EQ(0, set_paranoid(2));
	fd = pfm_new_ctx(0);
	EXPECT_LE(0, fd);
	EXPECT_TRUE(pmc_write_as(fd, 0, EV_CPU_CYCLES | NSH, 0));
	EXPECT_TRUE(pmc_write_as(fd, CYCLE_IDX, 0, 0));
	close(fd);
	EXPECT_EQ(0, set_paranoid(saved));
}

/* Where default_filter_user_only's children leave their count. */
static uint64_t *dfl_count;
static bool dfl_nobody, dfl_el0_filter;

/*
 * The cycle counter (PMD31) over 1000 getppid() calls on CPU 0, as uid
 * 65534 when dfl_nobody, with PMC31 (PMCCFILTR) written to count EL0
 * only when dfl_el0_filter, else left at its default.  Exit status 0,
 * or the step that went wrong.
 */
static int dfl_child(void)
{
	pfarg_pmd_t pd;
	int fd;

	if (pin_to_cpu(0))
		return 100;
	if (dfl_nobody && become_nobody())
		return 101;
	fd = pfm_new_ctx(0);
	if (fd < 0)
		return 102;
	if (dfl_el0_filter && pfm_write_pmc(fd, 0, CYCLE_IDX, EXCL_EL1))
		return 103;
	pfm_pmd_prep(&pd, 0, CYCLE_IDX, 0, 0, 0);
	if (pfm_write_pmds(fd, &pd, 1) || pfm_load(fd, gettid()))
		return 104;
	if (pfm_start(fd, NULL))
		return 105;
	raw_getppid(1000);
	if (pfm_stop(fd))
		return 106;
	*dfl_count = pfm_read_pmd(fd, 0, CYCLE_IDX);
	close(fd);
	return 0;
}

static uint64_t dfl_run(struct __test_metadata *_metadata, bool nobody,
			bool el0_filter)
{
	int status;

	dfl_nobody = nobody;
	dfl_el0_filter = el0_filter;
	*dfl_count = 0;
	status = run_child(dfl_child);
	EXPECT_EQ(0, status) {
		TH_LOG("%s, %s: child step %d failed",
		       nobody ? "nobody" : "root",
		       el0_filter ? "EL0 filter" : "default", status);
	}
	return *dfl_count;
}

/*
 * A PMC the program never writes obeys the rule written ones do: for
 * uid 65534 at paranoid 2, the cycle counter with PMCCFILTR left at
 * its default counts EL0 only, as with the filter written (within 5%
 * and 1000 cycles), far below what root counts with the default, which
 * still counts EL1 for it (1000 system calls: more than 4 times more).
 */
TEST_F(quiet, default_filter_user_only)
{
	uint64_t el0, dfl, root;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (getuid() != 0)
		SKIP(return, "needs root to switch users");
	ASSERT_EQ(2, knob_read("paranoid"));
	dfl_count = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dfl_count);
	ASSERT_EQ(0, quiet_cpus(true));
	el0 = dfl_run(_metadata, true, true);
	dfl = dfl_run(_metadata, true, false);
	root = dfl_run(_metadata, false, false);
	EXPECT_EQ(0, quiet_cpus(false));
	ksft_print_msg("cycles over 1000 getppid(): nobody, EL0 filter: %llu\n",
		       (unsigned long long)el0);
	ksft_print_msg("nobody, default filter: %llu; root, default: %llu\n",
		       (unsigned long long)dfl, (unsigned long long)root);
	ASSERT_LT(0, el0);
	EXPECT_GE(el0 + el0 / 20 + 1000, dfl);
	EXPECT_GE(dfl + dfl / 20 + 1000, el0);
	EXPECT_LT(4 * el0, root);
	munmap(dfl_count, page_size());
}

/* Instructions retired at EL0: exact, up to the constant K. */
TEST_F(quiet, inst_retired_exact)
{
	uint64_t c1, c2, c3;
	int fd;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	ASSERT_EQ(0, quiet_cpus(true));
	fd = inst_ctx(0, 0);
	ASSERT_LE(0, fd);
	c1 = count_loop(fd, 100000);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, 0, 0));
	c2 = count_loop(fd, 300000);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, 0, 0));
	c3 = count_loop(fd, 100000);
	TH_LOG("200000 + %llu, 600000 + %llu, 200000 + %llu",
	       (unsigned long long)(c1 - 200000),
	       (unsigned long long)(c2 - 600000),
	       (unsigned long long)(c3 - 200000));
	ASSERT_NE(0, c1) TH_LOG("INST_RETIRED counts only under -icount");
	EXPECT_EQ(400000, c2 - c1);
	EXPECT_EQ(c1, c3);
	EXPECT_GT(1000, c1 - 200000);
	close(fd);
	EXPECT_EQ(0, quiet_cpus(false));
}

/*
 * Overflow after exactly N instructions: short of N by 1000, the counter
 * holds exactly -N + count and nothing overflowed; past N, it overflowed
 * once and restarted from its reset value R, so it holds R plus what it
 * counted after the interrupt: at most R + count - N, at least that less
 * the skid (the count between the overflow and its interrupt).  QEMU
 * raises INST_RETIRED's interrupt only at the next PMU access (see the
 * file comment), pfm_stop()'s: the skid is all of count - N, measured
 * 19999 of 19999 natively and over pfm_perf (6.1), so the bound from
 * below is R.  R is neither 0 nor near count - N: a counter cleared
 * instead of reset, or left counting from its wrap, is below it.
 */
TEST_F(quiet, overflow_after_n)
{
	const uint64_t n = 500000, r = 1000000;
	uint64_t k, c, ovfl, v;
	int fd;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	ASSERT_EQ(0, quiet_cpus(true));
	fd = inst_ctx(0, 0);
	ASSERT_LE(0, fd);
	k = count_loop(fd, 1000) - 2000;

	/* Short of N by 1000: no overflow, exact value. */
	c = n - 1000;
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, -n, 0));
	v = count_loop(fd, (c - k) / 2);
	ASSERT_EQ(0, set_ovfl(fd, &ovfl));
	EXPECT_EQ(0, ovfl);
	EXPECT_EQ(-n + k + 2 * ((c - k) / 2), v);

	/* Past N by about 20000: one overflow, restarted from R. */
	c = n + 20000;
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, -n, r));
	v = count_loop(fd, (c - k) / 2);
	ASSERT_EQ(0, set_ovfl(fd, &ovfl));
	c = k + 2 * ((c - k) / 2);
	TH_LOG("K %llu; after the overflow R + %lld, skid %lld",
	       (unsigned long long)k, (long long)(v - r),
	       (long long)(c - n - (v - r)));
	EXPECT_EQ(1, ovfl);
	EXPECT_GE(r + c - n, v);
	EXPECT_LE(r, v);
	close(fd);
	EXPECT_EQ(0, quiet_cpus(false));
}

/*
 * The calling thread at SCHED_FIFO 1 (@on) or back at SCHED_OTHER: 0 or
 * -errno.  A SCHED_OTHER thread that wakes on its CPU (a kworker, RCU's
 * threads, ksoftirqd) then waits until it sleeps or goes back; the
 * interrupts and the softirqs they run still hold it off (struct held).
 */
static int fifo_self(bool on)
{
	struct sched_param sp = { .sched_priority = on ? 1 : 0 };

	if (sched_setscheduler(0, on ? SCHED_FIFO : SCHED_OTHER, &sp))
		return -errno;
	return 0;
}

/*
 * How many times the calling thread has been switched out; @vol, when
 * not NULL, gets how many of them it slept.
 */
static long thread_switches(long *vol)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	if (vol)
		*vol = ru.ru_nvcsw;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/*
 * The loaded context @fd counts cycles (all levels) from 1 ms before the
 * counter's overflow over an 8 ms burn: the overflow interrupt restarts
 * it from its reset value while it counts, so it ends near 7 ms counted
 * from the reset, short of it by the interrupt's skid: under 200 us of
 * the CPU's own, plus the longest the thread was held off (struct held:
 * 2.2 ms under -icount with the other vCPU busy).  The burn's own reads
 * of the clock, all while counting, bound it from below: a hold-off in
 * pfm_start() or pfm_stop() is not skid.  An interrupt that came only at
 * pfm_stop() would leave next to nothing counted.  @where names the
 * case in the log.  Returns the longest hold-off (0 when the checks
 * could not run).
 *
 * Both bounds hold for a thread that ran alone throughout: the thread's
 * clock and the counter then cover the same span.  A context switch
 * breaks them.  The scheduler charges a thread up to the switch's pick
 * and starts the next one's clock there, while the counter stops and
 * starts at the preempt notifiers, later in the switch: a switch out
 * counts what its clock does not, a switch back in the reverse (each
 * about 0.5 us; 6 rounds of 400 switched once, those 6 the lowest
 * margins of the 400).  Under -icount with the other vCPU busy, a
 * hold-off inside either stretch moves it by a millisecond, in either
 * direction, which the burn cannot see (the thread is not running).
 * A round switched out checks the overflow only; @strict says whether
 * the bounds were checked.  The round runs at SCHED_FIFO, so that no
 * thread of the kernel's takes its CPU (overflow_interrupt_rcu_busy);
 * should it be switched out anyway, the log names what ran beside it.
 */
static uint64_t check_cycles_overflow(struct __test_metadata *_metadata,
				      int fd, const char *where, bool *strict)
{
	static struct task_runs runs = { .n = -1 };
	static uint64_t ran[2][TASK_RUNS_MAX];
	struct held h = { .min = UINT64_MAX };
	uint64_t t0, t, v, w, ovfl, skid;
	long sw, vol = 0, vol0 = 0;
	int cpu0, cpu;

	*strict = false;
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, CYCLE_IDX, 0, -MS, 0)) return 0;
	if (runs.n < 0)
		task_runs_open(&runs);
	task_runs_read(&runs, ran[0]);
	cpu0 = sched_getcpu();
	ASSERT_EQ(0, fifo_self(true)) return 0;
	sw = thread_switches(&vol0);
	t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	ASSERT_EQ(0, pfm_start(fd, NULL)) return 0;
	burn_cpu_held(8 * MS, &h);
	ASSERT_EQ(0, pfm_stop(fd)) return 0;
	t = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	sw = thread_switches(&vol) - sw;
	ASSERT_EQ(0, fifo_self(false)) return 0;
	cpu = sched_getcpu();
	task_runs_read(&runs, ran[1]);
	v = pfm_read_pmd(fd, 0, CYCLE_IDX);
	ASSERT_EQ(0, set_ovfl(fd, &ovfl)) return 0;
	w = h.last - h.first;
	/* The debug kernel's own skid was 245 us once (its slack: 1 ms). */
	skid = (uint64_t)(200000 * timing_slack()) + h.max;
	TH_LOG("%s: %llu cycles after the reset, %llu ns in all, %llu burning, held %llu at most",
	       where, (unsigned long long)v, (unsigned long long)t,
	       (unsigned long long)w, (unsigned long long)h.max);
	EXPECT_EQ(1ull << CYCLE_IDX, ovfl);
	if (sw) {
		TH_LOG("%s: switched out %ld times (%ld asleep), CPU %d to %d, bounds not checked",
		       where, sw, vol - vol0, cpu0, cpu);
		/* What took its CPU, should every round be switched out. */
		task_runs_log(stderr, &runs, ran[0], ran[1], gettid(), 20000);
		return h.max;
	}
	*strict = true;
	/* Long enough to tell an interrupt in time from one at the stop. */
	ASSERT_LT(skid + MS, w - MS) return 0;
	EXPECT_LT(w - MS - skid, v);
	/*
	 * Cycles never exceed the time, except by the timing slack: on the
	 * debug kernel they exceeded it by 0.08% (3.4 us in 4.1 ms).
	 */
	EXPECT_GT(t - MS + (uint64_t)(t * (timing_slack() - 1) / 1000), v);
	return h.max;
}

/*
 * check_cycles_overflow() until a round the thread ran alone, 10 at
 * most: over pfm_perf 4 rounds of 9 switched out once (6.12, -icount).
 */
static void check_cycles_overflow_alone(struct __test_metadata *_metadata,
					int fd, const char *where)
{
	bool strict = false;
	int i;

	for (i = 0; i < 10 && !strict; i++)
		check_cycles_overflow(_metadata, fd, where, &strict);
	EXPECT_TRUE(strict);
}

/* The overflow interrupt arrives while counting (check_cycles_overflow). */
TEST(overflow_interrupt_cycles)
{
	int fd;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	check_cycles_overflow_alone(_metadata, fd, "CPU of the test");
	close(fd);
}

/* Open and close @n files: each is freed by RCU, after a grace period. */
static void free_files_by_rcu(int n)
{
	while (n--)
		close(open("/proc/self/stat", O_RDONLY | O_CLOEXEC));
}

/*
 * check_cycles_overflow() on CPU 1 while a thread spins on CPU 0 (with
 * @churn, 600 files freed by RCU on CPU 1 before each round): five
 * rounds the thread ran alone, of 20 at most.  The condition both tests
 * are for, CPU 1 held off during CPU 0's turns, must have occurred
 * (under -icount).
 */
static void check_beside_spinner(struct __test_metadata *_metadata,
				 bool churn, const char *where)
{
	uint64_t held, most = 0;
	int fd, i, tid, alone = 0;
	struct spinner s;
	bool strict;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (online_cpus() < 2)
		SKIP(return, "one CPU");
	tid = spinner_start(&s);
	ASSERT_LT(0, tid);
	ASSERT_EQ(0, pin_tid_to_cpu(tid, 0));
	ASSERT_EQ(0, pin_to_cpu(1));
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	for (i = 0; i < 20 && alone < 5; i++) {
		if (churn)
			free_files_by_rcu(600);
		held = check_cycles_overflow(_metadata, fd, where, &strict);
		if (held > most)
			most = held;
		alone += strict;
	}
	close(fd);
	spinner_stop(&s);
	EXPECT_EQ(5, alone);
	if (icount_guest())
		EXPECT_LT(200000, most);
}

/*
 * Under -icount CPU 1 is held off during CPU 0's turns, its overflow
 * interrupt waits for the next of its own (1.5 ms late on average, 299
 * rounds of 300, on the debug kernel), and the cycles counted past the
 * wrap meanwhile are lost to the reset.  The skid allowed is what the
 * thread saw itself held off, no more; this failed on demand when the
 * bound was a fixed 200 us.
 */
TEST(overflow_interrupt_other_cpu_busy)
{
	check_beside_spinner(_metadata, false, "CPU 0 busy");
}

/*
 * As overflow_interrupt_other_cpu_busy, with CPU 1 freeing 600 files by
 * RCU before each round: RCU's grace-period thread (rcu_preempt, not
 * bound to a CPU) then wants 0.3 to 5.5 ms of each 8 ms round on the
 * debug kernel, and with CPU 0 busy it takes CPU 1's.  Before the rounds
 * ran at SCHED_FIFO, all 20 rounds were switched out here and the test
 * failed.  The likely cause of overflow_interrupt_cycles' one failure in
 * make check (all 10 rounds switched out, after pmuv3_pfmon_test had
 * freed its files), which was not caught in the act.
 */
TEST(overflow_interrupt_rcu_busy)
{
	check_beside_spinner(_metadata, true, "CPU 1 freeing files");
}

/* QEMU's cycle counter runs at 1 GHz of guest time. */
TEST(cycles_monotonic)
{
	uint64_t prev = 0, v, t0, t1;
	int fd, i;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, CYCLE_IDX, 0, 0, 0));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	for (i = 0; i < 5; i++) {
		burn_cpu(10 * MS);
		v = pfm_read_pmd(fd, 0, CYCLE_IDX);
		EXPECT_LT(prev, v);
		prev = v;
	}
	ASSERT_EQ(0, pfm_stop(fd));
	t1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	v = pfm_read_pmd(fd, 0, CYCLE_IDX);
	TH_LOG("%llu cycles in %llu ns of thread time",
	       (unsigned long long)v, (unsigned long long)(t1 - t0));
	EXPECT_TRUE(within_pct(v, t1 - t0, 3));
	close(fd);
}

/* Another thread, attached: its cycles, not ours. */
TEST(per_thread_other)
{
	struct spinner s;
	uint64_t t0, t1, v;
	int fd, tid;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, CYCLE_IDX, EXCL_EL1, 0, 0));
	tid = spinner_start(&s);
	ASSERT_LT(0, tid);
	ASSERT_EQ(0, pfm_load(fd, tid));
	t0 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	usleep(100000);
	v = pfm_read_pmd(fd, 0, CYCLE_IDX);
	t1 = clock_ns(CLOCK_MONOTONIC);
	spinner_stop(&s);
	TH_LOG("spinner: %llu user cycles in %llu ns", (unsigned long long)v,
	       (unsigned long long)(t1 - t0));
	/*
	 * Two vCPUs: the spinner ran most of the window, and never more
	 * than it (1 GHz cycles).  The window, not the 100 ms asked for:
	 * under -icount a sleep once lasted 200 ms of guest time.
	 */
	EXPECT_LT(30 * MS, v);
	EXPECT_GE(t1 - t0, v);
	close(fd);
}

/* A thread that runs loop2(@n) at each byte on @cmd, answers on @done. */
struct sleeper {
	pthread_t thread;
	int cmd[2], done[2];
	uint64_t n;
	atomic_int tid;
};

static void *sleeper_fn(void *arg)
{
	struct sleeper *z = arg;
	char c;

	atomic_store(&z->tid, gettid());
	while (read(z->cmd[0], &c, 1) == 1 && c == 'r') {
		loop2(z->n);
		if (write(z->done[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

/*
 * One loop2() of the sleeper, which is asleep again on return: its
 * answer may wake the caller before it reached its read (preempted
 * there, it has user instructions left to run): 0 once it sleeps.
 */
static int sleeper_round(struct sleeper *z)
{
	char c = 'r';

	if (write(z->cmd[1], &c, 1) != 1 || read(z->done[0], &c, 1) != 1)
		return -1;
	return task_wait_state(atomic_load(&z->tid), 'S', 1000) ? 0 : -1;
}

/*
 * Another thread's counts, read while it sleeps.  Over pfm_perf its
 * switch out leaves them in perf's counters (pfm_ctx_switch_out()) and
 * each reader pulls them: PFM_READ_VALUES without the core's run,
 * PFM_READ_PMDS in place; once a control page is mapped (rounds 3 and
 * 4 only: its save would serve the others) the switch out saves them
 * at once for it.  Each reader in turn reads first after a round.  Both
 * threads on one CPU, so the sleeper is switched out whenever the
 * monitor runs.  A reader that took the set as some earlier save left
 * it would find fewer than the rounds' loops (the first: none).  CPU 1
 * offline: INST_RETIRED would add what it runs (the file comment).
 */
TEST_F(quiet, per_thread_other_asleep)
{
	struct sleeper z = { .n = 5 * 1000 * 1000 };
	struct pfm_user_page *pg = NULL;
	uint64_t v, rv, up;
	int fd, tid, k;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	ASSERT_EQ(0, quiet_cpus(true));
	ASSERT_EQ(0, pipe(z.cmd));
	ASSERT_EQ(0, pipe(z.done));
	ASSERT_EQ(0, pthread_create(&z.thread, NULL, sleeper_fn, &z));
	while (!(tid = atomic_load(&z.tid)))
		usleep(1000);
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, 0, 0));
	ASSERT_EQ(0, pfm_load(fd, tid));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	for (k = 1; k <= 4; k++) {
		if (k == 3) {
			pg = pfm_uread_map(fd);
			ASSERT_NE(NULL, pg);
		}
		ASSERT_EQ(0, sleeper_round(&z));
		/* The first reader pulls: each in turn. */
		if (k & 1)
			v = pfm_read_pmd(fd, 0, 0);
		ASSERT_EQ(0, pfm_read_values(fd, 0, 0, 1, &rv));
		if (!(k & 1))
			v = pfm_read_pmd(fd, 0, 0);
		up = pg ? pg->pmds[0].offset : 0;
		TH_LOG("round %d: %llu by READ_VALUES, %llu by READ_PMDS, %llu in the page",
		       k, (unsigned long long)rv, (unsigned long long)v,
		       (unsigned long long)up);
		/*
		 * Two instructions a loop, and the pipe calls' user code:
		 * 190 a round, measured (98 in a first round whose answer
		 * woke this thread before the sleeper's last 92 ran).
		 */
		EXPECT_LE(2 * k * z.n, rv);
		EXPECT_GT(2 * k * z.n + k * 1000, rv);
		/* Asleep throughout: each reader finds the same count. */
		EXPECT_EQ(rv, v);
		if (pg)
			EXPECT_EQ(rv, up);
	}
	close(z.cmd[1]);
	pthread_join(z.thread, NULL);
	close(fd);
	EXPECT_EQ(0, quiet_cpus(false));
}

/* el0_access (driver setting 0) on @fd; 0 or -errno. */
static int el0_on(int fd)
{
	struct pfarg_drv_cfg c;

	memset(&c, 0, sizeof(c));
	c.cfg_value = 1;
	return pfm_set_drv_config(fd, &c, 1) ? -errno : 0;
}

/*
 * A driver setting changed (el0_access on) while the thread counts on
 * another CPU: pfm_perf makes its perf counters again for the setting,
 * folding the old ones from the monitor's CPU, which is current only
 * because the call saved the context where it is live first; a fold of
 * their count as of its last read there (the start, for a spinner that
 * never switches) would lose half the window.  Counted 97.1% of it
 * (what runs between the save and the reload that binds the new
 * counters is not counted; per_thread_other counts 99.7%).
 */
TEST(drv_config_keeps_counts_live_elsewhere)
{
	struct spinner s;
	uint64_t t0, t1, v;
	int fd, tid;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (online_cpus() < 2)
		SKIP(return, "one CPU");
	if (no_el0_access())
		SKIP(return, "pfm_perf without kernel.perf_user_access=1");
	ASSERT_EQ(0, pin_to_cpu(0));
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, CYCLE_IDX, EXCL_EL1, 0, 0));
	tid = spinner_start(&s);
	ASSERT_LT(0, tid);
	ASSERT_EQ(0, pin_tid_to_cpu(tid, 1));
	usleep(10000);
	ASSERT_EQ(0, pfm_load(fd, tid));
	t0 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	usleep(50000);
	ASSERT_EQ(0, el0_on(fd));
	usleep(50000);
	v = pfm_read_pmd(fd, 0, CYCLE_IDX);
	t1 = clock_ns(CLOCK_MONOTONIC);
	spinner_stop(&s);
	TH_LOG("spinner: %llu user cycles in %llu ns, el0_access turned on midway",
	       (unsigned long long)v, (unsigned long long)(t1 - t0));
	/* As per_thread_other, which counted 99.7% of the window. */
	EXPECT_LT((t1 - t0) * 9 / 10, v);
	EXPECT_GE(t1 - t0, v);
	close(fd);
}

/* CPU 1 monitored from CPU 0: cycles equal the elapsed guest time. */
TEST(system_wide_cpu1)
{
	uint64_t t0, t1, v;
	int fd;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (online_cpus() < 2)
		SKIP(return, "one CPU");
	ASSERT_EQ(0, pin_to_cpu(0));
	fd = pfm_new_ctx(PFM_FL_SYSTEM_WIDE);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, CYCLE_IDX, 0, 0, 0));
	ASSERT_EQ(0, pfm_load(fd, 1));
	t0 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	usleep(100000);
	ASSERT_EQ(0, pfm_stop(fd));
	t1 = clock_ns(CLOCK_MONOTONIC);
	v = pfm_read_pmd(fd, 0, CYCLE_IDX);
	TH_LOG("CPU1: %llu cycles in %llu ns", (unsigned long long)v,
	       (unsigned long long)(t1 - t0));
	EXPECT_GE(t1 - t0, v);
	EXPECT_TRUE(within_pct(v, t1 - t0, 5));
	close(fd);
}

/*
 * More events than counters: two sets of every event counter plus the
 * cycle counter, switched every 5 ms, with a value for each PMD that the
 * other set does not have (INST_RETIRED at EL0 on PMD0 in set 0, on PMD1
 * in set 1; cycles at EL0 in set 0, at every level in set 1), so that
 * over pfm_perf the two sets need twice the counters perf has.
 * Instructions counted by the two sets add up to the loop's count:
 * switching loses none (over pfm_perf, the apply work runs before the
 * thread goes back to EL0).  QEMU adds a few when interrupts are taken
 * at EL0 during the loop (11 over 10^8 measured, with about 45
 * interrupts), hence the small upper bound.  pfm_perf first tries to
 * keep every set's counters enabled, and perf's refusal of that is not
 * one for the log.
 */
TEST_F(quiet, sets_more_events)
{
	const char *line = "perf has no free counter";
	pfarg_setinfo_t si[2];
	uint64_t k, v, sum = 0;
	int fd, n, i, s, logged;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	ASSERT_EQ(0, quiet_cpus(true));
	n = num_ctrs();
	ASSERT_LE(2, n);
	fd = inst_ctx(0, 0);
	ASSERT_LE(0, fd);
	k = count_loop(fd, 1000) - 2000;
	ASSERT_EQ(0, pfm_unload_context(fd));
	logged = klog_count(line);
	for (s = 0; s < 2; s++) {
		ASSERT_EQ(0, pfm_new_set(fd, s, PFM_SETFL_TIME_SWITCH, 5 * MS));
		for (i = 0; i < n; i++)
			ASSERT_EQ(0, pfm_add_ctr(fd, s, i, i == s ?
					EV_INST_RETIRED | EXCL_EL1 :
					EV_CPU_CYCLES | (s ? 0 : EXCL_EL1),
					0, 0));
		ASSERT_EQ(0, pfm_add_ctr(fd, s, CYCLE_IDX, 0, 0, 0));
	}
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	loop2(50000000);
	ASSERT_EQ(0, pfm_stop(fd));
	memset(si, 0, sizeof(si));
	si[1].set_id = 1;
	ASSERT_EQ(0, pfm_getinfo_evtsets(fd, si, 2));
	for (s = 0; s < 2; s++) {
		v = pfm_read_pmd(fd, s, s);
		sum += v;
		TH_LOG("set %d: %llu runs, %llu ns, %llu instructions, %llu cycles",
		       s, (unsigned long long)si[s].set_runs,
		       (unsigned long long)si[s].set_act_duration,
		       (unsigned long long)v,
		       (unsigned long long)pfm_read_pmd(fd, s, CYCLE_IDX));
		EXPECT_LT(2, si[s].set_runs);
		EXPECT_LT(0, pfm_read_pmd(fd, s, n - 1));
	}
	EXPECT_LE(k + 100000000, sum);
	EXPECT_GE(k + 100000000 + 100, sum);
	EXPECT_EQ(logged, klog_count(line));
	close(fd);
	EXPECT_EQ(0, quiet_cpus(false));
}

/*
 * Set switches lose no event: two sets of INST_RETIRED at EL0, each on
 * its own PMD (over pfm_perf, two perf counters), switched every 1 ms
 * over 10^8 instructions, add up to the loop's count.  The thread runs
 * SCHED_FIFO on CPU 0 with CPU 1 offline, so nothing else runs there
 * while it does not sleep: pfm_perf enabled the new set's counter from
 * a kworker, which then waited for the real-time throttle (50 ms a
 * second), and the set counted nothing until it ran.
 */
TEST_F(quiet, sets_switch_exact_fifo)
{
	pfarg_setinfo_t si[2];
	uint64_t k, v, sum = 0;
	int fd, s;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	ASSERT_EQ(0, quiet_cpus(true));
	ASSERT_EQ(0, pin_to_cpu(0));
	fd = inst_ctx(0, 0);
	ASSERT_LE(0, fd);
	k = count_loop(fd, 1000) - 2000;
	ASSERT_EQ(0, pfm_unload_context(fd));
	for (s = 0; s < 2; s++) {
		ASSERT_EQ(0, pfm_new_set(fd, s, PFM_SETFL_TIME_SWITCH, MS));
		ASSERT_EQ(0, pfm_add_ctr(fd, s, s, EV_INST_RETIRED | EXCL_EL1,
					 0, 0));
	}
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, fifo_self(true));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	loop2(50000000);
	ASSERT_EQ(0, pfm_stop(fd));
	ASSERT_EQ(0, fifo_self(false));
	memset(si, 0, sizeof(si));
	si[1].set_id = 1;
	ASSERT_EQ(0, pfm_getinfo_evtsets(fd, si, 2));
	for (s = 0; s < 2; s++) {
		v = pfm_read_pmd(fd, s, s);
		sum += v;
		TH_LOG("set %d: %llu runs, %llu ns, %llu instructions", s,
		       (unsigned long long)si[s].set_runs,
		       (unsigned long long)si[s].set_act_duration,
		       (unsigned long long)v);
		EXPECT_LT(10, si[s].set_runs);
	}
	EXPECT_LE(k + 100000000, sum);
	EXPECT_GE(k + 100000000 + 100, sum);
	close(fd);
	EXPECT_EQ(0, quiet_cpus(false));
}

static sigjmp_buf sigill_jmp;

static void on_sigill(int sig)
{
	siglongjmp(sigill_jmp, 1);
}

/* PMCCNTR_EL0 read at EL0; false when it trapped (SIGILL). */
static bool read_ccnt(uint64_t *v)
{
	struct sigaction sa = { .sa_handler = on_sigill }, old;
	bool ok = false;

	sigaction(SIGILL, &sa, &old);
	if (!sigsetjmp(sigill_jmp, 1)) {
		__asm__ volatile("mrs %0, pmccntr_el0" : "=r"(*v));
		ok = true;
	}
	sigaction(SIGILL, &old, NULL);
	return ok;
}

/* el0_access: the thread reads its counters itself, only while live. */
TEST(el0_access)
{
	struct pfarg_drv_cfg c;
	uint64_t v1 = 0, v2 = 0;
	int fd, sys;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (no_el0_access())
		SKIP(return, "pfm_perf without kernel.perf_user_access=1");
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, CYCLE_IDX, 0, 0, 0));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	EXPECT_FALSE(read_ccnt(&v1));

	memset(&c, 0, sizeof(c));
	c.cfg_value = 2;
	EXPECT_EQ(-1, pfm_set_drv_config(fd, &c, 1));
	EXPECT_EQ(EINVAL, errno);
	c.cfg_value = 1;
	c.cfg_flags = 0;
	ASSERT_EQ(0, pfm_set_drv_config(fd, &c, 1));
	EXPECT_TRUE(read_ccnt(&v1));
	burn_cpu(5 * MS);
	EXPECT_TRUE(read_ccnt(&v2));
	TH_LOG("mrs pmccntr_el0: %llu then %llu", (unsigned long long)v1,
	       (unsigned long long)v2);
	EXPECT_LT(v1, v2);

	/*
	 * Unloaded: the setting stays with the context, not the CPU.  perf
	 * closes PMUSERENR_EL0 only when it next starts the PMU without a
	 * user-readable event (Documentation/pmu-description.rst).
	 */
	ASSERT_EQ(0, pfm_unload_context(fd));
	if (!pmu_module_is("pfm_perf")) {
		EXPECT_FALSE(read_ccnt(&v1));
	} else {
		TH_LOG("pfm_perf, unloaded: mrs pmccntr_el0 %s",
		       read_ccnt(&v1) ? "still reads (perf's rule)" : "traps");
	}
	close(fd);

	/* On a monitored CPU every thread could read: refused. */
	sys = pfm_new_ctx(PFM_FL_SYSTEM_WIDE);
	ASSERT_LE(0, sys);
	memset(&c, 0, sizeof(c));
	c.cfg_value = 1;
	EXPECT_EQ(-1, pfm_set_drv_config(sys, &c, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(c.cfg_flags & PFM_REG_RETFL_EINVAL);
	close(sys);
}

/* ---- user-level reads: the control page and mrs -------------------- */

/* PMD @pmd as this thread reads it itself; ~0 when it cannot. */
static uint64_t uread(const struct pfm_user_page *pg, unsigned int pmd)
{
	uint64_t v;

	return pfm_uread(pg, pmd, &v) ? ~0ull : v;
}

/*
 * Context @fd (loaded on this thread first when @load) with el0_access
 * on, its control page mapped, started: the page, or NULL.
 */
static struct pfm_user_page *uread_go(int fd, bool load)
{
	struct pfm_user_page *pg;

	if ((load && pfm_load(fd, gettid())) || el0_on(fd))
		return NULL;
	pg = pfm_uread_map(fd);
	return pg && !pfm_start(fd, NULL) ? pg : NULL;
}

/*
 * A context on this thread counting user instructions (PMD 0, from
 * @start) and user cycles (PMD 31, from @start), going (uread_go()),
 * its page in *@pg.  The fd, or -1.
 */
static int uread_ctx(uint64_t start, struct pfm_user_page **pg)
{
	int fd = inst_ctx(start, 0);

	if (fd < 0 || pfm_add_ctr(fd, 0, CYCLE_IDX, EXCL_EL1, start, 0))
		return -1;
	*pg = uread_go(fd, false);
	return *pg ? fd : -1;
}

/*
 * PMD @pmd read by the thread, by PFM_READ_PMDS, by the thread again:
 * in that order, never below *@prev.  false (and logged) otherwise.
 */
static bool uread_brackets(struct __test_metadata *_metadata, int fd,
			   const struct pfm_user_page *pg, unsigned int pmd,
			   uint64_t *prev)
{
	uint64_t u1 = uread(pg, pmd);
	uint64_t k = pfm_read_pmd(fd, pg->set_id, pmd);
	uint64_t u2 = uread(pg, pmd);

	if (*prev <= u1 && u1 <= k && k <= u2) {
		*prev = u2;
		return true;
	}
	TH_LOG("PMD %u: before %llu, mrs %llu, ioctl %llu, mrs %llu", pmd,
	       (unsigned long long)*prev, (unsigned long long)u1,
	       (unsigned long long)k, (unsigned long long)u2);
	return false;
}

/* 100 times loop2(1000) then uread_brackets() of PMD 0 and PMD 31. */
static bool uread_brackets_loop(struct __test_metadata *_metadata, int fd,
				const struct pfm_user_page *pg, uint64_t *prev)
{
	int i;

	for (i = 0; i < 100; i++) {
		loop2(1000);
		if (!uread_brackets(_metadata, fd, pg, 0, &prev[0]) ||
		    !uread_brackets(_metadata, fd, pg, CYCLE_IDX, &prev[1]))
			return false;
	}
	return true;
}

/*
 * The thread reads its instructions and cycles with mrs: only with
 * el0_access (else PFM_UPMD_STALE); the loop's instructions exactly;
 * every ioctl read falls between two of its reads; equal once stopped.
 */
TEST_F(quiet, uread_exact)
{
	struct pfm_user_page *pg = NULL;
	uint64_t u1, u2, d[2], prev[2] = { 0, 0 };
	int fd, i;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (no_el0_access())
		SKIP(return, "pfm_perf without kernel.perf_user_access=1");
	ASSERT_EQ(0, quiet_cpus(true));
	fd = inst_ctx(0, 0);
	ASSERT_LE(0, fd);
	pg = pfm_uread_map(fd);
	ASSERT_TRUE(!!pg);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	EXPECT_EQ(-EAGAIN, pfm_uread(pg, 0, &u1));
	EXPECT_EQ(0, pg->pmds[0].index);
	ASSERT_EQ(0, el0_on(fd));
	EXPECT_EQ(1, pg->pmds[0].index);
	TH_LOG("counter width %u", pg->width);
	for (i = 0; i < 2; i++) {
		u1 = uread(pg, 0);
		loop2(1000 * (i + 1));
		u2 = uread(pg, 0);
		d[i] = u2 - u1;
	}
	TH_LOG("mrs around loop2(1000): %llu, loop2(2000): %llu",
	       (unsigned long long)d[0], (unsigned long long)d[1]);
	EXPECT_EQ(2000, d[1] - d[0]);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, CYCLE_IDX, EXCL_EL1, 0, 0));
	EXPECT_EQ(CYCLE_IDX + 1, pg->pmds[CYCLE_IDX].index);
	ASSERT_TRUE(uread_brackets_loop(_metadata, fd, pg, prev));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(0, pg->pmds[0].index);
	EXPECT_EQ(pfm_read_pmd(fd, 0, 0), uread(pg, 0));
	EXPECT_EQ(pfm_read_pmd(fd, 0, CYCLE_IDX), uread(pg, CYCLE_IDX));
	pfm_uread_unmap(pg);
	close(fd);
	EXPECT_EQ(0, quiet_cpus(false));
}

/*
 * The page holds each counter's index as soon as the call that made it
 * readable returns, with no switch in between: the thread runs
 * SCHED_FIFO, so nothing else runs on its CPU while it does not sleep.
 * pfm_perf enabled its perf counters after it had written the page, and
 * the index stayed 0 until the thread's next switch in (a kworker's
 * turn): uread_exact failed so 1 run in 4 on 6.12, this every time.
 */
TEST(uread_index_without_switch)
{
	struct pfm_user_page *pg;
	uint64_t v;
	int fd;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (no_el0_access())
		SKIP(return, "pfm_perf without kernel.perf_user_access=1");
	ASSERT_EQ(0, pin_to_cpu(0));
	ASSERT_EQ(0, fifo_self(true));
	fd = inst_ctx(0, 0);
	ASSERT_LE(0, fd);
	pg = pfm_uread_map(fd);
	ASSERT_TRUE(!!pg);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	ASSERT_EQ(0, el0_on(fd));
	EXPECT_EQ(1, pg->pmds[0].index);
	EXPECT_EQ(0, pfm_uread(pg, 0, &v));
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, CYCLE_IDX, EXCL_EL1, 0, 0));
	EXPECT_EQ(CYCLE_IDX + 1, pg->pmds[CYCLE_IDX].index);
	EXPECT_EQ(0, pfm_uread(pg, CYCLE_IDX, &v));
	ASSERT_EQ(0, pfm_stop(fd));
	pfm_uread_unmap(pg);
	close(fd);
}

/*
 * Moved between the two CPUs and switched out 300 times: the page is
 * rewritten at each switch (seq), and the thread's reads keep bracketing
 * the ioctl's and never go back.
 */
TEST(uread_across_switches_and_migrations)
{
	uint64_t prev[2] = { 0, 0 };
	struct pfm_user_page *pg;
	uint32_t seq0;
	int fd, i;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (no_el0_access())
		SKIP(return, "pfm_perf without kernel.perf_user_access=1");
	if (online_cpus() < 2)
		SKIP(return, "one CPU");
	fd = uread_ctx(0, &pg);
	ASSERT_LE(0, fd);
	seq0 = pg->seq;
	for (i = 0; i < 300; i++) {
		ASSERT_EQ(0, pin_to_cpu(i % 2));
		if (i % 3 == 0)
			usleep(100);
		loop2(2000);
		ASSERT_TRUE(uread_brackets(_metadata, fd, pg, 0, &prev[0]));
		ASSERT_TRUE(uread_brackets(_metadata, fd, pg, CYCLE_IDX,
					   &prev[1]));
	}
	TH_LOG("300 migrations: %u page updates; %llu instructions, %llu cycles",
	       (pg->seq - seq0) / 2, (unsigned long long)prev[0],
	       (unsigned long long)prev[1]);
	EXPECT_LE(600, (pg->seq - seq0) / 2);	/* out and in, each move */
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(pfm_read_pmd(fd, 0, 0), uread(pg, 0));
	EXPECT_EQ(pfm_read_pmd(fd, 0, CYCLE_IDX), uread(pg, CYCLE_IDX));
	pfm_uread_unmap(pg);
	close(fd);
}

/*
 * Two sets switched every ms: each read names the set it read; per set
 * the values never go back, and none passes the set's final count.
 */
TEST(uread_across_set_switches)
{
	uint64_t last[2] = { 0, 0 };
	struct pfm_uread_value uv;
	struct pfm_user_page *pg;
	int fd, s, i, reads[2] = { 0, 0 };

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (no_el0_access())
		SKIP(return, "pfm_perf without kernel.perf_user_access=1");
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	for (s = 0; s < 2; s++) {
		ASSERT_EQ(0, pfm_new_set(fd, s, PFM_SETFL_TIME_SWITCH, MS));
		ASSERT_EQ(0, pfm_add_ctr(fd, s, 0,
					 EV_INST_RETIRED | EXCL_EL1, 0, 0));
	}
	pg = uread_go(fd, true);
	ASSERT_TRUE(!!pg);
	for (i = 0; i < 2000; i++) {
		loop2(5000);
		ASSERT_EQ(0, pfm_uread_times(pg, 0, &uv));
		ASSERT_GT(2, uv.set_id);
		ASSERT_LE(last[uv.set_id], uv.value);
		ASSERT_LE(uv.time_running, uv.time_enabled);
		last[uv.set_id] = uv.value;
		reads[uv.set_id]++;
	}
	ASSERT_EQ(0, pfm_stop(fd));
	for (s = 0; s < 2; s++) {
		TH_LOG("set %d: %d reads, last %llu, final %llu", s, reads[s],
		       (unsigned long long)last[s],
		       (unsigned long long)pfm_read_pmd(fd, s, 0));
		EXPECT_LT(100, reads[s]);
		EXPECT_LE(last[s], pfm_read_pmd(fd, s, 0));
	}
	ASSERT_EQ(0, pfm_uread_times(pg, 0, &uv));
	EXPECT_EQ(pfm_read_pmd(fd, uv.set_id, 0), uv.value);
	pfm_uread_unmap(pg);
	close(fd);
}

/* Reload pfm_pmuv3 with @params once no context holds it; 0 or -errno. */
/* Load the module that serves the PMUv3 (pfm_pmuv3, pfm_perf) again. */
static int pmuv3_reload(const char *params)
{
	const char *mod = pmu_module_is("pfm_perf") ? "pfm_perf" : "pfm_pmuv3";
	char path[64];
	int ret, tries = 200;

	while ((ret = module_unload(mod)) == -EWOULDBLOCK && --tries)
		usleep(10000);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/modules/%s.ko", mod);
	return module_load(path, params);
}

/*
 * Counters of 32 bits (long_counters=0) started 100,000 events below a
 * wrap: the thread's reads cross it, carried by the overflow interrupt
 * into bit 32 (the page's base keeps a wrap whose interrupt is not
 * taken yet right), bracketing the ioctl's all along.
 */
TEST_F(quiet, uread_across_wraps)
{
	const uint64_t start = (1ull << 32) - 100000;
	uint64_t prev[2] = { 0, 0 };
	struct pfm_user_page *pg;
	int fd;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (no_el0_access())
		SKIP(return, "pfm_perf without kernel.perf_user_access=1");
	ASSERT_EQ(0, pmuv3_reload("long_counters=0"));
	ASSERT_EQ(0, quiet_cpus(true));
	fd = uread_ctx(start, &pg);
	ASSERT_LE(0, fd);
	EXPECT_EQ(32, pg->width);
	ASSERT_TRUE(uread_brackets_loop(_metadata, fd, pg, prev));
	ASSERT_EQ(0, pfm_stop(fd));
	TH_LOG("from %llu: %llu instructions, %llu cycles",
	       (unsigned long long)start, (unsigned long long)prev[0],
	       (unsigned long long)prev[1]);
	EXPECT_LT(1ull << 32, prev[0]);
	EXPECT_LT(1ull << 32, prev[1]);
	EXPECT_EQ(pfm_read_pmd(fd, 0, 0), uread(pg, 0));
	EXPECT_EQ(pfm_read_pmd(fd, 0, CYCLE_IDX), uread(pg, CYCLE_IDX));
	pfm_uread_unmap(pg);
	close(fd);
	EXPECT_EQ(0, quiet_cpus(false));
	EXPECT_EQ(0, pmuv3_reload(""));
}

/*
 * The cycle counter overflowing its 64-bit value every 200,000 cycles
 * (reloaded with -200,000): every read by the thread is in the period
 * (or past its top by the interrupt's skid), it drops back at each
 * overflow, and it equals the ioctl's once stopped.
 */
TEST(uread_across_overflows)
{
	const uint64_t period = 200000;
	uint64_t v, last = 0;
	struct pfm_user_page *pg;
	int fd, i, drops = 0;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (no_el0_access())
		SKIP(return, "pfm_perf without kernel.perf_user_access=1");
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, CYCLE_IDX, EXCL_EL1, -period,
				 -period));
	pg = uread_go(fd, true);
	ASSERT_TRUE(!!pg);
	for (i = 0; i < 2000; i++) {
		loop2(1000);
		v = uread(pg, CYCLE_IDX);
		ASSERT_TRUE(v >= -period || v < period) {
			TH_LOG("read %d: %llu", i, (unsigned long long)v);
		}
		drops += v < last;
		last = v;
	}
	ASSERT_EQ(0, pfm_stop(fd));
	TH_LOG("2000 reads, %d overflows seen", drops);
	EXPECT_LE(5, drops);
	EXPECT_EQ(pfm_read_pmd(fd, 0, CYCLE_IDX), uread(pg, CYCLE_IDX));
	pfm_uread_unmap(pg);
	close(fd);
}

#define CPUPM_KO	"/modules/pfm_cpupm_test.ko"
#define CPUPM_RUN	"/sys/kernel/debug/pfm_cpupm_test/run"

/*
 * The test module pfm_cpupm_test.ko (tools/selftests/perfmon/kapi/)
 * loaded, its run file opened into *@run_fd; 0, or why to skip.
 */
static const char *cpupm_open(int *run_fd)
{
	int ret = module_load(CPUPM_KO, "");

	if (ret && ret != -EEXIST)
		return "no " CPUPM_KO " (a test module)";
	*run_fd = open(CPUPM_RUN, O_WRONLY | O_CLOEXEC);
	if (*run_fd < 0)
		return "no " CPUPM_RUN;
	if (write(*run_fd, "0", 1) != 1)
		return "the kernel has no CPU PM (CONFIG_CPU_PM)";
	return NULL;
}

static void cpupm_close(int run_fd)
{
	int tries = 200;

	close(run_fd);
	while (module_unload("pfm_cpupm_test") == -EAGAIN && --tries)
		usleep(10000);
}

/*
 * Counts of loop2(@n), a one-byte write of @what ("1": a power-state
 * round trip on this CPU, "0": nothing) and loop2(@n) again: PMD0 and
 * PMD @hi count INST_RETIRED at EL0, PMD31 cycles at EL0.  The user
 * instructions are the same for "0" and "1".
 */
static int count_around_pm(int fd, int run_fd, const char *what, uint64_t n,
			   int hi, uint64_t *c)
{
	if (pfm_start(fd, NULL))
		return -1;
	loop2(n);
	if (write(run_fd, what, 1) != 1)
		return -1;
	loop2(n);
	if (pfm_stop(fd))
		return -1;
	c[0] = pfm_read_pmd(fd, 0, 0);
	c[1] = pfm_read_pmd(fd, 0, hi);
	c[2] = pfm_read_pmd(fd, 0, CYCLE_IDX);
	return 0;
}

static int pm_ctx(int hi)
{
	int fd = pfm_new_ctx(0);

	if (fd < 0 ||
	    pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, 0, 0) ||
	    pfm_add_ctr(fd, 0, hi, EV_INST_RETIRED | EXCL_EL1, 0, 0) ||
	    pfm_add_ctr(fd, 0, CYCLE_IDX, EXCL_EL1, 0, 0) ||
	    pfm_load(fd, gettid()))
		return -1;
	return fd;
}

/* Zero the three counters of pm_ctx(). */
static int pm_zero(int fd, int hi)
{
	return pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, 0, 0) ||
	       pfm_add_ctr(fd, 0, hi, EV_INST_RETIRED | EXCL_EL1, 0, 0) ||
	       pfm_add_ctr(fd, 0, CYCLE_IDX, EXCL_EL1, 0, 0);
}

/*
 * A CPU power state that loses the PMU's registers (cpu_pm_enter(), the
 * registers clobbered, cpu_pm_exit(), interrupts off, by the test
 * module, between two halves of a loop) loses no count: the description
 * saves and restores the live context on CPU PM notifications.  With
 * the same user instructions, the counts equal those of a run without
 * the power state exactly, on two event counters and, within 0.1%, on
 * the cycle counter (EL0 only, so the module's own kernel work is not
 * counted in either run).  Without the notifier the counters are junk
 * and stopped after the clobber.
 */
TEST_F(quiet, cpu_pm_state_kept)
{
	const uint64_t n = 100000;
	uint64_t ref[3], pm[3], pm2[3];
	const char *why;
	int fd, run_fd, hi;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	why = cpupm_open(&run_fd);
	if (why)
		SKIP(return, "%s", why);
	hi = num_ctrs() - 1;	/* the highest event counter */
	ASSERT_LT(0, hi);
	ASSERT_EQ(0, quiet_cpus(true));
	fd = pm_ctx(hi);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, count_around_pm(fd, run_fd, "0", n, hi, ref));
	ASSERT_EQ(0, pm_zero(fd, hi));
	ASSERT_EQ(0, count_around_pm(fd, run_fd, "1", n, hi, pm));
	ASSERT_EQ(0, pm_zero(fd, hi));
	ASSERT_EQ(0, count_around_pm(fd, run_fd, "1", n, hi, pm2));
	TH_LOG("PMD0, PMD%d (INST_RETIRED), PMD31 (cycles)", hi);
	TH_LOG("no power state: %llu %llu %llu",
	       (unsigned long long)ref[0], (unsigned long long)ref[1],
	       (unsigned long long)ref[2]);
	TH_LOG("power state: %llu %llu %llu, again %llu %llu %llu",
	       (unsigned long long)pm[0], (unsigned long long)pm[1],
	       (unsigned long long)pm[2], (unsigned long long)pm2[0],
	       (unsigned long long)pm2[1], (unsigned long long)pm2[2]);
	ASSERT_NE(0, ref[0]) TH_LOG("INST_RETIRED counts only under -icount");
	EXPECT_EQ(ref[0], ref[1]);
	EXPECT_EQ(ref[0], pm[0]);
	EXPECT_EQ(ref[1], pm[1]);
	EXPECT_EQ(ref[0], pm2[0]);
	EXPECT_EQ(ref[1], pm2[1]);
	EXPECT_GT(ref[2] / 1000 + 1, pm[2] > ref[2] ? pm[2] - ref[2] : ref[2] - pm[2]);
	close(fd);
	EXPECT_EQ(0, quiet_cpus(false));
	cpupm_close(run_fd);
}

/*
 * A counter that wrapped before the power state, its interrupt not yet
 * taken (interrupts are off), still reports its overflow afterwards:
 * PMD0 starts 1000 instructions short of its 64-bit wrap, so it wraps
 * in the first half of the loop (QEMU notices an INST_RETIRED wrap at
 * the next PMU register access: the notifier's), and restarts from its
 * reset value 0.  It then holds at least the second half's count and
 * less than the whole loop's.  Without the notifier the overflow flag
 * is lost with the PMU's state: no overflow, a junk count.
 */
TEST_F(quiet, cpu_pm_pending_overflow)
{
	const uint64_t n = 100000;
	uint64_t c[3], ovfl;
	const char *why;
	int fd, run_fd, hi;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	why = cpupm_open(&run_fd);
	if (why)
		SKIP(return, "%s", why);
	hi = num_ctrs() - 1;
	ASSERT_LT(0, hi);
	ASSERT_EQ(0, quiet_cpus(true));
	fd = pm_ctx(hi);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, -1000ull, 0));
	ASSERT_EQ(0, count_around_pm(fd, run_fd, "1", n, hi, c));
	ASSERT_EQ(0, set_ovfl(fd, &ovfl));
	TH_LOG("PMD0 after its wrap %llu, PMD%d %llu in all, overflowed %#llx",
	       (unsigned long long)c[0], hi, (unsigned long long)c[1],
	       (unsigned long long)ovfl);
	EXPECT_EQ(1, ovfl);
	EXPECT_LE(2 * n, c[0]);
	EXPECT_GT(c[1] - 1000, c[0]);
	close(fd);
	EXPECT_EQ(0, quiet_cpus(false));
	cpupm_close(run_fd);
}

/*
 * A CPU that went offline and came back has its PMU set up again: a
 * thread on it counts and takes overflow interrupts
 * (check_cycles_overflow).
 */
TEST(hotplug_reprogrammed)
{
	int fd;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (online_cpus() < 2)
		SKIP(return, "one CPU");
	ASSERT_EQ(0, pin_to_cpu(0));
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_load(fd, gettid()));	/* every CPU set up */
	ASSERT_EQ(0, cpu_set_online(1, 0));
	ASSERT_EQ(0, cpu_set_online(1, 1));
	ASSERT_EQ(0, pin_to_cpu(1));
	check_cycles_overflow_alone(_metadata, fd, "CPU1 after hotplug");
	close(fd);
}

/*
 * Sampling on the PMU's own overflow interrupt: the cycle counter with a
 * 1 ms period (EL1 excluded, so every overflow is in user code: a user
 * loop, since burn_cpu() spends most of its time in the kernel) into
 * the default format, each sample carrying CPU_CYCLES of counter 0,
 * which counts the same cycles and is never reset.  Between two samples
 * counter 0 moves by the period plus the interrupt's skid: under 200 us
 * of the CPU's own, plus the gap around the sample's time stamp where
 * the thread was held off (struct held: the loop reads CLOCK_MONOTONIC
 * every 20 us); the number of samples is the number of periods counter
 * 0 covers, give or take those.
 */
TEST(sampling_cycles_default_format)
{
	const uint64_t period = MS, skid = 200000;
	struct pfm_dfl_smpl_arg arg = { .buf_size = 64 * 1024 };
	struct held h = { .min = 50000 };
	struct pfm_dfl_smpl_entry *e;
	struct pfm_dfl_smpl_hdr *hdr;
	uint64_t total, prev = 0, d, n, t, now;
	pfarg_ctx_t ctx;
	pfarg_pmd_t pd;
	char *buf;
	int fd;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	memset(&ctx, 0, sizeof(ctx));
	fd = pfm_create_context(&ctx, PFM_DFL_SMPL_NAME, &arg, sizeof(arg));
	ASSERT_LE(0, fd);
	buf = mmap(NULL, arg.buf_size, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, buf);
	hdr = (struct pfm_dfl_smpl_hdr *)buf;
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, EV_CPU_CYCLES | EXCL_EL1, 0, 0));
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, CYCLE_IDX, EXCL_EL1, 0, 0));
	memset(&pd, 0, sizeof(pd));
	pd.reg_num = CYCLE_IDX;
	pd.reg_flags = PFM_REGFL_OVFL_NOTIFY;
	pd.reg_value = -period;
	pd.reg_short_reset = -period;
	pd.reg_long_reset = -period;
	pd.reg_smpl_pmds[0] = 1;
	ASSERT_EQ(0, pfm_write_pmds(fd, &pd, 1));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	t = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	for (int i = 0; i < 1000; i++) {
		loop2(10000);
		now = clock_ns(CLOCK_MONOTONIC);
		held_note(&h, t, now);
		t = now;
	}
	ASSERT_EQ(0, pfm_stop(fd));
	total = pfm_read_pmd(fd, 0, 0);
	n = hdr->hdr_count;
	TH_LOG("%llu samples over %llu cycles of counter 0; held off %u times, %llu ns in all",
	       (unsigned long long)n, (unsigned long long)total, h.n,
	       (unsigned long long)h.sum);
	ASSERT_EQ(0, h.lost);
	EXPECT_LE(10, n);
	EXPECT_LE(n * period, total);
	EXPECT_GT((n + 1) * (period + skid) + h.sum, total);
	e = (struct pfm_dfl_smpl_entry *)(hdr + 1);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v = *(uint64_t *)(e + 1);

		EXPECT_EQ(CYCLE_IDX, e->ovfl_pmd);
		EXPECT_EQ((uint64_t)-period, e->last_reset_val);
		EXPECT_EQ((uint32_t)gettid(), e->pid);	/* v2.8: the thread */
		EXPECT_EQ((uint32_t)getpid(), e->tgid);
		EXPECT_NE(0, e->ip);
		d = v - prev;
		if (d < period || d >= period + skid)
			TH_LOG("sample %llu: counter 0 moved %llu, held off %llu",
			       (unsigned long long)i, (unsigned long long)d,
			       (unsigned long long)held_at(&h, e->tstamp));
		EXPECT_LE(period, d);
		EXPECT_GT(period + skid + held_at(&h, e->tstamp), d);
		prev = v;
		e = (struct pfm_dfl_smpl_entry *)((uint64_t *)(e + 1) + 1);
	}
	munmap(buf, arg.buf_size);
	close(fd);
}

/*
 * The storm the throttle is for: uid 65534 counting its own EL0 cycles
 * in the cycle counter reloaded every 1 to 16 cycles, on every CPU, at
 * the default max_ovfl_rate (100,000 a second), an event counter
 * counting the same cycles beside it.  Before throttling a loop of a
 * million instructions took 655 ms of guest time instead of 1 ms; now
 * the CPUs throttle (PFM_MSG_THROTTLE) again and again (counting
 * resumes by itself in between), the counts keep growing, and a sleeper
 * beside them wakes up on time (a median within a tick; printed).  No
 * unthrottled storm runs here for comparison: its 300 ms of guest time
 * took longer than the guest's 300 s timeout.
 */
/* Five storms of 300 ms: minutes of host time on the debug kernel. */
FIXTURE(storm) {
	int unused;
};

FIXTURE_SETUP(storm)
{
}

FIXTURE_TEARDOWN(storm)
{
}

TEST_F_TIMEOUT(storm, ovfl_storm_throttled, 600)
{
	static const uint64_t periods[] = { 1, 2, 4, 8, 16 };
	static const struct storm_cfg cyc = {
		CYCLE_IDX, 0, EXCL_EL1, EV_CPU_CYCLES | EXCL_EL1, false, 300
	};
	long long rate = knob_read("max_ovfl_rate");
	struct storm_seen s;
	char buf[32];
	unsigned int i;

	if (!pmu_is("armv8_pmuv3"))
		SKIP(return, "PMU is not armv8_pmuv3");
	if (getuid() != 0)
		SKIP(return, "needs root to switch users");
	/* The debug kernel's guests (slack 5) did not end the storms in 650 s. */
	if (timing_slack() >= 5)
		SKIP(return,
		     "too slow on the debug kernel; the Debian kernels' PMUv3 stages run it");
	ASSERT_EQ(100000, rate);
	for (i = 0; i < ARRAY_SIZE(periods); i++) {
		storm_run(&cyc, periods[i], &s);
		STORM_LOG("cycles, max_ovfl_rate 100000", periods[i], &s);
		EXPECT_EQ(0, s.failed);
		/*
		 * throttled, resumed by itself, throttled again; over
		 * pfm_perf, perf's own throttle (perf_event_max_sample_rate,
		 * 100,000 or lower) holds the rate under this one first
		 */
		if (!pmu_module_is("pfm_perf"))
			EXPECT_LE(2 * online_cpus(), s.throttles);
		EXPECT_LT(1000, s.grown_min);
		/*
		 * Under -icount guest time is the instructions run, which
		 * nothing on the host moves: no slack (without it, the
		 * software PMU's bound, storm_test.c).  What the throttle
		 * promises is a pause within a tick (4 ms at the guests'
		 * HZ of 250) of a CPU's first interrupt past the rate; a
		 * CPU lost in interrupts is late by hundreds of ms.
		 * Measured at slack 1 (QEMU 10.0): medians of 56 to 60 us
		 * over pfm_perf and in most storms natively; in 6 of 10
		 * native storms, those with the sleeper late at every
		 * wake-up, 0.8 to 1.0 ms (2 to 3 ms at worst, 163 wake-ups
		 * instead of 284).  QEMU 7.2: 57 us at every period.
		 */
		EXPECT_GT(icount_guest() ? 4 * MS : 50 * MS * timing_slack(),
			  s.late_med_ns);
	}
	snprintf(buf, sizeof(buf), "%lld", rate);
	EXPECT_EQ(0, knob_write("max_ovfl_rate", buf));
}

/* ---- pfm_perf beside perf ------------------------------------------ */

/*
 * pfm_perf beside perf (Documentation/pmu-description.rst, "Over
 * perf_events"): in the arm64 guest whose kernel keeps its PMUv3 driver
 * (vm --pmu perf, -icount 0), a perf_event_open() counter and a perfmon
 * context count the same instructions, both exactly; a context perf has
 * no room for is refused with EBUSY and a log line; pfm_perf unloads
 * while a perf counter runs, which counts on.  These skip where pfm_perf
 * does not serve the PMU.
 */
#define PERF_LOOP	100000ull

/*
 * A perf counter of user-level @event: of this thread when @cpu is -1,
 * else of CPU @cpu; fd or -1.
 */
static int perf_open_on(uint64_t event, bool pinned, bool disabled, int cpu)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_RAW;
	attr.config = event;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.pinned = pinned;
	attr.disabled = disabled;
	return syscall(SYS_perf_event_open, &attr, cpu < 0 ? 0 : -1, cpu, -1,
		       0);
}

/* A perf counter of this thread's user-level @event; fd or -1. */
static int perf_open(uint64_t event, bool pinned, bool disabled)
{
	return perf_open_on(event, pinned, disabled, -1);
}

static bool over_perf(void)
{
	return pmu_module_is("pfm_perf");
}

/* Load @fd (PMD0 counting INST_RETIRED) here and count a 2n loop. */
static void count_loop_self(struct __test_metadata *_metadata, int fd)
{
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	loop2(PERF_LOOP);
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_LE(2 * PERF_LOOP, pfm_read_pmd(fd, 0, 0));
}

/*
 * Both count the loop: perfmon between its start and stop, perf around
 * them, so perf's count is perfmon's plus the user instructions of the
 * two calls.  Under -icount both are exact, and perfmon's equals what
 * the native description counts (pmuv3_test.c inst_retired_exact).
 */
TEST(perf_counts_beside)
{
	uint64_t v, p;
	int fd, pfd;

	if (!over_perf())
		SKIP(return, "PMU not served by pfm_perf");
	pfd = perf_open(EV_INST_RETIRED, false, true);
	ASSERT_LE(0, pfd);
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, 0, 0));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	loop2(PERF_LOOP);
	ASSERT_EQ(0, pfm_stop(fd));
	ASSERT_EQ(0, ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0));
	v = pfm_read_pmd(fd, 0, 0);
	p = perf_count(pfd);
	TH_LOG("perfmon %llu, perf %llu instructions for a loop of %llu",
	       (unsigned long long)v, (unsigned long long)p,
	       (unsigned long long)(2 * PERF_LOOP));
	EXPECT_LE(2 * PERF_LOOP, v);
	EXPECT_GT(2 * PERF_LOOP + 200, v);
	EXPECT_LE(v, p);
	EXPECT_GT(v + 2000, p);
	close(fd);
	close(pfd);
}

/*
 * perf's pinned counters of this thread take every hardware counter
 * (opened until one more finds no room); a context then cannot load:
 * EBUSY, one log line.  perf's counters keep counting; once they are
 * closed the same context loads.
 */
TEST(perf_full_refuses)
{
	const char *line = "perf has no free counter";
	int fds[40], n = 0, fd, logged, i;
	uint64_t c;

	if (!over_perf())
		SKIP(return, "PMU not served by pfm_perf");
	for (;;) {
		ASSERT_GT(40, n);
		fds[n] = perf_open(n ? EV_INST_RETIRED : EV_CPU_CYCLES, true,
				   false);
		ASSERT_LE(0, fds[n]);
		if (perf_count(fds[n]) == ~0ull) {
			close(fds[n]);
			break;
		}
		n++;
	}
	TH_LOG("perf holds %d counters", n);
	ASSERT_LT(0, n);
	logged = klog_count(line);
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, 0, 0));
	EXPECT_EQ(-EBUSY, pfm_load(fd, gettid()));
	EXPECT_LT(logged, klog_count(line));
	EXPECT_EQ(0, sessions("task"));
	loop2(PERF_LOOP);
	for (i = 0; i < n; i++) {
		c = perf_count(fds[i]);
		EXPECT_NE(~0ull, c);
		EXPECT_LE(2 * PERF_LOOP, c);
		close(fds[i]);
	}
	count_loop_self(_metadata, fd);
	close(fd);
}

static void perf_close_all(const int *fds, int n)
{
	while (n-- > 0)
		close(fds[n]);
}

/*
 * Open pinned perf counters of INST_RETIRED on CPU 0 into @fds, @max at
 * most, until perf has no room for one more: how many it holds, or -1.
 */
static int perf_fill_cpu0(int *fds, int max)
{
	int n;

	for (n = 0; n < max; n++) {
		fds[n] = perf_open_on(EV_INST_RETIRED, true, false, 0);
		if (fds[n] < 0)
			break;
		if (perf_count(fds[n]) == ~0ull) {
			close(fds[n]);
			return n;
		}
	}
	perf_close_all(fds, n);
	return -1;
}

/*
 * Once perf lets its counters go, pfm_perf enables the context's again
 * within 100 ms (its retry), counting from a switch in: what PMD s of
 * each set s < @nsets counted grows by a loop's count within 20 sleeps.
 */
static void expect_counting_again(struct __test_metadata *_metadata, int fd,
				  int nsets)
{
	uint64_t before = 0, after = 0;
	int i, s;

	for (i = 0; i < 20; i++) {
		usleep(20000);
		for (before = 0, s = 0; s < nsets; s++)
			before += pfm_read_pmd(fd, s, s);
		loop2(PERF_LOOP);
		for (after = 0, s = 0; s < nsets; s++)
			after += pfm_read_pmd(fd, s, s);
		if (after >= before + 2 * PERF_LOOP)
			break;
	}
	TH_LOG("counting again after %d sleeps of 20 ms", i + 1);
	EXPECT_LE(before + 2 * PERF_LOOP, after);
}

/*
 * perf's users take every counter after a context of this thread
 * started (pinned counters of this CPU, which perf serves before a
 * thread's): at the thread's next switch in perf finds no room for the
 * context's counter, and one log line says so (it counted nothing,
 * silently, before).  The thread keeps running meanwhile: retrying the
 * counter at every switch in had its kworker preempt the thread each
 * time, and on 6.1 the test then timed out.  Once they are closed, it
 * counts again.
 */
TEST(perf_taken_later_logged)
{
	const char *line = "perf has no free counter";
	int fds[40], n, fd, logged, i;

	if (!over_perf())
		SKIP(return, "PMU not served by pfm_perf");
	ASSERT_EQ(0, pin_to_cpu(0));
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, 0, 0));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	logged = klog_count(line);
	n = perf_fill_cpu0(fds, ARRAY_SIZE(fds));
	ASSERT_LT(0, n);
	TH_LOG("perf holds %d counters of CPU 0", n);
	/* Switched out and in, then the apply work's turn: within 1 s. */
	for (i = 0; i < 100 && klog_count(line) == logged; i++)
		usleep(10000);
	EXPECT_EQ(logged + 1, klog_count(line));
	/* Meanwhile the thread runs: pfm_perf retries every 100 ms. */
	loop2(PERF_LOOP);
	perf_close_all(fds, n);
	expect_counting_again(_metadata, fd, 1);
	ASSERT_EQ(0, pfm_stop(fd));
	close(fd);
}

/*
 * As perf_taken_later_logged, with two sets on two counters, switched
 * every 1 ms: perf has room for both at first, so pfm_perf keeps the
 * set not live enabled (a spare).  When perf's CPU-pinned counters take
 * the PMU, the refusal the spare may have caused is not logged, the
 * spares are let go, and the refusal that stays is logged once per
 * counter; counting resumes after perf lets go.
 */
TEST(perf_taken_later_sets)
{
	const char *line = "perf has no free counter";
	int fds[40], n, fd, logged, i, s;

	if (!over_perf())
		SKIP(return, "PMU not served by pfm_perf");
	ASSERT_EQ(0, pin_to_cpu(0));
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	for (s = 0; s < 2; s++) {
		ASSERT_EQ(0, pfm_new_set(fd, s, PFM_SETFL_TIME_SWITCH, MS));
		ASSERT_EQ(0, pfm_add_ctr(fd, s, s, EV_INST_RETIRED | EXCL_EL1,
					 0, 0));
	}
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	loop2(PERF_LOOP);
	logged = klog_count(line);
	n = perf_fill_cpu0(fds, ARRAY_SIZE(fds));
	ASSERT_LT(0, n);
	TH_LOG("perf holds %d counters of CPU 0", n);
	for (i = 0; i < 100 && klog_count(line) == logged; i++) {
		loop2(PERF_LOOP);
		usleep(10000);
	}
	TH_LOG("%d line(s) logged", klog_count(line) - logged);
	EXPECT_LE(logged + 1, klog_count(line));
	EXPECT_GE(logged + 2, klog_count(line));
	perf_close_all(fds, n);
	expect_counting_again(_metadata, fd, 2);
	ASSERT_EQ(0, pfm_stop(fd));
	close(fd);
}

#define PFP_MAX_COUNTERS	"/sys/module/pfm_perf/parameters/max_counters"

/*
 * A context holds at most max_counters perf counters across its sets
 * (each is a pinned perf kernel counter, memory charged to nobody):
 * past it the call that needs one more fails with ENOSPC, and one log
 * line names the parameter.  A counter a PMC write replaces does not
 * count against it.
 */
TEST(perf_max_counters)
{
	const char *line = "perf counters across its sets";
	int fd, logged, err = 0;
	bool made;

	if (!over_perf())
		SKIP(return, "PMU not served by pfm_perf");
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	made = !pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, 0, 0) &&
	       !pfm_add_ctr(fd, 0, 1, EV_CPU_CYCLES | EXCL_EL1, 0, 0) &&
	       !pfm_add_ctr(fd, 0, CYCLE_IDX, EXCL_EL1, 0, 0);
	ASSERT_TRUE(made);
	logged = klog_count(line);
	/* No assertion until the default is back, for the tests after. */
	ASSERT_EQ(0, write_str(PFP_MAX_COUNTERS, "2"));
	err = pfm_load(fd, gettid());
	ASSERT_EQ(0, write_str(PFP_MAX_COUNTERS, "256"));
	EXPECT_EQ(-ENOSPC, err);
	EXPECT_EQ(logged + 1, klog_count(line));
	EXPECT_EQ(0, sessions("task"));
	count_loop_self(_metadata, fd);
	close(fd);

	/* At the limit, a PMC rewritten needs no room for the old counter. */
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	made = !pfm_add_ctr(fd, 0, 0, EV_INST_RETIRED | EXCL_EL1, 0, 0) &&
	       !pfm_add_ctr(fd, 0, CYCLE_IDX, EXCL_EL1, 0, 0);
	ASSERT_TRUE(made);
	ASSERT_EQ(0, write_str(PFP_MAX_COUNTERS, "2"));
	err = pfm_load(fd, gettid());
	if (!err)
		err = pfm_add_ctr(fd, 0, 0, EV_CPU_CYCLES | EXCL_EL1, 0, 0);
	ASSERT_EQ(0, write_str(PFP_MAX_COUNTERS, "256"));
	EXPECT_EQ(0, err);
	close(fd);
}

static int unload_perf(void)
{
	int ret, tries = 200;

	while ((ret = module_unload("pfm_perf")) == -EWOULDBLOCK && --tries)
		usleep(10000);
	return ret;
}

/* pfm_perf goes and comes back while a perf counter counts on. */
TEST(perf_unload_beside)
{
	uint64_t a, b;
	int pfd;

	if (!over_perf())
		SKIP(return, "PMU not served by pfm_perf");
	pfd = perf_open(EV_INST_RETIRED, false, false);
	ASSERT_LE(0, pfd);
	loop2(PERF_LOOP);
	a = perf_count(pfd);
	ASSERT_EQ(0, unload_perf());
	loop2(PERF_LOOP);
	b = perf_count(pfd);
	TH_LOG("perf: %llu before the unload, %llu after",
	       (unsigned long long)a, (unsigned long long)b);
	EXPECT_LE(2 * PERF_LOOP, a);
	EXPECT_LE(a + 2 * PERF_LOOP, b);
	close(pfd);
	ASSERT_EQ(0, module_load("/modules/pfm_perf.ko", ""));
	EXPECT_TRUE(over_perf());
}

/*
 * el0_access over pfm_perf: perf lets the thread read its counters only
 * with kernel.perf_user_access=1.  At 0 the control page says so (index
 * 0, stale: programs read with PFM_READ_PMDS), mrs traps, and
 * PFM_READ_PMDS counts on; at 1 the thread reads perf's counter itself,
 * within the instructions of a read call of PFM_READ_PMDS.
 */
#define USER_ACCESS	"/proc/sys/kernel/perf_user_access"

static int uread_inst_ctx(struct pfm_user_page **pg)
{
	int fd = inst_ctx(0, 0);

	if (fd < 0)
		return -1;
	*pg = uread_go(fd, false);
	if (!*pg) {
		close(fd);
		return -1;
	}
	return fd;
}

TEST(perf_uread_needs_user_access)
{
	struct pfm_user_page *pg;
	uint64_t v, k;
	int fd;

	if (!over_perf())
		SKIP(return, "PMU not served by pfm_perf");
	ASSERT_EQ(0, write_str(USER_ACCESS, "0"));
	fd = uread_inst_ctx(&pg);
	ASSERT_LE(0, fd);
	loop2(1000);
	EXPECT_EQ(0u, pg->pmds[0].index);
	EXPECT_TRUE(pg->pmds[0].flags & PFM_UPMD_STALE);
	EXPECT_FALSE(read_ccnt(&v));
	EXPECT_LE(2000u, pfm_read_pmd(fd, 0, 0));
	pfm_uread_unmap(pg);
	close(fd);

	ASSERT_EQ(0, write_str(USER_ACCESS, "1"));
	fd = uread_inst_ctx(&pg);
	ASSERT_LE(0, fd);
	loop2(1000);
	EXPECT_NE(0u, pg->pmds[0].index);
	v = uread(pg, 0);
	k = pfm_read_pmd(fd, 0, 0);
	TH_LOG("index %u: mrs read %llu, then PFM_READ_PMDS %llu",
	       pg->pmds[0].index, (unsigned long long)v,
	       (unsigned long long)k);
	EXPECT_LE(2000u, v);
	EXPECT_LE(v, k);
	EXPECT_GT(v + 200, k);
	pfm_uread_unmap(pg);
	close(fd);
}

/*
 * perfmon.pmu=auto (Documentation/pmu-description.rst, "Which
 * description serves"): a context that finds no description has the
 * core load the CPU's own (pfm_pmuv3, which the builtin driver keeps
 * out: EBUSY) and then pfm_perf, through modprobe and the modules'
 * aliases.  perfmon.pmu=native gets ENODEV; perf loads pfm_perf alone.
 */
#define PERF_MODS	"/modules/perfmon.ko /modules/pfm_pmuv3.ko /modules/pfm_perf.ko"

TEST(perf_autoload)
{
	int fd, busy0, busy1, fell0, fell1;

	if (!over_perf())
		SKIP(return, "PMU not served by pfm_perf");
	ASSERT_EQ(0, install_modules(PERF_MODS));
	ASSERT_EQ(0, unload_perf());

	/* native: pfm_pmuv3 is refused, nothing else is tried. */
	ASSERT_EQ(0, write_str(PMU_PARAM, "native"));
	busy0 = klog_count("owned by the builtin PMUv3 driver");
	EXPECT_EQ(-1, pfm_new_ctx(0));
	EXPECT_EQ(ENODEV, errno);
	busy1 = klog_count("owned by the builtin PMUv3 driver");
	EXPECT_LT(busy0, busy1);
	EXPECT_FALSE(pmu_module_is("pfm_perf"));

	/* A word perfmon.pmu does not know is refused. */
	EXPECT_EQ(-EINVAL, write_str(PMU_PARAM, "pmuv3"));

	/* auto: pfm_pmuv3 refused again, then pfm_perf serves. */
	ASSERT_EQ(0, write_str(PMU_PARAM, "auto"));
	fell0 = klog_count("pfm_perf serves, over perf's counters");
	fd = pfm_counting_ctx(0, 0x08, 0);
	ASSERT_LE(0, fd);
	fell1 = klog_count("pfm_perf serves, over perf's counters");
	EXPECT_EQ(fell0 + 1, fell1);
	EXPECT_TRUE(pmu_module_is("pfm_perf"));
	EXPECT_LT(busy1, klog_count("owned by the builtin PMUv3 driver"));
	count_loop_self(_metadata, fd);
	close(fd);

	/* perf: pfm_perf straight away, no native attempt. */
	ASSERT_EQ(0, unload_perf());
	ASSERT_EQ(0, write_str(PMU_PARAM, "perf"));
	busy1 = klog_count("owned by the builtin PMUv3 driver");
	fd = pfm_new_ctx(0);
	EXPECT_LE(0, fd);
	EXPECT_EQ(busy1, klog_count("owned by the builtin PMUv3 driver"));
	EXPECT_TRUE(pmu_module_is("pfm_perf"));
	close(fd);
	EXPECT_EQ(0, write_str(PMU_PARAM, "auto"));
}

TEST_HARNESS_MAIN
