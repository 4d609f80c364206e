/* SPDX-License-Identifier: MIT */
/*
 * Kernel drift, in one place. Each difference cites the kernel change that
 * made it; the right branch is chosen by CO-RE at load time, never by #if.
 */
#ifndef PEAKBPF_COMPAT_BPF_H
#define PEAKBPF_COMPAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

/*
 * Before 6.2 the rss counters were atomics in struct mm_rss_stat (plus
 * per-task caches, SPLIT_RSS_COUNTING). Commit f1a7941243c1 ("mm: convert
 * mm's rss stats into percpu_counter", 6.2) made them percpu_counters whose
 * .count lags the truth by up to ncpu * (batch - 1) pages.
 */
struct mm_rss_stat___pre62 {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___pre62 {
	struct mm_rss_stat___pre62 rss_stat;
} __attribute__((preserve_access_index));

static __always_inline bool rss_counters_are_percpu(void)
{
	return !bpf_core_type_exists(struct mm_rss_stat___pre62);
}

/*
 * The cheap value of one rss counter, in pages. Constant indices only:
 * sizeof(struct percpu_counter) depends on the kernel's lock debugging
 * options, so an index computed with the local size would be wrong.
 */
#define MM_COUNTER_READ(mm, idx)                                              \
	({                                                                     \
		long __v;                                                      \
		if (rss_counters_are_percpu()) {                               \
			__v = BPF_CORE_READ(mm, rss_stat[idx].count);          \
		} else {                                                       \
			struct mm_struct___pre62 *__o = (void *)(mm);          \
			__v = BPF_CORE_READ(__o, rss_stat.count[idx].counter); \
		}                                                              \
		__v;                                                           \
	})

/* Kernel counter index (enum MM_*) of each rss slot. */
static __always_inline long mm_slot_pages(struct mm_struct *mm, int slot)
{
	switch (slot) {
	case RSS_FILE:
		return MM_COUNTER_READ(mm, 0);  /* MM_FILEPAGES */
	case RSS_ANON:
		return MM_COUNTER_READ(mm, 1);  /* MM_ANONPAGES */
	default:
		return MM_COUNTER_READ(mm, 3);  /* MM_SHMEMPAGES */
	}
}

/* rss slot of a kernel counter index, or -1 for MM_SWAPENTS. */
static __always_inline int rss_slot_of_member(int member)
{
	switch (member) {
	case 0:
		return RSS_FILE;
	case 1:
		return RSS_ANON;
	case 3:
		return RSS_SHMEM;
	default:
		return -1;
	}
}

#endif
