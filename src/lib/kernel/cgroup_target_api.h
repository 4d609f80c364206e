/* SPDX-License-Identifier: MIT */
/*
 * A tree whose members are a cgroup's processes and its descendants'
 * (--cgroup, --container, --unit, the container of `-- docker run`):
 * membership is decided in the kernel at fork, at each move between
 * cgroups and by a walk at the start (bpf/cgroup_move.bpf.h); the events
 * that count pages stay the tracker's. docs/design.md, "Cgroup targets".
 */
#ifndef PEAKBPF_CGROUP_TARGET_API_H
#define PEAKBPF_CGROUP_TARGET_API_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "cgroup_target.h"

struct tracker_tree;

/*
 * The cgroup a directory fd names, as the kernel's membership test needs
 * it: its kernfs id (the inode number), its level (components below the
 * hierarchy's mount), and which hierarchy (cgroup2; or v1's with the memory
 * controller, where v1 charges memory). 0, or -ENOTDIR (not a directory),
 * -EMEDIUMTYPE (not on a cgroup file system), -ENOMEDIUM (a v1 hierarchy
 * without the memory controller), -ELOOP (deeper than CG_MAX_LEVEL), or
 * another -errno of the reads.
 */
int cgroup_target_resolve(int dir_fd, struct cg_target *out);

/*
 * Make t's tree the processes of target (its directory open as dir_fd) and
 * of its descendants: those inside now (read from every cgroup.procs below
 * it once the target is set, entered as roots with their mms as they are),
 * those born or moved in later; a process moved out leaves with its mm's
 * pages at the move. -EBUSY when the tree has a target already.
 */
int tracker_set_cgroup(struct tracker_tree *t, const struct cg_target *target, int dir_fd);
/* A tree of t's load for processes to go to and be counted nowhere
 * (tracker_set_cgroup on it: they leave t's tree when they enter that
 * cgroup): the load's last tree, free while nothing else uses it.
 * tracker_tree__free it before t's load goes. */
int tracker_open_sink(struct tracker_tree *t, struct tracker_tree **out);
/* Forget t's tree's target (tracker_tree__clear does it too); no-op without one. */
void tracker_clear_cgroup(struct tracker_tree *t);
/* What membership did so far for t's tree; false without a target. */
bool tracker_cgroup_stats(struct tracker_tree *t, struct cg_stats *out);

#endif
