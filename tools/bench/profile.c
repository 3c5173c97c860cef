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

/* perf's sampler on this thread: CPU_CYCLES, else cpu-clock. */
static int prof_open(const char **what)
{
	struct perf_event_attr a;
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
	a.sample_period = 1009;
	a.sample_type = PERF_SAMPLE_IP;
	a.disabled = 1;
	*what = "CPU_CYCLES, every 1009";
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd >= 0)
		return fd;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 10000;		/* ns: perf's hrtimer minimum */
	*what = "cpu-clock, every 10 us";
	return syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
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
	double iter, pause, ns;
	size_t len = (1 + PROF_PAGES) * sysconf(_SC_PAGESIZE), nhits = 0, i;
	static struct hit hits[4096];
	struct perf_event_mmap_page *pg;
	struct perf_event_header *h;
	unsigned long total = 0, lost = 0;
	uint64_t head, off, ip;
	const char *what;
	unsigned char *data;
	int fd;

	if (!nksyms && !ksyms_load()) {
		printf("# profile: no kernel symbols (/proc/kallsyms)\n");
		return;
	}
	fd = prof_open(&what);
	if (fd < 0) {
		printf("# profile: no perf sampler: %s\n", strerror(errno));
		return;
	}
	pg = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		close(fd);
		return;
	}
	/* The sampler's own interrupts slow the loop: timed without it. */
	iter = run_loop(op, arg, n);
	pause = run_loop(NULL, NULL, n);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	run_loop(op, arg, n);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	data = (unsigned char *)pg + pg->data_offset;
	for (off = 0; off < head; off += h->size) {
		h = (void *)(data + off % pg->data_size);
		if (!h->size)
			break;
		if (h->type == PERF_RECORD_LOST)
			lost++;
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		memcpy(&ip, h + 1, sizeof(ip));
		hit_add(hits, &nhits, 4096,
			ip >> 63 ? ksym_name(ip) : "user");
		total++;
	}
	munmap(pg, len);
	close(fd);
	if (!total)
		return;
	qsort(hits, nhits, sizeof(*hits), hit_cmp);
	printf("# profile %s: %lu samples (%s)%s; %.0f ns a call:\n", label,
	       total, what, lost ? ", ring overran" : "", iter - pause);
	for (i = 0; i < nhits && i < PROF_TOP; i++) {
		ns = iter * hits[i].n / total;
		if (!strcmp(hits[i].name, "user"))
			ns -= pause;
		printf("#   %5.1f%% %5.0f  %s\n", 100.0 * hits[i].n / total,
		       ns, hits[i].name);
	}
}
