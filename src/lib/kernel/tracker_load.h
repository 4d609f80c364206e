/* SPDX-License-Identifier: MIT */
/*
 * A load of the tracker (tracker_load.c): the BPF object opened,
 * configured for this kernel (kfeatures.h), loaded and attached, with its
 * maps, its ring of the sum's changes and the facts the load found. One
 * load serves up to MAX_TREES trees at once (tracker_tree.h: a process's
 * runs, peakbpf serve's clients). Opaque, in the obj__verb style of
 * retsnoop's components.
 */
#ifndef PEAKBPF_TRACKER_LOAD_H
#define PEAKBPF_TRACKER_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "tracker.h"
#include "unique.h"              /* the same BPF object's (tracker.skel.h) */
#include "oom.h"                 /* ...and these */
#include "cgsum.h"
#include "source.h"
#include "tree_maps.h"

struct tracker_load;
struct tracker_bpf;
struct cgsum_hier;
struct oom_reader;

struct tracker_opts {
	__u32 max_tracked;      /* entries of the mm and process maps; 0: default */
	__u32 record_ring_bytes;        /* record every change of the sum in a ring
					   of this size (a power of 2 of pages); 0: off */
	bool with_unique;       /* load the unique program (unique_hook.h) */
	/* With a ring: a tree records only once tracker_tree__set_record
	 * says so (peakbpf serve, whose trees' clients choose); else every
	 * tree does. */
	bool record_per_tree;
	bool without_oom;       /* leave the OOM recorder out (oom_api.h) */
	bool oom_context;       /* with the kill's context where fentry can have it (the agent);
				   else the victims alone, the context inferred */
	/* With the per-cgroup sums of this hierarchy (cgsum_api.h); NULL: off. */
	const struct cgsum_hier *cgsum;
	bool stacks;            /* with --stacks' programs and ring (stacks_api.h) */
	/* No tree of the load takes a cgroup target (cgroup_target_api.h):
	 * their programs stay out of the load, and tracker_set_cgroup fails
	 * with -EOPNOTSUPP. */
	bool without_cgroup_targets;
	/* Every root is a command stopped before exec, entered without its mm
	 * (tracker_tree__add_roots, enter_mm false): the program that settles
	 * the mms a walk entered stays out, unless cgroup targets are in
	 * (their processes enter with their mms). */
	bool commands_only;
};

/* How long each start-up step took, ns. */
struct tracker_startup {
	__u64 probe_ns, load_ns, learn_ns, attach_ns;
};

/* Probe, open, load and attach. Returns 0 or a negative errno; on failure
 * *out is NULL and nothing stays loaded. */
int tracker_load__open(const struct tracker_opts *opts, struct tracker_load **out);
/* Detach and unload everything; NULL is fine. Its trees must be freed
 * first (tracker_tree__free). */
void tracker_load__destroy(struct tracker_load *l);

/* Every recorded change of the sum, oldest first, to fn, of one tree or
 * of every tree (TRACKER_EVERY_TREE; each change names its tree,
 * sum_event.tree: peakbpf serve routes them). -EOPNOTSUPP without a ring. */
#define TRACKER_EVERY_TREE (~0U)
int tracker_load__drain(struct tracker_load *l, unsigned tree, source_sum_fn fn, void *ctx);
/* Every tree's entries in the maps now, by tree. */
int tracker_load__count_trees(struct tracker_load *l, struct tree_entries per_tree[MAX_TREES]);
/* The tracker's programs' runs the kernel skipped (recursion); the unique
 * program's lose nothing (bpf/unique.bpf.c) and are not counted. */
__u64 tracker_load__missed_runs(const struct tracker_load *l);

/* ---- what the load found ---- */
/* Which program removes an mm at teardown: "tp_btf/exit_mmap" or
 * "fentry/exit_mmap". */
const char *tracker_load__teardown_hook(const struct tracker_load *l);
/* True when this kernel keeps rss in percpu_counters (6.2+). */
bool tracker_load__has_percpu_rss(const struct tracker_load *l);
/* Before 6.2: the most pages one fault maps unseen; *read: from debugfs. */
unsigned tracker_load__fault_pages(const struct tracker_load *l, bool *read);
/* 0 when every counter is kept exact from its per-CPU slots, else why
 * not: -EOPNOTSUPP (kernel before 6.2 or without the helpers), -E2BIG
 * (more CPUs than covered), or the error of learning the per-CPU offsets. */
int tracker_load__exact_path(const struct tracker_load *l);
/* CPUs that can exist (each has a slot in every percpu_counter). */
int tracker_load__possible_cpus(const struct tracker_load *l);
void tracker_load__startup(const struct tracker_load *l, struct tracker_startup *out);
/* The unique program: 0 loaded and attached; -ENODATA not asked for;
 * -EOPNOTSUPP no hook; -ENOSYS no atomics with a result; else its load
 * error. */
int tracker_load__unique_err(const struct tracker_load *l);
/* Whether the load has a ring, and whether its trees record one by one. */
bool tracker_load__has_ring(const struct tracker_load *l);
bool tracker_load__record_per_tree(const struct tracker_load *l);

/* ---- for the load's trees (tracker_tree.c) and unique memory (unique.c) ---- */
/* The skeleton: its maps and mapped .bss. */
struct tracker_bpf *tracker_load__skel(const struct tracker_load *l);
/* Slot tree's tree_insertions when its last clear began (0 for a new
 * load, where no tree has an entry; ~0 after a clear that failed): equal
 * to the count now, no entry can be left in the maps. */
__u64 tracker_load__cleared_at(const struct tracker_load *l, unsigned tree);
void tracker_load__set_cleared_at(struct tracker_load *l, unsigned tree, __u64 tried);
/* The OOM recorder's reader (oom.c), NULL when off; *level: enum
 * oom_level the load has; *err: why not more (-ENODATA: not asked for). */
struct oom_reader *tracker_load__oom(const struct tracker_load *l, int *level, int *err);
/* --stacks' reader (stacks_api.h), NULL when off; *err: why (-ENODATA: not
 * asked for; else the load's error with its programs in). */
struct stacks_reader *tracker_load__stacks(const struct tracker_load *l, int *err);
/* What this kernel lacks of --stacks' needs (kfeatures.h,
 * features_stacks_lacks): their number, named in buf. */
int tracker_load__stacks_lacks(const struct tracker_load *l, char *buf, size_t len);

#endif
