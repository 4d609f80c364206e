// SPDX-License-Identifier: MIT
/* Trees of one load (peakbpf serve's clients, a process's runs): open one
 * on a free index, clear its entries from the shared maps, count them. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "tracker_internal.h"
#include "tracker.skel.h"

int tracker_open_tree(struct tracker *base, unsigned tree, __u64 max_entries, struct tracker **out)
{
	struct tracker *t;
	int err;

	*out = NULL;
	if (base->base || tree >= MAX_TREES)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = *base;
	t->base = base;
	t->tree = tree;
	t->sums = NULL;         /* the load's ring stays its own */
	t->sum_fn = NULL;
	memset(t->settle_links, 0, sizeof(t->settle_links));
	/* The slot's last tree was cleared at its close, but a fork whose
	 * handler found the parent before that walk deleted it can have
	 * entered the child behind the walk: such entries go now, when
	 * hardly any can be made (a new one needs a process of the tree:
	 * all went at the close but such a child, which this walk takes
	 * first). The walk zeroes the
	 * state, so whatever a late event left goes too; departures before
	 * now are not this tree's. No entry was tried since the walk at the
	 * close began (tree_insertions): none can be left, and the state
	 * alone is zeroed (the walks cost O(map size): 262,144 buckets in
	 * peakbpf serve's maps, ~3.5 ms a tree). */
	if (LOAD(t->skel->bss->tree_insertions[tree]) == base->cleared_at[tree]) {
		memset(TREE_OF(t), 0, sizeof(struct tree_state));
		tracker_pre62_clear(t);
		STORE(t->skel->bss->tree_pid_depth[tree], 0);
	} else {
		err = tracker_clear_tree(t, NULL);
		if (err) {
			free(t);
			return err;
		}
	}
	STORE(TREE_OF(t)->max_entries, max_entries);
	STORE(t->skel->bss->tree_record[tree], base->sums && !base->record_per_tree);
	t->departed_at_cut = LOAD(t->skel->bss->departed_seq);
	t->mark_races_at_cut = 0;
	*out = t;
	return 0;
}

/* The keys of a map whose value's tree (a __u32 at tree_off) is tree. */
static int tree_keys(struct bpf_map *map, size_t key_size, size_t value_size, size_t tree_off,
		     unsigned tree, void **keys, size_t *n)
{
	__u64 key = 0, next = 0, value[32];
	size_t cap = 0;
	void *prev = NULL;
	int err = 0;

	*keys = NULL;
	*n = 0;
	if (value_size > sizeof(value))
		return -E2BIG;
	while (!err && bpf_map__get_next_key(map, prev, &next, key_size) == 0) {
		__u32 owner;

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, key_size, value, value_size, 0))
			continue;
		memcpy(&owner, (char *)value + tree_off, sizeof(owner));
		if (owner != tree)
			continue;
		if (*n == cap) {
			void *v = realloc(*keys, (cap ? cap * 2 : 64) * key_size);

			if (!v) {
				err = -ENOMEM;
				break;
			}
			*keys = v;
			cap = cap ? cap * 2 : 64;
		}
		memcpy((char *)*keys + *n * key_size, &key, key_size);
		(*n)++;
	}
	return err;
}

/* Delete the entries of t's tree from a map keyed by key_size bytes;
 * mms also leave mm_cpu_slots and the filter. The count deleted, or -errno. */
static long clear_map(struct tracker *t, struct bpf_map *map, size_t key_size, size_t value_size,
		      size_t tree_off, bool mms)
{
	void *keys = NULL;
	size_t n = 0;
	long done = 0;
	int err = tree_keys(map, key_size, value_size, tree_off, t->tree, &keys, &n);

	for (size_t i = 0; i < n; i++) {
		void *k = (char *)keys + i * key_size;
		__u64 mm;

		if (mms)
			bpf_map__delete_elem(t->skel->maps.mm_cpu_slots, k, key_size, 0);
		/* An mm torn down meanwhile was deleted by the kernel, which
		 * then dropped it from the filter itself: only one of us does. */
		if (bpf_map__delete_elem(map, k, key_size, 0))
			continue;
		done++;
		if (mms) {
			memcpy(&mm, k, sizeof(mm));
			__atomic_fetch_sub(&t->skel->bss->mm_filter[mm_filter_hash((__u32)mm)], 1,
					   __ATOMIC_SEQ_CST);
		}
	}
	free(keys);
	return err ? err : done;
}

/*
 * Remove t's tree from the load's maps: one walk of each map, processes
 * first (so that no fork adds to the tree behind the walk), then threads
 * (before 6.2) and mms, then processes again for a fork that raced the
 * first walk. Then the tree's state starts over. O(every map's size).
 */
int tracker_clear_tree(struct tracker *t, struct tree_entries *removed)
{
	struct tracker_bpf *s = t->skel;
	struct tracker *load = t->base ? t->base : t;
	/* Entries tried before this instant are in the maps for the walks
	 * below to find; one tried later makes the count move on. */
	__u64 tried = LOAD(s->bss->tree_insertions[t->tree]);
	struct tree_entries r = { 0 };
	long n;
	int err = 0;

	for (int pass = 0; pass < 2 && !err; pass++) {
		n = clear_map(t, s->maps.task_states, sizeof(__u32), sizeof(struct task_state),
			      offsetof(struct task_state, tree), false);
		if (n < 0) {
			err = (int)n;
			break;
		}
		r.tasks += (__u64)n;
		if (pass)
			break;
		/* Threads have entries only before 6.2 (bpf/tracker.h,
		 * thread_state): on 6.2+ that map stays empty, and each walk
		 * costs O(its size). */
		n = tracker_has_percpu_rss(t) ? 0 :
		    clear_map(t, s->maps.thread_states, sizeof(__u32), sizeof(struct thread_state),
			      offsetof(struct thread_state, tree), false);
		if (n >= 0) {
			r.threads += (__u64)n;
			n = clear_map(t, s->maps.mm_states, sizeof(__u64), sizeof(struct mm_state),
				      offsetof(struct mm_state, tree), true);
		}
		if (n < 0)
			err = (int)n;
		else
			r.mms += (__u64)n;
	}
	memset(TREE_OF(t), 0, sizeof(struct tree_state));
	tracker_pre62_clear(t);
	STORE(s->bss->tree_pid_depth[t->tree], 0);
	STORE(s->bss->tree_record[t->tree], 0);
	load->cleared_at[t->tree] = err ? ~0ULL : tried;
	if (removed)
		*removed = r;
	return err;
}

int tracker_count_trees(struct tracker *t, struct tree_entries per_tree[MAX_TREES])
{
	struct tracker_bpf *s = t->skel;
	__u64 key = 0, next = 0;
	void *prev = NULL;

	memset(per_tree, 0, MAX_TREES * sizeof(*per_tree));
	while (bpf_map__get_next_key(s->maps.mm_states, prev, &next, sizeof(next)) == 0) {
		struct mm_state ms;

		key = next;
		prev = &key;
		if (!bpf_map__lookup_elem(s->maps.mm_states, &key, sizeof(key), &ms, sizeof(ms), 0))
			per_tree[ms.tree & (MAX_TREES - 1)].mms++;
	}
	for (int m = 0; m < (tracker_has_percpu_rss(t) ? 1 : 2); m++) {
		struct bpf_map *map = m ? s->maps.thread_states : s->maps.task_states;
		__u32 k = 0, nk = 0;

		prev = NULL;
		while (bpf_map__get_next_key(map, prev, &nk, sizeof(nk)) == 0) {
			struct thread_state th;
			struct task_state ts;

			k = nk;
			prev = &k;
			if (m && !bpf_map__lookup_elem(map, &k, sizeof(k), &th, sizeof(th), 0))
				per_tree[th.tree & (MAX_TREES - 1)].threads++;
			else if (!m && !bpf_map__lookup_elem(map, &k, sizeof(k), &ts, sizeof(ts), 0))
				per_tree[ts.tree & (MAX_TREES - 1)].tasks++;
		}
	}
	return 0;
}

void tracker_set_pid_depth(struct tracker *t, unsigned depth)
{
	STORE(t->skel->bss->tree_pid_depth[t->tree], depth);
}

int tracker_set_record(struct tracker *t, bool on)
{
	const struct tracker *load = t->base ? t->base : t;

	if (!load->sums)
		return -EOPNOTSUPP;
	STORE(t->skel->bss->tree_record[t->tree], on);
	return 0;
}
