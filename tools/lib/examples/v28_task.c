// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * v28_task: a perfmon2 v2.8 program, written as its users wrote them
 * (libpfm-3.x's examples, pfmon 3.x): the library's header alone, 64-bit
 * fields printed with PRIu64, bit vectors walked through uint64_t *,
 * PFM_REG_HAS_ERROR() on each entry, one pfarg_pmd_t array written, read
 * and written again.  It needs the software PMU ("soft").
 *
 *   gcc -Wall -Werror v28_task.c $(pkg-config --cflags --libs libperfmon)
 *
 * It counts its own task clock, then a forked child's system calls (the
 * child stops itself under PTRACE_TRACEME, as libpfm-3.x's task.c did),
 * then samples its own system calls with overflow notifications, then
 * a child's into the "default" format's buffer, read by v2.8's layout
 * (each part prints one line), and asks for v2.2's PFM_FL_MAP_SETS,
 * which is refused.  It exits 0 when all went as they should, 1 otherwise, 4
 * (skipped) on another PMU.  v28_layout.c checks the structures' layout.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <perfmon/perfmon.h>
#include <perfmon/perfmon_dfl_smpl.h>

#define EVT_TASK_CLOCK	0x1	/* the software PMU's events */
#define EVT_SYSCALLS	0x4
#define CHILD_CALLS	10000
#define NOTIFY_PERIOD	1000
#define NOTIFY_CALLS	5	/* periods of system calls, one message each */

static int failed;

/* A v2.8 program's helper: how many PMDs a bit vector names. */
static int bv_weight(const uint64_t *bv, int words)
{
	int i, n = 0;

	for (i = 0; i < words; i++)
		n += __builtin_popcountll(bv[i]);
	return n;
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "v28_task: %s: %s\n", what, strerror(errno));
		failed = 1;
	}
}

/* A context counting @evt in PMD0; PMD0 starts at @value. */
static int new_ctx(uint64_t evt, uint64_t value, uint32_t flags,
		   pfarg_pmd_t *pd)
{
	pfarg_ctx_t ctx;
	pfarg_pmc_t pc;
	int fd;

	memset(&ctx, 0, sizeof(ctx));
	memset(&pc, 0, sizeof(pc));
	memset(pd, 0, sizeof(*pd));
	fd = pfm_create_context(&ctx, NULL, NULL, 0);
	if (fd < 0)
		return -1;
	pc.reg_value = evt;
	pd->reg_flags = flags;
	pd->reg_value = value;
	pd->reg_short_reset = value;
	pd->reg_long_reset = value;
	if (pfm_write_pmcs(fd, &pc, 1) || pfm_write_pmds(fd, pd, 1) ||
	    PFM_REG_HAS_ERROR(pd->reg_flags)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void raw_calls(int n)
{
	while (n--)
		syscall(SYS_getppid);
}

/* ns of CPU time this thread used */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void self_count(void)
{
	pfarg_load_t load = { .load_pid = getpid() };
	pfarg_pmd_t pd;
	uint64_t t0, ns;
	int fd = new_ctx(EVT_TASK_CLOCK, 0, 0, &pd);

	check(fd >= 0, "self: context");
	check(!pfm_load_context(fd, &load) && !pfm_start(fd, NULL),
	      "self: load and start");
	t0 = cpu_ns();
	while ((ns = cpu_ns() - t0) < 50000000)
		continue;
	check(!pfm_stop(fd), "self: stop");
	check(!pfm_read_pmds(fd, &pd, 1) && !PFM_REG_HAS_ERROR(pd.reg_flags),
	      "self: read");
	printf("self: task clock %" PRIu64 " ns for %" PRIu64 " ns of CPU time\n",
	       pd.reg_value, ns);
	check(pd.reg_value >= ns / 2, "self: counted too little");
	close(fd);
}

/*
 * Fork a child stopped under PTRACE_TRACEME that makes @calls system
 * calls once let go, as libpfm-3.x's task.c did; its pid, or -1.
 */
static pid_t stopped_child(int calls)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		raw_calls(calls);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st))
		return -1;
	return pid;
}

static void forked_child(void)
{
	pfarg_load_t load;
	pfarg_pmd_t pd;
	pid_t pid;
	int fd, st;

	pid = stopped_child(CHILD_CALLS);
	check(pid > 0, "child: stopped");
	fd = new_ctx(EVT_SYSCALLS, 0, 0, &pd);
	memset(&load, 0, sizeof(load));
	load.load_pid = pid;
	check(fd >= 0 && !pfm_load_context(fd, &load) && !pfm_start(fd, NULL),
	      "child: load and start");
	check(!ptrace(PTRACE_DETACH, pid, NULL, NULL), "child: detach");
	check(waitpid(pid, &st, 0) == pid && WIFEXITED(st), "child: exit");
	check(!pfm_read_pmds(fd, &pd, 1), "child: read");
	/* its calls, and the exit_group() */
	printf("child %d: %" PRIu64 " system calls counted, %d made\n",
	       (int)pid, pd.reg_value, CHILD_CALLS + 1);
	check(pd.reg_value >= CHILD_CALLS && pd.reg_value <= CHILD_CALLS + 8,
	      "child: count");
	close(fd);
}

static void notification(void)
{
	pfarg_load_t load = { .load_pid = getpid() };
	pfarg_msg_t msg;
	pfarg_ovfl_msg_t *ov = &msg.pfm_ovfl_msg;
	pfarg_pmd_t pd;
	int fd, n = 0, i;

	fd = new_ctx(EVT_SYSCALLS, -(uint64_t)NOTIFY_PERIOD,
		     PFM_REGFL_OVFL_NOTIFY, &pd);
	check(fd >= 0 && !pfm_load_context(fd, &load) && !pfm_start(fd, NULL) &&
	      !fcntl(fd, F_SETFL, O_NONBLOCK), "notify: load and start");
	for (i = 0; i < NOTIFY_CALLS; i++) {
		raw_calls(NOTIFY_PERIOD);
		if (read(fd, &msg, sizeof(msg)) != sizeof(msg) ||
		    msg.type != PFM_MSG_OVFL)
			continue;
		n += bv_weight(ov->msg_ovfl_pmds, PFM_PMD_BV) == 1 &&
		     (ov->msg_ovfl_pmds[0] & 1);
		/* the array written is read into, then written again */
		check(!pfm_read_pmds(fd, &pd, 1) &&
		      (pd.reg_flags & PFM_REGFL_OVFL_NOTIFY) &&
		      !pfm_write_pmds(fd, &pd, 1), "notify: reuse the array");
		check(!pfm_restart(fd), "notify: restart");
	}
	printf("notify: %d overflow messages naming PMD0 for %d periods (%zu bits a vector word)\n",
	       n, NOTIFY_CALLS, (size_t)PFM_BPL);
	check(n == NOTIFY_CALLS, "notify: messages");
	close(fd);
}

/*
 * The "default" format on a child, read by v2.8's layout: PMD0 counts
 * its system calls and samples every SMPL_PERIOD with PMD1 (the same
 * event, never reset) in each entry: entry k holds (k + 1) periods.
 */
#define SMPL_PERIOD	100
#define SMPL_COUNT	10

static int dfl_entry_ok(const pfm_dfl_smpl_entry_t *e, pid_t pid, int k)
{
	const uint64_t *val = (const uint64_t *)(e + 1);

	return e->pid == (uint32_t)pid && e->tgid == (uint32_t)pid &&
	       e->ovfl_pmd == 0 && e->reserved == 0 && e->set == 0 &&
	       e->last_reset_val == -(uint64_t)SMPL_PERIOD && e->ip &&
	       val[0] == (uint64_t)(k + 1) * SMPL_PERIOD;
}

static void default_format_child(void)
{
	pfm_dfl_smpl_arg_t arg = { .buf_size = 4096 };
	const pfm_dfl_smpl_entry_t *e;
	pfm_dfl_smpl_hdr_t *hdr;
	pfarg_pmc_t pc[2];
	pfarg_pmd_t pd[2];
	pfarg_load_t load;
	pfarg_ctx_t ctx;
	int fd, st, k, ok = 0;
	pid_t pid;

	memset(&ctx, 0, sizeof(ctx));
	memset(pc, 0, sizeof(pc));
	memset(pd, 0, sizeof(pd));
	fd = pfm_create_context(&ctx, "default", &arg, sizeof(arg));
	check(fd >= 0, "default: context");
	hdr = mmap(NULL, arg.buf_size, PROT_READ, MAP_SHARED, fd, 0);
	check(hdr != MAP_FAILED, "default: mmap");
	pc[0].reg_value = EVT_SYSCALLS;
	pc[1].reg_num = 1;
	pc[1].reg_value = EVT_SYSCALLS;
	pd[0].reg_flags = PFM_REGFL_OVFL_NOTIFY;
	pd[0].reg_value = -(uint64_t)SMPL_PERIOD;
	pd[0].reg_short_reset = -(uint64_t)SMPL_PERIOD;
	pd[0].reg_long_reset = -(uint64_t)SMPL_PERIOD;
	pd[0].reg_smpl_pmds[0] = 1 << 1;
	pd[1].reg_num = 1;
	check(!pfm_write_pmcs(fd, pc, 2) && !pfm_write_pmds(fd, pd, 2),
	      "default: registers");
	pid = stopped_child(SMPL_COUNT * SMPL_PERIOD + SMPL_PERIOD / 2);
	check(pid > 0, "default: child stopped");
	memset(&load, 0, sizeof(load));
	load.load_pid = pid;
	check(!pfm_load_context(fd, &load) && !pfm_start(fd, NULL),
	      "default: load and start");
	check(!ptrace(PTRACE_DETACH, pid, NULL, NULL), "default: detach");
	check(waitpid(pid, &st, 0) == pid && WIFEXITED(st), "default: exit");
	if (hdr == MAP_FAILED)
		return;
	e = (const pfm_dfl_smpl_entry_t *)(hdr + 1);
	for (k = 0; k < (int)hdr->hdr_count; k++) {
		ok += dfl_entry_ok(e, pid, k);
		e = (const pfm_dfl_smpl_entry_t *)((const uint64_t *)(e + 1) + 1);
	}
	printf("default: version %u.%u, %" PRIu64 " entries of child %d",
	       hdr->hdr_version >> 16, hdr->hdr_version & 0xffff,
	       hdr->hdr_count, (int)pid);
	printf(", %d as v2.8 lays them out; %" PRIu64 " bytes used\n", ok,
	       hdr->hdr_cur_offs);
	check(hdr->hdr_version == PFM_DFL_SMPL_VERSION &&
	      hdr->hdr_count == SMPL_COUNT && ok == SMPL_COUNT,
	      "default: entries");
	munmap(hdr, arg.buf_size);
	close(fd);
}

/* v2.2's remapped sets are not done here: refused, not ignored. */
static void map_sets_refused(void)
{
	pfarg_ctx_t ctx;
	int fd;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = PFM_FL_MAP_SETS;
	fd = pfm_create_context(&ctx, NULL, NULL, 0);
	check(fd < 0 && errno == EINVAL, "PFM_FL_MAP_SETS: not EINVAL");
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	struct pfarg_pmu_info info;

	if (pfm_get_pmu_desc(&info) || strcmp(info.pmu_name, "soft")) {
		printf("v28_task: needs the software PMU; skipped\n");
		return 4;
	}
	self_count();
	forked_child();
	notification();
	default_format_child();
	map_sets_refused();
	return failed;
}
