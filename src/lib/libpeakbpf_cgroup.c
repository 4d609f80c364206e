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
#include "session.h"
#include "libpeakbpf_internal.h"

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

/* path and except opened and checked: 0 and *fd, *xfd (-1 without except). */
static int open_pair(const char *path, const char *except, int *fd, int *xfd)
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

PEAKBPF_API int peakbpf_add_cgroup_except(struct peakbpf_session *p, const char *path, const char *except)
{
	int fd, xfd, err;

	if (!p || p->command)
		return -EINVAL;
	if (p->started || p->n_roots)
		return -EBUSY;
	err = open_pair(path, except, &fd, &xfd);
	if (err)
		return err;
	err = session_add_cgroup(p->s, fd, xfd);
	if (xfd >= 0)
		close(xfd);
	close(fd);
	return err;
}

PEAKBPF_API int peakbpf_add_cgroup(struct peakbpf_session *p, const char *path)
{
	return peakbpf_add_cgroup_except(p, path, NULL);
}

PEAKBPF_API int peakbpf_exclude_cgroup(struct peakbpf_session *p, const char *path, const char *except)
{
	int fd, xfd, err;

	if (!p)
		return -EINVAL;
	if (p->started)
		return -EBUSY;
	err = open_pair(path, except, &fd, &xfd);
	if (err)
		return err;
	err = session_exclude_cgroup(p->s, fd, xfd);
	if (xfd >= 0)
		close(xfd);
	close(fd);
	return err;
}

PEAKBPF_API int peakbpf_figure_limit(const struct peakbpf_figure *f, uint64_t *bytes)
{
	if (!f || !bytes)
		return -EINVAL;
	if (!f->fig.limit_known)
		return -ENODATA;
	*bytes = f->fig.limit_bytes;
	return 0;
}
