/* SPDX-License-Identifier: MIT */
/*
 * What a figure means: whether a bpf figure is exact or how far off it may
 * be, who held the memory at its peak, and each window's figure folded
 * into the whole run's.
 */
#ifndef PEAKBPF_FIGURE_H
#define PEAKBPF_FIGURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "host.h"
#include "source.h"

/* What fed the bpf source, over the whole run so far. */
struct bpf_counters {
	uint64_t events, missed_events;
	uint64_t drop_mm_full, drop_task_full, peak_races;
	uint64_t mms_entered, procs_entered;
	uint64_t mms_left, procs_left;  /* kernel map entries at the end */
	uint64_t count_takes, settles;  /* 6.2+ exact path: slot folds taken, mms settled */
	uint64_t read_errors;           /* counter reads that failed */
	/* run record, exact path: every live mm's counters summed over every
	 * CPU against the tree's values (tracker_verify_sums) */
	bool sums_checked;
	uint64_t sums_mms, sums_off;
	int64_t sums_max_off_pages;
};

/*
 * Worst-case lag, in pages, of one mm's resident counters read without
 * their per-CPU parts on a 6.2+ kernel: each of the three counters can have
 * up to batch - 1 pages in each CPU's slot, batch = max(32, 2 * ncpus)
 * (lib/percpu_counter.c, compute_batch_value()).
 */
uint64_t percpu_rss_lag_pages(int ncpus);

/*
 * Judge a bpf figure: exact, bound, reason. bound_pages is how far the
 * peak may be off: 0 when every counter is kept exact from its per-CPU
 * slots, else what the counters read without them may lag. Drops or
 * missed events make the bound unknown; so does a kernel before 6.2, whose
 * per-thread rss caches BPF cannot see.
 */
void figure_judge_bpf(struct figure *f, const struct bpf_counters *c,
		      const struct host_facts *h, int64_t bound_pages);

/*
 * Fold one window's figure of a source into that source's whole-run
 * figure: the larger peak (with its detail), the first baseline, exact only
 * if every window was, the largest error bound, samples added up.
 */
void figure_merge(struct figure *run, const struct figure *window, bool first);

struct holder;
/* Keep the largest holders in f, largest first. */
void figure_set_holders(struct figure *f, const struct holder *in, size_t n, long page_size);

#endif
