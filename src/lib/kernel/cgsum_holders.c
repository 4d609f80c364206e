// SPDX-License-Identifier: MIT
/*
 * cgsum_holders.h: each cgroup's holders at its window's peak. Each mm's
 * mark per level (peak_mark, bpf/tracker.h) gives what it held at that
 * slot's latest peak of the window (holder_pages_at_peak, the tracker's
 * own reading): the live mms' from their chain entries, and those that
 * left since the window began from the departed ring. Both maps are read
 * in batches (BPF_MAP_LOOKUP_BATCH): a few calls a cut whatever the number
 * of processes. Off the event path.
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

/* Every value of a map (keys of key_size, at most 8), BATCH at a time,
 * to fn; 0 or -errno. */
static int walk_batched(struct bpf_map *map, size_t key_size, size_t vsize,
			int (*fn)(void *ctx, const void *v), void *ctx)
{
	__u64 keys[BATCH], in = 0, out = 0;
	char *vals = malloc(BATCH * vsize);
	int fd = bpf_map__fd(map), err = vals ? 0 : -ENOMEM;
	bool first = true, done = false;

	(void)key_size;         /* keys[] holds BATCH keys of up to 8 bytes */
	while (!err && !done) {
		__u32 n = BATCH;

		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);
		if (err == -ENOENT) {
			err = 0;
			done = true;
		}
		for (__u32 i = 0; !err && i < n; i++)
			err = fn(ctx, vals + i * vsize);
		in = out;
		first = false;
	}
	free(vals);
	return err;
}

struct reading {
	const struct cgsum_closed *closed;
	__u64 departed_since;
	void (*fn)(void *ctx, const struct cgsum_holder *h);
	void *ctx;
};

/* One mm's part of each cut window of its chain (now: its pages now, NULL
 * for one that left). */
static void add_marks(struct reading *r, const __u32 slot[CG_DEPTH], const struct peak_mark mark[CG_DEPTH][2],
		      const __s64 *now, __u32 tgid, const char *comm)
{
	struct cgsum_holder h = { .tgid = tgid };

	memcpy(h.comm, comm, COMM_LEN);
	h.comm[COMM_LEN - 1] = '\0';
	for (int i = 0; i < CG_DEPTH; i++) {
		const struct cgsum_closed *c = slot[i] < CG_SLOTS ? &r->closed[slot[i]] : NULL;

		if (!c || !c->id)
			continue;
		h.id = c->id;
		if (holder_pages_at_peak(mark[i], now, c->window, c->peak, h.pages) > 0)
			r->fn(r->ctx, &h);
	}
}

static int add_live(void *ctx, const void *v)
{
	const struct cg_mm *cm = v;

	if (cm->ready)
		add_marks(ctx, cm->slot, cm->mark, cm->split, cm->tgid, cm->comm);
	return 0;
}

/* A departure since the window began, read whole (seq == seq_end). */
static int add_departed(void *ctx, const void *v)
{
	struct reading *r = ctx;
	const struct cg_departed *e = v;

	if (e->seq && e->seq == e->seq_end && e->seq > r->departed_since)
		add_marks(r, e->slot, e->mark, NULL, e->tgid, e->comm);
	return 0;
}

int cgsum_holders_read(struct tracker_bpf *skel, const struct cgsum_closed closed[CG_SLOTS], __u64 departed_since,
		       void (*fn)(void *ctx, const struct cgsum_holder *h), void *ctx)
{
	struct reading r = { .closed = closed, .departed_since = departed_since, .fn = fn, .ctx = ctx };
	int err = walk_batched(skel->maps.cg_mms, sizeof(__u64), sizeof(struct cg_mm), add_live, &r);

	if (!err)
		err = walk_batched(skel->maps.cg_departed, sizeof(__u32), sizeof(struct cg_departed), add_departed, &r);
	return err;
}
