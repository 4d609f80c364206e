/* SPDX-License-Identifier: MIT */
/*
 * A client's PID namespace as peakbpf serve sees it (issue 24): the helper
 * gives each tree's PIDs (holders, the departed) as its client numbers
 * them, which in a container is not the helper's numbering.
 */
#ifndef PEAKBPF_PIDNS_H
#define PEAKBPF_PIDNS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * The PIDs of a /proc/PID/status text's "NSpid:" line, outermost namespace
 * (the /proc mount's) first. Fills up to max and *n. 0; -ENOENT: no such
 * line (a kernel before 4.1); -EINVAL: a field is not a PID; -E2BIG: more
 * than max.
 */
int parse_nspid(const char *status, pid_t *pids, size_t max, size_t *n);

/*
 * How many levels below the helper's PID namespace the client's lies (pid:
 * the client's PID in the helper's numbering, SO_PEERCRED's): 0 when they
 * are the same. -EXDEV when the client's is not below the helper's (it
 * cannot be given numbers there: TRACKER_PID_HIDDEN), else -errno reading
 * /proc.
 */
int pidns_depth_of(pid_t pid, unsigned *depth);

#endif
