// SPDX-License-Identifier: GPL-2.0
/*
 * The x86 descriptions (Intel architectural perfmon, AMD64) on a
 * SIMULATED PMU: QEMU's TCG has no x86 PMU, so pfm_x86_sim.ko runs the
 * very engine and vendor parts pfm_x86.ko runs (pfm_pmu_lib's) on a
 * register file in memory (tools/selftests/perfmon/sim/x86_sim.c).  What is simulated:
 * the MSRs, CPUID (module parameters), the NMI counter allocator and the
 * counting itself (debugfs pfm_x86_sim/tick advances the enabled
 * counters of the writing CPU; pfm_x86_sim/inject wraps counters while
 * the handler runs).  What is real: /dev/perfmon and the core,
 * the NMI (a self-NMI the simulator sends when a counter wraps with its
 * interrupt enabled), the engine's NMI handler and irq_work.
 *
 * Each test loads the simulator with the CPU it needs; the rig boots
 * with it loaded (vm --pmu x86sim).  Everything runs on CPU 0, where the
 * self-monitoring thread's context is live, because the register file is
 * per CPU.
 */
#include <stdlib.h>
#include <sys/klog.h>
#include <fcntl.h>
#include <perfmon/perfmon_uread.h>
#include "pfm_test.h"
#include "kselftest_harness.h"

#define SIM_KO		"/modules/pfm_x86_sim.ko"
#define X86_KO		"/modules/pfm_x86.ko"
#define SIM_DIR		"/sys/kernel/debug/pfm_x86_sim/"

#define EVT_USR		0x10000ull
#define EVT_OS		0x20000ull
#define EVT_INT		0x100000ull
#define EVT_ANY		0x200000ull
#define EVT_EN		0x400000ull
#define CORE_CYCLES	0x3cull
#define INST_RETIRED	0xc0ull
#define COUNTING	(CORE_CYCLES | EVT_USR | EVT_OS | EVT_EN)
#define FIXED_CTRL	16
#define FIXED0		16
#define APIC_DM_NMI	0x400

/*
 * Reload the simulator with @params; 0 or -errno.  A closed context that
 * was loaded on a thread drops its module reference from a workqueue,
 * a moment after close() returns: unloading retries for up to 2 s.
 */
static int sim_load(const char *params)
{
	int ret, tries = 200;

	while ((ret = module_unload("pfm_x86_sim")) == -EAGAIN && --tries)
		usleep(10000);

	if (ret && ret != -ENOENT)
		return ret;
	return module_load(SIM_KO, params);
}

static int sim_write(const char *file, const char *val)
{
	char path[128];
	int fd, ret;

	snprintf(path, sizeof(path), SIM_DIR "%s", file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -errno;
	close(fd);
	return ret;
}

static int sim_tick(uint64_t n)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)n);
	return sim_write("tick", buf);
}

/* Register @key of this CPU's simulated PMU; ~0 when absent. */
static uint64_t sim_reg(const char *key)
{
	char line[128];
	size_t len = strlen(key);
	uint64_t v = ~0ull;
	FILE *f = fopen(SIM_DIR "regs", "r");

	if (!f)
		return v;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, len) && line[len] == '=') {
			v = strtoull(line + len + 1, NULL, 0);
			break;
		}
	}
	fclose(f);
	return v;
}

static uint32_t counter_width(void)
{
	struct pfarg_pmu_info info;

	memset(&info, 0, sizeof(info));
	return pfm_get_pmu_desc(&info) ? 0 : info.pmu_counter_width;
}

/* A self-monitoring context loaded on CPU 0: PMC/PMD 0, fixed 0. */
static int self_ctx(uint64_t pmd0, uint64_t reset0, bool fixed)
{
	int fd;

	if (pin_to_cpu(0))
		return -1;
	fd = pfm_new_ctx(0);
	if (fd < 0 || pfm_add_ctr(fd, 0, 0, COUNTING, pmd0, reset0) ||
	    (fixed && pfm_add_ctr(fd, 0, FIXED0, 0x3, 0, 0)) ||
	    pfm_load(fd, gettid()))
		return -1;
	return fd;
}

FIXTURE(sim) {
	bool ok;
};

/*
 * The simulator must be the description the guest booted with (vm
 * --pmu x86sim): with another one registered (pfm_soft in the plain
 * suite) it could not be loaded, and every case would fail.  The
 * harness of the kernels built against runs a case's body after a
 * SKIP in its fixture's setup: the case's process ends here instead,
 * with the exit status the harness reports as a skip.
 */
FIXTURE_SETUP(sim)
{
	self->ok = !getuid() && !access(SIM_KO, R_OK) &&
		   !access("/sys/module/pfm_x86_sim", F_OK);
	if (!self->ok)
		SKIP(_exit(255), "needs root, " SIM_KO
		     " and the simulator loaded (vm --pmu x86sim)");
}

/* Leave the default simulator loaded, as the rig expects. */
FIXTURE_TEARDOWN(sim)
{
	if (self->ok)
		EXPECT_EQ(0, sim_load(""));
}

TEST_F(sim, intel_v4_register_map)
{
	ASSERT_EQ(0, sim_load(""));
	ASSERT_TRUE(pmu_is("intel_arch"));
	EXPECT_EQ(48, counter_width());
	EXPECT_STREQ("PERFEVTSEL3", pmu_desc_str("pmc3/name"));
	EXPECT_STREQ("0x189", pmu_desc_str("pmc3/addr"));
	EXPECT_STREQ("FIXED_CTR_CTRL", pmu_desc_str("pmc16/name"));
	EXPECT_STREQ("0x38d", pmu_desc_str("pmc16/addr"));
	EXPECT_STREQ("PMC0", pmu_desc_str("pmd0/name"));
	EXPECT_STREQ("0xc1", pmu_desc_str("pmd0/addr"));
	EXPECT_STREQ("FIXED_CTR2", pmu_desc_str("pmd18/name"));
	EXPECT_STREQ("0x30b", pmu_desc_str("pmd18/addr"));
	EXPECT_STREQ("", pmu_desc_str("pmc4/name"));
	EXPECT_STREQ("", pmu_desc_str("pmd19/name"));
	/* AnyThread allowed from v3; everything above bit 31 reserved. */
	EXPECT_STREQ("0xffffffff00080000", pmu_desc_str("pmc0/rsvd_msk"));
	EXPECT_STREQ("0xfffffffffffff000", pmu_desc_str("pmc16/rsvd_msk"));
}

TEST_F(sim, intel_write_checks)
{
	int fd;

	/* v2, Instructions Retired marked unavailable (EBX bit 1) */
	ASSERT_EQ(0, sim_load("cpuid_a=0x07300402,0x2,0,0x603"));
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, pfm_add_ctr(fd, 0, 0, INST_RETIRED | EVT_EN, 0, 0));
	EXPECT_EQ(0, pfm_add_ctr(fd, 0, 0, CORE_CYCLES | EVT_EN, 0, 0));
	EXPECT_EQ(-EINVAL, pfm_add_ctr(fd, 0, 0, COUNTING | EVT_ANY, 0, 0));
	EXPECT_EQ(-EINVAL, pfm_add_ctr(fd, 0, 0, COUNTING | 1ull << 32, 0, 0));
	/* Fixed counter 3 does not exist; AnyThread (bit 2) is v3/v4 only */
	EXPECT_EQ(-EINVAL, pfm_add_ctr(fd, 0, FIXED0, 0x3000, 0, 0));
	EXPECT_EQ(-EINVAL, pfm_add_ctr(fd, 0, FIXED0, 0x4, 0, 0));
	EXPECT_EQ(0, pfm_add_ctr(fd, 0, FIXED0, 0x333, 0, 0));
	close(fd);
}

/* v4, full-width writes: overflow through GLOBAL_STATUS and the NMI. */
TEST_F(sim, intel_overflow_nmi)
{
	uint64_t claimed, top = 1ull << 48;
	int fd;

	ASSERT_EQ(0, sim_load(""));
	claimed = sim_reg("claimed");
	fd = self_ctx(top - 100, 0, true);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	EXPECT_EQ(COUNTING | EVT_INT, sim_reg("sel0"));
	EXPECT_EQ(0x88bull, sim_reg("fixed_ctrl"));	/* PMIs forced */
	EXPECT_EQ(0x70000000full, sim_reg("gctrl"));
	EXPECT_EQ(APIC_DM_NMI, sim_reg("lvtpc"));
	EXPECT_EQ(top - 100, sim_reg("ctr0"));
	ASSERT_EQ(0, sim_tick(1000));
	/* The NMI came, its irq_work ran; LVTPC re-armed after Intel's mask */
	EXPECT_EQ(claimed + 1, sim_reg("claimed"));
	EXPECT_EQ(APIC_DM_NMI, sim_reg("lvtpc"));
	EXPECT_EQ(0, sim_reg("gstatus"));
	EXPECT_EQ(top + 900, pfm_read_pmd(fd, 0, 0));
	EXPECT_EQ(1000, pfm_read_pmd(fd, 0, FIXED0));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(0, sim_reg("gctrl"));
	/* Stopped: the simulated events do not count. */
	ASSERT_EQ(0, sim_tick(1000));
	EXPECT_EQ(top + 900, pfm_read_pmd(fd, 0, 0));
	close(fd);
}

/* A 64-bit overflow reloads the short reset value. */
TEST_F(sim, overflow_reset_value)
{
	pfarg_setinfo_t si;
	int fd;

	ASSERT_EQ(0, sim_load(""));
	fd = self_ctx(-500ull, 12345, false);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	ASSERT_EQ(0, sim_tick(1000));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(12345, pfm_read_pmd(fd, 0, 0));
	ASSERT_EQ(0, pfm_set_info(fd, 0, &si));
	EXPECT_EQ(1, si.set_ovfl_pmds[0]);
	close(fd);
}

/*
 * A notifying overflow through the NMI path: the message carries the
 * instruction pointer the NMI interrupted (the simulator raises it while
 * the tick is written, so a kernel address), the context masks (ticks
 * are not counted) and the restart reloads the long reset value.
 */
TEST_F(sim, overflow_notify_nmi_message)
{
	union pfarg_msg msg;
	pfarg_pmd_t pd;
	int fd;

	ASSERT_EQ(0, sim_load(""));
	fd = self_ctx(-500ull, 0, false);
	ASSERT_LE(0, fd);
	memset(&pd, 0, sizeof(pd));
	pd.reg_flags = PFM_REGFL_OVFL_NOTIFY;
	pd.reg_value = -500ull;
	pd.reg_long_reset = 777;
	ASSERT_EQ(0, pfm_write_pmds(fd, &pd, 1));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	ASSERT_EQ(0, sim_tick(1000));
	ASSERT_EQ(0, fcntl(fd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(sizeof(msg), read(fd, &msg, sizeof(msg)));
	TH_LOG("message: pmds %#llx ip %#llx",
	       (unsigned long long)msg.pfm_ovfl_msg.msg_ovfl_pmds[0],
	       (unsigned long long)msg.pfm_ovfl_msg.msg_ovfl_ip);
	EXPECT_EQ(PFM_MSG_OVFL, msg.type);
	EXPECT_EQ(1, msg.pfm_ovfl_msg.msg_ovfl_pmds[0]);
	EXPECT_EQ(0xffffull << 48, msg.pfm_ovfl_msg.msg_ovfl_ip & (0xffffull << 48));
	EXPECT_EQ(-1, pfm_start(fd, NULL));
	EXPECT_EQ(EBUSY, errno);
	ASSERT_EQ(0, sim_tick(1000));	/* masked: not counted */
	ASSERT_EQ(0, pfm_restart(fd));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(777, pfm_read_pmd(fd, 0, 0));
	close(fd);
}

/*
 * In a child as uid/gid 65534 (no CAP_PERFMON), with the tick file
 * opened before: the same overflow's message shows IP 0, not the kernel
 * address the NMI interrupted.  Exit status 0, or what went wrong.
 */
static int hidden_ip_child(void)
{
	union pfarg_msg msg;
	pfarg_pmd_t pd;
	int tick, fd;

	tick = open(SIM_DIR "tick", O_WRONLY);
	if (tick < 0 || pin_to_cpu(0) || become_nobody())
		return 100;
	/* User level only: counting in ring 0 needs the privilege too. */
	fd = pfm_new_ctx(0);
	if (fd < 0 || pfm_add_ctr(fd, 0, 0, COUNTING & ~EVT_OS, 0, 0))
		return 101;
	memset(&pd, 0, sizeof(pd));
	pd.reg_flags = PFM_REGFL_OVFL_NOTIFY;
	pd.reg_value = -500ull;
	if (pfm_write_pmds(fd, &pd, 1) || pfm_load(fd, gettid()) ||
	    pfm_start(fd, NULL))
		return 102;
	if (write(tick, "1000", 4) != 4)
		return 103;
	if (fcntl(fd, F_SETFL, O_NONBLOCK) ||
	    read(fd, &msg, sizeof(msg)) != sizeof(msg))
		return 104;
	return msg.pfm_ovfl_msg.msg_ovfl_ip ? 105 : 0;
}

TEST_F(sim, kernel_ip_hidden_without_cap)
{
	int status;

	ASSERT_EQ(0, sim_load(""));
	status = run_child(hidden_ip_child);
	TH_LOG("child: %d (0 ok; 104 no message; 105 kernel IP shown)",
	       status);
	EXPECT_EQ(0, status);
}

/* The errnos priv_child expects: 0 or EACCES. */
static int want_os, want_any;

/*
 * As uid 65534: user-level counting needs nothing; the OS bit of a
 * general counter or of a fixed counter's field counts ring 0 (paranoid
 * 1 or below, or CAP_PERFMON); AnyThread counts the other hyperthread
 * (paranoid 0 or below, as perf).  A refused entry refuses the whole
 * array, flagged on that entry only.  Exit status 0, or the step that
 * went wrong.
 */
static int priv_child(void)
{
	struct pfarg_pmc pc[2];
	int fd, ret;

	if (become_nobody())
		return 100;
	fd = pfm_new_ctx(0);
	if (fd < 0)
		return 101;
	if (!pmc_write_as(fd, 0, CORE_CYCLES | EVT_USR | EVT_EN, 0))
		return 102;
	if (!pmc_write_as(fd, 0, CORE_CYCLES | EVT_OS | EVT_EN, want_os))
		return 103;
	if (!pmc_write_as(fd, 1, COUNTING, want_os))
		return 104;
	if (!pmc_write_as(fd, FIXED_CTRL, 0x2, 0))		/* fixed 0: USR */
		return 105;
	if (!pmc_write_as(fd, FIXED_CTRL, 0x2 | 0x10, want_os))	/* fixed 1: OS */
		return 106;
	if (!pmc_write_as(fd, 2, CORE_CYCLES | EVT_USR | EVT_ANY | EVT_EN,
			  want_any))
		return 107;
	if (!pmc_write_as(fd, FIXED_CTRL, 0x2 | 0x4, want_any))	/* fixed 0: ANY */
		return 108;
	memset(pc, 0, sizeof(pc));
	pc[0].reg_num = 3;
	pc[0].reg_value = CORE_CYCLES | EVT_USR | EVT_EN;
	pc[1].reg_num = 3;
	pc[1].reg_value = CORE_CYCLES | EVT_OS | EVT_EN;
	ret = pfm_array(fd, PFM_WRITE_PMCS, pc, 2);
	if (ret != -want_os || (pc[0].reg_flags & PFM_REG_RETFL_MASK) ||
	    (pc[1].reg_flags & PFM_REG_RETFL_MASK) !=
	    (want_os ? PFM_REG_RETFL_NOPRIV : 0))
		return 109;
	close(fd);
	return 0;
}

TEST_F(sim, kernel_level_needs_privilege)
{
	static const struct { int level, os, any; } step[] = {
		{ 2, EACCES, EACCES }, { 1, 0, EACCES }, { 0, 0, 0 },
		{ -1, 0, 0 },
	};
	long long saved = knob_read("paranoid");
	unsigned int i;
	int fd, status;

	ASSERT_EQ(0, sim_load(""));
	ASSERT_EQ(2, saved);
	for (i = 0; i < ARRAY_SIZE(step); i++) {
		ASSERT_EQ(0, set_paranoid(step[i].level));
		want_os = step[i].os;
		want_any = step[i].any;
		status = run_child(priv_child);
		EXPECT_EQ(0, status) {
			TH_LOG("paranoid %d: child step %d failed",
			       step[i].level, status);
		}
	}
	/* CAP_PERFMON (root) bypasses the level. */
	EXPECT_EQ(0, set_paranoid(2));
	fd = pfm_new_ctx(0);
	EXPECT_LE(0, fd);
	EXPECT_TRUE(pmc_write_as(fd, 0, COUNTING, 0));
	EXPECT_TRUE(pmc_write_as(fd, 1, COUNTING | EVT_ANY, 0));
	EXPECT_TRUE(pmc_write_as(fd, FIXED_CTRL, 0x7, 0));
	close(fd);
	EXPECT_EQ(0, set_paranoid(saved));
}

/* Register @key in the text of the simulator's regs file; ~0 absent. */
static uint64_t regs_val(const char *text, const char *key)
{
	size_t len = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, len) && p[len] == '=')
			return strtoull(p + len + 1, NULL, 0);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return ~0ull;
}

/*
 * As uid 65534 on CPU 0, counting: PMD0 (and on Intel the fixed PMD16)
 * written, their event selects never written, so at their defaults.
 * The simulated registers, read from a file opened as root, must not
 * have OS (nor AnyThread) set.  Exit status 0, or the step.
 */
static int dfl_sim_child(void)
{
	static char text[4096];
	pfarg_pmd_t pd[2];
	int rfd, fd, n = 1;
	uint64_t sel0, fixed;
	ssize_t len;

	if (pin_to_cpu(0))
		return 100;
	rfd = open(SIM_DIR "regs", O_RDONLY);
	if (rfd < 0 || become_nobody())
		return 101;
	fd = pfm_new_ctx(0);
	if (fd < 0)
		return 102;
	pfm_pmd_prep(&pd[0], 0, 0, 0, 0, 0);
	if (pmu_is("intel_arch"))
		pfm_pmd_prep(&pd[n++], 0, FIXED0, 0, 0, 0);
	if (pfm_write_pmds(fd, pd, n) || pfm_load(fd, gettid()) ||
	    pfm_start(fd, NULL))
		return 103;
	len = read(rfd, text, sizeof(text) - 1);
	if (pfm_stop(fd) || len <= 0)
		return 104;
	text[len] = 0;
	sel0 = regs_val(text, "sel0");
	fixed = regs_val(text, "fixed_ctrl");
	if (sel0 == ~0ull || (sel0 & (EVT_OS | EVT_ANY)))
		return 105;
	/* Fixed counter 0's field: OS is bit 0, AnyThread bit 2. */
	if (n == 2 && (fixed == ~0ull || (fixed & 0x5)))
		return 106;
	close(fd);
	close(rfd);
	return 0;
}

/*
 * A PMC in use that the program never wrote counts at user level only
 * for an unprivileged context, as a written one must (the x86 defaults
 * are 0: OS clear, nothing counted; the core would replace a default
 * that counted ring 0).  Intel and AMD.
 */
TEST_F(sim, default_pmc_user_only)
{
	static const char *const params[] = { "", "vendor=amd" };
	unsigned int i;
	int status;

	ASSERT_EQ(2, knob_read("paranoid"));
	for (i = 0; i < ARRAY_SIZE(params); i++) {
		ASSERT_EQ(0, sim_load(params[i]));
		status = run_child(dfl_sim_child);
		EXPECT_EQ(0, status) {
			TH_LOG("sim \"%s\": child step %d failed", params[i],
			       status);
		}
	}
}

/* No full-width writes: 31-bit counters, biased, rebiased in the NMI. */
TEST_F(sim, intel_legacy_writes)
{
	uint64_t bias = 0xffff80000000ull;
	int fd;

	ASSERT_EQ(0, sim_load("fw_write=0"));
	EXPECT_EQ(31, counter_width());
	fd = self_ctx(100, 0, false);
	ASSERT_LE(0, fd);
	EXPECT_EQ(bias | 100, sim_reg("ctr0"));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	ASSERT_EQ(0, sim_tick(1ull << 31));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ((1ull << 31) + 100, pfm_read_pmd(fd, 0, 0));
	EXPECT_EQ(bias | 100, sim_reg("ctr0"));
	close(fd);
}

/* v1: no global registers, counting gated by each EN bit. */
TEST_F(sim, intel_v1_gated_per_counter)
{
	uint64_t top = 1ull << 31;
	int fd;

	ASSERT_EQ(0, sim_load("cpuid_a=0x07280201,0,0,0 fw_write=0"));
	EXPECT_STREQ("", pmu_desc_str("pmc16/name"));
	EXPECT_EQ(31, counter_width());
	fd = self_ctx(top - 10, 0, false);
	ASSERT_LE(0, fd);
	/* PMC1 programmed but not enabled: never taken for an overflow */
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 1, CORE_CYCLES, 0, 0));
	EXPECT_EQ(CORE_CYCLES | EVT_USR | EVT_OS | EVT_INT, sim_reg("sel0"));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	EXPECT_EQ(COUNTING | EVT_INT, sim_reg("sel0"));
	ASSERT_EQ(0, sim_tick(20));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(CORE_CYCLES | EVT_USR | EVT_OS | EVT_INT, sim_reg("sel0"));
	EXPECT_EQ(top + 10, pfm_read_pmd(fd, 0, 0));
	EXPECT_EQ(0, pfm_read_pmd(fd, 0, 1));
	close(fd);
}

/*
 * A PMC written while the set counts goes to the PMU by itself: the
 * counter it enables counts from then on, the others keep counting, and
 * no counter is written (a save and reload of the set writes each one).
 * A try in which the thread was switched out, which does reload the
 * set, is made again: a write that always reloads fails all five.
 */
TEST_F(sim, pmc_write_in_place)
{
	uint64_t before, writes = ~0ull;
	int fd, i;

	fd = self_ctx(0, 0, false);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_add_ctr(fd, 0, 1, 0, 0, 0));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	ASSERT_EQ(0, sim_tick(20));
	for (i = 0; i < 5 && writes; i++) {
		before = sim_reg("ctr_writes");
		ASSERT_EQ(0, pfm_write_pmc(fd, 0, 1, COUNTING));
		writes = sim_reg("ctr_writes") - before;
	}
	EXPECT_EQ(0, writes);
	EXPECT_EQ(COUNTING | EVT_INT, sim_reg("sel1"));
	ASSERT_EQ(0, sim_tick(10));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(30, pfm_read_pmd(fd, 0, 0));
	EXPECT_EQ(10, pfm_read_pmd(fd, 0, 1));
	close(fd);
}

/* AMD core counters, no PerfMonV2: 47 bits seen, top bit for overflow. */
TEST_F(sim, amd_core_counters)
{
	uint64_t top = 1ull << 47;
	int fd;

	ASSERT_EQ(0, sim_load("vendor=amd"));
	ASSERT_TRUE(pmu_is("amd64"));
	EXPECT_EQ(47, counter_width());
	EXPECT_STREQ("PERF_CTL5", pmu_desc_str("pmc5/name"));
	EXPECT_STREQ("0xc001020a", pmu_desc_str("pmc5/addr"));
	EXPECT_STREQ("PERF_CTR5", pmu_desc_str("pmd5/name"));
	EXPECT_STREQ("0xc001020b", pmu_desc_str("pmd5/addr"));
	EXPECT_STREQ("", pmu_desc_str("pmc6/name"));
	fd = self_ctx(top - 10, 0, false);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	EXPECT_EQ(COUNTING | EVT_INT, sim_reg("sel0"));
	ASSERT_EQ(0, sim_tick(20));
	EXPECT_EQ(top + 10, pfm_read_pmd(fd, 0, 0));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ((COUNTING & ~EVT_EN) | EVT_INT, sim_reg("sel0"));
	close(fd);
}

TEST_F(sim, amd_legacy_counters)
{
	ASSERT_EQ(0, sim_load("vendor=amd amd_core=0"));
	EXPECT_STREQ("PERFEVTSEL3", pmu_desc_str("pmc3/name"));
	EXPECT_STREQ("0xc0010003", pmu_desc_str("pmc3/addr"));
	EXPECT_STREQ("PERFCTR3", pmu_desc_str("pmd3/name"));
	EXPECT_STREQ("0xc0010007", pmu_desc_str("pmd3/addr"));
	EXPECT_STREQ("", pmu_desc_str("pmc4/name"));
	/* GuestOnly/HostOnly and the high event bits; bit 21 reserved */
	EXPECT_STREQ("0xfffffcf000280000", pmu_desc_str("pmc0/rsvd_msk"));
}

TEST_F(sim, amd_perfmon_v2)
{
	uint64_t top = 1ull << 48;
	int fd;

	ASSERT_EQ(0, sim_load("vendor=amd amd_v2_ctrs=5"));
	EXPECT_EQ(48, counter_width());
	EXPECT_STREQ("", pmu_desc_str("pmc5/name"));
	fd = self_ctx(top - 10, 0, false);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	EXPECT_EQ(0x1f, sim_reg("gctrl"));
	ASSERT_EQ(0, sim_tick(20));
	EXPECT_EQ(0, sim_reg("gstatus"));
	EXPECT_EQ(top + 10, pfm_read_pmd(fd, 0, 0));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(0, sim_reg("gctrl"));
	close(fd);
}

/*
 * A self-monitoring context on CPU 0: PMD0 at -100 and PMD1 at @pmd1,
 * counting, both notifying with long reset values 777 and 888 when
 * @notify.
 */
static int two_ctr_ctx(uint64_t pmd1, bool notify)
{
	pfarg_pmd_t pd[2];
	int fd, i;

	if (pin_to_cpu(0))
		return -1;
	fd = pfm_new_ctx(0);
	if (fd < 0 || pfm_add_ctr(fd, 0, 0, COUNTING, 0, 0) ||
	    pfm_add_ctr(fd, 0, 1, COUNTING, 0, 0))
		return -1;
	memset(pd, 0, sizeof(pd));
	for (i = 0; i < 2; i++) {
		pd[i].reg_num = i;
		pd[i].reg_flags = notify ? PFM_REGFL_OVFL_NOTIFY : 0;
		pd[i].reg_long_reset = 777 + 111 * i;
	}
	pd[0].reg_value = -100ull;
	pd[1].reg_value = pmd1;
	if (pfm_write_pmds(fd, pd, 2) || pfm_load(fd, gettid()) ||
	    fcntl(fd, F_SETFL, O_NONBLOCK))
		return -1;
	return fd;
}

/* Wrap PMD0 with a tick; one overflow message expected. */
static int tick_and_read(int fd, union pfarg_msg *msg)
{
	if (pfm_start(fd, NULL) || sim_tick(100))
		return -1;
	return read(fd, msg, sizeof(*msg)) == sizeof(*msg) ? 0 : -1;
}

/*
 * A counter that wraps while the overflow handler runs is not lost.
 * The simulator stands in for hardware that QEMU's TCG cannot emulate:
 * as the handler acknowledges PMD0's wrap (Intel and AMD PerfMonV2: the
 * write to the status clear MSR; AMD without a global status: the
 * write that sets the bias of the wrapped counter again), PMD1 wraps
 * too and raises its interrupt, which Intel's masked LVTPC drops and
 * AMD delivers as an NMI the CPU holds until the handler returns.
 *
 * One NMI reports both: one message with both PMDs, carrying the
 * instruction pointer the NMI interrupted (the same as a lone wrap's:
 * the simulator's tick), no second message, no second NMI claimed, no
 * "unknown reason" NMI (the held one is swallowed: the handler returns
 * two), and after the restart both PMDs hold their long reset values.
 */
static void check_wrap_in_handler(struct __test_metadata *_metadata,
				  const char *params)
{
	const char *unknown = "NMI received for unknown reason";
	union pfarg_msg msg;
	uint64_t claimed, ip;
	int fd, before;

	ASSERT_EQ(0, sim_load(params));
	/* A lone wrap of PMD0: the reference instruction pointer. */
	fd = two_ctr_ctx(0, true);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, tick_and_read(fd, &msg));
	EXPECT_EQ(1, msg.pfm_ovfl_msg.msg_ovfl_pmds[0]);
	ip = msg.pfm_ovfl_msg.msg_ovfl_ip;
	close(fd);

	fd = two_ctr_ctx(-1000ull, true);
	ASSERT_LE(0, fd);
	claimed = sim_reg("claimed");
	before = klog_count(unknown);
	ASSERT_EQ(0, sim_write("inject", "2"));
	ASSERT_EQ(0, tick_and_read(fd, &msg));
	TH_LOG("%s: message pmds %#llx ip %#llx (lone wrap: ip %#llx)",
	       params, (unsigned long long)msg.pfm_ovfl_msg.msg_ovfl_pmds[0],
	       (unsigned long long)msg.pfm_ovfl_msg.msg_ovfl_ip,
	       (unsigned long long)ip);
	EXPECT_EQ(0, sim_reg("inject_left"));
	EXPECT_EQ(PFM_MSG_OVFL, msg.type);
	EXPECT_EQ(3, msg.pfm_ovfl_msg.msg_ovfl_pmds[0]);
	EXPECT_EQ(ip, msg.pfm_ovfl_msg.msg_ovfl_ip);
	EXPECT_EQ(-1, read(fd, &msg, sizeof(msg)));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(claimed + 1, sim_reg("claimed"));
	EXPECT_EQ(before, klog_count(unknown));
	EXPECT_EQ(APIC_DM_NMI, sim_reg("lvtpc"));
	ASSERT_EQ(0, pfm_restart(fd));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(777, pfm_read_pmd(fd, 0, 0));
	EXPECT_EQ(888, pfm_read_pmd(fd, 0, 1));
	close(fd);
}

TEST_F(sim, intel_wrap_in_handler)
{
	check_wrap_in_handler(_metadata, "");
}

/* Intel without full-width writes: biased 31-bit counters. */
TEST_F(sim, intel_legacy_wrap_in_handler)
{
	check_wrap_in_handler(_metadata, "fw_write=0");
}

/* AMD core counters: no global status, wraps found by their top bit. */
TEST_F(sim, amd_wrap_in_handler)
{
	check_wrap_in_handler(_metadata, "vendor=amd");
}

TEST_F(sim, amd_v2_wrap_in_handler)
{
	check_wrap_in_handler(_metadata, "vendor=amd amd_v2_ctrs=5");
}

/*
 * A status that never clears (here: PMD1 wraps again at each of 1000
 * acknowledgments) does not keep the CPU in the handler: it gives up
 * after 100 reads with one log line, and the NMIs that follow take the
 * rest.  The context still counts afterwards.
 */
TEST_F(sim, intel_handler_loop_bounded)
{
	const char *stuck = "overflow interrupt loop stuck";
	uint64_t claimed;
	int fd, before = klog_count(stuck);

	ASSERT_EQ(0, sim_load(""));
	fd = two_ctr_ctx(-1000ull, false);
	ASSERT_LE(0, fd);
	claimed = sim_reg("claimed");
	ASSERT_EQ(0, sim_write("inject", "2 1000"));
	ASSERT_EQ(0, pfm_start(fd, NULL));
	ASSERT_EQ(0, sim_tick(100));
	TH_LOG("%llu NMIs claimed for 1000 wraps in the handler",
	       (unsigned long long)(sim_reg("claimed") - claimed));
	EXPECT_EQ(0, sim_reg("inject_left"));
	EXPECT_EQ(before + 1, klog_count(stuck));
	EXPECT_LT(claimed + 1, sim_reg("claimed"));
	EXPECT_EQ(APIC_DM_NMI, sim_reg("lvtpc"));
	ASSERT_EQ(0, sim_tick(10));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(10, pfm_read_pmd(fd, 0, 0));
	close(fd);
}

/*
 * The x86 engine drives one module's description at a time: pfm_x86,
 * loaded beside the simulator, is refused before it probes the CPU,
 * with one line naming the module to unload, and the simulator's
 * description goes on counting.
 */
TEST_F(sim, engine_serves_one_module)
{
	const char *line = "the x86 engine already drives";
	int fd, before = klog_count(line);

	ASSERT_EQ(0, sim_load(""));
	ASSERT_EQ(0, access(X86_KO, R_OK));
	EXPECT_EQ(-EBUSY, module_load(X86_KO, ""));
	EXPECT_EQ(before + 1, klog_count(line));
	EXPECT_NE(0, access("/sys/module/pfm_x86", F_OK));
	fd = self_ctx(0, 0, false);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	ASSERT_EQ(0, sim_tick(10));
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(10, pfm_read_pmd(fd, 0, 0));
	close(fd);
}

/* An NMI none of our counters caused is left to the kernel. */
TEST_F(sim, foreign_nmi_not_claimed)
{
	const char *unknown = "NMI received for unknown reason";
	uint64_t claimed;
	int before, fd;

	ASSERT_EQ(0, sim_load(""));
	fd = self_ctx(0, 0, false);
	ASSERT_LE(0, fd);
	claimed = sim_reg("claimed");
	before = klog_count(unknown);
	/* The rig fails a run on an unknown NMI but where it is announced. */
	printf("RIG-EXPECT unknown NMI\n");
	fflush(stdout);
	/* CondChgd (bit 63), and a fixed counter this CPU lacks (35) */
	ASSERT_EQ(0, sim_write("nmi", "8000000800000000"));
	EXPECT_EQ(claimed, sim_reg("claimed"));
	EXPECT_EQ(before + 1, klog_count(unknown));
	close(fd);
}

/*
 * Introspection never takes the PMU: with the description loaded and
 * only PFM_GET_PMU_INFO asked, perf's counter allocator keeps every
 * counter (it held them all from the module's load before, failing
 * perf's hardware events with EBUSY machine-wide).  A loaded context
 * takes them; its unload gives them back.
 */
TEST_F(sim, counters_taken_by_sessions_only)
{
	struct pfarg_pmu_info info;
	int fd;

	ASSERT_EQ(0, sim_load(""));
	memset(&info, 0, sizeof(info));
	ASSERT_EQ(0, pfm_get_pmu_desc(&info));
	EXPECT_EQ(0, sim_reg("owned"));
	fd = self_ctx(0, 0, false);
	ASSERT_LE(0, fd);
	EXPECT_NE(0, sim_reg("owned"));
	ASSERT_EQ(0, pfm_unload_context(fd));
	EXPECT_EQ(0, sim_reg("owned"));
	close(fd);
}

/* perf holds a counter: -EBUSY, the fix logged, nothing left reserved. */
TEST_F(sim, perf_owns_counter)
{
	const char *fix =
		"the NMI watchdog): run 'sysctl kernel.nmi_watchdog=0' and end";
	int busy = klog_count(fix);

	ASSERT_EQ(0, sim_load(""));
	EXPECT_EQ(-EBUSY, sim_load("perf_holds=2"));
	EXPECT_EQ(busy + 1, klog_count(fix));
	EXPECT_LE(1, klog_count("counter 2 is in use by perf"));
	EXPECT_EQ(0, klog_count("leaked counter reservations"));
}

TEST_F(sim, no_pmu_refused)
{
	ASSERT_EQ(0, sim_load(""));
	EXPECT_EQ(-ENODEV, sim_load("no_pmu=1"));
	EXPECT_LE(1, klog_count("does not keep a written counter value"));
	EXPECT_EQ(-ENODEV, sim_load("cpuid_a=0,0,0,0"));
	EXPECT_LE(1, klog_count("no architectural perfmon"));
	EXPECT_EQ(0, klog_count("leaked counter reservations"));
}

/* Driver setting user_rdpmc: CR4.PCE while the context is live. */
TEST_F(sim, user_rdpmc_setting)
{
	struct pfarg_drv_cfg c;
	int fd;

	ASSERT_EQ(0, sim_load(""));
	memset(&c, 0, sizeof(c));
	c.cfg_value = 1;
	fd = self_ctx(0, 0, false);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, sim_reg("pce"));
	ASSERT_EQ(0, pfm_set_drv_config(fd, &c, 1));
	EXPECT_EQ(1, sim_reg("pce"));
	ASSERT_EQ(0, pfm_unload_context(fd));
	EXPECT_EQ(0, sim_reg("pce"));
	close(fd);

	fd = pfm_new_ctx(PFM_FL_SYSTEM_WIDE);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, pfm_set_drv_config(fd, &c, 1));
	EXPECT_EQ(EINVAL, errno);
	c.cfg_value = 2;
	close(fd);
	fd = pfm_new_ctx(0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, pfm_set_drv_config(fd, &c, 1));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

/*
 * The control page with user_rdpmc: the index of a general-purpose
 * counter is rdpmc's number + 1, a fixed counter's has bit 30; none
 * without the setting (PFM_UPMD_STALE) or once stopped.  rdpmc itself
 * cannot run here (TCG does not emulate it: #UD), so the simulated
 * register stands in for it: offset + ((register - base) & mask) must
 * be what PFM_READ_PMDS says, also across a wrap of the counter's low
 * bits (a fake of the instruction, not of the arithmetic).
 */
static void check_user_page(struct __test_metadata *_metadata,
			    const char *vendor, uint32_t gp0)
{
	struct pfarg_drv_cfg c;
	struct pfm_user_page *pg;
	struct pfm_user_pmd *up;
	uint64_t mask, v;
	int fd;

	ASSERT_EQ(0, sim_load(vendor));
	fd = self_ctx((1ull << counter_width()) - 10, 0, !strcmp(vendor, ""));
	ASSERT_LE(0, fd);
	pg = pfm_uread_map(fd);
	ASSERT_TRUE(!!pg);
	ASSERT_EQ(0, pfm_start(fd, NULL));
	EXPECT_EQ(0, pg->pmds[0].index);
	EXPECT_EQ(PFM_UPMD_USED | PFM_UPMD_STALE, pg->pmds[0].flags);
	memset(&c, 0, sizeof(c));
	c.cfg_value = 1;
	ASSERT_EQ(0, pfm_set_drv_config(fd, &c, 1));
	up = &pg->pmds[0];
	EXPECT_EQ(gp0 + 1, up->index);
	EXPECT_EQ(PFM_UPMD_USED, up->flags);
	if (!strcmp(vendor, ""))
		EXPECT_EQ((1u << 30) + 1, pg->pmds[FIXED0].index);
	mask = pg->width >= 64 ? ~0ull : (1ull << pg->width) - 1;
	ASSERT_EQ(0, sim_tick(20));	/* across the wrap of the low bits */
	v = up->offset + ((sim_reg("ctr0") - up->base) & mask);
	TH_LOG("%s: width %u, offset %#llx, base %#llx, ctr0 %#llx: %#llx",
	       vendor[0] ? vendor : "intel", pg->width,
	       (unsigned long long)up->offset, (unsigned long long)up->base,
	       (unsigned long long)sim_reg("ctr0"), (unsigned long long)v);
	EXPECT_EQ(pfm_read_pmd(fd, 0, 0), v);
	ASSERT_EQ(0, pfm_stop(fd));
	EXPECT_EQ(0, pg->pmds[0].index);
	EXPECT_EQ(pfm_read_pmd(fd, 0, 0), pg->pmds[0].offset);
	pfm_uread_unmap(pg);
	close(fd);
}

TEST_F(sim, user_page_rdpmc_numbers)
{
	check_user_page(_metadata, "", 0);
	check_user_page(_metadata, "vendor=amd", 0);
	check_user_page(_metadata, "vendor=amd amd_core=0", 0);
	check_user_page(_metadata, "fw_write=0", 0);
}

TEST_HARNESS_MAIN
