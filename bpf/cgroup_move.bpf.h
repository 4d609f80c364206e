/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process that moves into or out of a cgroup target (docs/design.md,
 * "Cgroup targets"): entering, it joins with its mm's rss as it is at the
 * move; leaving, its mm's rss leaves the sum at the move. A process of a
 * tree without a target (fork lineage) stays in its tree wherever it
 * moves, unless it moves into a target, which takes it. Included once, by
 * tracker.bpf.c, after enter_live_mm and leave_mm.
 */
#ifndef PEAKBPF_CGROUP_MOVE_BPF_H
#define PEAKBPF_CGROUP_MOVE_BPF_H

/* Process tgid (leader) leaves tree was: its entry, and its mm with what
 * it holds now (noted as a departure, for the holders of the window). */
static __always_inline void cg_leave(struct task_struct *leader, __u32 tgid, __u32 was)
{
	struct mm_struct *mm = BPF_CORE_READ(leader, mm);
	__u64 key = (__u64)mm;
	struct mm_state *ms;

	if (bpf_map_delete_elem(&task_states, &tgid) == 0)
		COUNT(&TREE(was)->procs_live, -1);
	if (!has_percpu_rss())
		leave_thread(BPF_CORE_READ(leader, pid));
	COUNT(&cg_stats[was & (MAX_TREES - 1)].moved_out, 1);
	if (!mm)
		return;
	ms = bpf_map_lookup_elem(&mm_states, &key);
	if (ms && ms->tree == was)
		leave_mm(mm, true);   /* a move out lowers the sum: a drop */
}

/* Process tgid (leader) enters tree now with its mm as it is; false if it
 * did not (in already, or no room). */
static __always_inline bool cg_enter(struct task_struct *leader, __u32 tgid, __u32 now)
{
	struct task_state ts = { .tree = now & (MAX_TREES - 1) };
	struct tree_state *t = TREE(now);
	int err;

	if (tree_full(t, &t->procs_live)) {
		COUNT(&t->drop_task_full, 1);
		return false;
	}
	NOTE_INSERT(now);
	err = MAP_UPDATE_ERR(bpf_map_update_elem(&task_states, &tgid, &ts, BPF_NOEXIST));
	if (err) {
		if (err != -EEXIST)
			COUNT(&t->drop_task_full, 1);
		return false;
	}
	COUNT(&t->procs_entered, 1);
	COUNT(&t->procs_live, 1);
	if (!has_percpu_rss())
		enter_thread(t, now, BPF_CORE_READ(leader, pid), false, false);
	enter_live_mm(leader, leader, tgid, now, ENTRY_SCRATCH_MOVE);
	return true;
}

/* Decide again which tree the process of task belongs to, by its leader's
 * cgroups now, and move it. */
static __always_inline void cg_reconsider(struct task_struct *task)
{
	/* Direct reads: a BTF pointer stays one, as enter_live_mm needs. */
	struct task_struct *leader = task->group_leader;
	__u32 tgid = task->tgid, was;
	struct task_state *ts;
	int now;

	if (!leader)
		return;
	now = cg_tree_of(leader);
	ts = bpf_map_lookup_elem(&task_states, &tgid);
	if (ts) {
		was = ts->tree & (MAX_TREES - 1);
		if ((int)was == now || (now < 0 && !cg_targeted(was)))
			return;
		cg_leave(leader, tgid, was);
	}
	if (now >= 0 && cg_enter(leader, tgid, (__u32)now)) {
		COUNT(&cg_stats[now & (MAX_TREES - 1)].moved_in, 1);
	}
}

/*
 * After a move: cgroup_attach_task() fires this once the task (and, with
 * threadgroup, its threads) is in dst_cgrp's css_set (kernel/cgroup/
 * cgroup.c, after cgroup_migrate). A process's membership is its leader's:
 * a thread moved alone (v1's tasks file) changes nothing unless it is the
 * leader. One lookup and at most MAX_TREES compares, per move while a
 * target is set; nothing at all otherwise.
 */
SEC("?tp_btf/cgroup_attach_task")
int BPF_PROG(handle_cgroup_attach__cgroup_targets, struct cgroup *dst, const char *path,
	     struct task_struct *task, bool threadgroup)
{
	if (!READ_ONCE(cg_targets_n))
		return 0;
	cg_reconsider(task);
	return 0;
}

/* A move of a process of a tree whose unique memory is counted, out of
 * the tree's memory cgroup: counted (note_memcg). A program of its own,
 * without calls: it loads where the cgroup targets' programs do not. */
SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(note_attach_memcg, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	__u32 tgid = task->tgid;
	struct task_state *ts;

	if (!READ_ONCE(memcg_watch_n))
		return 0;
	ts = bpf_map_lookup_elem(&task_states, &tgid);
	if (ts)
		note_memcg(task->group_leader, ts->tree);
	return 0;
}

/*
 * A child of a tree whose unique memory is counted, made in another memory
 * cgroup (clone3 with CLONE_INTO_CGROUP; a fork never moves a child):
 * counted, as a move is. A program of its own on the fork tracepoint, by
 * the parent's entry, so that handle_fork is verified as before and the
 * order of the two does not matter.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(note_fork_memcg, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid;
	struct task_state *ps;

	if (!READ_ONCE(memcg_watch_n) || ptgid == (__u32)child->tgid)
		return 0;
	ps = bpf_map_lookup_elem(&task_states, &ptgid);
	if (ps)
		note_memcg(child, ps->tree);
	return 0;
}

/*
 * Run by userspace after it entered the target's processes as roots
 * (enter_existing, with the PIDs it read from the cgroups' cgroup.procs
 * once the target was set): a process that left the target since it was
 * read (its move's event came before the entry, and found none to remove)
 * leaves now. A move after the entry was made finds it
 * (handle_cgroup_attach), and so does one after this walk.
 */
SEC("?iter/task")
int check_cgroup_members__cgroup_targets(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u32 tree = READ_ONCE(cg_walk_tree) & (MAX_TREES - 1);
	struct task_state *ts;
	__u32 tgid;

	if (!task || task->pid != task->tgid)
		return 0;
	tgid = task->tgid;
	ts = bpf_map_lookup_elem(&task_states, &tgid);
	if (ts && ts->tree == tree && cg_tree_of(task) != (int)tree)
		cg_leave(task, tgid, tree);
	return 0;
}

#endif
