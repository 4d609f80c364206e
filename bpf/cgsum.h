/* SPDX-License-Identifier: MIT */
/*
 * Every cgroup's summed RSS, for `peakbpf agent` (issue 34; docs/design.md,
 * "Per-cgroup sums"): shared by bpf/cgsum.bpf.c and userspace
 * (src/lib/kernel/cgsum.c, through the skeleton). Never includes
 * vmlinux.h; the includer provides the __u64 types, as for tracker.h.
 */
#ifndef PEAKBPF_CGSUM_H
#define PEAKBPF_CGSUM_H

#include "tracker.h"

/* Cgroups that have a slot at once (the cardinality bound's kernel half). */
#define CG_SLOTS 4096
/* Levels an mm's pages count in: its own cgroup and up to three
 * ancestors (the container, pod or unit above a leaf), never the root. */
#define CG_DEPTH 4
#define CG_NO_SLOT 0xffffffffU

/*
 * One cgroup's sum, in .bss (cg_slots[]), mapped by userspace, which cuts
 * a window by exchanging peak with pages. A cache line each.
 */
struct cg_slot {
	__s64 pages;            /* the summed rss of the mms whose chain holds it, now */
	__s64 peak;             /* the running maximum of pages this window */
	__u64 peak_ns;          /* CLOCK_MONOTONIC when peak was last raised */
	__s64 mms;              /* mms whose chain holds this slot */
	__u64 id;               /* the cgroup's kernfs id; 0: free */
	__u16 level;            /* its depth below the hierarchy's root */
	__u16 gone;             /* rmdir seen: userspace frees it once mms is 0 */
	__u32 mark_races;       /* a new peak between an mm's mark and its add */
	__u64 peak_races;       /* peak CAS retries exhausted */
	__u64 window;           /* advanced by userspace at each cut (the marks') */
} __attribute__((aligned(64)));

/*
 * One tracked mm's part: the slots of its chain, what it added, and, per
 * level, what it held at that slot's latest peak (struct peak_mark, the
 * tracker's: noted before its first change after each new peak of the
 * slot, by the slot's window), so that userspace reads every cgroup's
 * holders at its peak after the cut, with no walk on the event path.
 */
struct cg_mm {
	__s64 applied;          /* the mm's pages added to its chain's slots */
	__u32 slot[CG_DEPTH];   /* CG_NO_SLOT past the chain's end */
	__u32 ready;            /* slot[] written (an entry is made, then filled) */
	__u32 tgid;             /* a process using it (the tracker's, at entry) */
	char comm[COMM_LEN];
	__s64 split[RSS_SLOTS]; /* applied, by counter */
	struct peak_mark mark[CG_DEPTH][2];
};

/*
 * An mm that left, with its marks: who held a peak and exited before the
 * window's cut is still read (cgsum_holders). A ring (the map cg_departed,
 * CG_DEPARTED entries for the agent, 1 otherwise), written like a seqlock:
 * seq 0 while written, seq_end == seq once whole.
 */
#define CG_DEPARTED 512
struct cg_departed {
	__u64 seq;              /* departure number; 0: being written */
	__u32 tgid;
	__u32 slot[CG_DEPTH];
	char comm[COMM_LEN];
	struct peak_mark mark[CG_DEPTH][2];
	__u64 seq_end;
};

/*
 * Free slots: a ring that userspace fills (one producer: it writes
 * free_ring[tail % CG_SLOTS], then tail) and cgroup_mkdir takes from (a
 * compare-and-swap on head). It never holds more than CG_SLOTS, so the
 * producer never writes a place a consumer still reads.
 */
struct cg_free {
	__u64 head, tail;
	__u32 ring[CG_SLOTS];
};

/* What the per-cgroup sums did, for the agent's own metrics. */
struct cg_counters {
	__u64 no_slot;          /* a cgroup made while no slot was free */
	__u64 chain_missing;    /* a level of an mm's chain without a slot */
	__u64 mm_full;          /* an mm the per-mm map had no room for */
	__u64 moves;            /* mms moved between chains */
};

#endif
