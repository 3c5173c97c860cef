// SPDX-License-Identifier: GPL-2.0
/*
 * Module references: a PMU description in use by a context, and
 * perfmon.ko while a context is open, cannot be unloaded; without a
 * description, context creation fails with -ENODEV.  Needs root and the
 * rig's /modules/ file of the registered description's module (pfm_soft,
 * or pfm_perf in the stage over perf) to load it again.
 */
#include "pfm_test.h"
#include "kselftest_harness.h"

TEST(busy_modules_refuse_unload_then_enodev)
{
	struct pfarg_pmu_info info;
	struct pmu_mod pm;
	int fd;

	if (!pmu_mod_get(&pm))
		SKIP(return, "needs root and the description's module in /modules/");

	fd = pfm_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_create(fd, 0));
	EXPECT_EQ(-EWOULDBLOCK, module_unload(pm.name));
	EXPECT_EQ(-EWOULDBLOCK, module_unload("perfmon"));
	close(fd);

	ASSERT_EQ(0, module_unload(pm.name));
	fd = pfm_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENODEV, pfm_create(fd, 0));
	EXPECT_EQ(-ENODEV, pfm_ioctl(fd, PFM_GET_PMU_INFO, &info));
	ASSERT_EQ(0, module_load(pm.ko, ""));
	/* The same file can still become a context. */
	EXPECT_EQ(0, pfm_create(fd, 0));
	close(fd);
}

TEST_HARNESS_MAIN
