// SPDX-License-Identifier: MIT
/* libpeakbpf's cgroup targets (peakbpf.h, "since 0.5"). */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <peakbpf/peakbpf.h>
#include "host.h"
#include "libpeakbpf_cgroup.h"

/* The checks of peakbpf_cgroup_check on an open directory. */
static int check_fd(int fd)
{
	struct statfs sfs;
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (fstatfs(fd, &sfs))
		return -errno;
	if (sfs.f_type != CGROUP2_SUPER_MAGIC && sfs.f_type != CGROUP_SUPER_MAGIC)
		return -EMEDIUMTYPE;
	if (sfs.f_type == CGROUP_SUPER_MAGIC && faccessat(fd, "memory.usage_in_bytes", F_OK, 0))
		return errno == ENOENT ? -ENOMEDIUM : -errno;
	if (!(host_effective_caps() & (1ULL << CAPBIT_SYS_ADMIN)) && st.st_uid != geteuid())
		return -EPERM;
	return 0;
}

static int open_dir(const char *path)
{
	int fd;

	if (!path || !*path)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

PEAKBPF_API int peakbpf_cgroup_check(const char *path)
{
	int fd = open_dir(path), err;

	if (fd < 0)
		return fd;
	err = check_fd(fd);
	close(fd);
	return err;
}

int lib_cgroup_open(const char *path, const char *except, int *fd, int *xfd)
{
	int err;

	*xfd = -1;
	*fd = open_dir(path);
	if (*fd < 0)
		return *fd;
	err = check_fd(*fd);
	if (!err && except) {
		*xfd = open_dir(except);
		err = *xfd < 0 ? *xfd : check_fd(*xfd);
	}
	if (err) {
		close(*fd);
		if (*xfd >= 0)
			close(*xfd);
	}
	return err;
}

