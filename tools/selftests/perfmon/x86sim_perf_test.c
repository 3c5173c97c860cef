// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_perf's Intel and AMD register maps over a SIMULATED perf PMU.
 * QEMU's TCG has no x86 PMU, so perf registers none; the test module
 * pfm_perf_simpmu.ko registers one in the x86 one's place
 * (tools/selftests/perfmon/sim/perf_sim_pmu.c), and pfm_perf_x86sim.ko runs pfm_perf's
 * engine and x86 map (pfm_pmu_lib's, which pfm_perf.ko runs) with a CPUID
 * that describes it (perf_x86_sim.c).  What is simulated: CPUID
 * (pfm_perf_simpmu's parameters) and the counting (debugfs
 * pfm_perf_simpmu/tick: the events running on the writing CPU count N;
 * an overflow is reported from a hard interrupt).  What is real: /dev/perfmon and the core,
 * pfm_perf's map and engine, perf's scheduling of the kernel counters
 * beside the counters perf_event_open() takes, and perf's errors.
 *
 * The guest boots with pfm_x86_sim (vm --pmu x86sim); each case swaps
 * it for pfm_perf_x86sim on the PMU it needs, and back.  The simulated
 * PMU stays loaded: on 6.1 a thread's perf context points at the PMU it
 * was made for until the thread exits.  Everything
 * runs on CPU 0, where the self-monitoring thread's counters run.
 */
#include <stdlib.h>
#include <linux/perf_event.h>
#include "pfm_test.h"
#include "kselftest_harness.h"

#define SIM_KO		"/modules/pfm_perf_x86sim.ko"
#define SIMPMU_KO	"/modules/pfm_perf_simpmu.ko"
#define X86SIM_KO	"/modules/pfm_x86_sim.ko"
#define PERF_KO		"/modules/pfm_perf.ko"
#define SIMPMU		"/sys/module/pfm_perf_simpmu/parameters/"
#define SIM_DIR		"/sys/kernel/debug/pfm_perf_simpmu/"

#define EVT_USR		0x10000ull
#define EVT_OS		0x20000ull
#define EVT_EDGE	0x40000ull
#define EVT_EN		0x400000ull
#define EVT_INV		0x800000ull
#define AMD_GUESTONLY	0x10000000000ull	/* bit 40 */
#define CORE_CYCLES	0x3cull
#define INST_RETIRED	0xc0ull
#define LLC_REFS	0x4f2eull
#define FIXED_CTRL	16
#define FIXED0		16

/* Unload @name, waiting up to 2 s for closed contexts to let it go. */
static int unload(const char *name)
{
	int ret, tries = 200;

	while ((ret = module_unload(name)) == -EAGAIN && --tries)
		usleep(10000);
	return ret == -ENOENT ? 0 : ret;
}

/*
 * pfm_perf_x86sim, in place of whichever simulator serves, on the PMU
 * @amd, @counters, @fixed: 0 or -errno.
 */
static int sim_load(bool amd, unsigned int counters, unsigned int fixed)
{
	char num[16];
	int ret = unload("pfm_x86_sim");

	if (!ret)
		ret = unload("pfm_perf_x86sim");
	if (!ret && access("/sys/module/pfm_perf_simpmu", F_OK))
		ret = module_load(SIMPMU_KO, "");
	if (ret)
		return ret;
	snprintf(num, sizeof(num), "%u", counters);
	if (write_str(SIMPMU "amd", amd ? "Y" : "N") ||
	    write_str(SIMPMU "counters", num))
		return -EIO;
	snprintf(num, sizeof(num), "%u", fixed);
	if (write_str(SIMPMU "fixed", num))
		return -EIO;
	return module_load(SIM_KO, "");
}

static int sim_tick(uint64_t n)
{
	char buf[32];
	int fd, ret;

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)n);
	fd = open(SIM_DIR "tick", O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, buf, strlen(buf)) == (ssize_t)strlen(buf) ? 0 : -errno;
	close(fd);
	return ret;
}

/* The simulated PMU's events on this CPU, one per line. */
static const char *sim_events(void)
{
	static char buf[4096];
	ssize_t n;
	int fd = open(SIM_DIR "events", O_RDONLY);

	buf[0] = 0;
	if (fd < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	return buf;
}

static bool has(const char *text, const char *line)
{
	return strstr(text, line);
}

/* A perf counter of this thread on the simulated PMU; fd or -1. */
static int perf_open(uint64_t config, bool pinned)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_RAW;
	attr.config = config;
	attr.pinned = pinned;
	return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

/* Fixed counter PMD @num from @value; its PMC is FIXED_CTR_CTRL's field. */
static int fixed_pmd(int fd, uint16_t num, uint64_t value, uint64_t reset)
{
	pfarg_pmd_t pd;

	pfm_pmd_prep(&pd, 0, num, 0, value, reset);
	return pfm_write_pmds(fd, &pd, 1) ? -errno : 0;
}

FIXTURE(psim) {
	bool ok;
};

/* As x86sim_test: the guest must have booted with the simulator. */
FIXTURE_SETUP(psim)
{
	self->ok = !getuid() && !access(SIM_KO, R_OK) &&
		   !access(SIMPMU_KO, R_OK) &&
		   !access("/sys/module/pfm_x86_sim", F_OK) && !pin_to_cpu(0);
	if (!self->ok)
		SKIP(_exit(255), "needs root, " SIM_KO
		     " and the x86 simulator loaded (vm --pmu x86sim)");
}

/* Leave the register simulator loaded, as the rig expects. */
FIXTURE_TEARDOWN(psim)
{
	if (self->ok) {
		EXPECT_EQ(0, unload("pfm_perf_x86sim"));
		EXPECT_EQ(0, module_load(X86SIM_KO, ""));
	}
}

/* The same registers as pfm_x86's Intel map, served by pfm_perf. */
TEST_F(psim, intel_register_map)
{
	struct pfarg_pmu_info info;

	ASSERT_EQ(0, sim_load(false, 4, 3));
	ASSERT_TRUE(pmu_is("intel_arch"));
	EXPECT_TRUE(pmu_module_is("pfm_perf_x86sim"));
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, pfm_get_pmu_desc(&info));
	EXPECT_EQ(48, info.pmu_counter_width);
	EXPECT_STREQ("PERFEVTSEL3", pmu_desc_str("pmc3/name"));
	EXPECT_STREQ("FIXED_CTR_CTRL", pmu_desc_str("pmc16/name"));
	EXPECT_STREQ("FIXED_CTR2", pmu_desc_str("pmd18/name"));
	EXPECT_STREQ("", pmu_desc_str("pmc4/name"));
	EXPECT_STREQ("", pmu_desc_str("pmd19/name"));
	EXPECT_STREQ("0xffffffff00080000", pmu_desc_str("pmc0/rsvd_msk"));
	EXPECT_STREQ("0xfffffffffffff000", pmu_desc_str("pmc16/rsvd_msk"));
	EXPECT_LE(1, klog_count("intel_arch over perf_events: 7 counters"));
}

/*
 * pfm_perf's engine serves one module's map at a time: pfm_perf itself,
 * loaded beside the test module, is refused before it asks perf for
 * anything, with one line naming the module to unload.
 */
TEST_F(psim, engine_serves_one_module)
{
	const char *line = "the perf_events engine already serves pfm_perf_x86sim";
	int before = klog_count(line);

	ASSERT_EQ(0, sim_load(false, 4, 3));
	ASSERT_EQ(0, access(PERF_KO, R_OK));
	EXPECT_EQ(-EBUSY, module_load(PERF_KO, ""));
	EXPECT_EQ(before + 1, klog_count(line));
	EXPECT_NE(0, access("/sys/module/pfm_perf", F_OK));
	EXPECT_TRUE(pmu_module_is("pfm_perf_x86sim"));
}

/*
 * Each event select becomes the raw event perf programs the same select
 * from, USR and OS its exclude bits; each field of FIXED_CTR_CTRL one
 * fixed counter's event.  Every PMD counts what its counter counted.
 */
TEST_F(psim, intel_selects_become_perf_events)
{
	const uint64_t cmask2 = 2ull << 24;
	const char *ev;
	int fd, i;
	static const uint16_t pmds[] = { 0, 1, 2, FIXED0, FIXED0 + 1, FIXED0 + 2 };

	ASSERT_EQ(0, sim_load(false, 4, 3));
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, INST_RETIRED | EVT_USR | EVT_OS | EVT_EN, 0, 0));
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 1, LLC_REFS | EVT_USR | EVT_EN, 0, 0));
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 2, CORE_CYCLES | EVT_OS | EVT_EN |
				 EVT_EDGE | EVT_INV | cmask2, 0, 0));
	/* Fixed 0: OS and USR; 1: USR; 2: OS. */
	ASSERT_EQ(0, pfm_write_pmc(fd, 0, FIXED_CTRL, 0x123));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, fixed_pmd(fd, FIXED0 + i, 0, 0));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	ev = sim_events();
	TH_LOG("simulated PMU's events:\n%s", ev);
	EXPECT_TRUE(has(ev, "config=0xc0 exclude_user=0 exclude_kernel=0 exclude_host=0"));
	EXPECT_TRUE(has(ev, "config=0x4f2e exclude_user=0 exclude_kernel=1 exclude_host=0"));
	EXPECT_TRUE(has(ev, "config=0x284003c exclude_user=1 exclude_kernel=0 exclude_host=0"));
	/* The fixed counters' events, created first, on the fixed counters. */
	EXPECT_TRUE(has(ev, "ctr=8 config=0xc0 exclude_user=0 exclude_kernel=0"));
	EXPECT_TRUE(has(ev, "ctr=9 config=0x3c exclude_user=0 exclude_kernel=1"));
	EXPECT_TRUE(has(ev, "ctr=10 config=0x300 exclude_user=1 exclude_kernel=0"));
	ASSERT_EQ(0, sim_tick(1000));
	ASSERT_EQ(0, pfm_stop(fd));
	ASSERT_EQ(0, sim_tick(1000));
	for (i = 0; i < 6; i++)
		EXPECT_EQ(1000, pfm_read_pmd(fd, 0, pmds[i]));
	close(fd);
}

/* A select that counts nothing (no USR, no OS) takes no counter. */
TEST_F(psim, idle_select_takes_no_counter)
{
	int fd;

	ASSERT_EQ(0, sim_load(false, 4, 3));
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, INST_RETIRED | EVT_EN, 0, 0));
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 1, CORE_CYCLES | EVT_USR | EVT_EN, 0, 0));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	EXPECT_FALSE(has(sim_events(), "config=0xc0 "));
	ASSERT_EQ(0, sim_tick(500));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(0, pfm_read_pmd(fd, 0, 0));
	EXPECT_EQ(500, pfm_read_pmd(fd, 0, 1));
	close(fd);
}

/*
 * A PMD's wrap is perf's overflow at the period pfm_perf set: the 64-bit
 * value goes on past the 48-bit counter, and an overflowing PMD of the
 * fixed counters reloads its short reset value.
 */
TEST_F(psim, intel_overflow_over_perf)
{
	uint64_t top = 1ull << 48;
	pfarg_setinfo_t si;
	int fd;

	ASSERT_EQ(0, sim_load(false, 4, 3));
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, CORE_CYCLES | EVT_USR | EVT_EN,
				 top - 100, 0));
	ASSERT_EQ(0, pfm_write_pmc(fd, 0, FIXED_CTRL, 0x3));
	ASSERT_EQ(0, fixed_pmd(fd, FIXED0, -500ull, 12345));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	ASSERT_EQ(0, sim_tick(1000));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(top + 900, pfm_read_pmd(fd, 0, 0));
	EXPECT_EQ(12345, pfm_read_pmd(fd, 0, FIXED0));
	ASSERT_EQ(0, pfm_set_info(fd, 0, &si));
	EXPECT_EQ(1ull << FIXED0, si.set_ovfl_pmds[0]);
	close(fd);
}

/* A perf counter and a context count the same events side by side. */
TEST_F(psim, perf_counts_beside)
{
	int pfd, fd;

	ASSERT_EQ(0, sim_load(false, 4, 3));
	pfd = perf_open(INST_RETIRED, false);
	ASSERT_LE(0, pfd);
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, INST_RETIRED | EVT_USR | EVT_EN, 0, 0));
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, FIXED0, 0x2, 0, 0));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	ASSERT_EQ(0, sim_tick(700));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(700, pfm_read_pmd(fd, 0, 0));
	EXPECT_EQ(700, pfm_read_pmd(fd, 0, FIXED0));
	EXPECT_EQ(700, perf_count(pfd));
	close(fd);
	close(pfd);
}

/*
 * perf's pinned counters take both general counters: a context that
 * needs one cannot load (EBUSY, one log line); perf's keep counting,
 * and once they are closed the same context loads.
 */
TEST_F(psim, perf_full_refuses)
{
	const char *line = "perf has no free counter";
	int pfd[2], fd, logged, i;

	ASSERT_EQ(0, sim_load(false, 2, 0));
	for (i = 0; i < 2; i++) {
		pfd[i] = perf_open(CORE_CYCLES, true);
		ASSERT_LE(0, pfd[i]);
	}
	logged = klog_count(line);
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, INST_RETIRED | EVT_USR | EVT_EN, 0, 0));
	EXPECT_EQ(-EBUSY, pfm_load(fd, gettid()));
	EXPECT_LT(logged, klog_count(line));
	EXPECT_EQ(0, sessions("task"));
	ASSERT_EQ(0, sim_tick(300));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(300, perf_count(pfd[i]));
		close(pfd[i]);
	}
	EXPECT_EQ(0, pfm_load(fd, gettid()));
	close(fd);
}

/* AMD: bits 35:32 of the event, GuestOnly as exclude_host. */
TEST_F(psim, amd_selects_become_perf_events)
{
	const uint64_t ev_hi = 0x100000076ull;
	const char *ev;
	int fd;

	ASSERT_EQ(0, sim_load(true, 6, 0));
	ASSERT_TRUE(pmu_is("amd64"));
	EXPECT_STREQ("PERF_CTL5", pmu_desc_str("pmc5/name"));
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, ev_hi | EVT_USR | EVT_EN, 0, 0));
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 5, 0xc0 | EVT_USR | EVT_EN |
				 AMD_GUESTONLY, 0, 0));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	ev = sim_events();
	EXPECT_TRUE(has(ev, "config=0x100000076 exclude_user=0 exclude_kernel=1 exclude_host=0"));
	EXPECT_TRUE(has(ev, "config=0xc0 exclude_user=0 exclude_kernel=1 exclude_host=1"));
	ASSERT_EQ(0, sim_tick(400));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(400, pfm_read_pmd(fd, 0, 0));
	EXPECT_EQ(400, pfm_read_pmd(fd, 0, 5));
	close(fd);
}

TEST_HARNESS_MAIN
