/* SPDX-License-Identifier: MIT */
/*
 * What a client's fd is, asked of /proc first (fdinfo, mountinfo): nothing
 * of the file itself until /proc says its filesystem's calls do not wait,
 * so that a file of a hostile filesystem (FUSE, say) cannot make the
 * question wait. The parsers are pure (tests/unit).
 */
#ifndef PEAKBPF_FDCHECK_H
#define PEAKBPF_FDCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The mnt_id line of a /proc/PID/fdinfo/N text: 0 or -ENOENT. */
int fdinfo_mnt_id(const char *text, int *mnt_id);
/* The filesystem type of mount mnt_id in a /proc/PID/mountinfo text (the
 * field after " - "), into type[len]: 0 or -ENOENT. */
int mountinfo_fs_type(const char *text, int mnt_id, char *type, size_t len);
/* A cgroup.procs text: 0 when every PID in it is one of roots[n], else
 * -EBUSY with the first other in *other; -EINVAL for a line not a PID. */
int procs_within(const char *text, const pid_t *roots, size_t n, pid_t *other);

/* Whether a statfs f_type is a cgroup filesystem's (v1 or v2). */
bool cgroup_fs_magic(long f_type);
/* Whether fd, sent by process client, is on a cgroup filesystem (v1
 * "cgroup" or "cgroup2"): its mount (fdinfo's mnt_id) found in the
 * helper's mount table or else in the client's (the helper may have a
 * mount namespace of its own: systemd's PrivateMounts=) as a cgroup one,
 * then the filesystem's magic (fstatfs), asked only then. */
bool fd_on_cgroupfs(int fd, pid_t client);
/* fd, already known to be on a cgroup filesystem (whose calls do not
 * wait), as a tree's own memory cgroup: a directory, of the memory
 * controller (memory.current in v2, memory.usage_in_bytes in v1), owned
 * by uid unless uid is root. 0, or -errno and why. */
int cgroup_dir_check(int fd, uid_t uid, char *why, size_t len);
/* Whether the cgroup of directory fd holds only processes of roots[n]
 * (none, with n 0): 0, -EBUSY (why names one other), or -errno and why. */
int cgroup_procs_check(int fd, const pid_t *roots, size_t n, char *why, size_t len);

#endif
