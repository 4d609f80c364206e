// SPDX-License-Identifier: MIT
/* The BPF tracker's trees at work: enter processes, read the tree, close
 * windows, hand on the record of the sum. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "tracker_internal.h"
#include "unique_api.h"
#include "tracker.skel.h"

/* A tree of a shared load drains the load's ring: one tree at a time (the
 * process's load serves one run after another; peakbpf serve has none). */
int tracker_drain_sums(struct tracker *t, source_sum_fn fn, void *ctx)
{
	struct tracker *owner = t->base ? t->base : t;
	int n;

	if (!owner->sums)
		return -EOPNOTSUPP;
	owner->sum_fn = fn;
	owner->sum_ctx = ctx;
	owner->drain_tree = t->tree;
	n = ring_buffer__consume(owner->sums);
	owner->sum_fn = NULL;
	return n < 0 ? n : 0;
}

int tracker_drain_every_tree(struct tracker *t, source_sum_fn fn, void *ctx)
{
	int n;

	if (t->base || !t->sums)
		return -EOPNOTSUPP;
	t->sum_fn = fn;
	t->sum_ctx = ctx;
	t->drain_tree = TRACKER_EVERY_TREE;
	n = ring_buffer__consume(t->sums);
	t->sum_fn = NULL;
	return n < 0 ? n : 0;
}

int tracker_mm_identity(struct tracker *t, __u64 key, __u32 tgid, __u32 *vpid, char comm[COMM_LEN])
{
	const struct departed_mm *ring = t->skel->bss->departed;
	__u64 best = 0;
	struct mm_state ms;

	if (!bpf_map__lookup_elem(t->skel->maps.mm_states, &key, sizeof(key), &ms, sizeof(ms), 0) &&
	    ms.tgid == tgid && ms.tree == t->tree) {
		*vpid = ms.vpid;
		memcpy(comm, ms.comm, COMM_LEN);
		return 0;
	}
	/* It left: the latest departure of that tgid. */
	for (size_t i = 0; i < MAX_DEPARTED; i++) {
		struct departed_mm e;

		if (!departed_read(&ring[i], &e) || e.seq <= best || e.tgid != tgid || e.tree != t->tree)
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
static int enter_existing_passes(struct tracker *t)
{
	char buf[64];
	int err = 0;

	for (int pass = 0; pass < MAX_ITER_PASSES && !err; pass++) {
		__u64 before = LOAD(t->skel->bss->iter_entered);
		int fd = bpf_iter_create(bpf_link__fd(t->skel->links.enter_existing));

		if (fd < 0)
			return -errno;
		for (;;) {
			ssize_t r = read(fd, buf, sizeof(buf));

			if (r == 0)
				break;
			if (r < 0 && errno != EINTR && errno != EAGAIN) {
				err = -errno;
				break;
			}
		}
		close(fd);
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
static void remove_dying(struct tracker *t)
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

int tracker_add_roots(struct tracker *t, const pid_t *vpids, size_t n,
		      bool enter_mm, __u32 *tgids)
{
	struct bpf_map *roots = t->skel->maps.roots;
	__u64 entered = LOAD(TREE_OF(t)->mms_entered);
	int err = 0;
	size_t i;

	if (n > MAX_ROOTS)
		return -E2BIG;
	for (i = 0; i < n && !err; i++) {
		struct root_req req = { .enter_mm = enter_mm, .tree = t->tree };
		__u32 key = (__u32)vpids[i];

		err = bpf_map__update_elem(roots, &key, sizeof(key), &req, sizeof(req), BPF_ANY);
	}
	if (!err)
		err = enter_existing_passes(t);
	remove_dying(t);
	/* The mms entered by the walk: take every CPU's part now. When it
	 * entered none (a command before exec: its mm, a copy of ours, is
	 * left out), nothing is to be taken, and the walk of the whole map
	 * (O(its size): 0.8 ms in peakbpf serve's) is skipped. */
	if (!err && t->exact_err == 0 && LOAD(TREE_OF(t)->mms_entered) != entered)
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

/* The processes of t's tree in the map now. */
static __u64 live_tasks(struct tracker *t)
{
	struct bpf_map *map = t->skel->maps.task_states;
	__u32 key = 0, next = 0;
	struct task_state ts;
	void *prev = NULL;
	__u64 n = 0;

	while (bpf_map__get_next_key(map, prev, &next, sizeof(next)) == 0) {
		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &ts, sizeof(ts), 0) == 0)
			n += ts.tree == t->tree;
	}
	return n;
}

/* The mms in the map now, and the events they have applied. */
static __u64 live_mms(struct tracker *t, __u64 *events)
{
	struct bpf_map *map = t->skel->maps.mm_states;
	__u64 key = 0, next = 0, n = 0;
	void *prev = NULL;

	*events = 0;
	while (bpf_map__get_next_key(map, prev, &next, sizeof(next)) == 0) {
		struct mm_state ms;

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &ms, sizeof(ms), 0) ||
		    ms.tree != t->tree)
			continue;
		n++;
		*events += ms.events;
	}
	return n;
}

/* The tracker's programs' skipped runs; the unique program's lose nothing
 * (bpf/unique.bpf.c says why). */
static __u64 missed_runs(struct tracker_bpf *s)
{
	struct bpf_program *prog;
	__u64 n = 0;

	bpf_object__for_each_program(prog, s->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (unique_owns_prog(s, prog))
			continue;
		if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
			n += info.recursion_misses;
	}
	return n;
}

void tracker_read_tree(struct tracker *t, struct tree_state *out)
{
	/* A copy of memory the kernel updates concurrently: each field is
	 * current, the fields together only nearly consistent. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*out = *TREE_OF(t);
}

/* The reading but the mm map's entries and events, which a window's
 * close counts in its walk for the holders (each walk of a map costs
 * O(its size): ~0.5 ms in peakbpf serve's). */
static void read_but_mms(struct tracker *t, struct tree_reading *out)
{
	memset(out, 0, sizeof(*out));
	tracker_read_tree(t, &out->tree);
	out->missed_events = missed_runs(t->skel);
	out->task_entries = live_tasks(t);
}

int tracker_read(struct tracker *t, struct tree_reading *out)
{
	read_but_mms(t, out);
	out->mm_entries = live_mms(t, &out->events);
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
static void cut(struct tracker *t, struct tree_state *closed, __s64 *end_sum)
{
	struct tree_state *tree = TREE_OF(t);
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
	if (!t->features.has_percpu_rss)
		closed->upper_pages = tracker_pre62_cut(t, sum);
	/* A sum reached between the load and the exchange is raised into the
	 * new window, so that it never starts below the current sum. */
	raise_to(&tree->peak_pages, sum_of_word(LOAD(tree->sum_word)));
	t->departed_at_cut = LOAD(t->skel->bss->departed_seq);
	STORE(tree->peak_ns, monotonic_ns());
	STORE(tree->peak_mms, LOAD(tree->mms_live));
	STORE(tree->peak_procs, LOAD(tree->procs_live));
}

int tracker_close_window(struct tracker *t, struct tree_reading *closed)
{
	struct tree_state *tree = TREE_OF(t);
	__u64 w = LOAD(tree->window), departed_before = t->departed_at_cut;
	__u64 races;

	read_but_mms(t, closed);
	cut(t, &closed->tree, &closed->window_end_sum);
	closed->holders_err = tracker_holders_at_peak(t, w, closed->tree.peak_pages, departed_before,
						      closed->holders, MAX_HOLDERS, &closed->holders_info);
	/* Counted in the holders' walk, just after the cut; an mm that left
	 * during it may count in both (events are a diagnostic). */
	closed->mm_entries = closed->holders_info.mm_entries;
	closed->events = closed->holders_info.mm_events + LOAD(TREE_OF(t)->departed_events);
	/* A change that lost every swap of the sum (tracker.bpf.c,
	 * note_and_add) may have noted its mark against an older peak. */
	races = LOAD(tree->mark_races);
	if (races != t->mark_races_at_cut)
		closed->holders_info.truncated = true;
	t->mark_races_at_cut = races;
	return 0;
}

int tracker_verify_sums(struct tracker *t, struct sum_check *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (t->exact_err)
		return -EOPNOTSUPP;
	err = run_syscall_prog(t->skel->progs.verify_sums__percpu_sum);
	if (err)
		return err < 0 ? err : -EFAULT;
	*out = t->skel->bss->check;
	return 0;
}

int tracker_open_window(struct tracker *t, __s64 *sum)
{
	struct tree_state before;

	cut(t, &before, sum);
	t->mark_races_at_cut = LOAD(TREE_OF(t)->mark_races);
	return 0;
}
