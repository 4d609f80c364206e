// SPDX-License-Identifier: MIT
/*
 * cgsum_holders.h: each cgroup's holders at its window's peak. Each mm's
 * mark per level (peak_mark, bpf/tracker.h) gives what it held at that
 * slot's latest peak of the window (holder_pages_at_peak, the tracker's
 * own reading); its PID and name come from the tracker's mm map. Both maps
 * are read in batches (BPF_MAP_LOOKUP_BATCH): a few calls a cut whatever
 * the number of processes. Off the event path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cgsum_holders.h"
#include "mapped_internal.h"
#include "tracker.skel.h"

#define BATCH 256

/* Every entry of a hash map, BATCH at a time, to fn; 0 or -errno. */
static int walk_batched(struct bpf_map *map, size_t vsize, int (*fn)(void *ctx, __u64 key, const void *v),
			void *ctx)
{
	__u64 keys[BATCH], in = 0, out = 0;
	char *vals = malloc(BATCH * vsize);
	int fd = bpf_map__fd(map), err = vals ? 0 : -ENOMEM;
	bool first = true, done = false;

	while (!err && !done) {
		__u32 n = BATCH;

		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);
		if (err == -ENOENT) {
			err = 0;
			done = true;
		}
		for (__u32 i = 0; !err && i < n; i++)
			err = fn(ctx, keys[i], vals + i * vsize);
		in = out;
		first = false;
	}
	free(vals);
	return err;
}

struct who {
	__u64 key;
	__u32 tgid;
	char comm[COMM_LEN];
};

struct names {
	struct who *v;
	size_t n, cap;
};

static int add_name(void *ctx, __u64 key, const void *v)
{
	struct names *t = ctx;
	const struct mm_state *ms = v;

	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct who *g = realloc(t->v, cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		t->v = g;
		t->cap = cap;
	}
	t->v[t->n].key = key;
	t->v[t->n].tgid = ms->tgid;
	memcpy(t->v[t->n].comm, ms->comm, COMM_LEN);
	t->v[t->n].comm[COMM_LEN - 1] = '\0';
	t->n++;
	return 0;
}

static int by_key(const void *a, const void *b)
{
	__u64 x = ((const struct who *)a)->key, y = ((const struct who *)b)->key;

	return x < y ? -1 : x > y;
}

struct reading {
	const struct cgsum_closed *closed;
	struct names names;
	void (*fn)(void *ctx, const struct cgsum_holder *h);
	void *ctx;
};

static int add_mm(void *ctx, __u64 key, const void *v)
{
	struct reading *r = ctx;
	const struct cg_mm *cm = v;
	struct who probe = { .key = key }, *who;
	struct cgsum_holder h = { 0 };

	if (!cm->ready)
		return 0;
	who = bsearch(&probe, r->names.v, r->names.n, sizeof(probe), by_key);
	h.tgid = who ? who->tgid : 0;
	memcpy(h.comm, who ? who->comm : "?", who ? COMM_LEN : 2);
	for (int i = 0; i < CG_DEPTH; i++) {
		const struct cgsum_closed *c = cm->slot[i] < CG_SLOTS ? &r->closed[cm->slot[i]] : NULL;

		if (!c || !c->id)
			continue;
		h.id = c->id;
		if (holder_pages_at_peak(cm->mark[i], cm->split, c->window, c->peak, h.pages) > 0)
			r->fn(r->ctx, &h);
	}
	return 0;
}

int cgsum_holders_read(struct tracker_bpf *skel, const struct cgsum_closed closed[CG_SLOTS],
		       void (*fn)(void *ctx, const struct cgsum_holder *h), void *ctx)
{
	struct reading r = { .closed = closed, .fn = fn, .ctx = ctx };
	int err = walk_batched(skel->maps.mm_states, sizeof(struct mm_state), add_name, &r.names);

	if (!err) {
		qsort(r.names.v, r.names.n, sizeof(*r.names.v), by_key);
		err = walk_batched(skel->maps.cg_mms, sizeof(struct cg_mm), add_mm, &r);
	}
	free(r.names.v);
	return err;
}
