// SPDX-License-Identifier: GPL-2.0
/*
 * The control page (PFM_USER_PAGE_OFFSET) on any PMU: refused mappings
 * and their errno, the page's header, values that equal PFM_READ_PMDS
 * whenever the context is not counting (stopped, unloaded, written),
 * the active set and its times, and PFM_UPMD_STALE while a PMU that
 * user space cannot read (the software PMU) counts.  Reads by the
 * thread itself from the hardware counter are pmuv3_test's.
 */
#include <sys/mman.h>
#include <perfmon/perfmon_uread.h>
#include "pfm_test.h"
#include "kselftest_harness.h"

#define MS	1000000ull

/* mmap() of the control page with @prot and @len: 0 or errno. */
static int map_err(int fd, int prot, long len)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, PFM_USER_PAGE_OFFSET);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, len);
	return 0;
}

/* n system calls, counted exactly by SOFT_EV_SYSCALLS. */
static void syscalls(int n)
{
	while (n--)
		getppid();
}

TEST(refused_mappings)
{
	int fd, sys;

	/* Before PFM_CREATE_CONTEXT: nothing to describe. */
	fd = pfm_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(EBADFD, map_err(fd, PROT_READ, page_size()));
	ASSERT_EQ(0, pfm_create(fd, 0));
	/* Read-only, one page. */
	EXPECT_EQ(EPERM, map_err(fd, PROT_READ | PROT_WRITE, page_size()));
	EXPECT_EQ(EINVAL, map_err(fd, PROT_READ, 2 * page_size()));
	EXPECT_EQ(0, map_err(fd, PROT_READ, page_size()));
	close(fd);

	/* A CPU's context: every thread there could use the page. */
	sys = pfm_new_ctx(PFM_FL_SYSTEM_WIDE);
	ASSERT_LE(0, sys);
	EXPECT_EQ(EINVAL, map_err(sys, PROT_READ, page_size()));
	close(sys);
}

/* A mapped page cannot be made writable. */
TEST(page_stays_read_only)
{
	struct pfm_user_page *pg;
	int fd;

	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	pg = pfm_uread_map(fd);
	ASSERT_TRUE(!!pg);
	EXPECT_EQ(-1, mprotect(pg, page_size(), PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	pfm_uread_unmap(pg);
	close(fd);
}

/*
 * The header; then PMD 0 counting system calls: equal to PFM_READ_PMDS
 * after a write (unloaded), while loaded and stopped, after a stop;
 * PFM_UPMD_STALE (-EAGAIN) while the software PMU counts.
 */
TEST(values_equal_ioctl)
{
	struct pfm_user_page *pg;
	struct pfarg_pmu_info info;
	uint64_t v;
	int fd;

	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	pg = pfm_uread_map(fd);
	ASSERT_TRUE(!!pg);
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, pfm_get_pmu_desc(&info));
	EXPECT_EQ(PFM_USER_PAGE_VERSION, pg->version);
	EXPECT_LE(1, pg->width);
	EXPECT_GE(64, pg->width);
	EXPECT_LE(1, pg->num_pmds);
	EXPECT_GE(PFM_USER_PAGE_PMDS, pg->num_pmds);
	EXPECT_EQ(0, pg->counting);
	EXPECT_EQ(0, pg->seq & 1);
	EXPECT_EQ(-ENOENT, pfm_uread(pg, 0, &v));	/* not written yet */
	EXPECT_EQ(-ENOENT, pfm_uread(pg, PFM_USER_PAGE_PMDS, &v));

	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, SOFT_EV_SYSCALLS, 1000, 0));
	ASSERT_EQ(0, pfm_uread(pg, 0, &v));
	EXPECT_EQ(1000, v);
	EXPECT_EQ(PFM_UPMD_USED, pg->pmds[0].flags);
	EXPECT_EQ(-ENOENT, pfm_uread(pg, 1, &v));

	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_uread(pg, 0, &v));
	EXPECT_EQ(1000, v);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	EXPECT_EQ(1, pg->counting);
	EXPECT_EQ(-EAGAIN, pfm_uread(pg, 0, &v));
	EXPECT_EQ(PFM_UPMD_USED | PFM_UPMD_STALE, pg->pmds[0].flags);
	syscalls(100);
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(0, pg->counting);
	ASSERT_EQ(0, pfm_uread(pg, 0, &v));
	EXPECT_EQ(pfm_read_pmd(fd, 0, 0), v);
	TH_LOG("100 getppid(): %llu", (unsigned long long)(v - 1000));
	EXPECT_LE(1100, v);

	/* Unloaded: the saved value. */
	ASSERT_EQ(0, pfm_unload_context(fd));
	ASSERT_EQ(0, pfm_uread(pg, 0, &v));
	EXPECT_EQ(pfm_read_pmd(fd, 0, 0), v);
	pfm_uread_unmap(pg);
	close(fd);
}

/*
 * A second mapping is the same page; a mapping outlives close() and
 * keeps the last values.
 */
TEST(mapping_outlives_close)
{
	struct pfm_user_page *pg, *pg2;
	uint64_t v;
	int fd;

	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 0, SOFT_EV_SYSCALLS, 42, 0));
	pg = pfm_uread_map(fd);
	pg2 = pfm_uread_map(fd);
	ASSERT_TRUE(!!pg);
	ASSERT_TRUE(!!pg2);
	close(fd);
	ASSERT_EQ(0, pfm_uread(pg, 0, &v));
	EXPECT_EQ(42, v);
	EXPECT_EQ(0, memcmp(pg, pg2, sizeof(*pg)));
	pfm_uread_unmap(pg);
	pfm_uread_unmap(pg2);
}

/*
 * Two sets switched every 5 ms: the page follows the active set; its
 * times equal PFM_GETINFO_EVTSETS' durations once stopped, time_enabled
 * the sum of both.
 */
TEST(active_set_and_times)
{
	struct pfm_uread_value uv;
	struct pfm_user_page *pg;
	pfarg_setinfo_t si[2];
	bool seen[2] = { false, false };
	uint64_t t0;
	int fd, s;

	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	for (s = 0; s < 2; s++) {
		ASSERT_EQ(0, pfm_new_set(fd, s, PFM_SETFL_TIME_SWITCH, 5 * MS));
		ASSERT_EQ(0, pfm_add_ctr(fd, s, 0, SOFT_EV_TASK_CLOCK, 0, 0));
	}
	pg = pfm_uread_map(fd);
	ASSERT_TRUE(!!pg);
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	t0 = clock_ns(CLOCK_MONOTONIC);
	while (clock_ns(CLOCK_MONOTONIC) - t0 < 100 * MS) {
		ASSERT_EQ(-EAGAIN, pfm_uread_times(pg, 0, &uv));
		ASSERT_GT(2, uv.set_id);
		seen[uv.set_id] = true;
		EXPECT_LE(uv.time_running, uv.time_enabled);
	}
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_TRUE(seen[0] && seen[1]);
	memset(si, 0, sizeof(si));
	si[1].set_id = 1;
	ASSERT_EQ(0, pfm_getinfo_evtsets(fd, si, 2));
	ASSERT_EQ(0, pfm_uread_times(pg, 0, &uv));
	TH_LOG("set %u active; durations %llu + %llu ns; page %llu of %llu ns",
	       uv.set_id, (unsigned long long)si[0].set_act_duration,
	       (unsigned long long)si[1].set_act_duration,
	       (unsigned long long)uv.time_running,
	       (unsigned long long)uv.time_enabled);
	EXPECT_EQ(si[uv.set_id].set_act_duration, uv.time_running);
	EXPECT_EQ(si[0].set_act_duration + si[1].set_act_duration,
		  uv.time_enabled);
	EXPECT_EQ(pfm_read_pmd(fd, uv.set_id, 0), uv.value);
	pfm_uread_unmap(pg);
	close(fd);
}

TEST_HARNESS_MAIN
