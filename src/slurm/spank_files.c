// SPDX-License-Identifier: MIT
/* The plugin's files, never through a symlink (spank_files.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fileutil.h"
#include "spank_files.h"

/* A directory fd, ours (this euid's) and writable by us alone. */
static int own_dir(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) ? -EPERM : 0;
}

int pb_job_dir_open(const char *dir, uint32_t job, int *dir_fd)
{
	char name[16];
	int fd = -1, err;

	*dir_fd = safe_open_dir(dir, true);
	if (*dir_fd < 0)
		return *dir_fd;
	snprintf(name, sizeof(name), "%" PRIu32, job);
	err = mkdirat(*dir_fd, name, 0755) && errno != EEXIST ? -errno : 0;
	if (!err) {
		fd = openat(*dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		err = fd < 0 ? -errno : own_dir(fd);
	}
	if (err) {
		if (fd >= 0)
			close(fd);
		close(*dir_fd);
		*dir_fd = -1;
		return err;
	}
	return fd;
}

int pb_write_at(int dir_fd, const char *name, const char *buf, size_t len)
{
	bool created;
	int fd = safe_open_at(dir_fd, name, 0, 0644, &created), err = 0;

	if (fd < 0)
		return fd;
	if (ftruncate(fd, 0))
		err = -errno;
	else if (write(fd, buf, len) != (ssize_t)len)
		err = -EIO;
	if (close(fd) && !err)
		err = -EIO;
	return err;
}

int pb_append_at(int dir_fd, const char *name)
{
	bool created;

	return safe_open_at(dir_fd, name, O_APPEND, 0644, &created);
}

FILE *pb_read_at(int dir_fd, const char *name)
{
	int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (fd >= 0 && !f)
		close(fd);
	return f;
}

static void tmp_name(const char *name, char *tmp, size_t len)
{
	snprintf(tmp, len, "%s.tmp", name);
}

FILE *pb_replace_begin(int dir_fd, const char *name)
{
	char tmp[256];
	bool created;

	tmp_name(name, tmp, sizeof(tmp));
	/* A name planted there (a symlink to another file, say) goes; one
	 * that cannot (another's, in a sticky directory) fails O_EXCL. */
	if (unlinkat(dir_fd, tmp, 0) && errno != ENOENT && errno != EPERM && errno != EACCES)
		return NULL;
	return safe_stream(safe_open_at(dir_fd, tmp, O_EXCL, 0644, &created));
}

int pb_replace_end(FILE *f, int dir_fd, const char *name)
{
	char tmp[256];
	int err = !f || ferror(f) ? -EIO : 0;

	tmp_name(name, tmp, sizeof(tmp));
	if (f && fclose(f) && !err)
		err = -EIO;
	if (!err && renameat(dir_fd, tmp, dir_fd, name))
		err = -errno;
	if (err)
		unlinkat(dir_fd, tmp, 0);
	return err;
}
