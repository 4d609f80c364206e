/* SPDX-License-Identifier: MIT */
/* Small helpers the sources share: whole-file reads, one-line reasons;
 * stdio onto /dev/null. */
#ifndef PEAKBPF_FILEUTIL_H
#define PEAKBPF_FILEUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* The whole of a (small, pseudo-) file, NUL-terminated; *text is malloc'd,
 * *len_out (if not NULL) its length. 0 or a negative errno. */
int read_text_file(const char *path, char **text, size_t *len_out);

/* The same for name below the directory dir_fd, following no symlink. */
int read_text_at(int dir_fd, const char *name, char **text, size_t *len_out);

/* printf into why[len], when the caller gave a buffer. */
void set_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * The one way peakbpf writes a file, root or not (-o, --timeline,
 * --export-*, --record, plot -o, merge's outputs): the directory is opened
 * with O_NOFOLLOW, the file below it with openat and O_NOFOLLOW, so that
 * neither may be a symlink another user planted (in /tmp, say); the file
 * must be regular and linked once; a new one gets mode, and under sudo is
 * the user's (SUDO_UID, SUDO_GID). Nothing is truncated: the writer calls
 * safe_begin once it has something to write, so a run that fails leaves
 * the file as it was. *created says whether it is new.
 */
int safe_open_file(const char *path, mode_t mode, bool *created);
/* The same for name (no '/') below dir_fd; flags may add O_EXCL. */
int safe_open_at(int dir_fd, const char *name, int flags, mode_t mode, bool *created);
/* A directory, never through a symlink; made (0755, the sudo user's)
 * when create and it is missing. Its fd, or -errno (-ELOOP: a symlink). */
int safe_open_dir(const char *dir, bool create);
/* fd (or a -errno from the opens above) as a write stream: NULL and errno
 * when fd is an error or fdopen fails, fd then closed. */
FILE *safe_stream(int fd);
/* safe_open_file, mode 0600, as a stream (NULL and errno). */
FILE *safe_fopen(const char *path, bool *created);
/* The same, mode 0644 (less the umask and what the directory's default ACL
 * takes away): files meant to be read by others, exports, timelines and
 * plots (Debian's node_exporter reads a textfile as its own user). */
FILE *safe_fopen_shared(const char *path, bool *created);
/* A write to f (path's stream) failed: f closed, and path removed when
 * this writer created it and it is still that file, so that a full disk
 * leaves no empty or partial file behind. */
void safe_discard(FILE *f, const char *path, bool created);
/* Empty the file before its first write. 0 or -errno. */
int safe_begin(FILE *f);

/* stdout and stderr onto /dev/null (the harness's commands, unless
 * --show-output): saved[] gets the old ones for stdio_restore (-1 when
 * nothing was saved); 0 or -errno. */
int stdio_to_null(int saved[2]);
void stdio_restore(int saved[2]);

#endif
