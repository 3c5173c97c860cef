// SPDX-License-Identifier: GPL-2.0
/*
 * Who may watch which thread (Documentation/security.rst): a monitored
 * thread that execs an image its owner may not read stops being
 * monitored before the image runs, unless the monitor had
 * CAP_SYS_PTRACE; and another process's thread is monitored only by
 * its tracer, so that Yama and the other security modules decide, as
 * they decide for ptrace.
 *
 * The privileged image is this program itself: the test copies it to a
 * setuid-root file on the guest's /tmp, and run with EXEC_ARG it makes
 * EXEC_CALLS raw getppid() calls (counted exactly by the software PMU's
 * system-call event) and exits with whether it ran as root.  The
 * monitor and the thread it watches are uid 65534 unless said.
 */
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <perfmon/perfmon_dfl_smpl.h>

#include "pfm_test.h"
#include "kselftest_harness.h"

#define EXEC_ARG	"--pfm-exec-helper"
#define EXEC_CALLS	20000
#define EXEC_PERIOD	100		/* sampling period, system calls */
#define EXEC_BUF	16384		/* "default" buffer: 341 entries */
#define ST_ROOT		10		/* the helper's exit: ran as euid 0 */
#define ST_USER		11		/* ... as its caller */
#define SUID_IMAGE	"/tmp/pfm_access_suid"
#define PLAIN_IMAGE	"/tmp/pfm_access_plain"

/* The helper image: runs before main() when exec'd with EXEC_ARG. */
static pfm_attr(constructor) void exec_helper(int argc, char **argv)
{
	if (argc != 2 || strcmp(argv[1], EXEC_ARG))
		return;
	raw_getppid(EXEC_CALLS);
	_exit(geteuid() == 0 ? ST_ROOT : ST_USER);
}

/*
 * Become uid 65534 and stay dumpable, as a program that user started
 * would be (changing uid made the process non-dumpable).  0 or -errno.
 */
static int become_dumpable_nobody(void)
{
	return become_nobody() || prctl(PR_SET_DUMPABLE, 1) ? -errno : 0;
}

/* What a monitor saw of a thread that exec'd. */
struct exec_seen {
	uint64_t count;		/* system calls counted (PMD1) */
	uint64_t samples;	/* "default" entries, when sampling */
	int status;		/* the helper's exit status */
	int end;		/* PFM_MSG_END messages read */
	int err;		/* the monitor's first failure, 0 if none */
};

/* PFM_MSG_END messages readable within about @ms. */
static int end_msgs(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	union pfarg_msg msg;
	int n = 0;

	while (poll(&p, 1, ms) == 1 && read(fd, &msg, sizeof(msg)) > 0) {
		if (msg.type == PFM_MSG_END)
			n++;
		ms = 10;
	}
	return n;
}

/*
 * PMC0/PMD0 sample every EXEC_PERIOD system calls (without @sample they
 * just count, never wrapping), PMC1/PMD1 count them.  0 or -errno.
 */
static int exec_ctrs(int fd, bool sample)
{
	uint64_t start = sample ? -EXEC_PERIOD : 0;
	pfarg_pmd_t pd[2];

	if (pfm_write_pmc(fd, 0, 0, SOFT_EV_SYSCALLS) ||
	    pfm_write_pmc(fd, 0, 1, SOFT_EV_SYSCALLS))
		return -EINVAL;
	pfm_pmd_prep(&pd[0], 0, 0, sample ? PFM_REGFL_OVFL_NOTIFY : 0, start,
		     start);
	pfm_pmd_prep(&pd[1], 0, 1, 0, 0, 0);
	return pfm_write_pmds(fd, pd, 2) ? -errno : 0;
}

/* The watched thread: uid 65534, loads itself when @self, execs @image. */
static void exec_target(int fd, int go, bool self, const char *image)
{
	char c;

	if (become_dumpable_nobody())
		_exit(20);
	if (self && (pfm_load(fd, gettid()) || pfm_start(fd, NULL)))
		_exit(21);
	if (read(go, &c, 1) != 1)
		_exit(22);
	execl(image, image, EXEC_ARG, (char *)NULL);
	_exit(23);
}

/*
 * The monitor (uid 65534 unless @root): a context counting (and with
 * @sample sampling) the system calls of a child, which it loads on the
 * child (or the child loads on itself, @self) before the child execs
 * @image.
 */
static void exec_watch(struct exec_seen *s, const char *image, bool self,
		       bool sample, bool root)
{
	struct pfm_dfl_smpl_arg arg = { .buf_size = EXEC_BUF };
	struct pfm_dfl_smpl_hdr *hdr = NULL;
	int fd, go[2];
	pid_t pid;

	if (!root && become_dumpable_nobody()) {
		s->err = 1;
		return;
	}
	fd = sample ? pfm_fmt_ctx(0, PFM_DFL_SMPL_NAME, &arg, sizeof(arg)) :
		      pfm_new_ctx(0);
	if (fd < 0 || exec_ctrs(fd, sample) || pipe(go)) {
		s->err = 2;
		return;
	}
	if (sample) {
		hdr = pfm_map_buf(fd, page_align(EXEC_BUF), PROT_READ);
		if (hdr == MAP_FAILED) {
			s->err = 3;
			return;
		}
	}
	pid = fork();
	if (pid == 0)
		exec_target(fd, go[0], self, image);
	if (pid < 0 ||
	    (!self && (pfm_load_traced(fd, pid) || pfm_start(fd, NULL))))
		s->err = 4;
	if (write(go[1], "g", 1) != 1 || waitpid(pid, &s->status, 0) != pid)
		s->err = 5;
	s->status = WIFEXITED(s->status) ? WEXITSTATUS(s->status) : -1;
	s->end = end_msgs(fd, 2000);
	s->count = pfm_read_pmd(fd, 0, 1);
	s->samples = hdr ? hdr->hdr_count : 0;
}

/* exec_watch() in a process of its own; its findings in @s. */
static void exec_run(struct exec_seen *s, const char *image, bool self,
		     bool sample, bool root)
{
	struct exec_seen *shared;
	pid_t pid;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset(s, 0, sizeof(*s));
	if (shared == MAP_FAILED) {
		s->err = 6;
		return;
	}
	memset(shared, 0, sizeof(*shared));
	pid = fork();
	if (pid == 0) {
		exec_watch(shared, image, self, sample, root);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		shared->err = 7;
	*s = *shared;
	munmap(shared, sizeof(*shared));
}

FIXTURE(exec) {
	bool ready;
};

FIXTURE_VARIANT(exec) {
	bool self;	/* the thread loads the context on itself */
	bool sample;	/* and a "default" buffer samples it */
};

FIXTURE_VARIANT_ADD(exec, attached) { .self = false, .sample = false };
FIXTURE_VARIANT_ADD(exec, attached_sampled) { .self = false, .sample = true };
FIXTURE_VARIANT_ADD(exec, self) { .self = true, .sample = false };
FIXTURE_VARIANT_ADD(exec, self_sampled) { .self = true, .sample = true };

FIXTURE_SETUP(exec)
{
	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	ASSERT_EQ(0, geteuid()) TH_LOG("needs root, to make a setuid image");
	ASSERT_EQ(0, copy_self(SUID_IMAGE, 04755));
	ASSERT_EQ(0, copy_self(PLAIN_IMAGE, 0755));
	self->ready = true;
}

FIXTURE_TEARDOWN(exec)
{
	unlink(SUID_IMAGE);
	unlink(PLAIN_IMAGE);
}

static void exec_log(struct __test_metadata *_metadata, const char *what,
		     const struct exec_seen *s)
{
	TH_LOG("%s: %llu system calls counted, %llu samples, %d END, exit %d, error %d",
	       what, (unsigned long long)s->count,
	       (unsigned long long)s->samples, s->end, s->status, s->err);
}

/*
 * A setuid-root image: counted up to the exec only (its entry and the
 * few calls before it), never its EXEC_CALLS; PFM_MSG_END once.
 * Before the fix (ABI 2.94) every one of them was counted.
 */
TEST_F(exec, setuid_image_ends_monitoring)
{
	struct exec_seen s;

	if (!self->ready)
		return;		/* skipped */

	exec_run(&s, SUID_IMAGE, variant->self, variant->sample, false);
	exec_log(_metadata, "setuid image, uid 65534 monitor", &s);
	ASSERT_EQ(0, s.err);
	EXPECT_EQ(ST_ROOT, s.status) TH_LOG("the image did not run setuid");
	EXPECT_GT(100, s.count);
	EXPECT_EQ(0, s.samples);
	EXPECT_EQ(1, s.end);
}

/* The same program without the setuid bit: every call counted. */
TEST_F(exec, plain_image_stays_monitored)
{
	struct exec_seen s;

	if (!self->ready)
		return;		/* skipped */

	exec_run(&s, PLAIN_IMAGE, variant->self, variant->sample, false);
	exec_log(_metadata, "plain image, uid 65534 monitor", &s);
	ASSERT_EQ(0, s.err);
	EXPECT_EQ(ST_USER, s.status);
	EXPECT_LE(EXEC_CALLS, s.count);
	if (variant->sample)
		EXPECT_LE(EXEC_CALLS / EXEC_PERIOD, s.samples);
	EXPECT_EQ(1, s.end);
}

/* A monitor created with CAP_SYS_PTRACE follows the setuid image. */
TEST_F(exec, setuid_image_followed_with_cap_sys_ptrace)
{
	struct exec_seen s;

	if (!self->ready)
		return;		/* skipped */

	exec_run(&s, SUID_IMAGE, variant->self, variant->sample, true);
	exec_log(_metadata, "setuid image, root monitor", &s);
	ASSERT_EQ(0, s.err);
	EXPECT_EQ(ST_ROOT, s.status);
	EXPECT_LE(EXEC_CALLS, s.count);
	EXPECT_EQ(1, s.end);
}

/*
 * Attach and Yama: at each ptrace_scope, a monitor loads a context on
 * its child (a descendant), on a process of the same user that is not
 * its descendant, and on one that granted it PR_SET_PTRACER.  Without
 * tracing the target the load is refused (EPERM) at every scope; after
 * PTRACE_SEIZE, whose answer is Yama's, it succeeds exactly when the
 * seize did.  Before the fix (ABI 2.94) a uid-65534 load onto the
 * same-uid non-descendant succeeded at scopes 1 and 2, where ptrace
 * refused.
 */
#define YAMA		"/proc/sys/kernel/yama/ptrace_scope"
#define T_CHILD		0
#define T_OTHER		1
#define T_GRANTED	2
#define NR_TARGETS	3

static const char * const target_name[NR_TARGETS] = {
	"child", "non-descendant", "non-descendant with PR_SET_PTRACER",
};

/* What the monitor got for each target. */
struct attach_seen {
	int untraced[NR_TARGETS];	/* load without tracing: 0 or -errno */
	int seize[NR_TARGETS];		/* PTRACE_SEIZE: 0 or -errno */
	int traced[NR_TARGETS];		/* load after it: 0 or -errno */
	int err;
};

static int yama_scope(void)
{
	return (int)read_num_or(YAMA, -1);
}

static int yama_set(int scope)
{
	char v[2] = { (char)('0' + scope), 0 };
	int fd = open(YAMA, O_WRONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, v, 1) == 1 ? 0 : -errno;
	close(fd);
	return ret;
}

/* A user process that waits to be killed; with @tracer, it grants it. */
static pid_t waiter(bool user, pid_t tracer)
{
	pid_t pid = fork();

	if (pid == 0) {
		if ((user && become_dumpable_nobody()) ||
		    (tracer && prctl(PR_SET_PTRACER, tracer, 0, 0, 0)))
			_exit(100);
		for (;;)
			pause();
	}
	return pid;
}

/* A load of a new context on @tid (then untraced if @traced): 0 or -errno. */
static int try_load(pid_t tid, bool traced)
{
	int fd = pfm_counting_ctx(0, SOFT_EV_TASK_CLOCK, 0), ret;

	if (fd < 0)
		return fd;
	ret = pfm_load(fd, tid);
	if (traced)
		pfm_untrace(tid);
	close(fd);
	return ret;
}

/* The monitor: each target, untraced, then seized. */
static void attach_watch(struct attach_seen *s, const pid_t *t)
{
	int i;

	for (i = 0; i < NR_TARGETS; i++) {
		s->untraced[i] = try_load(t[i], false);
		s->seize[i] = ptrace(PTRACE_SEIZE, t[i], 0, 0) ? -errno : 0;
		s->traced[i] = try_load(t[i], !s->seize[i]);
	}
}

/*
 * At @scope, a monitor (uid 65534, or root with @root) and its three
 * targets, all uid 65534.  The findings in @s.
 */
static void attach_run(struct attach_seen *s, int scope, bool root)
{
	struct attach_seen *shared;
	pid_t mon, t[NR_TARGETS];
	int go[2], i;

	memset(s, 0, sizeof(*s));
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED || pipe(go) || yama_set(scope)) {
		s->err = 1;
		return;
	}
	memset(shared, 0, sizeof(*shared));
	mon = fork();
	if (mon == 0) {
		if (!root && become_dumpable_nobody())
			_exit(1);
		t[T_CHILD] = waiter(false, 0);
		if (read(go[0], &t[T_OTHER], 2 * sizeof(pid_t)) !=
		    2 * sizeof(pid_t))
			_exit(2);
		attach_watch(shared, t);
		kill(t[T_CHILD], SIGKILL);
		waitpid(t[T_CHILD], NULL, 0);
		_exit(0);
	}
	t[T_OTHER] = waiter(true, 0);
	t[T_GRANTED] = waiter(true, mon);
	usleep(20000);		/* the grant made */
	if (write(go[1], &t[T_OTHER], 2 * sizeof(pid_t)) != 2 * sizeof(pid_t))
		shared->err = 2;
	if (waitpid(mon, &i, 0) != mon || !WIFEXITED(i) || WEXITSTATUS(i))
		shared->err = 3;
	for (i = T_OTHER; i < NR_TARGETS; i++) {
		kill(t[i], SIGKILL);
		waitpid(t[i], NULL, 0);
	}
	close(go[0]);
	close(go[1]);
	*s = *shared;
	munmap(shared, sizeof(*shared));
}

FIXTURE(yama) {
	int scope0;
	bool ready;
};

FIXTURE_VARIANT(yama) {
	int scope;
	bool root;
	bool allowed[NR_TARGETS];	/* what ptrace allows at the scope */
};

FIXTURE_VARIANT_ADD(yama, scope0) {
	.scope = 0, .allowed = { true, true, true } };
FIXTURE_VARIANT_ADD(yama, scope1) {
	.scope = 1, .allowed = { true, false, true } };
FIXTURE_VARIANT_ADD(yama, scope2) {
	.scope = 2, .allowed = { false, false, false } };
FIXTURE_VARIANT_ADD(yama, scope2_root) {
	.scope = 2, .root = true, .allowed = { true, true, true } };
/* Last: scope 3 cannot be lowered again until the guest reboots. */
FIXTURE_VARIANT_ADD(yama, scope3) {
	.scope = 3, .allowed = { false, false, false } };
FIXTURE_VARIANT_ADD(yama, scope3_root) {
	.scope = 3, .root = true, .allowed = { false, false, false } };

FIXTURE_SETUP(yama)
{
	const char *s3 = getenv("PFM_YAMA_SCOPE3");

	self->scope0 = yama_scope();
	if (!pmu_is("soft"))
		SKIP(return, "not the software PMU");
	if (self->scope0 < 0)
		SKIP(return, "no Yama in this kernel");
	ASSERT_EQ(0, geteuid());
	if (variant->scope == 3 && !(s3 && *s3 == '1'))
		SKIP(return, "scope 3 is for good: PFM_YAMA_SCOPE3=1 runs it (a guest of its own)");
	if (self->scope0 > variant->scope)
		SKIP(return, "scope %d cannot be lowered", self->scope0);
	self->ready = true;
}

FIXTURE_TEARDOWN(yama)
{
	if (self->scope0 >= 0 && self->scope0 < 3)
		yama_set(self->scope0);
}

TEST_F(yama, load_follows_ptrace)
{
	struct attach_seen s;
	int i;

	if (!self->ready)
		return;		/* skipped */
	attach_run(&s, variant->scope, variant->root);
	ASSERT_EQ(0, s.err);
	for (i = 0; i < NR_TARGETS; i++) {
		TH_LOG("scope %d, %s monitor, %s: untraced load %d, seize %d, traced load %d",
		       variant->scope, variant->root ? "root" : "uid 65534",
		       target_name[i], s.untraced[i], s.seize[i],
		       s.traced[i]);
		EXPECT_EQ(-EPERM, s.untraced[i]);
		EXPECT_EQ(variant->allowed[i] ? 0 : -EPERM, s.seize[i]);
		EXPECT_EQ(variant->allowed[i] ? 0 : -EPERM, s.traced[i]);
	}
}

TEST_HARNESS_MAIN
