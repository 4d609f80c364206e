// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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
