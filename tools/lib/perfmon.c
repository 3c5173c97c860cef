// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libperfmon: the perfmon2 v2.8 calls over the ioctls of /dev/perfmon.
 *
 * One open file of /dev/perfmon is one context.  Every call returns 0
 * (pfm_create_context(): the context's file descriptor) on success and
 * -1 with errno set on failure, as perfmon2's system calls did.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <perfmon/perfmon.h>

#define PFM_DEV_PATH	"/dev/perfmon"

/* Open /dev/perfmon; a missing node means no perfmon support: ENOSYS. */
static int pfm_dev_open(int flags)
{
	int fd = open(PFM_DEV_PATH, flags | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		errno = ENOSYS;
	return fd;
}

/* Close fd without losing the errno of the failure being reported. */
static void pfm_close_keep_errno(int fd)
{
	int err = errno;

	close(fd);
	errno = err;
}

/* Issue an ioctl that takes no argument or one structure. */
static int pfm_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) < 0 ? -1 : 0;
}

/* Check an array argument: 0, or -1 with errno EINVAL or EFAULT. */
static int pfm_array_check(const void *arr, int count)
{
	if (count < 1) {
		errno = EINVAL;
		return -1;
	}
	if (!arr) {
		errno = EFAULT;
		return -1;
	}
	return 0;
}

/*
 * Issue an array ioctl on count elements of size bytes, in chunks of at
 * most PFM_MAX_ARRAY.  Stops at the first failing chunk: the kernel has
 * written that chunk's per-entry error flags back; earlier chunks stay
 * applied.
 */
static int pfm_array_ioctl(int fd, unsigned long req, void *arr,
			   size_t size, int count)
{
	struct pfarg_array a;
	char *p = arr;
	int n;

	if (pfm_array_check(arr, count))
		return -1;
	while (count > 0) {
		n = count < PFM_MAX_ARRAY ? count : PFM_MAX_ARRAY;
		memset(&a, 0, sizeof(a));
		a.arr_ptr = (uint64_t)(uintptr_t)p;
		a.arr_count = n;
		if (ioctl(fd, req, &a) < 0)
			return -1;
		p += (size_t)n * size;
		count -= n;
	}
	return 0;
}

/*
 * Open a context: smpl_name is the sampling format (NULL or "" for none),
 * smpl_arg/smpl_size its argument.  ctx is only read.  Returns the fd.
 */
int pfm_create_context(pfarg_ctx_t *ctx, char *smpl_name, void *smpl_arg,
		       size_t smpl_size)
{
	struct pfarg_create c;
	size_t len = smpl_name ? strlen(smpl_name) : 0;
	int fd;

	if (!ctx) {
		errno = EFAULT;
		return -1;
	}
	if (len >= PFM_NAME_LEN || smpl_size != (uint32_t)smpl_size) {
		errno = EINVAL;
		return -1;
	}

	memset(&c, 0, sizeof(c));
	c.ctx = *ctx;
	if (len)
		memcpy(c.create_fmt_name, smpl_name, len);
	c.create_fmt_arg = (uint64_t)(uintptr_t)smpl_arg;
	c.create_fmt_arg_size = (uint32_t)smpl_size;

	fd = pfm_dev_open(O_RDWR);
	if (fd < 0)
		return -1;
	if (ioctl(fd, PFM_CREATE_CONTEXT, &c) < 0) {
		pfm_close_keep_errno(fd);
		return -1;
	}
	return fd;
}

/* Program PMCs; on failure the refused entry carries PFM_REG_RETFL_*. */
int pfm_write_pmcs(int fd, pfarg_pmc_t *pmcs, int count)
{
	return pfm_array_ioctl(fd, PFM_WRITE_PMCS, pmcs, sizeof(*pmcs), count);
}

/* Set PMD values and overflow attributes. */
int pfm_write_pmds(int fd, pfarg_pmd_t *pmds, int count)
{
	return pfm_array_ioctl(fd, PFM_WRITE_PMDS, pmds, sizeof(*pmds), count);
}

/* Read PMDs: reg_value gets the 64-bit count. */
int pfm_read_pmds(int fd, pfarg_pmd_t *pmds, int count)
{
	return pfm_array_ioctl(fd, PFM_READ_PMDS, pmds, sizeof(*pmds), count);
}

/* Read PMD values only: bit n of pmds is PMD first + n. */
int pfm_read_values(int fd, uint16_t set, uint16_t first, uint64_t pmds,
		    uint64_t *values)
{
	struct pfarg_read_values req = {
		.rv_pmds = pmds,
		.rv_values = (uintptr_t)values,
		.rv_first = first,
		.rv_set = set,
	};

	return pfm_ioctl(fd, PFM_READ_VALUES, &req);
}

/* Attach the context to a thread (load_pid) or, system-wide, a CPU. */
int pfm_load_context(int fd, pfarg_load_t *load)
{
	return pfm_ioctl(fd, PFM_LOAD_CONTEXT, load);
}

/* Start monitoring; a NULL start means set 0. */
int pfm_start(int fd, pfarg_start_t *start)
{
	pfarg_start_t zero;

	if (!start) {
		memset(&zero, 0, sizeof(zero));
		start = &zero;
	}
	return pfm_ioctl(fd, PFM_START, start);
}

/* Stop monitoring. */
int pfm_stop(int fd)
{
	return pfm_ioctl(fd, PFM_STOP, NULL);
}

/* Resume after an overflow notification. */
int pfm_restart(int fd)
{
	return pfm_ioctl(fd, PFM_RESTART, NULL);
}

/* Create (or modify) event sets. */
int pfm_create_evtsets(int fd, pfarg_setdesc_t *setd, int count)
{
	return pfm_array_ioctl(fd, PFM_CREATE_EVTSETS, setd, sizeof(*setd),
			       count);
}

/* Delete event sets. */
int pfm_delete_evtsets(int fd, pfarg_setdesc_t *setd, int count)
{
	return pfm_array_ioctl(fd, PFM_DELETE_EVTSETS, setd, sizeof(*setd),
			       count);
}

/* Read the state of event sets, named by set_id. */
int pfm_getinfo_evtsets(int fd, pfarg_setinfo_t *info, int count)
{
	return pfm_array_ioctl(fd, PFM_GETINFO_EVTSETS, info, sizeof(*info),
			       count);
}

/* Detach the context from its thread or CPU. */
int pfm_unload_context(int fd)
{
	return pfm_ioctl(fd, PFM_UNLOAD_CONTEXT, NULL);
}

/* Change PMU driver settings of a context; all or none are applied. */
int pfm_set_drv_config(int fd, struct pfarg_drv_cfg *cfg, int count)
{
	return pfm_array_ioctl(fd, PFM_SET_DRV_CONFIG, cfg, sizeof(*cfg),
			       count);
}

/* Read PMU driver settings of a context, named by cfg_num. */
int pfm_get_drv_config(int fd, struct pfarg_drv_cfg *cfg, int count)
{
	return pfm_array_ioctl(fd, PFM_GET_DRV_CONFIG, cfg, sizeof(*cfg),
			       count);
}

/* ABI version of the loaded module; major or minor may be NULL. */
int pfm_get_abi_version(unsigned int *major, unsigned int *minor)
{
	struct pfarg_version v;
	int fd, ret;

	fd = pfm_dev_open(O_RDONLY);
	if (fd < 0)
		return -1;
	memset(&v, 0, sizeof(v));
	ret = pfm_ioctl(fd, PFM_GET_VERSION, &v);
	pfm_close_keep_errno(fd);
	if (ret)
		return -1;
	if (major)
		*major = v.ver_major;
	if (minor)
		*minor = v.ver_minor;
	return 0;
}

/* Description of the registered PMU. */
int pfm_get_pmu_desc(struct pfarg_pmu_info *info)
{
	int fd, ret;

	if (!info) {
		errno = EFAULT;
		return -1;
	}
	fd = pfm_dev_open(O_RDONLY);
	if (fd < 0)
		return -1;
	ret = pfm_ioctl(fd, PFM_GET_PMU_INFO, info);
	pfm_close_keep_errno(fd);
	return ret;
}

/* Description of registers named by info_kind and info_num. */
int pfm_get_reg_info(struct pfarg_reg_info *info, int count)
{
	int fd, ret;

	/* Before opening the device: a bad argument needs no device. */
	if (pfm_array_check(info, count))
		return -1;
	fd = pfm_dev_open(O_RDONLY);
	if (fd < 0)
		return -1;
	ret = pfm_array_ioctl(fd, PFM_GET_REG_INFO, info, sizeof(*info),
			      count);
	pfm_close_keep_errno(fd);
	return ret;
}

/*
 * The names of the two calls above before 0.3, which libpfm4 defines as
 * well.  In the static library they are weak: a program linking both
 * gets libpfm4's.  In the shared one they exist only for programs linked
 * against 0.1 or 0.2, as the non-default version PERFMON_0.1: the
 * dynamic linker binds no unversioned reference to them, so libpfm4's
 * references to its own calls never reach these.
 */
#ifdef __PIC__
int pfm_compat_get_version(unsigned int *major, unsigned int *minor)
	__attribute__((alias("pfm_get_abi_version")));
int pfm_compat_get_pmu_info(struct pfarg_pmu_info *info)
	__attribute__((alias("pfm_get_pmu_desc")));
__asm__(".symver pfm_compat_get_version, pfm_get_version@PERFMON_0.1");
__asm__(".symver pfm_compat_get_pmu_info, pfm_get_pmu_info@PERFMON_0.1");
#else
int pfm_get_version(unsigned int *major, unsigned int *minor)
	__attribute__((weak, alias("pfm_get_abi_version")));
int pfm_get_pmu_info(struct pfarg_pmu_info *info)
	__attribute__((weak, alias("pfm_get_pmu_desc")));
#endif
