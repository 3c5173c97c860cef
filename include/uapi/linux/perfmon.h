/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * perfmon user ABI: the ioctls of /dev/perfmon and their argument
 * structures.  One open file of /dev/perfmon is one monitoring context.
 *
 * Every structure has a fixed layout, identical for 32-bit and 64-bit
 * callers: fixed-width types, explicit padding, pointers as __u64.
 * Reserved fields must be zero on input (else -EINVAL) and are zero on
 * output, so that they can be given a meaning later.
 */
#ifndef _UAPI_LINUX_PERFMON_H
#define _UAPI_LINUX_PERFMON_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * ABI version.  The major number changes only on an incompatible change;
 * the minor number grows with each addition.  2.8x was perfmon2's last
 * series; 2.90 is the first of this implementation.
 */
#define PFM_VERSION_MAJOR	2U
#define PFM_VERSION_MINOR	90U
#define PFM_VERSION		((PFM_VERSION_MAJOR << 16) | PFM_VERSION_MINOR)
#define PFM_VERSION_MAJOR_OF(v)	(((v) >> 16) & 0xffff)
#define PFM_VERSION_MINOR_OF(v)	((v) & 0xffff)

/* ioctl type byte, unused in Documentation/userspace-api/ioctl/ioctl-number.rst */
#define PFM_IOC_MAGIC		0xF7

/**
 * struct pfarg_version - answer of PFM_GET_VERSION
 * @ver_major: PFM_VERSION_MAJOR of the loaded module
 * @ver_minor: PFM_VERSION_MINOR of the loaded module
 * @ver_reserved: zero
 */
struct pfarg_version {
	__u32 ver_major;
	__u32 ver_minor;
	__u64 ver_reserved[3];
};

#define PFM_GET_VERSION		_IOR(PFM_IOC_MAGIC, 0x00, struct pfarg_version)

#endif /* _UAPI_LINUX_PERFMON_H */
