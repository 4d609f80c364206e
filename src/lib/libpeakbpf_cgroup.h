/* SPDX-License-Identifier: MIT */
/* libpeakbpf's cgroup targets: the checks peakbpf_cgroup_check makes,
 * on directories the session's calls then hand on (libpeakbpf.c). */
#ifndef PEAKBPF_LIBPEAKBPF_CGROUP_H
#define PEAKBPF_LIBPEAKBPF_CGROUP_H

/* path (and except, if not NULL) opened and checked as peakbpf_cgroup_check
 * does: 0 and *fd, *xfd (-1 without except), both the caller's to close;
 * or its errors, nothing left open. */
int lib_cgroup_open(const char *path, const char *except, int *fd, int *xfd);

#endif
