/* SPDX-License-Identifier: MIT */
/*
 * Every source of a peak figure behind one interface: the BPF tracker, a
 * cgroup's own peak counter, a /proc sampler, getrusage. Each window of a
 * run asks every open source for its figure; the best one is the result,
 * the others are recorded beside it (other_sources).
 */
#ifndef PEAKBPF_SOURCE_H
#define PEAKBPF_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FIGURE_MAX_HOLDERS 32
/* figure_reason's text, with the windows a run has no figure for */
#define FIGURE_REASON_MAX 320

/* A process holding memory at the peak (bpf only). */
struct figure_holder {
	int32_t pid;                    /* in peakbpf's PID namespace; 0: not visible there */
	char comm[16];
	uint64_t bytes;                 /* its rss at the peak */
	uint64_t own_peak_bytes;        /* its own largest rss so far */
};

/* A process that held memory at a window's peak, in pages (bpf only). */
struct holder {
	uint32_t vpid;                  /* in peakbpf's PID namespace, 0 if not visible */
	uint32_t tgid;
	int64_t pages;                  /* its rss at the peak */
	int64_t own_peak;               /* its own largest rss so far */
	char comm[16];
};

/* One source's figure for one window. Zero-initialise, then fill. */
struct figure {
	const char *source;             /* "bpf", "bpf-memcg" (unique memory), "cgroup-v2",
					   "cgroup-v1", "proc", "rusage", or "unavailable" */
	bool measured;                  /* false: no figure (peak_bytes means nothing) */
	bool exact;
	bool bound_known;               /* error_bound_bytes means something */
	uint64_t error_bound_bytes;
	const char *inexact_reason;     /* static string; NULL when exact */
	const char *scope;              /* static: what the figure covers, e.g.
					   "summed RSS of the tree", "cgroup: tree + page cache + kernel memory",
					   "largest single process (not a sum)" */
	const char *not_tree;           /* static: why the figure is not the tree's (a cgroup
					   shared with other processes, a peak from before the
					   run), so never the headline; NULL: it is the tree's */
	bool covers_run;                /* the figure covers every window so far (rusage's
					   all-time maximum, read at the end) */
	uint64_t peak_bytes;
	bool baseline_known;
	uint64_t baseline_bytes;        /* the figure when the window opened */
	/* cgroup */
	bool exclusive;                 /* the cgroup holds the tree alone */
	char cgroup_path[256];
	const char *cgroup_entry;       /* static: how the command came into its own
					   cgroup: "clone3" (made there), "self" (moved
					   its one thread), "moved" (from outside);
					   NULL: not a command's own cgroup */
	/* proc sampler */
	uint64_t interval_ns;
	uint64_t samples;
	uint64_t vanished;              /* processes that disappeared mid-read */
	/* proc sampler: hugetlb pages, not in RSS (src/base/hugetlb.h) */
	bool hugetlb_measured;
	uint64_t hugetlb_bytes;         /* the tree's, the most a sample saw */
	uint64_t hugetlb_member_bytes;  /* the most one process held in a sample */
	int32_t hugetlb_member_pid;
	char hugetlb_member_comm[16];
	/* bpf: when and what, at the peak */
	bool has_detail;
	uint64_t peak_mono_ns;          /* CLOCK_MONOTONIC of the peak */
	uint64_t anon_bytes, file_bytes, shmem_bytes;
	int64_t procs_at_peak, mms_at_peak;
	/* unique memory: part of the tree is (or was) charged to another
	 * cgroup than the one the figure counts, so its anon and shmem
	 * there are not in it (figure_unique_gap) */
	bool other_cgroups;
	/* bpf: who held the memory at the peak instant, largest first */
	bool has_holders;
	size_t n_holders;               /* listed here, at most FIGURE_MAX_HOLDERS */
	size_t holders_total;           /* address spaces that held memory at the peak */
	bool holders_truncated;         /* more mms left than the departed ring keeps:
					   some holders may be missing */
	uint64_t holders_bytes;         /* what they held together: the peak, but for
					   updates racing it */
	struct figure_holder holders[FIGURE_MAX_HOLDERS];
	/* A run's figure (figure_merge): the windows folded in, those
	 * without a figure ("2-5, 7"), and the first one's reason. */
	unsigned windows_folded, windows_unmeasured;
	char unmeasured_list[48];
	char unmeasured_why[96];
};

struct source;
struct bpf_counters;
struct sum_event;
struct tracker_tree;

/* One recorded change of the sum (struct sum_event, bpf/tracker.h). */
typedef int (*source_sum_fn)(void *ctx, const struct sum_event *e);

/*
 * What every source does, then what only some can: an optional operation
 * is NULL where the source has none (the session asks, never which source
 * it is). The bpf source has every one but refusal and tree_cgroup_fd;
 * the helper's, every one but check_sums, procs_live, tree and
 * tree_cgroup_fd; the cgroup source's, tree_cgroup_fd and command_fork.
 * Unique memory is one pair of them: the session hands the tree's own
 * cgroup (tree_cgroup_fd) to the kernel source (unique_open), whose
 * close_window closes the unique window too (unique_window reads it).
 */
struct source_ops {
	/* A process of the tree, entered before it runs anything (command
	 * mode: the forked child before exec) or at attach. */
	int (*add_root)(struct source *s, pid_t pid);
	/* Everything is entered: the first window opens now. */
	int (*start)(struct source *s);
	/* Report the window that ends now and open the next (its baseline is
	 * the figure now). Called once more at the end of the run. */
	int (*close_window)(struct source *s, struct figure *out);
	/* Command mode: the command has exec'd (the proc sampler reads the
	 * tree now: a command shorter than its interval gets a figure). NULL
	 * when a source does not care. */
	void (*command_started)(struct source *s, pid_t pid);
	/* The command has been reaped; rusage reads its figure here. NULL
	 * when a source does not care. */
	void (*command_exited)(struct source *s, pid_t pid, const void *rusage);
	void (*destroy)(struct source *s);

	/* ---- optional ---- */
	/* The tracker's counters: as the last window closed them (at_cut),
	 * or now. */
	void (*counters)(struct source *s, bool at_cut, struct bpf_counters *c);
	/* The run's end: check the incremental sums of the mms still alive
	 * against full per-CPU sums (O(mms x CPUs), once), into c. */
	void (*check_sums)(struct source *s, struct bpf_counters *c);
	/* Processes of the tree alive now (no system call). */
	int64_t (*procs_live)(struct source *s);
	/* The record of the sum: hand every change recorded since the last
	 * call to fn; drops: changes lost so far to a full ring. */
	int (*drain_sums)(struct source *s, source_sum_fn fn, void *ctx, uint64_t *drops);
	/* Who uses the mm a change names: PID in peakbpf's namespace (0 if not
	 * visible) and comm; -ENOENT when unknown. */
	int (*mm_identity)(struct source *s, uint64_t key, uint32_t tgid, uint32_t *vpid,
			   char comm[16]);
	/* The tree sum (pages) when the open window began. */
	int64_t (*window_start_pages)(struct source *s);
	/* The tree in this process's load (peakbpf serve works its clients'
	 * trees through it). */
	struct tracker_tree *(*tree)(struct source *s);
	/* Unique memory, kept by the kernel source here or on the helper's
	 * side: the tree's own cgroup, by its directory, before the first
	 * root. 0, or -errno and why[len]. */
	int (*unique_open)(struct source *s, int cgroup_dir_fd, char *why, size_t len);
	/* The unique figure of the window close_window closed last: measured,
	 * or not with its reason (inexact_reason NULL: never asked). */
	void (*unique_window)(struct source *s, struct figure *out);
	/* Command mode: the tree's own cgroup's directory, which the kernel
	 * source's unique memory counts; -1 when the tree has none. */
	int (*tree_cgroup_fd)(const struct source *s);
	/* Why the other side refused the last request ("" if it did not). */
	const char *(*refusal)(const struct source *s);
	/* Command mode: fork() for the command, its child already in the
	 * tree's cgroup when this returns (source_cgroup.c says why); -1 with
	 * errno as fork(). */
	pid_t (*command_fork)(struct source *s);
};

struct source {
	const struct source_ops *ops;
	const char *name;
};

#endif
