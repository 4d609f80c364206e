// SPDX-License-Identifier: MIT
/* What a client's fd is, from /proc's texts (src/helper/fdcheck.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "fdcheck.h"

static void test_fdinfo_mnt_id(void **state)
{
	int id = -1;

	(void)state;
	assert_int_equal(fdinfo_mnt_id("pos:\t0\nflags:\t02100000\nmnt_id:\t31\nino:\t1\n", &id), 0);
	assert_int_equal(id, 31);
	assert_int_equal(fdinfo_mnt_id("pos:\t0\nmnt_id:\t7", &id), 0);     /* last line, no newline */
	assert_int_equal(id, 7);
	assert_int_equal(fdinfo_mnt_id("pos:\t0\nflags:\t0\n", &id), -ENOENT);
	assert_int_equal(fdinfo_mnt_id("mnt_id:\t\n", &id), -ENOENT);
	assert_int_equal(fdinfo_mnt_id("mnt_id:\t12x\n", &id), -ENOENT);
	assert_int_equal(fdinfo_mnt_id("", &id), -ENOENT);
}

static const char MOUNTS[] =
	"22 1 0:21 / /proc rw,nosuid shared:12 - proc proc rw\n"
	"29 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
	"33 29 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	"40 22 0:40 / /mnt/fuse rw master:1 shared:2 - fuse.sshfs host:/ rw,user_id=0\n"
	"41 22 0:41 / /mnt/odd rw - cgroup2";       /* no source: not a line of the shape */

static void test_mountinfo_fs_type(void **state)
{
	char t[32];

	(void)state;
	assert_int_equal(mountinfo_fs_type(MOUNTS, 29, t, sizeof(t)), 0);
	assert_string_equal(t, "cgroup2");
	assert_int_equal(mountinfo_fs_type(MOUNTS, 33, t, sizeof(t)), 0);
	assert_string_equal(t, "cgroup");
	assert_int_equal(mountinfo_fs_type(MOUNTS, 40, t, sizeof(t)), 0);  /* optional fields */
	assert_string_equal(t, "fuse.sshfs");
	assert_int_equal(mountinfo_fs_type(MOUNTS, 2, t, sizeof(t)), -ENOENT);
	assert_int_equal(mountinfo_fs_type(MOUNTS, 3, t, sizeof(t)), -ENOENT);  /* not "33" */
	assert_int_equal(mountinfo_fs_type(MOUNTS, 40, t, 4), -ENOENT);    /* no room */
	assert_int_equal(mountinfo_fs_type("", 1, t, sizeof(t)), -ENOENT);
}

static void test_procs_within(void **state)
{
	pid_t roots[] = { 10, 20 }, other = 0;

	(void)state;
	assert_int_equal(procs_within("", NULL, 0, &other), 0);              /* empty */
	assert_int_equal(procs_within("20\n10\n", roots, 2, &other), 0);
	assert_int_equal(procs_within("10\n30\n", roots, 2, &other), -EBUSY);
	assert_int_equal(other, 30);
	assert_int_equal(procs_within("10\n", NULL, 0, &other), -EBUSY);
	assert_int_equal(procs_within("10\nx\n", roots, 2, &other), -EINVAL);
	assert_int_equal(procs_within("-1\n", roots, 2, &other), -EINVAL);
}

/* The helper's own fds: /proc is not a cgroup filesystem; the memory
 * cgroup's root directory (v1's memory hierarchy, or v2's) is. */
static void test_fd_on_cgroupfs(void **state)
{
	const char *cg = access("/sys/fs/cgroup/memory/memory.usage_in_bytes", F_OK) == 0 ?
			 "/sys/fs/cgroup/memory" : "/sys/fs/cgroup";
	int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_false(fd_on_cgroupfs(fd, getpid()));
	close(fd);
	assert_false(fd_on_cgroupfs(-1, getpid()));
	if (!strcmp(cg, "/sys/fs/cgroup") && access("/sys/fs/cgroup/cgroup.procs", F_OK))
		skip();         /* no memory cgroup mounted here */
	fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(fd_on_cgroupfs(fd, getpid()));
	close(fd);
}

/* The two cgroup filesystems' magic numbers, and no other's. */
static void test_cgroup_fs_magic(void **state)
{
	(void)state;
	assert_true(cgroup_fs_magic(0x27e0eb));         /* CGROUP_SUPER_MAGIC */
	assert_true(cgroup_fs_magic(0x63677270));       /* CGROUP2_SUPER_MAGIC */
	assert_false(cgroup_fs_magic(0x9fa0));          /* PROC_SUPER_MAGIC */
	assert_false(cgroup_fs_magic(0x65735546));      /* FUSE_SUPER_MAGIC */
	assert_false(cgroup_fs_magic(0x01021994));      /* TMPFS_MAGIC */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fdinfo_mnt_id),
		cmocka_unit_test(test_mountinfo_fs_type),
		cmocka_unit_test(test_procs_within),
		cmocka_unit_test(test_fd_on_cgroupfs),
		cmocka_unit_test(test_cgroup_fs_magic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
