// SPDX-License-Identifier: GPL-2.0
/*
 * Permissions and limits (Documentation/security.rst), on the software
 * PMU:
 *  - the paranoid knob: its values, who may write it, level 3 (no
 *    context), level 0 (system-wide for everyone);
 *  - kernel addresses: an unprivileged sampler whose overflows land in
 *    kernel mode (the soft PMU's clock counters overflow in the timer
 *    interrupt, whose registers are the interrupted code's) sees IP 0,
 *    never a kernel address; a privileged one, or any at paranoid 1,
 *    sees them;
 *  - sampling memory: VmLck follows the buffer (close, munmap, exit, in
 *    either order), the global smpl_buffer_mem_max, CAP_IPC_LOCK and
 *    paranoid -1 lift RLIMIT_MEMLOCK but not the global limit;
 *  - every structure the kernel writes back is fully written: each call
 *    runs twice, its output first filled with 0xA5, then with 0x5A; a
 *    byte still holding its fill after both runs was never written.
 *    Reserved fields read 0.
 *
 * The tests that switch users or set the knobs need root; each puts the
 * knobs back as it found them.
 */
#include <assert.h>
#include <poll.h>
#include <stddef.h>
#include <sys/resource.h>
#include <linux/capability.h>

#include <perfmon/perfmon_dfl_smpl.h>
#include <perfmon/perfmon_ring.h>

#include "pfm_test.h"
#include "kselftest_harness.h"

#define FILL_A		0xa5
#define FILL_B		0x5a
#define KIB		1024ull
#define MS		1000000ull
#define CAP_SYS_ADMIN_BIT	21

/* No implicit padding in what the kernel writes back. */
static_assert(sizeof(struct pfarg_ovfl_msg) == 64, "ovfl msg");
static_assert(sizeof(union pfarg_msg) == 64, "msg");
static_assert(sizeof(struct pfarg_version) == 32, "version");
static_assert(sizeof(struct pfarg_reg_info) == 88, "reg info");
static_assert(sizeof(struct pfm_dfl_smpl_hdr) == 128, "dfl hdr");
static_assert(sizeof(struct pfm_dfl_smpl_entry) == 40, "dfl entry");
static_assert(sizeof(struct pfm_ring_ctrl) == 256, "ring ctrl");

/* Bytes of [@off, @off + @len) that kept their fill in both runs. */
static size_t unwritten(const void *a, const void *b, size_t off, size_t len)
{
	const unsigned char *x = a, *y = b;
	size_t i, n = 0;

	for (i = off; i < off + len; i++)
		n += x[i] == FILL_A && y[i] == FILL_B;
	return n;
}

static bool all_zero(const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--)
		if (*c++)
			return false;
	return true;
}

/* VmLck of this process in KiB, or -1. */
static long long vmlck_kb(void)
{
	char line[128];
	long long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static long long mem_cur(void)
{
	return knob_read("smpl_buffer_mem_cur");
}

/* A context with a "default" buffer of @size bytes: fd or -errno. */
static int dfl_ctx(uint64_t size)
{
	struct pfm_dfl_smpl_arg arg;

	memset(&arg, 0, sizeof(arg));
	arg.buf_size = size;
	return pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, &arg, sizeof(arg));
}

/* A context with a "ring" of @pages data pages: fd or -errno. */
static int ring_ctx(uint32_t pages)
{
	struct pfm_ring_smpl_arg arg;

	memset(&arg, 0, sizeof(arg));
	arg.data_pages = pages;
	return pfm_fmt_ctx(0, PFM_RING_SMPL_NAME, &arg, sizeof(arg));
}

/* Drop CAP_SYS_ADMIN from the effective set, staying root; 0 or -1. */
static int drop_sys_admin(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[0].effective &= ~(1u << CAP_SYS_ADMIN_BIT);
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* The paranoid level                                                  */
/* ------------------------------------------------------------------ */

/* Nobody may not write the knobs (mode 0644); exit 0 or the step. */
static int knob_nobody_child(void)
{
	if (become_nobody())
		return 100;
	if (knob_write("paranoid", "-1") != -EACCES)
		return 101;
	return knob_write("smpl_buffer_mem_max", "-1") == -EACCES ? 0 : 102;
}

/* Root without CAP_SYS_ADMIN may not either: -EPERM. */
static int knob_nocap_child(void)
{
	if (drop_sys_admin())
		return 100;
	if (knob_write("paranoid", "-1") != -EPERM)
		return 101;
	if (knob_write("smpl_buffer_mem_max", "-1") != -EPERM)
		return 102;
	return knob_write("ctx_per_user_max", "1") == -EPERM ? 0 : 103;
}

TEST(paranoid_knob)
{
	long long saved = knob_read("paranoid");
	int level;

	if (getuid() != 0)
		SKIP(return, "needs root");
	ASSERT_EQ(2, saved);		/* perf's default */
	EXPECT_EQ(-EINVAL, knob_write("paranoid", "4"));
	EXPECT_EQ(-EINVAL, knob_write("paranoid", "-2"));
	EXPECT_EQ(-EINVAL, knob_write("paranoid", "two"));
	EXPECT_EQ(2, knob_read("paranoid"));
	for (level = -1; level <= 3; level++) {
		EXPECT_EQ(0, set_paranoid(level));
		EXPECT_EQ(level, knob_read("paranoid"));
	}
	EXPECT_EQ(0, set_paranoid(saved));
	EXPECT_EQ(0, run_child(knob_nobody_child));
	EXPECT_EQ(0, run_child(knob_nocap_child));
	EXPECT_EQ(saved, knob_read("paranoid"));
}

/* The errno a context creation expects, for create_child. */
static int want_create;

/* As nobody: open works, PFM_CREATE_CONTEXT gives want_create. */
static int create_child(void)
{
	int fd;

	if (become_nobody())
		return 100;
	fd = pfm_open();
	if (fd < 0)
		return 101;
	return pfm_create(fd, 0) == -want_create ? 0 : 102;
}

TEST(paranoid3_no_context)
{
	long long saved = knob_read("paranoid");
	int fd;

	if (getuid() != 0)
		SKIP(return, "needs root");
	ASSERT_EQ(0, set_paranoid(3));
	want_create = EACCES;
	EXPECT_EQ(0, run_child(create_child));
	fd = pfm_new_ctx(0);		/* CAP_PERFMON */
	EXPECT_LE(0, fd);
	close(fd);
	EXPECT_EQ(0, set_paranoid(2));
	want_create = 0;
	EXPECT_EQ(0, run_child(create_child));
	EXPECT_EQ(0, set_paranoid(saved));
}

/* The errno a system-wide load expects, for system_child. */
static int want_load;

static int system_child(void)
{
	int fd;

	if (become_nobody())
		return 100;
	fd = pfm_new_ctx(PFM_FL_SYSTEM_WIDE);
	if (fd < 0)
		return 101;
	if (pfm_load(fd, 0) != -want_load)
		return errno < 100 ? errno : 102;
	close(fd);
	return 0;
}

TEST(system_wide_paranoid0)
{
	long long saved = knob_read("paranoid");

	if (getuid() != 0)
		SKIP(return, "needs root");
	ASSERT_EQ(0, set_paranoid(0));
	want_load = 0;
	EXPECT_EQ(0, run_child(system_child));
	ASSERT_EQ(0, set_paranoid(1));
	want_load = EACCES;
	EXPECT_EQ(0, run_child(system_child));
	EXPECT_EQ(0, set_paranoid(saved));
}

/* ------------------------------------------------------------------ */
/* Kernel addresses in samples                                         */
/* ------------------------------------------------------------------ */

#define RING_PAGES	16
#define IP_PERIOD_NS	200000ull	/* task-clock: a sample every 200 us */

/* What sampler_child expects: true, kernel IPs; false, none. */
static bool want_kernel_ips;
static bool sampler_drops;

/* Burn @ns of CPU time mostly in the kernel: reads of /dev/zero. */
static void kernel_work(uint64_t ns)
{
	static char buf[128 << 10];
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	int z = open("/dev/zero", O_RDONLY);

	while (z >= 0 && clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		if (read(z, buf, sizeof(buf)) < 0)
			break;
	close(z);
}

/*
 * Sample task-clock into a ring while the thread works in the kernel;
 * count the samples, those with IP 0 and those with a kernel address
 * (top bit set, on both 64-bit kernels).  Exit status 0, or the step.
 */
static int sampler_child(void)
{
	size_t len = (1 + RING_PAGES) * page_size();
	uint64_t pos, head, n = 0, zero = 0, kern = 0;
	struct pfm_ring_ctrl *ctrl;
	pfarg_pmd_t pd;
	char *data;
	int fd;

	if (pin_to_cpu(0) || (sampler_drops && become_nobody()))
		return 100;
	fd = ring_ctx(RING_PAGES);
	if (fd < 0)
		return 101;
	ctrl = pfm_map_buf(fd, len, PROT_READ | PROT_WRITE);
	if (ctrl == MAP_FAILED)
		return 102;
	data = (char *)ctrl + page_size();
	pfm_pmd_prep(&pd, 0, 0, PFM_REGFL_OVFL_NOTIFY, -IP_PERIOD_NS,
		     -IP_PERIOD_NS);
	if (pfm_write_pmc(fd, 0, 0, SOFT_EV_TASK_CLOCK) ||
	    pfm_write_pmds(fd, &pd, 1) || pfm_load(fd, gettid()) ||
	    pfm_start(fd, NULL))
		return 103;
	kernel_work(100 * MS);
	if (pfm_stop(fd))
		return 104;
	head = __atomic_load_n(&ctrl->data_head, __ATOMIC_ACQUIRE);
	for (pos = 0; pos < head && pos < ctrl->data_size;) {
		struct pfm_ring_sample *s = (void *)(data + pos);

		if (s->hdr.size < sizeof(s->hdr))
			return 105;
		if (s->hdr.type == PFM_RING_REC_SAMPLE) {
			n++;
			zero += !s->ip;
			kern += s->ip >> 63;
		}
		pos += s->hdr.size;
	}
	fprintf(stderr, "# %llu samples: %llu with IP 0, %llu kernel addresses\n",
		(unsigned long long)n, (unsigned long long)zero,
		(unsigned long long)kern);
	if (n < 20)
		return 106;
	if (want_kernel_ips)
		return kern ? 0 : 107;
	/* Hidden, not missing: the overflows did land in the kernel. */
	return kern ? 108 : zero ? 0 : 109;
}

TEST(kernel_ips_hidden)
{
	long long saved = knob_read("paranoid");

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	if (getuid() != 0)
		SKIP(return, "needs root to switch users");
	ASSERT_EQ(2, saved);
	sampler_drops = true;
	want_kernel_ips = false;
	EXPECT_EQ(0, run_child(sampler_child)) {
		TH_LOG("nobody, paranoid 2: 106 few samples; 108 kernel IP; 109 none in kernel");
	}
	sampler_drops = false;
	want_kernel_ips = true;
	EXPECT_EQ(0, run_child(sampler_child)) {
		TH_LOG("CAP_PERFMON: 107 no kernel address seen");
	}
	ASSERT_EQ(0, set_paranoid(1));
	sampler_drops = true;
	EXPECT_EQ(0, run_child(sampler_child)) {
		TH_LOG("unprivileged at paranoid 1: 107 no kernel address seen");
	}
	EXPECT_EQ(0, set_paranoid(saved));
}

/* ------------------------------------------------------------------ */
/* Sampling memory                                                     */
/* ------------------------------------------------------------------ */

#define BUF_KIB		256

TEST(vmlck_follows_buffer)
{
	long long lck = vmlck_kb(), cur = mem_cur();
	void *map;
	int fd;

	ASSERT_LE(0, lck);
	ASSERT_LE(0, cur);
	fd = dfl_ctx(BUF_KIB * KIB);
	ASSERT_LE(0, fd);
	EXPECT_EQ(lck + BUF_KIB, vmlck_kb());
	EXPECT_EQ(cur + BUF_KIB * KIB, mem_cur());
	close(fd);
	EXPECT_EQ(lck, vmlck_kb());
	EXPECT_EQ(cur, mem_cur());

	/* A mapping keeps the buffer, and its charge, past close(). */
	fd = dfl_ctx(BUF_KIB * KIB);
	ASSERT_LE(0, fd);
	map = pfm_map_buf(fd, BUF_KIB * KIB, PROT_READ);
	ASSERT_TRUE(map != MAP_FAILED);
	close(fd);
	EXPECT_EQ(lck + BUF_KIB, vmlck_kb());
	EXPECT_EQ(cur + BUF_KIB * KIB, mem_cur());
	EXPECT_EQ(0, munmap(map, BUF_KIB * KIB));
	EXPECT_EQ(lck, vmlck_kb());
	EXPECT_EQ(cur, mem_cur());

	/* munmap() first, then close(). */
	fd = dfl_ctx(BUF_KIB * KIB);
	ASSERT_LE(0, fd);
	map = pfm_map_buf(fd, BUF_KIB * KIB, PROT_READ);
	ASSERT_TRUE(map != MAP_FAILED);
	EXPECT_EQ(0, munmap(map, BUF_KIB * KIB));
	EXPECT_EQ(lck + BUF_KIB, vmlck_kb());
	close(fd);
	EXPECT_EQ(lck, vmlck_kb());
	EXPECT_EQ(cur, mem_cur());
}

/* Leave a mapped and an unmapped buffer behind at exit. */
static int exit_child(void)
{
	int a = dfl_ctx(BUF_KIB * KIB), b = ring_ctx(4);

	if (a < 0 || b < 0)
		return 100;
	if (pfm_map_buf(b, 5 * page_size(), PROT_READ) == MAP_FAILED)
		return 101;
	_exit(0);
}

TEST(buffers_released_at_exit)
{
	long long cur = mem_cur();

	ASSERT_LE(0, cur);
	EXPECT_EQ(0, run_child(exit_child));
	EXPECT_EQ(cur, mem_cur());
}

TEST(global_limit)
{
	long long saved = knob_read("smpl_buffer_mem_max"), cur = mem_cur();
	long long ram = (long long)(sysconf(_SC_PHYS_PAGES) / 16) * page_size();
	char buf[32];
	int fd, fd2;

	if (getuid() != 0)
		SKIP(return, "needs root");
	TH_LOG("smpl_buffer_mem_max %lld (1/16 of RAM: %lld), in use %lld",
	       saved, ram, cur);
	EXPECT_EQ(ram, saved);
	snprintf(buf, sizeof(buf), "%lld", cur + 64 * (long long)KIB);
	ASSERT_EQ(0, knob_write("smpl_buffer_mem_max", buf));
	/* Root has CAP_IPC_LOCK: only the global limit refuses. */
	EXPECT_EQ(-ENOMEM, dfl_ctx(128 * KIB));
	fd = dfl_ctx(64 * KIB);
	EXPECT_LE(0, fd);
	EXPECT_EQ(cur + 64 * (long long)KIB, mem_cur());
	EXPECT_EQ(-ENOMEM, ring_ctx(1));
	close(fd);
	EXPECT_EQ(cur, mem_cur());
	/* -1: no limit, as perfmon2. */
	EXPECT_EQ(0, knob_write("smpl_buffer_mem_max", "-1"));
	fd = dfl_ctx(128 * KIB);
	fd2 = ring_ctx(64);
	EXPECT_LE(0, fd);
	EXPECT_LE(0, fd2);
	close(fd);
	close(fd2);
	snprintf(buf, sizeof(buf), "%lld", saved);
	EXPECT_EQ(0, knob_write("smpl_buffer_mem_max", buf));
	EXPECT_EQ(saved, knob_read("smpl_buffer_mem_max"));
}

/* Who lifts RLIMIT_MEMLOCK (0 here), for rlimit_child. */
static bool rlimit_drops;

static int rlimit_child(void)
{
	struct rlimit rl = { 0, 0 };
	long long lck;
	int fd;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) ||
	    (rlimit_drops && become_nobody()))
		return 100;
	lck = vmlck_kb();
	fd = dfl_ctx(64 * KIB);
	if (fd < 0)
		return -fd < 100 ? -fd : 101;
	/* Lifted, still counted. */
	return vmlck_kb() == lck + 64 ? 0 : 102;
}

TEST(rlimit_lifted_by_cap_ipc_lock_or_paranoid_minus1)
{
	long long saved = knob_read("paranoid");

	if (getuid() != 0)
		SKIP(return, "needs root");
	ASSERT_EQ(0, knob_write("smpl_user_mlock_kb", "0"));
	rlimit_drops = false;		/* root: CAP_IPC_LOCK */
	EXPECT_EQ(0, run_child(rlimit_child));
	rlimit_drops = true;
	EXPECT_EQ(ENOMEM, run_child(rlimit_child));
	ASSERT_EQ(0, set_paranoid(-1));
	EXPECT_EQ(0, run_child(rlimit_child));
	EXPECT_EQ(0, set_paranoid(saved));
	EXPECT_EQ(0, knob_write("smpl_user_mlock_kb", "516"));
}

/*
 * Locked memory is charged to the user, not the process: two processes
 * of uid 65534, each with RLIMIT_MEMLOCK 256 KiB and no allowance, hold
 * 192 and 128 KiB buffers only one at a time (before this change each
 * process had its own 256 KiB, and both got theirs); with an allowance
 * of 64 KiB per CPU they both fit.  The refusal is ENOMEM and one log
 * line naming the limit.
 */
static int memlock_holder(int go, int done)
{
	struct rlimit rl = { 256 * KIB, 256 * KIB };
	char c;
	int fd;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || become_nobody())
		return 100;
	fd = dfl_ctx(192 * KIB);
	if (write(done, fd < 0 ? "n" : "y", 1) != 1 || read(go, &c, 1) != 1)
		return 101;
	return fd < 0 ? 102 : 0;
}

/* A second process of the same user asks for 128 KiB: 0 or -errno. */
static int memlock_second(void)
{
	struct rlimit rl = { 256 * KIB, 256 * KIB };
	int fd;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || become_nobody())
		return 100;
	fd = dfl_ctx(128 * KIB);
	return fd < 0 ? -fd : 0;
}

TEST(memlock_charged_per_user)
{
	const char *line = "over its RLIMIT_MEMLOCK plus /sys/kernel/perfmon/smpl_user_mlock_kb";
	int go[2], done[2], logged, st;
	pid_t holder;
	char c;

	if (getuid() != 0)
		SKIP(return, "needs root");
	ASSERT_EQ(0, knob_write("smpl_user_mlock_kb", "0"));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	holder = fork();
	if (holder == 0)
		_exit(memlock_holder(go[0], done[1]));
	ASSERT_EQ(1, read(done[0], &c, 1));
	ASSERT_EQ('y', c) TH_LOG("the first 192 KiB buffer was refused");
	logged = klog_count(line);
	EXPECT_EQ(ENOMEM, run_child(memlock_second));
	EXPECT_EQ(logged + 1, klog_count(line));
	ASSERT_EQ(0, knob_write("smpl_user_mlock_kb", "64"));
	EXPECT_EQ(0, run_child(memlock_second));
	EXPECT_EQ(0, knob_write("smpl_user_mlock_kb", "516"));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(holder, waitpid(holder, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
	/* The holder's buffer is uncharged at its exit. */
	ASSERT_EQ(0, knob_write("smpl_user_mlock_kb", "0"));
	EXPECT_EQ(0, run_child(memlock_second));
	EXPECT_EQ(0, knob_write("smpl_user_mlock_kb", "516"));
}

/* ------------------------------------------------------------------ */
/* Structures written back: every byte written, reserved ones zero     */
/* ------------------------------------------------------------------ */

TEST(version_fully_written)
{
	struct pfarg_version a, b;
	int fd = pfm_open();

	ASSERT_LE(0, fd);
	memset(&a, FILL_A, sizeof(a));
	memset(&b, FILL_B, sizeof(b));
	ASSERT_EQ(0, pfm_ioctl(fd, PFM_GET_VERSION, &a));
	ASSERT_EQ(0, pfm_ioctl(fd, PFM_GET_VERSION, &b));
	EXPECT_EQ(0, unwritten(&a, &b, 0, sizeof(a)));
	EXPECT_TRUE(all_zero(a.ver_reserved, sizeof(a.ver_reserved)));
	close(fd);
}

TEST(pmu_info_fully_written)
{
	struct pfarg_pmu_info a, b;
	int fd = pfm_open();

	ASSERT_LE(0, fd);
	memset(&a, FILL_A, sizeof(a));
	memset(&b, FILL_B, sizeof(b));
	ASSERT_EQ(0, pfm_ioctl(fd, PFM_GET_PMU_INFO, &a));
	ASSERT_EQ(0, pfm_ioctl(fd, PFM_GET_PMU_INFO, &b));
	EXPECT_EQ(0, unwritten(&a, &b, 0, sizeof(a)));
	EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)));
	EXPECT_EQ(0, a.pmu_flags);
	EXPECT_TRUE(all_zero(a.pmu_reserved, sizeof(a.pmu_reserved)));
	/* The name's tail too. */
	EXPECT_TRUE(all_zero(a.pmu_name + strlen(a.pmu_name),
			     PFM_NAME_LEN - strlen(a.pmu_name)));
	close(fd);
}

/* Registers asked about: implemented ones and absent ones. */
static const struct { uint16_t kind, num; } reg_q[] = {
	{ PFM_REG_KIND_PMC, 0 }, { PFM_REG_KIND_PMD, 0 },
	{ PFM_REG_KIND_PMC, 200 }, { PFM_REG_KIND_PMD, 255 },
	{ PFM_REG_KIND_CFG, 0 }, { PFM_REG_KIND_CFG, 7 },
};

#define NREG	ARRAY_SIZE(reg_q)

static int reg_info_run(int fd, struct pfarg_reg_info *ri, int fill)
{
	unsigned int i;

	for (i = 0; i < NREG; i++) {
		memset(&ri[i], fill, sizeof(ri[i]));
		ri[i].info_num = reg_q[i].num;
		ri[i].info_kind = reg_q[i].kind;
		ri[i].info_flags = 0;
		ri[i].info_reserved1 = 0;
		memset(ri[i].info_reserved, 0, sizeof(ri[i].info_reserved));
	}
	return pfm_array(fd, PFM_GET_REG_INFO, ri, NREG);
}

TEST(reg_info_fully_written)
{
	struct pfarg_reg_info a[NREG], b[NREG];
	const size_t out = offsetof(struct pfarg_reg_info, info_type);
	const size_t out_len = offsetof(struct pfarg_reg_info, info_reserved) -
			       out;
	unsigned int i;
	int fd = pfm_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, reg_info_run(fd, a, FILL_A));
	ASSERT_EQ(0, reg_info_run(fd, b, FILL_B));
	for (i = 0; i < NREG; i++) {
		EXPECT_EQ(0, unwritten(&a[i], &b[i], out, out_len)) {
			TH_LOG("kind %u number %u (flags %#x): output left unwritten",
			       reg_q[i].kind, reg_q[i].num, a[i].info_flags);
		}
		EXPECT_EQ(0, a[i].info_reserved1);
		EXPECT_TRUE(all_zero(a[i].info_reserved,
				     sizeof(a[i].info_reserved)));
	}
	EXPECT_EQ(PFM_REG_RETFL_NOTAVAIL, a[2].info_flags);
	EXPECT_EQ(0, a[2].info_dfl_val | a[2].info_hw_addr);
	close(fd);
}

/* A counting context on syscalls, PMD0 written; loaded on itself. */
static int syscalls_ctx(uint64_t start, uint32_t flags)
{
	pfarg_pmd_t pd;
	int fd = pfm_new_ctx(0);

	if (fd < 0)
		return -errno;
	pfm_pmd_prep(&pd, 0, 0, flags, start, start);
	if (pfm_write_pmc(fd, 0, 0, SOFT_EV_SYSCALLS) ||
	    pfm_write_pmds(fd, &pd, 1)) {
		close(fd);
		return -errno;
	}
	return fd;
}

static int read_pmds_run(int fd, pfarg_pmd_t *pd, int fill)
{
	memset(pd, fill, sizeof(*pd));
	pd->reg_num = 0;
	pd->reg_set = 0;
	pd->reg_flags = 0;
	pd->reg_random_seed = 0;
	pd->reg_freq = 0;
	pd->reg_reserved2 = 0;
	return pfm_array(fd, PFM_READ_PMDS, pd, 1);
}

TEST(read_pmds_fully_written)
{
	pfarg_pmd_t a, b;
	int fd;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	fd = syscalls_ctx(0, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, read_pmds_run(fd, &a, FILL_A));
	ASSERT_EQ(0, read_pmds_run(fd, &b, FILL_B));
	EXPECT_EQ(0, unwritten(&a, &b, offsetof(pfarg_pmd_t, reg_value),
			       sizeof(a.reg_value)));
	EXPECT_EQ(0, unwritten(&a, &b, offsetof(pfarg_pmd_t, reg_last_reset_val),
			       sizeof(a.reg_last_reset_val)));
	EXPECT_EQ(0, unwritten(&a, &b, offsetof(pfarg_pmd_t, reg_ovfl_switch_cnt),
			       sizeof(a.reg_ovfl_switch_cnt)));
	EXPECT_EQ(0, a.reg_freq | a.reg_reserved2);
	close(fd);
}

static int setinfo_run(int fd, pfarg_setinfo_t *si, int fill)
{
	memset(si, fill, sizeof(*si));
	si->set_id = 0;
	si->set_reserved1 = 0;
	si->set_flags = 0;
	memset(si->set_reserved3, 0, sizeof(si->set_reserved3));
	return pfm_array(fd, PFM_GETINFO_EVTSETS, si, 1);
}

TEST(getinfo_evtsets_fully_written)
{
	const size_t out = offsetof(pfarg_setinfo_t, set_ovfl_pmds);
	const size_t out_len = offsetof(pfarg_setinfo_t, set_reserved3) - out;
	pfarg_setinfo_t a, b;
	int fd = pfm_new_ctx(0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setinfo_run(fd, &a, FILL_A));
	ASSERT_EQ(0, setinfo_run(fd, &b, FILL_B));
	EXPECT_EQ(0, unwritten(&a, &b, out, out_len));
	EXPECT_EQ(0, a.set_reserved1);
	EXPECT_TRUE(all_zero(a.set_reserved3, sizeof(a.set_reserved3)));
	close(fd);
}

static int drv_cfg_run(int fd, struct pfarg_drv_cfg *c, int fill)
{
	memset(c, fill, sizeof(*c));
	c->cfg_num = 0;
	c->cfg_reserved1 = 0;
	c->cfg_flags = 0;
	memset(c->cfg_reserved2, 0, sizeof(c->cfg_reserved2));
	return pfm_array(fd, PFM_GET_DRV_CONFIG, c, 1);
}

TEST(get_drv_config_fully_written)
{
	struct pfarg_drv_cfg a, b;
	int fd;

	if (!soft_settings())
		SKIP(return, "not pfm_soft (setting 0: clock_unit_ns)");
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, drv_cfg_run(fd, &a, FILL_A));
	ASSERT_EQ(0, drv_cfg_run(fd, &b, FILL_B));
	EXPECT_EQ(0, unwritten(&a, &b, offsetof(struct pfarg_drv_cfg, cfg_value),
			       sizeof(a.cfg_value)));
	EXPECT_EQ(0, unwritten(&a, &b, offsetof(struct pfarg_drv_cfg, cfg_flags),
			       sizeof(a.cfg_flags)));
	close(fd);
}

/* Read one message into @buf (filled with @fill first), 5 s at most. */
static ssize_t read_msg_filled(int fd, void *buf, size_t len, int fill)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	memset(buf, fill, len);
	if (poll(&p, 1, 5000) != 1)
		return -ETIMEDOUT;
	return read(fd, buf, len);
}

/* Overflow messages: the same overflow twice (restart in between). */
TEST(msg_ovfl_fully_written)
{
	unsigned char a[sizeof(union pfarg_msg) + 16];
	unsigned char b[sizeof(a)];
	union pfarg_msg *m = (union pfarg_msg *)a;
	int fd, i;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	ASSERT_EQ(0, pin_to_cpu(0));
	fd = syscalls_ctx(-20ull, PFM_REGFL_OVFL_NOTIFY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_load(fd, gettid()));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	for (i = 0; i < 40; i++)
		syscall(SYS_getppid);
	ASSERT_EQ((ssize_t)sizeof(union pfarg_msg),
		  read_msg_filled(fd, a, sizeof(a), FILL_A));
	ASSERT_EQ(0, pfm_restart(fd));
	for (i = 0; i < 40; i++)
		syscall(SYS_getppid);
	ASSERT_EQ((ssize_t)sizeof(union pfarg_msg),
		  read_msg_filled(fd, b, sizeof(b), FILL_B));
	EXPECT_EQ(PFM_MSG_OVFL, m->type);
	EXPECT_EQ(0, unwritten(a, b, 0, sizeof(union pfarg_msg)));
	EXPECT_EQ(1, m->pfm_ovfl_msg.msg_ovfl_pmds[0]);
	EXPECT_TRUE(all_zero(&m->pfm_ovfl_msg.msg_ovfl_pmds[1],
			     3 * sizeof(uint64_t)));
	/* read() wrote one message, nothing past it. */
	EXPECT_EQ(16, unwritten(a, b, sizeof(union pfarg_msg), 16));
	close(fd);
}

/* The end of a monitored thread: fields without meaning there are 0. */
static ssize_t end_msg(void *buf, size_t len, int fill)
{
	struct spinner s;
	ssize_t ret;
	int fd, tid;

	fd = pfm_new_ctx(0);
	if (fd < 0)
		return -errno;
	tid = spinner_start(&s);
	ret = tid < 0 ? tid : pfm_load(fd, tid);
	if (tid >= 0)
		spinner_stop(&s);
	if (!ret)
		ret = read_msg_filled(fd, buf, len, fill);
	close(fd);
	return ret;
}

TEST(msg_end_fully_written)
{
	unsigned char a[sizeof(union pfarg_msg)], b[sizeof(a)];
	union pfarg_msg *m = (union pfarg_msg *)a;

	ASSERT_EQ((ssize_t)sizeof(a), end_msg(a, sizeof(a), FILL_A));
	ASSERT_EQ((ssize_t)sizeof(b), end_msg(b, sizeof(b), FILL_B));
	EXPECT_EQ(PFM_MSG_END, m->type);
	EXPECT_EQ(0, unwritten(a, b, 0, sizeof(a)));
	EXPECT_EQ(0, m->pfm_ovfl_msg.msg_ovfl_ip);
	EXPECT_EQ(0, m->pfm_ovfl_msg.msg_active_set);
	EXPECT_TRUE(all_zero(m->pfm_ovfl_msg.msg_ovfl_pmds,
			     sizeof(m->pfm_ovfl_msg.msg_ovfl_pmds)));
}

/* Both formats' headers and records: reserved bytes are 0 after samples. */
TEST(smpl_reserved_zero)
{
	size_t ring_len = 5 * page_size();
	const struct pfm_dfl_smpl_entry *e;
	struct pfm_dfl_smpl_hdr *hdr;
	struct pfm_ring_ctrl *ctrl;
	struct pfm_ring_rec *rec;
	pfarg_pmd_t pd;
	uint64_t pos;
	int dfl, ring, i;

	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	ASSERT_EQ(0, pin_to_cpu(0));
	dfl = dfl_ctx(4 * KIB);
	ring = ring_ctx(4);
	ASSERT_LE(0, dfl);
	ASSERT_LE(0, ring);
	hdr = pfm_map_buf(dfl, 4 * KIB, PROT_READ);
	ctrl = pfm_map_buf(ring, ring_len, PROT_READ | PROT_WRITE);
	ASSERT_TRUE(hdr != MAP_FAILED);
	ASSERT_TRUE(ctrl != MAP_FAILED);
	for (i = 0; i < 2; i++) {
		int fd = i ? ring : dfl;

		pfm_pmd_prep(&pd, 0, 0, PFM_REGFL_OVFL_NOTIFY, -5ull, -5ull);
		pd.reg_smpl_pmds[0] = 1;
		ASSERT_EQ(0, pfm_write_pmc(fd, 0, 0, SOFT_EV_SYSCALLS));
		ASSERT_EQ(0, pfm_write_pmds(fd, &pd, 1));
		ASSERT_EQ(0, pfm_load(fd, gettid()));
		ASSERT_EQ(0, pfm_start(fd, NULL));
		for (int j = 0; j < 30; j++)
			syscall(SYS_getppid);
		ASSERT_EQ(0, pfm_unload_context(fd));
	}
	EXPECT_LT(0, hdr->hdr_count);
	EXPECT_EQ(0, hdr->hdr_buf_flags);
	EXPECT_TRUE(all_zero(hdr->hdr_reserved, sizeof(hdr->hdr_reserved)));
	/* layout 1.0: each entry's reserved field */
	for (pos = sizeof(*hdr); pos < hdr->hdr_cur_offs; pos += sizeof(*e) + 8) {
		e = (void *)((char *)hdr + pos);
		EXPECT_EQ(0, e->reserved);
	}
	EXPECT_LT(0, ctrl->records);
	EXPECT_TRUE(all_zero(ctrl->reserved, sizeof(ctrl->reserved)));
	for (pos = 0; pos < ctrl->data_head; pos += rec->size) {
		rec = (void *)((char *)ctrl + page_size() + pos);
		ASSERT_LE(sizeof(*rec), rec->size);
		EXPECT_EQ(0, rec->reserved);
	}
	munmap(hdr, 4 * KIB);
	munmap(ctrl, ring_len);
	close(dfl);
	close(ring);
}

TEST_HARNESS_MAIN
