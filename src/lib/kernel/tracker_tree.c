// SPDX-License-Identifier: MIT
/* A tree of a load (tracker_tree.h): its slot taken and given back, its
 * processes entered, its state read, its windows cut, its changes of the
 * sum handed on. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "holders.h"
#include "mapped_internal.h"
#include "tracker_load.h"
#include "tracker_pre62.h"
#include "tracker_tree.h"
#include "task_iter.h"
#include "tree_maps.h"
#include "tracker.skel.h"

struct tracker_tree {
	struct tracker_load *load;
	struct tracker_bpf *skel;       /* the load's */
	unsigned index;         /* into hot.trees */
	__u64 departed_at_cut;  /* departed_seq when the open window began */
	__u64 mark_races_at_cut; /* the tree's mark_races then */
};

/* The tree's state in the load's mapped .bss. */
static struct tree_state *state(const struct tracker_tree *t)
{
	return &t->skel->bss->hot.trees[t->index];
}

/* The load's ring, one tree at a time (the process's load serves one run
 * after another; peakbpf serve drains every tree at once instead). */
int tracker_tree__drain_sums(struct tracker_tree *t, source_sum_fn fn, void *ctx)
{
	return tracker_load__drain(t->load, t->index, fn, ctx);
}

int tracker_tree__mm_identity(struct tracker_tree *t, __u64 key, __u32 tgid, __u32 *vpid,
			      char comm[COMM_LEN])
{
	const struct departed_mm *ring = t->skel->bss->departed;
	__u64 best = 0;
	struct mm_state ms;

	if (!bpf_map__lookup_elem(t->skel->maps.mm_states, &key, sizeof(key), &ms, sizeof(ms), 0) &&
	    ms.tgid == tgid && ms.tree == t->index) {
		*vpid = ms.vpid;
		memcpy(comm, ms.comm, COMM_LEN);
		return 0;
	}
	/* It left: the latest departure of that tgid. */
	for (size_t i = 0; i < MAX_DEPARTED; i++) {
		struct departed_mm e;

		if (!departed_read(&ring[i], &e) || e.seq <= best || e.tgid != tgid || e.tree != t->index)
			continue;
		best = e.seq;
		*vpid = e.vpid;
		memcpy(comm, e.comm, COMM_LEN);
	}
	return best ? 0 : -ENOENT;
}

static int run_syscall_prog(struct bpf_program *prog)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &run);

	return err ? err : (int)run.retval;
}

/* Reading the iterator runs enter_existing over every task; a pass enters
 * roots and children of processes already in. Repeat while a pass still
 * finds some: a child with a smaller PID than its parent (PIDs wrap) is
 * found one pass later. */
static int enter_existing_passes(struct tracker_tree *t)
{
	int err = 0;

	for (int pass = 0; pass < MAX_ITER_PASSES && !err; pass++) {
		__u64 before = LOAD(t->skel->bss->iter_entered);

		err = task_iter_run(t->skel->links.enter_existing);
		if (LOAD(t->skel->bss->iter_entered) == before)
			break;
	}
	return err;
}

/* The walk met these processes exiting: their exit event may have fired
 * before their entry was made, which would then stay for good (and a
 * reused PID's forks would join the tree). Each is dead or dying: remove
 * it; if its exit event removed it first, the delete fails and nothing
 * is counted twice. */
static void remove_dying(struct tracker_tree *t)
{
	struct bpf_map *dying = t->skel->maps.dying, *tasks = t->skel->maps.task_states;
	__u32 n = LOAD(t->skel->bss->dying_n);

	for (__u32 i = 0; i < n && i < MAX_DYING; i++) {
		struct task_state ts;
		__u32 tgid;

		if (bpf_map__lookup_elem(dying, &i, sizeof(i), &tgid, sizeof(tgid), 0) ||
		    bpf_map__lookup_elem(tasks, &tgid, sizeof(tgid), &ts, sizeof(ts), 0))
			continue;
		if (bpf_map__delete_elem(tasks, &tgid, sizeof(tgid), 0) == 0)
			__atomic_fetch_sub(&t->skel->bss->hot.trees[ts.tree & (MAX_TREES - 1)].procs_live, 1,
					   __ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&t->skel->bss->dying_n, 0, __ATOMIC_SEQ_CST);
}

int tracker_tree__add_roots(struct tracker_tree *t, const pid_t *vpids, size_t n,
			    bool enter_mm, __u32 *tgids)
{
	struct bpf_map *roots = t->skel->maps.roots;
	__u64 entered = LOAD(state(t)->mms_entered);
	int err = 0;
	size_t i;

	if (n > MAX_ROOTS)
		return -E2BIG;
	for (i = 0; i < n && !err; i++) {
		struct root_req req = { .enter_mm = enter_mm, .tree = t->index };
		__u32 key = (__u32)vpids[i];

		err = bpf_map__update_elem(roots, &key, sizeof(key), &req, sizeof(req), BPF_ANY);
	}
	if (!err)
		err = enter_existing_passes(t);
	remove_dying(t);
	/* The mms entered by the walk: take every CPU's part now. When it
	 * entered none (a command before exec: its mm, a copy of ours, is
	 * left out), nothing is to be taken, and the walk of the whole map
	 * (O(its size): 0.8 ms in peakbpf serve's) is skipped. A load of
	 * commands alone has no settle (tracker_opts.commands_only): an mm
	 * entered anyway takes each CPU's part at that CPU's next event. */
	if (!err && tracker_load__exact_path(t->load) == 0 && LOAD(state(t)->mms_entered) != entered &&
	    bpf_program__fd(t->skel->progs.settle_entered__percpu_sum) >= 0)
		err = run_syscall_prog(t->skel->progs.settle_entered__percpu_sum);
	for (i = 0; i < n && !err; i++) {
		struct root_req req = {};
		__u32 key = (__u32)vpids[i];

		err = bpf_map__lookup_elem(roots, &key, sizeof(key), &req, sizeof(req), 0);
		tgids[i] = req.found ? req.tgid : 0;
	}
	/* Roots are only for this walk: later forks follow task_states. */
	for (i = 0; i < n; i++) {
		__u32 key = (__u32)vpids[i];

		bpf_map__delete_elem(roots, &key, sizeof(key), 0);
	}
	return err;
}

void tracker_tree__read_state(const struct tracker_tree *t, struct tree_state *out)
{
	/* A copy of memory the kernel updates concurrently: each field is
	 * current, the fields together only nearly consistent. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*out = *state(t);
}

/* The reading but the mm map's entries and events, which a window's
 * close counts in its walk for the holders (each walk of a map costs
 * O(its size): ~0.5 ms in peakbpf serve's). */
static void read_but_mms(struct tracker_tree *t, struct tree_reading *out)
{
	memset(out, 0, sizeof(*out));
	tracker_tree__read_state(t, &out->tree);
	out->missed_events = tracker_load__missed_runs(t->load);
	out->task_entries = tree_maps_tasks(t->skel, t->index);
}

int tracker_tree__read(struct tracker_tree *t, struct tree_reading *out)
{
	read_but_mms(t, out);
	out->mm_entries = tree_maps_mms(t->skel, t->index, &out->events);
	out->events += out->tree.departed_events;
	return 0;
}

/*
 * Close the window that ends now and open the next. The exchange of the
 * peak with the current sum makes the cut: a peak raised before it belongs
 * to the closing window, one raised after it to the next. The window
 * number advances first, so that every mm's mark of the closing window
 * stays as it was at the cut while the holders are read from them.
 */
/* The cut itself: the closing window's peak, its context and upper end
 * into closed, the sum at the cut into *end_sum; the next window opens. */
static void cut(struct tracker_tree *t, struct tree_state *closed, __s64 *end_sum)
{
	struct tree_state *tree = state(t);
	__s64 sum, word;

	__atomic_fetch_add(&tree->window, 1, __ATOMIC_SEQ_CST);
	/* The sum word's count moves on (tracker.h): a change that read the
	 * word before this noted its mark in the closing window, and now
	 * swaps no more, so it notes again in the new one. The sum at the
	 * cut is the closing window's: raised into its peak before the
	 * exchange, as a change moving the sum away from it would. */
	word = LOAD(tree->sum_word);
	while (!__atomic_compare_exchange_n(&tree->sum_word, &word,
					    (word & ~(__s64)SUM_COUNT_MASK) | ((word + 1) & SUM_COUNT_MASK),
					    false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	sum = sum_of_word(word);
	raise_to(&tree->peak_pages, sum);
	closed->peak_pages = __atomic_exchange_n(&tree->peak_pages, sum, __ATOMIC_SEQ_CST);
	closed->peak_ns = LOAD(tree->peak_ns);
	closed->peak_mms = LOAD(tree->peak_mms);
	closed->peak_procs = LOAD(tree->peak_procs);
	*end_sum = sum;
	/* Before 6.2: the window's upper end (tracker_pre62.c). */
	if (!tracker_load__has_percpu_rss(t->load)) {
		bool read;
		unsigned fault_pages = tracker_load__fault_pages(t->load, &read);

		closed->upper_pages = tracker_pre62_cut(t->skel, t->index,
							tracker_load__possible_cpus(t->load),
							fault_pages, sum);
	}
	/* A sum reached between the load and the exchange is raised into the
	 * new window, so that it never starts below the current sum. */
	raise_to(&tree->peak_pages, sum_of_word(LOAD(tree->sum_word)));
	t->departed_at_cut = LOAD(t->skel->bss->departed_seq);
	STORE(tree->peak_ns, monotonic_ns());
	STORE(tree->peak_mms, LOAD(tree->mms_live));
	STORE(tree->peak_procs, LOAD(tree->procs_live));
}

int tracker_tree__cut(struct tracker_tree *t, struct tree_reading *closed)
{
	struct tree_state *tree = state(t);
	__u64 w = LOAD(tree->window), departed_before = t->departed_at_cut;
	__u64 races;

	read_but_mms(t, closed);
	cut(t, &closed->tree, &closed->window_end_sum);
	closed->holders_err = holders_at_peak(t->skel, t->index, w, closed->tree.peak_pages,
					      departed_before, closed->holders, MAX_HOLDERS,
					      &closed->holders_info);
	/* Counted in the holders' walk, just after the cut; an mm that left
	 * during it may count in both (events are a diagnostic). */
	closed->mm_entries = closed->holders_info.mm_entries;
	closed->events = closed->holders_info.mm_events + LOAD(state(t)->departed_events);
	/* A change that lost every swap of the sum (tracker.bpf.c,
	 * note_and_add) may have noted its mark against an older peak. */
	races = LOAD(tree->mark_races);
	if (races != t->mark_races_at_cut)
		closed->holders_info.truncated = true;
	t->mark_races_at_cut = races;
	return 0;
}

int tracker_tree__verify_sums(struct tracker_tree *t, struct sum_check *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (tracker_load__exact_path(t->load))
		return -EOPNOTSUPP;
	err = run_syscall_prog(t->skel->progs.verify_sums__percpu_sum);
	if (err)
		return err < 0 ? err : -EFAULT;
	*out = t->skel->bss->check;
	return 0;
}

int tracker_tree__open_window(struct tracker_tree *t, __s64 *sum)
{
	struct tree_state before;

	cut(t, &before, sum);
	t->mark_races_at_cut = LOAD(state(t)->mark_races);
	return 0;
}

/* The slot's last tree was cleared at its free, but a fork whose handler
 * found the parent before that walk deleted it can have entered the child
 * behind the walk: such entries go now, when hardly any can be made (a
 * new one needs a process of the tree: all went at the free but such a
 * child, which this walk takes first). The walk zeroes the state, so
 * whatever a late event left goes too; departures before now are not this
 * tree's. No entry was tried since the walk at the free began
 * (tree_insertions): none can be left, and the state alone is zeroed (the
 * walks cost O(map size): 262,144 buckets in peakbpf serve's maps, ~3.5
 * ms a tree). */
static int take_slot(struct tracker_tree *t)
{
	if (LOAD(t->skel->bss->tree_insertions[t->index]) ==
	    tracker_load__cleared_at(t->load, t->index)) {
		memset(state(t), 0, sizeof(struct tree_state));
		tracker_pre62_clear(t->skel, t->index);
		STORE(t->skel->bss->tree_pid_depth[t->index], 0);
		return 0;
	}
	return tracker_tree__clear(t, NULL);
}

int tracker_tree__add(struct tracker_load *l, unsigned index, __u64 max_entries,
		      struct tracker_tree **out)
{
	struct tracker_tree *t;
	int err;

	*out = NULL;
	if (index >= MAX_TREES)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->load = l;
	t->skel = tracker_load__skel(l);
	t->index = index;
	err = take_slot(t);
	if (err) {
		free(t);
		return err;
	}
	STORE(state(t)->max_entries, max_entries);
	STORE(t->skel->bss->tree_record[index],
	      tracker_load__has_ring(l) && !tracker_load__record_per_tree(l));
	t->departed_at_cut = LOAD(t->skel->bss->departed_seq);
	t->mark_races_at_cut = 0;
	*out = t;
	return 0;
}

int tracker_tree__clear(struct tracker_tree *t, struct tree_entries *removed)
{
	struct tracker_bpf *s = t->skel;
	/* Entries tried before this instant are in the maps for the walks
	 * to find; one tried later makes the count move on. */
	__u64 tried = LOAD(s->bss->tree_insertions[t->index]);
	int err;

	/* No fork or move joins the tree by its cgroup from here on (as
	 * tracker_clear_cgroup, cgroup_target.c). */
	if (__atomic_exchange_n(&s->bss->cg_targets[t->index].id, 0, __ATOMIC_SEQ_CST))
		__atomic_fetch_sub(&s->bss->cg_targets_n, 1, __ATOMIC_SEQ_CST);
	err = tree_maps_clear(s, t->index, !tracker_load__has_percpu_rss(t->load), removed);

	memset(state(t), 0, sizeof(struct tree_state));
	tracker_pre62_clear(s, t->index);
	STORE(s->bss->tree_pid_depth[t->index], 0);
	STORE(s->bss->tree_record[t->index], 0);
	STORE(s->bss->tree_readers[t->index].judge, 0);
	tracker_load__set_cleared_at(t->load, t->index, err ? ~0ULL : tried);
	return err;
}

void tracker_tree__set_pid_depth(struct tracker_tree *t, unsigned depth)
{
	STORE(t->skel->bss->tree_pid_depth[t->index], depth);
}

int tracker_tree__set_record(struct tracker_tree *t, bool on)
{
	if (!tracker_load__has_ring(t->load))
		return -EOPNOTSUPP;
	STORE(t->skel->bss->tree_record[t->index], on);
	return 0;
}

void tracker_tree__set_reader(struct tracker_tree *t, uid_t uid, gid_t gid)
{
	struct tree_reader *r = &t->skel->bss->tree_readers[t->index];

	/* Off while the ids change: no change is judged against half of them. */
	STORE(r->judge, 0);
	STORE(r->uid, (__u32)uid);
	STORE(r->gid, (__u32)gid);
	STORE(r->judge, 1);
}

struct tracker_load *tracker_tree__load(const struct tracker_tree *t)
{
	return t->load;
}

unsigned tracker_tree__index(const struct tracker_tree *t)
{
	return t->index;
}

void tracker_tree__free(struct tracker_tree *t)
{
	if (!t)
		return;
	tracker_tree__clear(t, NULL);
	free(t);
}
