// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_bench: perfmon against perf_events on the same work, in the same
 * boot.  Prints one table: operation, ours, perf, ratio (ours/perf),
 * then its rows as "@row KEY OURS PERF" lines, from which make bench
 * puts the boots side by side (tools/bench/bench-table).
 *
 *  read1, read4   PFM_READ_VALUES of 1 and 4 counters (and perfmon2's
 *                 PFM_READ_PMDS); perf: read() of a group of 1 and 4
 *                 (PERF_FORMAT_GROUP)
 *  uread          PMUv3 only: the thread reads counter 0 itself through
 *                 the control page (pfm_uread()); perf: its event's
 *                 mmap page (config1 "rdpmc", kernel.perf_user_access
 *                 1), where perf has the PMU; and the bare instruction
 *                 that reads the counter (mrs) in the same loop
 *  start+stop     PFM_START + PFM_STOP; perf: ENABLE + DISABLE (group)
 *  sample         cost per sample: a fixed loop sampled at a fixed
 *                 period, our "ring" format; perf: its mmap ring with
 *                 PERF_SAMPLE_IP|TID|TIME; then both with the user call
 *                 chain (PFM_REGFL_CALLCHAIN; PERF_SAMPLE_CALLCHAIN,
 *                 user only; this program is built with frame
 *                 pointers, the chain's depth printed)
 *  ctxsw          cost per context switch of two monitored threads
 *                 playing pipe ping-pong on one CPU
 *  multiplex      4 sets of 1 counter on a steady loop: the worst error
 *                 of the scaled estimates against the count taken alone
 *
 * Events: on the software PMU (pfm_soft) task-clock etc., with perf's
 * software events of the same meaning; on the PMUv3 (pfm_pmuv3)
 * instructions and cycles.  Where perf has no hardware PMU in that boot
 * (the arm64 guest gives PMUv3 to perfmon) its side uses its software
 * events: the table says so.  Over pfm_perf (the kernel's PMUv3 driver
 * in place) both sides count instructions and cycles on the PMUv3, ours
 * through perf's kernel counters, perf's as raw hardware events; the
 * user-level read row needs kernel.perf_user_access=1 there, which the
 * rig sets (pfm_perf's el0_access asks perf for user-level reads).
 *
 * Times come from CLOCK_MONOTONIC: under QEMU's -icount, guest time
 * counts instructions, so the figures are reproducible there.  Each
 * figure is the median of BATCHES batches.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <perfmon/perfmon.h>
#include <perfmon/perfmon_ring.h>
#include <perfmon/perfmon_uread.h>

#include "profile.h"

#define BATCHES		7
#define NCTR		4

static int iters = 20000;	/* per batch, for the fast operations */

/* What to count on this PMU, ours and perf's. */
struct events {
	const char *pmu;
	const char *what;		/* for the table's note */
	uint64_t ours[NCTR];		/* PMC values, counters 0..3 */
	uint64_t steady;		/* multiplexed: counts a steady loop */
	bool steady_syscalls;		/* ... which makes system calls */
	uint32_t perf_type;
	uint64_t perf[NCTR];
	const char *perf_what;
	uint16_t smpl_reg;		/* ours: the sampling counter */
	uint64_t smpl_evt;		/* ... its PMC value */
	uint64_t smpl_period;		/* ... its period */
	uint64_t perf_period;		/* perf's, in units of perf_smpl */
	uint64_t perf_smpl;		/* perf's sampling event */
};

/* pfm_soft's events (Documentation/pmu-description.rst) */
static const struct events soft_events = {
	.pmu = "soft",
	.what = "task-clock, cpu-clock, context-switches, syscalls",
	.ours = { 1, 2, 3, 4 },
	.steady = 4, .steady_syscalls = true,
	.perf_type = PERF_TYPE_SOFTWARE,
	.perf = { PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CPU_CLOCK,
		  PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_PAGE_FAULTS },
	.perf_what = "software: task-clock, cpu-clock, context-switches, page-faults",
	.smpl_reg = 0, .smpl_evt = 1,			/* task-clock */
	.smpl_period = 50000, .perf_period = 50000,	/* ns */
	.perf_smpl = PERF_COUNT_SW_TASK_CLOCK,
};

/* PMUv3: INST_RETIRED, CPU_CYCLES, INST_RETIRED, CPU_CYCLES */
static const struct events pmuv3_events = {
	.pmu = "armv8_pmuv3",
	.what = "instructions, cycles (PMUv3 event counters)",
	.ours = { 0x08, 0x11, 0x08, 0x11 },
	.steady = 0x08,
	.perf_type = PERF_TYPE_SOFTWARE,
	.perf = { PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CPU_CLOCK,
		  PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_PAGE_FAULTS },
	.perf_what = "software (the PMU is perfmon's in this boot)",
	/*
	 * The cycle counter (PMCCFILTR 0: every level): QEMU predicts
	 * its overflow with a timer, an event counter's only when it
	 * next syncs the PMU (about every tick).  Under -icount 0 a
	 * cycle is an instruction is a nanosecond.
	 */
	.smpl_reg = 31, .smpl_evt = 0,
	.smpl_period = 50000, .perf_period = 50000,
	.perf_smpl = PERF_COUNT_SW_TASK_CLOCK,
};

/*
 * PMUv3 over pfm_perf (the kernel's PMUv3 driver has the PMU): ours the
 * same PMC values, perf the same PMUv3 events as raw hardware events,
 * so that both sides count on the same counters.
 */
static const struct events pmuv3_perf_events = {
	.pmu = "armv8_pmuv3",
	.what = "instructions, cycles (perf kernel counters)",
	.ours = { 0x08, 0x11, 0x08, 0x11 },
	.steady = 0x08,
	.perf_type = PERF_TYPE_RAW,
	.perf = { 0x08, 0x11, 0x08, 0x11 },
	.perf_what = "hardware: the same PMUv3 events (raw 0x08, 0x11)",
	.smpl_reg = 31, .smpl_evt = 0,
	.smpl_period = 50000, .perf_period = 50000,
	/*
	 * CPU_CYCLES, as ours: QEMU times the cycle counter's overflow,
	 * but finds an event counter's (INST_RETIRED) only at its next
	 * PMU sync, about a tick: 16 samples where ours took 1,208.
	 */
	.perf_smpl = 0x11,
};

static const struct events *ev;
static uint64_t sink;		/* results the compiler must keep */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "pfm_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* ---------------------------------------------------------------- */
/* Ours                                                              */

/* A self-monitoring context counting @n of ev->ours, started. */
static int ours_ctx(int n)
{
	pfarg_ctx_t ctx = { 0 };
	pfarg_pmc_t pc[NCTR] = { { 0 } };
	pfarg_pmd_t pd[NCTR] = { { 0 } };
	pfarg_load_t ld = { 0 };
	int fd, i;

	fd = pfm_create_context(&ctx, NULL, NULL, 0);
	if (fd < 0)
		die("pfm_create_context");
	for (i = 0; i < n; i++) {
		pc[i].reg_num = i;
		pc[i].reg_value = ev->ours[i];
		pd[i].reg_num = i;
	}
	ld.load_pid = syscall(SYS_gettid);
	if (pfm_write_pmcs(fd, pc, n) || pfm_write_pmds(fd, pd, n) ||
	    pfm_load_context(fd, &ld) || pfm_start(fd, NULL))
		die("programming a context");
	return fd;
}

/* ---------------------------------------------------------------- */
/* perf                                                              */

static int perf_open(struct perf_event_attr *a, int group)
{
	return syscall(SYS_perf_event_open, a, 0, -1, group, 0);
}

/* A group of @n of ev->perf on this thread, enabled; the leader's fd. */
static int perf_group(int n, int *fds)
{
	struct perf_event_attr a;
	int i;

	for (i = 0; i < n; i++) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = ev->perf_type;
		a.config = ev->perf[i];
		a.read_format = PERF_FORMAT_GROUP;
		a.disabled = i == 0;
		fds[i] = perf_open(&a, i ? fds[0] : -1);
		if (fds[i] < 0)
			die("perf_event_open");
	}
	if (ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP))
		die("PERF_EVENT_IOC_ENABLE");
	return fds[0];
}

static void perf_close(int n, int *fds)
{
	while (n--)
		close(fds[n]);
}

/* ---------------------------------------------------------------- */
/* The table                                                         */

/*
 * A row of the table; @key names it in the "@row" lines that make
 * bench merges across boots (tools/bench/bench-table).
 */
struct row {
	const char *key;
	const char *op;
	const char *unit;
	double ours, perf;		/* perf NAN: no perf figure */
};

static struct row rows[24];
static int nrows;

static void row(const char *key, const char *op, const char *unit,
		double ours, double perf)
{
	rows[nrows++] = (struct row){ key, op, unit, ours, perf };
}

/* ---------------------------------------------------------------- */
/* 1. reads                                                          */

/*
 * Ours: PFM_READ_PMDS of @n counters (perfmon2's call, 176-byte
 * entries), or with @values PFM_READ_VALUES (8 bytes a counter).
 */
static double time_ours_read(int n, bool values)
{
	uint64_t vals[NCTR] = { 0 }, mask = (1ull << n) - 1;
	pfarg_pmd_t pd[NCTR];
	double v[BATCHES];
	int fd = ours_ctx(n), b, i;
	uint64_t t0;

	memset(pd, 0, sizeof(pd));
	for (i = 0; i < n; i++)
		pd[i].reg_num = i;
	for (b = 0; b < BATCHES; b++) {
		t0 = now_ns();
		for (i = 0; i < iters; i++)
			if (values ? pfm_read_values(fd, 0, 0, mask, vals) :
				     pfm_read_pmds(fd, pd, n))
				die(values ? "pfm_read_values" : "pfm_read_pmds");
		v[b] = (double)(now_ns() - t0) / iters;
	}
	sink += vals[0];
	close(fd);
	return median(v, BATCHES);
}

static double time_perf_read(int n)
{
	uint64_t buf[1 + 2 * NCTR];
	double v[BATCHES];
	int fds[NCTR], b, i;
	uint64_t t0;

	perf_group(n, fds);
	for (b = 0; b < BATCHES; b++) {
		t0 = now_ns();
		for (i = 0; i < iters; i++)
			if (read(fds[0], buf, sizeof(buf)) <= 0)
				die("read of a perf group");
		v[b] = (double)(now_ns() - t0) / iters;
	}
	perf_close(n, fds);
	return median(v, BATCHES);
}

/* kernel.perf_user_access is 1: perf lets threads read counters. */
static bool user_reads_allowed(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_user_access", "r");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v == 1;
}

/*
 * 1b. user-level read (PMUv3, el0_access on): pfm_uread() of counter 0,
 * or (@bare) the instruction alone that reads it, in the same loop.
 */
static double time_uread(bool bare)
{
	struct pfarg_drv_cfg c = { .cfg_value = 1 };	/* el0_access */
	struct pfm_user_page *pg;
	double v[BATCHES];
	int fd = ours_ctx(1), b, i;
	uint64_t t0, x, acc = 0;

	if (pfm_set_drv_config(fd, &c, 1))
		die("el0_access");
	pg = pfm_uread_map(fd);
	if (!pg)
		die("pfm_uread_map");
	for (b = 0; b < BATCHES; b++) {
		t0 = now_ns();
		for (i = 0; i < iters; i++) {
			if (bare)
				x = pfm_uread_counter(0);
			else if (pfm_uread(pg, 0, &x))
				die("pfm_uread");
			acc += x;
		}
		v[b] = (double)(now_ns() - t0) / iters;
	}
	sink += acc;
	pfm_uread_unmap(pg);
	close(fd);
	return median(v, BATCHES);
}

/*
 * perf's user-level read of its event's counter, the protocol of
 * <linux/perf_event.h> (struct perf_event_mmap_page): sequence, index,
 * offset, the counter sign-extended from pmc_width, sequence again.
 * The time fields are left out, as pfm_uread() leaves them.
 */
static inline uint64_t perf_uread(const struct perf_event_mmap_page *pc)
{
	uint32_t seq, idx, width;
	uint64_t count;
	int64_t pmc;

	do {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		idx = __atomic_load_n(&pc->index, __ATOMIC_RELAXED);
		count = __atomic_load_n(&pc->offset, __ATOMIC_RELAXED);
		if (pc->cap_user_rdpmc && idx) {
			width = __atomic_load_n(&pc->pmc_width, __ATOMIC_RELAXED);
			pmc = pfm_uread_counter(idx - 1);
			pmc <<= 64 - width;
			pmc >>= 64 - width;
			count += pmc;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) != seq);
	return count;
}

/*
 * perf's side of the user-level read: its event perf[0] on this thread
 * with the arm64 PMU's "rdpmc" format bit (config1 bit 1), read through
 * its mmap page.  NAN when perf grants no user read (cap_user_rdpmc 0:
 * no PMU of perf's, or kernel.perf_user_access 0).
 */
static double time_perf_uread(void)
{
	struct perf_event_mmap_page *pg;
	struct perf_event_attr a;
	double v[BATCHES];
	uint64_t t0, acc = 0;
	int fd, b, i;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = ev->perf_type;
	a.config = ev->perf[0];
	a.config1 = 0x2;
	a.exclude_kernel = 1;
	fd = perf_open(&a, -1);
	if (fd < 0)
		return NAN;
	pg = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED)
		die("mmap of a perf event's page");
	if (!pg->cap_user_rdpmc || !pg->index) {
		munmap(pg, sysconf(_SC_PAGESIZE));
		close(fd);
		return NAN;
	}
	for (b = 0; b < BATCHES; b++) {
		t0 = now_ns();
		for (i = 0; i < iters; i++)
			acc += perf_uread(pg);
		v[b] = (double)(now_ns() - t0) / iters;
	}
	sink += acc;
	munmap(pg, sysconf(_SC_PAGESIZE));
	close(fd);
	return median(v, BATCHES);
}

/*
 * The floor under every call: a system call doing nothing (getppid())
 * and an ioctl the context refuses at once (-ENOTTY), so the doc can say
 * how much of a read is perfmon's own.
 */
static double time_floor(bool ioctl_floor)
{
	double v[BATCHES];
	int fd = ours_ctx(1), b, i;
	uint64_t t0;

	for (b = 0; b < BATCHES; b++) {
		t0 = now_ns();
		for (i = 0; i < iters; i++) {
			if (!ioctl_floor)
				syscall(SYS_getppid);
			else if (ioctl(fd, _IO(PFM_IOC_MAGIC, 0xff)) != -1)
				die("ioctl 0xff was not refused");
		}
		v[b] = (double)(now_ns() - t0) / iters;
	}
	close(fd);
	return median(v, BATCHES);
}

/* ---------------------------------------------------------------- */
/* 2. start + stop                                                   */

static double time_ours_startstop(void)
{
	double v[BATCHES];
	int fd = ours_ctx(NCTR), b, i;
	uint64_t t0;

	for (b = 0; b < BATCHES; b++) {
		t0 = now_ns();
		for (i = 0; i < iters; i++)
			if (pfm_stop(fd) || pfm_start(fd, NULL))
				die("pfm_stop/pfm_start");
		v[b] = (double)(now_ns() - t0) / iters;
	}
	close(fd);
	return median(v, BATCHES);
}

static double time_perf_startstop(void)
{
	double v[BATCHES];
	int fds[NCTR], b, i;
	uint64_t t0;

	perf_group(NCTR, fds);
	for (b = 0; b < BATCHES; b++) {
		t0 = now_ns();
		for (i = 0; i < iters; i++)
			if (ioctl(fds[0], PERF_EVENT_IOC_DISABLE,
				  PERF_IOC_FLAG_GROUP) ||
			    ioctl(fds[0], PERF_EVENT_IOC_ENABLE,
				  PERF_IOC_FLAG_GROUP))
				die("PERF_EVENT_IOC_DISABLE/ENABLE");
		v[b] = (double)(now_ns() - t0) / iters;
	}
	perf_close(NCTR, fds);
	return median(v, BATCHES);
}

/* ---------------------------------------------------------------- */
/* 3. per-sample cost                                                */

/* The fixed work: @n multiply-adds the compiler must keep. */
static void work(uint64_t n)
{
	uint64_t i, x = 1;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	__atomic_store_n(&sink, x, __ATOMIC_RELAXED);
}

#define WORK_N		20000000ull
#define RING_PAGES	256

static double time_work(void)
{
	uint64_t t0 = now_ns();

	work(WORK_N);
	return (double)(now_ns() - t0);
}

/*
 * Our sampler: counter 0 at ev->smpl_period into a ring; samples taken.
 * Without @ring the counter only reloads at each overflow (no format,
 * no notification): the interrupt path's own cost, overflows counted
 * from the run's length (the sampled event is time or cycles, which are
 * time under -icount).
 */
/*
 * pfm_ring_read() callback: frames of the call chain records, summed,
 * those records, and the samples (ctrl->records counts both kinds).
 */
static int count_frames(const struct pfm_ring_rec *rec, void *arg)
{
	uint64_t *frames = arg;

	if (rec->type == PFM_RING_REC_CALLCHAIN) {
		frames[0] += ((const struct pfm_ring_callchain *)rec)->nr;
		frames[1]++;
	}
	frames[2] += rec->type == PFM_RING_REC_SAMPLE;
	return 0;
}

static double ours_sampled(uint64_t *samples, bool ring_fmt, bool chain,
			   double *depth)
{
	uint64_t frames[3] = { 0, 0, 0 };
	struct pfm_ring_smpl_arg arg = { .data_pages = RING_PAGES };
	pfarg_ctx_t ctx = { 0 };
	pfarg_pmc_t pc = { 0 };
	pfarg_pmd_t pd = { 0 };
	pfarg_load_t ld = { 0 };
	struct pfm_ring ring;
	double t;
	int fd;

	fd = ring_fmt ? pfm_create_context(&ctx, PFM_RING_SMPL_NAME, &arg,
					   sizeof(arg)) :
			pfm_create_context(&ctx, NULL, NULL, 0);
	if (fd < 0)
		die("a sampling context");
	pc.reg_num = ev->smpl_reg;
	pd.reg_num = ev->smpl_reg;
	pc.reg_value = ev->smpl_evt;
	/* the format records only notifying PMDs; the ring never masks */
	pd.reg_flags = ring_fmt ? PFM_REGFL_OVFL_NOTIFY : 0;
	pd.reg_flags |= chain ? PFM_REGFL_CALLCHAIN : 0;
	pd.reg_value = -ev->smpl_period;
	pd.reg_short_reset = -ev->smpl_period;
	pd.reg_long_reset = -ev->smpl_period;
	ld.load_pid = syscall(SYS_gettid);
	if (pfm_write_pmcs(fd, &pc, 1) || pfm_write_pmds(fd, &pd, 1) ||
	    pfm_load_context(fd, &ld) || (ring_fmt && pfm_ring_map(fd, &ring)))
		die("programming the sampler");
	if (pfm_start(fd, NULL))
		die("pfm_start");
	t = time_work();
	pfm_stop(fd);
	if (!ring_fmt) {
		*samples = t / ev->smpl_period;
		close(fd);
		return t;
	}
	*samples = ring.ctrl->records + ring.ctrl->lost;
	if (depth) {
		pfm_ring_read(&ring, count_frames, frames);
		*depth = frames[1] ? (double)frames[0] / frames[1] : 0;
		*samples = frames[2] + ring.ctrl->lost;
	}
	if (ring.ctrl->lost)
		fprintf(stderr, "pfm_bench: %llu samples lost (ring of %d pages)\n",
			(unsigned long long)ring.ctrl->lost, RING_PAGES);
	pfm_ring_unmap(&ring);
	close(fd);
	return t;
}

/*
 * perf's sampler: the same period on perf_smpl, IP|TID|TIME, and the user
 * call chain with @chain (its average frames in *@depth, perf's context
 * marker left out).
 */
static double perf_sampled(uint64_t *samples, bool chain, double *depth)
{
	uint64_t frames = 0, nr;
	size_t len = (1 + RING_PAGES) * sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *pg;
	struct perf_event_attr a;
	struct perf_event_header *h;
	uint64_t head, off;
	unsigned char *data;
	double t;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = ev->perf_type;
	a.config = ev->perf_smpl;
	a.sample_period = ev->perf_period;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	if (chain) {
		a.sample_type |= PERF_SAMPLE_CALLCHAIN;
		a.exclude_callchain_kernel = 1;
	}
	a.disabled = 1;
	a.exclude_kernel = 0;
	fd = perf_open(&a, -1);
	if (fd < 0)
		die("perf_event_open (sampling)");
	pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED)
		die("mmap of the perf ring");
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	t = time_work();
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	data = (unsigned char *)pg + pg->data_offset;
	*samples = 0;
	for (off = 0; off < head; off += h->size) {
		h = (void *)(data + off % pg->data_size);
		if (h->type == PERF_RECORD_SAMPLE) {
			(*samples)++;
			/* header, IP, pid/tid, time, then nr */
			nr = chain ? *(uint64_t *)((char *)(h + 1) + 24) : 0;
			frames += nr ? nr - 1 : 0;
		}
		if (!h->size)
			break;
	}
	if (depth)
		*depth = *samples ? (double)frames / *samples : 0;
	munmap(pg, len);
	close(fd);
	return t;
}

/* Per-sample cost with the user call chain, ours and perf's. */
static void bench_sampling_chain(const double *plain)
{
	double o[BATCHES], p[BATCHES], n[BATCHES], od = 0, pd = 0;
	uint64_t so = 0, sp = 0, sn = 0;
	int b;

	for (b = 0; b < BATCHES; b++) {
		n[b] = ours_sampled(&sn, true, false, NULL);
		o[b] = ours_sampled(&so, true, true, &od);
		p[b] = perf_sampled(&sp, true, &pd);
		n[b] = sn ? (n[b] - plain[b]) / sn : 0;
		o[b] = so ? (o[b] - plain[b]) / so : 0;
		p[b] = sp ? (p[b] - plain[b]) / sp : 0;
	}
	printf("# sample with call chain: %.1f frames a chain (ours), %.1f (perf)\n",
	       od, pd);
	printf("# sample with call chain: ours without, in the same batches: %.1f ns\n",
	       median(n, BATCHES));
	row("sample_chain", "per-sample cost, user call chain", "ns/sample",
	    median(o, BATCHES), median(p, BATCHES));
}

static void bench_sampling(void)
{
	double plain[BATCHES], o[BATCHES], p[BATCHES], r[BATCHES];
	uint64_t so = 0, sp = 0, sr = 0;
	int b;

	for (b = 0; b < BATCHES; b++) {
		plain[b] = time_work();
		o[b] = ours_sampled(&so, true, false, NULL);
		r[b] = ours_sampled(&sr, false, false, NULL);
		p[b] = perf_sampled(&sp, false, NULL);
		o[b] = so ? (o[b] - plain[b]) / so : 0;
		r[b] = sr ? (r[b] - plain[b]) / sr : 0;
		p[b] = sp ? (p[b] - plain[b]) / sp : 0;
	}
	printf("# sample: %llu samples (ours), %llu (perf) per run of %.1f ms\n",
	       (unsigned long long)so, (unsigned long long)sp,
	       median(plain, BATCHES) / 1e6);
	printf("# sample: an overflow that only reloads (no format): %.1f ns, %llu per run\n",
	       median(r, BATCHES), (unsigned long long)sr);
	row("sample", "per-sample cost", "ns/sample", median(o, BATCHES),
	    median(p, BATCHES));
	row("sample_reload", "overflow that only reloads (floor)", "ns/sample",
	    median(r, BATCHES), NAN);
	bench_sampling_chain(plain);
}

/* ---------------------------------------------------------------- */
/* 4. context switches                                               */

enum mon { MON_NONE, MON_OURS, MON_PERF };

struct pingpong {
	int to[2], from[2];
	int rounds;
	enum mon mon;
};

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

/* Monitor the calling thread as @m says; the fd to close, or -1. */
static int monitor_self(enum mon m)
{
	int fds[1];

	if (m == MON_OURS)
		return ours_ctx(1);
	if (m == MON_PERF)
		return perf_group(1, fds);
	return -1;
}

static void *pong(void *arg)
{
	struct pingpong *pp = arg;
	int fd, i;
	char c;

	pin_cpu0();
	fd = monitor_self(pp->mon);
	for (i = 0; i < pp->rounds; i++)
		if (read(pp->to[0], &c, 1) != 1 || write(pp->from[1], &c, 1) != 1)
			die("pong");
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* ns per round trip (two context switches) with monitoring @m */
static double pingpong(enum mon m, int rounds)
{
	struct pingpong pp = { .rounds = rounds, .mon = m };
	pthread_t th;
	uint64_t t0;
	double t;
	int fd, i;
	char c = 'x';

	if (pipe(pp.to) || pipe(pp.from))
		die("pipe");
	pin_cpu0();
	fd = monitor_self(m);
	pthread_create(&th, NULL, pong, &pp);
	/* one round first: both threads are monitored and pinned */
	if (write(pp.to[1], &c, 1) != 1 || read(pp.from[0], &c, 1) != 1)
		die("ping");
	t0 = now_ns();
	for (i = 1; i < rounds; i++)
		if (write(pp.to[1], &c, 1) != 1 || read(pp.from[0], &c, 1) != 1)
			die("ping");
	t = (double)(now_ns() - t0) / (rounds - 1);
	pthread_join(th, NULL);
	if (fd >= 0)
		close(fd);
	for (i = 0; i < 2; i++) {
		close(pp.to[i]);
		close(pp.from[i]);
	}
	return t;
}

static void bench_ctxsw(void)
{
	double none[BATCHES], o[BATCHES], p[BATCHES];
	int b, rounds = iters / 4;

	for (b = 0; b < BATCHES; b++) {
		none[b] = pingpong(MON_NONE, rounds);
		o[b] = pingpong(MON_OURS, rounds);
		p[b] = pingpong(MON_PERF, rounds);
		/* two switches per round trip */
		o[b] = (o[b] - none[b]) / 2;
		p[b] = (p[b] - none[b]) / 2;
	}
	printf("# ctxsw: unmonitored round trip %.0f ns\n",
	       median(none, BATCHES));
	row("ctxsw", "context-switch overhead", "ns/switch", median(o, BATCHES),
	    median(p, BATCHES));
}

/* ---------------------------------------------------------------- */
/* 5. multiplexing                                                   */

#define MPX_SETS	4
#define MPX_SWITCH_NS	2000000ull	/* 2 ms */

/* The steady loop: system calls on the soft PMU, plain work on PMUv3. */
static void steady(uint64_t ms)
{
	uint64_t end = now_ns() + ms * 1000000ull;

	while (now_ns() < end) {
		if (ev->steady_syscalls)
			syscall(SYS_getppid);
		else
			work(1000);
	}
}

/* Rate of ev->steady alone over @ms of the steady loop, per ns. */
static double steady_alone(uint64_t ms)
{
	pfarg_pmd_t pd = { 0 };
	pfarg_ctx_t ctx = { 0 };
	pfarg_pmc_t pc = { .reg_value = ev->steady };
	pfarg_load_t ld = { .load_pid = syscall(SYS_gettid) };
	uint64_t t0, t1;
	int fd = pfm_create_context(&ctx, NULL, NULL, 0);

	if (fd < 0 || pfm_write_pmcs(fd, &pc, 1) ||
	    pfm_write_pmds(fd, &pd, 1) || pfm_load_context(fd, &ld))
		die("the reference context");
	t0 = now_ns();
	pfm_start(fd, NULL);
	steady(ms);
	pfm_stop(fd);
	t1 = now_ns();
	pfm_read_pmds(fd, &pd, 1);
	close(fd);
	return (double)pd.reg_value / (t1 - t0);
}

/* Worst |scaled estimate / reference - 1| of MPX_SETS sets, in %. */
static double multiplex_error(uint64_t ms, double *ref_rate)
{
	pfarg_setdesc_t sd[MPX_SETS];
	pfarg_setinfo_t si[MPX_SETS];
	pfarg_pmc_t pc[MPX_SETS];
	pfarg_pmd_t pd[MPX_SETS];
	pfarg_ctx_t ctx = { 0 };
	pfarg_load_t ld = { .load_pid = syscall(SYS_gettid) };
	uint64_t t0, t1, total = 0;
	double worst = 0, est, err, truth;
	int fd, i;

	memset(sd, 0, sizeof(sd));
	memset(si, 0, sizeof(si));
	memset(pc, 0, sizeof(pc));
	memset(pd, 0, sizeof(pd));
	fd = pfm_create_context(&ctx, NULL, NULL, 0);
	if (fd < 0)
		die("the multiplexed context");
	for (i = 0; i < MPX_SETS; i++) {
		sd[i].set_id = i;
		sd[i].set_flags = PFM_SETFL_TIME_SWITCH;
		sd[i].set_timeout = MPX_SWITCH_NS;
		pc[i].reg_set = i;
		pd[i].reg_set = i;
		si[i].set_id = i;
		pc[i].reg_value = ev->steady;
	}
	if (pfm_create_evtsets(fd, sd, MPX_SETS) ||
	    pfm_write_pmcs(fd, pc, MPX_SETS) ||
	    pfm_write_pmds(fd, pd, MPX_SETS) || pfm_load_context(fd, &ld))
		die("programming the sets");
	t0 = now_ns();
	pfm_start(fd, NULL);
	steady(ms);
	pfm_stop(fd);
	t1 = now_ns();
	if (pfm_read_pmds(fd, pd, MPX_SETS) ||
	    pfm_getinfo_evtsets(fd, si, MPX_SETS))
		die("reading the sets");
	close(fd);
	for (i = 0; i < MPX_SETS; i++)
		total += si[i].set_act_duration;
	/* the truth: the rate measured alone, over the same time */
	truth = *ref_rate * (t1 - t0);
	for (i = 0; i < MPX_SETS; i++) {
		if (!si[i].set_act_duration)
			return 100;
		est = (double)pd[i].reg_value * total / si[i].set_act_duration;
		err = est / truth - 1;
		if (err < 0)
			err = -err;
		if (err > worst)
			worst = err;
	}
	return worst * 100;
}

static void bench_multiplex(void)
{
	double e[BATCHES], rate;
	int b;

	for (b = 0; b < BATCHES; b++) {
		rate = steady_alone(200);
		e[b] = multiplex_error(200, &rate);
	}
	row("mux", "multiplexed estimate, worst of 4 sets", "% error",
	    median(e, BATCHES), NAN);
}

/* ---------------------------------------------------------------- */

/* The module that serves the description (sysfs), "?" when unknown. */
static char served_by[32] = "?";

static void read_served_by(void)
{
	FILE *f = fopen("/sys/kernel/perfmon/pmu_desc/module", "r");

	if (!f)
		return;
	if (fgets(served_by, sizeof(served_by), f))
		served_by[strcspn(served_by, "\n")] = 0;
	fclose(f);
}

/* ---------------------------------------------------------------- */
/* 6. where the instructions of a read go (profile.c)                */

struct prof_read {
	int fd;
	pfarg_pmd_t pd;
	uint64_t val;
};

static void prof_read_values(void *arg)
{
	struct prof_read *r = arg;

	pfm_read_values(r->fd, 0, 0, 1, &r->val);
}

static void prof_read_pmds(void *arg)
{
	struct prof_read *r = arg;

	pfm_read_pmds(r->fd, &r->pd, 1);
}

static void prof_perf_read(void *arg)
{
	struct prof_read *r = arg;
	uint64_t buf[3];

	if (read(r->fd, buf, sizeof(buf)) > 0)
		r->val = buf[1];
}

static void prof_refused(void *arg)
{
	struct prof_read *r = arg;

	ioctl(r->fd, _IO(PFM_IOC_MAGIC, 0xff));
}

/* A context switch profile's runs: @arg points to the rounds. */
static void prof_pp_none(void *arg)
{
	pingpong(MON_NONE, *(int *)arg);
}

static void prof_pp_ours(void *arg)
{
	pingpong(MON_OURS, *(int *)arg);
}

/*
 * The context switch: CPU 0, where the ping-pong runs, sampled whole
 * (the switch runs in both threads and in neither), our monitored run
 * against the unmonitored one.  Not perf's: its per-thread event kept
 * the CPU's sampler from counting most of its run (896 samples of
 * about 20,000, over pfm_perf's boot).
 */
static void bench_profile_ctxsw(void)
{
	int rounds = 10 * iters;

	prof_run_cpu_delta("context switch, ours", 0, prof_pp_none,
			   prof_pp_ours, &rounds, 2ul * rounds);
}

/* The reads of one counter, ours and perf's, and the refused ioctl. */
static void bench_profile(void)
{
	unsigned long n = 20 * (unsigned long)iters;
	struct prof_read r = { .fd = ours_ctx(1) };
	struct prof_read p;
	int fds[1];

	prof_run("PFM_READ_VALUES, 1 counter", prof_read_values, &r, n);
	prof_run("PFM_READ_PMDS, 1 counter", prof_read_pmds, &r, n);
	prof_run("an ioctl refused at once", prof_refused, &r, n);
	close(r.fd);
	p.fd = perf_group(1, fds);
	prof_run("read() of a perf group of 1", prof_perf_read, &p, n);
	close(p.fd);
	bench_profile_ctxsw();
}

/*
 * The table of this boot, then one "@row KEY OURS PERF" line a row for
 * tools/bench/bench-table, which puts the boots side by side.
 */
static void print_table(void)
{
	struct row *r;
	int i;

	printf("\n%-40s %-10s %10s %10s %8s\n", "operation", "unit", "ours",
	       "perf", "ratio");
	for (i = 0; i < nrows; i++) {
		r = &rows[i];
		if (isnan(r->perf))
			printf("%-40s %-10s %10.2f %10s\n", r->op, r->unit,
			       r->ours, "n/a");
		else
			printf("%-40s %-10s %10.1f %10.1f %7.2fx\n", r->op,
			       r->unit, r->ours, r->perf, r->ours / r->perf);
	}
	for (i = 0; i < nrows; i++)
		printf("@row %s %.2f %.2f\n", rows[i].key, rows[i].ours,
		       rows[i].perf);
}

/*
 * perf lowers kernel.perf_event_max_sample_rate when its PMU interrupt
 * takes more than its share of CPU time (perf_cpu_time_max_percent,
 * 25%), then throttles a sampler to a few samples a tick: under TCG
 * every interrupt is slow, and perf's hardware sampler took one sample
 * a 4 ms tick.  Both limits off for the bench (ours has its own,
 * max_ovfl_rate, above the rate sampled here); a non-root run keeps
 * them and says so.
 */
static void perf_unthrottle(void)
{
	/*
	 * perf refuses a new rate while the check is off (0) or at 100:
	 * the check on, the rate, the check off.
	 */
	static const char *const files[][2] = {
		{ "/proc/sys/kernel/perf_cpu_time_max_percent", "25" },
		{ "/proc/sys/kernel/perf_event_max_sample_rate", "100000" },
		{ "/proc/sys/kernel/perf_cpu_time_max_percent", "0" },
	};
	unsigned int i;
	FILE *f;

	for (i = 0; i < 3; i++) {
		f = fopen(files[i][0], "w");
		if (!f || fputs(files[i][1], f) < 0 || fclose(f)) {
			printf("# perf: %s not set (%s): its sampler may be throttled\n",
			       files[i][0], strerror(errno));
			continue;
		}
		printf("# perf: %s = %s\n", files[i][0], files[i][1]);
	}
}

int main(int argc, char **argv)
{
	struct pfarg_pmu_info info;
	double pr1, pr4, refused;

	if (argc > 1)
		iters = atoi(argv[1]);
	if (iters < 100)
		iters = 100;
	memset(&info, 0, sizeof(info));
	if (pfm_get_pmu_desc(&info))
		die("pfm_get_pmu_desc (is a PMU description loaded?)");
	read_served_by();
	if (!strcmp(info.pmu_name, soft_events.pmu)) {
		ev = &soft_events;
	} else if (!strcmp(info.pmu_name, pmuv3_events.pmu)) {
		ev = strcmp(served_by, "pfm_perf") ? &pmuv3_events :
		     &pmuv3_perf_events;
	} else {
		fprintf(stderr, "pfm_bench: no event table for PMU %s\n",
			info.pmu_name);
		return 1;
	}
	printf("# pfm_bench: PMU %s (module %s); ours: %s; perf: %s\n",
	       ev->pmu, served_by, ev->what, ev->perf_what);
	printf("# medians of %d batches of %d operations\n", BATCHES, iters);
	if (ev == &soft_events)
		printf("# x86_64 software PMU without -icount: TCG wall-clock times, %s\n",
		       "noise of tens of percent between runs (performance.rst)");
	perf_unthrottle();
	refused = time_floor(true);
	printf("# floor: getppid() %.1f ns, refused ioctl on a context %.1f ns\n",
	       time_floor(false), refused);
	pr1 = time_perf_read(1);
	pr4 = time_perf_read(4);
	row("read1", "read, 1 counter (PFM_READ_VALUES)", "ns/read",
	    time_ours_read(1, true), pr1);
	row("read4", "read, 4 counters (PFM_READ_VALUES)", "ns/read",
	    time_ours_read(4, true), pr4);
	row("read1_pmds", "read, 1 counter (PFM_READ_PMDS)", "ns/read",
	    time_ours_read(1, false), pr1);
	row("read4_pmds", "read, 4 counters (PFM_READ_PMDS)", "ns/read",
	    time_ours_read(4, false), pr4);
	/* Over pfm_perf, perf grants them only so (pmu-description.rst). */
	if (ev == &pmuv3_events ||
	    (ev == &pmuv3_perf_events && user_reads_allowed())) {
		row("uread", "user-level read, 1 counter", "ns/read",
		    time_uread(false), time_perf_uread());
		row("uread_bare", "the bare counter read (mrs) in that loop",
		    "ns/read", time_uread(true), NAN);
	}
	row("startstop", "start+stop, 4 counters", "ns/pair",
	    time_ours_startstop(), time_perf_startstop());
	bench_sampling();
	bench_ctxsw();
	bench_multiplex();
	bench_profile();
	print_table();
	return 0;
}
