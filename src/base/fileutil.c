// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fileutil.h"

static int read_text(int dir_fd, const char *name, int flags, char **text, size_t *len_out)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	int fd = -1, ret = 0;

	if (!buf)
		return -ENOMEM;
	fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | flags);
	if (fd < 0) {
		ret = -errno;
		goto cleanup;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 2) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger) {
				ret = -ENOMEM;
				goto cleanup;
			}
			buf = bigger;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto cleanup;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*text = buf;
	if (len_out)
		*len_out = len;
	buf = NULL;
cleanup:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

int read_text_file(const char *path, char **text, size_t *len_out)
{
	return read_text(AT_FDCWD, path, 0, text, len_out);
}

int read_text_at(int dir_fd, const char *name, char **text, size_t *len_out)
{
	return read_text(dir_fd, name, O_NOFOLLOW, text, len_out);
}

void set_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* ---- writing a file safely, as root too ---------------------------------- */

/* Under sudo, what root writes is the user's (SUDO_UID, SUDO_GID). */
static void give_to_sudo_user(int fd)
{
	const char *u = secure_getenv("SUDO_UID"), *g = secure_getenv("SUDO_GID");
	char *end;
	long uid, gid;

	if (geteuid() != 0 || !u || !g)
		return;
	errno = 0;
	uid = strtol(u, &end, 10);
	if (errno || *end || end == u || uid < 0 || uid > INT32_MAX)
		return;
	gid = strtol(g, &end, 10);
	if (errno || *end || end == g || gid < 0 || gid > INT32_MAX)
		return;
	/* Best effort: if it fails, the file stays root's. */
	if (fchown(fd, (uid_t)uid, (gid_t)gid))
		errno = 0;
}

int safe_open_dir(const char *dir, bool create)
{
	int fd;

	if (create && mkdir(dir, 0755) == 0) {
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			give_to_sudo_user(fd);
		return fd >= 0 ? fd : -errno;
	}
	if (create && errno != EEXIST)
		return -errno;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* ELOOP: the directory named is a symlink. */
	return fd >= 0 ? fd : -errno;
}

int safe_open_at(int dir_fd, const char *name, int flags, mode_t mode, bool *created)
{
	int base = O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
	struct stat st;
	int fd, err;

	*created = false;
	if (!*name || strchr(name, '/'))
		return -EINVAL;
	fd = openat(dir_fd, name, base | O_CREAT | O_EXCL | flags, mode);
	if (fd >= 0)
		*created = true;
	else if (errno == EEXIST && !(flags & O_EXCL))
		fd = openat(dir_fd, name, base | flags, mode);
	if (fd < 0)
		return -errno;
	/* Only a regular file, linked once: not a FIFO or device (O_NONBLOCK
	 * kept their open from waiting), not a hard link planted to a file
	 * of someone else's. */
	err = fstat(fd, &st) ? -errno : !S_ISREG(st.st_mode) ? -EINVAL :
	      st.st_nlink > 1 ? -EMLINK : 0;
	/* Clear O_NONBLOCK alone: F_SETFL also sets O_APPEND, which an
	 * appending caller (the SPANK plugin's steps.tsv) asked for. */
	if (!err && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	if (*created || st.st_uid == geteuid())
		give_to_sudo_user(fd);
	return fd;
}

int safe_open_file(const char *path, mode_t mode, bool *created)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	int dir_fd, fd;

	*created = false;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return -ENAMETOOLONG;
	dir_fd = safe_open_dir(dir, false);
	if (dir_fd < 0)
		return dir_fd;
	fd = safe_open_at(dir_fd, name, 0, mode, created);
	close(dir_fd);
	return fd;
}

FILE *safe_stream(int fd)
{
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f)
		close(fd);
	return f;
}

static FILE *fopen_mode(const char *path, mode_t mode, bool *created)
{
	return safe_stream(safe_open_file(path, mode, created));
}

FILE *safe_fopen(const char *path, bool *created)
{
	return fopen_mode(path, 0600, created);
}

FILE *safe_fopen_shared(const char *path, bool *created)
{
	return fopen_mode(path, 0644, created);
}

void safe_discard(FILE *f, const char *path, bool created)
{
	struct stat mine, now;
	bool same;

	if (!f)
		return;
	same = created && !fstat(fileno(f), &mine) && !lstat(path, &now) && mine.st_dev == now.st_dev &&
	       mine.st_ino == now.st_ino;
	fclose(f);
	if (same)
		unlink(path);
}

int safe_begin(FILE *f)
{
	if (fflush(f) || ftruncate(fileno(f), 0))
		return -errno;
	rewind(f);
	return 0;
}

int stdio_to_null(int saved[2])
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC), err = 0;

	saved[0] = saved[1] = -1;
	if (fd < 0)
		return -errno;
	for (int i = 0; i < 2 && !err; i++) {
		saved[i] = fcntl(STDOUT_FILENO + i, F_DUPFD_CLOEXEC, 3);
		if (saved[i] < 0 || dup2(fd, STDOUT_FILENO + i) < 0)
			err = -errno;
	}
	close(fd);
	if (err)
		stdio_restore(saved);
	return err;
}

void stdio_restore(int saved[2])
{
	for (int i = 0; i < 2; i++) {
		if (saved[i] < 0)
			continue;
		dup2(saved[i], STDOUT_FILENO + i);
		close(saved[i]);
		saved[i] = -1;
	}
}
