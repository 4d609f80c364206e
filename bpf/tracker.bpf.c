// SPDX-License-Identifier: GPL-2.0
/*
 * peakbpf kernel side: keeps each tree's summed rss and its running maximum,
 * updated on every change of a tracked mm's rss counters. One load keeps
 * MAX_TREES trees; each entry names its own, so an event costs one more
 * load to find it.
 *
 * Rules (docs/design.md): per-mm state is keyed by the mm pointer, because
 * rss_stat often fires from another task's context (fork copies, exit
 * zaps, reclaim); an mm leaves the tree at teardown (exit_mmap), not at
 * process exit, because mm addresses are reused; untracked events are
 * rejected before any map lookup, because rss_stat fires on every fault.
 * Everything on the rss_stat path is O(1): no map walk, no loop over CPUs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "tracker.h"
#include "compat.bpf.h"

#include "tracker_maps.bpf.h"
#include "tracker_tree.bpf.h"
#include "tracker_event.bpf.h"
#include "tracker_cgroup.bpf.h"

SEC("tp_btf/rss_stat")
int BPF_PROG(handle_rss_stat, struct mm_struct *mm, int member)
{
	__u64 key = (__u64)mm;
	struct mm_state *ms;

	if (!READ_ONCE(mm_filter[mm_filter_slot(mm)]))
		return 0;       /* not ours: the common case, keep it first */
	ms = bpf_map_lookup_elem(&mm_states, &key);
	if (!ms)
		return 0;
	/* On the mm's own cache line, which the event writes anyway: a tree
	 * counter would be one more line shared by every faulting CPU. */
	COUNT(&ms->events, 1);
	apply_event(ms, mm, key, rss_slot_of_member(member));
	if (!has_percpu_rss())
		pre62_after_event();    /* after the drop, if it was one: pre62_drop */
	return 0;
}

/*
 * Before 6.2: a tracked thread's cache is read as it leaves its CPU (prev
 * is the current task here), and it is marked on a CPU as it comes on one
 * (docs/design.md, "The bound before 6.2"). Filter first: one load of the
 * mm filter per task, as in rss_stat; kernel threads have no mm. Attached
 * only before 6.2 (tracker_load.c): nothing runs at a switch on 6.2+.
 * Arguments 1 and 2 on every kernel (5.18 added prev_state after them).
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(handle_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	if (has_percpu_rss())
		return 0;
	if (pre62_maybe_tracked(prev))
		pre62_switch_out(prev);
	if (pre62_maybe_tracked(next))
		pre62_switch_in(next);
	return 0;
}

/*
 * A fork: the child joins its parent's tree; with by_cgroup (a constant),
 * where trees are cgroups, the tree whose cgroup it was born in
 * (tracker_cgroup.bpf.h). Two programs, so that the one without makes no
 * call: the verifiers of 5.10, 6.1 and 6.12 add the stacks of the calls to
 * this program's (448 bytes) and refuse the sum; there handle_fork loads.
 */
static __always_inline int fork_into(struct task_struct *parent, struct task_struct *child, bool by_cgroup)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct task_state cs = {}, *ps;
	struct tree_state *t;
	int err, tree;

	if (ptgid == ctgid && has_percpu_rss())
		return 0;
	ps = bpf_map_lookup_elem(&task_states, &ptgid);
	tree = ps ? (int)(ps->tree & (MAX_TREES - 1)) : -1;
	if (by_cgroup && ptgid != ctgid)
		tree = cg_child_tree(child, tree);
	else if (tree >= 0 && cg_targeted(tree))
		return 0;       /* no cgroup programs: a target takes no child */
	if (tree < 0)
		return 0;
	cs.tree = (__u32)tree & (MAX_TREES - 1);
	t = TREE(cs.tree);
	if (ptgid == ctgid) {
		/* A thread: same process, same mm; before 6.2 its own cache
		 * (empty: copy_process() clears it). */
		enter_thread(t, cs.tree, child->pid, true, false);
		return 0;
	}
	if (tree_full(t, &t->procs_live)) {
		/* Not a drop if the attach walk entered it (below). */
		if (!bpf_map_lookup_elem(&task_states, &ctgid))
			COUNT(&t->drop_task_full, 1);
		return 0;
	}
	NOTE_INSERT(cs.tree);
	err = MAP_UPDATE_ERR(bpf_map_update_elem(&task_states, &ctgid, &cs, BPF_NOEXIST));
	if (err && err != -EEXIST) {
		COUNT(&t->drop_task_full, 1);
		return 0;
	}
	/* EEXIST: the attach walk met the child (in the task list since
	 * copy_process) before this event, and entered and counted it; its
	 * threads and mm below are then already in too. */
	if (!err) {
		COUNT(&t->procs_entered, 1);
		COUNT(&t->procs_live, 1);
		/* Every tree's: a branch here would verify enter_mm twice. */
		COUNT(&cg_stats[cs.tree & (MAX_TREES - 1)].forked_in, 1);
	}
	if (!has_percpu_rss())
		enter_thread(t, cs.tree, child->pid, true, false);
	/* The child's copied pages were counted (from the parent's context)
	 * before this event: enter_mm takes them now. A vfork or CLONE_VM
	 * child shares an mm that is already in: enter_mm sees EEXIST. */
	enter_mm(child, child->mm, ctgid, cs.tree, ENTRY_SCRATCH_FORK);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	return fork_into(parent, child, false);
}

SEC("?tp_btf/sched_process_fork")
int BPF_PROG(handle_fork__cgroup_targets, struct task_struct *parent, struct task_struct *child)
{
	return fork_into(parent, child, true);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid, tree;
	struct task_state *ts = bpf_map_lookup_elem(&task_states, &tgid);

	/* The new image enters; the old mm leaves at its own teardown. */
	if (!ts)
		return 0;
	tree = ts->tree & (MAX_TREES - 1);
	if (!has_percpu_rss()) {
		/* exec_mmap() synced the cache into the old mm. A thread
		 * other than the leader that execs takes the leader's PID. */
		leave_thread(old_pid);
		enter_thread(TREE(tree), tree, p->pid, true, true);
	}
	enter_mm(p, p->mm, tgid, tree, ENTRY_ON_STACK);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;
	struct task_state *ts;
	__u32 tree;

	/* Before 6.2: exit_mm() synced this thread's cache (before this
	 * tracepoint, do_exit()). */
	if (!has_percpu_rss())
		leave_thread(p->pid);
	/* Only the last thread's exit ends the process. signal->live is
	 * decremented before this tracepoint on every kernel; the group_dead
	 * argument exists only on newer ones. The task's mm may already be
	 * gone here (before 6.16): nothing below needs it. */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	ts = bpf_map_lookup_elem(&task_states, &tgid);
	if (!ts)
		return 0;
	tree = ts->tree;
	if (bpf_map_delete_elem(&task_states, &tgid) == 0)
		COUNT(&TREE(tree)->procs_live, -1);
	return 0;
}

/* Keep what a leaving mm held, for the holders of this window's peak. */
static __always_inline void note_departure(struct tree_state *t, struct mm_state *ms)
{
	__u64 seq = (__u64)atomic_add_return((__s64 *)&departed_seq, 1);
	struct departed_mm *e = &departed[(seq - 1) & (MAX_DEPARTED - 1)];

	COUNT(&t->departed_seq, 1);
	WRITE_ONCE(e->seq, 0);          /* userspace skips it while written */
	e->tgid = ms->tgid;
	e->tree = ms->tree;
	e->vpid = ms->vpid;
	e->own_peak = ms->own_peak;
	__builtin_memcpy(e->mark, ms->mark, sizeof(e->mark));
	__builtin_memcpy(e->comm, ms->comm, COMM_LEN);
	WRITE_ONCE(e->seq, seq);
}

/* drop: before 6.2, note the drop (pre62_drop): at teardown. The attach
 * walk, which removes an mm it entered as it raced with its exit, does
 * not (its stack has no 8 bytes for it; docs/design.md). */
static __always_inline void leave_mm(struct mm_struct *mm, bool drop)
{
	__u64 key = (__u64)mm;
	struct mm_state *ms = bpf_map_lookup_elem(&mm_states, &key);
	struct tree_state *t;
	__s64 d[RSS_SLOTS], total = 0, after;

	if (!ms)
		return;
	t = TREE(ms->tree);
	CFG_SAFE_LOOP
	for (int slot = 0; slot < RSS_SLOTS; slot++) {
		d[slot] = -READ_ONCE(ms->pages[slot]);
		total += d[slot];
	}
	after = apply_deltas(ms, key, d, NULL);
	/* The sum before, from this change's own result: a re-read would miss
	 * another CPU's drop in between (two children exiting at once). */
	if (drop && !has_percpu_rss() && total < 0)
		pre62_drop(ms->tree, pre62_before(after, total));
	COUNT(&t->departed_events, READ_ONCE(ms->events));
	note_departure(t, ms);
	bpf_map_delete_elem(&mm_cpu_slots, &key);
	if (bpf_map_delete_elem(&mm_states, &key) == 0) {
		COUNT(&mm_filter[mm_filter_slot(mm)], -1);
		COUNT(&t->mms_live, -1);
	}
}

/*
 * mm teardown. The mmap:exit_mmap tracepoint came with the maple tree (6.1,
 * commit d4af56c5c7c6, "mm: start tracking VMAs with maple tree"), fired
 * after the pages are unmapped; older kernels get fentry on exit_mmap()
 * instead. has_exit_mmap_tp picks one (tracker.c, load_variants).
 */
SEC("fentry/exit_mmap")
int BPF_PROG(handle_exit_mmap, struct mm_struct *mm)
{
	leave_mm(mm, true);
	return 0;
}

SEC("?tp_btf/exit_mmap")
int BPF_PROG(handle_exit_mmap__exit_mmap_tp, struct mm_struct *mm)
{
	leave_mm(mm, true);
	return 0;
}

#define PF_EXITING 0x00000004       /* include/linux/sched.h, since 2.6 */

/*
 * Enter a live task's mm, named after its process (leader). An exiting
 * task is skipped: its mm may be torn down already, and an entry made after
 * the teardown would stay, pointing at freed memory. exit_mm() clears
 * task->mm before the mm's teardown, so if task->mm is still this mm after
 * the entry, the teardown comes later and removes it; if not, it may have
 * run already, and the entry goes now.
 */
static __always_inline void enter_live_mm(struct task_struct *task, struct task_struct *leader,
					  __u32 tgid, __u32 tree, int scratch)
{
	struct mm_struct *mm = task->mm;

	if (!mm || (task->flags & PF_EXITING))
		return;
	enter_mm(leader, mm, tgid, tree, scratch);
	if (task->mm != mm)
		leave_mm(mm, false);
}

/* A thread of a tracked process: its mm is the process's, entered already
 * through the leader, unless the leader has exited (pthread_exit), which
 * leaves the leader without an mm while the threads run on. Its tree in
 * *tree; false when the process is not tracked. */
static __always_inline bool enter_thread_of(struct task_struct *task, __u32 tgid, __u32 *tree)
{
	struct task_state *ts = bpf_map_lookup_elem(&task_states, &tgid);

	if (!ts)
		return false;
	*tree = ts->tree & (MAX_TREES - 1);
	if (!has_percpu_rss())
		enter_thread(TREE(*tree), *tree, task->pid, false, false);
	return true;
}

/* A process moving between cgroups (uses enter_live_mm, leave_mm). */
#include "cgroup_move.bpf.h"

/* A process (leader) met by the walk: a root, or a child of one; entered
 * into task_states. Its tree in *tree; whether its mm is entered next. */
static __always_inline bool enter_process(struct task_struct *task, __u32 tgid, __u32 *tree)
{
	struct task_struct *me = (struct task_struct *)bpf_get_current_task();
	struct pid *mypid = BPF_CORE_READ(me, thread_pid);
	unsigned int level = BPF_CORE_READ(mypid, level);
	struct task_state ts = {}, *ps, *cur;
	struct tree_state *t;
	struct root_req *req;
	__u32 vpid, ptgid;
	__u64 ns = 0;
	int err;

	bpf_probe_read_kernel(&ns, sizeof(ns),
			      (void *)mypid + bpf_core_field_offset(struct pid, numbers) +
			      (__u64)level * sizeof(struct upid) + offsetof(struct upid, ns));
	caller_pidns = ns;
	caller_pidns_level = level;
	vpid = ns ? pid_in_ns(task, ns, level) : 0;   /* ns 0 would match any */
	req = vpid ? bpf_map_lookup_elem(&roots, &vpid) : NULL;
	if (req) {
		req->found = 1;
		req->tgid = tgid;
		ts.tree = req->tree & (MAX_TREES - 1);
	} else {
		/* A child of a process already in the tree. The walk goes by
		 * PID, and a child usually has a larger PID than its parent,
		 * so one pass takes most trees whole; userspace repeats the
		 * pass while it still finds processes (PIDs wrap). */
		ptgid = BPF_CORE_READ(task, real_parent, tgid);
		ps = bpf_map_lookup_elem(&task_states, &ptgid);
		/* A tree with a cgroup target takes no child by lineage:
		 * its processes come as roots (cgroup_target.c). */
		if (!ps || cg_targeted(ps->tree))
			return false;
		ts.tree = ps->tree & (MAX_TREES - 1);
	}
	t = TREE(ts.tree);
	NOTE_INSERT(ts.tree);
	err = tree_full(t, &t->procs_live) ? -1 :
	      MAP_UPDATE_ERR(bpf_map_update_elem(&task_states, &tgid, &ts, BPF_NOEXIST));
	if (!err) {
		COUNT(&t->procs_entered, 1);
		COUNT(&t->procs_live, 1);
		COUNT(&iter_entered, 1);
	} else {
		/* In already (a tree keeps what it entered first). */
		cur = bpf_map_lookup_elem(&task_states, &tgid);
		if (!cur) {
			/* In when we tried, gone now: it exited meanwhile,
			 * nothing lost. Otherwise the tree or map is full. */
			if (err != -EEXIST)
				COUNT(&t->drop_task_full, 1);
			return false;
		}
		ts.tree = cur->tree & (MAX_TREES - 1);
		t = TREE(ts.tree);
	}
	/* Its last thread is exiting (signal->live drops to 0 before
	 * sched_process_exit): the entry stays for this walk, so that its
	 * children are found, and goes after it. One reader runs the walk: a
	 * plain increment. */
	if (BPF_CORE_READ(task, signal, live.counter) == 0) {
		__u32 i = dying_n;

		if (i < MAX_DYING && bpf_map_update_elem(&dying, &i, &tgid, BPF_ANY) == 0)
			dying_n = i + 1;
	}
	if (!has_percpu_rss())
		enter_thread(t, ts.tree, task->pid, false, false);
	*tree = ts.tree;
	return !req || req->enter_mm;
}

/*
 * Run by userspace (read through an iterator fd) after it filled roots:
 * enter every process that is a root, or descends from one by fork
 * lineage, with its mm as it is now. The programs are attached before this
 * runs, so a fork racing with the walk is caught by handle_fork instead;
 * entries are NOEXIST, so meeting a process twice is harmless. PIDs are
 * matched in the namespace of the process reading the iterator: peakbpf.
 * A thread and a process share the one copy of the mm's entry below.
 */
SEC("iter/task")
int enter_existing(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct task_struct *leader;
	__u32 tgid, tree = 0;
	bool enter;

	if (!task)
		return 0;
	tgid = task->tgid;
	if ((__u32)task->pid != tgid) {
		enter = enter_thread_of(task, tgid, &tree);
		leader = BPF_CORE_READ(task, group_leader);
	} else {
		enter = enter_process(task, tgid, &tree);
		leader = task;
	}
	if (enter)
		enter_live_mm(task, leader, tgid, tree & (MAX_TREES - 1), ENTRY_ON_STACK);
	return 0;
}

/* The programs that loop over CPUs, off the rss_stat path. */
#include "percpu_sum.bpf.h"
