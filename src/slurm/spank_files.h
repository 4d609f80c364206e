/* SPDX-License-Identifier: MIT */
/*
 * The plugin's files, written as root by slurmstepd (issue 36): DIR/JOB/
 * and its node and step files, DIR/JOB.json. Every name is opened below a
 * directory fd, never through a symlink (the CLI's safe writer,
 * fileutil.h), so that a job user who can write DIR (an admin may make it
 * so) cannot make root write or truncate another file. No Slurm here
 * (tests/unit/test_spank_files.c).
 */
#ifndef PEAKBPF_SPANK_FILES_H
#define PEAKBPF_SPANK_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* DIR (made 0755 if missing; not a symlink) into *dir_fd, and its JOB
 * directory, made 0755 or, if it is there, only if it is a directory
 * (not a symlink) of this process's euid that no one else may write:
 * its fd, or -errno (-ELOOP, -ENOTDIR: a symlink or another file;
 * -EPERM: another's, or writable by others); *dir_fd is then -1. */
int pb_job_dir_open(const char *dir, uint32_t job, int *dir_fd);
/* The whole of buf as name below dir_fd (safe_open_at, 0644): 0 or -errno. */
int pb_write_at(int dir_fd, const char *name, const char *buf, size_t len);
/* name below dir_fd, for appending (0644): its fd or -errno. */
int pb_append_at(int dir_fd, const char *name);
/* name below dir_fd, to read: its stream, or NULL and errno. */
FILE *pb_read_at(int dir_fd, const char *name);
/* name below dir_fd replaced whole: the stream to write (name.tmp, new,
 * any planted one unlinked first), then pb_replace_end renames it over
 * name (a symlink planted as name is replaced, not followed); with f
 * NULL (the writing failed, f closed), name.tmp goes: -EIO. */
FILE *pb_replace_begin(int dir_fd, const char *name);
int pb_replace_end(FILE *f, int dir_fd, const char *name);

#endif
