/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the perfmon selftests: raw ioctl wrappers that
 * return -errno, so that a test can assert the exact errno, and helpers
 * over the user library (tools/lib) for the counting tests.
 */
#ifndef _PFM_TEST_H
#define _PFM_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <linux/perfmon.h>
#include <perfmon/perfmon.h>

/* Events of the software PMU (pfm_soft), PMC bits 7:0. */
#define SOFT_EV_TASK_CLOCK	1
#define SOFT_EV_CPU_CLOCK	2
#define SOFT_EV_CTX_SWITCHES	3
#define SOFT_EV_SYSCALLS	4	/* exact: see smpl_test.c */

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

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Spin until this thread has used @ns more CPU time. */
static inline void burn_cpu(uint64_t ns)
{
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
}

/*
 * Where a thread was held off: gaps between two successive reads of a
 * clock.  Under QEMU's -icount one host thread runs the vCPUs in turn,
 * each for its share of the time to the next timer, and guest time runs
 * on during the other vCPU's turn.  A vCPU with an interrupt pending
 * waits for its own turn: up to 2.6 ms when the other vCPU is busy
 * (measured on the debug kernel), with its cycle counter, which counts
 * guest time, counting on.  So an overflow interrupt's skid is the
 * CPU's own (a few hundred cycles) plus the gap the thread saw around
 * it.  On hardware such a gap is an interrupt handler or preemption.
 */
#define HELD_GAPS	256

struct held {
	uint64_t min;			/* gaps shorter than this are not kept */
	uint64_t max, sum;		/* the longest gap; all kept, summed */
	uint64_t first, last;		/* burn_cpu_held(): its first, last read */
	unsigned int n, lost;		/* gaps kept; gaps past HELD_GAPS */
	uint64_t from[HELD_GAPS], to[HELD_GAPS];
};

static inline void held_note(struct held *h, uint64_t from, uint64_t to)
{
	uint64_t d = to - from;

	if (d > h->max)
		h->max = d;
	if (d < h->min)
		return;
	h->sum += d;
	if (h->n == HELD_GAPS) {
		h->lost++;
		return;
	}
	h->from[h->n] = from;
	h->to[h->n++] = to;
}

/*
 * The longest gap of @h that holds @when (a CLOCK_MONOTONIC time, the
 * clock @h was filled from); 0 when none does.
 */
static inline uint64_t held_at(const struct held *h, uint64_t when)
{
	uint64_t best = 0;
	unsigned int i;

	for (i = 0; i < h->n; i++)
		if (h->from[i] < when && when <= h->to[i] &&
		    h->to[i] - h->from[i] > best)
			best = h->to[i] - h->from[i];
	return best;
}

/*
 * burn_cpu(), noting in @h the gaps between its reads of the clock, the
 * last one included: a hold-off that ends past @ns is a gap like any
 * other (it was left out once, and a 3.3 ms one there made a burn of
 * 8 ms look like 4.7 ms, with its gap in no bound).
 */
static inline void burn_cpu_held(uint64_t ns, struct held *h)
{
	uint64_t prev = clock_ns(CLOCK_THREAD_CPUTIME_ID), end = prev + ns;
	uint64_t now;

	h->first = prev;
	do {
		now = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		held_note(h, prev, now);
		prev = now;
	} while (now < end);
	h->last = now;
}

/*
 * Timing tolerances are set for Debian's kernels under TCG.  The debug
 * kernel (KASAN, lockdep, kmemleak: make check-debug) runs kernel paths
 * several times slower, so the time a start, a stop or an overflow takes
 * is a bigger share of a short measurement: the rig passes
 * PFM_TIMING_SLACK=N there and time tolerances are N times wider.  Exact
 * counts (system calls, samples) are never widened.
 */
static inline double timing_slack(void)
{
	const char *s = getenv("PFM_TIMING_SLACK");
	double v = s ? atof(s) : 1.0;

	return v >= 1.0 ? v : 1.0;
}

/*
 * Does guest time count instructions (QEMU's -icount, which the rig says
 * with PFM_ICOUNT)?  Then nothing on the host moves what a test times:
 * a late timer there is the guest's own doing.
 */
static inline bool icount_guest(void)
{
	return !!getenv("PFM_ICOUNT");
}

/* Is @v within @pct percent (times the timing slack) of @ref? */
static inline bool within_pct(uint64_t v, uint64_t ref, double pct)
{
	double d = (double)v - (double)ref;

	return (d < 0 ? -d : d) <= (double)ref * pct * timing_slack() / 100.0;
}

/* Bind thread @tid (0: the caller) to CPU @cpu; 0 or -errno. */
static inline int pin_tid_to_cpu(pid_t tid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(tid, sizeof(set), &set) ? -errno : 0;
}

static inline int pin_to_cpu(int cpu)
{
	return pin_tid_to_cpu(0, cpu);
}

static inline int online_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* A created context with @flags (libperfmon): its fd, or -1 and errno. */
static inline int pfm_new_ctx(uint32_t flags)
{
	pfarg_ctx_t ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = flags;
	return pfm_create_context(&ctx, NULL, NULL, 0);
}

/*
 * Counter @idx of set @set (libperfmon): PMC @idx = @evtsel, PMD @idx =
 * @value with short reset @reset.  0 or -errno.
 */
static inline int pfm_add_ctr(int fd, uint16_t set, uint16_t idx,
			      uint64_t evtsel, uint64_t value, uint64_t reset)
{
	pfarg_pmc_t pc;
	pfarg_pmd_t pd;

	memset(&pc, 0, sizeof(pc));
	memset(&pd, 0, sizeof(pd));
	pc.reg_num = idx;
	pc.reg_set = set;
	pc.reg_value = evtsel;
	pd.reg_num = idx;
	pd.reg_set = set;
	pd.reg_value = value;
	pd.reg_short_reset = reset;
	return pfm_write_pmcs(fd, &pc, 1) || pfm_write_pmds(fd, &pd, 1) ?
	       -errno : 0;
}

/*
 * A context (libperfmon) counting @event with PMC0/PMD0 in set 0, PMD0
 * starting at @start.  Returns the fd or -errno.
 */
static inline int pfm_counting_ctx(uint32_t flags, uint64_t event,
				   uint64_t start)
{
	int fd = pfm_new_ctx(flags), err;

	if (fd < 0)
		return -errno;
	err = pfm_add_ctr(fd, 0, 0, event, start, 0);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Prepare the write of PMD @num of set @set: @value, PFM_REGFL_* @flags,
 * @reset as both its short and long reset value.  The caller may set
 * more fields (reg_smpl_pmds, triggers...) before pfm_write_pmds().
 */
static inline void pfm_pmd_prep(pfarg_pmd_t *pd, uint16_t set, uint16_t num,
				uint32_t flags, uint64_t value, uint64_t reset)
{
	memset(pd, 0, sizeof(*pd));
	pd->reg_num = num;
	pd->reg_set = set;
	pd->reg_flags = flags;
	pd->reg_value = value;
	pd->reg_short_reset = reset;
	pd->reg_long_reset = reset;
}

/* PMC @num of set @set = @evtsel (libperfmon); 0 or -errno. */
static inline int pfm_write_pmc(int fd, uint16_t set, uint16_t num,
				uint64_t evtsel)
{
	pfarg_pmc_t pc;

	memset(&pc, 0, sizeof(pc));
	pc.reg_num = num;
	pc.reg_set = set;
	pc.reg_value = evtsel;
	return pfm_write_pmcs(fd, &pc, 1) ? -errno : 0;
}

/* PMD @num of set @set, all of it (reg_last_reset_val...); 0 or -errno. */
static inline int pfm_read_pd(int fd, uint16_t set, uint16_t num,
			      pfarg_pmd_t *pd)
{
	memset(pd, 0, sizeof(*pd));
	pd->reg_num = num;
	pd->reg_set = set;
	return pfm_read_pmds(fd, pd, 1) ? -errno : 0;
}

/* A libperfmon call's -1/errno as -errno (errno read at once). */
static inline int neg_errno(int ret)
{
	return ret < 0 ? -errno : ret;
}

/*
 * A context (libperfmon) with @flags and sampling format @fmt (NULL for
 * none) given @arg of @size bytes: its fd, or -errno.
 */
static inline int pfm_fmt_ctx(uint32_t flags, const char *fmt, void *arg,
			      size_t size)
{
	pfarg_ctx_t ctx;
	int fd;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ctx_flags = flags;
	fd = pfm_create_context(&ctx, (char *)fmt, arg, size);
	return fd < 0 ? -errno : fd;
}

static inline size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* @n rounded up to whole pages. */
static inline size_t page_align(size_t n)
{
	size_t p = page_size();

	return (n + p - 1) / p * p;
}

/*
 * mmap() of @len bytes of a context's sampling buffer (offset 0, shared):
 * the address, or MAP_FAILED and errno.
 */
static inline void *pfm_map_buf(int fd, size_t len, int prot)
{
	return mmap(NULL, len, prot, MAP_SHARED, fd, 0);
}

/*
 * Bounds of section smpl_text, provided by the linker when a test puts
 * code there (raw system calls whose sampled IPs it checks).
 */
extern const char __start_smpl_text[], __stop_smpl_text[];
/* ... and of smpl_test's callers of them, whose call chains it checks. */
extern const char __start_chain_mid_text[], __stop_chain_mid_text[];
extern const char __start_chain_outer_text[], __stop_chain_outer_text[];

/* pfm_getinfo_evtsets() on set @id; 0 or -errno. */
static inline int pfm_set_info(int fd, uint16_t id, pfarg_setinfo_t *si)
{
	memset(si, 0, sizeof(*si));
	si->set_id = id;
	return pfm_getinfo_evtsets(fd, si, 1) ? -errno : 0;
}

/* Is the registered PMU description @model? */
static inline bool pmu_is(const char *model)
{
	struct pfarg_pmu_info info;

	memset(&info, 0, sizeof(info));
	return !pfm_get_pmu_desc(&info) && !strcmp(info.pmu_name, model);
}

/* Take CPU @cpu offline (@on 0) or online; 0 or -errno. */
static inline int cpu_set_online(int cpu, int on)
{
	char path[64];
	int fd, ret;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online",
		 cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, on ? "1" : "0", 1) == 1 ? 0 : -errno;
	close(fd);
	return ret;
}

/* pfm_load_context() on a thread id or CPU, set 0; 0 or -errno. */
static inline int pfm_load(int fd, uint32_t target)
{
	pfarg_load_t load;

	memset(&load, 0, sizeof(load));
	load.load_pid = target;
	return pfm_load_context(fd, &load) ? -errno : 0;
}

/*
 * Stop tracing @tid, which the caller seized: detaching needs it in a
 * ptrace stop, so interrupt it and wait for the stop first.
 */
static inline void pfm_untrace(pid_t tid)
{
	int st;

	if (!ptrace(PTRACE_INTERRUPT, tid, 0, 0) &&
	    waitpid(tid, &st, __WALL) == tid && WIFSTOPPED(st))
		ptrace(PTRACE_DETACH, tid, 0, 0);
}

/*
 * pfm_load() on a thread of another process: the caller must trace it
 * at the load (Documentation/security.rst), so seize it, load, and let
 * it go.  0, -errno of PTRACE_SEIZE (ptrace refused), or of the load.
 */
static inline int pfm_load_traced(int fd, pid_t tid)
{
	int ret;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0))
		return -errno;
	ret = pfm_load(fd, tid);
	pfm_untrace(tid);
	return ret;
}

/* Create set @id with @flags (a switch timeout of @timeout ns); 0 or -errno. */
static inline int pfm_new_set(int fd, uint16_t id, uint32_t flags,
			      uint64_t timeout)
{
	pfarg_setdesc_t sd;

	memset(&sd, 0, sizeof(sd));
	sd.set_id = id;
	sd.set_flags = flags;
	sd.set_timeout = timeout;
	return pfm_create_evtsets(fd, &sd, 1) ? -errno : 0;
}

/* PMD @num of set @set; the value, or (uint64_t)-errno as a marker. */
static inline uint64_t pfm_read_pmd(int fd, uint16_t set, uint16_t num)
{
	pfarg_pmd_t pd;

	memset(&pd, 0, sizeof(pd));
	pd.reg_num = num;
	pd.reg_set = set;
	if (pfm_read_pmds(fd, &pd, 1))
		return (uint64_t)-errno;
	return pd.reg_value;
}

/* Load the kernel module in file @path with @params; 0 or -errno. */
static inline int module_load(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* Unload module @name without waiting; 0 or -errno. */
static inline int module_unload(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

/* A thread spinning in user space: a target to attach to. */
struct spinner {
	pthread_t thread;
	atomic_int stop;
	atomic_int tid;
};

static inline void *spinner_fn(void *arg)
{
	struct spinner *s = arg;

	atomic_store(&s->tid, gettid());
	while (!atomic_load(&s->stop))
		;
	return NULL;
}

/* Start the spinner and wait until it runs: its thread id, or -errno. */
static inline int spinner_start(struct spinner *s)
{
	int err;

	atomic_store(&s->stop, 0);
	atomic_store(&s->tid, 0);
	err = pthread_create(&s->thread, NULL, spinner_fn, s);
	if (err)
		return -err;
	while (!atomic_load(&s->tid))
		usleep(1000);
	return atomic_load(&s->tid);
}

/* Let it end and join it. */
static inline void spinner_stop(struct spinner *s)
{
	atomic_store(&s->stop, 1);
	pthread_join(s->thread, NULL);
}

/*
 * Run @fn in a child process (which may drop privileges) and return its
 * exit status (what @fn returned, 0-255), or -1 when it did not exit.
 */
static inline int run_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn());
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Become uid/gid @id, with no capability and /dev/perfmon's group as the
 * only other group: the user of a site that gave the node to a group
 * (tools/udev/60-perfmon.rules; the guests' /init does what it does).
 * 0 or -errno.
 */
static inline int become_user(uid_t id)
{
	struct stat st;
	gid_t node_gid;

	if (stat("/dev/perfmon", &st))
		return -errno;
	node_gid = st.st_gid;
	/* Once a user, its groups stay (only root may set them). */
	return (!geteuid() && setgroups(1, &node_gid)) ||
	       setresgid(id, id, id) || setresuid(id, id, id) ? -errno : 0;
}

/* Become uid/gid 65534 (nobody) in /dev/perfmon's group; 0 or -errno. */
static inline int become_nobody(void)
{
	return become_user(65534);
}

/* Occurrences of @s in the kernel log. */
static inline int klog_count(const char *s)
{
	static char buf[1 << 20];
	int n = 0, len = klogctl(3, buf, sizeof(buf) - 1);
	char *p = buf;

	if (len < 0)
		return -1;
	buf[len] = 0;
	while ((p = strstr(p, s))) {
		n++;
		p += strlen(s);
	}
	return n;
}

/*
 * Overflow storms (Documentation/security.rst, "Overflow interrupt
 * storms"): on every CPU a uid-65534 process counts with PMC/PMD @pmd =
 * @pmc reloaded every @period events (a reset value of -@period), and
 * with PMC/PMD @ref_pmd = @ref_pmc never reset, for @ms of wall time,
 * spinning at user level (making system calls when @sys); meanwhile
 * the caller sleeps 1 ms at a time and records how late it wakes up.
 * Tests bound the median lateness, not the worst: a CPU lost in
 * interrupts makes most wake-ups late, while a host that deschedules
 * the guest's virtual CPU makes one late by hundreds of ms (267 ms in
 * a CI run, where the x86_64 guest's medians are 0.5 to 3 ms), which
 * the worst figure, printed only, shows.
 */
struct storm_cfg {
	uint16_t pmd, ref_pmd;
	uint64_t pmc, ref_pmc;
	bool sys;
	unsigned int ms;
};

struct storm_seen {
	uint64_t grown_min;	/* least PMD1 growth over a CPU's run */
	unsigned int throttles;	/* PFM_MSG_THROTTLE read, all CPUs */
	unsigned int throttles_min;	/* the fewest a CPU's process read */
	unsigned int failed;	/* CPUs whose process failed */
	uint64_t late_max_ns;	/* the sleeper's worst lateness */
	uint64_t late_avg_ns;
	uint64_t late_med_ns;	/* its median lateness */
	unsigned int wakeups;
};

/* Wake-ups a storm's sleeper records: 1 ms sleeps, 300 ms at most. */
#define STORM_WAKEUPS_MAX	4096

/* One CPU's storm; writes its reference PMD's growth and throttles. */
static inline int storm_cpu(int cpu, const struct storm_cfg *c,
			    uint64_t period, int out)
{
	uint64_t v[2] = { 0, 0 }, end;
	union pfarg_msg msg;
	pfarg_pmd_t pd[2];
	int fd;

	if (pin_to_cpu(cpu) || become_nobody())
		return 1;
	fd = pfm_new_ctx(0);
	if (fd < 0 || pfm_write_pmc(fd, 0, c->pmd, c->pmc) ||
	    pfm_write_pmc(fd, 0, c->ref_pmd, c->ref_pmc))
		return 2;
	pfm_pmd_prep(&pd[0], 0, c->pmd, 0, -period, -period);
	pfm_pmd_prep(&pd[1], 0, c->ref_pmd, 0, 0, 0);
	if (pfm_write_pmds(fd, pd, 2) || pfm_load(fd, gettid()) ||
	    pfm_start(fd, NULL) || fcntl(fd, F_SETFL, O_NONBLOCK))
		return 3;
	end = clock_ns(CLOCK_MONOTONIC) + c->ms * 1000000ull;
	v[0] = pfm_read_pmd(fd, 0, c->ref_pmd);
	while (clock_ns(CLOCK_MONOTONIC) < end)
		if (c->sys)
			syscall(SYS_getppid);
	v[1] = pfm_read_pmd(fd, 0, c->ref_pmd) - v[0];
	v[0] = 0;
	while (read(fd, &msg, sizeof(msg)) == sizeof(msg))
		v[0] += msg.type == PFM_MSG_THROTTLE;
	return write(out, v, sizeof(v)) == sizeof(v) ? 0 : 4;
}

/* One storm's figures, in a test's log (TH_LOG is the harness's). */
#define STORM_LOG(what, period, seen) do {				\
	const struct storm_seen *__s = (seen);				\
									\
	TH_LOG("%s, period %llu: %u throttles (%u+ a CPU), counts grew %llu+", \
	       (what), (unsigned long long)(period), __s->throttles,	\
	       __s->throttles_min, (unsigned long long)__s->grown_min);	\
	TH_LOG("  sleeper: %u wake-ups, late by %llu us at worst, %llu on average, %llu median", \
	       __s->wakeups, (unsigned long long)(__s->late_max_ns / 1000), \
	       (unsigned long long)(__s->late_avg_ns / 1000),		\
	       (unsigned long long)(__s->late_med_ns / 1000));		\
} while (0)

static inline int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The storm on every CPU, the sleeper here; findings in @s. */
static inline void storm_run(const struct storm_cfg *c, uint64_t period,
			     struct storm_seen *s)
{
	static uint64_t lates[STORM_WAKEUPS_MAX];
	int ncpu = online_cpus(), out[2], i, st;
	uint64_t t, late, sum = 0, end, v[2];
	struct timespec req = { 0, 1000000 };

	memset(s, 0, sizeof(*s));
	s->grown_min = UINT64_MAX;
	s->throttles_min = UINT_MAX;
	if (pipe(out)) {
		s->failed = ncpu;
		return;
	}
	for (i = 0; i < ncpu; i++)
		if (fork() == 0)
			_exit(storm_cpu(i, c, period, out[1]));
	end = clock_ns(CLOCK_MONOTONIC) + c->ms * 1000000ull;
	while ((t = clock_ns(CLOCK_MONOTONIC)) < end) {
		nanosleep(&req, NULL);
		late = clock_ns(CLOCK_MONOTONIC) - t - 1000000;
		sum += late;
		s->late_max_ns = late > s->late_max_ns ? late : s->late_max_ns;
		if (s->wakeups < STORM_WAKEUPS_MAX)
			lates[s->wakeups] = late;
		s->wakeups++;
	}
	s->late_avg_ns = s->wakeups ? sum / s->wakeups : 0;
	if (s->wakeups) {
		i = s->wakeups < STORM_WAKEUPS_MAX ? s->wakeups : STORM_WAKEUPS_MAX;
		qsort(lates, i, sizeof(lates[0]), u64_cmp);
		s->late_med_ns = lates[i / 2];
	}
	for (i = 0; i < ncpu; i++) {
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			s->failed++;
			continue;
		}
		if (read(out[0], v, sizeof(v)) != sizeof(v)) {
			s->failed++;
			continue;
		}
		s->throttles += v[0];
		s->throttles_min = v[0] < s->throttles_min ? v[0] :
				   s->throttles_min;
		s->grown_min = v[1] < s->grown_min ? v[1] : s->grown_min;
	}
	close(out[0]);
	close(out[1]);
}

/* Copy this program to @path, owned by root, with @mode; 0 or -errno. */
static inline int copy_self(const char *path, mode_t mode)
{
	char buf[65536];
	int in, out, ret = 0;
	ssize_t n;

	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	unlink(path);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	if (out < 0) {
		ret = -errno;
		goto close_in;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			ret = -EIO;
			break;
		}
	if (!ret && (n < 0 || fchown(out, 0, 0) || fchmod(out, mode)))
		ret = -errno;
	close(out);
close_in:
	close(in);
	return ret;
}

#define PFM_SYSFS	"/sys/kernel/perfmon/"

/* Write @val to the file @path (sysfs, procfs): 0 or -errno. */
static inline int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -errno;
	close(fd);
	return ret;
}

/* Write @val to /sys/kernel/perfmon/@name; 0 or -errno. */
static inline int knob_write(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), PFM_SYSFS "%s", name);
	return write_str(path, val);
}

/*
 * @n getppid() calls with the system call instruction itself, no libc
 * in between: the software PMU's system-call event counts them exactly.
 * Always inlined, so that the instructions land in the caller's section
 * (smpl_test.c locates samples by it).
 */
/* The kernel's attribute spelling; user space has no such header. */
#define pfm_attr(...)	__attribute__((__VA_ARGS__))

static inline pfm_attr(__always_inline__) void raw_getppid(unsigned long n)
{
	for (; n; n--) {
#if defined(__x86_64__)
		long ret;

		asm volatile("syscall"
			     : "=a" (ret)
			     : "0" ((long)__NR_getppid)
			     : "rcx", "r11", "memory");
		(void)ret;
#elif defined(__i386__)
		long ret;

		asm volatile("int $0x80"
			     : "=a" (ret)
			     : "0" ((long)__NR_getppid)
			     : "memory");
		(void)ret;
#elif defined(__aarch64__)
		register long x8 asm("x8") = __NR_getppid;
		register long x0 asm("x0");

		asm volatile("svc #0" : "=r" (x0) : "r" (x8) : "memory");
		(void)x0;
#else
#error "raw_getppid(): no system call instruction for this architecture"
#endif
	}
}

/* State letter of process or thread @pid (/proc/PID/stat), or 0. */
static inline char task_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * Wait until thread @pid is in state @want ('S': asleep, 'Z': a zombie),
 * looking every millisecond for up to @ms.  Return: whether it got there.
 */
static inline bool task_wait_state(pid_t pid, char want, int ms)
{
	while (task_state(pid) != want) {
		if (ms-- <= 0)
			return false;
		usleep(1000);
	}
	return true;
}

/* The first line of @path as a number; @dflt when it cannot be read. */
static inline long long read_num_or(const char *path, long long dflt)
{
	char buf[64];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return dflt;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return dflt;
	buf[n] = 0;
	return strtoll(buf, NULL, 0);
}

static inline long long read_num(const char *path)
{
	return read_num_or(path, -1);
}

/*
 * The CPU time of every thread in the system, to name what ran beside a
 * timed test when the test was switched out (task_runs_log()).  The
 * first number of /proc/PID/task/TID/schedstat is the thread's time on
 * a CPU in ns (CONFIG_SCHED_INFO, set in Debian's kernels); field 39 of
 * its stat, the CPU it ran on last.  The files are opened once and read
 * again from offset 0: an open and a close per read free the file by
 * RCU, and on the debug kernel the RCU thread (rcu_preempt) then took
 * 3 ms of each 8 ms round on the test's CPU, switching it out.  Threads
 * started after task_runs_open() are not seen.
 */
#define TASK_RUNS_MAX	256

struct task_runs {
	int n;
	pid_t tid[TASK_RUNS_MAX];
	int sched_fd[TASK_RUNS_MAX], stat_fd[TASK_RUNS_MAX];
	char comm[TASK_RUNS_MAX][16];
};

/* pread() of @fd from 0 into @buf (@len bytes), NUL-terminated. */
static inline bool task_file_read(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	if (n <= 0)
		return false;
	buf[n] = 0;
	return true;
}

static inline void task_runs_add(struct task_runs *r, const char *pid,
				 const char *tid)
{
	char path[600], buf[512];	/* two names of up to 255 and the rest */
	int i = r->n;

	snprintf(path, sizeof(path), "/proc/%s/task/%s/schedstat", pid, tid);
	r->sched_fd[i] = open(path, O_RDONLY | O_CLOEXEC);
	if (r->sched_fd[i] < 0)
		return;
	snprintf(path, sizeof(path), "/proc/%s/task/%s/stat", pid, tid);
	r->stat_fd[i] = open(path, O_RDONLY | O_CLOEXEC);
	if (r->stat_fd[i] < 0) {
		close(r->sched_fd[i]);
		return;
	}
	r->comm[i][0] = 0;
	if (task_file_read(r->stat_fd[i], buf, sizeof(buf)) &&
	    sscanf(buf, "%*d (%15[^)]", r->comm[i]) != 1)
		r->comm[i][0] = 0;
	r->tid[r->n++] = atoi(tid);
}

static inline void task_runs_open(struct task_runs *r)
{
	char path[300];
	struct dirent *p, *t;
	DIR *pd, *td;

	r->n = 0;
	pd = opendir("/proc");
	if (!pd)
		return;
	while ((p = readdir(pd)) && r->n < TASK_RUNS_MAX) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		td = opendir(path);
		if (!td)
			continue;
		while ((t = readdir(td)) && r->n < TASK_RUNS_MAX)
			if (t->d_name[0] >= '1' && t->d_name[0] <= '9')
				task_runs_add(r, p->d_name, t->d_name);
		closedir(td);
	}
	closedir(pd);
}

/* Each thread's time on a CPU into @ns (0 for one that ended). */
static inline void task_runs_read(const struct task_runs *r, uint64_t *ns)
{
	char buf[96];
	int i;

	for (i = 0; i < r->n; i++)
		ns[i] = task_file_read(r->sched_fd[i], buf, sizeof(buf)) ?
			strtoull(buf, NULL, 10) : 0;
}

/* The CPU thread @i of @r ran on last (stat field 39), or -1. */
static inline int task_runs_cpu(const struct task_runs *r, int i)
{
	char buf[512], *c;
	int j;

	if (!task_file_read(r->stat_fd[i], buf, sizeof(buf)))
		return -1;
	c = strrchr(buf, ')');
	/* Field 39 is the 37th after the ')'. */
	for (j = 0; c && j < 37; j++)
		c = strchr(c + 1, ' ');
	return c ? atoi(c + 1) : -1;
}

/*
 * Log to @f each thread of @r but @self that ran more than @min_ns
 * between the reads @a and @b, with its name and the CPU it ran on last.
 */
static inline void task_runs_log(FILE *f, const struct task_runs *r,
				 const uint64_t *a, const uint64_t *b,
				 pid_t self, uint64_t min_ns)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (r->tid[i] != self && b[i] >= a[i] + min_ns)
			fprintf(f, "#   ran %llu us beside it: %d %s, last on CPU %d\n",
				(unsigned long long)(b[i] - a[i]) / 1000,
				r->tid[i], r->comm[i], task_runs_cpu(r, i));
}

/* /sys/kernel/perfmon/@name as a number; -1000 when unreadable. */
static inline long long knob_read(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), PFM_SYSFS "%s", name);
	return read_num_or(path, -1000);
}

/*
 * Is the PMU description served by module @mod (pfm_pmuv3 or pfm_perf,
 * which present the same model)?  /sys/kernel/perfmon/pmu_desc/module.
 */
static inline bool pmu_module_is(const char *mod)
{
	char buf[64] = "";
	FILE *f = fopen(PFM_SYSFS "pmu_desc/module", "r");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return !strcmp(buf, mod);
}

/*
 * The software PMU's driver setting (clock_unit_ns) is pfm_soft's own:
 * pfm_perf presents the same registers over perf's software events,
 * which have no such setting.
 */
static inline bool soft_settings(void)
{
	return pmu_is("soft") && !pmu_module_is("pfm_perf");
}

/* First line of file @file of the registered PMU's sysfs, "" when absent. */
static inline char *pmu_desc_str(const char *file)
{
	static char buf[64];
	char path[128];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), PFM_SYSFS "pmu_desc/%s", file);
	f = fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
	return buf;
}

/*
 * The module of the registered PMU description (pfm_soft, pfm_perf...)
 * and its file in the rig's /modules/, for tests that unload it and
 * load it again (none of the descriptions takes a parameter there).
 */
struct pmu_mod {
	char name[32];
	char ko[64];
};

/* Fill @m; false without root, a description, or its module's file. */
static inline bool pmu_mod_get(struct pmu_mod *m)
{
	snprintf(m->name, sizeof(m->name), "%s", pmu_desc_str("module"));
	snprintf(m->ko, sizeof(m->ko), "/modules/%s.ko", m->name);
	return getuid() == 0 && m->name[0] && !access(m->ko, R_OK);
}

/*
 * Install the rig's /modules/ files @mods (space-separated paths) where
 * modprobe finds them, so that the core's perfmon.pmu autoload can load
 * them: 0 or -errno.  The register maps the descriptions import
 * (pfm_pmu_lib) go with them.  uninstall_modules() takes them away again
 * (a test after this one may count on nothing loading).
 */
#define PFM_EXTRA_MODS	"/lib/modules/%s/extra"
#define PFM_PMU_LIB_KO	"/modules/pfm_pmu_lib.ko"
/* perfmon.pmu: the description a context loads when none is registered. */
#define PMU_PARAM	"/sys/module/perfmon/parameters/pmu"

static inline int install_modules(const char *mods)
{
	char cmd[1024], dir[128];
	struct utsname u;

	if (uname(&u))
		return -errno;
	snprintf(dir, sizeof(dir), PFM_EXTRA_MODS, u.release);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s && cp %s " PFM_PMU_LIB_KO " %s && depmod %s",
		 dir, mods, dir, u.release);
	if (system(cmd))
		return -EIO;
	return write_str("/proc/sys/kernel/modprobe", "/bin/modprobe");
}

static inline int uninstall_modules(void)
{
	char cmd[512], dir[128];
	struct utsname u;

	if (uname(&u))
		return -errno;
	snprintf(dir, sizeof(dir), PFM_EXTRA_MODS, u.release);
	snprintf(cmd, sizeof(cmd), "rm -rf %s && depmod %s", dir, u.release);
	return system(cmd) ? -EIO : 0;
}

/* The count of perf counter @fd; ~0 when perf could not schedule it (EOF). */
static inline uint64_t perf_count(int fd)
{
	uint64_t v;

	return read(fd, &v, sizeof(v)) == sizeof(v) ? v : ~0ull;
}

/* Loaded sessions of @kind ("task" or "sys"); -1 when unreadable. */
static inline long long sessions(const char *kind)
{
	char path[128];

	snprintf(path, sizeof(path), PFM_SYSFS "%s_sessions_count", kind);
	return read_num(path);
}

#define PERFMON_MOD	"/sys/module/perfmon"

static inline long long perfmon_refcnt(void)
{
	return read_num(PERFMON_MOD "/refcnt");
}

/*
 * perfmon.ko's reference count once it settles on @want (up to 2 s): a
 * closed context may be freed, and drop its reference, from pfm_wq.
 */
static inline long long refcnt_settle(long long want)
{
	long long n = perfmon_refcnt();
	int tries = 200;

	while (n != want && --tries) {
		usleep(10000);
		n = perfmon_refcnt();
	}
	return n;
}

/*
 * perfmon.ko's reference count with nothing of an earlier test left:
 * a thread that ended drops its hook's reference from pfm_wq after its
 * last context switch, which may come after pthread_join() returned,
 * and the context of a closed file may be freed from there too.  So
 * the count only falls while they go: it is taken once it stayed the
 * same for 100 ms (up to 2 s).  *@first, unless NULL, gets the count
 * at the call.
 */
static inline long long perfmon_refcnt_quiet(long long *first)
{
	long long n = perfmon_refcnt(), prev;
	int same = 0, tries = 200;

	if (first)
		*first = n;
	while (same < 10 && --tries) {
		usleep(10000);
		prev = n;
		n = perfmon_refcnt();
		same = n == prev ? same + 1 : 0;
	}
	return n;
}

/* Set the paranoid level (as root); 0 or -errno. */
static inline int set_paranoid(int level)
{
	char buf[8];

	snprintf(buf, sizeof(buf), "%d", level);
	return knob_write("paranoid", buf);
}

/*
 * PFM_WRITE_PMCS of one PMC (set 0) expecting errno @want (0 or
 * EACCES); with EACCES the entry must carry PFM_REG_RETFL_NOPRIV and
 * nothing else.  True when it went as expected.
 */
static inline bool pmc_write_as(int fd, uint16_t num, uint64_t value, int want)
{
	struct pfarg_pmc pc;
	int ret;

	memset(&pc, 0, sizeof(pc));
	pc.reg_num = num;
	pc.reg_value = value;
	ret = pfm_array(fd, PFM_WRITE_PMCS, &pc, 1);
	if (ret != -want)
		return false;
	return (pc.reg_flags & PFM_REG_RETFL_MASK) ==
	       (want ? PFM_REG_RETFL_NOPRIV : 0);
}

#endif /* _PFM_TEST_H */
