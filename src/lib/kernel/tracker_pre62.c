// SPDX-License-Identifier: MIT
/*
 * Before 6.2, the userspace side of the bound of the per-thread rss caches
 * (tracker_pre62.h): a window's upper end at its cut, and a tree's state
 * cleared. On 6.2+ neither runs.
 */
#include <string.h>
#include <bpf/libbpf.h>
#include "mapped_internal.h"
#include "tracker_pre62.h"
#include "tracker.skel.h"

/* The threads on CPUs are counted before each CPU's excess is taken: a
 * growth raised after its take (into the next window) is that of a thread
 * on a CPU at the count, whose worst case the closing window is given
 * (pre62_window_upper). Each CPU's largest drop candidate is taken with
 * the word of CPUs beyond MAX_CPUS. */
__s64 tracker_pre62_cut(struct tracker_bpf *s, unsigned tree, int ncpu, unsigned fault_pages,
			__s64 sum)
{
	struct tracker_bpf__bss *bss = s->bss;
	struct tree_state *ts = &bss->hot.trees[tree];
	__s64 charges = LOAD(ts->bound_sum_pages);
	__s64 running = LOAD(bss->pre62_trees[tree].running), excess = 0, upper;

	for (int cpu = 0; cpu < ncpu && cpu < MAX_CPUS; cpu++)
		excess += __atomic_exchange_n(&bss->pre62_excess[cpu][tree], 0, __ATOMIC_SEQ_CST);
	upper = __atomic_exchange_n(&ts->upper_pages, sum + charges, __ATOMIC_SEQ_CST);
	for (int cpu = 0; cpu < ncpu && cpu < MAX_CPUS; cpu++) {
		__s64 u = __atomic_exchange_n(&bss->pre62_upper[cpu][tree], 0, __ATOMIC_SEQ_CST);

		upper = u > upper ? u : upper;
	}
	raise_to(&ts->upper_pages, sum_of_word(LOAD(ts->sum_word)) + LOAD(ts->bound_sum_pages));
	return pre62_window_upper(upper, sum + charges, excess, running, cache_cap_pages(fault_pages));
}

void tracker_pre62_clear(struct tracker_bpf *s, unsigned tree)
{
	struct tracker_bpf__bss *bss = s->bss;

	memset(&bss->pre62_trees[tree], 0, sizeof(bss->pre62_trees[tree]));
	for (int cpu = 0; cpu < MAX_CPUS; cpu++) {
		STORE(bss->pre62_excess[cpu][tree], 0);
		STORE(bss->pre62_upper[cpu][tree], 0);
	}
}
