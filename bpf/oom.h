/* SPDX-License-Identifier: MIT */
/*
 * The OOM flight recorder's kernel record (docs/design.md, "OOM kills"):
 * shared by bpf/oom.bpf.c and userspace (src/lib/kernel/oom.c, through the
 * skeleton). Never includes vmlinux.h; the includer provides the __u64
 * types, as for tracker.h.
 */
#ifndef PEAKBPF_OOM_H
#define PEAKBPF_OOM_H

#include "tracker.h"            /* COMM_LEN, MAX_TREES, RSS_SLOTS */

/* Victims the ring holds before userspace drains it (each event is 128 B). */
#define OOM_RING_BYTES (64 * 1024)

/* Where the victim's rss was read. */
enum oom_rss_from {
	OOM_RSS_NONE,           /* not read: the victim's task was not at hand (before 6.9,
				   a victim other than the one oom_kill_process chose) */
	OOM_RSS_COUNTERS,       /* its mm's counters as the kernel's own OOM report reads
				   them (get_mm_counter: on 6.2+ the shared .count, without
				   the per-CPU slots; before 6.2 the atomics) */
	OOM_RSS_NO_MM,          /* the victim had no mm left (exiting) */
};

/* oom_kill_process's struct oom_control, at that call: what the kill is
 * for. Absent (memcg_id 0, limit 0) when the victim was marked on another
 * path (a task already exiting, marked by out_of_memory itself). */
struct oom_context {
	__u64 memcg_id;         /* the OOMing memory cgroup's id (kernfs node id, its
				   directory's inode number); 0: a global OOM */
	__u64 limit_pages;      /* its page_counter's max (memory.max / limit_in_bytes) */
	__u64 usage_pages;      /* its charge at that instant */
	__u64 totalpages;       /* oc->totalpages: the limit the badness is scaled by */
	__u32 constraint;       /* enum oom_constraint: 0 none, 1 cpuset, 2 mempolicy, 3 memcg */
	__u32 chosen_tgid;      /* the task oom_kill_process chose */
	__u32 trigger_tgid;     /* the task whose allocation ran out (current) */
	__u32 valid;            /* 1: from oom_kill_process; 2: inferred at mark_victim
				   (bpf/oom.bpf.c, infer_context); 0: none */
	char trigger_comm[COMM_LEN];
};

/* One victim marked by mark_oom_victim (the oom:mark_victim tracepoint). */
struct oom_event {
	__u64 ns;               /* CLOCK_MONOTONIC */
	__u64 mm;               /* the victim's mm (the tracker's key), 0 if none */
	__u64 cgroup_id;        /* the victim's own memory cgroup's id */
	__s64 pages[RSS_SLOTS]; /* its rss by counter, rss_from says how read */
	__u32 tgid, pid;        /* global PIDs */
	__u32 tree;             /* the tracker tree its process is in, MAX_TREES if none */
	__u32 rss_from;         /* enum oom_rss_from */
	__s32 oom_score_adj;
	__u32 uid;
	char comm[COMM_LEN];
	struct oom_context ctx;
};

#endif
