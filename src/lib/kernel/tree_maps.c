// SPDX-License-Identifier: MIT
/* A load's maps by tree (tree_maps.h): pick one tree's entries out of
 * every tree's, to count or to delete them. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "mapped_internal.h"
#include "tree_maps.h"
#include "tracker.skel.h"

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

/* Delete the entries of tree from a map keyed by key_size bytes;
 * mms also leave mm_cpu_slots and the filter. The count deleted, or -errno. */
static long clear_map(struct tracker_bpf *s, unsigned tree, struct bpf_map *map, size_t key_size,
		      size_t value_size, size_t tree_off, bool mms)
{
	void *keys = NULL;
	size_t n = 0;
	long done = 0;
	int err = tree_keys(map, key_size, value_size, tree_off, tree, &keys, &n);

	for (size_t i = 0; i < n; i++) {
		void *k = (char *)keys + i * key_size;
		__u64 mm;

		if (mms)
			bpf_map__delete_elem(s->maps.mm_cpu_slots, k, key_size, 0);
		/* An mm torn down meanwhile was deleted by the kernel, which
		 * then dropped it from the filter itself: only one of us does. */
		if (bpf_map__delete_elem(map, k, key_size, 0))
			continue;
		done++;
		if (mms) {
			memcpy(&mm, k, sizeof(mm));
			__atomic_fetch_sub(&s->bss->mm_filter[mm_filter_hash((__u32)mm)], 1,
					   __ATOMIC_SEQ_CST);
		}
	}
	free(keys);
	return err ? err : done;
}

int tree_maps_clear(struct tracker_bpf *s, unsigned tree, bool with_threads,
		    struct tree_entries *removed)
{
	struct tree_entries r = { 0 };
	long n;
	int err = 0;

	for (int pass = 0; pass < 2 && !err; pass++) {
		n = clear_map(s, tree, s->maps.task_states, sizeof(__u32), sizeof(struct task_state),
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
		n = !with_threads ? 0 :
		    clear_map(s, tree, s->maps.thread_states, sizeof(__u32), sizeof(struct thread_state),
			      offsetof(struct thread_state, tree), false);
		if (n >= 0) {
			r.threads += (__u64)n;
			n = clear_map(s, tree, s->maps.mm_states, sizeof(__u64), sizeof(struct mm_state),
				      offsetof(struct mm_state, tree), true);
		}
		if (n < 0)
			err = (int)n;
		else
			r.mms += (__u64)n;
	}
	if (removed)
		*removed = r;
	return err;
}

void tree_maps_count(struct tracker_bpf *s, bool with_threads, struct tree_entries per_tree[MAX_TREES])
{
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
	for (int m = 0; m < (with_threads ? 2 : 1); m++) {
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
}

__u64 tree_maps_tasks(struct tracker_bpf *s, unsigned tree)
{
	struct bpf_map *map = s->maps.task_states;
	__u32 key = 0, next = 0;
	struct task_state ts;
	void *prev = NULL;
	__u64 n = 0;

	while (bpf_map__get_next_key(map, prev, &next, sizeof(next)) == 0) {
		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &ts, sizeof(ts), 0) == 0)
			n += ts.tree == tree;
	}
	return n;
}

__u64 tree_maps_mms(struct tracker_bpf *s, unsigned tree, __u64 *events)
{
	struct bpf_map *map = s->maps.mm_states;
	__u64 key = 0, next = 0, n = 0;
	void *prev = NULL;

	*events = 0;
	while (bpf_map__get_next_key(map, prev, &next, sizeof(next)) == 0) {
		struct mm_state ms;

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &ms, sizeof(ms), 0) ||
		    ms.tree != tree)
			continue;
		n++;
		*events += ms.events;
	}
	return n;
}
