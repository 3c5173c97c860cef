// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/perfmon as a device: it exists once the module is loaded, it is
 * closed to users outside its group, every open is a separate context,
 * and the ABI version query answers with the header's version and
 * zeroed reserved fields.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perfmon.h>

#include "kselftest_harness.h"

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = open("/dev/perfmon", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/perfmon: %s", strerror(errno));
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST(node_is_a_char_device)
{
	struct stat st;

	ASSERT_EQ(0, stat("/dev/perfmon", &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
}

/*
 * In a child as uid/gid 65534 with @ngroups supplementary groups
 * (@groups): open the node.  Exit status 0 when it opened, else its
 * errno (100: the user change failed).
 */
static int open_as_nobody(size_t ngroups, const gid_t *groups)
{
	int status, fd;
	pid_t pid = fork();

	if (pid == 0) {
		if (setgroups(ngroups, groups) ||
		    setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(100);
		fd = open("/dev/perfmon", O_RDWR | O_CLOEXEC);
		_exit(fd < 0 ? errno : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * The module makes the node root's alone (the guests' /init checks that
 * it comes 0600); a site gives it to a group (the udev rule, which
 * /init applies): its members open it, other users get EACCES.
 */
TEST(node_closed_to_others)
{
	struct stat st;
	gid_t node_gid;

	if (getuid() != 0)
		SKIP(return, "needs root to switch users");
	ASSERT_EQ(0, stat("/dev/perfmon", &st));
	EXPECT_EQ(0, st.st_uid);
	EXPECT_EQ(0, st.st_mode & 0007) TH_LOG("mode %o", st.st_mode & 0777);
	if (!st.st_gid || (st.st_mode & 0060) != 0060)
		SKIP(return, "node not given to a group (tools/udev/60-perfmon.rules)");
	node_gid = st.st_gid;
	EXPECT_EQ(EACCES, open_as_nobody(0, NULL));
	EXPECT_EQ(0, open_as_nobody(1, &node_gid));
}

TEST_F(dev, version_matches_header)
{
	struct pfarg_version ver;
	unsigned int i;

	memset(&ver, 0xa5, sizeof(ver));
	ASSERT_EQ(0, ioctl(self->fd, PFM_GET_VERSION, &ver));
	EXPECT_EQ(PFM_VERSION_MAJ, ver.ver_major);
	EXPECT_EQ(PFM_VERSION_MIN, ver.ver_minor);
	for (i = 0; i < ARRAY_SIZE(ver.ver_reserved); i++)
		EXPECT_EQ(0, ver.ver_reserved[i]);
}

TEST_F(dev, version_bad_pointer_is_efault)
{
	EXPECT_EQ(-1, ioctl(self->fd, PFM_GET_VERSION, (void *)8));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(dev, unknown_ioctl_is_enotty)
{
	EXPECT_EQ(-1, ioctl(self->fd, _IO(PFM_IOC_MAGIC, 0xff)));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(dev, opens_are_independent)
{
	struct pfarg_version ver;
	int fd2;

	fd2 = open("/dev/perfmon", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	EXPECT_NE(self->fd, fd2);
	/* Closing one context leaves the other usable. */
	ASSERT_EQ(0, close(fd2));
	EXPECT_EQ(0, ioctl(self->fd, PFM_GET_VERSION, &ver));
}

/*
 * One layout for 32-bit and 64-bit callers: this program also runs -m32
 * in the x86_64 guest, so both builds must see these sizes.
 */
TEST(abi_struct_sizes_are_fixed)
{
	EXPECT_EQ(64, sizeof(struct pfarg_ctx));
	EXPECT_EQ(48, sizeof(struct pfarg_pmc));
	EXPECT_EQ(176, sizeof(struct pfarg_pmd));
	EXPECT_EQ(32, sizeof(struct pfarg_start));
	EXPECT_EQ(32, sizeof(struct pfarg_load));
	EXPECT_EQ(64, sizeof(struct pfarg_setdesc));
	EXPECT_EQ(200, sizeof(struct pfarg_setinfo));
	EXPECT_EQ(64, sizeof(union pfarg_msg));
	EXPECT_EQ(128, sizeof(struct pfarg_create));
	EXPECT_EQ(16, sizeof(struct pfarg_array));
	EXPECT_EQ(160, sizeof(struct pfarg_pmu_info));
	EXPECT_EQ(88, sizeof(struct pfarg_reg_info));
}

TEST_HARNESS_MAIN
