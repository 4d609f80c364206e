/* SPDX-License-Identifier: MIT */
/*
 * The table that finds a memory cgroup's tree on the event path
 * (bpf/unique.h, struct unique_group): userspace's side, pure (no BPF, no
 * skeleton), so that tests/unit/test_unique_table.c checks it on a plain
 * array. The BPF side reads the table while it changes: every store is
 * atomic, a way's tree before its id, its id cleared first. One writer at
 * a time: a load's trees are opened and closed by one thread (peakbpf
 * serve is one; a process's load serves one session at a time).
 */
#ifndef PEAKBPF_UNIQUE_TABLE_H
#define PEAKBPF_UNIQUE_TABLE_H

#include <errno.h>
#include <linux/types.h>
#include "unique.h"

/*
 * Enter cgroup id as tree's, in a free way of its group. 0; -EINVAL for id
 * 0 (a free way's) or a tree out of range; -EEXIST when the id is in the
 * table already (a cgroup is one tree's); -ENOSPC when its group's
 * UNIQUE_WAYS ways are all taken (by other trees' cgroups that hash alike).
 */
static inline int unique_table_insert(struct unique_group groups[UNIQUE_GROUPS], __u64 id, __u32 tree)
{
	struct unique_group *g = &groups[unique_group_of(id)];
	int free_way = -1;

	if (!id || tree >= MAX_TREES)
		return -EINVAL;
	for (int w = UNIQUE_WAYS - 1; w >= 0; w--) {
		__u64 have = __atomic_load_n(&g->id[w], __ATOMIC_SEQ_CST);

		if (have == id)
			return -EEXIST;
		if (!have)
			free_way = w;
	}
	if (free_way < 0)
		return -ENOSPC;
	__atomic_store_n(&g->tree[free_way], tree, __ATOMIC_SEQ_CST);
	__atomic_store_n(&g->id[free_way], id, __ATOMIC_SEQ_CST);
	return 0;
}

/* Free the way that holds cgroup id for tree: 0, or -ENOENT when there is
 * none (another tree's way of the same id is left alone). */
static inline int unique_table_remove(struct unique_group groups[UNIQUE_GROUPS], __u64 id, __u32 tree)
{
	struct unique_group *g = &groups[unique_group_of(id)];

	if (!id)
		return -ENOENT;
	for (int w = 0; w < UNIQUE_WAYS; w++) {
		if (__atomic_load_n(&g->id[w], __ATOMIC_SEQ_CST) == id &&
		    __atomic_load_n(&g->tree[w], __ATOMIC_SEQ_CST) == tree) {
			__atomic_store_n(&g->id[w], 0, __ATOMIC_SEQ_CST);
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * The fast reject's side of a tree (bpf/unique.h, struct unique_fast).
 * A tree enters unlearned, before its state's id is set: pending first,
 * so that an event that could count the tree walks for it until the event
 * path learns its cgroup's address. It leaves after its state's id is
 * cleared: its word to 0, and pending down if it was still unlearned (the
 * event path, whose compare-and-swap from UNLEARNED can no longer win,
 * then does not take it down too).
 */
static inline void unique_fast_enter(struct unique_fast *f, __u32 tree)
{
	__atomic_fetch_add(&f->pending, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&f->cgroup[tree & (MAX_TREES - 1)], UNIQUE_UNLEARNED, __ATOMIC_SEQ_CST);
}

static inline void unique_fast_leave(struct unique_fast *f, __u32 tree)
{
	if (__atomic_exchange_n(&f->cgroup[tree & (MAX_TREES - 1)], 0, __ATOMIC_SEQ_CST) ==
	    UNIQUE_UNLEARNED)
		__atomic_fetch_sub(&f->pending, 1, __ATOMIC_SEQ_CST);
}

#endif
