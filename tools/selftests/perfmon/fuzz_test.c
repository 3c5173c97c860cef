// SPDX-License-Identifier: GPL-2.0
/*
 * A fuzzer for /dev/perfmon (Documentation/testing.rst, "Fuzzing").
 *
 * PFM_FUZZ_PROCS processes of PFM_FUZZ_THREADS threads each make random
 * open/ioctl/read/poll/mmap/munmap/close/fcntl/dup calls on a pool of
 * context fds per process, shared by its threads.  Most calls are built
 * valid and then have one argument mutated, so that the state machine
 * is walked and not only the argument checks.  Contexts count and
 * sample the software PMU's system calls at small periods, loaded on
 * the caller, its sibling threads, short-lived threads and children
 * that exit while monitored, or a CPU; fds are closed by one thread
 * while others use them.
 *
 * Each thread draws from its own splitmix64 stream derived from (seed,
 * process, thread): a seed replays the same per-thread call sequences,
 * but not their interleaving.
 *
 * The run fails on an errno outside the documented set, a process
 * killed by a signal, a hang (watchdog), perfmon's session counts not
 * back to their values before the run, or a fresh context that no
 * longer counts correctly afterwards.  Kernel reports are the rig's.
 */
#include <assert.h>
#include <dirent.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <linux/capability.h>
#include <linux/perfmon_dfl_smpl.h>
#include <linux/perfmon_ring.h>

#include "pfm_test.h"
#include "kselftest_harness.h"

#define FZ_MAX_PROCS	16
#define FZ_MAX_THREADS	16
#define FZ_SLOTS	16	/* context fds per process */
/*
 * PFM_FL_NOTIFY_BLOCK contexts live apart, at fds from FZ_BFD_MIN up
 * (the pool's fds are the lowest free ones, far below): no call that
 * loads takes them, so a fuzzing thread, which may hold a lock, is never
 * held waiting for a restart; only targets nobody waits for are.
 */
#define FZ_BSLOTS	4
#define FZ_BFD_MIN	512
#define FZ_MAPS		8	/* sampling buffer mappings per process */
#define FZ_KIDS		4	/* live target children per process */
#define FZ_SHORT	4	/* live short-lived target threads */
#define FZ_NERR		160	/* errno table size (Linux errnos < 134) */
#define FZ_ARENA	(256 * 1024)	/* request buffer per thread */
#define FZ_ALTSTACK	(64 * 1024)	/* fz_crash()'s stack per thread */
#define FZ_GRACE	60	/* watchdog: seconds after the time cap */
#define FZ_MEMLOCK	(2UL << 20)	/* RLIMIT_MEMLOCK per process */
#define FZ_NOBODY	65534
#define FZ_NKINDS	9	/* enum fz_kind */
/*
 * Calls a second a run makes at least (divided by the timing slack:
 * a busy host slows the guest).  Measured: 6,500 on x86_64 alone, 1,197
 * beside a build, 1,100 on arm64 alone and 130 with three guests and a
 * build on the host's two cores, 342 to 600 on the debug kernel at
 * slack 5; a fuzzer whose threads stall (blocked on a context or lock
 * for the run) makes next to none.
 */
#define FZ_RATE_MIN	100

/* glibc before 2.41 names it only in its private union */
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id	_sigev_un._tid
#endif

/* What the processes share (anonymous shared mapping). */
struct fz_shared {
	atomic_ulong calls;
	atomic_ulong err[FZ_NERR];
	atomic_ulong ovfl_msgs;
	atomic_ulong end_msgs;
	atomic_ulong throttle_msgs;
	atomic_ulong empty_reads;	/* read() 0: wake-up without message */
	atomic_ulong ring_bytes;	/* ring data consumed */
	atomic_ulong sigio;
	atomic_ulong kids;
	atomic_ulong suid_execs;		/* children that exec'd FZ_SUID_IMAGE */
	atomic_ulong short_threads;
	atomic_ulong tried[FZ_NKINDS];	/* calls of each enum fz_kind */
	atomic_ulong ok[FZ_NKINDS];	/* of those, the ones that succeeded */
	atomic_int unexpected;
};

/* Configuration, copied into every process by fork(). */
struct fz_conf {
	uint64_t seed;
	unsigned long calls;
	bool calls_required;		/* PFM_FUZZ_CALLS given: all of them */
	unsigned int seconds;
	int procs;
	int threads;
	uint64_t deadline;		/* CLOCK_MONOTONIC ns */
	bool soft;			/* pfm_soft: events are known */
	int ncpus;
	int npmcs, npmds, ncfgs;
	uint16_t pmcs[PFM_MAX_PMCS];	/* implemented PMC numbers */
	uint16_t pmds[PFM_MAX_PMDS];
	uint64_t pmd_mask;		/* implemented PMDs 0-63 */
	bool suid;			/* FZ_SUID_IMAGE is there to exec */
};

static struct fz_conf conf;
static struct fz_shared *sh;

/* A process: its fd pool, mappings and load targets. */
struct fz_proc {
	int idx;
	atomic_int fds[FZ_SLOTS];	/* -1: empty */
	atomic_int bfds[FZ_BSLOTS];	/* blocking contexts, -1: empty */
	/* last event written to PMC n of a slot: picks sane periods */
	atomic_uchar ev[FZ_SLOTS][4];
	pthread_mutex_t map_lock;	/* guards maps[] and their use */
	struct {
		void *addr;
		size_t len;
		bool ring;
	} maps[FZ_MAPS];
	/*
	 * Held for reading across a load on a child or short thread, for
	 * writing to reap one or let one end: a target id is never stale
	 * (reused by an unrelated task) while it is being loaded on.
	 */
	pthread_rwlock_t tgt_lock;
	pid_t kids[FZ_KIDS];		/* 0: free */
	pid_t shorts[FZ_SHORT];		/* 0: free */
	atomic_int tids[FZ_MAX_THREADS];
	atomic_int main_tid;
	atomic_int spinner_tid;
	atomic_int stop;
	atomic_int live_shorts;
};

/* A fuzzing thread. */
struct fz_thread {
	struct fz_proc *p;
	int idx;
	uint64_t rng;
	char *arena;			/* FZ_ARENA bytes, then a PROT_NONE page */
	char *guard;
	char *rdonly;			/* a read-only page */
	timer_t timer;			/* interrupts a blocking read() */
	void *altstack;			/* fz_crash()'s, FZ_ALTSTACK bytes */
	char mut[64];			/* the mutation applied, for reports */
	bool overrun;			/* array call: one entry more than built */
	struct pfarg_array arr;
	pthread_t thread;
};

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rnd(struct fz_thread *t)
{
	return splitmix64(&t->rng);
}

/* Uniform-enough in [0, n). */
static uint32_t rn(struct fz_thread *t, uint32_t n)
{
	return n ? (uint32_t)(rnd(t) % n) : 0;
}

/* True once in @n. */
static bool one_in(struct fz_thread *t, uint32_t n)
{
	return rn(t, n) == 0;
}

static const uint64_t boundary[] = {
	0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0x7fffffff,
	0x80000000, 0xffffffff, 0x100000000ull, 0x7fffffffffffffffull,
	0x8000000000000000ull, 0xffffffffffffffffull, 0xfffffffffffffff0ull,
	PFM_MAX_PMCS, PFM_MAX_ARRAY, PFM_MAX_ARRAY + 1, PFM_MAX_EVTSETS,
};

static uint64_t boundary_val(struct fz_thread *t)
{
	return one_in(t, 4) ? rnd(t) :
	       boundary[rn(t, ARRAY_SIZE(boundary))];
}

/* ---------------------------------------------------------------- */
/* Accounting                                                        */
/* ---------------------------------------------------------------- */

enum fz_kind { K_OPEN, K_IOCTL, K_READ, K_POLL, K_MMAP, K_MUNMAP, K_CLOSE,
	       K_FCNTL, K_DUP };

static const char *const kind_name[] = {
	"open", "ioctl", "read", "poll", "mmap", "munmap", "close", "fcntl",
	"dup",
};

static_assert(ARRAY_SIZE(kind_name) == FZ_NKINDS, "a kind_name per kind");

/*
 * The errnos each kind of call may return (uapi.rst, core/, the VFS
 * and mm paths in front of them).  Anything else is a bug.
 */
static bool errno_expected(enum fz_kind k, int e)
{
	switch (e) {
	case 0:
	case EBADF:	/* fd closed by a sibling thread, or a bad fd */
		return true;
	case EINVAL:
	case EFAULT:
		return k != K_CLOSE && k != K_DUP && k != K_OPEN;
	case EPERM:	/* mmap(): writable, format maps read-only */
	case EACCES:	/* mmap(): fd not open for reading */
	case ENODEV:	/* mmap(): no sampling buffer */
		return k == K_IOCTL || k == K_MMAP;
	case EBADFD:	/* mmap(): control page before PFM_CREATE_CONTEXT */
		return k == K_IOCTL || k == K_MMAP;
	case EBUSY: case ENOENT: case ENOTTY: case ESRCH:
		return k == K_IOCTL;
	case ENOSPC:	/* PFM_CREATE_EVTSETS past sets_per_ctx_max */
		return k == K_IOCTL;
	case ENOMEM:
		return k == K_IOCTL || k == K_MMAP || k == K_OPEN ||
		       k == K_FCNTL;
	case EAGAIN:
		return k == K_READ || k == K_MMAP;
	case EINTR:	/* the timer that ends a blocking read(), SIGIO */
		return k == K_READ || k == K_POLL;
	case EMFILE:	/* fd limit, or ctx_per_user_max */
		return k == K_OPEN || k == K_DUP;
	case ENFILE:
		return k == K_OPEN;
	case EOVERFLOW:	/* mmap() offset + length wraps */
		return k == K_MMAP;
	default:
		return false;
	}
}

/* Count one call that returned @ret (negative: failed with errno). */
static long done(struct fz_thread *t, enum fz_kind k, const char *what,
		 long fd, unsigned long arg, long ret)
{
	int e = ret < 0 ? errno : 0;

	atomic_fetch_add(&sh->calls, 1);
	atomic_fetch_add(&sh->err[e < FZ_NERR ? e : FZ_NERR - 1], 1);
	atomic_fetch_add(&sh->tried[k], 1);
	if (!e)
		atomic_fetch_add(&sh->ok[k], 1);
	if (!errno_expected(k, e)) {
		atomic_fetch_add(&sh->unexpected, 1);
		fprintf(stderr,
			"# UNEXPECTED errno %d (%s) from %s %s fd=%ld arg=%#lx mutation=%s (proc %d thread %d)\n",
			e, strerror(e), kind_name[k], what, fd, arg,
			t->mut[0] ? t->mut : "none", t->p->idx, t->idx);
	}
	errno = e;
	return ret;
}

static bool time_up(void)
{
	return atomic_load(&sh->calls) >= conf.calls ||
	       clock_ns(CLOCK_MONOTONIC) >= conf.deadline;
}

/* ---------------------------------------------------------------- */
/* Arguments                                                          */
/* ---------------------------------------------------------------- */

/* A context fd of the pool, sometimes an empty slot or a bad fd. */
static int pick_fd(struct fz_thread *t, int *slot)
{
	*slot = rn(t, FZ_SLOTS);
	if (one_in(t, 64))
		return one_in(t, 2) ? -1 : 4000 + rn(t, 64); /* never open */
	return atomic_load(&t->p->fds[*slot]);
}

/* Any context fd, a blocking one now and then: for calls that never load. */
static int pick_any_fd(struct fz_thread *t, int *slot)
{
	if (!one_in(t, 8))
		return pick_fd(t, slot);
	*slot = -1;
	return atomic_load(&t->p->bfds[rn(t, FZ_BSLOTS)]);
}

/* Put @fd in its pool (by its number), or close it when that is full. */
static void pool_put(struct fz_thread *t, int fd)
{
	atomic_int *pool = fd >= FZ_BFD_MIN ? t->p->bfds : t->p->fds;
	int n = fd >= FZ_BFD_MIN ? FZ_BSLOTS : FZ_SLOTS, s = rn(t, n), i;
	int exp = -1;

	for (i = 0; i < n; i++, exp = -1)
		if (atomic_compare_exchange_strong(&pool[(s + i) % n], &exp,
						   fd))
			return;
	done(t, K_CLOSE, "pool full", fd, 0, close(fd));
}

/*
 * A pointer the kernel must refuse: NULL, -1, our own guard page (the
 * kernel's copy faults, nothing of ours is touched), a read-only page
 * (copies in work, copies out fault), a kernel address.
 */
static uint64_t bad_ptr(struct fz_thread *t, bool as_u64)
{
	switch (rn(t, as_u64 || sizeof(void *) == 8 ? 5 : 4)) {
	case 0:
		return 0;
	case 1:
		return (uintptr_t)-1;
	case 2:
		return (uintptr_t)t->guard;
	case 3:
		return (uintptr_t)t->rdonly;
	default:
		return 0xffff800000000000ull;
	}
}

/*
 * Where to build an array of @size bytes: at the arena's start, or at
 * its end, touching the guard page.  There, t->overrun sometimes makes
 * the call name one entry more than was built: the kernel's copy faults
 * half-way through the array (and nothing of ours is written).
 */
static void *place(struct fz_thread *t, size_t size)
{
	t->overrun = false;
	if (size > FZ_ARENA || !one_in(t, 12))
		return t->arena;
	t->overrun = one_in(t, 3);
	return t->arena + FZ_ARENA - size;
}

/*
 * One mutation of a valid request of @size bytes at @p (one time in
 * four): a random byte, or a 32- or 64-bit field set to a boundary
 * value.  Recorded in t->mut for reports.
 */
static void mutate(struct fz_thread *t, void *p, size_t size)
{
	size_t off;
	uint64_t v;

	t->mut[0] = '\0';
	if (!size || !one_in(t, 4))
		return;
	v = boundary_val(t);
	switch (rn(t, 3)) {
	case 0:
		off = rn(t, size);
		((uint8_t *)p)[off] = (uint8_t)v;
		snprintf(t->mut, sizeof(t->mut), "byte %zu=%#x", off,
			 (uint8_t)v);
		break;
	case 1:
		off = rn(t, size / 4) * 4;
		memcpy((char *)p + off, &(uint32_t){ (uint32_t)v }, 4);
		snprintf(t->mut, sizeof(t->mut), "u32 %zu=%#x", off,
			 (uint32_t)v);
		break;
	default:
		if (size < 8)
			return;
		off = rn(t, size / 8) * 8;
		memcpy((char *)p + off, &v, 8);
		snprintf(t->mut, sizeof(t->mut), "u64 %zu=%#llx", off,
			 (unsigned long long)v);
	}
}

/* An element count: mostly small, sometimes 0, the maximum or beyond. */
static uint32_t pick_count(struct fz_thread *t, uint32_t small)
{
	switch (rn(t, 64)) {
	case 0:
		return 0;
	case 1:
		return PFM_MAX_ARRAY;
	case 2:
		return PFM_MAX_ARRAY + 1;
	case 3:
		return (uint32_t)boundary_val(t);
	default:
		return 1 + rn(t, small);
	}
}

static uint16_t pick_set(struct fz_thread *t)
{
	if (one_in(t, 32))
		return (uint16_t)rnd(t);
	return one_in(t, 2) ? 0 : (uint16_t)rn(t, 4);
}

static uint16_t pick_pmc(struct fz_thread *t)
{
	if (one_in(t, 16) || !conf.npmcs)
		return one_in(t, 2) ? (uint16_t)rn(t, PFM_MAX_PMCS + 8) :
		       (uint16_t)rnd(t);
	return conf.pmcs[rn(t, conf.npmcs)];
}

static uint16_t pick_pmd(struct fz_thread *t)
{
	if (one_in(t, 16) || !conf.npmds)
		return one_in(t, 2) ? (uint16_t)rn(t, PFM_MAX_PMDS + 8) :
		       (uint16_t)rnd(t);
	return conf.pmds[rn(t, conf.npmds)];
}

/* A PMC value: a software PMU event, mostly the system-call one. */
static uint64_t pick_event(struct fz_thread *t)
{
	static const uint8_t ev[] = {
		SOFT_EV_SYSCALLS, SOFT_EV_SYSCALLS, SOFT_EV_SYSCALLS,
		SOFT_EV_CTX_SWITCHES, SOFT_EV_TASK_CLOCK, SOFT_EV_CPU_CLOCK,
	};

	if (!conf.soft || one_in(t, 16))
		return one_in(t, 2) ? rn(t, 256) : rnd(t);
	return ev[rn(t, sizeof(ev))];
}

static bool is_clock(unsigned int ev)
{
	return ev == SOFT_EV_TASK_CLOCK || ev == SOFT_EV_CPU_CLOCK;
}

/*
 * A counter start value, as -period: tens of system calls for the
 * counting events, at least 200 us for the clocks (smaller periods
 * would fire the clocks' timer every few ns).
 */
static uint64_t pick_period(struct fz_thread *t, unsigned int ev)
{
	if (one_in(t, 8))
		return one_in(t, 2) ? 0 : rnd(t);
	/*
	 * Tiny periods, an overflow every 1 to 16 events: the software
	 * PMU's clocks fire at most every 10 us; on hardware such a storm
	 * has no bound yet (no interrupt throttling).
	 */
	if (conf.soft && one_in(t, 16))
		return -(uint64_t)(1 + rn(t, 16));
	if (is_clock(ev) || !conf.soft)
		return -(uint64_t)(200000 + rn(t, 5000000));
	return -(uint64_t)(8 + rn(t, 500));
}

/* The event last written to PMC @num of @slot (advisory, racy). */
static unsigned int slot_event(struct fz_thread *t, int slot, uint16_t num)
{
	if (slot < 0 || num >= 4)
		return SOFT_EV_TASK_CLOCK;
	return atomic_load(&t->p->ev[slot][num]);
}

/* ---------------------------------------------------------------- */
/* Calls                                                              */
/* ---------------------------------------------------------------- */

static long fz_ioctl(struct fz_thread *t, const char *what, int fd,
		     unsigned long cmd, void *arg)
{
	return done(t, K_IOCTL, what, fd, (uintptr_t)arg,
		    ioctl(fd, cmd, arg));
}

/*
 * An array call on @fd: @count entries of @esize bytes already built at
 * @arr, or a bad pointer now and then.
 */
static long fz_array(struct fz_thread *t, const char *what, int fd,
		     unsigned long cmd, void *arr, uint32_t count)
{
	struct pfarg_array *a = &t->arr;

	memset(a, 0, sizeof(*a));
	a->arr_ptr = (uintptr_t)arr;
	a->arr_count = count + (t->overrun && count < PFM_MAX_ARRAY);
	if (one_in(t, 32))
		a->arr_ptr = bad_ptr(t, true);
	if (one_in(t, 64))
		a->arr_reserved = (uint32_t)boundary_val(t);
	if (one_in(t, 64))
		return fz_ioctl(t, what, fd, cmd, (void *)(uintptr_t)
				bad_ptr(t, false));
	return fz_ioctl(t, what, fd, cmd, a);
}

/* Room for @count entries of @esize (the whole arena for big ones). */
static void *arr_buf(struct fz_thread *t, uint32_t count, size_t esize,
		     uint32_t *n)
{
	/* entries built: at least one, for mutate() */
	*n = count > PFM_MAX_ARRAY || !count ? 1 : count;
	return place(t, (size_t)*n * esize);
}

static void op_open(struct fz_thread *t)
{
	int flags = O_RDWR | O_CLOEXEC, fd;

	if (one_in(t, 2))
		flags |= O_NONBLOCK;
	if (one_in(t, 32))
		flags = (flags & ~O_RDWR) | (one_in(t, 2) ? O_RDONLY : O_WRONLY);
	fd = done(t, K_OPEN, "/dev/perfmon", -1, flags,
		  open("/dev/perfmon", flags));
	if (fd >= 0)
		pool_put(t, fd);
}

static void op_close(struct fz_thread *t)
{
	int fd = one_in(t, 8) ?
		 atomic_exchange(&t->p->bfds[rn(t, FZ_BSLOTS)], -1) :
		 atomic_exchange(&t->p->fds[rn(t, FZ_SLOTS)], -1);

	if (fd >= 0)
		done(t, K_CLOSE, "", fd, 0, close(fd));
}

/* A second fd on the same context: closing one keeps the context. */
static void op_dup(struct fz_thread *t)
{
	int slot, fd = pick_fd(t, &slot), nfd;

	nfd = done(t, K_DUP, "", fd, 0, fcntl(fd, F_DUPFD_CLOEXEC, 0));
	if (nfd >= 0)
		pool_put(t, nfd);
}

static uint32_t pick_ctx_flags(struct fz_thread *t, bool may_block)
{
	uint32_t f = 0;

	if (one_in(t, 4))
		f |= PFM_FL_OVFL_NO_MSG;
	if (may_block && one_in(t, 8))
		f |= PFM_FL_NOTIFY_BLOCK;
	if (one_in(t, 24))
		f |= PFM_FL_SYSTEM_WIDE;
	if (one_in(t, 64))
		f = (uint32_t)rnd(t);
	return f;
}

/* The sampling format's argument: valid sizes mostly, some refused. */
static size_t fmt_arg(struct fz_thread *t, struct pfarg_create *c, void *arg)
{
	static const uint32_t pages[] = { 1, 2, 4, 8, 16, 3, 0,
					  1U << 16, 1U << 17 };
	struct pfm_ring_smpl_arg *r = arg;
	struct pfm_dfl_smpl_arg *d = arg;

	switch (rn(t, 5)) {
	case 0:
	case 1:
		return 0;
	case 2:
	case 3:
		strcpy(c->create_fmt_name, one_in(t, 2) ? PFM_DFL_SMPL_NAME :
		       PFM_RING_SMPL_NAME);
		break;
	default:
		strcpy(c->create_fmt_name, one_in(t, 64) ? "nosuch" :
		       PFM_RING_SMPL_NAME);
	}
	if (c->create_fmt_name[0] == 'd') {
		memset(d, 0, sizeof(*d));
		d->buf_size = one_in(t, 16) ? boundary_val(t) :
			      512 + rn(t, 64 * 1024);
		return sizeof(*d);
	}
	memset(r, 0, sizeof(*r));
	r->data_pages = one_in(t, 8) ? pages[rn(t, 9)] : 1U << rn(t, 4);
	r->flags = one_in(t, 4) ? PFM_RING_OVERWRITE : 0;
	r->wakeup_events = one_in(t, 2) ? rn(t, 16) : 0;
	r->wakeup_bytes = one_in(t, 4) ? rn(t, 8192) : 0;
	return sizeof(*r);
}

static long do_create(struct fz_thread *t, int fd, uint32_t flags)
{
	struct pfarg_create *c = (void *)t->arena;
	void *arg = t->arena + 1024;
	size_t asz;

	memset(c, 0, sizeof(*c));
	c->ctx.ctx_flags = flags;
	asz = fmt_arg(t, c, arg);
	if (asz) {
		c->create_fmt_arg = (uintptr_t)arg;
		c->create_fmt_arg_size = asz;
		if (one_in(t, 32))
			c->create_fmt_arg = bad_ptr(t, true);
		if (one_in(t, 32))
			c->create_fmt_arg_size = (uint32_t)boundary_val(t);
		mutate(t, arg, asz);
	}
	if (!t->mut[0])
		mutate(t, c, sizeof(*c));
	/*
	 * A blocking context only from op_recipe(), which loads it on a
	 * target nobody waits for (see pick_target())
	 */
	if (!(flags & PFM_FL_NOTIFY_BLOCK))
		c->ctx.ctx_flags &= ~PFM_FL_NOTIFY_BLOCK;
	if (one_in(t, 64))
		c = (void *)(uintptr_t)bad_ptr(t, false);
	return fz_ioctl(t, "CREATE_CONTEXT", fd, PFM_CREATE_CONTEXT, c);
}

static void op_create(struct fz_thread *t)
{
	int slot, fd = pick_fd(t, &slot);

	do_create(t, fd, pick_ctx_flags(t, false));
}

static long do_write_pmcs(struct fz_thread *t, int fd, int slot,
			  uint32_t count)
{
	struct pfarg_pmc *pc;
	uint32_t i, n;

	pc = arr_buf(t, count, sizeof(*pc), &n);
	memset(pc, 0, n * sizeof(*pc));
	for (i = 0; i < n; i++) {
		pc[i].reg_num = n > 16 ? i % PFM_MAX_PMCS : pick_pmc(t);
		pc[i].reg_set = n > 16 ? 0 : pick_set(t);
		pc[i].reg_value = pick_event(t);
		if (one_in(t, 32))
			pc[i].reg_flags = PFM_REGFL_NO_EMUL64;
		if (slot >= 0 && pc[i].reg_num < 4)
			atomic_store(&t->p->ev[slot][pc[i].reg_num],
				     (uint8_t)pc[i].reg_value);
	}
	mutate(t, &pc[rn(t, n)], sizeof(*pc));
	return fz_array(t, "WRITE_PMCS", fd, PFM_WRITE_PMCS, pc, count);
}

static void op_write_pmcs(struct fz_thread *t)
{
	int slot, fd = pick_fd(t, &slot);

	do_write_pmcs(t, fd, slot, pick_count(t, 4));
}

/* A PMD write: a period, maybe a notification, samples, triggers. */
static void fill_pmd(struct fz_thread *t, struct pfarg_pmd *pd, int slot)
{
	uint64_t per;

	pd->reg_num = pick_pmd(t);
	pd->reg_set = pick_set(t);
	per = pick_period(t, slot_event(t, slot, pd->reg_num));
	pd->reg_value = per;
	pd->reg_short_reset = per;
	pd->reg_long_reset = per;
	if (one_in(t, 2))
		pd->reg_flags |= PFM_REGFL_OVFL_NOTIFY;
	if (one_in(t, 8)) {
		pd->reg_flags |= PFM_REGFL_RANDOM;
		pd->reg_random_mask = rn(t, 256);
	}
	if (one_in(t, 8))
		pd->reg_flags |= PFM_REGFL_CALLCHAIN;
	if (one_in(t, 8))
		pd->reg_flags |= PFM_REGFL_KCALLCHAIN;
	if (one_in(t, 8)) {
		pd->reg_flags |= PFM_REGFL_FREQ;
		pd->reg_freq = 1 + rn(t, 20000);
	}
	if (one_in(t, 2))
		pd->reg_smpl_pmds[0] = rnd(t) & conf.pmd_mask;
	if (one_in(t, 8))
		pd->reg_reset_pmds[0] = rnd(t) & conf.pmd_mask;
	if (one_in(t, 8))
		pd->reg_ovfl_switch_cnt = rn(t, 4);
	if (one_in(t, 16))
		pd->reg_start_pmds = rnd(t) & conf.pmd_mask;
	if (one_in(t, 16))
		pd->reg_stop_pmds = rnd(t) & conf.pmd_mask;
	pd->reg_smpl_eventid = rnd(t);
}

static void op_write_pmds(struct fz_thread *t)
{
	int slot, fd = pick_fd(t, &slot);
	uint32_t count = pick_count(t, 4), i, n;
	struct pfarg_pmd *pd = arr_buf(t, count, sizeof(*pd), &n);

	memset(pd, 0, n * sizeof(*pd));
	for (i = 0; i < n; i++) {
		if (n > 16)
			pd[i].reg_num = i % PFM_MAX_PMDS;
		else
			fill_pmd(t, &pd[i], slot);
	}
	mutate(t, &pd[rn(t, n)], sizeof(*pd));
	fz_array(t, "WRITE_PMDS", fd, PFM_WRITE_PMDS, pd, count);
}

static void op_read_pmds(struct fz_thread *t)
{
	int slot, fd = pick_fd(t, &slot);
	uint32_t count = pick_count(t, 4), i, n;
	struct pfarg_pmd *pd = arr_buf(t, count, sizeof(*pd), &n);

	memset(pd, 0, n * sizeof(*pd));
	for (i = 0; i < n; i++) {
		pd[i].reg_num = n > 16 ? i % PFM_MAX_PMDS : pick_pmd(t);
		pd[i].reg_set = n > 16 ? 0 : pick_set(t);
	}
	mutate(t, &pd[rn(t, n)], sizeof(*pd));
	fz_array(t, "READ_PMDS", fd, PFM_READ_PMDS, pd, count);
}

/* Is @p in this thread's arena, its guard page or its read-only page? */
static bool in_window(struct fz_thread *t, uint64_t p)
{
	uintptr_t lo = (uintptr_t)t->arena;

	return p >= lo && p < lo + FZ_ARENA + 2 * page_size();
}

/*
 * A pointer the kernel writes through, which mutate() may have moved
 * from what was @built: it must stay in this thread's window (or be one
 * of bad_ptr()'s).  A byte moved puts it anywhere within 16 MiB; in a
 * 120 s run the kernel wrote PMD values, as asked, 5 times there: into
 * a sibling's arena or a thread's stack.  A write over a live frame or
 * malloc's data would kill the fuzzer with a SIGSEGV no perfmon call
 * made, and the memory is the fuzzer's, not the kernel's, to defend.
 */
static void confine_out_ptr(struct fz_thread *t, __u64 *p, uint64_t built)
{
	if (*p == built || in_window(t, *p))
		return;
	*p = bad_ptr(t, true);
	snprintf(t->mut, sizeof(t->mut), "out pointer=%#llx",
		 (unsigned long long)*p);
}

/*
 * PFM_READ_VALUES: a few PMDs from one the program uses, the values
 * placed where they may meet the arena's guard page or a bad pointer.
 */
static void op_read_values(struct fz_thread *t)
{
	int slot, fd = pick_fd(t, &slot);
	struct pfarg_read_values *rv = (void *)t->arena, req;
	size_t room = 64 * sizeof(uint64_t);
	uint16_t pmd = pick_pmd(t);
	uint64_t built;

	memset(rv, 0, sizeof(*rv));
	rv->rv_first = one_in(t, 2) ? pmd : pmd & ~63;
	rv->rv_pmds = one_in(t, 8) ? rnd(t) :
		      1ull << (pmd - rv->rv_first) | (one_in(t, 2) ? rnd(t) & 0xf : 0);
	rv->rv_set = pick_set(t);
	rv->rv_values = (uintptr_t)place(t, room + sizeof(*rv)) + sizeof(*rv);
	if (t->overrun)		/* the last values fall on the guard page */
		rv->rv_values += 8 * (1 + rn(t, 8));
	if (one_in(t, 32))
		rv->rv_values = bad_ptr(t, true);
	built = rv->rv_values;
	mutate(t, rv, sizeof(*rv));
	confine_out_ptr(t, &rv->rv_values, built);
	/*
	 * Checked as sent: a pointer moved into the request itself has the
	 * kernel write the values over it, as asked (a PMD's 0 over
	 * rv_values, once in a 20 s run, read back as "wrote at 0").
	 */
	req = *rv;
	if (fz_ioctl(t, "READ_VALUES", fd, PFM_READ_VALUES, rv) >= 0 &&
	    req.rv_pmds && !in_window(t, req.rv_values)) {
		atomic_fetch_add(&sh->unexpected, 1);
		fprintf(stderr, "# UNEXPECTED: READ_VALUES wrote at %#llx\n",
			(unsigned long long)req.rv_values);
	}
}

/* ---------------------------------------------------------------- */
/* Load targets                                                       */
/* ---------------------------------------------------------------- */

/*
 * A setuid-root copy of this program (made when the fuzzer runs as
 * root): a child exec'd into it makes FZ_EXEC_ARG's count of calls, so
 * that the exec of a privileged image lands at random points of the
 * contexts loaded on it (Documentation/security.rst, "Exec of a
 * privileged image").
 */
#define FZ_SUID_IMAGE	"/tmp/pfm_fuzz_suid"
#define FZ_EXEC_ARG	"--pfm-fuzz-exec"

static pfm_attr(constructor) void fz_exec_helper(int argc, char **argv)
{
	unsigned long n;

	if (argc != 3 || strcmp(argv[1], FZ_EXEC_ARG))
		return;
	for (n = strtoul(argv[2], NULL, 10); n; n--)
		syscall(SYS_getppid);
	_exit(0);
}

/*
 * Child target: system calls for a while, then exit while monitored;
 * one in four execs the setuid image half way.
 */
static void kid_body(unsigned int n)
{
	char arg[16];
	bool exec = conf.suid && n % 4 == 0;

	/*
	 * Hold none of the parent's contexts: one loaded on this child
	 * with PFM_FL_NOTIFY_BLOCK is released when the parent closes it.
	 */
	syscall(SYS_close_range, 3, ~0U, 0);
	/* the image makes the second half of the calls */
	snprintf(arg, sizeof(arg), "%u", n - n / 2);
	if (exec)
		n /= 2;
	while (n--)
		syscall(SYS_getppid);
	if (exec) {
		atomic_fetch_add(&sh->suid_execs, 1);
		execl(FZ_SUID_IMAGE, FZ_SUID_IMAGE, FZ_EXEC_ARG, arg, NULL);
	}
	_exit(0);
}

static void op_spawn_kid(struct fz_thread *t)
{
	struct fz_proc *p = t->p;
	unsigned int n = 100 + rn(t, 5000);
	int i;
	pid_t pid;

	if (!one_in(t, 4))	/* a fork costs a hundred calls */
		return;
	pthread_rwlock_wrlock(&p->tgt_lock);
	for (i = 0; i < FZ_KIDS && p->kids[i]; i++)
		;
	if (i < FZ_KIDS) {
		pid = fork();
		if (pid == 0)
			kid_body(n);
		if (pid > 0) {
			p->kids[i] = pid;
			atomic_fetch_add(&sh->kids, 1);
		}
	}
	pthread_rwlock_unlock(&p->tgt_lock);
}

/* Did a child die of a signal?  Only NOTIFY_BLOCK may stop it, not kill. */
static void check_kid_status(struct fz_thread *t, pid_t pid, int status)
{
	if (WIFSIGNALED(status)) {
		atomic_fetch_add(&sh->unexpected, 1);
		fprintf(stderr, "# UNEXPECTED: target child %d killed by signal %d (proc %d)\n",
			pid, WTERMSIG(status), t ? t->p->idx : -1);
	}
}

/* Reap the children that ended (all of them, waiting, when @wait). */
static void reap_kids(struct fz_thread *t, struct fz_proc *p, bool wait)
{
	int i, status;
	pid_t r;

	pthread_rwlock_wrlock(&p->tgt_lock);
	for (i = 0; i < FZ_KIDS; i++) {
		if (!p->kids[i])
			continue;
		r = waitpid(p->kids[i], &status, wait ? 0 : WNOHANG);
		if (r == p->kids[i]) {
			check_kid_status(t, r, status);
			p->kids[i] = 0;
		}
	}
	pthread_rwlock_unlock(&p->tgt_lock);
}

static void *short_body(void *arg)
{
	struct fz_proc *p = arg;
	unsigned int n = 50 + (unsigned int)(clock_ns(CLOCK_MONOTONIC) % 2000);
	pid_t me = gettid();
	int i;

	pthread_rwlock_wrlock(&p->tgt_lock);
	for (i = 0; i < FZ_SHORT && p->shorts[i]; i++)
		;
	if (i < FZ_SHORT)
		p->shorts[i] = me;
	pthread_rwlock_unlock(&p->tgt_lock);
	while (n--)
		syscall(SYS_getppid);
	/* not a target any more before it may be reused */
	pthread_rwlock_wrlock(&p->tgt_lock);
	for (i = 0; i < FZ_SHORT; i++)
		if (p->shorts[i] == me)
			p->shorts[i] = 0;
	pthread_rwlock_unlock(&p->tgt_lock);
	atomic_fetch_sub(&p->live_shorts, 1);
	return NULL;
}

static void op_spawn_thread(struct fz_thread *t)
{
	struct fz_proc *p = t->p;
	pthread_attr_t attr;
	pthread_t th;

	if (!one_in(t, 2))
		return;
	if (atomic_fetch_add(&p->live_shorts, 1) >= FZ_SHORT) {
		atomic_fetch_sub(&p->live_shorts, 1);
		return;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, short_body, p))
		atomic_fetch_sub(&p->live_shorts, 1);
	else
		atomic_fetch_add(&sh->short_threads, 1);
	pthread_attr_destroy(&attr);
}

/*
 * A load target; the caller holds tgt_lock for reading.  @blocking
 * contexts only go to targets nobody waits for (children, short
 * threads, the spinner): a fuzzing thread must not be held.
 */
static uint32_t pick_target(struct fz_thread *t, uint32_t flags)
{
	struct fz_proc *p = t->p;
	uint32_t r = rn(t, 16);

	if (flags & PFM_FL_SYSTEM_WIDE)
		return r < 14 ? rn(t, conf.ncpus) : (uint32_t)boundary_val(t);
	if (flags & PFM_FL_NOTIFY_BLOCK && r < 9)
		r = 9 + rn(t, 6);
	if (r < 4)
		return gettid();
	if (r < 7)
		return atomic_load(&p->tids[rn(t, conf.threads)]);
	if (r < 9)
		return atomic_load(&p->main_tid);
	if (r < 10)
		return atomic_load(&p->spinner_tid);
	if (r < 12)
		return p->kids[rn(t, FZ_KIDS)];
	if (r < 14)
		return p->shorts[rn(t, FZ_SHORT)];
	/* never a live task: 0, or above any pid_max */
	return one_in(t, 2) ? 0 : 0x40000000u + rn(t, 1000);
}

static long do_load(struct fz_thread *t, int fd, uint32_t flags)
{
	struct pfarg_load *ld = (void *)t->arena;
	long ret;

	memset(ld, 0, sizeof(*ld));
	ld->load_set = one_in(t, 8) ? pick_set(t) : 0;
	pthread_rwlock_rdlock(&t->p->tgt_lock);
	ld->load_pid = pick_target(t, flags);
	/* never load_pid: a mutated one could name an unrelated task */
	mutate(t, (char *)ld + 4, sizeof(*ld) - 4);
	ret = fz_ioctl(t, "LOAD_CONTEXT", fd, PFM_LOAD_CONTEXT,
		       one_in(t, 64) ? (void *)(uintptr_t)bad_ptr(t, false) :
		       ld);
	pthread_rwlock_unlock(&t->p->tgt_lock);
	return ret;
}

static void op_load(struct fz_thread *t)
{
	int slot, fd = pick_fd(t, &slot);

	/* the context's flags are unknown here: system-wide one in 8 */
	do_load(t, fd, one_in(t, 8) ? PFM_FL_SYSTEM_WIDE : 0);
}

static long do_start(struct fz_thread *t, int fd)
{
	struct pfarg_start *st = (void *)t->arena;

	memset(st, 0, sizeof(*st));
	st->start_set = one_in(t, 8) ? pick_set(t) : 0;
	mutate(t, st, sizeof(*st));
	return fz_ioctl(t, "START", fd, PFM_START,
			one_in(t, 64) ? (void *)(uintptr_t)bad_ptr(t, false) :
			st);
}

static void op_start(struct fz_thread *t)
{
	int slot;

	do_start(t, pick_fd(t, &slot));
}

/* STOP, RESTART, UNLOAD: no argument (a random one is ignored). */
static void op_noarg(struct fz_thread *t)
{
	static const struct {
		unsigned long cmd;
		const char *name;
	} c[] = {
		{ PFM_STOP, "STOP" }, { PFM_RESTART, "RESTART" },
		{ PFM_RESTART, "RESTART" }, { PFM_UNLOAD_CONTEXT, "UNLOAD" },
	};
	int slot, fd = pick_any_fd(t, &slot), i = rn(t, 4);

	t->mut[0] = '\0';
	fz_ioctl(t, c[i].name, fd, c[i].cmd,
		 (void *)(uintptr_t)(one_in(t, 8) ? bad_ptr(t, false) : 0));
}

static void op_sets(struct fz_thread *t)
{
	static const struct {
		unsigned long cmd;
		const char *name;
	} c[] = {
		{ PFM_CREATE_EVTSETS, "CREATE_EVTSETS" },
		{ PFM_DELETE_EVTSETS, "DELETE_EVTSETS" },
	};
	int slot, fd = pick_fd(t, &slot), k = rn(t, 2);
	uint32_t count = pick_count(t, 3), i, n;
	struct pfarg_setdesc *sd = arr_buf(t, count, sizeof(*sd), &n);

	memset(sd, 0, n * sizeof(*sd));
	for (i = 0; i < n; i++) {
		/* a big array names sets 0-63 only: bounded memory */
		sd[i].set_id = n > 16 ? rn(t, 64) : pick_set(t);
		if (one_in(t, 3)) {
			sd[i].set_flags = PFM_SETFL_TIME_SWITCH;
			sd[i].set_timeout = 100000 + rn(t, 10000000);
		} else if (one_in(t, 3)) {
			sd[i].set_flags = PFM_SETFL_OVFL_SWITCH;
		}
	}
	mutate(t, &sd[rn(t, n)], sizeof(*sd));
	fz_array(t, c[k].name, fd, c[k].cmd, sd, count);
}

static void op_getinfo_sets(struct fz_thread *t)
{
	int slot, fd = pick_fd(t, &slot);
	uint32_t count = pick_count(t, 4), i, n;
	struct pfarg_setinfo *si = arr_buf(t, count, sizeof(*si), &n);

	memset(si, 0, n * sizeof(*si));
	for (i = 0; i < n; i++)
		si[i].set_id = n > 16 ? i : pick_set(t);
	mutate(t, &si[rn(t, n)], sizeof(*si));
	fz_array(t, "GETINFO_EVTSETS", fd, PFM_GETINFO_EVTSETS, si, count);
}

static void op_drv_config(struct fz_thread *t)
{
	int slot, fd = pick_fd(t, &slot), set = one_in(t, 2);
	uint32_t count = pick_count(t, 2), i, n;
	struct pfarg_drv_cfg *dc = arr_buf(t, count, sizeof(*dc), &n);

	memset(dc, 0, n * sizeof(*dc));
	for (i = 0; i < n; i++) {
		dc[i].cfg_num = one_in(t, 8) ? rn(t, PFM_MAX_DRV_CFG + 2) :
				rn(t, conf.ncfgs ? conf.ncfgs : 1);
		/* pfm_soft's clock_unit_ns: 1 to 10^9 (small keeps counts) */
		dc[i].cfg_value = one_in(t, 4) ? boundary_val(t) :
				  1 + rn(t, 1000);
	}
	mutate(t, &dc[rn(t, n)], sizeof(*dc));
	fz_array(t, set ? "SET_DRV_CONFIG" : "GET_DRV_CONFIG", fd,
		 set ? PFM_SET_DRV_CONFIG : PFM_GET_DRV_CONFIG, dc, count);
}

/* The calls that need no context, and the reg info array. */
static void op_info(struct fz_thread *t)
{
	int slot, fd = pick_fd(t, &slot);
	uint32_t count, i, n;
	struct pfarg_reg_info *ri;
	void *p = t->arena;

	switch (rn(t, 3)) {
	case 0:
		t->mut[0] = '\0';
		if (one_in(t, 16))
			p = (void *)(uintptr_t)bad_ptr(t, false);
		fz_ioctl(t, "GET_VERSION", fd, PFM_GET_VERSION, p);
		return;
	case 1:
		t->mut[0] = '\0';
		if (one_in(t, 16))
			p = (void *)(uintptr_t)bad_ptr(t, false);
		fz_ioctl(t, "GET_PMU_INFO", fd, PFM_GET_PMU_INFO, p);
		return;
	}
	count = pick_count(t, 4);
	ri = arr_buf(t, count, sizeof(*ri), &n);
	memset(ri, 0, n * sizeof(*ri));
	for (i = 0; i < n; i++) {
		ri[i].info_num = n > 16 ? i % 256 : rn(t, 260);
		ri[i].info_kind = 1 + rn(t, one_in(t, 8) ? 5 : 3);
	}
	mutate(t, &ri[rn(t, n)], sizeof(*ri));
	fz_array(t, "GET_REG_INFO", fd, PFM_GET_REG_INFO, ri, count);
}

/* ioctl numbers perfmon does not have: -ENOTTY. */
static void op_bad_ioctl(struct fz_thread *t)
{
	int slot, fd = pick_fd(t, &slot);
	unsigned long cmd;

	switch (rn(t, 4)) {
	case 0:	/* an unused number of our type */
		cmd = _IOW(PFM_IOC_MAGIC, 0x12 + rn(t, 0xee), struct pfarg_array);
		break;
	case 1:	/* a known number with another size or direction */
		cmd = _IOC(rn(t, 4), PFM_IOC_MAGIC, rn(t, 0x12), rn(t, 512));
		break;
	case 2:
		cmd = PFM_IOC_MAGIC << 8 | 0x0f;	/* the gap */
		break;
	default:
		cmd = (unsigned int)rnd(t);
	}
	t->mut[0] = '\0';
	fz_ioctl(t, "unknown", fd, cmd, t->arena);
}

static void count_msg(const union pfarg_msg *m, long n)
{
	if (n == 0)
		atomic_fetch_add(&sh->empty_reads, 1);
	else if (m->type == PFM_MSG_OVFL)
		atomic_fetch_add(&sh->ovfl_msgs, 1);
	else if (m->type == PFM_MSG_END)
		atomic_fetch_add(&sh->end_msgs, 1);
	else if (m->type == PFM_MSG_THROTTLE)
		atomic_fetch_add(&sh->throttle_msgs, 1);
}

/* A read() that a blocking fd cannot hold for long (see op_read()). */
static long recv_msg(struct fz_thread *t, int fd, void *buf)
{
	struct itimerspec on = { .it_value.tv_nsec = 2000000,
				 .it_interval.tv_nsec = 2000000 };
	struct itimerspec off = { 0 };
	long n;

	timer_settime(t->timer, 0, &on, NULL);
	n = read(fd, buf, sizeof(union pfarg_msg));
	timer_settime(t->timer, 0, &off, NULL);
	return n;
}

/*
 * read() a message.  On a blocking fd, a timer signal (no SA_RESTART)
 * ends the wait with EINTR when nothing comes; it repeats every 2 ms,
 * as one shot may fire before this thread even reaches read().
 */
static void op_read(struct fz_thread *t)
{
	struct itimerspec on = { .it_value.tv_nsec = 2000000,
				 .it_interval.tv_nsec = 2000000 };
	struct itimerspec off = { 0 };
	int slot, fd = pick_any_fd(t, &slot);
	size_t size = sizeof(union pfarg_msg);
	void *buf = t->arena;
	long n;

	t->mut[0] = '\0';
	if (one_in(t, 16))
		size = rn(t, size);
	else if (one_in(t, 16))
		size = rn(t, 4096);
	if (one_in(t, 32))
		buf = (void *)(uintptr_t)bad_ptr(t, false);
	timer_settime(t->timer, 0, &on, NULL);
	n = done(t, K_READ, "", fd, size, read(fd, buf, size));
	timer_settime(t->timer, 0, &off, NULL);
	if (n < 0 || buf != t->arena || size < sizeof(union pfarg_msg))
		return;
	count_msg(buf, n);
	/* as a monitor would: resume the context masked by the overflow */
	if (n && ((union pfarg_msg *)buf)->type == PFM_MSG_OVFL)
		fz_ioctl(t, "RESTART", fd, PFM_RESTART, NULL);
}

static void op_poll(struct fz_thread *t)
{
	int slot;
	struct pollfd pfd = { .fd = pick_fd(t, &slot),
			      .events = POLLIN | POLLOUT | POLLPRI };

	t->mut[0] = '\0';
	done(t, K_POLL, "", pfd.fd, 0, poll(&pfd, 1, one_in(t, 4) ? 1 : 0));
}

/*
 * A monitor's loop: poll() the whole pool, read the messages of the
 * fds that have some and restart the contexts they masked.
 */
static void op_drain(struct fz_thread *t)
{
	struct pollfd pfd[FZ_SLOTS + FZ_BSLOTS];
	union pfarg_msg *m = (void *)t->arena;
	int i, n;
	long r;

	t->mut[0] = '\0';
	for (i = 0; i < FZ_SLOTS + FZ_BSLOTS; i++) {
		pfd[i].fd = atomic_load(i < FZ_SLOTS ? &t->p->fds[i] :
					&t->p->bfds[i - FZ_SLOTS]);
		pfd[i].events = POLLIN;
	}
	n = done(t, K_POLL, "pool", -1, 0, poll(pfd, ARRAY_SIZE(pfd), 0));
	for (i = 0; n > 0 && i < (int)ARRAY_SIZE(pfd); i++) {
		if (pfd[i].fd < 0 || !(pfd[i].revents & POLLIN))
			continue;
		/* O_NONBLOCK may be off: a sibling may have taken it */
		r = done(t, K_READ, "pool", pfd[i].fd, 0,
			 recv_msg(t, pfd[i].fd, m));
		if (r < 0)
			continue;
		count_msg(m, r);
		if (r && m->type == PFM_MSG_OVFL)
			fz_ioctl(t, "RESTART", pfd[i].fd, PFM_RESTART, NULL);
	}
}

/* O_ASYNC on or off, SIGIO to this process. */
static void op_fcntl(struct fz_thread *t)
{
	int slot, fd = pick_fd(t, &slot);
	long fl;

	t->mut[0] = '\0';
	done(t, K_FCNTL, "F_SETOWN", fd, 0, fcntl(fd, F_SETOWN, getpid()));
	fl = done(t, K_FCNTL, "F_GETFL", fd, 0, fcntl(fd, F_GETFL));
	if (fl < 0)
		return;
	fl ^= one_in(t, 2) ? O_ASYNC : O_NONBLOCK;
	done(t, K_FCNTL, "F_SETFL", fd, fl, fcntl(fd, F_SETFL, fl));
}

/* ---------------------------------------------------------------- */
/* Sampling buffer mappings                                           */
/* ---------------------------------------------------------------- */

static size_t pick_map_len(struct fz_thread *t)
{
	size_t pg = page_size();

	switch (rn(t, 8)) {
	case 0:
		return (size_t)boundary_val(t);
	case 1:
		return 1 + rn(t, 17 * pg);
	default:
		return pg << rn(t, 5);
	}
}

static void op_mmap(struct fz_thread *t)
{
	struct fz_proc *p = t->p;
	int slot, fd = pick_fd(t, &slot), prot = PROT_READ, flags = MAP_SHARED;
	size_t len = pick_map_len(t);
	off_t off = one_in(t, 16) ? (off_t)page_size() * rn(t, 4) : 0;
	struct pfm_user_page *pg;
	void *a;
	int i;

	if (one_in(t, 4))
		off = PFM_USER_PAGE_OFFSET;	/* the control page */

	if (one_in(t, 4))
		prot |= PROT_WRITE;
	if (one_in(t, 16))
		flags = MAP_PRIVATE;
	t->mut[0] = '\0';
	a = mmap(NULL, len, prot, flags, fd, off);
	done(t, K_MMAP, "", fd, len, a == MAP_FAILED ? -1 : 0);
	if (a == MAP_FAILED)
		return;
	/* Whatever races it, a control page is always well formed. */
	pg = a;
	if (off == PFM_USER_PAGE_OFFSET &&
	    (pg->version != PFM_USER_PAGE_VERSION ||
	     pg->num_pmds > PFM_USER_PAGE_PMDS)) {
		atomic_fetch_add(&sh->unexpected, 1);
		fprintf(stderr, "# BAD control page: version %u, %u PMDs\n",
			pg->version, pg->num_pmds);
	}
	pthread_mutex_lock(&p->map_lock);
	for (i = 0; i < FZ_MAPS && p->maps[i].addr; i++)
		;
	if (i < FZ_MAPS) {
		p->maps[i].addr = a;
		p->maps[i].len = len;
		p->maps[i].ring = (prot & PROT_WRITE) && !off &&
				  len >= 2 * page_size();
		a = NULL;
	}
	pthread_mutex_unlock(&p->map_lock);
	if (a)
		done(t, K_MUNMAP, "table full", fd, len, munmap(a, len));
}

/*
 * Look at a mapping: every page's first word, and for a writable one
 * that looks like a ring's control page, consume its records (the
 * kernel must cope with any data_tail).  Under map_lock: no sibling
 * unmaps it meanwhile.
 */
static void touch_map(struct fz_thread *t, int i)
{
	struct fz_proc *p = t->p;
	uint64_t *w, sum = 0;
	size_t off;

	for (off = 0; off < p->maps[i].len; off += page_size()) {
		w = (uint64_t *)((char *)p->maps[i].addr + off);
		sum += __atomic_load_n(w, __ATOMIC_RELAXED);
	}
	if (p->maps[i].ring) {
		struct pfm_ring_ctrl *c = p->maps[i].addr;

		if (c->version == PFM_RING_VERSION) {
			uint64_t head = __atomic_load_n(&c->data_head,
							__ATOMIC_ACQUIRE);

			if (head - c->data_tail <= c->data_size)
				atomic_fetch_add(&sh->ring_bytes,
						 head - c->data_tail);
			__atomic_store_n(&c->data_tail,
					 one_in(t, 8) ? rnd(t) : head,
					 __ATOMIC_RELEASE);
		}
	}
	(void)sum;
}

static void op_munmap(struct fz_thread *t)
{
	struct fz_proc *p = t->p;
	int i = rn(t, FZ_MAPS);

	pthread_mutex_lock(&p->map_lock);
	if (p->maps[i].addr) {
		touch_map(t, i);
		if (one_in(t, 2)) {
			t->mut[0] = '\0';
			done(t, K_MUNMAP, "", -1, p->maps[i].len,
			     munmap(p->maps[i].addr, p->maps[i].len));
			p->maps[i].addr = NULL;
		}
	}
	pthread_mutex_unlock(&p->map_lock);
}

/* ---------------------------------------------------------------- */
/* A whole sampling context, so that overflows happen                 */
/* ---------------------------------------------------------------- */

/*
 * open, create (maybe with a format), PMC0 = system calls, PMD0 a short
 * period with a notification, sampling PMD1, load, start; the fd joins
 * the pool.  Each step may be mutated.
 */
static void op_recipe(struct fz_thread *t)
{
	uint32_t flags = pick_ctx_flags(t, true);
	struct pfarg_pmc *pc;
	int fd, bfd;
	struct pfarg_pmd *pd;

	fd = done(t, K_OPEN, "/dev/perfmon", -1, 0,
		  open("/dev/perfmon", O_RDWR | O_CLOEXEC | O_NONBLOCK));
	if (fd < 0)
		return;
	if (flags & PFM_FL_NOTIFY_BLOCK) {
		/* moved out of the pool's range before it can block */
		bfd = done(t, K_DUP, "", fd, FZ_BFD_MIN,
			   fcntl(fd, F_DUPFD_CLOEXEC, FZ_BFD_MIN));
		done(t, K_CLOSE, "", fd, 0, close(fd));
		fd = bfd;
		if (fd < 0)
			return;
	}
	if (do_create(t, fd, flags))
		goto pool;
	pc = (void *)(t->arena + 4096);
	memset(pc, 0, sizeof(*pc));
	pc->reg_value = conf.soft ? SOFT_EV_SYSCALLS : pick_event(t);
	mutate(t, pc, sizeof(*pc));
	t->overrun = false;
	if (fz_array(t, "WRITE_PMCS", fd, PFM_WRITE_PMCS, pc, 1))
		goto pool;
	pd = (void *)(t->arena + 4096);
	memset(pd, 0, 2 * sizeof(*pd));
	t->overrun = false;
	pd[0].reg_value = -(uint64_t)(16 + rn(t, 256));
	pd[0].reg_short_reset = pd[0].reg_value;
	pd[0].reg_long_reset = pd[0].reg_value;
	pd[0].reg_flags = PFM_REGFL_OVFL_NOTIFY;
	pd[0].reg_smpl_pmds[0] = conf.pmd_mask & 2;
	pd[1].reg_num = 1;
	mutate(t, &pd[rn(t, 2)], sizeof(*pd));
	if (fz_array(t, "WRITE_PMDS", fd, PFM_WRITE_PMDS, pd, 2) ||
	    do_load(t, fd, flags))
		goto pool;
	do_start(t, fd);
pool:
	pool_put(t, fd);
}

/* ---------------------------------------------------------------- */
/* Threads and processes                                              */
/* ---------------------------------------------------------------- */

typedef void (*fz_op)(struct fz_thread *t);

/* An op and its name, for a crash report. */
struct fz_opdesc {
	fz_op fn;
	const char *name;
};

#define OP(f) { f, #f }

/* Call mix: each op's share is its number of entries. */
static const struct fz_opdesc ops[] = {
	OP(op_open), OP(op_close), OP(op_close), OP(op_dup),
	OP(op_create), OP(op_create), OP(op_write_pmcs),
	OP(op_write_pmcs), OP(op_write_pmds), OP(op_write_pmds),
	OP(op_read_pmds), OP(op_read_pmds), OP(op_read_values),
	OP(op_load), OP(op_load), OP(op_start), OP(op_start),
	OP(op_noarg), OP(op_noarg), OP(op_noarg), OP(op_sets),
	OP(op_getinfo_sets), OP(op_drv_config), OP(op_info),
	OP(op_bad_ioctl), OP(op_read), OP(op_read), OP(op_poll),
	OP(op_drain), OP(op_drain), OP(op_fcntl), OP(op_mmap),
	OP(op_mmap), OP(op_munmap), OP(op_munmap), OP(op_recipe),
	OP(op_recipe), OP(op_recipe), OP(op_spawn_kid),
	OP(op_spawn_thread),
};

/* The op this thread runs now, and its thread: what a crash reports. */
static __thread const struct fz_opdesc *fz_cur;
static __thread struct fz_thread *fz_self;

/* Append @s to @b (at @n), async-signal-safely. */
static size_t fz_put(char *b, size_t n, size_t size, const char *s)
{
	while (*s && n + 1 < size)
		b[n++] = *s++;
	return n;
}

static size_t fz_put_dec(char *b, size_t n, size_t size, unsigned int v)
{
	char d[11];
	int k = sizeof(d) - 1;

	d[k] = '\0';
	do
		d[--k] = '0' + v % 10;
	while ((v /= 10) && k);
	return fz_put(b, n, size, d + k);
}

static size_t fz_put_hex(char *b, size_t n, size_t size, uint64_t v)
{
	char d[19] = "0x";
	int i, k = 2;

	for (i = 60; i > 0 && !(v >> i); i -= 4)
		;
	for (; i >= 0; i -= 4)
		d[k++] = "0123456789abcdef"[(v >> i) & 0xf];
	d[k] = '\0';
	return fz_put(b, n, size, d);
}

/*
 * A fuzzing process killed by a signal of its own (a fault, or one the
 * kernel forced: si_code 0x80, SI_KERNEL) says where before it dies of
 * it: the signal, si_code, the address, the op and its mutation.  The
 * kernel's "segfault at" line may be rate-limited away.  Then the
 * default action, so the parent sees the same signal as before.
 */
static void fz_crash(int sig, siginfo_t *si, void *uc)
{
	char b[256];
	size_t n = 0;

	(void)uc;
	n = fz_put(b, n, sizeof(b), "# fuzz: CRASH signal ");
	n = fz_put_dec(b, n, sizeof(b), sig);
	n = fz_put(b, n, sizeof(b), " si_code ");
	n = fz_put_hex(b, n, sizeof(b), (uint32_t)si->si_code);
	n = fz_put(b, n, sizeof(b), " addr ");
	n = fz_put_hex(b, n, sizeof(b), (uintptr_t)si->si_addr);
	n = fz_put(b, n, sizeof(b), " in ");
	n = fz_put(b, n, sizeof(b), fz_cur ? fz_cur->name : "no op");
	n = fz_put(b, n, sizeof(b), " mutation ");
	n = fz_put(b, n, sizeof(b),
		   fz_self && fz_self->mut[0] ? fz_self->mut : "none");
	n = fz_put(b, n, sizeof(b), "\n");
	if (write(2, b, n) < 0)
		n = 0;
	raise(sig);	/* SA_RESETHAND: the default action now */
}

/* fz_crash() for the faults, on a stack of its own per thread. */
static void fz_crash_handlers(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE };
	struct sigaction sa = {
		.sa_sigaction = fz_crash,
		.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER | SA_ONSTACK,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
}

static void fz_signal(int sig)
{
	if (sig == SIGIO)
		atomic_fetch_add(&sh->sigio, 1);
}

static int thread_setup(struct fz_thread *t)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID,
				.sigev_signo = SIGUSR1 };
	size_t pg = page_size();
	stack_t ss = { 0 };
	char *m;

	m = mmap(NULL, FZ_ARENA + 2 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	t->arena = m;
	t->guard = m + FZ_ARENA;
	t->rdonly = m + FZ_ARENA + pg;
	if (mprotect(t->guard, pg, PROT_NONE) ||
	    mprotect(t->rdonly, pg, PROT_READ))
		return -errno;
	/* A crash report even when the fault is a stack overflow. */
	m = mmap(NULL, FZ_ALTSTACK, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	t->altstack = m;
	ss.ss_sp = m;
	ss.ss_size = FZ_ALTSTACK;
	if (sigaltstack(&ss, NULL))
		return -errno;
	sev.sigev_notify_thread_id = gettid();
	return timer_create(CLOCK_MONOTONIC, &sev, &t->timer) ? -errno : 0;
}

static void *thread_main(void *arg)
{
	struct fz_thread *t = arg;
	unsigned int n = 0;

	fz_self = t;
	atomic_store(&t->p->tids[t->idx], gettid());
	if (thread_setup(t)) {
		atomic_fetch_add(&sh->unexpected, 1);
		fprintf(stderr, "# thread setup: %s\n", strerror(errno));
		return NULL;
	}
	while (!(n++ % 16 == 0 && time_up())) {
		fz_cur = &ops[rn(t, ARRAY_SIZE(ops))];
		fz_cur->fn(t);
		if (n % 64 == 0)
			reap_kids(t, t->p, false);
	}
	pthread_rwlock_wrlock(&t->p->tgt_lock);
	atomic_store(&t->p->tids[t->idx], 0);
	pthread_rwlock_unlock(&t->p->tgt_lock);
	timer_delete(t->timer);
	munmap(t->arena, FZ_ARENA + 2 * page_size());
	fz_cur = NULL;
	sigaltstack(&(stack_t){ .ss_flags = SS_DISABLE }, NULL);
	munmap(t->altstack, FZ_ALTSTACK);
	return NULL;
}

static void *spinner_main(void *arg)
{
	struct fz_proc *p = arg;
	int i;

	atomic_store(&p->spinner_tid, gettid());
	/* a target that runs, but leaves the CPUs to the fuzzers */
	while (!atomic_load(&p->stop)) {
		for (i = 0; i < 100; i++)
			syscall(SYS_getppid);
		usleep(1000);
	}
	pthread_rwlock_wrlock(&p->tgt_lock);
	atomic_store(&p->spinner_tid, 0);
	pthread_rwlock_unlock(&p->tgt_lock);
	return NULL;
}

/* Root without CAP_IPC_LOCK, so that RLIMIT_MEMLOCK bounds buffers. */
static void limit_memlock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];
	struct rlimit rl = { FZ_MEMLOCK, FZ_MEMLOCK };

	setrlimit(RLIMIT_MEMLOCK, &rl);
	if (syscall(SYS_capget, &hdr, d))
		return;
	d[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].permitted &= ~(1U << (CAP_IPC_LOCK % 32));
	syscall(SYS_capset, &hdr, d);
}

/*
 * Every third process runs as nobody: the permission refusals
 * (system-wide -EACCES) are taken too.  Dumpable, so that it may
 * monitor its own children.
 */
static void maybe_drop_root(int idx)
{
	if (idx % 3 != 2 || getuid())
		return;
	if (become_user(FZ_NOBODY))
		return;
	prctl(PR_SET_DUMPABLE, 1);
}

/*
 * Close the contexts first: that releases any target a NOTIFY_BLOCK
 * context holds (spinner, short threads, children), which can then end.
 */
static void proc_cleanup(struct fz_proc *p, pthread_t spin)
{
	int i;

	for (i = 0; i < FZ_BSLOTS; i++)
		if (p->bfds[i] >= 0)
			close(p->bfds[i]);
	for (i = 0; i < FZ_SLOTS; i++)
		if (p->fds[i] >= 0)
			close(p->fds[i]);
	for (i = 0; i < FZ_MAPS; i++)
		if (p->maps[i].addr)
			munmap(p->maps[i].addr, p->maps[i].len);
	atomic_store(&p->stop, 1);
	pthread_join(spin, NULL);
	reap_kids(NULL, p, true);
	while (atomic_load(&p->live_shorts))
		usleep(1000);
}

static int proc_main(int idx)
{
	struct fz_thread th[FZ_MAX_THREADS];
	struct sigaction sa = { .sa_handler = fz_signal };
	struct fz_proc p;
	pthread_t spin;
	int i;

	memset(&p, 0, sizeof(p));
	p.idx = idx;
	for (i = 0; i < FZ_SLOTS; i++)
		p.fds[i] = -1;
	for (i = 0; i < FZ_BSLOTS; i++)
		p.bfds[i] = -1;
	pthread_mutex_init(&p.map_lock, NULL);
	pthread_rwlock_init(&p.tgt_lock, NULL);
	atomic_store(&p.main_tid, gettid());
	/* SIGUSR1 ends blocking reads: no SA_RESTART; SIGIO is counted */
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGIO, &sa, NULL);
	fz_crash_handlers();
	limit_memlock();
	maybe_drop_root(idx);
	pthread_create(&spin, NULL, spinner_main, &p);
	for (i = 0; i < conf.threads; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].p = &p;
		th[i].idx = i;
		th[i].rng = conf.seed ^ ((uint64_t)idx << 40) ^
			    ((uint64_t)i << 20);
		splitmix64(&th[i].rng);
		pthread_create(&th[i].thread, NULL, thread_main, &th[i]);
	}
	for (i = 0; i < conf.threads; i++)
		pthread_join(th[i].thread, NULL);
	proc_cleanup(&p, spin);
	return atomic_load(&sh->unexpected) ? 1 : 0;
}

/* ---------------------------------------------------------------- */
/* Setup, watchdog, checks, report                                     */
/* ---------------------------------------------------------------- */

static unsigned long env_ul(const char *name, unsigned long dfl,
			    unsigned long max)
{
	const char *s = getenv(name);
	unsigned long v;

	if (!s || !*s)
		return dfl;
	v = strtoul(s, NULL, 0);
	return v > max ? max : v;
}

static long sysfs_long(const char *name)
{
	char path[128], buf[32];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/perfmon/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 0);
	fclose(f);
	return v;
}

/* The PMU's registers and driver settings, from the ioctls. */
static int read_pmu(int fd)
{
	struct pfarg_pmu_info info;
	struct pfarg_reg_info ri;
	int i;

	memset(&info, 0, sizeof(info));
	if (pfm_ioctl(fd, PFM_GET_PMU_INFO, &info))
		return -1;
	conf.soft = !strcmp(info.pmu_name, "soft");
	for (i = 0; i < PFM_MAX_PMCS; i++)
		if (info.pmu_impl_pmcs[i / 64] >> (i % 64) & 1)
			conf.pmcs[conf.npmcs++] = i;
	for (i = 0; i < PFM_MAX_PMDS; i++)
		if (info.pmu_impl_pmds[i / 64] >> (i % 64) & 1)
			conf.pmds[conf.npmds++] = i;
	conf.pmd_mask = info.pmu_impl_pmds[0];
	for (i = 0; i < PFM_MAX_DRV_CFG; i++) {
		memset(&ri, 0, sizeof(ri));
		ri.info_num = i;
		ri.info_kind = PFM_REG_KIND_CFG;
		if (pfm_array(fd, PFM_GET_REG_INFO, &ri, 1) ||
		    ri.info_flags & PFM_REG_RETFL_NOTAVAIL)
			break;
	}
	conf.ncfgs = i;
	return 0;
}

static pid_t fz_pids[FZ_MAX_PROCS];

/* Print a file of /proc, each line prefixed. */
static void dump_file(const char *path, const char *prefix)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "%s%s", prefix, line);
	fclose(f);
}

/* Is @pid a fuzz_test process (this one excepted)? */
static bool is_fuzzer(int pid)
{
	char path[64], comm[64] = "";
	FILE *f;

	if (pid <= 0 || pid == getpid())
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	return !strncmp(comm, "fuzz_test", 9);
}

/* Every thread of the fuzz_test processes: its state and stack. */
static void dump_tasks(void)
{
	struct dirent *pe, *te;
	char path[64];
	DIR *pd, *td;
	int pid, tid;

	pd = opendir("/proc");
	while (pd && (pe = readdir(pd))) {
		pid = atoi(pe->d_name);
		if (!is_fuzzer(pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		td = opendir(path);
		while (td && (te = readdir(td))) {
			tid = atoi(te->d_name);
			if (tid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%d/stat",
				 pid, tid);
			dump_file(path, "# stat: ");
			snprintf(path, sizeof(path), "/proc/%d/task/%d/stack",
				 pid, tid);
			dump_file(path, "#   ");
		}
		if (td)
			closedir(td);
	}
	if (pd)
		closedir(pd);
}

/* Last resort (the hang report itself hung): end the processes, fail. */
static void watchdog(int sig)
{
	static const char msg[] = "# fuzz: still hung after the report, killing\n";
	int i;

	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	for (i = 0; i < conf.procs; i++)
		if (fz_pids[i] > 0)
			kill(fz_pids[i], SIGKILL);
	_exit(3);
}

static void print_report(uint64_t ns)
{
	unsigned long calls = atomic_load(&sh->calls);
	double s = ns / 1e9;
	int e;

	printf("# fuzz: seed %#llx: %lu calls in %.1f s, %.0f calls/s\n",
	       (unsigned long long)conf.seed, calls, s, s ? calls / s : 0.0);
	printf("# fuzz: messages: overflow %lu end %lu throttle %lu empty %lu",
	       atomic_load(&sh->ovfl_msgs), atomic_load(&sh->end_msgs),
	       atomic_load(&sh->throttle_msgs), atomic_load(&sh->empty_reads));
	printf("; SIGIO %lu; ring bytes %lu\n", atomic_load(&sh->sigio),
	       atomic_load(&sh->ring_bytes));
	printf("# fuzz: target children %lu (%lu exec'd a setuid image), ",
	       atomic_load(&sh->kids), atomic_load(&sh->suid_execs));
	printf("short-lived threads %lu\n", atomic_load(&sh->short_threads));
	printf("# fuzz: %-12s %10s\n", "errno", "calls");
	for (e = 0; e < FZ_NERR; e++)
		if (atomic_load(&sh->err[e]))
			printf("# fuzz: %-12s %10lu\n",
			       e ? strerrorname_np(e) : "0 (success)",
			       atomic_load(&sh->err[e]));
	printf("# fuzz: %-12s %10s %10s\n", "call", "tried", "succeeded");
	for (e = 0; e < FZ_NKINDS; e++)
		printf("# fuzz: %-12s %10lu %10lu\n", kind_name[e],
		       atomic_load(&sh->tried[e]), atomic_load(&sh->ok[e]));
}

/*
 * Wait for process @i until the time cap plus FZ_GRACE: past that, the
 * run hung; show where every thread is, and kill them.
 */
static pid_t wait_proc(int i, int *status)
{
	uint64_t end = conf.deadline + FZ_GRACE * 1000000000ull;
	pid_t r;

	while ((r = waitpid(fz_pids[i], status, WNOHANG)) == 0) {
		if (clock_ns(CLOCK_MONOTONIC) < end) {
			usleep(10000);
			continue;
		}
		fprintf(stderr, "# fuzz: HUNG: process %d still running %d s after the time cap\n",
			i, FZ_GRACE);
		dump_tasks();
		for (i = 0; i < conf.procs; i++)
			kill(fz_pids[i], SIGKILL);
		return -1;
	}
	return r;
}

/* Fork the fuzzing processes and wait for them; 0 when all went well. */
static int run_procs(void)
{
	int i, status, bad = 0;

	for (i = 0; i < conf.procs; i++) {
		fz_pids[i] = fork();
		if (fz_pids[i] == 0)
			_exit(proc_main(i));
	}
	for (i = 0; i < conf.procs; i++) {
		if (fz_pids[i] < 0 || wait_proc(i, &status) < 0) {
			bad = 1;
			if (fz_pids[i] > 0)
				break;
			continue;
		}
		if (WIFSIGNALED(status)) {
			fprintf(stderr, "# fuzz: process %d killed by signal %d\n",
				i, WTERMSIG(status));
			bad = 1;
		} else if (WEXITSTATUS(status)) {
			bad = 1;
		}
	}
	return bad;
}

/* Wait up to 5 s for the session counts to come back (deferred frees). */
static bool sessions_back(long task0, long sys0)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (sysfs_long("task_sessions_count") == task0 &&
		    sysfs_long("sys_sessions_count") == sys0)
			return true;
		usleep(10000);
	}
	return false;
}

FIXTURE(fuzz) {
	long task0, sys0;
};

FIXTURE_SETUP(fuzz)
{
	int fd = pfm_open();

	ASSERT_LE(0, fd);
	conf.seed = env_ul("PFM_FUZZ_SEED", 0, ULONG_MAX);
	if (!getenv("PFM_FUZZ_SEED"))
		conf.seed = clock_ns(CLOCK_REALTIME) ^ (uint64_t)getpid() << 32;
	conf.calls = env_ul("PFM_FUZZ_CALLS", 80000, ULONG_MAX / 2);
	conf.calls_required = getenv("PFM_FUZZ_CALLS") && conf.calls;
	/* 0: no count, a time budget; the run ends at PFM_FUZZ_SECONDS */
	if (!conf.calls)
		conf.calls = ULONG_MAX / 2;
	conf.seconds = env_ul("PFM_FUZZ_SECONDS", 20, 6000);
	conf.procs = env_ul("PFM_FUZZ_PROCS", 3, FZ_MAX_PROCS);
	conf.threads = env_ul("PFM_FUZZ_THREADS", 3, FZ_MAX_THREADS);
	if (conf.procs < 1)
		conf.procs = 1;
	if (conf.threads < 1)
		conf.threads = 1;
	/* first, so that a failing run can be replayed */
	printf("# fuzz: PFM_FUZZ_SEED=%#llx PFM_FUZZ_CALLS=%lu PFM_FUZZ_SECONDS=%u",
	       (unsigned long long)conf.seed,
	       conf.calls == ULONG_MAX / 2 ? 0 : conf.calls, conf.seconds);
	printf(" PFM_FUZZ_PROCS=%d PFM_FUZZ_THREADS=%d\n", conf.procs,
	       conf.threads);
	fflush(stdout);
	ASSERT_EQ(0, read_pmu(fd));
	close(fd);
	conf.ncpus = online_cpus();
	printf("# fuzz: PMU %s, %d PMCs, %d PMDs, %d driver settings, ctx_per_user_max %ld\n",
	       conf.soft ? "soft" : "not soft", conf.npmcs, conf.npmds,
	       conf.ncfgs, sysfs_long("ctx_per_user_max"));
	/* each process holds at most FZ_SLOTS contexts (+1 in a recipe) */
	ASSERT_LE(conf.procs * (FZ_SLOTS + FZ_BSLOTS + conf.threads),
		  sysfs_long("ctx_per_user_max"));
	self->task0 = sysfs_long("task_sessions_count");
	self->sys0 = sysfs_long("sys_sessions_count");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	/* as root: children exec a setuid image (kid_body()) */
	conf.suid = geteuid() == 0 && copy_self(FZ_SUID_IMAGE, 04755) == 0;
}

FIXTURE_TEARDOWN(fuzz)
{
	if (conf.suid)
		unlink(FZ_SUID_IMAGE);
	munmap(sh, sizeof(*sh));
}

/* After the run, a fresh context must still count its task-clock. */
static void check_counting(struct __test_metadata *_metadata)
{
	uint64_t t0, t1, v;
	int fd;

	if (!conf.soft) {
		TH_LOG("not pfm_soft: clean-context check skipped");
		return;
	}
	fd = pfm_counting_ctx(0, SOFT_EV_TASK_CLOCK, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	burn_cpu(50000000);
	t1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	ASSERT_EQ(0, pfm_stop(fd));
	v = pfm_read_pmd(fd, 0, 0);
	TH_LOG("task-clock %llu ns for %llu ns of CPU time",
	       (unsigned long long)v, (unsigned long long)(t1 - t0));
	EXPECT_TRUE(within_pct(v, t1 - t0, 10));
	close(fd);
}

/*
 * How many contexts @uid may open now: a child as @uid opens
 * /dev/perfmon until it is refused (at most @max + 1 times).
 */
static long contexts_free(uid_t uid, long max)
{
	long n = 0;
	int p[2], fd;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (uid != geteuid() && become_user(uid))
			_exit(1);
		while (n <= max && (fd = pfm_open()) >= 0)
			n++;
		if (write(p[1], &n, sizeof(n)) != sizeof(n))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &n, sizeof(n)) != sizeof(n))
		n = -1;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return n;
}

/*
 * Every context of the run is gone once its processes are: root and
 * nobody (or a non-root caller) may each open ctx_per_user_max of them again, and no more.
 * (A closed context waits for nothing: not even a monitored thread
 * that sleeps in the kernel, as pid 1 does when a context meant for
 * CPU 1 lands on a per-thread one.)
 */
static void check_no_context_left(struct __test_metadata *_metadata)
{
	uid_t uids[] = { geteuid(), FZ_NOBODY };
	long max = sysfs_long("ctx_per_user_max"), n = -1;
	unsigned int i;
	int tries;

	/* only root runs a process as nobody */
	for (i = 0; i < (uids[0] ? 1 : ARRAY_SIZE(uids)); i++) {
		/* closes by exit may free contexts from pfm_wq: settle */
		for (tries = 200; tries && (n = contexts_free(uids[i], max)) != max;
		     tries--)
			usleep(10000);
		EXPECT_EQ(max, n) {
			TH_LOG("uid %u may open %ld contexts of %ld: %ld still held",
			       uids[i], n, max, max - n);
		}
	}
}

/*
 * The harness's timeout covers the longest run allowed (6000 s); the
 * watchdog, at the time cap plus FZ_GRACE, is what catches a hang.
 */
TEST_F_TIMEOUT(fuzz, random_calls, 6300)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	unsigned long min;
	int bad, k;

	conf.deadline = t0 + conf.seconds * 1000000000ull;
	signal(SIGALRM, watchdog);
	alarm(conf.seconds + 3 * FZ_GRACE);
	bad = run_procs();
	alarm(0);
	print_report(clock_ns(CLOCK_MONOTONIC) - t0);
	EXPECT_EQ(0, bad);
	/* a required count cut short by the time cap is a failed run */
	if (conf.calls_required) {
		EXPECT_LE(conf.calls, atomic_load(&sh->calls)) {
			TH_LOG("cut short by the %u s cap: raise PFM_FUZZ_SECONDS",
			       conf.seconds);
		}
	}
	/*
	 * The run fuzzed: the calls the time cap allows at FZ_RATE_MIN a
	 * second (or all those asked for), and every kind of call tried
	 * and, now and then, let through.  But read(): it succeeds only
	 * on a queued message, which a random run need not make (arm64
	 * 6.12: 6,243 calls, no overflow or end message, 256 reads), so a
	 * read is only required to have been tried.
	 */
	min = conf.seconds * FZ_RATE_MIN / timing_slack();
	EXPECT_LE(min < conf.calls ? min : conf.calls,
		  atomic_load(&sh->calls));
	EXPECT_LT(0, atomic_load(&sh->tried[K_READ]));
	for (k = 0; k < FZ_NKINDS; k++) {
		if (k == K_READ)
			continue;
		EXPECT_LT(0, atomic_load(&sh->ok[k])) {
			TH_LOG("%s: %lu calls, none succeeded", kind_name[k],
			       atomic_load(&sh->tried[k]));
		}
	}
	EXPECT_EQ(0, atomic_load(&sh->unexpected));
	EXPECT_TRUE(sessions_back(self->task0, self->sys0)) {
		TH_LOG("sessions: task %ld (was %ld), sys %ld (was %ld)",
		       sysfs_long("task_sessions_count"), self->task0,
		       sysfs_long("sys_sessions_count"), self->sys0);
	}
	check_no_context_left(_metadata);
	check_counting(_metadata);
}

TEST_HARNESS_MAIN
