// SPDX-License-Identifier: GPL-2.0
/*
 * The context state machine (Documentation/uapi.rst, "Context states"):
 * every call in every state it refuses, with the documented errno, and
 * the refused inputs of load, start and the event-set calls.
 */
#include <poll.h>

#include "pfm_test.h"
#include "kselftest_harness.h"

static int do_start(int fd, uint16_t set)
{
	struct pfarg_start st;

	memset(&st, 0, sizeof(st));
	st.start_set = set;
	return pfm_ioctl(fd, PFM_START, &st);
}

static int do_load(int fd, uint32_t pid, uint16_t set)
{
	struct pfarg_load ld;

	memset(&ld, 0, sizeof(ld));
	ld.load_pid = pid;
	ld.load_set = set;
	return pfm_ioctl(fd, PFM_LOAD_CONTEXT, &ld);
}

static int set_call(int fd, unsigned long cmd, uint16_t id, uint32_t flags,
		    uint64_t timeout, uint32_t *retflags)
{
	struct pfarg_setdesc sd;
	int ret;

	memset(&sd, 0, sizeof(sd));
	sd.set_id = id;
	sd.set_flags = flags;
	sd.set_timeout = timeout;
	ret = pfm_array(fd, cmd, &sd, 1);
	if (retflags)
		*retflags = sd.set_flags & PFM_REG_RETFL_MASK;
	return ret;
}

TEST(new_context_refuses_every_context_call)
{
	struct pfarg_setinfo si;
	int fd = pfm_open();

	ASSERT_LE(0, fd);
	memset(&si, 0, sizeof(si));
	EXPECT_EQ(-EBADFD, do_load(fd, getpid(), 0));
	EXPECT_EQ(-EBADFD, do_start(fd, 0));
	EXPECT_EQ(-EBADFD, pfm_ioctl(fd, PFM_STOP, NULL));
	EXPECT_EQ(-EBADFD, pfm_ioctl(fd, PFM_RESTART, NULL));
	EXPECT_EQ(-EBADFD, pfm_ioctl(fd, PFM_UNLOAD_CONTEXT, NULL));
	EXPECT_EQ(-EBADFD, set_call(fd, PFM_CREATE_EVTSETS, 1, 0, 0, NULL));
	EXPECT_EQ(-EBADFD, set_call(fd, PFM_DELETE_EVTSETS, 1, 0, 0, NULL));
	EXPECT_EQ(-EBADFD, pfm_array(fd, PFM_GETINFO_EVTSETS, &si, 1));
	close(fd);
}

FIXTURE(unloaded) {
	int fd;
};

FIXTURE_SETUP(unloaded)
{
	self->fd = pfm_counting_ctx(0, SOFT_EV_TASK_CLOCK, 0);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(unloaded)
{
	close(self->fd);
}

/* PFM_RESTART: -EBUSY, nothing to restart (perfmon2 v2.8's errno). */
TEST_F(unloaded, refuses_start_stop_restart)
{
	EXPECT_EQ(-EINVAL, do_start(self->fd, 0));
	EXPECT_EQ(-EINVAL, pfm_ioctl(self->fd, PFM_STOP, NULL));
	EXPECT_EQ(-EBUSY, pfm_ioctl(self->fd, PFM_RESTART, NULL));
}

TEST_F(unloaded, unload_is_a_no_op)
{
	EXPECT_EQ(0, pfm_ioctl(self->fd, PFM_UNLOAD_CONTEXT, NULL));
	EXPECT_EQ(0, pfm_read_pmd(self->fd, 0, 0));
}

TEST_F(unloaded, load_refusals)
{
	struct pfarg_load ld;

	EXPECT_EQ(-ESRCH, do_load(self->fd, 0x3fffffff, 0));
	EXPECT_EQ(-EINVAL, do_load(self->fd, gettid(), 7));	/* no set 7 */
	EXPECT_EQ(-EPERM, do_load(self->fd, 2, 0));	/* kthreadd */
	memset(&ld, 0, sizeof(ld));
	ld.load_pid = gettid();
	ld.load_reserved1 = 1;
	EXPECT_EQ(-EINVAL, pfm_ioctl(self->fd, PFM_LOAD_CONTEXT, &ld));
	ld.load_reserved1 = 0;
	ld.load_reserved2[2] = 1;
	EXPECT_EQ(-EINVAL, pfm_ioctl(self->fd, PFM_LOAD_CONTEXT, &ld));
}

TEST_F(unloaded, system_wide_load_refusals)
{
	int fd = pfm_counting_ctx(PFM_FL_SYSTEM_WIDE, SOFT_EV_CPU_CLOCK, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, do_load(fd, online_cpus() + 1000, 0));
	EXPECT_EQ(-EINVAL, do_load(fd, 0xffffffff, 0));
	close(fd);
}

TEST_F(unloaded, read_refusals)
{
	char buf[sizeof(union pfarg_msg)];
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
	int flags = fcntl(self->fd, F_GETFL);

	EXPECT_EQ(-1, read(self->fd, buf, sizeof(buf) - 1));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, flags | O_NONBLOCK));
	EXPECT_EQ(-1, read(self->fd, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
}

FIXTURE(loaded) {
	int fd;
};

FIXTURE_SETUP(loaded)
{
	self->fd = pfm_counting_ctx(0, SOFT_EV_TASK_CLOCK, 0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, set_call(self->fd, PFM_CREATE_EVTSETS, 1, 0, 0, NULL));
	ASSERT_EQ(0, do_load(self->fd, gettid(), 0));
}

FIXTURE_TEARDOWN(loaded)
{
	close(self->fd);
}

TEST_F(loaded, refuses_second_load_and_create)
{
	EXPECT_EQ(-EBUSY, do_load(self->fd, gettid(), 0));
	EXPECT_EQ(-EBUSY, pfm_create(self->fd, 0));
}

TEST_F(loaded, restart_needs_masked)
{
	EXPECT_EQ(-EBUSY, pfm_ioctl(self->fd, PFM_RESTART, NULL));
}

TEST_F(loaded, start_refusals)
{
	struct pfarg_start st;

	EXPECT_EQ(-EINVAL, do_start(self->fd, 9));	/* no set 9 */
	memset(&st, 0, sizeof(st));
	st.start_reserved2 = 1;
	EXPECT_EQ(-EINVAL, pfm_ioctl(self->fd, PFM_START, &st));
	st.start_reserved2 = 0;
	st.reserved3[0] = 1;
	EXPECT_EQ(-EINVAL, pfm_ioctl(self->fd, PFM_START, &st));
}

TEST_F(loaded, active_set_cannot_be_deleted)
{
	EXPECT_EQ(0, do_start(self->fd, 1));
	EXPECT_EQ(-EBUSY, set_call(self->fd, PFM_DELETE_EVTSETS, 1, 0, 0, NULL));
	EXPECT_EQ(0, pfm_ioctl(self->fd, PFM_STOP, NULL));
	EXPECT_EQ(0, do_start(self->fd, 0));
	EXPECT_EQ(0, set_call(self->fd, PFM_DELETE_EVTSETS, 1, 0, 0, NULL));
}

TEST_F(loaded, a_thread_carries_one_context)
{
	int fd = pfm_counting_ctx(0, SOFT_EV_TASK_CLOCK, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBUSY, do_load(fd, gettid(), 0));
	/* Free again once unloaded. */
	EXPECT_EQ(0, pfm_ioctl(self->fd, PFM_UNLOAD_CONTEXT, NULL));
	EXPECT_EQ(0, do_load(fd, gettid(), 0));
	close(fd);
}

/*
 * The refusal names a per-thread session that blocks it (this thread's),
 * so that root knows what to end.
 */
TEST_F(loaded, system_wide_does_not_mix_with_per_thread)
{
	int fd = pfm_counting_ctx(PFM_FL_SYSTEM_WIDE, SOFT_EV_CPU_CLOCK, 0);
	char holder[64];
	int before;

	ASSERT_LE(0, fd);
	snprintf(holder, sizeof(holder), "one on thread %d (", gettid());
	before = klog_count(holder);
	EXPECT_EQ(-EBUSY, do_load(fd, 0, 0));
	EXPECT_EQ(before + 1, klog_count(holder)) TH_LOG("no line with '%s'", holder);
	EXPECT_EQ(0, pfm_ioctl(self->fd, PFM_UNLOAD_CONTEXT, NULL));
	ASSERT_EQ(0, do_load(fd, 0, 0));
	/* And the other way round. */
	EXPECT_EQ(-EBUSY, do_load(self->fd, gettid(), 0));
	close(fd);
	EXPECT_EQ(0, do_load(self->fd, gettid(), 0));
}

TEST_F(loaded, one_system_wide_context_per_cpu)
{
	int a = pfm_counting_ctx(PFM_FL_SYSTEM_WIDE, SOFT_EV_CPU_CLOCK, 0);
	int b = pfm_counting_ctx(PFM_FL_SYSTEM_WIDE, SOFT_EV_CPU_CLOCK, 0);

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	EXPECT_EQ(0, pfm_ioctl(self->fd, PFM_UNLOAD_CONTEXT, NULL));
	EXPECT_EQ(0, do_load(a, 0, 0));
	EXPECT_EQ(-EBUSY, do_load(b, 0, 0));
	if (online_cpus() > 1)
		EXPECT_EQ(0, do_load(b, 1, 0));
	close(a);
	close(b);
}

TEST_F(loaded, unload_then_everything_unloaded_refuses)
{
	EXPECT_EQ(0, do_start(self->fd, 0));
	EXPECT_EQ(0, pfm_ioctl(self->fd, PFM_UNLOAD_CONTEXT, NULL));
	EXPECT_EQ(-EINVAL, pfm_ioctl(self->fd, PFM_STOP, NULL));
	/* The counts stay readable. */
	EXPECT_GT(1ull << 40, pfm_read_pmd(self->fd, 0, 0));
}

/*
 * Two threads load one context at once, each on itself: one wins, the
 * other gets EBUSY; the winner's thread must still carry the context.
 * The loser reserved a session and had its commit refused: giving that
 * back once withdrew the winner's session, and a second context then
 * loaded on the winner's thread (a WARN in the hook, and ESRCH).
 */
#define RACE_ROUNDS	50

struct load_race {
	pthread_barrier_t go, done;
	int fd;
	atomic_int winner;
	atomic_int busy;
	atomic_int other;
	atomic_int stop;
};

static void *race_loader(void *arg)
{
	struct load_race *r = arg;
	int ret;

	for (;;) {
		pthread_barrier_wait(&r->go);
		if (atomic_load(&r->stop))
			return NULL;
		ret = do_load(r->fd, gettid(), 0);
		if (!ret)
			atomic_store(&r->winner, gettid());
		else if (ret == -EBUSY)
			atomic_fetch_add(&r->busy, 1);
		else
			atomic_store(&r->other, ret);
		pthread_barrier_wait(&r->done);	/* the main thread checks */
		pthread_barrier_wait(&r->done);	/* and unloads */
	}
}

TEST(racing_loads_of_one_context)
{
	struct load_race r = {};
	pthread_t t[2];
	int i, n, fd2;

	ASSERT_EQ(0, pthread_barrier_init(&r.go, NULL, 3));
	ASSERT_EQ(0, pthread_barrier_init(&r.done, NULL, 3));
	fd2 = pfm_counting_ctx(0, SOFT_EV_TASK_CLOCK, 0);
	ASSERT_LE(0, fd2);
	for (n = 0; n < 2; n++)
		ASSERT_EQ(0, pthread_create(&t[n], NULL, race_loader, &r));
	for (i = 0; i < RACE_ROUNDS; i++) {
		r.fd = pfm_counting_ctx(0, SOFT_EV_TASK_CLOCK, 0);
		ASSERT_LE(0, r.fd);
		atomic_store(&r.winner, 0);
		atomic_store(&r.busy, 0);
		pthread_barrier_wait(&r.go);
		pthread_barrier_wait(&r.done);
		ASSERT_EQ(0, atomic_load(&r.other));
		ASSERT_NE(0, atomic_load(&r.winner));
		ASSERT_EQ(1, atomic_load(&r.busy));
		/* The winner's thread carries r.fd's context: no second one. */
		ASSERT_EQ(-EBUSY, do_load(fd2, atomic_load(&r.winner), 0))
			TH_LOG("round %d: the winner's session was lost", i);
		EXPECT_EQ(0, pfm_ioctl(r.fd, PFM_UNLOAD_CONTEXT, NULL));
		close(r.fd);
		pthread_barrier_wait(&r.done);
	}
	atomic_store(&r.stop, 1);
	pthread_barrier_wait(&r.go);
	for (n = 0; n < 2; n++)
		pthread_join(t[n], NULL);
	EXPECT_EQ(0, sessions("task"));
	close(fd2);
}

/* Event-set calls: each refused entry, its flag and errno. */
TEST_F(unloaded, evtset_refusals)
{
	struct pfarg_setdesc sd[2];
	struct pfarg_setinfo si;
	uint32_t rf;

	EXPECT_EQ(-EINVAL, set_call(self->fd, PFM_CREATE_EVTSETS, 1, 0x80, 0,
				    &rf));
	EXPECT_EQ(PFM_REG_RETFL_EFLAGS, rf);
	EXPECT_EQ(-EINVAL, set_call(self->fd, PFM_CREATE_EVTSETS, 1,
				    PFM_SETFL_TIME_SWITCH, 0, &rf));
	EXPECT_EQ(PFM_REG_RETFL_EINVAL, rf);
	memset(sd, 0, sizeof(sd));
	sd[0].set_id = 3;
	sd[1].set_id = 3;
	EXPECT_EQ(-EINVAL, pfm_array(self->fd, PFM_CREATE_EVTSETS, sd, 2));
	EXPECT_EQ(0, sd[0].set_flags);
	EXPECT_EQ(PFM_REG_RETFL_DUP, sd[1].set_flags);
	EXPECT_EQ(-EINVAL, set_call(self->fd, PFM_DELETE_EVTSETS, 0, 0, 0, &rf));
	EXPECT_EQ(PFM_REG_RETFL_EINVAL, rf);	/* set 0 stays */
	EXPECT_EQ(-EINVAL, set_call(self->fd, PFM_DELETE_EVTSETS, 5, 0, 0, &rf));
	EXPECT_EQ(PFM_REG_RETFL_NOSET, rf);
	memset(&si, 0, sizeof(si));
	si.set_id = 5;
	EXPECT_EQ(-EINVAL, pfm_array(self->fd, PFM_GETINFO_EVTSETS, &si, 1));
	EXPECT_EQ(PFM_REG_RETFL_NOSET, si.set_flags);
	/* Nothing was created by the refused calls. */
	si.set_id = 3;
	EXPECT_EQ(-EINVAL, pfm_array(self->fd, PFM_GETINFO_EVTSETS, &si, 1));
}

TEST_F(unloaded, evtset_create_modify_delete)
{
	struct pfarg_setdesc sd;
	struct pfarg_setinfo si;

	memset(&sd, 0, sizeof(sd));
	sd.set_id = 4;
	sd.set_flags = PFM_SETFL_TIME_SWITCH;
	sd.set_timeout = 1;	/* rounded up to the minimum */
	ASSERT_EQ(0, pfm_array(self->fd, PFM_CREATE_EVTSETS, &sd, 1));
	EXPECT_LE(100000, sd.set_timeout);
	memset(&si, 0, sizeof(si));
	si.set_id = 4;
	ASSERT_EQ(0, pfm_array(self->fd, PFM_GETINFO_EVTSETS, &si, 1));
	EXPECT_EQ(PFM_SETFL_TIME_SWITCH, si.set_flags);
	EXPECT_EQ(sd.set_timeout, si.set_timeout);
	EXPECT_EQ(0xfull, si.set_avail_pmcs[0]);
	EXPECT_EQ(0xfull, si.set_avail_pmds[0]);
	/* v2.8 reads set_id alone: the same entry, answer and all, again. */
	ASSERT_EQ(0, pfm_array(self->fd, PFM_GETINFO_EVTSETS, &si, 1));
	EXPECT_EQ(PFM_SETFL_TIME_SWITCH, si.set_flags);
	EXPECT_EQ(sd.set_timeout, si.set_timeout);
	/* Creating an existing set changes it. */
	sd.set_flags = 0;
	ASSERT_EQ(0, pfm_array(self->fd, PFM_CREATE_EVTSETS, &sd, 1));
	EXPECT_EQ(0, sd.set_timeout);
	ASSERT_EQ(0, set_call(self->fd, PFM_DELETE_EVTSETS, 4, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, pfm_array(self->fd, PFM_GETINFO_EVTSETS, &si, 1));
}

TEST_HARNESS_MAIN
