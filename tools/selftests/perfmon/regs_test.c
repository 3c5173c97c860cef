// SPDX-License-Identifier: GPL-2.0
/*
 * Context creation, PMU introspection and PMC/PMD programming against
 * the software PMU description (pfm_soft): every refused input, with its
 * errno and the per-entry error flag.
 */
#include "pfm_test.h"
#include "kselftest_harness.h"

#define SOFT_EV_TASK_CLOCK	1

FIXTURE(ctx) {
	int fd;
};

FIXTURE_SETUP(ctx)
{
	self->fd = pfm_open();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pfm_create(self->fd, 0));
}

FIXTURE_TEARDOWN(ctx)
{
	close(self->fd);
}

static void pmd_init(struct pfarg_pmd *pd, uint16_t num, uint64_t value)
{
	memset(pd, 0, sizeof(*pd));
	pd->reg_num = num;
	pd->reg_value = value;
}

/* pfm_read_values() (PFM_READ_VALUES): 0 or -errno. */
static int read_values(int fd, uint16_t set, uint16_t first, uint64_t pmds,
		       uint64_t *v)
{
	return pfm_read_values(fd, set, first, pmds, v) ? -errno : 0;
}

TEST(pmu_info_describes_soft_pmu)
{
	struct pfarg_pmu_info info;
	int fd = pfm_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_ioctl(fd, PFM_GET_PMU_INFO, &info));
	EXPECT_STREQ("soft", info.pmu_name);
	EXPECT_EQ(32, info.pmu_counter_width);
	EXPECT_EQ(4, info.pmu_num_pmcs);
	EXPECT_EQ(4, info.pmu_num_pmds);
	EXPECT_EQ(4, info.pmu_max_pmc);
	EXPECT_EQ(4, info.pmu_max_pmd);
	EXPECT_EQ(0xfull, info.pmu_impl_pmcs[0]);
	EXPECT_EQ(0xfull, info.pmu_impl_pmds[0]);
	EXPECT_EQ(0, info.pmu_impl_pmds[1]);
	close(fd);
}

TEST(reg_info_answers_each_entry)
{
	struct pfarg_reg_info ri[3];
	int fd = pfm_open();

	ASSERT_LE(0, fd);
	memset(ri, 0, sizeof(ri));
	ri[0].info_kind = PFM_REG_KIND_PMC;
	ri[0].info_num = 1;
	ri[1].info_kind = PFM_REG_KIND_PMD;
	ri[1].info_num = 3;
	ri[2].info_kind = PFM_REG_KIND_PMD;
	ri[2].info_num = 4;	/* not implemented: answered, not refused */
	ASSERT_EQ(0, pfm_array(fd, PFM_GET_REG_INFO, ri, 3));
	EXPECT_STREQ("SOFT_EVTSEL1", ri[0].info_name);
	EXPECT_EQ(PFM_REGT_IMPL, ri[0].info_type);
	EXPECT_EQ(~0xffull, ri[0].info_rsvd_msk);
	EXPECT_STREQ("SOFT_CTR3", ri[1].info_name);
	EXPECT_EQ(PFM_REGT_IMPL | PFM_REGT_CNTR | PFM_REGT_INTR, ri[1].info_type);
	EXPECT_EQ(PFM_REG_RETFL_NOTAVAIL, ri[2].info_flags);
	EXPECT_EQ(0, ri[2].info_type);
	close(fd);
}

TEST(reg_info_bad_kind_and_reserved_refused)
{
	struct pfarg_reg_info ri[2];
	int fd = pfm_open();

	ASSERT_LE(0, fd);
	memset(ri, 0, sizeof(ri));
	ri[0].info_kind = 7;
	ri[1].info_kind = PFM_REG_KIND_PMC;
	ri[1].info_reserved[1] = 1;
	EXPECT_EQ(-EINVAL, pfm_array(fd, PFM_GET_REG_INFO, ri, 2));
	EXPECT_EQ(PFM_REG_RETFL_EINVAL, ri[0].info_flags);
	EXPECT_EQ(PFM_REG_RETFL_EFLAGS, ri[1].info_flags);
	close(fd);
}

TEST(calls_before_create_are_ebadfd)
{
	struct pfarg_pmd pd;
	int fd = pfm_open();

	ASSERT_LE(0, fd);
	pmd_init(&pd, 0, 1);
	EXPECT_EQ(-EBADFD, pfm_array(fd, PFM_WRITE_PMDS, &pd, 1));
	EXPECT_EQ(-EBADFD, pfm_array(fd, PFM_READ_PMDS, &pd, 1));
	EXPECT_EQ(-EBADFD, read_values(fd, 0, 0, 1, NULL));
	close(fd);
}

TEST(create_refuses_bad_input)
{
	struct pfarg_create req;
	int fd = pfm_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, pfm_create(fd, 0x100));	/* unknown flag */
	EXPECT_EQ(-EINVAL, pfm_create(fd, PFM_FL_SYSTEM_WIDE | PFM_FL_NOTIFY_BLOCK));

	memset(&req, 0, sizeof(req));
	req.ctx.ctx_reserved2[6] = 1;
	EXPECT_EQ(-EINVAL, pfm_ioctl(fd, PFM_CREATE_CONTEXT, &req));
	memset(&req, 0, sizeof(req));
	req.create_reserved1 = 1;
	EXPECT_EQ(-EINVAL, pfm_ioctl(fd, PFM_CREATE_CONTEXT, &req));
	memset(&req, 0, sizeof(req));
	memset(req.create_fmt_name, 'x', sizeof(req.create_fmt_name));
	EXPECT_EQ(-EINVAL, pfm_ioctl(fd, PFM_CREATE_CONTEXT, &req));
	memset(&req, 0, sizeof(req));
	strcpy(req.create_fmt_name, "no-such-format");
	EXPECT_EQ(-ENOENT, pfm_ioctl(fd, PFM_CREATE_CONTEXT, &req));
	memset(&req, 0, sizeof(req));
	req.create_fmt_arg_size = 8;
	EXPECT_EQ(-EINVAL, pfm_ioctl(fd, PFM_CREATE_CONTEXT, &req));
	EXPECT_EQ(-EFAULT, pfm_ioctl(fd, PFM_CREATE_CONTEXT, (void *)8));

	/* Refusals left the context NEW: a good create still works, once. */
	EXPECT_EQ(0, pfm_create(fd, PFM_FL_SYSTEM_WIDE));
	EXPECT_EQ(-EBUSY, pfm_create(fd, 0));
	close(fd);
}

TEST_F(ctx, write_pmcs_accepts_valid_values)
{
	struct pfarg_pmc pc[2];

	memset(pc, 0, sizeof(pc));
	pc[0].reg_num = 0;
	pc[0].reg_value = SOFT_EV_TASK_CLOCK;
	pc[1].reg_num = 3;
	pc[1].reg_value = SOFT_EV_TASK_CLOCK;
	pc[1].reg_flags = PFM_REGFL_NO_EMUL64;
	ASSERT_EQ(0, pfm_array(self->fd, PFM_WRITE_PMCS, pc, 2));
	EXPECT_EQ(0, pc[0].reg_flags);
	EXPECT_EQ(PFM_REGFL_NO_EMUL64, pc[1].reg_flags);
}

/* Each refused PMC write: errno, then the flag on the refused entry only. */
TEST_F(ctx, write_pmcs_refusals_flag_the_entry)
{
	static const struct {
		uint16_t num, set;
		uint32_t flags;
		uint64_t value, rsvd;
		uint32_t want;
	} cases[] = {
		{ 4, 0, 0, 1, 0, PFM_REG_RETFL_NOTAVAIL },	/* no PMC4 */
		{ 255, 0, 0, 1, 0, PFM_REG_RETFL_NOTAVAIL },
		{ 0, 1, 0, 1, 0, PFM_REG_RETFL_NOSET },		/* no set 1 */
		{ 0, 0, 0, 1ull << 9, 0, PFM_REG_RETFL_EINVAL },	/* reserved bit */
		{ 0, 0, 0, 1ull << 63, 0, PFM_REG_RETFL_EINVAL },
		{ 0, 0, 0, 9, 0, PFM_REG_RETFL_EINVAL },	/* unknown event */
		{ 0, 0, PFM_REGFL_OVFL_NOTIFY, 1, 0, PFM_REG_RETFL_EFLAGS },
		{ 0, 0, 0, 1, 1, PFM_REG_RETFL_EFLAGS },	/* reserved field */
	};
	struct pfarg_pmc pc[2];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		memset(pc, 0, sizeof(pc));
		pc[0].reg_value = SOFT_EV_TASK_CLOCK;
		pc[1].reg_num = cases[i].num;
		pc[1].reg_set = cases[i].set;
		pc[1].reg_flags = cases[i].flags;
		pc[1].reg_value = cases[i].value;
		pc[1].reg_reserved2[3] = cases[i].rsvd;
		EXPECT_EQ(-EINVAL, pfm_array(self->fd, PFM_WRITE_PMCS, pc, 2))
			TH_LOG("case %u", i);
		EXPECT_EQ(0, pc[0].reg_flags) TH_LOG("case %u", i);
		EXPECT_EQ(cases[i].want, pc[1].reg_flags & PFM_REG_RETFL_MASK)
			TH_LOG("case %u", i);
	}
}

TEST_F(ctx, pmd_value_round_trips_64_bits)
{
	struct pfarg_pmd pd;

	pmd_init(&pd, 2, 0xdeadbeef12345678ull);	/* wider than 32 bits */
	pd.reg_flags = PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_RANDOM;
	pd.reg_long_reset = 100;
	pd.reg_short_reset = 200;
	pd.reg_random_mask = 0xff;
	pd.reg_ovfl_switch_cnt = 3;
	pd.reg_reset_pmds[0] = 0x3;
	pd.reg_smpl_pmds[0] = 0x8;
	ASSERT_EQ(0, pfm_array(self->fd, PFM_WRITE_PMDS, &pd, 1));

	pmd_init(&pd, 2, 0);
	ASSERT_EQ(0, pfm_array(self->fd, PFM_READ_PMDS, &pd, 1));
	EXPECT_EQ(0xdeadbeef12345678ull, pd.reg_value);
	EXPECT_EQ(0xdeadbeef12345678ull, pd.reg_last_reset_val);
	EXPECT_EQ(3, pd.reg_ovfl_switch_cnt);
	EXPECT_EQ(0, pd.reg_flags);
}

TEST_F(ctx, read_of_unwritten_pmd_is_refused)
{
	struct pfarg_pmd pd[2];

	pmd_init(&pd[0], 0, 42);
	ASSERT_EQ(0, pfm_array(self->fd, PFM_WRITE_PMDS, pd, 1));
	pmd_init(&pd[0], 0, 0);
	pmd_init(&pd[1], 1, 0);
	EXPECT_EQ(-EINVAL, pfm_array(self->fd, PFM_READ_PMDS, pd, 2));
	/* The valid entry is still answered. */
	EXPECT_EQ(0, pd[0].reg_flags);
	EXPECT_EQ(42, pd[0].reg_value);
	EXPECT_EQ(PFM_REG_RETFL_UNUSED, pd[1].reg_flags);
}

/* A refused entry leaves the whole array unapplied. */
TEST_F(ctx, refused_pmd_write_applies_nothing)
{
	struct pfarg_pmd pd[2];

	pmd_init(&pd[0], 0, 5);
	pmd_init(&pd[1], 7, 5);	/* no PMD7 */
	EXPECT_EQ(-EINVAL, pfm_array(self->fd, PFM_WRITE_PMDS, pd, 2));
	EXPECT_EQ(0, pd[0].reg_flags);
	EXPECT_EQ(PFM_REG_RETFL_NOTAVAIL, pd[1].reg_flags);

	pmd_init(&pd[0], 0, 0);
	EXPECT_EQ(-EINVAL, pfm_array(self->fd, PFM_READ_PMDS, pd, 1));
	EXPECT_EQ(PFM_REG_RETFL_UNUSED, pd[0].reg_flags);
}

TEST_F(ctx, write_pmds_refusals_flag_the_entry)
{
	struct pfarg_pmd pd;
	unsigned int i;

	for (i = 0; i < 7; i++) {
		uint32_t want = PFM_REG_RETFL_EFLAGS;

		pmd_init(&pd, 0, 1);
		switch (i) {
		case 0:
			pd.reg_flags = 0x8000;			/* unknown flag */
			break;
		case 1:
			pd.reg_flags = PFM_REGFL_NO_EMUL64;	/* a PMC's */
			break;
		case 2:
			pd.reg_reserved2 = 1;
			break;
		case 3:
			pd.reg_reset_pmds[0] = 1ull << 4;	/* no PMD4 */
			want = PFM_REG_RETFL_EINVAL;
			break;
		case 4:
			pd.reg_smpl_pmds[3] = 1;		/* no PMD192 */
			want = PFM_REG_RETFL_EINVAL;
			break;
		case 5:
			pd.reg_set = 9;
			want = PFM_REG_RETFL_NOSET;
			break;
		case 6:
			pd.reg_freq = 1;		/* without PFM_REGFL_FREQ */
			want = PFM_REG_RETFL_EINVAL;
			break;
		}
		EXPECT_EQ(-EINVAL, pfm_array(self->fd, PFM_WRITE_PMDS, &pd, 1))
			TH_LOG("case %u", i);
		EXPECT_EQ(want, pd.reg_flags & PFM_REG_RETFL_MASK) TH_LOG("case %u", i);
	}
}

/*
 * perfmon2 v2.8's rules (Documentation/library.rst): its programs fill
 * one array, write it, read into it and write it again.  The obsolete
 * reg_random_seed is accepted and ignored; a read ignores the input
 * flags and leaves them, so that the next write asks the same.
 */
TEST_F(ctx, v28_reused_pmd_array)
{
	struct pfarg_pmd pd[2];
	int i;

	for (i = 0; i < 2; i++)
		pmd_init(&pd[i], i, -1000ull);
	pd[0].reg_flags = PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_RANDOM;
	pd[0].reg_random_mask = 0xff;
	pd[0].reg_random_seed = 5;
	pd[1].reg_random_seed = 0xdeadbeef;
	ASSERT_EQ(0, pfm_array(self->fd, PFM_WRITE_PMDS, pd, 2));
	EXPECT_EQ(PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_RANDOM, pd[0].reg_flags);
	EXPECT_EQ(0, pd[1].reg_flags);
	pd[0].reg_value = 0;
	pd[1].reg_value = 0;
	ASSERT_EQ(0, pfm_array(self->fd, PFM_READ_PMDS, pd, 2));
	EXPECT_EQ(-1000ull, pd[0].reg_value);
	EXPECT_EQ(-1000ull, pd[1].reg_value);
	EXPECT_EQ(PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_RANDOM, pd[0].reg_flags);
	EXPECT_EQ(0, pd[1].reg_flags);
	EXPECT_EQ(5, pd[0].reg_random_seed);
	ASSERT_EQ(0, pfm_array(self->fd, PFM_WRITE_PMDS, pd, 2));
	/* a read's own refusal still flags its entry, keeping the rest */
	pd[1].reg_num = 7;	/* no PMD7 */
	EXPECT_EQ(-EINVAL, pfm_array(self->fd, PFM_READ_PMDS, pd, 2));
	EXPECT_EQ(PFM_REGFL_OVFL_NOTIFY | PFM_REGFL_RANDOM, pd[0].reg_flags);
	EXPECT_EQ(PFM_REG_RETFL_NOTAVAIL, pd[1].reg_flags);
}

/* The values of PFM_READ_PMDS, 8 bytes each, lowest PMD first. */
TEST_F(ctx, read_values_are_read_pmds_values)
{
	static const uint64_t want[] = { 42, 0xdeadbeef12345678ull, 7 };
	static const uint16_t nums[] = { 0, 2, 3 };
	struct pfarg_pmd pd[3];
	uint64_t v[4];
	unsigned int i;

	for (i = 0; i < 3; i++)
		pmd_init(&pd[i], nums[i], want[i]);
	ASSERT_EQ(0, pfm_array(self->fd, PFM_WRITE_PMDS, pd, 3));
	memset(v, 0xa5, sizeof(v));
	ASSERT_EQ(0, read_values(self->fd, 0, 0, 0xd, v));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(want[i], v[i]) TH_LOG("value %u", i);
	EXPECT_EQ(0xa5a5a5a5a5a5a5a5ull, v[3]);	/* one value per PMD */
	/* The window starts at rv_first: PMDs 2 and 3. */
	memset(v, 0, sizeof(v));
	ASSERT_EQ(0, read_values(self->fd, 0, 2, 0x3, v));
	EXPECT_EQ(want[1], v[0]);
	EXPECT_EQ(want[2], v[1]);
	ASSERT_EQ(0, read_values(self->fd, 0, 3, 0x1, v));
	EXPECT_EQ(want[2], v[0]);
}

/* Every refusal writes no value. */
TEST_F(ctx, read_values_refusals)
{
	struct pfarg_read_values rv;
	struct pfarg_pmd pd;
	uint64_t v[2] = { 1, 1 };

	pmd_init(&pd, 0, 42);
	ASSERT_EQ(0, pfm_array(self->fd, PFM_WRITE_PMDS, &pd, 1));
	EXPECT_EQ(-EINVAL, read_values(self->fd, 0, 0, 0, v));	/* no PMD */
	EXPECT_EQ(-EINVAL, read_values(self->fd, 0, 0, 0x3, v));	/* PMD1 unused */
	EXPECT_EQ(-EINVAL, read_values(self->fd, 1, 0, 0x1, v));	/* no set 1 */
	EXPECT_EQ(-EINVAL, read_values(self->fd, 0, 3, 0x2, v));	/* no PMD4 */
	EXPECT_EQ(-EINVAL, read_values(self->fd, 0, 0xffff, 1ull << 63, v));
	/* PMD 64, in the bitmap's second word. */
	EXPECT_EQ(-EINVAL, read_values(self->fd, 0, 1, 1ull << 63, v));
	EXPECT_EQ(1, v[0]);
	EXPECT_EQ(1, v[1]);
	memset(&rv, 0, sizeof(rv));
	rv.rv_pmds = 1;
	rv.rv_values = (uintptr_t)v;
	rv.rv_reserved = 1;
	EXPECT_EQ(-EINVAL, pfm_ioctl(self->fd, PFM_READ_VALUES, &rv));
	EXPECT_EQ(1, v[0]);
	EXPECT_EQ(-EFAULT, read_values(self->fd, 0, 0, 1, (uint64_t *)8));
	EXPECT_EQ(-EFAULT, pfm_ioctl(self->fd, PFM_READ_VALUES, (void *)8));
}

/* While counting: each value lies between the reads around it. */
TEST_F(ctx, read_values_while_counting)
{
	struct pfarg_pmc pc;
	struct pfarg_pmd pd[2];
	uint64_t v[2], before;
	int i;

	memset(&pc, 0, sizeof(pc));
	pc.reg_value = SOFT_EV_TASK_CLOCK;
	pmd_init(&pd[0], 0, 0);
	ASSERT_EQ(0, pfm_array(self->fd, PFM_WRITE_PMCS, &pc, 1));
	ASSERT_EQ(0, pfm_array(self->fd, PFM_WRITE_PMDS, pd, 1));
	ASSERT_EQ(0, pfm_load(self->fd, gettid()));
	ASSERT_EQ(0, pfm_ioctl(self->fd, PFM_START, &(struct pfarg_start){ 0 }));
	for (i = 0; i < 100; i++) {
		pmd_init(&pd[0], 0, 0);
		ASSERT_EQ(0, pfm_array(self->fd, PFM_READ_PMDS, pd, 1));
		before = pd[0].reg_value;
		ASSERT_EQ(0, read_values(self->fd, 0, 0, 1, v));
		ASSERT_EQ(0, pfm_array(self->fd, PFM_READ_PMDS, pd, 1));
		EXPECT_LE(before, v[0]);
		EXPECT_LE(v[0], pd[0].reg_value);
	}
	EXPECT_LT(0, v[0]);	/* task-clock counted */
	EXPECT_EQ(0, pfm_ioctl(self->fd, PFM_STOP, NULL));
}

/* A set that is not the active one: its saved values, while set 0 counts. */
TEST_F(ctx, read_values_of_a_set_not_active)
{
	struct pfarg_setdesc sd;
	struct pfarg_pmc pc;
	struct pfarg_pmd pd;
	uint64_t v[2];
	int i;

	memset(&sd, 0, sizeof(sd));
	sd.set_id = 1;
	ASSERT_EQ(0, pfm_array(self->fd, PFM_CREATE_EVTSETS, &sd, 1));
	memset(&pc, 0, sizeof(pc));
	pc.reg_value = SOFT_EV_TASK_CLOCK;
	ASSERT_EQ(0, pfm_array(self->fd, PFM_WRITE_PMCS, &pc, 1));
	pc.reg_set = 1;
	ASSERT_EQ(0, pfm_array(self->fd, PFM_WRITE_PMCS, &pc, 1));
	pmd_init(&pd, 0, 0);
	ASSERT_EQ(0, pfm_array(self->fd, PFM_WRITE_PMDS, &pd, 1));
	pmd_init(&pd, 0, 1234);
	pd.reg_set = 1;
	ASSERT_EQ(0, pfm_array(self->fd, PFM_WRITE_PMDS, &pd, 1));
	ASSERT_EQ(0, pfm_load(self->fd, gettid()));
	ASSERT_EQ(0, pfm_ioctl(self->fd, PFM_START, &(struct pfarg_start){ 0 }));
	for (i = 0; i < 20000; i++)	/* task-clock: some CPU time */
		syscall(SYS_getppid);
	ASSERT_EQ(0, read_values(self->fd, 1, 0, 1, v));
	EXPECT_EQ(1234, v[0]);
	ASSERT_EQ(0, read_values(self->fd, 0, 0, 1, &v[1]));
	EXPECT_LT(0, v[1]);	/* set 0 counted task-clock */
	EXPECT_EQ(-EINVAL, read_values(self->fd, 1, 0, 2, v));	/* unused there */
	EXPECT_EQ(0, pfm_ioctl(self->fd, PFM_STOP, NULL));
}

/*
 * A monitor reading a thread that runs on another CPU: the read runs
 * there, by IPI (or on the saved set when the thread is switched out).
 * The count only grows.
 */
TEST(read_values_of_a_thread_elsewhere)
{
	struct spinner sp;
	struct pfarg_pmc pc;
	struct pfarg_pmd pd;
	uint64_t v, prev = 0;
	cpu_set_t set;
	int fd, i, tid;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU");
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	tid = spinner_start(&sp);
	ASSERT_LT(0, tid);
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	ASSERT_EQ(0, sched_setaffinity(tid, sizeof(set), &set));
	fd = pfm_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_create(fd, 0));
	memset(&pc, 0, sizeof(pc));
	pc.reg_value = SOFT_EV_TASK_CLOCK;
	pmd_init(&pd, 0, 0);
	ASSERT_EQ(0, pfm_array(fd, PFM_WRITE_PMCS, &pc, 1));
	ASSERT_EQ(0, pfm_array(fd, PFM_WRITE_PMDS, &pd, 1));
	ASSERT_EQ(0, pfm_load(fd, tid));
	ASSERT_EQ(0, pfm_ioctl(fd, PFM_START, &(struct pfarg_start){ 0 }));
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, read_values(fd, 0, 0, 1, &v));
		EXPECT_LE(prev, v);
		prev = v;
		usleep(100);
	}
	EXPECT_LT(0, v);
	spinner_stop(&sp);
	close(fd);
}

TEST_F(ctx, array_argument_refusals)
{
	struct pfarg_array a;
	struct pfarg_pmd pd;

	pmd_init(&pd, 0, 1);
	EXPECT_EQ(-EINVAL, pfm_array(self->fd, PFM_WRITE_PMDS, &pd, 0));
	EXPECT_EQ(-EINVAL, pfm_array(self->fd, PFM_WRITE_PMDS, &pd, PFM_MAX_ARRAY + 1));
	EXPECT_EQ(-EFAULT, pfm_array(self->fd, PFM_WRITE_PMDS, (void *)8, 1));
	memset(&a, 0, sizeof(a));
	a.arr_ptr = (uintptr_t)&pd;
	a.arr_count = 1;
	a.arr_reserved = 1;
	EXPECT_EQ(-EINVAL, pfm_ioctl(self->fd, PFM_WRITE_PMDS, &a));
	EXPECT_EQ(-EFAULT, pfm_ioctl(self->fd, PFM_WRITE_PMDS, (void *)8));
}

TEST_HARNESS_MAIN
