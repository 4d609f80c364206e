/* SPDX-License-Identifier: MIT */
/*
 * The tracker's internal API (libpeakbpf's public one is
 * include/peakbpf/peakbpf.h): it loads the BPF programs, enters processes
 * into a tree and reads the tree's state; and the bpf source built on it.
 */
#ifndef PEAKBPF_TRACKER_API_H
#define PEAKBPF_TRACKER_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "tracker.h"
#include "unique.h"              /* the same BPF object's (tracker.skel.h) */
#include "oom.h"                 /* ...and these */
#include "cgsum.h"
#include "source.h"

struct tracker;
struct tracker_bpf;
struct bpf_object;
struct cgsum_hier;

struct tracker_opts {
	__u32 max_tracked;      /* entries of the mm and process maps; 0: default */
	__u32 record_ring_bytes;        /* record every change of the sum in a ring
					   of this size (a power of 2 of pages); 0: off */
	bool with_unique;       /* load the unique program (unique_api.h) */
	bool without_oom;       /* leave the OOM recorder out (oom_api.h) */
	/* With the per-cgroup sums of this hierarchy (cgsum_api.h); NULL: off. */
	const struct cgsum_hier *cgsum;
	/* With a ring: a tree records only once tracker_set_record says so
	 * (peakbpf serve, whose trees' clients choose); else every tree does. */
	bool record_per_tree;
};


#define MAX_HOLDERS 256         /* holders kept per window, largest first */

struct holders_info {
	__u32 count;            /* in the array */
	__u64 total;            /* mms that held memory at the peak */
	bool truncated;         /* more mms left than the departed ring holds, or a mark race */
	__s64 sum_pages;        /* what they held together: the peak, within a
				   page per mm for updates racing the peak */
	__s64 breakdown_pages[RSS_SLOTS];       /* ...by counter */
	/* The walk of the mm map that found the live holders also counts
	 * the tree's entries there and their events (tracker_close_window). */
	__u64 mm_entries, mm_events;
};

/* A copy of the tree's kernel state, plus facts about the programs that
 * fed it. */
struct tree_reading {
	struct tree_state tree;
	__u64 events;           /* rss_stat events applied, every CPU */
	__u64 missed_events;    /* program runs the kernel skipped (recursion) */
	__u64 mm_entries;       /* entries now in the mm map */
	__u64 task_entries;     /* entries now in the process map */
	__s64 window_end_sum;   /* tracker_close_window: the sum at the cut */
	/* tracker_close_window: who held the memory at the closed window's peak */
	struct holder holders[MAX_HOLDERS];
	struct holders_info holders_info;
	int holders_err;
};

/* Open, load and attach. Returns 0 or a negative errno; on failure *out is
 * NULL and nothing stays loaded. */
int tracker_open(const struct tracker_opts *opts, struct tracker **out);
/*
 * Enter processes into the tree by their PIDs in peakbpf's PID namespace,
 * with every existing descendant (by fork lineage) and its mm as it is now.
 * With enter_mm false the roots' own mms are left out: the command, stopped
 * before exec, still has a copy of peakbpf's. tgids[i] receives each root's
 * global tgid, or 0 if no such process was found.
 */
int tracker_add_roots(struct tracker *t, const pid_t *vpids, size_t n,
		      bool enter_mm, __u32 *tgids);
/* Read the window that ends now, with its holders, and open the next: its
 * peak starts from the sum at this instant. */
int tracker_close_window(struct tracker *t, struct tree_reading *closed);
/* The first window opens now (its peak starts from the sum at this
 * instant, *sum): the cut of tracker_close_window without reading the
 * maps or the holders of what came before (nothing was measured). */
int tracker_open_window(struct tracker *t, __s64 *sum);
/* The tree's state now, from mapped memory: no system call. */
void tracker_read_tree(struct tracker *t, struct tree_state *out);
/* The tree's state with the map sizes and the skipped runs (system calls). */
int tracker_read(struct tracker *t, struct tree_reading *out);
/* Sum every mm's counters over every CPU and compare with the tree's
 * values (a check; O(mms x CPUs)). -EOPNOTSUPP without the exact path. */
int tracker_verify_sums(struct tracker *t, struct sum_check *out);
/* Hand every recorded change of the sum, oldest first, to fn. */
int tracker_drain_sums(struct tracker *t, source_sum_fn fn, void *ctx);
/* The load's (not a tree's) record, every tree's changes, oldest first,
 * to fn: each names its tree (sum_event.tree). peakbpf serve routes them. */
int tracker_drain_every_tree(struct tracker *load, source_sum_fn fn, void *ctx);
/* Whether t's tree records its changes, on a load made with
 * record_per_tree; before its roots are added (each mm takes the flag as
 * it enters). -EOPNOTSUPP when the load has no ring. */
int tracker_set_record(struct tracker *t, bool on);
/* Who uses mm key (with tgid, as a struct sum_event names it): its PID in
 * peakbpf's namespace (0 if not visible) and comm, from the mm's entry or,
 * once it left, the departed ring. -ENOENT when neither has it. */
int tracker_mm_identity(struct tracker *t, __u64 key, __u32 tgid, __u32 *vpid, char comm[COMM_LEN]);
/* Which program removes an mm at teardown: "tp_btf/exit_mmap" or
 * "fentry/exit_mmap". */
const char *tracker_teardown_hook(const struct tracker *t);
/* True when this kernel keeps rss in percpu_counters (6.2+). */
bool tracker_has_percpu_rss(const struct tracker *t);
/* Before 6.2: the most pages one fault maps unseen; *read: from debugfs. */
unsigned tracker_fault_pages(const struct tracker *t, bool *read);
/* 0 when every counter is kept exact from its per-CPU slots, else why
 * not: -EOPNOTSUPP (kernel before 6.2 or without the helpers), -E2BIG
 * (more CPUs than covered), or the error of learning the per-CPU offsets. */
int tracker_exact_path(const struct tracker *t);
/* CPUs that can exist (each has a slot in every percpu_counter). */
int tracker_possible_cpus(const struct tracker *t);
/* How long each start-up step took, ns. */
struct tracker_startup {
	__u64 probe_ns, load_ns, learn_ns, attach_ns;
};
void tracker_startup(const struct tracker *t, struct tracker_startup *out);
/*
 * Another tree of base's load (tree 1..MAX_TREES-1; 0 is the load's own,
 * but any free index will do when base itself measures nothing): the same
 * programs and maps, its own tree state, capped at max_entries mms and
 * processes (0: none but the maps'). tracker_close on it clears the tree
 * and leaves the load. The load's --timeline ring, if it has one, is
 * drained for one tree at a time (tracker_drain_sums).
 */
int tracker_open_tree(struct tracker *base, unsigned tree, __u64 max_entries, struct tracker **out);
unsigned tracker_tree(const struct tracker *t);
struct tree_entries {
	__u64 mms, tasks, threads;
};
/* Delete t's tree's entries from every map (and the mm filter) and reset
 * its state; removed: how many went. */
int tracker_clear_tree(struct tracker *t, struct tree_entries *removed);
/* Give t's processes' PIDs (holders, the departed) as the PID namespace
 * depth levels below peakbpf's numbers them (peakbpf serve: its client's);
 * before its roots are added. TRACKER_PID_HIDDEN: as none (0: not
 * visible). A cleared tree is back at 0: peakbpf's own. */
#define TRACKER_PID_HIDDEN 0xffffU
void tracker_set_pid_depth(struct tracker *t, unsigned depth);
/* Every tree's entries in the maps now, by tree. */
int tracker_count_trees(struct tracker *t, struct tree_entries per_tree[MAX_TREES]);
/* Detach and unload everything; NULL is fine. A tracker_open_tree tree:
 * tracker_clear_tree, then free it, leaving the load. */
void tracker_close(struct tracker *t);

#endif
