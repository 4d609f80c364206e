/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cgroup targets (bpf/cgroup_target.h; docs/design.md, "Cgroup targets"):
 * which tree, if any, a process belongs to by where its memory is charged.
 * Decided at fork, at a move (cgroup_attach_task) and by the start-up
 * walk, never on the rss_stat path, which stays filter -> mm state -> tree.
 * Membership reads one ancestor id at the target's own level: O(1) in the
 * depth of the hierarchy, O(MAX_TREES) per fork at most.
 * Included once, by tracker.bpf.c (one compilation unit: one .bss).
 */
#ifndef PEAKBPF_TRACKER_CGROUP_BPF_H
#define PEAKBPF_TRACKER_CGROUP_BPF_H

#include "cgroup_target.h"

struct cg_target cg_targets[MAX_TREES];        /* set by userspace, per tree */
struct cg_stats cg_stats[MAX_TREES];
__u32 cg_targets_n;                             /* trees with a target: 0, nothing to decide */
__u32 cg_walk_tree;                             /* the tree check_cgroup_members walks for */
/*
 * Unique memory counts the pages charged to one memory cgroup, the tree's
 * own (bpf/unique.bpf.c). A process of the tree whose memory cgroup is
 * another one (moved, or made in another by clone3) has its new pages
 * charged there, not counted: each such event is counted here, per tree,
 * for userspace to call the unique figure inexact (src/lib/kernel/unique.c).
 * Set by userspace with the unique state: the memory cgroup's kernfs id.
 */
__u64 tree_memcg_id[MAX_TREES];
__u64 tree_elsewhere[MAX_TREES];
__u32 memcg_watch_n;                            /* trees with tree_memcg_id set */

/* Whether tree has a cgroup target: its members are decided by cgroup,
 * not by fork lineage. */
static __always_inline bool cg_targeted(__u32 tree)
{
	return READ_ONCE(cg_targets[tree & (MAX_TREES - 1)].id) != 0;
}

/* A process's cgroup in hier: v2's from its css_set, v1's the memory
 * controller's (where v1 charges its pages). NULL if none. */
static __always_inline struct cgroup *task_cgroup_in(struct task_struct *task, __u32 hier)
{
	struct css_set *cset = BPF_CORE_READ(task, cgroups);
	struct cgroup_subsys_state *css = NULL;
	__u64 id;

	if (!cset)
		return NULL;
	if (hier == CG_HIER_V2)
		return BPF_CORE_READ(cset, dfl_cgrp);
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return NULL;    /* no memory controller built in */
	id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	if (bpf_probe_read_kernel(&css, sizeof(css),
				  (void *)cset + bpf_core_field_offset(struct css_set, subsys) +
				  id * sizeof(css)))
		return NULL;
	return css ? BPF_CORE_READ(css, cgroup) : NULL;
}

/* The kernfs id of cg's ancestor at level (cg itself at its own level),
 * 0 if cg is shallower. One read at an index: no walk. */
static __always_inline __u64 cgroup_ancestor_id(struct cgroup *cg, __u32 level)
{
	if (!cg || level > CG_MAX_LEVEL || BPF_CORE_READ(cg, level) < (int)level)
		return 0;
	return cgroup_ancestor_at(cg, level);   /* compat.bpf.h: by kernel */
}

/*
 * The tree whose target holds the process whose leader is at leader_addr
 * (its cgroups), or -1. At most MAX_TREES compares, on the entry paths
 * only. Inlined into the two global functions below, which the verifier
 * checks once each, on their own, not once per caller and per path into
 * them (inlined into handle_fork, the loop took that program from 5,215 to
 * 26,269 verified instructions). So the leader comes as a number (a probe
 * read's result), every read of it is a probe read, and the locals are few:
 * before 6.18 the stacks of a chain of calls add up (512 bytes), and
 * handle_fork's own is 312.
 */
static __always_inline int cg_tree_of_leader(__u64 leader_addr)
{
	struct task_struct *leader = (struct task_struct *)leader_addr;
	struct cgroup *v2, *v1;

	if (!leader)
		return -1;
	v2 = task_cgroup_in(leader, CG_HIER_V2);
	v1 = task_cgroup_in(leader, CG_HIER_V1_MEMORY);
	/* Not unrolled: sixteen copies would each keep their own stack slots. */
#pragma clang loop unroll(disable)
	for (int i = 0; i < MAX_TREES; i++) {
		__u64 id = READ_ONCE(cg_targets[i].id), except = READ_ONCE(cg_targets[i].except_id);
		struct cgroup *c = cg_targets[i].hier ? v1 : v2;
		__u32 level = cg_targets[i].level;

		if (id && cgroup_ancestor_id(c, level) == id &&
		    (!except || cgroup_ancestor_id(c, level + 1) != except))
			return i;
	}
	return -1;
}

__noinline int cg_tree_of_addr(__u64 leader_addr)
{
	if (!READ_ONCE(cg_targets_n))
		return -1;
	return cg_tree_of_leader(leader_addr);
}

static __always_inline int cg_tree_of(struct task_struct *task)
{
	if (!READ_ONCE(cg_targets_n))
		return -1;
	return cg_tree_of_addr((__u64)BPF_CORE_READ(task, group_leader));
}

/*
 * The tree of a new process (fork, or the walk meeting a child) whose
 * leader is at leader_addr and whose parent is in tree parent_tree (-1: in
 * none): the target that holds it; else none when the parent's tree has a
 * target (the child was made in another cgroup: clone3 CLONE_INTO_CGROUP);
 * else the parent's, by lineage. Global, as cg_tree_of_addr: one result,
 * one path on in handle_fork (inlined, its branches doubled that
 * program's verified instructions).
 */
__noinline int cg_child_tree_addr(__u64 leader_addr, int parent_tree)
{
	int t;

	if (!READ_ONCE(cg_targets_n))
		return parent_tree;
	t = cg_tree_of_leader(leader_addr);
	if (t >= 0)
		return t;
	return parent_tree >= 0 && cg_targeted((__u32)parent_tree) ? -1 : parent_tree;
}

static __always_inline int cg_child_tree(struct task_struct *child, int parent_tree)
{
	return cg_child_tree_addr((__u64)BPF_CORE_READ(child, group_leader), parent_tree);
}

/* A process of tree now outside the tree's memory cgroup: counted. The
 * memcg's cgroup, as the unique program names it (memcg->css.cgroup). */
static __always_inline void note_memcg(struct task_struct *leader, __u32 tree)
{
	__u64 want = READ_ONCE(tree_memcg_id[tree & (MAX_TREES - 1)]);
	struct cgroup *cg;

	if (!want)
		return;
	cg = task_cgroup_in(leader, CG_HIER_V1_MEMORY);
	if (cg && BPF_CORE_READ(cg, kn, id) != want)
		COUNT(&tree_elsewhere[tree & (MAX_TREES - 1)], 1);
}

#endif
