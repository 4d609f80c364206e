/* SPDX-License-Identifier: MIT */
/*
 * One tree of a load (tracker_tree.c): its slot in the load's state
 * (hot.trees[index]), its cut state (where the open window began) and its
 * processes and mms in the load's maps; read at each cut with its holders
 * (holders.h). Opaque, in the obj__verb style of retsnoop's components.
 * libpeakbpf's public API is include/peakbpf/peakbpf.h; this is the
 * library's inside, which the bpf source (src/lib/sources/source_bpf.c)
 * and peakbpf serve build on.
 */
#ifndef PEAKBPF_TRACKER_TREE_H
#define PEAKBPF_TRACKER_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "holders.h"
#include "tracker_load.h"

struct tracker_tree;

/* A copy of the tree's kernel state, plus facts about the programs that
 * fed it. */
struct tree_reading {
	struct tree_state tree;
	__u64 events;           /* rss_stat events applied, every CPU */
	__u64 missed_events;    /* program runs the kernel skipped (recursion) */
	__u64 mm_entries;       /* entries now in the mm map */
	__u64 task_entries;     /* entries now in the process map */
	__s64 window_end_sum;   /* tracker_tree__cut: the sum at the cut */
	/* tracker_tree__cut: who held the memory at the closed window's peak */
	struct holder holders[MAX_HOLDERS];
	struct holders_info holders_info;
	int holders_err;
};

/*
 * Add a tree to load l on slot index (0..MAX_TREES-1): the same programs
 * and maps, its own tree state, capped at max_entries mms and processes
 * (0: none but the maps'). Whatever a slot's last tree left in the maps
 * goes first. The load's ring, if it has one, is drained one tree at a
 * time (tracker_tree__drain_sums).
 */
int tracker_tree__add(struct tracker_load *l, unsigned index, __u64 max_entries,
		      struct tracker_tree **out);
/* Clear the tree's entries and free it, leaving the load; NULL is fine. */
void tracker_tree__free(struct tracker_tree *t);
struct tracker_load *tracker_tree__load(const struct tracker_tree *t);
unsigned tracker_tree__index(const struct tracker_tree *t);

/*
 * Enter processes into the tree by their PIDs in peakbpf's PID namespace,
 * with every existing descendant (by fork lineage) and its mm as it is now.
 * With enter_mm false the roots' own mms are left out: the command, stopped
 * before exec, still has a copy of peakbpf's. tgids[i] receives each root's
 * global tgid, or 0 if no such process was found.
 */
int tracker_tree__add_roots(struct tracker_tree *t, const pid_t *vpids, size_t n,
			    bool enter_mm, __u32 *tgids);
/* The first window opens now (its peak starts from the sum at this
 * instant, *sum): the cut without reading the maps or the holders of what
 * came before (nothing was measured). */
int tracker_tree__open_window(struct tracker_tree *t, __s64 *sum);
/* Read the window that ends now, with its holders, and open the next: its
 * peak starts from the sum at this instant. */
int tracker_tree__cut(struct tracker_tree *t, struct tree_reading *closed);
/* The tree's state now, from mapped memory: no system call. */
void tracker_tree__read_state(const struct tracker_tree *t, struct tree_state *out);
/* The tree's state with the map sizes and the skipped runs (system calls). */
int tracker_tree__read(struct tracker_tree *t, struct tree_reading *out);
/* Sum every mm's counters over every CPU and compare with the tree's
 * values (a check; O(mms x CPUs)). -EOPNOTSUPP without the exact path. */
int tracker_tree__verify_sums(struct tracker_tree *t, struct sum_check *out);
/* Hand every recorded change of the tree's sum, oldest first, to fn. */
int tracker_tree__drain_sums(struct tracker_tree *t, source_sum_fn fn, void *ctx);
/* Whether the tree records its changes, on a load made with
 * record_per_tree; before its roots are added (each mm takes the flag as
 * it enters). -EOPNOTSUPP when the load has no ring. */
int tracker_tree__set_record(struct tracker_tree *t, bool on);
/* Judge each recorded change for a reader: whether user uid:gid, with no
 * capabilities, could ptrace the process making it (struct sum_event's
 * seen, bpf/tracker_event.bpf.h). A cleared tree judges nothing. */
void tracker_tree__set_reader(struct tracker_tree *t, uid_t uid, gid_t gid);
/* Who uses mm key (with tgid, as a struct sum_event names it): its PID in
 * peakbpf's namespace (0 if not visible) and comm, from the mm's entry or,
 * once it left, the departed ring. -ENOENT when neither has it. */
int tracker_tree__mm_identity(struct tracker_tree *t, __u64 key, __u32 tgid, __u32 *vpid,
			      char comm[COMM_LEN]);
/* Give the tree's processes' PIDs (holders, the departed) as the PID
 * namespace depth levels below peakbpf's numbers them (peakbpf serve: its
 * client's); before its roots are added. TRACKER_PID_HIDDEN: as none (0:
 * not visible). A cleared tree is back at 0: peakbpf's own. */
#define TRACKER_PID_HIDDEN 0xffffU
void tracker_tree__set_pid_depth(struct tracker_tree *t, unsigned depth);
/* Delete the tree's entries from every map (and the mm filter) and reset
 * its state; removed: how many went (may be NULL). */
int tracker_tree__clear(struct tracker_tree *t, struct tree_entries *removed);

#endif
