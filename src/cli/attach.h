/* SPDX-License-Identifier: MIT */
/* Attach mode's roots (-p). */
#ifndef PEAKBPF_ATTACH_H
#define PEAKBPF_ATTACH_H

#include <stddef.h>
#include <sys/types.h>

struct peakbpf_session;

/*
 * Enter the n processes pids into the session's tree, each watched by a
 * pidfd (pidfds[i]) for its exit; *alive counts them. Each must exist, not
 * be peakbpf, and be one the caller may measure (peakbpf_may_measure). Every
 * failure is said on stderr in one line naming the fix. 0 or -errno.
 */
int attach_roots(struct peakbpf_session *s, const pid_t *pids, size_t n, int *pidfds, size_t *alive);

#endif
