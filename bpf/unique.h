/* SPDX-License-Identifier: MIT */
/*
 * The tree's unique memory (docs/design.md, "Unique memory"): shared by
 * bpf/unique.bpf.c and userspace (through the skeleton). Never includes
 * vmlinux.h; the includer provides the __u64 types, as for tracker.h.
 */
#ifndef PEAKBPF_UNIQUE_H
#define PEAKBPF_UNIQUE_H

#include "tracker.h"            /* MAX_TREES: one state per tree of the load */

/*
 * A tree cgroup's mapped anon + mapped file pages (each page counted
 * once, whoever maps it), as the memcg statistics change. MAX_TREES of
 * them in .bss (ustates), mapped by userspace, which closes a window by
 * exchanging peak with pages. One cache line each: trees measured at once
 * do not share the lines their atomics write.
 */
struct unique_state {
	__s64 pages;            /* NR_ANON_MAPPED + NR_FILE_MAPPED of the cgroup now */
	__s64 peak;             /* the running maximum of pages in this window */
	__u64 peak_races;       /* CAS retries exhausted: a peak may be lost */
	__s64 anon;             /* of pages: NR_ANON_MAPPED now */
	__s64 peak_anon;        /* of peak: anon when the peak was last raised (a
				   snapshot, for the cause of summed RSS's excess) */
	/* The tree's memory cgroup (its directory's inode number), set by
	 * userspace after its entry in the groups below, cleared before it;
	 * 0: none (no cgroup has id 0). The event path checks it again after
	 * the group's match, so a stale or half-written entry counts nowhere. */
	__u64 cgroup_id;
} __attribute__((aligned(64)));

/*
 * Which tree a memory cgroup is, found in O(1) on every memcg statistic
 * update of the machine: a direct-mapped table of UNIQUE_GROUPS groups,
 * each one 64-byte line of UNIQUE_WAYS (cgroup id, tree) entries, the
 * group chosen by a hash of the id. An event reads its group's line and
 * compares its ways: no loop over trees, no map lookup. Id 0: a free way.
 * Userspace fills a free way of the id's group (src/lib/kernel/
 * unique_table.h), or refuses the tree's figure when all are taken.
 */
/* A power of two. 16 KiB, but an event reads one line whatever the size,
 * and the lines a machine's cgroups make hot are as many as they are:
 * groups are cheap, and with 256 the MAX_TREES trees of a load overflow a
 * group's ways only on rare steps of ids (tests/unit/test_unique_table.c). */
#define UNIQUE_GROUPS 256
#define UNIQUE_GROUP_BITS 8
#define UNIQUE_WAYS 4

struct unique_group {
	__u64 id[UNIQUE_WAYS];          /* cgroup ids; 0: free */
	__u32 tree[UNIQUE_WAYS];        /* each way's tree index */
	__u32 pad[UNIQUE_WAYS];
} __attribute__((aligned(64)));

/* The group of cgroup id: Fibonacci hashing, a multiply and a shift.
 * Cgroup ids are kernfs inode numbers, consecutive cgroups' ids a step
 * apart (the files each directory holds take numbers too): the multiply
 * spreads such a progression over the groups, where the low bits alone
 * would put ids 256 apart into one group. */
static inline __u32 unique_group_of(__u64 id)
{
	return (__u32)((id * 0x9E3779B97F4A7C15ULL) >> (64 - UNIQUE_GROUP_BITS)) & (UNIQUE_GROUPS - 1);
}

/* The tree of cgroup id in its group g, or MAX_TREES: the event path's
 * compare, each way in turn, unrolled (no loop, no early exit); id is
 * never 0, a free way's. Shared so that the unit test runs this code. */
static inline __attribute__((always_inline)) __u32
unique_group_tree(const struct unique_group *g, __u64 id)
{
	__u32 tree = MAX_TREES;

	if (g->id[0] == id)
		tree = g->tree[0];
	if (g->id[1] == id)
		tree = g->tree[1];
	if (g->id[2] == id)
		tree = g->tree[2];
	if (g->id[3] == id)
		tree = g->tree[3];
	return tree;
}

/*
 * The event's fast reject (6.13+, unique_stat): a tree's cgroup by its
 * struct cgroup's address, which the event reads from the memcg it is
 * given (memcg->css.cgroup, a line the kernel has just used): no walk to
 * the kernfs node for its id, whose two structs cost an event two cold
 * pages on a machine whose TLB every fault flushes (docs/performance.md,
 * "What an event's pieces cost"). Userspace cannot know the address: the
 * event learns it, from the first update it counts by the id (the walk,
 * as before); until every tree's is learned, every event walks. So no
 * update is missed: a tree is either walked for or found by its address,
 * which its cgroup keeps for life (a memcg of the cgroup made later, as
 * when the memory controller is turned off and on, points to the same
 * cgroup). A match is checked against the state's id, as before, so an
 * address reused by a later cgroup counts nowhere.
 *
 * cgroup[tree]: 0, no tree; UNIQUE_UNLEARNED, a tree whose address is not
 * known yet (counted in pending); else the address. Exactly one side takes
 * a tree out of pending: the event, by its compare-and-swap from
 * UNLEARNED to the address; or userspace, by its exchange to 0 of an
 * UNLEARNED (unique_fast_leave). In one 256-byte block: one page.
 */
#define UNIQUE_UNLEARNED 1ULL   /* never a struct's address */
#ifdef __clang__
#define UNIQUE_UNROLL _Pragma("unroll")
#else
#define UNIQUE_UNROLL
#endif
struct unique_fast {
	__u64 cgroup[MAX_TREES];
	__u64 pending;          /* trees at UNIQUE_UNLEARNED */
} __attribute__((aligned(256)));

/* The tree whose cgroup's address is cg, or MAX_TREES: every tree
 * compared, unrolled, no early exit (as unique_group_tree). */
static inline __attribute__((always_inline)) __u32
unique_fast_tree(const struct unique_fast *f, __u64 cg)
{
	__u32 tree = MAX_TREES;

UNIQUE_UNROLL
	for (__u32 t = 0; t < MAX_TREES; t++)
		if (f->cgroup[t] == cg)
			tree = t;
	return tree;
}

#endif
