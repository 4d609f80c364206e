/* SPDX-License-Identifier: MIT */
/*
 * Who held the memory at a window's peak (holders.c), read from a load's
 * maps for one tree after the cut: below the tracker's two types, which it
 * knows nothing of (it is handed the skeleton and the tree's index).
 */
#ifndef PEAKBPF_HOLDERS_H
#define PEAKBPF_HOLDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "tracker.h"
#include "source.h"

struct tracker_bpf;

#define MAX_HOLDERS 256         /* holders kept per window, largest first */

struct holders_info {
	__u32 count;            /* in the array */
	__u64 total;            /* mms that held memory at the peak */
	bool truncated;         /* more mms left than the departed ring holds, or a mark race */
	__s64 sum_pages;        /* what they held together: the peak, within a
				   page per mm for updates racing the peak */
	__s64 breakdown_pages[RSS_SLOTS];       /* ...by counter */
	/* The walk of the mm map that found the live holders also counts
	 * the tree's entries there and their events (tracker_tree__cut). */
	__u64 mm_entries, mm_events;
};

/* Who held memory at peak `peak` of window w of tree `tree`: the mms in
 * the map and those that left since departed_since (the departed ring's
 * sequence number at the window's start). */
int holders_at_peak(struct tracker_bpf *skel, unsigned tree, __u64 w, __s64 peak,
		    __u64 departed_since, struct holder *out, size_t max, struct holders_info *info);

#endif
