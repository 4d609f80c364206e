/* SPDX-License-Identifier: MIT */
/*
 * Every cgroup's summed RSS (issue 34; docs/design.md, "Per-cgroup sums"):
 * bpf/cgsum.bpf.c adds each change of a tracked mm to its cgroup chain's
 * slots; this gives the slots, cuts their windows and frees the slots of
 * cgroups that went. For `peakbpf agent`, whose tracker tracks every
 * process of the node (a tree rooted at PID 1).
 */
#ifndef PEAKBPF_CGSUM_API_H
#define PEAKBPF_CGSUM_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "tracker.h"
#include "cgsum.h"

struct tracker_load;
struct tracker_bpf;
/* The sums on a load: their programs' links, the hierarchy (cgsum.c). */
struct cgsum;

/* The memory hierarchy the sums follow. */
struct cgsum_hier {
	char mount[128];        /* v1: /sys/fs/cgroup/memory; v2: /sys/fs/cgroup */
	bool v1;
	__u32 hierarchy_id;     /* v1's memory hierarchy's number (/proc/self/cgroup); v2: 0 */
};

/* Where the memory hierarchy is mounted (root: "" for /sys/fs/cgroup).
 * 0, or -ENOENT and why. */
int cgsum_find_hier(const char *root, struct cgsum_hier *out, char *why, size_t len);
/* Before the tracker's load: the programs on (configured for h) or off. */
void cgsum_prepare(struct tracker_bpf *skel, const struct cgsum_hier *h);
/*
 * After the tracker's load and attach (skel: tracker_load__skel), before
 * its roots: attach mkdir and
 * rmdir, give every cgroup of the hierarchy now a slot (a walk of its
 * directories), then attach the event programs after the tracker's.
 * 0, or -errno and why. *walked: the cgroups given a slot.
 */
int cgsum_start(struct tracker_bpf *skel, const struct cgsum_hier *h, struct cgsum **out, size_t *walked,
		char *why, size_t len);
/* After the tracker's roots are in: every mm it has enters its chain
 * with its pages now. 0 or -errno. */
int cgsum_enter_existing(struct cgsum *c);

/* One slot's cut. */
struct cgsum_row {
	__u64 id;               /* the cgroup's kernfs id */
	__u32 slot, level;
	__s64 pages;            /* its sum at the cut */
	__s64 window_peak;      /* the largest sum since the previous cut */
	__s64 mms;
	__u64 peak_ns;
	__u64 peak_races;
	__u64 mark_races;       /* ever: a change of this slot's holders was blurred */
	__u64 window;           /* the window cut (its number) */
	bool gone;              /* rmdir seen */
};
/* Cut every used slot's window (its peak restarts from its sum now) and
 * hand each to fn. Returns the number of slots, or -errno. */
int cgsum_cut(struct cgsum *c, void (*fn)(void *ctx, const struct cgsum_row *r), void *ctx);
/* One process's part of a cgroup's window just cut: what its address
 * space held at the cgroup's peak of that window (by counter, pages). */
struct cgsum_holder {
	__u64 id;               /* the cgroup */
	__u32 tgid;             /* a process using the address space (global PID) */
	char comm[COMM_LEN];
	__s64 pages[RSS_SLOTS];
};
/* After cgsum_cut: every address space that held pages at the peak of a
 * cut window of its chain, once per such cgroup, to fn (read from the
 * marks, bpf/cgsum.h: the peak's instant, not the cut's; an address
 * space gone between the peak and the cut is not among them). 0 or
 * -errno. */
int cgsum_holders(struct cgsum *c, void (*fn)(void *ctx, const struct cgsum_holder *h), void *ctx);
/* Free the slots of cgroups removed (rmdir seen, or their directory no
 * longer opens by id) with no mm counting in them; fn hears each id. */
int cgsum_reclaim(struct cgsum *c, void (*fn)(void *ctx, __u64 id), void *ctx);
void cgsum_counters(const struct cgsum *c, struct cg_counters *out, __u64 *free_slots);
/* Departed mms whose marks the ring lost before cgsum_holders read them
 * (more than CG_DEPARTED between two reads). */
__u64 cgsum_departed_lost(const struct cgsum *c);
/* Detach and free (before the load is destroyed); NULL is fine. */
void cgsum_stop(struct cgsum *c);

#endif
