/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * perfmon_uread.h: a monitored thread reads its own counters without a
 * system call, through its context's control page (header only; see
 * "User-level reads" in Documentation/uapi.rst).
 *
 *	struct pfm_user_page *pg = pfm_uread_map(fd);
 *	uint64_t v;
 *
 *	if (pg && pfm_uread(pg, pmd, &v) == 0)
 *		... v is PMD pmd of the active set ...
 *	else
 *		... PFM_READ_PMDS ...
 *
 * Only the monitored thread may call pfm_uread() on a counting context:
 * the counter it reads is the one of the CPU it runs on, and the PMU
 * lets only that thread read it (arm64: the el0_access setting, other
 * threads trap with SIGILL; x86: user_rdpmc, others get SIGSEGV).  Any
 * thread may read a stopped context's values.
 *
 * Needs POSIX's clock_gettime() (_POSIX_C_SOURCE >= 199309L, which
 * compilers define unless asked for strict ISO C).
 */
#ifndef _PERFMON_PERFMON_UREAD_H
#define _PERFMON_PERFMON_UREAD_H

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <perfmon/perfmon_abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * pfm_uread_map() - map the control page of context @fd
 *
 * Return: the page (unmap with pfm_uread_unmap()), or NULL with errno
 * set: as mmap() (EINVAL for a system-wide context, EBADFD before
 * PFM_CREATE_CONTEXT), EPROTO for a page of another version.
 */
static inline struct pfm_user_page *pfm_uread_map(int fd)
{
	long size = sysconf(_SC_PAGESIZE);
	struct pfm_user_page *pg;

	pg = (struct pfm_user_page *)mmap(NULL, size, PROT_READ, MAP_SHARED,
					  fd, PFM_USER_PAGE_OFFSET);
	if (pg == MAP_FAILED)
		return NULL;
	if (pg->version != PFM_USER_PAGE_VERSION) {
		munmap(pg, size);
		errno = EPROTO;
		return NULL;
	}
	return pg;
}

static inline void pfm_uread_unmap(struct pfm_user_page *pg)
{
	munmap(pg, sysconf(_SC_PAGESIZE));
}

#if defined(__aarch64__)
#define PFM_UREAD_EVCNTR(n)						\
	case n:								\
		__asm__ volatile("mrs %0, pmevcntr" #n "_el0" : "=r"(v)); \
		break

/*
 * Hardware counter @hw of this CPU: PMEVCNTR<hw>_EL0, 31 PMCCNTR_EL0.
 * Always inline: the compiler would make a call of the 32-way switch,
 * 8 instructions a read more (make bench).
 */
static inline __attribute__((always_inline)) uint64_t
pfm_uread_counter(uint32_t hw)
{
	uint64_t v = 0;

	switch (hw) {
	PFM_UREAD_EVCNTR(0); PFM_UREAD_EVCNTR(1); PFM_UREAD_EVCNTR(2);
	PFM_UREAD_EVCNTR(3); PFM_UREAD_EVCNTR(4); PFM_UREAD_EVCNTR(5);
	PFM_UREAD_EVCNTR(6); PFM_UREAD_EVCNTR(7); PFM_UREAD_EVCNTR(8);
	PFM_UREAD_EVCNTR(9); PFM_UREAD_EVCNTR(10); PFM_UREAD_EVCNTR(11);
	PFM_UREAD_EVCNTR(12); PFM_UREAD_EVCNTR(13); PFM_UREAD_EVCNTR(14);
	PFM_UREAD_EVCNTR(15); PFM_UREAD_EVCNTR(16); PFM_UREAD_EVCNTR(17);
	PFM_UREAD_EVCNTR(18); PFM_UREAD_EVCNTR(19); PFM_UREAD_EVCNTR(20);
	PFM_UREAD_EVCNTR(21); PFM_UREAD_EVCNTR(22); PFM_UREAD_EVCNTR(23);
	PFM_UREAD_EVCNTR(24); PFM_UREAD_EVCNTR(25); PFM_UREAD_EVCNTR(26);
	PFM_UREAD_EVCNTR(27); PFM_UREAD_EVCNTR(28); PFM_UREAD_EVCNTR(29);
	PFM_UREAD_EVCNTR(30);
	case 31:
		__asm__ volatile("mrs %0, pmccntr_el0" : "=r"(v));
		break;
	}
	return v;
}

/*
 * pfm_uread()'s counter: the one of a page's index (1 + the counter;
 * not 0), through a table of "mrs; b" pairs indexed by index & 31, so
 * that index 32 (PMCCNTR_EL0) is entry 0.  The compiler's jump table for
 * the switch above spends 5 instructions more: a range check, a byte
 * table load, and the index's decrement.  Built for BTI, each entry
 * starts with a landing pad and takes 16 bytes.
 */
#ifdef __ARM_FEATURE_BTI_DEFAULT
#define PFM_UREAD_PAD		"hint #36\n\t"	/* bti j */
#define PFM_UREAD_ESHIFT	"4"
#define PFM_UREAD_ALIGN		".balign 16\n"
#else
#define PFM_UREAD_PAD		""
#define PFM_UREAD_ESHIFT	"3"
#define PFM_UREAD_ALIGN		""
#endif
#define PFM_UREAD_ENTRY(reg)						\
	PFM_UREAD_ALIGN PFM_UREAD_PAD "mrs %0, " reg "\n\tb 1f\n\t"
#define PFM_UREAD_EV4(a, b, c, d)					\
	PFM_UREAD_ENTRY("pmevcntr" #a "_el0")				\
	PFM_UREAD_ENTRY("pmevcntr" #b "_el0")				\
	PFM_UREAD_ENTRY("pmevcntr" #c "_el0")				\
	PFM_UREAD_ENTRY("pmevcntr" #d "_el0")

static inline __attribute__((always_inline)) uint64_t
pfm_uread_index(uint32_t index)
{
	uint64_t v, entry;

	__asm__ volatile("and	%w1, %w2, #31\n\t"
			 "adr	%0, 0f\n\t"
			 "add	%1, %0, %1, lsl #" PFM_UREAD_ESHIFT "\n\t"
			 "br	%1\n\t"
			 PFM_UREAD_ALIGN "0:\n\t"
			 PFM_UREAD_ENTRY("pmccntr_el0")
			 PFM_UREAD_ENTRY("pmevcntr0_el0")
			 PFM_UREAD_ENTRY("pmevcntr1_el0")
			 PFM_UREAD_ENTRY("pmevcntr2_el0")
			 PFM_UREAD_EV4(3, 4, 5, 6)
			 PFM_UREAD_EV4(7, 8, 9, 10)
			 PFM_UREAD_EV4(11, 12, 13, 14)
			 PFM_UREAD_EV4(15, 16, 17, 18)
			 PFM_UREAD_EV4(19, 20, 21, 22)
			 PFM_UREAD_EV4(23, 24, 25, 26)
			 PFM_UREAD_EV4(27, 28, 29, 30)
			 "1:"
			 : "=&r"(v), "=&r"(entry) : "r"(index));
	return v;
}
#define PFM_UREAD_HAVE_COUNTER	1
#elif defined(__x86_64__) || defined(__i386__)
/* Counter @hw of this CPU: rdpmc's number (fixed counters: bit 30). */
static inline uint64_t pfm_uread_counter(uint32_t hw)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(hw));
	return lo | (uint64_t)hi << 32;
}

/* pfm_uread()'s counter: the one of a page's index (not 0). */
static inline uint64_t pfm_uread_index(uint32_t index)
{
	return pfm_uread_counter(index - 1);
}
#define PFM_UREAD_HAVE_COUNTER	1
#else
/* No read instruction known here: an index makes pfm_uread() -EAGAIN. */
#define PFM_UREAD_HAVE_COUNTER	0
static inline uint64_t pfm_uread_counter(uint32_t hw)
{
	(void)hw;
	return 0;
}

static inline uint64_t pfm_uread_index(uint32_t index)
{
	(void)index;
	return 0;
}

#endif

/**
 * struct pfm_uread_value - a PMD read from the control page
 * @value: the 64-bit value, as PFM_READ_PMDS would give it then
 * @time_enabled: ns the context counted, all sets (multiplexing: the
 *                estimate of a PMD over the whole run is
 *                @value * @time_enabled / @time_running)
 * @time_running: ns the active set counted
 * @set_id: the active set, whose PMD @value is
 */
struct pfm_uread_value {
	uint64_t value;
	uint64_t time_enabled;
	uint64_t time_running;
	uint16_t set_id;
};

/* What one consistent pass over the page saw. */
struct pfm_uread_snap {
	struct pfm_user_pmd pmd;
	uint64_t raw;
	uint64_t time_enabled, time_running, time_stamp;
	uint32_t width;
	uint16_t set_id;
};

static inline void pfm_uread_snap(const struct pfm_user_page *pg,
				  unsigned int pmd, struct pfm_uread_snap *s,
				  int times)
{
	const volatile struct pfm_user_page *p = pg;
	uint32_t seq;

	for (;;) {
		seq = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE);
		if (seq & 1)
			continue;	/* the kernel rewrites it now */
		s->pmd.index = p->pmds[pmd].index;
		s->pmd.flags = p->pmds[pmd].flags;
		s->pmd.offset = p->pmds[pmd].offset;
		s->pmd.base = p->pmds[pmd].base;
		s->width = p->width;
		if (times) {
			s->set_id = p->set_id;
			s->time_enabled = p->time_enabled;
			s->time_running = p->time_running;
			s->time_stamp = p->time_stamp;
		}
		s->raw = 0;
		if (s->pmd.index && PFM_UREAD_HAVE_COUNTER)
			s->raw = pfm_uread_counter(s->pmd.index - 1);
		/*
		 * An update (context switch, overflow) is an exception on
		 * this thread's CPU: a counter read on either side of one
		 * meets a changed count.
		 */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pg->seq, __ATOMIC_RELAXED) == seq)
			return;
	}
}

/* The value a snapshot gives: 0, -ENOENT or -EAGAIN as pfm_uread(). */
static inline int pfm_uread_snap_value(const struct pfm_uread_snap *s,
				       uint64_t *value)
{
	uint64_t mask;

	if (!(s->pmd.flags & PFM_UPMD_USED))
		return -ENOENT;
	if (!s->pmd.index) {
		if (s->pmd.flags & PFM_UPMD_STALE)
			return -EAGAIN;
		*value = s->pmd.offset;
		return 0;
	}
	if (!PFM_UREAD_HAVE_COUNTER)
		return -EAGAIN;
	mask = s->width >= 64 ? ~0ULL : (1ULL << s->width) - 1;
	*value = s->pmd.offset + ((s->raw - s->pmd.base) & mask);
	return 0;
}

/**
 * pfm_uread() - PMD @pmd of the active set, read from the control page
 * @pg: the page (pfm_uread_map())
 * @pmd: the PMD number
 * @value: the 64-bit value, as PFM_READ_PMDS would give it now
 *
 * Return: 0; -ENOENT the PMD is not used in the active set (or beyond
 * the page); -EAGAIN it counts but cannot be read from user space here:
 * use PFM_READ_PMDS.
 */
static inline int pfm_uread(const struct pfm_user_page *pg, unsigned int pmd,
			    uint64_t *value)
{
	const struct pfm_user_pmd *e;
	uint32_t seq, idx, shift;
	uint64_t off, base, raw;
	struct pfm_uread_snap s;

	/* Entries past num_pmds stay zero: not used, -ENOENT below. */
	if (pmd >= PFM_USER_PAGE_PMDS)
		return -ENOENT;
	e = &pg->pmds[pmd];
	/*
	 * No test for an odd seq: the kernel rewrites the page only on
	 * this thread's CPU, in an interrupt or a switch of this thread,
	 * never while this loop runs; a rewrite between two reads of seq
	 * changes it.  (pfm_uread_snap() keeps the test, for any reader.)
	 * A counter index is only ever given to a used, readable PMD, so
	 * the flags are read only without one, by pfm_uread_snap().
	 */
	do {
		seq = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE);
		idx = __atomic_load_n(&e->index, __ATOMIC_RELAXED);
		if (!idx || !PFM_UREAD_HAVE_COUNTER)
			goto no_counter;
		off = __atomic_load_n(&e->offset, __ATOMIC_RELAXED);
		base = __atomic_load_n(&e->base, __ATOMIC_RELAXED);
		/* Set once by the kernel: a plain load. */
		shift = 64 - pg->width;
		raw = pfm_uread_index(idx);
		/* As pfm_uread_snap(): the counter read before the check. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pg->seq, __ATOMIC_RELAXED) != seq);
	/* Its width's bits of raw - base: a wrap since base counts. */
	*value = off + (((raw - base) << shift) >> shift);
	return 0;
no_counter:
	pfm_uread_snap(pg, pmd, &s, 0);
	return pfm_uread_snap_value(&s, value);
}

/**
 * pfm_uread_times() - pfm_uread() with the active set and the times
 * @pg: the page (pfm_uread_map())
 * @pmd: the PMD number
 * @v: value, times up to now (CLOCK_MONOTONIC, through the vDSO), set
 *
 * Return: as pfm_uread().
 */
static inline int pfm_uread_times(const struct pfm_user_page *pg,
				  unsigned int pmd, struct pfm_uread_value *v)
{
	struct pfm_uread_snap s;
	struct timespec ts;
	uint64_t now;

	if (pmd >= PFM_USER_PAGE_PMDS || pmd >= pg->num_pmds)
		return -ENOENT;
	pfm_uread_snap(pg, pmd, &s, 1);
	v->set_id = s.set_id;
	v->time_enabled = s.time_enabled;
	v->time_running = s.time_running;
	if (s.time_stamp && !clock_gettime(CLOCK_MONOTONIC, &ts)) {
		now = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
		if (now > s.time_stamp) {
			v->time_enabled += now - s.time_stamp;
			v->time_running += now - s.time_stamp;
		}
	}
	return pfm_uread_snap_value(&s, &v->value);
}

#ifdef __cplusplus
}
#endif

#endif /* _PERFMON_PERFMON_UREAD_H */
