/* SPDX-License-Identifier: MIT */
/* Exit statuses, as env(1) and timeout(1) use them. */
#ifndef PEAKBPF_STATUS_H
#define PEAKBPF_STATUS_H

#define EXIT_NOT_PERMITTED  123 /* -p: not the caller's to measure (ptrace rules); --helper
                                   named and cannot be reached or refused */
#define EXIT_STACKS_UNWRITABLE 116 /* --stacks FILE cannot be written (checked before the run) */
/* Targets by where memory is charged (--cgroup, --container, --unit). */
#define EXIT_TARGET_RUNTIME_MISSING 117 /* --container: neither podman nor docker installed, or
                                           the one named (docker:NAME) not */
#define EXIT_TARGET_AMBIGUOUS 118   /* --container: NAME matches several containers */
#define EXIT_TARGET_NOT_CGROUP 119  /* --cgroup: not a cgroup (no cgroup file system there, or a
                                       v1 hierarchy without the memory controller) */
#define EXIT_TARGET_NOT_FOUND 120   /* no such cgroup, container or unit */
#define EXIT_CGROUP_ROOT_UNSAFE 121 /* the cgroup root is a symlink or, as root, not root's alone */
#define EXIT_PEAKBPF_FAILED 125 /* peakbpf itself failed: usage, privileges, BPF */
#define EXIT_CANNOT_EXECUTE 126 /* the command exists but could not be executed */
#define EXIT_NOT_FOUND      127 /* the command was not found */

/* The status the shell would report for a waited-for child: its exit code,
 * or 128 + N when it was killed by signal N. -1 if wstatus is neither. */
int exit_status_from_wait(int wstatus);

/* The status for a failed execvp() errno: 127 for ENOENT/ENOTDIR, else 126. */
int exit_status_from_exec_errno(int err);

#endif
