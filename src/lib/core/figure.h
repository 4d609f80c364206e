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
	 * CPU against the tree's values (tracker_tree__verify_sums) */
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
 * figure: the larger peak (with its detail), the first baseline, the
 * largest error bound, samples added up. Exact only if every window was
 * measured, and exactly: a window without a figure (unless a later figure
 * covers the run, covers_run) makes the run inexact with no known bound,
 * and is named in figure_reason's text.
 */
void figure_merge(struct figure *run, const struct figure *window, bool first);
/* Why f is not exact, or not measured, with the windows it has no figure
 * for ("windows 2-5 of 6 not measured (...)..."), in buf when composed;
 * NULL when exact. */
const char *figure_reason(const struct figure *f, char *buf, size_t len);

/*
 * Why summed RSS's peak exceeds the unique memory's (issue 26): pages
 * mapped by several of the tree's processes (counted once per address
 * space), and pages mapped by the tree but charged to another cgroup (file
 * pages already cached when the tree mapped them: unique memory counts the
 * tree's own cgroup only). With one address space at the peak nothing is
 * mapped twice; otherwise anon pages are the tree's own (charged to its
 * cgroup), so its anon excess is what several processes map, and the rest
 * is put to other cgroups: about, as the two peaks may fall at different
 * moments.
 */
struct unique_gap {
	uint64_t bytes;                 /* summed peak - unique peak */
	bool split_known;
	uint64_t several_bytes;         /* mapped by several of the tree's processes */
	uint64_t elsewhere_bytes;       /* charged to another cgroup */
	bool several_dominates;
};
/* false when there is no gap (either figure not measured, or unique >= summed). */
bool figure_unique_gap(const struct figure *summed, const struct figure *unique, struct unique_gap *g);

struct holder;
/* Keep the largest holders in f, largest first. */
void figure_set_holders(struct figure *f, const struct holder *in, size_t n, long page_size);

/* What the unique figure covers, for its figure.scope (docs/design.md,
 * "Unique memory"): whichever source produced it, or why none did. */
extern const char UNIQUE_SCOPE[];

/*
 * Whether to print "summed RSS counts N fork-shared pages ...": both
 * measured and the unique peak more than 10 % below summed RSS.
 */
static inline bool unique_differs(const struct figure *summed, const struct figure *unique)
{
	if (!summed->measured || !unique->measured)
		return false;
	return (double)unique->peak_bytes < 0.9 * (double)summed->peak_bytes;
}

#endif
