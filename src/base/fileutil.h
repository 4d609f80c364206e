/* SPDX-License-Identifier: MIT */
/* Small helpers the sources share: whole-file reads, one-line reasons;
 * stdio onto /dev/null. */
#ifndef PEAKBPF_FILEUTIL_H
#define PEAKBPF_FILEUTIL_H

#include <stddef.h>

/* The whole of a (small, pseudo-) file, NUL-terminated; *text is malloc'd,
 * *len_out (if not NULL) its length. 0 or a negative errno. */
int read_text_file(const char *path, char **text, size_t *len_out);

/* The same for name below the directory dir_fd, following no symlink. */
int read_text_at(int dir_fd, const char *name, char **text, size_t *len_out);

/* printf into why[len], when the caller gave a buffer. */
void set_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* stdout and stderr onto /dev/null (the harness's commands, unless
 * --show-output): saved[] gets the old ones for stdio_restore (-1 when
 * nothing was saved); 0 or -errno. */
int stdio_to_null(int saved[2]);
void stdio_restore(int saved[2]);

#endif
