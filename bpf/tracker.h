/* SPDX-License-Identifier: MIT */
/*
 * Types shared by the kernel side (tracker.bpf.c) and userspace (tracker.c).
 * Never include vmlinux.h here: userspace includes this file too.
 */
#ifndef PEAKBPF_TRACKER_H
#define PEAKBPF_TRACKER_H

#define MAX_TREES 8
#define DEFAULT_MAX_TRACKED 16384
#define MAX_CPUS 1024           /* exact per-CPU sums cover this many CPUs */

/* The resident counters that make up rss; MM_SWAPENTS is not resident. */
enum rss_slot {
	RSS_FILE,
	RSS_ANON,
	RSS_SHMEM,
	RSS_SLOTS,
};

#define COMM_LEN 16
#define MAX_HOLDERS 256         /* processes listed in a peak snapshot */
#define SNAP_STEP_DIVISOR 64    /* snapshot again after the peak grew 1/64 */

/*
 * The gate: could the tree sum pass the peak if this counter, read cheaply
 * as now (it was stored as stored, with stored_lag), is off by up to lag,
 * given the sum and the lag of every counter in the tree? Only then is the
 * exact per-CPU sum worth its O(ncpu) cost.
 */
static inline bool cheap_read_could_raise_peak(__s64 sum, __s64 tree_lag, __s64 peak,
					       __s64 stored, __s64 stored_lag,
					       __s64 now, __s64 lag)
{
	return sum - stored + now + tree_lag - stored_lag + lag > peak;
}

/* The error bound of a window's peak, in pages, from its tree state. */
static inline __s64 peak_bound_pages(__s64 peak, __s64 peak_lag, __s64 upper)
{
	__s64 over = upper - peak;

	return peak_lag > over ? peak_lag : over > 0 ? over : 0;
}

/* One address space in a tree, keyed by its struct mm_struct pointer. */
struct mm_state {
	__u32 tree;
	__u32 tgid;                 /* a process using this mm (global PID) */
	__u32 vpid;                 /* ...in peakbpf's PID namespace, 0 if not visible */
	__u32 pad;
	__s64 pages[RSS_SLOTS];     /* counter values last applied to the sum */
	__s64 lag[RSS_SLOTS];       /* how far each may be from the truth, pages */
	__s64 own_peak;             /* this mm's own largest rss, pages */
	char comm[COMM_LEN];
};

/* A process in a peak snapshot. */
struct holder {
	__u32 vpid;
	__u32 tgid;
	__s64 pages;                /* its rss when the snapshot was taken */
	__s64 own_peak;
	char comm[COMM_LEN];
};

/* One process (thread group) in a tree, keyed by its tgid. */
struct task_state {
	__u32 tree;
	__u32 pad;
};

/* A process to enter, by its PID in peakbpf's own PID namespace; the task
 * iterator fills in what it found. */
struct root_req {
	__u32 tree;
	__u32 enter_mm;             /* 0: the command before exec (its mm is a copy of peakbpf's) */
	__u32 found;
	__u32 tgid;                 /* its global tgid, when found */
};

#define MAX_ROOTS 256
#define MAX_ITER_PASSES 64      /* enter_existing passes over all tasks, at most */

/*
 * One tree. Lives in .bss, which userspace maps: it reads it directly and
 * closes a window with atomic operations on the same memory.
 */
struct tree_state {
	__s64 sum_pages;                    /* tree sum now */
	__s64 peak_pages;                   /* running maximum of sum this window */
	__u64 peak_ns;                      /* CLOCK_MONOTONIC when peak was set */
	__s64 pages[RSS_SLOTS];             /* tree sum by counter, now */
	__s64 peak_breakdown[RSS_SLOTS];    /* ...when the peak was set */
	__s64 peak_mms;                     /* mms in the tree at the peak */
	__s64 peak_procs;                   /* processes in the tree at the peak */
	__s64 mms_live;
	__s64 mms_max;                      /* most mms at once, for the error bound */
	__s64 procs_live;
	__u64 mms_entered;
	__u64 procs_entered;
	__u64 events;                       /* rss_stat events applied */
	__u64 drop_mm_full;                 /* an mm could not be entered: map full */
	__u64 drop_task_full;               /* a process could not be entered */
	__u64 peak_races;                   /* peak CAS retries exhausted */
	__s64 lag_pages;                    /* sum of the mms' lag: how far the sum may be off */
	/* How far the window's peak may be off: the lag when it was set, and
	 * how high the sum could have been while the gate was open (stored
	 * sum + lag), which matters only where it passes the peak. */
	__s64 peak_lag_pages;
	__s64 upper_pages;
	__u64 exact_reads;                  /* counters summed over every CPU */
	__u64 cheap_reads;                  /* counters read without their per-CPU parts */
	/* Who held the memory: a snapshot of every mm, retaken each time the
	 * peak grows by a step (max(snap_step_min_pages, peak / 64)). */
	__u64 snap_seq;                     /* odd while a snapshot is written */
	__u64 snap_lock;
	__s64 snap_sum_pages;               /* the sum it was taken at; 0: none this window */
	__u64 snap_ns;
	__u32 snap_count;
	__u32 snap_truncated;               /* more mms than MAX_HOLDERS */
	__u64 snapshots;                    /* snapshots taken, for the cost */
	__u64 record_drops;                 /* sum changes the ring buffer had no room for */
	__u64 tree_refreshes;               /* walks reading other mms' cheap counters exactly */
};

/* One change of tree 0's sum, recorded for --compare-sampler. */
struct sum_event {
	__u64 ns;
	__s64 sum_pages;
};

#endif
