/* SPDX-License-Identifier: MIT */
/*
 * The tree's unique memory: each resident page counted once, beside the
 * summed RSS headline (issue 17; docs/design.md, "Unique memory").
 *
 * Where the tree has a memory cgroup of its own (command mode) and the kernel
 * has the memcg statistic tracepoints (6.13+), or a memcg statistic function
 * to attach to (5.12 to 6.12), bpf/unique.bpf.c keeps that cgroup's mapped
 * anon + mapped file pages and their running maximum: the figure is
 * "bpf-memcg", exact. Elsewhere the figure is not measured (measured:
 * false) and says why.
 */
#ifndef PEAKBPF_UNIQUE_API_H
#define PEAKBPF_UNIQUE_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "figure.h"            /* UNIQUE_SCOPE */
#include "source.h"

struct unique;
struct tracker_tree;

/*
 * The unique program is part of the tracker's BPF object (one load, one
 * parse of the kernel's BTF). The id of the memory cgroup whose directory
 * cgroup_dir_fd holds open (v1 or v2; fstat, so a rename cannot point it
 * elsewhere): 0, or -errno and a one-line reason.
 */
int unique_cgroup_id(int cgroup_dir_fd, uint64_t *id, char *why, size_t whylen);
/*
 * After the tracker loaded with the program: the figure of memory cgroup
 * cgroup_id from it (one load serves run after run: each unique_open
 * points it at its run's cgroup, unique_destroy at none). The cgroup must
 * hold nothing yet: the figure starts from 0 pages. 0, or -errno and a
 * one-line reason: -EOPNOTSUPP when the kernel has no hook (unique_hook.h).
 */
int unique_open(struct tracker_tree *t, uint64_t cgroup_id, long page_size, struct unique **out,
		char *why, size_t whylen);
/* Close the window that ends now and open the next: out is its figure. */
void unique_close_window(struct unique *u, struct figure *out);
void unique_destroy(struct unique *u);

#endif
