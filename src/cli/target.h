/* SPDX-License-Identifier: MIT */
/*
 * --cgroup, --container, --unit: the cgroup a target names, found before
 * anything is loaded (docs/containers.md says how each is found).
 */
#ifndef PEAKBPF_TARGET_H
#define PEAKBPF_TARGET_H

#include <stddef.h>
#include "cli.h"

/* Resolve o->target into o->target_cgroup and o->target_label (static
 * storage: one target a process). 0, or the exit status after a one-line
 * error on stderr (status.h: 117-120, 123). */
int target_resolve(struct options *o);

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
