/* SPDX-License-Identifier: MIT */
/*
 * What the tracker's own parts share, and nothing outside src/lib/kernel
 * uses: tracker_load.c loads the object, tracker_trees.c opens and clears
 * trees of it, tracker.c closes windows, holders.c reads who
 * held the peak from its maps, unique.c reads the unique program's state.
 */
#ifndef PEAKBPF_TRACKER_INTERNAL_H
#define PEAKBPF_TRACKER_INTERNAL_H

#include <stdbool.h>
#include <string.h>
#include "kfeatures.h"
#include "tracker_api.h"
#include "oom.h"

/* The BPF side's mapped state is shared with it: every access is atomic. */
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)

/* A slot of the departed ring, read like a seqlock: false while the kernel
 * writes it (seq 0), or when it changed under the copy. */
static inline bool departed_read(const struct departed_mm *slot, struct departed_mm *out)
{
	__u64 seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);

	if (!seq)
		return false;
	memcpy(out, slot, sizeof(*out));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) == seq && out->seq == seq;
}

/* Raise *peak to v unless it is larger already (the BPF side raises it too). */
static inline void raise_to(__s64 *peak, __s64 v)
{
	__s64 seen = LOAD(*peak);

	while (v > seen && !__atomic_compare_exchange_n(peak, &seen, v, false,
							__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

struct ring_buffer;

/* A load (base NULL), or a tree of one (tracker_open_tree). tracker_load.c
 * makes and closes loads, tracker_trees.c trees, tracker.c works them;
 * holders.c and unique.c read the skeleton's state through it (the files
 * that use skel's members include tracker.skel.h). */
struct tracker {
	struct tracker_bpf *skel;
	struct tracker *base;   /* tracker_open_tree: the load this tree shares, else NULL */
	unsigned tree;          /* index into hot.trees: 0 for the load's own */
	struct tracker_features features;
	int exact_err;          /* 0: the exact per-CPU path is on */
	int unique_err;         /* the unique program: 0 loaded and attached; -ENODATA
				   not asked for; -EOPNOTSUPP no memcg statistic
				   tracepoint; else its load error */
	struct bpf_link *settle_links[2];
	__u64 departed_at_cut;  /* departed_seq when the open window began */
	__u64 mark_races_at_cut; /* the tree's mark_races then */
	struct tracker_startup startup;
	struct ring_buffer *sums;       /* --compare-sampler's record */
	source_sum_fn sum_fn;
	void *sum_ctx;
	unsigned drain_tree;            /* the tree whose changes a drain hands on
					   (TRACKER_EVERY_TREE: all) */
	bool record_per_tree;           /* the ring records only trees that ask */
	/* A load's: each tree's tree_insertions when its last clear began
	 * (0 for a new load, where no tree has an entry). */
	__u64 cleared_at[MAX_TREES];
	/* The OOM recorder (oom_api.h, oom.c): a load's. */
	int oom_level;                  /* enum oom_level the load has */
	int oom_err;                    /* why not more: -ENODATA not asked for, else
					   the load's error with the part left out */
	struct ring_buffer *oom_ring;
	int (*oom_fn)(void *ctx, const struct oom_event *e);
	void *oom_ctx;
	__u64 oom_handed;
	/* The per-cgroup sums (cgsum_api.h, cgsum.c): a load's, for the agent. */
	char cgsum_mount[128];
	struct bpf_link *cgsum_links[5];
};

#define TRACKER_EVERY_TREE (~0U)

/* t's tree in the load's mapped .bss (needs tracker.skel.h). */
#define TREE_OF(t) (&(t)->skel->bss->hot.trees[(t)->tree])

/* Who held memory at peak `peak` of window w (holders.c). */
int tracker_holders_at_peak(struct tracker *t, __u64 w, __s64 peak, __u64 departed_since,
			    struct holder *out, size_t max, struct holders_info *info);

#endif
