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
 * Why summed RSS's peak exceeds the unique memory's (issues 26 and 33), by
 * the kind of page (docs/design.md, "Unique memory"):
 * - anon and shmem (memfd, POSIX and SysV shm, MAP_SHARED anonymous
 *   memory) are the tree's own, charged to its cgroup when the tree made
 *   them: their excess is pages mapped by several of its processes. With
 *   one address space at the peak nothing is mapped twice, so it is pages
 *   charged to another cgroup; and where part of the tree is charged to
 *   another cgroup (unique->other_cgroups) the two are not told apart.
 * - file pages (page cache) are charged to the cgroup that read them first
 *   (a library another cgroup had cached), or mapped by several: the two
 *   are not told apart.
 * Unique memory counts shmem among its file pages (NR_FILE_MAPPED), so its
 * file part goes to summed RSS's shmem first. About: the two peaks may fall
 * at different moments, so each part is capped at what is left of the gap.
 */
enum gap_cause {
	GAP_SEVERAL,            /* anon and shmem mapped by several of the tree's processes */
	GAP_ELSEWHERE,          /* anon and shmem charged to another cgroup */
	GAP_SEVERAL_OR_ELSEWHERE, /* either: the tree spans cgroups and maps pages twice */
	GAP_CACHE,              /* file pages cached by another cgroup, or mapped by several */
	GAP_CAUSES
};
struct unique_gap {
	uint64_t bytes;                 /* summed peak - unique peak */
	bool split_known;               /* false: no breakdown to split by */
	uint64_t part[GAP_CAUSES];      /* bytes of each cause; they add up to bytes */
	enum gap_cause dominant;
};
/* The causes' names, as the summary and the record say them. */
const char *gap_cause_name(enum gap_cause c);
/* false when there is no gap (either figure not measured, or unique >= summed). */
bool figure_unique_gap(const struct figure *summed, const struct figure *unique, struct unique_gap *g);

/*
 * The tree's own cgroup (cg, exclusive and comparable) against the tree's
 * figures: its peak counts each page charged to it once, with page cache
 * and kernel memory, and the pages of cgroups below it; the unique memory
 * (or, without it, summed RSS) is what the tree maps. They disagree when
 * they differ by more than 10 % and more than 2 MiB + 1 MiB a process at
 * the peak (the tolerance of the bytes a process touches besides its
 * shape, tests/integration/lib.sh): *diff is cg - reference, *against
 * "unique memory" or "summed RSS". false: they agree, or cannot be compared.
 */
bool figure_cgroup_disagrees(const struct figure *cg, const struct figure *summed,
			     const struct figure *unique, int64_t *diff, const char **against);

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
