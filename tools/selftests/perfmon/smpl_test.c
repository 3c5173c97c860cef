// SPDX-License-Identifier: GPL-2.0
/*
 * Overflow notification, sampling formats and triggers on the software
 * PMU's system-call event (SOFT_EV_SYSCALLS), which is exact: counting
 * starts inside the START ioctl (its entry is not counted) and the STOP
 * ioctl's entry is, so N raw system calls between pfm_start() and
 * pfm_stop() count N + 1, and a counter written -P overflows at the
 * entry of the P-th, with the user IP just after its syscall
 * instruction.  Nothing but raw_syscalls() runs between the two calls
 * where a test counts exactly; raw_syscalls() sits alone in section
 * smpl_text, so a test can check that sampled IPs fall inside it.
 *
 * Covered: the message of a notifying overflow and the masked state up
 * to pfm_restart(), short and random reset values, wake-ups without
 * message, SIGIO, PFM_FL_NOTIFY_BLOCK, the "default" and "ring"
 * sampling formats (exact sample counts and values, full buffer, lost
 * samples, wake-ups, overwrite mode, set-switch records), start/stop
 * triggers, and every refused input.  The formats' modules are expected
 * to be loaded (the test guests load them).
 */
#include <assert.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>

#include <perfmon/perfmon_dfl_smpl.h>
#include <perfmon/perfmon_ring.h>

#include "pfm_test.h"
#include "kselftest_harness.h"

/* The record sizes the sampling ABI fixes (the two format headers). */
static_assert(sizeof(struct pfm_dfl_smpl_hdr) == 128, "dfl header");
static_assert(sizeof(struct pfm_dfl_smpl_entry) == 40, "dfl entry 1.0");
static_assert(sizeof(struct pfm_dfl_smpl_entry_v2) == 48, "dfl entry 2.0");
static_assert(sizeof(struct pfm_ring_sample) == 56, "ring sample");
static_assert(sizeof(struct pfm_ring_lost) == 16, "ring lost");
static_assert(sizeof(struct pfm_ring_set_switch) == 24, "ring switch");

/*
 * The kernel's names for the attributes raw_syscalls() needs
 * (include/linux/compiler_attributes.h): user space has no such header.
 */
#define __section(s)	pfm_attr(__section__(s))
#define noinline	pfm_attr(__noinline__)
#define __noclone	pfm_attr(__noclone__)

#define DFL_HDR		sizeof(struct pfm_dfl_smpl_hdr)
#define DFL_ENTRY	sizeof(struct pfm_dfl_smpl_entry)
#define DFL_ENTRY_V2	sizeof(struct pfm_dfl_smpl_entry_v2)
#define RING_SAMPLE	sizeof(struct pfm_ring_sample)
#define RING_LOST	sizeof(struct pfm_ring_lost)
#define RING_SWITCH	sizeof(struct pfm_ring_set_switch)
#define FAR_RESET	(-(1ull << 40))	/* a reset value that never wraps */

/* For the logs. */
#define ULL(x)		((unsigned long long)(x))
#define LL(x)		((long long)(x))

/*
 * @n raw getppid() calls, nothing else: no libc, no vDSO.  Alone in its
 * section (the linker provides __start_smpl_text and __stop_smpl_text,
 * declared in pfm_test.h); __noclone keeps a specialized copy from
 * landing in .text.
 */
static noinline __noclone __section("smpl_text")
void raw_syscalls(unsigned long n)
{
	raw_getppid(n);
}

/* Does the sampled @ip lie inside raw_syscalls()? */
static bool in_smpl_text(uint64_t ip)
{
	return ip >= (uintptr_t)__start_smpl_text &&
	       ip < (uintptr_t)__stop_smpl_text;
}

/* read() of one message: its size, 0 for a wake-up, or -errno. */
static ssize_t read_msg(int fd, union pfarg_msg *msg)
{
	ssize_t ret = read(fd, msg, sizeof(*msg));

	return ret < 0 ? -errno : ret;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ? -errno : 0;
}

/* poll() for EPOLLIN up to @ms: true when readable. */
static bool wait_readable(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, ms) == 1 && (pfd.revents & POLLIN);
}

/* poll() for EPOLLIN with timeout 0: 1 readable, 0 not, or -errno. */
static int readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret = poll(&pfd, 1, 0);

	if (ret < 0)
		return -errno;
	return ret == 1 && (pfd.revents & POLLIN);
}

/*
 * Counters of set @set: PMC0/PMD0 count system calls from @value, with
 * PFM_REGFL_* @flags, short reset @reset and long reset @long_reset;
 * with @smpl_pmd1, PMC1/PMD1 count them too from 0 (never reset) and
 * PMD0's samples record PMD1.  0 or -errno.
 */
static int syscall_ctrs(int fd, uint16_t set, uint32_t flags, uint64_t value,
			uint64_t reset, uint64_t long_reset, bool smpl_pmd1)
{
	pfarg_pmd_t pd[2];
	int err;

	err = pfm_write_pmc(fd, set, 0, SOFT_EV_SYSCALLS);
	if (!err && smpl_pmd1)
		err = pfm_write_pmc(fd, set, 1, SOFT_EV_SYSCALLS);
	if (err)
		return err;
	pfm_pmd_prep(&pd[0], set, 0, flags, value, reset);
	pd[0].reg_long_reset = long_reset;
	pd[0].reg_smpl_eventid = 0x5a;
	pfm_pmd_prep(&pd[1], set, 1, 0, 0, 0);
	if (smpl_pmd1)
		pd[0].reg_smpl_pmds[0] = 1ull << 1;
	return pfm_write_pmds(fd, pd, smpl_pmd1 ? 2 : 1) ? -errno : 0;
}

/*
 * A context with @flags and format @fmt (@arg, @size), counting system
 * calls with period @period (PMD0 = -@period, short reset -@period),
 * @flags PFM_REGFL_*, long reset @long_reset; see syscall_ctrs().  The
 * fd, or -errno.
 */
static int syscall_ctx(uint32_t ctx_flags, const char *fmt, void *arg,
		       size_t size, uint64_t period, uint32_t flags,
		       uint64_t long_reset, bool smpl_pmd1)
{
	int fd = pfm_fmt_ctx(ctx_flags, fmt, arg, size), err;

	if (fd < 0)
		return fd;
	err = syscall_ctrs(fd, 0, flags, -period, -period, long_reset,
			   smpl_pmd1);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* -EPERM... from mmap() of a context, or 0 when it maps (then unmapped). */
static int map_err(int fd, size_t len, int prot, off_t off)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, off);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Ring reader                                                         */
/* ------------------------------------------------------------------ */

struct ring {
	struct pfm_ring_ctrl *ctrl;
	const unsigned char *data;
	uint64_t size;
};

union ring_rec {
	struct pfm_ring_rec hdr;
	struct pfm_ring_sample smp;
	struct pfm_ring_lost lost;
	struct pfm_ring_set_switch sw;
	uint64_t raw[32];		/* a sample and up to 25 values */
};

static void ring_init(struct ring *r, void *map)
{
	r->ctrl = map;
	r->data = (const unsigned char *)map + r->ctrl->data_offset;
	r->size = r->ctrl->data_size;
}

static uint64_t ring_head(const struct ring *r)
{
	return __atomic_load_n(&r->ctrl->data_head, __ATOMIC_ACQUIRE);
}

static uint64_t ring_tail(const struct ring *r)
{
	return __atomic_load_n(&r->ctrl->data_tail, __ATOMIC_ACQUIRE);
}

/* Release the bytes up to @pos to the writer. */
static void ring_consume(struct ring *r, uint64_t pos)
{
	__atomic_store_n(&r->ctrl->data_tail, pos, __ATOMIC_RELEASE);
}

/* Copy @len bytes at free-running offset @pos, wrapping at the end. */
static void ring_copy(const struct ring *r, uint64_t pos, void *dst,
		      size_t len)
{
	size_t off = pos & (r->size - 1), first = len;

	if (off + len > r->size)
		first = r->size - off;
	memcpy(dst, r->data + off, first);
	memcpy((unsigned char *)dst + first, r->data, len - first);
}

/*
 * The record at *@pos (below @head) into @rec, *@pos moved past it: its
 * size; 0 at @head; -1 when the header is malformed (size not a multiple
 * of 8, beyond @head, or larger than @rec).
 */
static int ring_next(const struct ring *r, uint64_t *pos, uint64_t head,
		     union ring_rec *rec)
{
	struct pfm_ring_rec h;

	if (*pos == head)
		return 0;
	if (head - *pos < sizeof(h))
		return -1;
	ring_copy(r, *pos, &h, sizeof(h));
	if (h.size < sizeof(h) || h.size % 8 || h.size > head - *pos ||
	    h.size > sizeof(*rec))
		return -1;
	ring_copy(r, *pos, rec, h.size);
	*pos += h.size;
	return h.size;
}

/* The first PMD value recorded after a ring sample. */
static uint64_t smp_value(const union ring_rec *rec)
{
	return rec->raw[RING_SAMPLE / 8];
}

/* A ring context's mapping: the control page and @pages data pages. */
static void *ring_map(int fd, uint32_t pages, int prot)
{
	return pfm_map_buf(fd, (1 + (size_t)pages) * page_size(), prot);
}

/* ------------------------------------------------------------------ */
/* Overflow without a sampling format                                  */
/* ------------------------------------------------------------------ */

/*
 * PMD0 = -100 with NOTIFY: the 100th raw call overflows it, queues one
 * message and masks the context: nothing counts until pfm_restart(),
 * which reloads the long reset value and resumes.
 */
TEST(ovfl_notify_msg)
{
	const uint64_t period = 100, lreset = 1000, more = 30;
	union pfarg_msg msg;
	struct pfarg_ovfl_msg *m = &msg.pfm_ovfl_msg;
	pfarg_pmd_t pd;
	uint64_t v1, v2;
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	ASSERT_EQ(0, pin_to_cpu(0));
	fd = syscall_ctx(0, NULL, NULL, 0, period, PFM_REGFL_OVFL_NOTIFY,
			 -lreset, false);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, set_nonblock(fd));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(period + 50);
	/* Masked since the 100th call: neither calls nor reads count. */
	v1 = pfm_read_pmd(fd, 0, 0);
	raw_syscalls(50);
	v2 = pfm_read_pmd(fd, 0, 0);

	ASSERT_EQ((ssize_t)sizeof(msg), read_msg(fd, &msg));
	TH_LOG("message: type %u pmds %#llx set %u cpu %u pid %u tid %u",
	       m->msg_type, ULL(m->msg_ovfl_pmds[0]), m->msg_active_set,
	       m->msg_ovfl_cpu, m->msg_ovfl_pid, m->msg_ovfl_tid);
	TH_LOG("ip %#llx (smpl_text %p-%p); PMD0 %#llx then %#llx",
	       ULL(m->msg_ovfl_ip), __start_smpl_text, __stop_smpl_text,
	       ULL(v1), ULL(v2));
	EXPECT_EQ(PFM_MSG_OVFL, m->msg_type);
	EXPECT_EQ(1, m->msg_ovfl_pmds[0]);
	EXPECT_EQ(0, m->msg_ovfl_pmds[1] | m->msg_ovfl_pmds[2] |
		     m->msg_ovfl_pmds[3]);
	EXPECT_EQ(0, m->msg_active_set);
	EXPECT_EQ(0, m->msg_ovfl_cpu);
	EXPECT_EQ(getpid(), m->msg_ovfl_pid);
	EXPECT_EQ(gettid(), m->msg_ovfl_tid);
	EXPECT_TRUE(in_smpl_text(m->msg_ovfl_ip));
	EXPECT_EQ(-EAGAIN, read_msg(fd, &msg));

	/* At the wrap (0), not reset, and frozen. */
	EXPECT_EQ(0, v1);
	EXPECT_EQ(v1, v2);
	EXPECT_EQ(-EBUSY, neg_errno(pfm_start(fd, NULL)));

	/* Restart: long reset, counting again (the STOP entry counts). */
	ASSERT_EQ(0, pfm_restart(fd));
	raw_syscalls(more);
	ASSERT_EQ(0, pfm_stop(fd));
	ASSERT_EQ(0, pfm_read_pd(fd, 0, 0, &pd));
	TH_LOG("after restart and %llu calls: PMD0 %lld, last reset %lld",
	       ULL(more), LL(pd.reg_value), LL(pd.reg_last_reset_val));
	EXPECT_EQ(-lreset + more + 1, pd.reg_value);
	EXPECT_EQ(-lreset, pd.reg_last_reset_val);
	EXPECT_EQ(-EBUSY, neg_errno(pfm_restart(fd)));	/* not masked */
	close(fd);
}

/*
 * No NOTIFY: PMD0 starts at -40 and is reloaded with the short reset
 * -25 at each overflow; 199 raw calls count 200: overflows at 40, 65,
 * ..., 190, then 10 more: -15.  No message.
 */
TEST(short_reset_no_msg)
{
	const uint64_t period = 40, reset = 25, n = 199;
	const uint64_t c = n + 1, want = -reset + (c - period) % reset;
	union pfarg_msg msg;
	pfarg_pmd_t pd;
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = pfm_fmt_ctx(0, NULL, NULL, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, syscall_ctrs(fd, 0, 0, -period, -reset, -reset, false));
	ASSERT_EQ(0, set_nonblock(fd));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(n);
	ASSERT_EQ(0, pfm_stop(fd));
	ASSERT_EQ(0, pfm_read_pd(fd, 0, 0, &pd));
	TH_LOG("period %llu, short reset -%llu, %llu counted: PMD0 %lld (want %lld)",
	       ULL(period), ULL(reset), ULL(c), LL(pd.reg_value), LL(want));
	TH_LOG("last reset %lld", LL(pd.reg_last_reset_val));
	EXPECT_EQ(want, pd.reg_value);
	EXPECT_EQ(-reset, pd.reg_last_reset_val);
	EXPECT_EQ(-EAGAIN, read_msg(fd, &msg));
	EXPECT_EQ(0, readable(fd));
	close(fd);
}

/*
 * PFM_REGFL_RANDOM, mask 0xff, short reset -1000: each reload is in
 * [-1255, -1000].  Each round runs exactly up to the next overflow
 * (the counter's distance to 0), then stops: the PMD reads its new
 * reset value + 1 (the STOP entry).
 */
TEST(random_reset)
{
	const uint64_t reset = 1000, mask = 0xff;
	const int rounds = 32;
	int64_t seen[32], lo = INT64_MAX, hi = INT64_MIN;
	int fd, i, j, distinct = 0, bad = 0;
	pfarg_pmd_t pd;
	uint64_t left;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = pfm_fmt_ctx(0, NULL, NULL, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_write_pmc(fd, 0, 0, SOFT_EV_SYSCALLS));
	pfm_pmd_prep(&pd, 0, 0, PFM_REGFL_RANDOM, -10, -reset);
	pd.reg_random_mask = mask;
	ASSERT_EQ(0, pfm_write_pmds(fd, &pd, 1));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_read_pd(fd, 0, 0, &pd));
	left = -pd.reg_value;		/* 10: as written */
	for (i = 0; i < rounds; i++) {
		ASSERT_EQ(0, pfm_start(fd, NULL));
		raw_syscalls(left);
		ASSERT_EQ(0, pfm_stop(fd));
		ASSERT_EQ(0, pfm_read_pd(fd, 0, 0, &pd));
		seen[i] = (int64_t)pd.reg_last_reset_val;
		if (pd.reg_value != pd.reg_last_reset_val + 1 ||
		    seen[i] < -(int64_t)(reset + mask) ||
		    seen[i] > -(int64_t)reset) {
			if (!bad++)
				TH_LOG("round %d: PMD0 %lld, last reset %lld",
				       i, LL(pd.reg_value), LL(seen[i]));
		}
		if (seen[i] < lo)
			lo = seen[i];
		if (seen[i] > hi)
			hi = seen[i];
		ASSERT_GT(0, (int64_t)pd.reg_value);
		left = -pd.reg_value;
	}
	for (i = 0; i < rounds; i++) {
		for (j = 0; j < i && seen[j] != seen[i]; j++)
			;
		distinct += j == i;
	}
	TH_LOG("%d overflows: reset values %lld..%lld, %d distinct, %d bad",
	       rounds, LL(lo), LL(hi), distinct, bad);
	EXPECT_EQ(0, bad);
	EXPECT_LE(2, distinct);
	close(fd);
}

/* PFM_FL_OVFL_NO_MSG: EPOLLIN, read() returns 0 and consumes it. */
TEST(no_msg_wakeup)
{
	union pfarg_msg msg;
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = syscall_ctx(PFM_FL_OVFL_NO_MSG, NULL, NULL, 0, 10,
			 PFM_REGFL_OVFL_NOTIFY, -10, false);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, set_nonblock(fd));
	EXPECT_EQ(0, readable(fd));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(20);
	EXPECT_EQ(1, readable(fd));
	EXPECT_EQ(0, read_msg(fd, &msg));
	EXPECT_EQ(0, readable(fd));
	EXPECT_EQ(-EAGAIN, read_msg(fd, &msg));
	close(fd);
}

/* Lock-free, so async-signal-safe. */
static atomic_int sigio_count;

static void on_sigio(int sig)
{
	(void)sig;
	atomic_fetch_add(&sigio_count, 1);
}

/* O_ASYNC + F_SETOWN: one SIGIO for the one message. */
TEST(sigio)
{
	struct sigaction sa;
	union pfarg_msg msg;
	int fd, fl, i;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigio;
	ASSERT_EQ(0, sigaction(SIGIO, &sa, NULL));
	fd = syscall_ctx(0, NULL, NULL, 0, 10, PFM_REGFL_OVFL_NOTIFY, -10,
			 false);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fcntl(fd, F_SETOWN, getpid()));
	fl = fcntl(fd, F_GETFL);
	ASSERT_LE(0, fl);
	ASSERT_EQ(0, fcntl(fd, F_SETFL, fl | O_ASYNC | O_NONBLOCK));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	EXPECT_EQ(0, atomic_load(&sigio_count));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(30);
	for (i = 0; i < 100 && !atomic_load(&sigio_count); i++)
		usleep(1000);
	usleep(20000);			/* a second one would show by now */
	TH_LOG("%d SIGIO", atomic_load(&sigio_count));
	EXPECT_EQ(1, atomic_load(&sigio_count));
	EXPECT_EQ((ssize_t)sizeof(msg), read_msg(fd, &msg));
	EXPECT_EQ(PFM_MSG_OVFL, msg.type);
	close(fd);
	signal(SIGIO, SIG_DFL);
}

/* A thread making raw system calls and counting them. */
struct looper {
	pthread_t thread;
	atomic_ulong iters;
	atomic_int stop;
	atomic_int tid;
};

static void *looper_fn(void *arg)
{
	struct looper *l = arg;

	atomic_store(&l->tid, gettid());
	while (!atomic_load(&l->stop)) {
		raw_syscalls(1);
		atomic_fetch_add(&l->iters, 1);
	}
	return NULL;
}

/*
 * PFM_FL_NOTIFY_BLOCK on another thread: at the overflow it stops on
 * its way back to user space until pfm_restart().  Its long reset is far
 * away, so it does not stop again.
 */
TEST(notify_block)
{
	struct looper l = { 0 };
	union pfarg_msg msg;
	struct pfarg_ovfl_msg *m = &msg.pfm_ovfl_msg;
	unsigned long c0, c1, c2;
	int fd, tid;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = syscall_ctx(PFM_FL_NOTIFY_BLOCK, NULL, NULL, 0, 200,
			 PFM_REGFL_OVFL_NOTIFY, FAR_RESET, false);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pthread_create(&l.thread, NULL, looper_fn, &l));
	while (!atomic_load(&l.tid))
		usleep(1000);
	tid = atomic_load(&l.tid);
	ASSERT_EQ(0, pfm_load(fd, tid));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	/* Say where things stand rather than let the harness time out. */
	if (!wait_readable(fd, 10000)) {
		pfarg_setinfo_t si;

		pfm_set_info(fd, 0, &si);
		TH_LOG("no message in 10 s: thread at %lu calls, PMD0 %#llx, set counted %llu ns",
		       (unsigned long)atomic_load(&l.iters),
		       ULL(pfm_read_pmd(fd, 0, 0)), ULL(si.set_act_duration));
	}
	ASSERT_EQ((ssize_t)sizeof(msg), read_msg(fd, &msg));
	c0 = atomic_load(&l.iters);
	usleep(100000);
	c1 = atomic_load(&l.iters);
	ASSERT_EQ(0, pfm_restart(fd));
	usleep(100000);
	c2 = atomic_load(&l.iters);
	TH_LOG("thread %d: %lu calls at the message, %lu 100 ms later",
	       tid, c0, c1);
	TH_LOG("%lu 100 ms after restart; message ip %#llx", c2,
	       ULL(m->msg_ovfl_ip));
	EXPECT_EQ(PFM_MSG_OVFL, m->msg_type);
	EXPECT_EQ(1, m->msg_ovfl_pmds[0]);
	EXPECT_EQ(getpid(), m->msg_ovfl_pid);
	EXPECT_EQ(tid, m->msg_ovfl_tid);
	EXPECT_TRUE(in_smpl_text(m->msg_ovfl_ip));
	EXPECT_EQ(c0, c1);
	EXPECT_LT(c1, c2);
	atomic_store(&l.stop, 1);
	close(fd);
	pthread_join(l.thread, NULL);
}

/* The caller cannot block itself. */
TEST(notify_block_self_refused)
{
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = syscall_ctx(PFM_FL_NOTIFY_BLOCK, NULL, NULL, 0, 200,
			 PFM_REGFL_OVFL_NOTIFY, -200, false);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, pfm_load(fd, gettid()));
	close(fd);
}

/* ------------------------------------------------------------------ */
/* The "default" format                                                */
/* ------------------------------------------------------------------ */

/*
 * Entry @k of a "default" buffer of layout 1.0 (perfmon2 v2.8's), from
 * this thread on CPU 0, recording PMD1 = @want_val, PMD0 last reloaded
 * with @want_reset: 0, or 1 after logging what is off.
 */
static int check_dfl_entry(struct __test_metadata *_metadata,
			   const struct pfm_dfl_smpl_entry *e, int k,
			   uint64_t want_val, uint64_t want_reset)
{
	const uint64_t *val = (const uint64_t *)(e + 1);

	/* v2.8's names: pid is the thread's id, tgid the process's */
	if (e->pid == (uint32_t)gettid() && e->tgid == (uint32_t)getpid() &&
	    in_smpl_text(e->ip) && e->cpu == 0 && e->set == 0 &&
	    e->ovfl_pmd == 0 && e->reserved == 0 &&
	    e->last_reset_val == want_reset && val[0] == want_val)
		return 0;
	TH_LOG("entry %d: pid %u tgid %u ip %#llx cpu %u set %u pmd %u reserved %u",
	       k, e->pid, e->tgid, ULL(e->ip), e->cpu, e->set, e->ovfl_pmd,
	       e->reserved);
	TH_LOG("entry %d: last reset %lld PMD1 %llu (want %llu)",
	       k, LL(e->last_reset_val), ULL(val[0]), ULL(want_val));
	return 1;
}

/* The same for layout 2.0 (PFM_DFL_SMPL_FL_V2): its own fields too. */
static int check_dfl_entry_v2(struct __test_metadata *_metadata,
			      const struct pfm_dfl_smpl_entry_v2 *e, int k,
			      uint64_t want_val, uint64_t want_reset)
{
	const uint64_t *val = (const uint64_t *)(e + 1);

	if (e->pid == (uint32_t)getpid() && e->tid == (uint32_t)gettid() &&
	    in_smpl_text(e->ip) && e->cpu == 0 && e->set == 0 &&
	    e->ovfl_pmd == 0 && e->nr_values == 1 && e->eventid == 0x5a &&
	    e->last_reset_val == want_reset && val[0] == want_val)
		return 0;
	TH_LOG("entry %d: pid %u tid %u ip %#llx cpu %u set %u pmd %u values %u",
	       k, e->pid, e->tid, ULL(e->ip), e->cpu, e->set, e->ovfl_pmd,
	       e->nr_values);
	TH_LOG("entry %d: last reset %lld eventid %#llx PMD1 %llu (want %llu)",
	       k, LL(e->last_reset_val), ULL(e->eventid), ULL(val[0]),
	       ULL(want_val));
	return 1;
}

/*
 * Period 64, 3210 raw calls (3211 counted, the last multiple of 64 is
 * 3200, a raw call): exactly 50 entries, entry k recording PMD1 (the
 * same event, never reset) = (k + 1) * 64; every field of the layout
 * @buf_flags asks for is checked.
 */
static void dfl_exact(struct __test_metadata *_metadata, uint32_t buf_flags)
{
	const bool v2 = buf_flags & PFM_DFL_SMPL_FL_V2;
	const uint64_t period = 64, n = 64 * 50 + 10, nsmpl = (n + 1) / period;
	const uint64_t ent = (v2 ? DFL_ENTRY_V2 : DFL_ENTRY) + 8;
	struct pfm_dfl_smpl_arg arg = { .buf_size = 16384,
					.buf_flags = buf_flags };
	const struct pfm_dfl_smpl_entry_v2 *e2;
	const struct pfm_dfl_smpl_entry *e;
	struct pfm_dfl_smpl_hdr *hdr;
	uint64_t t0, t1, k, ts, tprev, bad = 0, badt = 0;
	union pfarg_msg msg;
	size_t len = page_align(arg.buf_size);
	int fd;

	ASSERT_EQ(0, pin_to_cpu(0));
	fd = syscall_ctx(0, PFM_DFL_SMPL_NAME, &arg, sizeof(arg), period,
			 PFM_REGFL_OVFL_NOTIFY, -period, true);
	ASSERT_LE(0, fd) TH_LOG("\"default\" format: %s (pfm_dfl_smpl loaded?)",
				strerror(-fd));
	hdr = pfm_map_buf(fd, len, PROT_READ);
	ASSERT_TRUE(hdr != MAP_FAILED) TH_LOG("mmap: %s", strerror(errno));
	EXPECT_EQ(v2 ? PFM_DFL_SMPL_VERSION_2 : PFM_DFL_SMPL_VERSION,
		  hdr->hdr_version);
	EXPECT_EQ(buf_flags, hdr->hdr_buf_flags);
	EXPECT_EQ(ent - 8, hdr->hdr_min_buf_space);
	EXPECT_EQ(0, hdr->hdr_count);
	EXPECT_EQ(DFL_HDR, hdr->hdr_cur_offs);
	ASSERT_EQ(0, set_nonblock(fd));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	t0 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(n);
	ASSERT_EQ(0, pfm_stop(fd));
	t1 = clock_ns(CLOCK_MONOTONIC);

	TH_LOG("layout %u.%u: %llu counted, period %llu: %llu entries (want %llu)",
	       hdr->hdr_version >> 16, hdr->hdr_version & 0xffff, ULL(n + 1),
	       ULL(period), ULL(hdr->hdr_count), ULL(nsmpl));
	TH_LOG("next at %llu, %llu overflows, buffer %llu bytes",
	       ULL(hdr->hdr_cur_offs), ULL(hdr->hdr_overflows),
	       ULL(hdr->hdr_buf_size));
	ASSERT_EQ(nsmpl, hdr->hdr_count);
	EXPECT_EQ(DFL_HDR + nsmpl * ent, hdr->hdr_cur_offs);
	EXPECT_EQ(ent, hdr->hdr_min_buf_space);
	EXPECT_EQ(0, hdr->hdr_overflows);
	tprev = t0;
	for (k = 0; k < nsmpl; k++) {
		e = (const void *)((const char *)hdr + DFL_HDR + k * ent);
		e2 = (const void *)e;
		if (v2)
			bad += check_dfl_entry_v2(_metadata, e2, k,
						  (k + 1) * period, -period);
		else
			bad += check_dfl_entry(_metadata, e, k,
					       (k + 1) * period, -period);
		ts = v2 ? e2->tstamp : e->tstamp;
		if (ts < tprev || ts > t1)
			badt++;
		tprev = ts;
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, badt) TH_LOG("timestamps outside %llu..%llu or going back",
				  ULL(t0), ULL(t1));
	EXPECT_EQ(n + 1, pfm_read_pmd(fd, 0, 1));
	EXPECT_EQ(-EAGAIN, read_msg(fd, &msg));	/* never full */
	munmap(hdr, len);
	close(fd);
}

/* Layout 1.0, perfmon2 v2.8's, byte for byte. */
TEST(dfl_exact_samples)
{
	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	dfl_exact(_metadata, 0);
}

/* Layout 2.0, asked for with PFM_DFL_SMPL_FL_V2. */
TEST(dfl_exact_samples_v2)
{
	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	dfl_exact(_metadata, PFM_DFL_SMPL_FL_V2);
}

/*
 * A buffer of exactly 4 entries (with one value each): the 4th fills it,
 * notifies and masks (PMD1 stops at 4 periods); pfm_restart() empties
 * it and sampling resumes.
 */
TEST(dfl_full_restart)
{
	const uint64_t period = 50, ent = DFL_ENTRY + 8;
	struct pfm_dfl_smpl_arg arg = { .buf_size = DFL_HDR + 4 * ent };
	const struct pfm_dfl_smpl_entry *e;
	struct pfm_dfl_smpl_hdr *hdr;
	union pfarg_msg msg;
	size_t len = page_align(arg.buf_size);
	uint64_t bad = 0, k;
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	ASSERT_EQ(0, pin_to_cpu(0));
	fd = syscall_ctx(0, PFM_DFL_SMPL_NAME, &arg, sizeof(arg), period,
			 PFM_REGFL_OVFL_NOTIFY, -period, true);
	ASSERT_LE(0, fd) TH_LOG("\"default\" format: %s (pfm_dfl_smpl loaded?)",
				strerror(-fd));
	hdr = pfm_map_buf(fd, len, PROT_READ);
	ASSERT_TRUE(hdr != MAP_FAILED) TH_LOG("mmap: %s", strerror(errno));
	ASSERT_EQ(0, set_nonblock(fd));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(4 * period + 10);

	TH_LOG("buf_size %llu: %llu entries, next at %llu, hdr_buf_size %llu",
	       ULL(arg.buf_size), ULL(hdr->hdr_count), ULL(hdr->hdr_cur_offs),
	       ULL(hdr->hdr_buf_size));
	ASSERT_EQ((ssize_t)sizeof(msg), read_msg(fd, &msg));
	EXPECT_EQ(PFM_MSG_OVFL, msg.type);
	EXPECT_EQ(1, msg.pfm_ovfl_msg.msg_ovfl_pmds[0]);
	EXPECT_TRUE(in_smpl_text(msg.pfm_ovfl_msg.msg_ovfl_ip));
	EXPECT_EQ(-EAGAIN, read_msg(fd, &msg));
	ASSERT_EQ(4, hdr->hdr_count);
	EXPECT_EQ(arg.buf_size, hdr->hdr_cur_offs);
	EXPECT_EQ(0, hdr->hdr_overflows);
	for (k = 0; k < 4; k++) {
		e = (const void *)((const char *)hdr + DFL_HDR + k * ent);
		bad += check_dfl_entry(_metadata, e, k, (k + 1) * period,
				       -period);
	}
	EXPECT_EQ(0, bad);
	/* Masked: the 10 calls after the 4th sample did not count. */
	TH_LOG("PMD1 %llu", ULL(pfm_read_pmd(fd, 0, 1)));
	EXPECT_EQ(4 * period, pfm_read_pmd(fd, 0, 1));
	EXPECT_EQ(-EBUSY, neg_errno(pfm_start(fd, NULL)));

	ASSERT_EQ(0, pfm_restart(fd));
	EXPECT_EQ(0, hdr->hdr_count);
	EXPECT_EQ(DFL_HDR, hdr->hdr_cur_offs);
	/* 2 periods + 6 counted (STOP included): 2 more entries. */
	raw_syscalls(2 * period + 5);
	ASSERT_EQ(0, pfm_stop(fd));
	TH_LOG("after restart: %llu entries, PMD0 %lld, PMD1 %llu",
	       ULL(hdr->hdr_count), LL(pfm_read_pmd(fd, 0, 0)),
	       ULL(pfm_read_pmd(fd, 0, 1)));
	ASSERT_EQ(2, hdr->hdr_count);
	for (k = 0; k < 2; k++) {
		e = (const void *)((const char *)hdr + DFL_HDR + k * ent);
		bad += check_dfl_entry(_metadata, e, k, (k + 5) * period,
				       -period);
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(-period + 6, pfm_read_pmd(fd, 0, 0));
	EXPECT_EQ(6 * period + 6, pfm_read_pmd(fd, 0, 1));
	EXPECT_EQ(-EAGAIN, read_msg(fd, &msg));
	munmap(hdr, len);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* The "ring" format                                                   */
/* ------------------------------------------------------------------ */

/*
 * One data page, never read: the ring takes as many 56-byte samples as
 * fit, the others are lost, records + lost == samples.  Once the reader
 * consumed everything, the next sample comes after a LOST record with
 * the drops (it wraps at the end of the data area with 4 KiB pages).
 */
TEST(ring_lost_exact)
{
	struct pfm_ring_smpl_arg arg = { .data_pages = 1 };
	const uint64_t period = 10;
	uint64_t cap, nsmpl, head, head2, pos, bad = 0, nrec = 0, lost, v;
	union ring_rec rec;
	struct ring r;
	void *map;
	int fd, sz;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = syscall_ctx(0, PFM_RING_SMPL_NAME, &arg, sizeof(arg), period,
			 PFM_REGFL_OVFL_NOTIFY, -period, false);
	ASSERT_LE(0, fd) TH_LOG("\"ring\" format: %s (pfm_ring_smpl loaded?)",
				strerror(-fd));
	map = ring_map(fd, 1, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(map != MAP_FAILED) TH_LOG("mmap: %s", strerror(errno));
	ring_init(&r, map);
	EXPECT_EQ(PFM_RING_VERSION, r.ctrl->version);
	EXPECT_EQ(0, r.ctrl->flags);
	EXPECT_EQ(page_size(), r.ctrl->data_offset);
	ASSERT_EQ(page_size(), r.size);
	EXPECT_EQ(0, ring_head(&r));
	EXPECT_EQ(0, ring_tail(&r));
	cap = r.size / RING_SAMPLE;
	nsmpl = 2 * cap + 50;

	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(nsmpl * period + 5);
	ASSERT_EQ(0, pfm_stop(fd));
	head = ring_head(&r);
	pos = ring_tail(&r);
	while ((sz = ring_next(&r, &pos, head, &rec)) > 0) {
		nrec++;
		if (rec.hdr.type != PFM_RING_REC_SAMPLE ||
		    sz != RING_SAMPLE || !in_smpl_text(rec.smp.ip) ||
		    rec.smp.nr_values || rec.smp.tid != (uint32_t)gettid())
			bad++;
	}
	TH_LOG("%llu samples, room for %llu: %llu records in the ring",
	       ULL(nsmpl), ULL(cap), ULL(nrec));
	TH_LOG("records %llu, lost %llu, head %llu", ULL(r.ctrl->records),
	       ULL(r.ctrl->lost), ULL(head));
	EXPECT_EQ(0, sz);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(cap, nrec);
	EXPECT_EQ(cap * RING_SAMPLE, head);
	EXPECT_EQ(cap, r.ctrl->records);
	EXPECT_EQ(nsmpl, r.ctrl->records + r.ctrl->lost);
	lost = r.ctrl->lost;

	/* Consume all, then run exactly to the next overflow. */
	ring_consume(&r, head);
	v = pfm_read_pmd(fd, 0, 0);
	ASSERT_GT(0, (int64_t)v);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(-v);
	ASSERT_EQ(0, pfm_stop(fd));
	head2 = ring_head(&r);
	pos = head;
	TH_LOG("one more sample: head %llu -> %llu, records %llu, lost %llu",
	       ULL(head), ULL(head2), ULL(r.ctrl->records), ULL(r.ctrl->lost));
	EXPECT_EQ(head + RING_LOST + RING_SAMPLE, head2);
	EXPECT_EQ(cap + 2, r.ctrl->records);
	EXPECT_EQ(lost, r.ctrl->lost);
	ASSERT_EQ((int)RING_LOST, ring_next(&r, &pos, head2, &rec));
	EXPECT_EQ(PFM_RING_REC_LOST, rec.hdr.type);
	EXPECT_EQ(lost, rec.lost.lost);
	ASSERT_EQ((int)RING_SAMPLE, ring_next(&r, &pos, head2, &rec));
	EXPECT_EQ(PFM_RING_REC_SAMPLE, rec.hdr.type);
	EXPECT_TRUE(in_smpl_text(rec.smp.ip));
	EXPECT_EQ(-period, rec.smp.last_reset_val);
	EXPECT_EQ(0, ring_next(&r, &pos, head2, &rec));
	munmap(map, 2 * page_size());
	close(fd);
}

/*
 * wakeup_events = 4: 20 samples, one per start/stop round (PMD0 starts
 * at -9, the 9th raw call overflows it, STOP brings it back to -9):
 * readable exactly after samples 4, 8, 12, 16 and 20.
 */
TEST(ring_wakeups)
{
	struct pfm_ring_smpl_arg arg = { .data_pages = 1, .wakeup_events = 4 };
	const uint64_t period = 10;
	union pfarg_msg msg;
	int fd, i, rd, bad = 0;
	void *map;
	struct ring r;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &arg, sizeof(arg));
	ASSERT_LE(0, fd) TH_LOG("\"ring\" format: %s (pfm_ring_smpl loaded?)",
				strerror(-fd));
	ASSERT_EQ(0, syscall_ctrs(fd, 0, PFM_REGFL_OVFL_NOTIFY, -(period - 1),
				  -period, -period, false));
	map = ring_map(fd, 1, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(map != MAP_FAILED) TH_LOG("mmap: %s", strerror(errno));
	ring_init(&r, map);
	ASSERT_EQ(0, set_nonblock(fd));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	for (i = 1; i <= 20; i++) {
		ASSERT_EQ(0, pfm_start(fd, NULL));
		raw_syscalls(period - 1);
		ASSERT_EQ(0, pfm_stop(fd));
		rd = readable(fd);
		if (rd != !(i % 4)) {
			if (!bad++)
				TH_LOG("after sample %d: readable %d, records %llu, wakeups %llu",
				       i, rd, ULL(r.ctrl->records),
				       ULL(r.ctrl->wakeups));
		}
		if (rd == 1) {
			EXPECT_EQ(0, read_msg(fd, &msg));
			EXPECT_EQ(0, readable(fd));
		}
	}
	TH_LOG("20 samples: records %llu, wakeups %llu, lost %llu",
	       ULL(r.ctrl->records), ULL(r.ctrl->wakeups), ULL(r.ctrl->lost));
	EXPECT_EQ(0, bad);
	EXPECT_EQ(20, r.ctrl->records);
	EXPECT_EQ(5, r.ctrl->wakeups);
	EXPECT_EQ(0, r.ctrl->lost);
	EXPECT_EQ(20 * RING_SAMPLE, ring_head(&r));
	munmap(map, 2 * page_size());
	close(fd);
}

/*
 * Overwrite mode, one data page, 64-byte samples (PMD1 recorded): the
 * ring keeps the newest whole records, consecutive, ending with the
 * last sample; overwritten + kept == samples.  Read-only mapping.
 */
TEST(ring_overwrite)
{
	struct pfm_ring_smpl_arg arg = {
		.data_pages = 1,
		.flags = PFM_RING_OVERWRITE,
	};
	const uint64_t period = 10, recsz = RING_SAMPLE + 8;
	uint64_t cap, nsmpl, head, tail, pos, nrec = 0, bad = 0, prev = 0;
	union ring_rec rec;
	struct ring r;
	void *map;
	int fd, sz;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = syscall_ctx(0, PFM_RING_SMPL_NAME, &arg, sizeof(arg), period,
			 PFM_REGFL_OVFL_NOTIFY, -period, true);
	ASSERT_LE(0, fd) TH_LOG("\"ring\" format: %s (pfm_ring_smpl loaded?)",
				strerror(-fd));
	EXPECT_EQ(-EPERM, map_err(fd, 2 * page_size(),
				  PROT_READ | PROT_WRITE, 0));
	map = ring_map(fd, 1, PROT_READ);
	ASSERT_TRUE(map != MAP_FAILED) TH_LOG("mmap: %s", strerror(errno));
	ring_init(&r, map);
	EXPECT_EQ(PFM_RING_OVERWRITE, r.ctrl->flags);
	cap = r.size / recsz;
	nsmpl = 3 * cap + 7;

	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(nsmpl * period + 5);
	ASSERT_EQ(0, pfm_stop(fd));
	head = ring_head(&r);
	tail = ring_tail(&r);
	pos = tail;
	while ((sz = ring_next(&r, &pos, head, &rec)) > 0) {
		if (rec.hdr.type != PFM_RING_REC_SAMPLE || sz != (int)recsz ||
		    rec.smp.nr_values != 1 || !in_smpl_text(rec.smp.ip) ||
		    (nrec && smp_value(&rec) != prev + period)) {
			if (!bad++)
				TH_LOG("record %llu: type %u size %d values %u PMD1 %llu prev %llu",
				       ULL(nrec), rec.hdr.type, sz,
				       rec.smp.nr_values, ULL(smp_value(&rec)),
				       ULL(prev));
		}
		prev = smp_value(&rec);
		nrec++;
	}
	TH_LOG("%llu samples, room for %llu: tail %llu head %llu, %llu kept",
	       ULL(nsmpl), ULL(cap), ULL(tail), ULL(head), ULL(nrec));
	TH_LOG("last PMD1 %llu, overwritten %llu, records %llu", ULL(prev),
	       ULL(r.ctrl->overwritten), ULL(r.ctrl->records));
	EXPECT_EQ(0, sz);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(nsmpl * period, prev);
	EXPECT_EQ(cap, nrec);
	EXPECT_EQ(nrec * recsz, head - tail);
	EXPECT_EQ(nsmpl, r.ctrl->overwritten + nrec);
	EXPECT_EQ(nsmpl, r.ctrl->records);
	EXPECT_EQ(0, r.ctrl->lost);
	EXPECT_EQ(0, r.ctrl->wakeups);
	EXPECT_EQ(0, readable(fd));
	munmap(map, 2 * page_size());
	close(fd);
}

/*
 * Two sets switching after each overflow of their PMD0 (period 20): 30
 * overflows, each a sample followed by a set-switch record, 0->1, 1->0...
 */
TEST(ring_set_switch)
{
	struct pfm_ring_smpl_arg arg = { .data_pages = 1 };
	const uint64_t period = 20, nsmpl = 30;
	uint64_t head, pos, nrec = 0, bad = 0;
	pfarg_setdesc_t sd;
	union ring_rec rec;
	pfarg_pmd_t pd;
	struct ring r;
	void *map;
	int fd, sz, cur = 0;
	uint16_t s;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	ASSERT_EQ(0, pin_to_cpu(0));
	fd = pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &arg, sizeof(arg));
	ASSERT_LE(0, fd) TH_LOG("\"ring\" format: %s (pfm_ring_smpl loaded?)",
				strerror(-fd));
	for (s = 0; s < 2; s++) {
		memset(&sd, 0, sizeof(sd));
		sd.set_id = s;
		sd.set_flags = PFM_SETFL_OVFL_SWITCH;
		ASSERT_EQ(0, pfm_create_evtsets(fd, &sd, 1));
		ASSERT_EQ(0, pfm_write_pmc(fd, s, 0, SOFT_EV_SYSCALLS));
		pfm_pmd_prep(&pd, s, 0, PFM_REGFL_OVFL_NOTIFY, -period,
			     -period);
		pd.reg_ovfl_switch_cnt = 1;
		ASSERT_EQ(0, pfm_write_pmds(fd, &pd, 1));
	}
	map = ring_map(fd, 1, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(map != MAP_FAILED) TH_LOG("mmap: %s", strerror(errno));
	ring_init(&r, map);
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(nsmpl * period + 7);
	ASSERT_EQ(0, pfm_stop(fd));
	head = ring_head(&r);
	pos = ring_tail(&r);
	while ((sz = ring_next(&r, &pos, head, &rec)) > 0) {
		bool ok;

		if (nrec % 2 == 0)	/* a sample of set cur */
			ok = rec.hdr.type == PFM_RING_REC_SAMPLE &&
			     sz == (int)RING_SAMPLE && rec.smp.set == cur &&
			     rec.smp.ovfl_pmd == 0 &&
			     in_smpl_text(rec.smp.ip);
		else			/* then the switch cur -> 1 - cur */
			ok = rec.hdr.type == PFM_RING_REC_SET_SWITCH &&
			     sz == (int)RING_SWITCH &&
			     rec.sw.from_set == cur &&
			     rec.sw.to_set == 1 - cur && rec.sw.cpu == 0;
		if (!ok && !bad++)
			TH_LOG("record %llu: type %u size %d set %u from %u to %u, want %s",
			       ULL(nrec), rec.hdr.type, sz, rec.smp.set,
			       rec.sw.from_set, rec.sw.to_set,
			       nrec % 2 ? "a switch" : "a sample");
		if (nrec % 2)
			cur = 1 - cur;
		nrec++;
	}
	TH_LOG("%llu overflows: %llu records, %llu bad, records %llu, lost %llu",
	       ULL(nsmpl), ULL(nrec), ULL(bad), ULL(r.ctrl->records),
	       ULL(r.ctrl->lost));
	EXPECT_EQ(0, sz);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(2 * nsmpl, nrec);
	EXPECT_EQ(2 * nsmpl, r.ctrl->records);
	EXPECT_EQ(nsmpl * (RING_SAMPLE + RING_SWITCH), head);
	munmap(map, 2 * page_size());
	close(fd);
}

/*
 * Overflow switching with notification, no format: an overflow that
 * both notifies and ends the set's switch count masks first; the switch
 * happens at the restart, which also reloads the long reset value of the
 * set that overflowed.  The second set's overflow notifies from set 1.
 */
TEST(notify_switch_at_restart)
{
	const uint64_t period = 50, lreset = -1000ull;
	pfarg_setinfo_t si;
	union pfarg_msg msg;
	pfarg_setdesc_t sd;
	pfarg_pmd_t pd;
	int fd;
	uint16_t s;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	ASSERT_EQ(0, pin_to_cpu(0));
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	for (s = 0; s < 2; s++) {
		memset(&sd, 0, sizeof(sd));
		sd.set_id = s;
		sd.set_flags = PFM_SETFL_OVFL_SWITCH;
		ASSERT_EQ(0, pfm_create_evtsets(fd, &sd, 1));
		ASSERT_EQ(0, pfm_write_pmc(fd, s, 0, SOFT_EV_SYSCALLS));
		pfm_pmd_prep(&pd, s, 0, PFM_REGFL_OVFL_NOTIFY, -period,
			     -period);
		pd.reg_long_reset = lreset;
		pd.reg_ovfl_switch_cnt = 1;
		ASSERT_EQ(0, pfm_write_pmds(fd, &pd, 1));
	}
	ASSERT_EQ(0, set_nonblock(fd));
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(period + 10);
	ASSERT_EQ((ssize_t)sizeof(msg), read_msg(fd, &msg));
	EXPECT_EQ(0, msg.pfm_ovfl_msg.msg_active_set);
	ASSERT_EQ(0, pfm_set_info(fd, 1, &si));
	EXPECT_EQ(0, si.set_runs);	/* masked: not switched yet */
	ASSERT_EQ(0, pfm_restart(fd));
	ASSERT_EQ(0, pfm_set_info(fd, 1, &si));
	EXPECT_EQ(1, si.set_runs);
	raw_syscalls(period + 10);
	ASSERT_EQ((ssize_t)sizeof(msg), read_msg(fd, &msg));
	EXPECT_EQ(1, msg.pfm_ovfl_msg.msg_active_set);
	EXPECT_TRUE(in_smpl_text(msg.pfm_ovfl_msg.msg_ovfl_ip));
	ASSERT_EQ(0, pfm_restart(fd));
	ASSERT_EQ(0, pfm_stop(fd));
	ASSERT_EQ(0, pfm_set_info(fd, 0, &si));
	EXPECT_EQ(2, si.set_runs);
	/* Set 0 came back with its long reset, then counted the stop. */
	EXPECT_EQ(lreset + 1, pfm_read_pmd(fd, 0, 0));
	close(fd);
}

/* ------------------------------------------------------------------ */
/* Triggers                                                            */
/* ------------------------------------------------------------------ */

#define TRIG_S	100
#define TRIG_T	250

/*
 * PMD0 = -S starts PMD2, PMD1 = -T stops it, PMD2 counts from 0: all
 * three count system calls; PMD0 and PMD1 reset far away.
 */
static int trigger_ctx(uint32_t flags)
{
	pfarg_pmd_t pd[3];
	int fd = pfm_fmt_ctx(flags, NULL, NULL, 0), i, err = 0;

	if (fd < 0)
		return fd;
	for (i = 0; i < 3 && !err; i++)
		err = pfm_write_pmc(fd, 0, i, SOFT_EV_SYSCALLS);
	pfm_pmd_prep(&pd[0], 0, 0, 0, -(uint64_t)TRIG_S, FAR_RESET);
	pd[0].reg_start_pmds = 1ull << 2;
	pfm_pmd_prep(&pd[1], 0, 1, 0, -(uint64_t)TRIG_T, FAR_RESET);
	pd[1].reg_stop_pmds = 1ull << 2;
	pfm_pmd_prep(&pd[2], 0, 2, 0, 0, 0);
	if (!err && pfm_write_pmds(fd, pd, 3))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Per-thread, in three rounds: S - 1 counted (PMD2 held at 0); 50 more
 * (PMD0 overflows at the S-th and releases PMD2, which counts the 49
 * after it); then well past T: PMD2 == T - S exactly (the S + 1-th to
 * the T-th: the T-th counts before PMD1's overflow stops PMD2).
 */
TEST(trigger_pair)
{
	uint64_t v0, v1, v2, c;
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = trigger_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_load(fd, gettid()));

	/* S - 1 counted: no overflow yet, PMD2 held. */
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(TRIG_S - 2);
	ASSERT_EQ(0, pfm_stop(fd));
	v2 = pfm_read_pmd(fd, 0, 2);
	TH_LOG("%d counted: PMD2 %llu", TRIG_S - 1, ULL(v2));
	EXPECT_EQ(0, v2);

	/* 50 more (S + 49): PMD2 counts from the call after the S-th. */
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(49);
	ASSERT_EQ(0, pfm_stop(fd));
	v2 = pfm_read_pmd(fd, 0, 2);
	TH_LOG("%d counted: PMD2 %llu", TRIG_S + 49, ULL(v2));
	EXPECT_EQ(49, v2);

	/* Well past T: PMD2 held since the T-th, T - S. */
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(2 * TRIG_T);
	ASSERT_EQ(0, pfm_stop(fd));
	c = TRIG_S + 49 + 2 * TRIG_T + 1;
	v0 = pfm_read_pmd(fd, 0, 0);
	v1 = pfm_read_pmd(fd, 0, 1);
	v2 = pfm_read_pmd(fd, 0, 2);
	TH_LOG("%llu counted, start at %d, stop at %d: PMD2 %llu, PMD0 %lld, PMD1 %lld",
	       ULL(c), TRIG_S, TRIG_T, ULL(v2), LL(v0), LL(v1));
	EXPECT_EQ(TRIG_T - TRIG_S, v2);
	EXPECT_EQ(FAR_RESET + c - TRIG_S, v0);
	EXPECT_EQ(FAR_RESET + c - TRIG_T, v1);
	close(fd);
}

/*
 * System-wide on the CPU this thread is pinned to: other tasks' calls
 * count too, but the overflows still happen at exact counts of the
 * CPU's calls, so PMD2 counts exactly T - S.
 */
TEST(trigger_pair_system)
{
	const uint64_t n = 2 * TRIG_T;
	uint64_t v0, v1, v2;
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	ASSERT_EQ(0, pin_to_cpu(0));
	fd = trigger_ctx(PFM_FL_SYSTEM_WIDE);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_load(fd, 0));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls(n);
	ASSERT_EQ(0, pfm_stop(fd));
	v0 = pfm_read_pmd(fd, 0, 0);
	v1 = pfm_read_pmd(fd, 0, 1);
	v2 = pfm_read_pmd(fd, 0, 2);
	TH_LOG("CPU0, %llu raw calls: PMD2 %llu, PMD0 %lld, PMD1 %lld",
	       ULL(n), ULL(v2), LL(v0), LL(v1));
	EXPECT_EQ(TRIG_T - TRIG_S, v2);
	/* At least our calls counted past each overflow. */
	EXPECT_LE(n - TRIG_S, v0 - FAR_RESET);
	EXPECT_LE(n - TRIG_T, v1 - FAR_RESET);
	EXPECT_GT(1ull << 39, v0 - FAR_RESET);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* Refusals                                                            */
/* ------------------------------------------------------------------ */

TEST(fmt_unknown_enoent)
{
	struct pfm_dfl_smpl_arg arg = { .buf_size = 65536 };

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	EXPECT_EQ(-ENOENT, pfm_fmt_ctx(0, "no-such-format", &arg,
				       sizeof(arg)));
}

TEST(fmt_arg_size_einval)
{
	uint64_t big[sizeof(struct pfm_dfl_smpl_arg) / 8 + 8];
	struct pfm_dfl_smpl_arg *dfl = (void *)big;
	struct pfm_ring_smpl_arg *ring = (void *)big;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	memset(big, 0, sizeof(big));
	dfl->buf_size = 65536;
	EXPECT_EQ(-EINVAL, pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, big,
				       sizeof(*dfl) - 8));
	EXPECT_EQ(-EINVAL, pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, big,
				       sizeof(*dfl) + 8));
	EXPECT_EQ(-EINVAL, pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, NULL, 0));
	memset(big, 0, sizeof(big));
	ring->data_pages = 1;
	EXPECT_EQ(-EINVAL, pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, big,
				       sizeof(*ring) - 8));
	EXPECT_EQ(-EINVAL, pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, big,
				       sizeof(*ring) + 8));
}

TEST(fmt_arg_reserved_einval)
{
	struct pfm_dfl_smpl_arg dfl;
	struct pfm_ring_smpl_arg ring;
	int i;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	for (i = 0; i < 4; i++) {
		memset(&dfl, 0, sizeof(dfl));
		dfl.buf_size = 65536;
		switch (i) {
		case 0:
			dfl.buf_flags = 2;	/* 1 is PFM_DFL_SMPL_FL_V2 */
			break;
		case 1:
			dfl.res1 = 1;
			break;
		case 2:
			dfl.reserved[0] = 1;
			break;
		case 3:
			dfl.reserved[5] = 1;
			break;
		}
		EXPECT_EQ(-EINVAL, pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, &dfl,
					       sizeof(dfl))) TH_LOG("dfl case %d", i);
	}
	for (i = 0; i < 3; i++) {
		memset(&ring, 0, sizeof(ring));
		ring.data_pages = 1;
		switch (i) {
		case 0:
			ring.reserved1 = 1;
			break;
		case 1:
			ring.reserved2[0] = 1;
			break;
		case 2:
			ring.reserved2[4] = 1;
			break;
		}
		EXPECT_EQ(-EINVAL, pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &ring,
					       sizeof(ring))) TH_LOG("ring case %d", i);
	}
}

/* Header and one entry without values (128 + 40 bytes) at least. */
TEST(dfl_buf_too_small_einval)
{
	struct pfm_dfl_smpl_arg arg;
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	memset(&arg, 0, sizeof(arg));
	EXPECT_EQ(-EINVAL, pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, &arg,
				       sizeof(arg)));
	arg.buf_size = DFL_HDR + DFL_ENTRY - 1;
	EXPECT_EQ(-EINVAL, pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, &arg,
				       sizeof(arg)));
	arg.buf_size = DFL_HDR + DFL_ENTRY;
	fd = pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, &arg, sizeof(arg));
	EXPECT_LE(0, fd) TH_LOG("buf_size %llu: %s", ULL(arg.buf_size),
				strerror(-fd));
	close(fd);
}

TEST(ring_pages_einval)
{
	static const uint32_t bad[] = {
		0, 3, 6, 1u << (PFM_RING_MAX_ORDER + 1), 0x80000000u,
	};
	struct pfm_ring_smpl_arg arg;
	unsigned int i;
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	memset(&arg, 0, sizeof(arg));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		arg.data_pages = bad[i];
		EXPECT_EQ(-EINVAL, pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &arg,
					       sizeof(arg)))
			TH_LOG("data_pages %u", bad[i]);
	}
	for (i = 1; i <= 2; i++) {
		arg.data_pages = i;
		fd = pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &arg, sizeof(arg));
		EXPECT_LE(0, fd) TH_LOG("data_pages %u: %s", i, strerror(-fd));
		close(fd);
	}
}

TEST(ring_flags_einval)
{
	struct pfm_ring_smpl_arg arg;
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	memset(&arg, 0, sizeof(arg));
	arg.data_pages = 1;
	arg.flags = 0x2;
	EXPECT_EQ(-EINVAL, pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &arg,
				       sizeof(arg)));
	arg.flags = 0x80000000u | PFM_RING_OVERWRITE;
	EXPECT_EQ(-EINVAL, pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &arg,
				       sizeof(arg)));
	arg.flags = PFM_RING_OVERWRITE;
	fd = pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &arg, sizeof(arg));
	EXPECT_LE(0, fd) TH_LOG("PFM_RING_OVERWRITE: %s", strerror(-fd));
	close(fd);
}

/*
 * In a child: RLIMIT_MEMLOCK 64 KiB, uid/gid 65534 (no CAP_IPC_LOCK):
 * a 1 MiB buffer is refused with ENOMEM, 16 KiB is granted.  Exit
 * status 0, or what went wrong.
 */
static int memlock_child(void)
{
	struct rlimit rl = { .rlim_cur = 64 << 10, .rlim_max = 64 << 10 };
	struct pfm_dfl_smpl_arg arg;
	int fd;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || become_nobody())
		return 100;
	memset(&arg, 0, sizeof(arg));
	arg.buf_size = 1 << 20;
	fd = pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, &arg, sizeof(arg));
	if (fd >= 0)
		return 101;
	if (fd != -ENOMEM)
		return -fd < 100 ? -fd : 102;	/* the errno */
	arg.buf_size = 16 << 10;
	fd = pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, &arg, sizeof(arg));
	return fd < 0 ? 103 : 0;
}

TEST(memlock_enomem)
{
	int status;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	if (getuid() != 0)
		SKIP(return, "needs root to switch users");
	/* No allowance beyond the rlimit (perf's 516 KiB per CPU). */
	ASSERT_EQ(0, knob_write("smpl_user_mlock_kb", "0"));
	status = run_child(memlock_child);
	EXPECT_EQ(0, knob_write("smpl_user_mlock_kb", "516"));
	TH_LOG("child: %d (0 ok; 101 1 MiB granted; 103 16 KiB refused; else the 1 MiB errno)",
	       status);
	EXPECT_EQ(0, status);
}

/*
 * In a child as uid/gid 65534 (no CAP_PERFMON): loading a system-wide
 * context is refused with EACCES (its samples would show every user's
 * threads and addresses); the same user may still monitor itself.
 * Exit status 0, or what went wrong.
 */
static int system_wide_child(void)
{
	int fd;

	if (become_nobody())
		return 100;
	fd = pfm_new_ctx(PFM_FL_SYSTEM_WIDE);
	if (fd < 0)
		return 101;
	if (!pfm_load(fd, 0))
		return 102;
	if (errno != EACCES)
		return errno < 100 ? errno : 103;
	close(fd);
	fd = pfm_new_ctx(0);
	return fd >= 0 && !pfm_load(fd, gettid()) ? 0 : 104;
}

TEST(system_wide_needs_cap_perfmon)
{
	int status;

	if (getuid() != 0)
		SKIP(return, "needs root to switch users");
	status = run_child(system_wide_child);
	TH_LOG("child: %d (0 ok; 102 system-wide loaded; 104 self refused; else the errno)",
	       status);
	EXPECT_EQ(0, status);
}

TEST(mmap_offset_einval)
{
	struct pfm_dfl_smpl_arg dfl = { .buf_size = 2 * page_size() };
	struct pfm_ring_smpl_arg ring = { .data_pages = 1 };
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, &dfl, sizeof(dfl));
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, map_err(fd, page_size(), PROT_READ, page_size()));
	EXPECT_EQ(0, map_err(fd, page_size(), PROT_READ, 0));
	close(fd);
	fd = pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &ring, sizeof(ring));
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, map_err(fd, page_size(), PROT_READ, page_size()));
	close(fd);
}

TEST(mmap_len_einval)
{
	struct pfm_dfl_smpl_arg dfl = { .buf_size = page_size() + 100 };
	struct pfm_ring_smpl_arg ring = { .data_pages = 2 };
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	/* Rounded up to 2 pages; ring: control page and 2 data pages. */
	fd = pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, &dfl, sizeof(dfl));
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, map_err(fd, 2 * page_size(), PROT_READ, 0));
	EXPECT_EQ(-EINVAL, map_err(fd, 3 * page_size(), PROT_READ, 0));
	close(fd);
	fd = pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &ring, sizeof(ring));
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, map_err(fd, 3 * page_size(), PROT_READ | PROT_WRITE, 0));
	EXPECT_EQ(-EINVAL, map_err(fd, 4 * page_size(), PROT_READ, 0));
	close(fd);
}

TEST(mmap_no_fmt_enodev)
{
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = pfm_fmt_ctx(0, NULL, NULL, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENODEV, map_err(fd, page_size(), PROT_READ, 0));
	close(fd);
}

TEST(mmap_dfl_write_eperm)
{
	struct pfm_dfl_smpl_arg dfl = { .buf_size = 4096 };
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, &dfl, sizeof(dfl));
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EPERM, map_err(fd, page_size(), PROT_READ | PROT_WRITE, 0));
	EXPECT_EQ(-EPERM, map_err(fd, page_size(), PROT_WRITE, 0));
	EXPECT_EQ(0, map_err(fd, page_size(), PROT_READ, 0));
	close(fd);
}

/* The ring's reader writes data_tail, except in overwrite mode. */
TEST(mmap_ring_write)
{
	struct pfm_ring_smpl_arg ring = { .data_pages = 1 };
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &ring, sizeof(ring));
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, map_err(fd, 2 * page_size(), PROT_READ | PROT_WRITE, 0));
	close(fd);
	ring.flags = PFM_RING_OVERWRITE;
	fd = pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &ring, sizeof(ring));
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EPERM, map_err(fd, 2 * page_size(),
				  PROT_READ | PROT_WRITE, 0));
	EXPECT_EQ(0, map_err(fd, 2 * page_size(), PROT_READ, 0));
	close(fd);
}

/*
 * A trigger mask naming an unimplemented PMD: EINVAL, the entry flagged
 * PFM_REG_RETFL_EINVAL, the good entry before it not.  (Every PMD of
 * the software PMU is a counter: the non-counter case needs another
 * PMU.)
 */
TEST(trigger_mask_einval)
{
	pfarg_pmd_t pd[2];
	int fd, i;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = pfm_fmt_ctx(0, NULL, NULL, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_write_pmc(fd, 0, 0, SOFT_EV_SYSCALLS));
	ASSERT_EQ(0, pfm_write_pmc(fd, 0, 1, SOFT_EV_SYSCALLS));
	for (i = 0; i < 4; i++) {
		pfm_pmd_prep(&pd[0], 0, 0, 0, -100, -100);
		pd[0].reg_start_pmds = 1ull << 1;
		pfm_pmd_prep(&pd[1], 0, 1, 0, -100, -100);
		switch (i) {
		case 0:
			pd[1].reg_start_pmds = 1ull << 4;	/* no PMD4 */
			break;
		case 1:
			pd[1].reg_stop_pmds = 1ull << 4;
			break;
		case 2:
			pd[1].reg_start_pmds = 1ull << 63;
			break;
		case 3:
			pd[1].reg_stop_pmds = (1ull << 0) | (1ull << 63);
			break;
		}
		EXPECT_EQ(-EINVAL, neg_errno(pfm_write_pmds(fd, pd, 2)))
			TH_LOG("case %d", i);
		EXPECT_EQ(0, pd[0].reg_flags) TH_LOG("case %d", i);
		EXPECT_EQ(PFM_REG_RETFL_EINVAL,
			  pd[1].reg_flags & PFM_REG_RETFL_MASK) TH_LOG("case %d", i);
	}
	/* Both masks valid: accepted. */
	pfm_pmd_prep(&pd[1], 0, 1, 0, -100, -100);
	pd[1].reg_stop_pmds = 1ull << 0;
	EXPECT_EQ(0, neg_errno(pfm_write_pmds(fd, pd, 2)));
	close(fd);
}

TEST(trigger_reserved_eflags)
{
	pfarg_pmd_t pd;
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = pfm_fmt_ctx(0, NULL, NULL, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_write_pmc(fd, 0, 0, SOFT_EV_SYSCALLS));
	/* reg_reserved1 became reg_freq (ABI 2.96): freq_test freq_refusals. */
	pfm_pmd_prep(&pd, 0, 0, 0, -100, -100);
	pd.reg_reserved2 = 1;
	EXPECT_EQ(-EINVAL, neg_errno(pfm_write_pmds(fd, &pd, 1)));
	EXPECT_EQ(PFM_REG_RETFL_EFLAGS, pd.reg_flags & PFM_REG_RETFL_MASK);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* Call chains (PFM_REGFL_CALLCHAIN)                                   */
/* ------------------------------------------------------------------ */

/* Called, so that chain_syscalls() is no leaf function. */
static noinline __noclone void chain_nop(void)
{
	asm volatile("" ::: "memory");
}

/*
 * Raw calls in a function with a frame of its own: the compiler keeps
 * no frame in a leaf function even with -fno-omit-frame-pointer, and a
 * chain walked from there misses its caller (as perf's does).
 */
static noinline __noclone __section("smpl_text")
void chain_syscalls(unsigned long n)
{
	raw_getppid(n);
	chain_nop();
	asm volatile("" ::: "memory");
}

/*
 * chain_syscalls() called from chain_mid(), called from chain_outer(),
 * each alone in its section; the tests are built with frame pointers
 * (Makefile).  The empty asm after each call keeps it a call, not a
 * jump: a tail call would leave no frame of its caller.
 */
static noinline __noclone __section("chain_mid_text")
void chain_mid(unsigned long n)
{
	chain_syscalls(n);
	asm volatile("" ::: "memory");
}

static noinline __noclone __section("chain_outer_text")
void chain_outer(unsigned long n)
{
	chain_mid(n);
	asm volatile("" ::: "memory");
}

/*
 * Does @ips (@nr entries) run chain_syscalls(), chain_mid(), chain_outer():
 * the system call, then the return addresses into each caller?
 */
static bool chain_ok(const uint64_t *ips, unsigned int nr)
{
	return nr >= 3 && nr <= PFM_MAX_CALLCHAIN && in_smpl_text(ips[0]) &&
	       ips[1] >= (uintptr_t)__start_chain_mid_text &&
	       ips[1] < (uintptr_t)__stop_chain_mid_text &&
	       ips[2] >= (uintptr_t)__start_chain_outer_text &&
	       ips[2] < (uintptr_t)__stop_chain_outer_text;
}

union ring_chain {
	struct pfm_ring_callchain c;
	uint64_t raw[2 + PFM_MAX_CALLCHAIN];
};

/* The call chain record at *@pos into @ch, *@pos moved past it. */
static bool ring_next_chain(const struct ring *r, uint64_t *pos,
			    union ring_chain *ch)
{
	ring_copy(r, *pos, ch, sizeof(ch->c));
	if (ch->c.hdr.type != PFM_RING_REC_CALLCHAIN ||
	    ch->c.nr > PFM_MAX_CALLCHAIN ||
	    ch->c.hdr.size != sizeof(ch->c) + 8 * ch->c.nr)
		return false;
	ring_copy(r, *pos, ch, ch->c.hdr.size);
	*pos += ch->c.hdr.size;
	return true;
}

/*
 * Ring format, period 10, 50 samples: each sample record is followed by
 * a call chain record whose frames are exactly the callers'.
 */
TEST(ring_callchain)
{
	struct pfm_ring_smpl_arg arg = { .data_pages = 8 };
	const uint64_t period = 10, nsmpl = 50;
	uint64_t head, pos, nchain = 0, bad = 0;
	union ring_rec rec;
	union ring_chain ch;
	struct ring r;
	void *map;
	int fd, sz;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = syscall_ctx(0, PFM_RING_SMPL_NAME, &arg, sizeof(arg), period,
			 PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_CALLCHAIN, -period,
			 false);
	ASSERT_LE(0, fd);
	map = ring_map(fd, 8, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(map != MAP_FAILED);
	ring_init(&r, map);
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	chain_outer(nsmpl * period + 5);
	ASSERT_EQ(0, pfm_stop(fd));
	head = ring_head(&r);
	pos = ring_tail(&r);
	EXPECT_EQ(2 * nsmpl, r.ctrl->records);
	while ((sz = ring_next(&r, &pos, head, &rec)) > 0) {
		if (rec.hdr.type != PFM_RING_REC_SAMPLE || sz != RING_SAMPLE) {
			bad++;
			continue;
		}
		/* The chain record follows its sample. */
		if (!ring_next_chain(&r, &pos, &ch)) {
			bad++;
			break;
		}
		if (!chain_ok(ch.c.ips, ch.c.nr) || ch.c.ips[0] != rec.smp.ip)
			bad++;
		if (nchain++ == 0)
			TH_LOG("first chain: %u frames, %#llx %#llx %#llx",
			       ch.c.nr, ULL(ch.c.ips[0]), ULL(ch.c.ips[1]),
			       ULL(ch.c.ips[2]));
	}
	EXPECT_EQ(0, sz);
	EXPECT_EQ(nsmpl, nchain);
	EXPECT_EQ(0, bad);
	munmap(map, 9 * page_size());
	close(fd);
}

/*
 * Default format, layout 2.0: each entry's values (one: PMD1) are
 * followed by the chain's length and the chain.
 */
TEST(dfl_callchain)
{
	struct pfm_dfl_smpl_arg arg = { .buf_size = 65536,
					.buf_flags = PFM_DFL_SMPL_FL_V2 };
	const uint64_t period = 10, nsmpl = 50;
	const struct pfm_dfl_smpl_entry_v2 *e;
	struct pfm_dfl_smpl_hdr *hdr;
	const uint64_t *val;
	uint64_t k, off, bad = 0;
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = syscall_ctx(0, PFM_DFL_SMPL_NAME, &arg, sizeof(arg), period,
			 PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_CALLCHAIN, -period,
			 true);
	ASSERT_LE(0, fd);
	hdr = pfm_map_buf(fd, arg.buf_size, PROT_READ);
	ASSERT_TRUE(hdr != MAP_FAILED);
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	chain_outer(nsmpl * period + 5);
	ASSERT_EQ(0, pfm_stop(fd));
	ASSERT_EQ(nsmpl, hdr->hdr_count);
	off = DFL_HDR;
	for (k = 0; k < nsmpl; k++) {
		e = (const void *)((const char *)hdr + off);
		val = (const uint64_t *)(e + 1);
		/* val[0]: PMD1; val[1]: the chain's length; then the chain */
		if (e->nr_values != 1 || val[0] != (k + 1) * period ||
		    !chain_ok(val + 2, val[1]) || val[2] != e->ip)
			bad++;
		off += DFL_ENTRY_V2 + 8 * (2 + val[1]);
		if (off > hdr->hdr_cur_offs)
			break;
	}
	EXPECT_EQ(hdr->hdr_cur_offs, off);
	EXPECT_EQ(0, bad);
	munmap(hdr, arg.buf_size);
	close(fd);
}

#if defined(__x86_64__) || defined(__aarch64__)
/*
 * @n raw getppid() calls with the frame pointer set to @fp, then put
 * back: what a thread whose frame pointer is not one looks like.
 */
static noinline __noclone __section("smpl_text")
void raw_syscalls_fp(unsigned long n, unsigned long fp)
{
#if defined(__x86_64__)
	/* Below the red zone, which the compiler may be using. */
	asm volatile("add $-128, %%rsp\n\t"
		     "push %%rbp\n\t"
		     "mov %1, %%rbp\n"
		     "1:\n\t"
		     "mov %2, %%eax\n\t"
		     "syscall\n\t"
		     "dec %0\n\t"
		     "jnz 1b\n\t"
		     "pop %%rbp\n\t"
		     "sub $-128, %%rsp"
		     : "+r" (n) : "r" (fp), "i" (__NR_getppid)
		     : "rax", "rcx", "r11", "memory", "cc");
#else
	asm volatile("mov x9, x29\n\t"
		     "mov x29, %1\n"
		     "1:\n\t"
		     "mov x8, %2\n\t"
		     "svc #0\n\t"
		     "subs %0, %0, #1\n\t"
		     "b.ne 1b\n\t"
		     "mov x29, x9"
		     : "+r" (n) : "r" (fp), "i" (__NR_getppid)
		     : "x0", "x8", "x9", "memory", "cc");
#endif
}

/* Ring samples of 20 raw calls with frame pointer @fp: their chains. */
static void bad_fp_chains(struct __test_metadata *_metadata, uint64_t fp,
			  unsigned int want_nr, uint64_t want_ret)
{
	struct pfm_ring_smpl_arg arg = { .data_pages = 2 };
	uint64_t head, pos, nchain = 0, bad = 0;
	union ring_rec rec;
	union ring_chain ch;
	struct ring r;
	void *map;
	int fd, sz;

	fd = syscall_ctx(0, PFM_RING_SMPL_NAME, &arg, sizeof(arg), 1,
			 PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_CALLCHAIN, -1, false);
	ASSERT_LE(0, fd);
	map = ring_map(fd, 2, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(map != MAP_FAILED);
	ring_init(&r, map);
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	raw_syscalls_fp(20, fp);
	ASSERT_EQ(0, pfm_stop(fd));
	head = ring_head(&r);
	pos = ring_tail(&r);
	while ((sz = ring_next(&r, &pos, head, &rec)) > 0) {
		if (rec.hdr.type != PFM_RING_REC_SAMPLE)
			continue;
		ASSERT_TRUE(ring_next_chain(&r, &pos, &ch));
		/* pfm_stop()'s own call is sampled with the real frames */
		if (!in_smpl_text(ch.c.ips[0]))
			continue;
		nchain++;
		if (ch.c.nr != want_nr ||
		    (want_nr > 1 && ch.c.ips[1] != want_ret)) {
			bad++;
			TH_LOG("chain of %u frames, [1] %#llx", ch.c.nr,
			       ULL(ch.c.ips[1]));
		}
	}
	EXPECT_EQ(20, nchain);
	EXPECT_EQ(0, bad);
	munmap(map, 3 * page_size());
	close(fd);
}

/* A frame pointer into unmapped memory: the chain is the IP alone. */
TEST(callchain_unmapped_frame)
{
	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	bad_fp_chains(_metadata, 0x10, 1, 0);
}

/*
 * A frame record that points at itself: its return address is taken,
 * then the walk stops (the next frame is not above it), no loop.
 */
TEST(callchain_frame_loop)
{
	static uint64_t rec[2];

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	rec[0] = (uintptr_t)rec;
	rec[1] = 0x1234;
	bad_fp_chains(_metadata, (uintptr_t)rec, 2, 0x1234);
}
#endif

/* The kernel function holding @addr, from /proc/kallsyms; 0: unknown. */
static int ksym_of(uint64_t addr, char *name, size_t len)
{
	unsigned long long a, best = 0;
	char line[256], sym[128], type;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return 0;
	name[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s", &a, &type, sym) != 3 ||
		    (type != 't' && type != 'T'))
			continue;
		if (a <= addr && a > best) {
			best = a;
			snprintf(name, len, "%s", sym);
		}
	}
	fclose(f);
	return best != 0;
}

/* [start, end) of kernel functions, from /proc/kallsyms. */
struct krange {
	const char *name;
	unsigned long long start, end;
};

/* Find each of @r's functions: its address, and the next symbol's. */
static void kranges_find(struct krange *r, int n)
{
	unsigned long long a;
	char line[256], sym[128], type;
	FILE *f;
	int i, pass;

	for (pass = 0; pass < 2; pass++) {
		f = fopen("/proc/kallsyms", "re");
		if (!f)
			return;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%llx %c %127s", &a, &type, sym) != 3)
				continue;
			for (i = 0; i < n; i++) {
				if (!pass && !strcmp(sym, r[i].name))
					r[i].start = a;
				if (pass && r[i].start && a > r[i].start &&
				    (!r[i].end || a < r[i].end))
					r[i].end = a;
			}
		}
		fclose(f);
	}
}

/* Does the kernel part of @c pass through one of @r? */
static bool kchain_in(const struct pfm_ring_callchain *c,
		      const struct krange *r, int n)
{
	unsigned int i;
	int k;

	for (i = 0; i < c->nr_kernel; i++)
		for (k = 0; k < n; k++)
			if (c->ips[i] >= r[k].start && c->ips[i] < r[k].end)
				return true;
	return false;
}

/*
 * PFM_REGFL_KCALLCHAIN with PFM_REGFL_CALLCHAIN: task-clock samples of
 * a thread reading /dev/zero a megabyte at a time mostly interrupt the
 * kernel; each such chain begins with the kernel IP the sample shows,
 * its kernel part (addresses of the kernel half) passes through
 * vfs_read() or ksys_read() (the kernel unwinder, through the
 * interrupt's frames), and the user chain follows at a user address.
 */
TEST(kernel_callchain)
{
	struct krange kr[2] = { { "ksys_read" }, { "vfs_read" } };
	struct pfm_ring_smpl_arg arg = { .data_pages = 64 };
	const uint64_t period = 200000;	/* ns */
	uint64_t head, pos, t0, n = 0, nk = 0, inread = 0, bad = 0;
	static char buf[1 << 20];
	union ring_rec rec;
	union ring_chain ch;
	char name[128];
	pfarg_pmd_t pd;
	struct ring r;
	int fd, zero, sz;
	void *map;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	if (getuid() != 0)
		SKIP(return, "needs root to see kernel addresses");
	kranges_find(kr, 2);
	ASSERT_TRUE(kr[0].end && kr[1].end) TH_LOG("no ksys_read or vfs_read in /proc/kallsyms");
	zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, zero);
	fd = pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &arg, sizeof(arg));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_write_pmc(fd, 0, 0, SOFT_EV_TASK_CLOCK));
	pfm_pmd_prep(&pd, 0, 0, PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_CALLCHAIN |
		     PFM_REGFL_KCALLCHAIN, -period, -period);
	ASSERT_EQ(0, neg_errno(pfm_write_pmds(fd, &pd, 1)));
	map = ring_map(fd, 64, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(map != MAP_FAILED);
	ring_init(&r, map);
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0 < 200000000)
		ASSERT_EQ((ssize_t)sizeof(buf), read(zero, buf, sizeof(buf)));
	ASSERT_EQ(0, pfm_stop(fd));
	head = ring_head(&r);
	pos = ring_tail(&r);
	while ((sz = ring_next(&r, &pos, head, &rec)) > 0) {
		if (rec.hdr.type != PFM_RING_REC_SAMPLE)
			continue;
		n++;
		if (!ring_next_chain(&r, &pos, &ch)) {
			bad++;
			break;
		}
		if (!ch.c.nr_kernel)
			continue;
		nk++;
		if (ch.c.nr_kernel > PFM_MAX_KCALLCHAIN ||
		    ch.c.nr_kernel > ch.c.nr || ch.c.ips[0] != rec.smp.ip ||
		    (int64_t)ch.c.ips[ch.c.nr_kernel - 1] >= 0 ||
		    (ch.c.nr > ch.c.nr_kernel &&
		     (int64_t)ch.c.ips[ch.c.nr_kernel] < 0))
			bad++;
		if (kchain_in(&ch.c, kr, 2))
			inread++;
		if (nk == 1) {
			ksym_of(ch.c.ips[0], name, sizeof(name));
			TH_LOG("first kernel chain: %u of %u entries, at %s",
			       ch.c.nr_kernel, ch.c.nr, name);
		}
	}
	TH_LOG("%llu samples, %llu in the kernel, %llu of them through read()",
	       ULL(n), ULL(nk), ULL(inread));
	EXPECT_EQ(0, sz);
	EXPECT_EQ(0, bad);
	EXPECT_LE(n / 2, nk);
	EXPECT_LE(nk * 9 / 10, inread);
	munmap(map, 65 * page_size());
	close(fd);
	close(zero);
}

/* Kernel chains show kernel addresses: nobody at paranoid 2 gets EACCES. */
static int kchain_child(void)
{
	pfarg_pmd_t pd;
	int fd;

	if (become_nobody())
		return 100;
	fd = pfm_fmt_ctx(0, NULL, NULL, 0);
	if (fd < 0)
		return 101;
	if (pfm_write_pmc(fd, 0, 0, SOFT_EV_TASK_CLOCK))
		return 102;
	pfm_pmd_prep(&pd, 0, 0, PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_KCALLCHAIN,
		     -1000000, -1000000);
	if (!pfm_write_pmds(fd, &pd, 1))
		return 103;
	if (errno != EACCES)
		return errno < 100 ? errno : 104;
	if ((pd.reg_flags & PFM_REG_RETFL_MASK) != PFM_REG_RETFL_NOPRIV)
		return 105;
	pd.reg_flags = PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_CALLCHAIN;
	return pfm_write_pmds(fd, &pd, 1) ? 106 : 0;
}

TEST(kernel_callchain_needs_cap_perfmon)
{
	int status;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	if (getuid() != 0)
		SKIP(return, "needs root to switch users");
	status = run_child(kchain_child);
	TH_LOG("child: %d (0 ok; 103 written; 105 not NOPRIV; else the errno)",
	       status);
	EXPECT_EQ(0, status);
}

/* The flag is a counter PMD's: on a PMC it is refused. */
TEST(callchain_flag_on_pmc_einval)
{
	pfarg_pmc_t pc;
	int fd = pfm_new_ctx(0);

	ASSERT_LE(0, fd);
	memset(&pc, 0, sizeof(pc));
	pc.reg_num = 0;
	pc.reg_flags = PFM_REGFL_CALLCHAIN;
	EXPECT_EQ(-1, pfm_write_pmcs(fd, &pc, 1));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST_HARNESS_MAIN
