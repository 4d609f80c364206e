/* SPDX-License-Identifier: MIT */
/* Where cgroups are (the mounts, a process's cgroup), and running a
 * runtime's command: what --cgroup & co. and `-- docker run` share. */
#ifndef PEAKBPF_CGROUP_PATHS_H
#define PEAKBPF_CGROUP_PATHS_H

#include <stddef.h>
#include <sys/types.h>

/* The mount of the hierarchy memory is charged in: cgroup v1's memory
 * controller's if mounted, else cgroup2's (v2 true). 0, or -ENOENT. */
int target_memory_mount(char *out, size_t len, int *v2);

/* The cgroup of process pid in that hierarchy, as a directory path under
 * its mount (from /proc/PID/cgroup). 0, or -errno. */
int target_pid_cgroup(pid_t pid, char *out, size_t len);

/* Run argv (argv[0] found in PATH), its stdout and stderr into out (cut to
 * len - 1 bytes, ended by NUL); its exit status in *status (-1: killed).
 * 0, or -errno when it could not be run. */
int target_capture(char *const argv[], char *out, size_t len, int *status);

#endif
