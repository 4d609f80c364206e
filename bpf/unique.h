/* SPDX-License-Identifier: MIT */
/*
 * The tree's unique memory (docs/design.md, "Unique memory"): shared by
 * bpf/unique.bpf.c and userspace (through the skeleton). Never includes
 * vmlinux.h; the includer provides the __u64 types, as for tracker.h.
 */
#ifndef PEAKBPF_UNIQUE_H
#define PEAKBPF_UNIQUE_H

/*
 * The tree cgroup's mapped anon + mapped file pages (each page counted
 * once, whoever maps it), as the memcg statistics change. In .bss, mapped
 * by userspace, which closes a window by exchanging peak with pages.
 */
struct unique_state {
	__s64 pages;            /* NR_ANON_MAPPED + NR_FILE_MAPPED of the cgroup now */
	__s64 peak;             /* the running maximum of pages in this window */
	__u64 peak_races;       /* CAS retries exhausted: a peak may be lost */
	__s64 anon;             /* of pages: NR_ANON_MAPPED now */
	__s64 peak_anon;        /* of peak: anon when the peak was last raised (a
				   snapshot, for the cause of summed RSS's excess) */
	/* The tree's memory cgroup (its directory's inode number), set by
	 * userspace for each run of one load; 0: none (no cgroup has id 0). */
	__u64 cgroup_id;
};

#endif
