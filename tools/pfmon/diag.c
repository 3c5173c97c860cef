// SPDX-License-Identifier: GPL-2.0
/*
 * Failures explained: what went wrong and what the user can do about it.
 * The kernel logs the same advice in dmesg; most users never look there.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "pfmon.h"

static bool is_arm64(void)
{
	struct utsname u;

	return !uname(&u) && !strcmp(u.machine, "aarch64");
}

static int read_int(const char *path, int dfl)
{
	FILE *f = fopen(path, "re");
	int v = dfl;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = dfl;
		fclose(f);
	}
	return v;
}

/* Who else may hold the PMU: perf's arm64 driver, the NMI watchdog. */
static void explain_owner(void)
{
	if (is_arm64() && !access("/sys/bus/event_source/devices/armv8_pmuv3", F_OK))
		fprintf(stderr,
			"  the kernel's perf driver (armv8_pmuv3) owns the PMU: boot with\n"
			"  initcall_blacklist=armv8_pmu_driver_init to give it to perfmon\n");
	if (!is_arm64() && read_int("/proc/sys/kernel/nmi_watchdog", 0) > 0)
		fprintf(stderr,
			"  the NMI watchdog holds a counter: echo 0 > /proc/sys/kernel/nmi_watchdog\n");
}

/**
 * pfmon_explain_no_pmu() - perfmon is loaded but drives no PMU
 */
void pfmon_explain_no_pmu(void)
{
	pfmon_err("perfmon has no PMU description registered");
	fprintf(stderr,
		"  load the one for this CPU: modprobe %s\n"
		"  or, with the kernel's perf driver in place: modprobe pfm_perf\n"
		"  or, without a usable PMU (virtual machines): modprobe pfm_soft\n",
		is_arm64() ? "pfm_pmuv3" : "pfm_x86");
	explain_owner();
}

/**
 * pfmon_explain() - report a failed perfmon call with the way out
 * @what: what was being done
 * @err: its errno
 */
void pfmon_explain(const char *what, int err)
{
	pfmon_err("%s: %s", what, strerror(err));
	switch (err) {
	case ENOSYS:
		fprintf(stderr,
			"  /dev/perfmon is missing: load the module (modprobe perfmon)\n");
		break;
	case EACCES:
		if (access("/dev/perfmon", R_OK | W_OK)) {
			fprintf(stderr,
				"  /dev/perfmon is root's and its group's: an administrator gives it\n"
				"  to a group and adds you (Documentation/security.rst, \"The device node\")\n");
			break;
		}
		fprintf(stderr,
			"  monitoring CPUs needs CAP_PERFMON or CAP_SYS_ADMIN, or\n"
			"  /sys/kernel/perfmon/paranoid at 0: run as root, or monitor a command\n"
			"  or your own threads instead; counting in the kernel (events without\n"
			"  :u) needs them or paranoid at 1: add :u to the events\n");
		break;
	case EPERM:
		fprintf(stderr,
			"  pfmon must be allowed to trace it (ptrace): it belongs to another\n"
			"  user or is not dumpable (that needs CAP_SYS_PTRACE: run as root), or\n"
			"  Yama refuses (/proc/sys/kernel/yama/ptrace_scope: 1 allows only\n"
			"  descendants, 2 only CAP_SYS_PTRACE, 3 nobody), or a security module\n");
		break;
	case EBUSY:
		fprintf(stderr,
			"  the PMU is busy: per-thread and CPU-wide sessions exclude each other,\n"
			"  and a CPU takes one CPU-wide session (/sys/kernel/perfmon/*_sessions_count)\n");
		explain_owner();
		break;
	case ENOMEM:
		fprintf(stderr,
			"  sampling buffers count against the locked-memory limit (ulimit -l)\n"
			"  and all of them against /sys/kernel/perfmon/smpl_buffer_mem_max:\n"
			"  raise them or ask for fewer pages (-m)\n");
		break;
	case EMFILE:
	case ENFILE:
		fprintf(stderr,
			"  too many contexts: see /sys/kernel/perfmon/ctx_per_user_max and ulimit -n\n");
		break;
	case ENOENT:
		fprintf(stderr,
			"  the sampling format is not loaded: modprobe pfm_ring_smpl\n");
		break;
	case ESRCH:
		fprintf(stderr, "  no such thread, or it is exiting\n");
		break;
	default:
		break;
	}
}
