// SPDX-License-Identifier: GPL-2.0
/*
 * Module references: a PMU description in use by a context, and
 * perfmon.ko while a context is open, cannot be unloaded; without a
 * description, context creation fails with -ENODEV.  Needs root and the
 * rig's /modules/pfm_soft.ko to reload the description.
 */
#include "pfm_test.h"
#include "kselftest_harness.h"

#define SOFT_KO "/modules/pfm_soft.ko"

TEST(busy_modules_refuse_unload_then_enodev)
{
	struct pfarg_pmu_info info;
	int fd;

	if (getuid() != 0 || access(SOFT_KO, R_OK))
		SKIP(return, "needs root and " SOFT_KO);

	fd = pfm_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_create(fd, 0));
	EXPECT_EQ(-EWOULDBLOCK, module_unload("pfm_soft"));
	EXPECT_EQ(-EWOULDBLOCK, module_unload("perfmon"));
	close(fd);

	ASSERT_EQ(0, module_unload("pfm_soft"));
	fd = pfm_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENODEV, pfm_create(fd, 0));
	EXPECT_EQ(-ENODEV, pfm_ioctl(fd, PFM_GET_PMU_INFO, &info));
	ASSERT_EQ(0, module_load(SOFT_KO, ""));
	/* The same file can still become a context. */
	EXPECT_EQ(0, pfm_create(fd, 0));
	close(fd);
}

TEST_HARNESS_MAIN
