/* SPDX-License-Identifier: MIT */
/*
 * A load's maps read and cleared by tree (tree_maps.c): the walks of the
 * process, thread and mm maps that pick one tree's entries out of every
 * tree's. Below the tracker's two types: it is handed the skeleton.
 * Each walk costs O(the map's size), never per event.
 */
#ifndef PEAKBPF_TREE_MAPS_H
#define PEAKBPF_TREE_MAPS_H

#include <stdbool.h>
#include <linux/types.h>
#include "tracker.h"

struct tracker_bpf;

struct tree_entries {
	__u64 mms, tasks, threads;
};

/*
 * Remove tree's entries from the maps: one walk of each map, processes
 * first (so that no fork adds to the tree behind the walk), then threads
 * (only with_threads: before 6.2) and mms, then processes again for a
 * fork that raced the first walk. removed: how many went.
 */
int tree_maps_clear(struct tracker_bpf *s, unsigned tree, bool with_threads,
		    struct tree_entries *removed);
/* Every tree's entries in the maps now, by tree (threads: with_threads). */
void tree_maps_count(struct tracker_bpf *s, bool with_threads, struct tree_entries per_tree[MAX_TREES]);
/* The processes of tree in the map now. */
__u64 tree_maps_tasks(struct tracker_bpf *s, unsigned tree);
/* The mms of tree in the map now, and the events they have applied. */
__u64 tree_maps_mms(struct tracker_bpf *s, unsigned tree, __u64 *events);

#endif
