// SPDX-License-Identifier: GPL-2.0
/*
 * Where a call's instructions go: a perf sampler on the calling thread
 * (kernel and user), the call in a loop, and the sampled instruction
 * pointers counted by function (/proc/kallsyms for the kernel, "user"
 * for the program).  Each function's share of the samples, times the
 * call's measured cost, is its instructions per call under -icount.
 *
 * The sampler is the best perf has in the boot: the PMUv3's
 * CPU_CYCLES where perf owns the PMU (pfm_perf boot), else the
 * cpu-clock hrtimer (one sample per 10 us of guest time, which under
 * -icount 0 is 10,000 instructions).  Code that runs with interrupts
 * off (under the context's raw lock) is charged to where they come
 * back on: the lock's release.
 *
 * Under -icount the loop is exactly periodic and so is the sampler,
 * counted from the end of its own interrupt: the two lock in phase and
 * every sample lands on the same few instructions.  A pseudo-random
 * pause (0 to 31 empty iterations) before each call breaks the lock;
 * the pause is timed alone and taken out of the "user" line.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "profile.h"

#define PROF_PAGES	512	/* data pages of perf's ring */
#define PROF_TOP	14	/* functions printed */

struct ksym {
	uint64_t addr;
	char name[128];
};

static struct ksym *ksyms;
static size_t nksyms;

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The kernel's text symbols, sorted; false when addresses are hidden. */
static bool ksyms_load(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], type, name[128];
	unsigned long long addr;
	size_t cap = 0;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s", &addr, &type, name) != 3 ||
		    !addr || (type != 't' && type != 'T'))
			continue;
		if (nksyms == cap) {
			cap = cap ? 2 * cap : 65536;
			ksyms = realloc(ksyms, cap * sizeof(*ksyms));
			if (!ksyms)
				exit(1);
		}
		ksyms[nksyms].addr = addr;
		snprintf(ksyms[nksyms].name, sizeof(ksyms[0].name), "%s", name);
		nksyms++;
	}
	fclose(f);
	qsort(ksyms, nksyms, sizeof(*ksyms), ksym_cmp);
	return nksyms > 0;
}

static const char *ksym_name(uint64_t ip)
{
	size_t lo = 0, hi = nksyms;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (ksyms[mid].addr <= ip)
			lo = mid;
		else
			hi = mid;
	}
	return nksyms && ksyms[lo].addr <= ip ? ksyms[lo].name : "?";
}

struct hit {
	const char *name;
	unsigned long n;
};

static int hit_cmp(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	return (x->n < y->n) - (x->n > y->n);
}

/* Count one sample of @name in @hits (names are kallsyms' or "user"). */
static void hit_add(struct hit *hits, size_t *nhits, size_t cap,
		    const char *name)
{
	size_t i;

	for (i = 0; i < *nhits; i++)
		if (hits[i].name == name) {
			hits[i].n++;
			return;
		}
	if (*nhits < cap)
		hits[(*nhits)++] = (struct hit){ name, 1 };
}

/* 0 to 31 empty iterations, from a linear congruential sequence. */
static void pause_rand(uint32_t *x)
{
	uint32_t k;

	*x = *x * 1103515245u + 12345u;
	for (k = *x >> 27; k; k--)
		__asm__ volatile("" ::: "memory");
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ns per iteration of @n pauses, with @op after each when not NULL. */
static double run_loop(void (*op)(void *arg), void *arg, unsigned long n)
{
	uint64_t t0 = mono_ns();
	uint32_t x = 1;
	unsigned long i;

	for (i = 0; i < n; i++) {
		pause_rand(&x);
		if (op)
			op(arg);
	}
	return (double)(mono_ns() - t0) / n;
}

/*
 * perf's sampler: CPU_CYCLES, else cpu-clock; on the calling thread
 * (@cpu -1) or on every thread of CPU @cpu.  A CPU's sampler samples 20
 * times less often: at the thread's rate, 1 a microsecond, a whole CPU
 * hits perf_event_max_sample_rate (100,000 a second), and the throttled
 * samples crowd where it lets them go again (9,600 in a run that had
 * 74,000 cycles' worth).
 */
static int prof_open(int cpu, const char **what)
{
	struct perf_event_attr a;
	pid_t pid = cpu < 0 ? 0 : -1;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	/*
	 * PMUv3 CPU_CYCLES, an instruction each under -icount 0: QEMU
	 * times the cycle counter's overflow, but finds an event
	 * counter's only when it next syncs the PMU (INST_RETIRED's
	 * samples all landed in user space).
	 */
	a.type = PERF_TYPE_RAW;
	a.config = 0x11;
	a.sample_period = cpu < 0 ? 1009 : 20011;
	a.sample_type = PERF_SAMPLE_IP;
	a.disabled = 1;
	*what = cpu < 0 ? "CPU_CYCLES, every 1009" : "CPU_CYCLES, every 20011";
	fd = syscall(SYS_perf_event_open, &a, pid, cpu, -1, 0);
	if (fd >= 0)
		return fd;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = cpu < 0 ? 10000 : 200000;	/* ns: >= perf's hrtimer minimum */
	*what = cpu < 0 ? "cpu-clock, every 10 us" : "cpu-clock, every 200 us";
	return syscall(SYS_perf_event_open, &a, pid, cpu, -1, 0);
}

/* The samples of one run, by function. */
struct prof {
	struct hit hits[4096];
	size_t nhits;
	unsigned long total;
	bool lost;
	const char *what;
};

/* Count the samples in @pg's ring into @p. */
static void prof_drain(struct prof *p, struct perf_event_mmap_page *pg)
{
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	unsigned char *data = (unsigned char *)pg + pg->data_offset;
	struct perf_event_header *h;
	uint64_t off, ip;

	for (off = 0; off < head; off += h->size) {
		h = (void *)(data + off % pg->data_size);
		if (!h->size)
			break;
		if (h->type == PERF_RECORD_LOST)
			p->lost = true;
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		memcpy(&ip, h + 1, sizeof(ip));
		hit_add(p->hits, &p->nhits, 4096,
			ip >> 63 ? ksym_name(ip) : "user");
		p->total++;
	}
	qsort(p->hits, p->nhits, sizeof(p->hits[0]), hit_cmp);
}

/*
 * Sample @n runs of @op (run_loop(), @n 0: one call of @op alone) on
 * the calling thread (@cpu -1) or on CPU @cpu into @p; false when
 * there is no sampler or no kernel symbol.
 */
static bool prof_sample(struct prof *p, int cpu, void (*op)(void *arg),
			void *arg, unsigned long n)
{
	size_t len = (1 + PROF_PAGES) * sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *pg;
	int fd;

	memset(p, 0, sizeof(*p));
	if (!nksyms && !ksyms_load()) {
		printf("# profile: no kernel symbols (/proc/kallsyms)\n");
		return false;
	}
	fd = prof_open(cpu, &p->what);
	if (fd < 0) {
		printf("# profile: no perf sampler: %s\n", strerror(errno));
		return false;
	}
	pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		close(fd);
		return false;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	if (n)
		run_loop(op, arg, n);
	else
		op(arg);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	prof_drain(p, pg);
	munmap(pg, len);
	close(fd);
	return p->total > 0;
}

/**
 * prof_run() - print where @op's instructions go
 * @label: what @op does, for the output
 * @op: the call, run @n times
 * @arg: its argument
 * @n: calls
 *
 * Each function's line: its share of the samples and its ns (under
 * -icount 0, instructions) per call: the share of the loop's time
 * measured without the sampler.
 */
void prof_run(const char *label, void (*op)(void *arg), void *arg,
	      unsigned long n)
{
	static struct prof p;
	double iter, pause, ns;
	size_t i;

	/* The sampler's own interrupts slow the loop: timed without it. */
	iter = run_loop(op, arg, n);
	pause = run_loop(NULL, NULL, n);
	if (!prof_sample(&p, -1, op, arg, n))
		return;
	printf("# profile %s: %lu samples (%s)%s; %.0f ns a call:\n", label,
	       p.total, p.what, p.lost ? ", ring overran" : "", iter - pause);
	for (i = 0; i < p.nhits && i < PROF_TOP; i++) {
		ns = iter * p.hits[i].n / p.total;
		if (!strcmp(p.hits[i].name, "user"))
			ns -= pause;
		printf("#   %5.1f%% %5.0f  %s\n", 100.0 * p.hits[i].n / p.total,
		       ns, p.hits[i].name);
	}
}

/* ns per unit of function @name in @p, of @per ns per unit in all. */
static double prof_ns(const struct prof *p, const char *name, double per)
{
	size_t i;

	for (i = 0; i < p->nhits; i++)
		if (!strcmp(p->hits[i].name, name))
			return per * p->hits[i].n / p->total;
	return 0;
}

struct prof_delta {
	const char *name;
	double ns;
};

static int delta_cmp(const void *a, const void *b)
{
	const struct prof_delta *x = a, *y = b;

	return (x->ns < y->ns) - (x->ns > y->ns);
}

/**
 * prof_run_cpu_delta() - print what @with adds to @base, by function
 * @label: what the two do, for the output
 * @cpu: the CPU both run on, sampled whole (every thread on it)
 * @base: the run without what is measured (one call runs it all)
 * @with: the same run with it
 * @arg: their argument
 * @units: the units each run does (switches, say), for "ns a unit"
 *
 * Each run is timed without the sampler, then sampled; a function's ns
 * a unit is its share of its run's time.  The lines are the functions
 * whose ns a unit grew most from @base to @with, and their sum is set
 * against the growth of the whole.
 */
void prof_run_cpu_delta(const char *label, int cpu, void (*base)(void *arg),
			void (*with)(void *arg), void *arg, unsigned long units)
{
	static struct prof pb, pw;
	static struct prof_delta d[4096];
	double tb, tw, shown = 0;
	uint64_t t0;
	size_t i, nd = 0;

	t0 = mono_ns();
	base(arg);
	tb = (double)(mono_ns() - t0) / units;
	t0 = mono_ns();
	with(arg);
	tw = (double)(mono_ns() - t0) / units;
	if (!prof_sample(&pb, cpu, base, arg, 0) ||
	    !prof_sample(&pw, cpu, with, arg, 0))
		return;
	for (i = 0; i < pw.nhits; i++)
		d[nd++] = (struct prof_delta){ pw.hits[i].name,
			prof_ns(&pw, pw.hits[i].name, tw) -
			prof_ns(&pb, pw.hits[i].name, tb) };
	for (i = 0; i < pb.nhits; i++)
		if (!prof_ns(&pw, pb.hits[i].name, tw))
			d[nd++] = (struct prof_delta){ pb.hits[i].name,
				-prof_ns(&pb, pb.hits[i].name, tb) };
	qsort(d, nd, sizeof(d[0]), delta_cmp);
	printf("# profile %s, CPU %d: %lu and %lu samples (%s)%s; %.0f ns a unit added to %.0f:\n",
	       label, cpu, pb.total, pw.total, pw.what,
	       pb.lost || pw.lost ? ", ring overran" : "", tw - tb, tb);
	for (i = 0; i < nd && i < 2 * PROF_TOP; i++) {
		printf("#   %+6.0f  %s\n", d[i].ns, d[i].name);
		shown += d[i].ns;
	}
	printf("#   %+6.0f  the lines above, of %+.0f\n", shown, tw - tb);
}
