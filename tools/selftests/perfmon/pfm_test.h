/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the perfmon selftests: raw ioctl wrappers that
 * return -errno, so that a test can assert the exact errno.
 */
#ifndef _PFM_TEST_H
#define _PFM_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/perfmon.h>

static inline int pfm_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int pfm_open(void)
{
	return open("/dev/perfmon", O_RDWR | O_CLOEXEC);
}

/* PFM_CREATE_CONTEXT with @flags and no sampling format. */
static inline int pfm_create(int fd, uint32_t flags)
{
	struct pfarg_create req;

	memset(&req, 0, sizeof(req));
	req.ctx.ctx_flags = flags;
	return pfm_ioctl(fd, PFM_CREATE_CONTEXT, &req);
}

/* An array call: PFM_WRITE_PMCS, PFM_WRITE_PMDS, PFM_READ_PMDS... */
static inline int pfm_array(int fd, unsigned long cmd, void *arr,
			    uint32_t count)
{
	struct pfarg_array a = {
		.arr_ptr = (uintptr_t)arr,
		.arr_count = count,
	};

	return pfm_ioctl(fd, cmd, &a);
}

#endif /* _PFM_TEST_H */
