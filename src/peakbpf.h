/* SPDX-License-Identifier: MIT */
/*
 * libpeakbpf: the library the CLI stands on. The tracker loads the BPF
 * programs, enters processes into a tree and reads the tree's state.
 */
#ifndef PEAKBPF_H
#define PEAKBPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "tracker.h"

struct tracker;

struct tracker_opts {
	__u32 max_tracked;      /* entries of the mm and process maps; 0: default */
	__u32 record_ring_bytes;        /* record every change of the sum in a ring
					   of this size (a power of 2 of pages); 0: off */
};

typedef int (*tracker_sum_fn)(void *ctx, __u64 ns, __s64 sum_pages);

/* The latest snapshot of who held the tree's memory. */
struct holders_info {
	__u32 count;
	bool truncated;         /* more mms than MAX_HOLDERS */
	__s64 sum_pages;        /* the tree sum when it was taken */
	__u64 taken_ns;
	__u64 snapshots;        /* snapshots taken so far */
};

/* A consistent-enough copy of one tree's kernel state, plus facts about
 * the programs that fed it. */
struct tree_reading {
	struct tree_state tree;
	__u64 missed_events;    /* program runs the kernel skipped (recursion) */
	__u64 mm_entries;       /* entries now in the mm map (all trees) */
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
 * Enter processes into tree 0 by their PIDs in peakbpf's PID namespace,
 * with every existing descendant (by fork lineage) and its mm as it is now.
 * With enter_mm false the roots' own mms are left out: the command, stopped
 * before exec, still has a copy of peakbpf's. tgids[i] receives each root's
 * global tgid, or 0 if no such process was found.
 */
int tracker_add_roots(struct tracker *t, const pid_t *vpids, size_t n,
		      bool enter_mm, __u32 *tgids);
/* Read the window that ends now and open the next: its peak starts from
 * the sum at this instant. */
int tracker_close_window(struct tracker *t, struct tree_reading *closed);
/* The latest holders snapshot (seqlock read). -EOPNOTSUPP without
 * bpf_for_each_map_elem (before 5.13). */
int tracker_read_holders(struct tracker *t, struct holder *out, size_t max, struct holders_info *info);
bool tracker_has_attribution(const struct tracker *t);
/* Hand every recorded change of the sum, oldest first, to fn. */
int tracker_drain_sums(struct tracker *t, tracker_sum_fn fn, void *ctx);
/* CLOCK_MONOTONIC in ns, the clock of the kernel side's timestamps. */
__u64 monotonic_ns(void);
int tracker_read(struct tracker *t, struct tree_reading *out);
/* Which program removes an mm at teardown: "tp_btf/exit_mmap" or
 * "fentry/exit_mmap". */
const char *tracker_teardown_hook(const struct tracker *t);
/* True when this kernel keeps rss in percpu_counters (6.2+). */
bool tracker_rss_is_percpu(const struct tracker *t);
/* 0 when counters near the peak are summed over every CPU (exact), else
 * why not: -EOPNOTSUPP (kernel before 6.2 or without the helpers), -E2BIG
 * (more CPUs than covered), or the error of learning the per-CPU offsets. */
int tracker_exact_path(const struct tracker *t);
/* Detach and unload everything; NULL is fine. */
void tracker_close(struct tracker *t);

/* The bpf source (source.h) built on the tracker. */
struct source;
struct host_facts;
struct bpf_counters;

struct bpf_source_opts {
	__u32 max_tracked;
	__u32 record_ring_bytes;
	bool command_mode;      /* roots are commands stopped before exec */
};

/* Opens, loads and attaches; fills host's BPF facts. host must outlive it. */
int bpf_source_open(const struct bpf_source_opts *o, struct host_facts *host,
		    struct source **out);
void bpf_source_counters(struct source *s, struct bpf_counters *c);
/* Processes of the tree alive now, or -1. */
int64_t bpf_source_procs_live(struct source *s);
/* --compare-sampler: drain the record into the trace (pages); drops so far. */
struct sum_trace;
int bpf_source_drain_trace(struct source *s, struct sum_trace *trace, uint64_t *drops);
/* The open window's baseline, pages. */
int64_t bpf_source_window_start_pages(struct source *s);

#endif
