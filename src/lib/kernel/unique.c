// SPDX-License-Identifier: MIT
/* The tree's unique memory (unique_api.h): set up in the tracker's object, windows, the figure. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include "unique.h"              /* bpf/: the shared state */
#include "unique_api.h"
#include "unique_table.h"
#include "mapped_internal.h"
#include "tracker_load.h"
#include "tracker_tree.h"
#include "tracker.skel.h"


static const char WHY_RACES[] = "a peak update lost its compare-and-swap race";
/* bpf/tracker_cgroup.bpf.h, tree_elsewhere: the session gives the bound. */
static const char WHY_ELSEWHERE[] =
	"part of the tree is in another memory cgroup (a process moved out of the tree's cgroup, or was made in "
	"another): its pages charged there are not counted; the true peak lies between this and summed RSS's";

struct unique {
	struct tracker_bpf *skel;       /* the tracker's: its unique program */
	unsigned tree;                  /* the tracker's tree: its state, ustates[tree] */
	__u64 cgroup_id;
	long page_size;
	__s64 baseline;         /* pages when the window opened */
	__u64 races_before;
	__u64 elsewhere_before; /* tree_elsewhere at the open: more since, part of the tree is elsewhere */
};

int unique_cgroup_id(int cgroup_dir_fd, uint64_t *id, char *why, size_t whylen)
{
	struct stat st;

	/* A cgroup's id (kernfs_node.id) is its directory's inode number, in
	 * the v2 hierarchy and in v1's memory one (both kernfs). */
	if (fstat(cgroup_dir_fd, &st)) {
		int err = -errno;

		snprintf(why, whylen, "cannot stat the tree's cgroup: %s", strerror(-err));
		return err;
	}
	*id = (uint64_t)st.st_ino;
	return 0;
}

/* Why unique_open cannot measure: unique_err of the load (unique_prepare). */
static int load_refusal(int err, char *why, size_t whylen)
{
	if (err == -EOPNOTSUPP)
		snprintf(why, whylen, "this kernel has neither the memcg statistic tracepoint (6.13+) "
			 "nor a memcg statistic function to attach to (5.10 to 6.12)");
	else if (err == -ENOSYS)
		snprintf(why, whylen, "this kernel's BPF has no atomics with a result (5.12+): "
			 "the peak cannot be kept exactly");
	else if (err == -ENODATA)
		snprintf(why, whylen, "the BPF programs were loaded without it");
	else if (err)
		snprintf(why, whylen, "cannot load its BPF program: %s", strerror(-err));
	return err;
}

/* Point tree's state at cgroup_id, from 0 pages (the cgroup holds nothing
 * yet). The order keeps each event's count right while the load's other
 * trees go on: the state's id to 0 and its way freed first (so no update
 * of the old cgroup meets the new state), the counters zeroed, the new
 * way entered, the tree unlearned in the fast reject (unique_table.h),
 * the state's id last (the event path checks it). */
static int point_state(struct tracker_bpf *skel, unsigned tree, __u64 cgroup_id, __u64 *races)
{
	struct unique_state *st = &skel->bss->ustates[tree];
	__u64 old = __atomic_exchange_n(&st->cgroup_id, 0, __ATOMIC_SEQ_CST);
	int err;

	/* A state left pointed by a tree not destroyed: its way is this tree's. */
	if (old)
		unique_table_remove(skel->bss->ugroups, old, tree);
	unique_fast_leave(&skel->bss->ufast, tree);
	STORE(st->pages, 0);
	STORE(st->peak, 0);
	STORE(st->anon, 0);
	STORE(st->peak_anon, 0);
	*races = LOAD(st->peak_races);
	err = unique_table_insert(skel->bss->ugroups, cgroup_id, tree);
	if (!err) {
		unique_fast_enter(&skel->bss->ufast, tree);
		STORE(st->cgroup_id, cgroup_id);
	}
	return err;
}

int unique_open(struct tracker_tree *t, uint64_t cgroup_id, long page_size, struct unique **out,
		char *why, size_t whylen)
{
	struct unique *u = NULL;
	int err = load_refusal(tracker_load__unique_err(tracker_tree__load(t)), why, whylen);

	*out = NULL;
	if (err)
		goto cleanup;
	u = calloc(1, sizeof(*u));
	if (!u) {
		snprintf(why, whylen, "out of memory");
		err = -ENOMEM;
		goto cleanup;
	}
	u->skel = tracker_load__skel(tracker_tree__load(t));
	u->tree = tracker_tree__index(t) & (MAX_TREES - 1);
	u->cgroup_id = cgroup_id;
	u->page_size = page_size;
	/* One load serves run after run, and tree after tree at once. */
	err = point_state(u->skel, u->tree, cgroup_id, &u->races_before);
	if (!err) {
		/* The tracker counts the tree's processes outside the cgroup. */
		u->elsewhere_before = LOAD(u->skel->bss->tree_elsewhere[u->tree]);
		if (!__atomic_exchange_n(&u->skel->bss->tree_memcg_id[u->tree], cgroup_id, __ATOMIC_SEQ_CST))
			__atomic_fetch_add(&u->skel->bss->memcg_watch_n, 1, __ATOMIC_SEQ_CST);
	}
	if (err == -ENOSPC)
		snprintf(why, whylen, "the load's table has no free way for this cgroup: %d other trees' "
			 "cgroups share its group (bpf/unique.h); try again later", UNIQUE_WAYS);
	else if (err == -EEXIST)
		snprintf(why, whylen, "another tree of this load measures this cgroup");
	else if (err)
		snprintf(why, whylen, "cannot enter the cgroup: %s", strerror(-err));
	if (err)
		goto cleanup;
	*out = u;
	u = NULL;
cleanup:
	free(u);
	return err;
}

static uint64_t bytes(const struct unique *u, __s64 pages)
{
	return pages > 0 ? (uint64_t)pages * (uint64_t)u->page_size : 0;
}

/* The cut, as the tracker makes it: the peak exchanged with the sum. */
void unique_close_window(struct unique *u, struct figure *out)
{
	struct unique_state *st = &u->skel->bss->ustates[u->tree];
	__u64 races = LOAD(st->peak_races);
	__s64 now = LOAD(st->pages), peak, peak_anon;

	peak = __atomic_exchange_n(&st->peak, now, __ATOMIC_SEQ_CST);
	peak_anon = __atomic_exchange_n(&st->peak_anon, LOAD(st->anon), __ATOMIC_SEQ_CST);
	raise_to(&st->peak, LOAD(st->pages));
	memset(out, 0, sizeof(*out));
	out->source = "bpf-memcg";
	out->scope = UNIQUE_SCOPE;
	out->measured = true;
	out->peak_bytes = bytes(u, peak);
	out->baseline_known = true;
	out->baseline_bytes = bytes(u, u->baseline);
	/* What the peak held, anon and file (a snapshot beside the peak): the
	 * report splits summed RSS's excess by it. */
	out->anon_bytes = bytes(u, peak_anon < peak ? peak_anon : peak);
	out->file_bytes = out->peak_bytes - out->anon_bytes;
	/* Runs the kernel skipped (recursion) are never of the two items:
	 * bpf/unique.bpf.c says why. */
	out->exact = races == u->races_before;
	if (!out->exact)
		out->inexact_reason = WHY_RACES;
	/* Once part of the tree was elsewhere, every later window may miss
	 * its pages: the count is not reset at the cut. */
	if (LOAD(u->skel->bss->tree_elsewhere[u->tree]) != u->elsewhere_before) {
		out->exact = false;
		out->other_cgroups = true;
		out->inexact_reason = WHY_ELSEWHERE;
	}
	u->baseline = now;
	u->races_before = races;
}

void unique_destroy(struct unique *u)
{
	__u64 mine;

	if (!u)
		return;
	/* The load may serve another run, and serves other trees: this tree's
	 * state watches no cgroup meanwhile (its id first, then its way and
	 * its word in the fast reject). Unless a later unique_open took the state over: it freed this
	 * way, and the state and its way are the new figure's. */
	mine = u->cgroup_id;
	if (__atomic_compare_exchange_n(&u->skel->bss->ustates[u->tree].cgroup_id, &mine, 0, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		unique_table_remove(u->skel->bss->ugroups, u->cgroup_id, u->tree);
		unique_fast_leave(&u->skel->bss->ufast, u->tree);
	}
	mine = u->cgroup_id;
	if (__atomic_compare_exchange_n(&u->skel->bss->tree_memcg_id[u->tree], &mine, 0, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		__atomic_fetch_sub(&u->skel->bss->memcg_watch_n, 1, __ATOMIC_SEQ_CST);
	free(u);
}
