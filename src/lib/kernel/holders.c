// SPDX-License-Identifier: MIT
/*
 * Who held the memory at a window's peak: each mm's mark (tracker.h, struct
 * peak_mark), read after the cut, for the mms in the map and those that
 * left since the window began. Off the event path: one map walk per
 * closed window (tracker_tree__cut): not only when a report is made.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "holders.h"
#include "mapped_internal.h"
#include "tracker.skel.h"

struct holder_list {
	struct holder *v;
	size_t n, cap;
	__s64 sum_pages;
	__s64 breakdown[RSS_SLOTS];
};

static int list_add(struct holder_list *l, const struct holder *h, const __s64 by_slot[RSS_SLOTS])
{
	for (int i = 0; i < RSS_SLOTS; i++)
		l->breakdown[i] += by_slot[i];
	if (h->pages <= 0)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct holder *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *h;
	l->sum_pages += h->pages;
	return 0;
}

static void holder_from(struct holder *h, __u32 tgid, __u32 vpid, __s64 own_peak, const char *comm,
			__s64 pages)
{
	h->tgid = tgid;
	h->vpid = vpid;
	h->own_peak = own_peak;
	h->pages = pages;
	memcpy(h->comm, comm, sizeof(h->comm));
	h->comm[sizeof(h->comm) - 1] = '\0';
}

static int add_live(struct tracker_bpf *skel, unsigned tree, __u64 w, __s64 peak, struct holder_list *l,
		    struct holders_info *info)
{
	struct bpf_map *map = skel->maps.mm_states;
	__u64 key = 0, next;
	void *prev = NULL;
	int err = 0;

	while (!err && bpf_map__get_next_key(map, prev, &next, sizeof(next)) == 0) {
		struct mm_state ms;
		struct holder h;
		__s64 by_slot[RSS_SLOTS];

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &ms, sizeof(ms), 0))
			continue;       /* left meanwhile: it is in the departed ring */
		if (ms.tree != tree)
			continue;       /* another tree of the same load */
		info->mm_entries++;
		info->mm_events += ms.events;
		holder_from(&h, ms.tgid, ms.vpid, ms.own_peak, ms.comm,
			    holder_pages_at_peak(ms.mark, ms.pages, w, peak, by_slot));
		err = list_add(l, &h, by_slot);
	}
	return err;
}

/* The mms that left since the window began, from the departed ring. */
static int add_departed(struct tracker_bpf *skel, unsigned tree, __u64 w, __s64 peak, __u64 since, struct holder_list *l)
{
	const struct departed_mm *ring = skel->bss->departed;
	int err = 0;

	for (size_t i = 0; i < MAX_DEPARTED && !err; i++) {
		struct departed_mm e;
		struct holder h;
		__s64 by_slot[RSS_SLOTS];

		if (!departed_read(&ring[i], &e) || e.seq <= since || e.tree != tree)
			continue;       /* empty, being written, left before the window, or another tree's */
		holder_from(&h, e.tgid, e.vpid, e.own_peak, e.comm,
			    holder_pages_at_peak(e.mark, NULL, w, peak, by_slot));
		err = list_add(l, &h, by_slot);
	}
	return err;
}

static int by_pages_desc(const void *a, const void *b)
{
	const struct holder *x = a, *y = b;

	return x->pages < y->pages ? 1 : x->pages > y->pages ? -1 : (int)x->tgid - (int)y->tgid;
}

int holders_at_peak(struct tracker_bpf *skel, unsigned tree, __u64 w, __s64 peak,
		    __u64 departed_since, struct holder *out, size_t max, struct holders_info *info)
{
	struct holder_list l = {};
	__u64 departed_now = LOAD(skel->bss->departed_seq);
	int err;

	memset(info, 0, sizeof(*info));
	err = add_live(skel, tree, w, peak, &l, info);
	if (!err)
		err = add_departed(skel, tree, w, peak, departed_since, &l);
	if (err)
		goto cleanup;
	/* No holders: l.v is NULL, which qsort and memcpy must not see
	 * even for 0 elements. */
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), by_pages_desc);
	info->count = l.n < max ? (__u32)l.n : (__u32)max;
	if (info->count)
		memcpy(out, l.v, info->count * sizeof(*out));
	info->total = l.n;
	info->sum_pages = l.sum_pages;
	memcpy(info->breakdown_pages, l.breakdown, sizeof(info->breakdown_pages));
	/* More departures than the ring holds: some holders may be lost. */
	info->truncated = departed_now - departed_since > MAX_DEPARTED;
cleanup:
	free(l.v);
	return err;
}
