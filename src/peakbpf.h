/* SPDX-License-Identifier: MIT */
/*
 * libpeakbpf: the library the CLI stands on. The tracker loads the BPF
 * programs, enters processes into a tree and reads the tree's state.
 */
#ifndef PEAKBPF_H
#define PEAKBPF_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "tracker.h"

struct tracker;

struct tracker_opts {
	__u32 max_tracked;      /* entries of the mm and process maps; 0: default */
};

/* A consistent-enough copy of one tree's kernel state, plus facts about
 * the programs that fed it. */
struct tree_reading {
	struct tree_state tree;
	__u64 missed_events;    /* program runs the kernel skipped (recursion) */
	__u64 mm_entries;       /* entries now in the mm map (all trees) */
	__u64 task_entries;     /* entries now in the process map */
};

/* Open, load and attach. Returns 0 or a negative errno; on failure *out is
 * NULL and nothing stays loaded. */
int tracker_open(const struct tracker_opts *opts, struct tracker **out);
/* Enter a process (by global tgid) into tree 0. Its mm enters at its next
 * exec or, for processes forked from it, at fork. */
int tracker_add_process(struct tracker *t, pid_t tgid);
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

#endif
