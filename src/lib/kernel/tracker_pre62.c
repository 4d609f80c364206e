// SPDX-License-Identifier: MIT
/*
 * Before 6.2, the userspace side of the bound of the per-thread rss caches
 * (docs/design.md, "The bound before 6.2"): a window's upper end at its
 * cut, and a tree's state cleared. On 6.2+ neither runs.
 */
#include <bpf/libbpf.h>
#include "tracker_internal.h"
#include "tracker.skel.h"

/* The closing window's upper end, the sum at the cut being sum; the next
 * window's opens at sum + the charges. The threads on CPUs are counted
 * before each CPU's excess is taken: a growth raised after its take (into
 * the next window) is that of a thread on a CPU at the count, whose worst
 * case the closing window is given (pre62_window_upper). */
__s64 tracker_pre62_cut(struct tracker *t, __s64 sum)
{
	struct tracker_bpf__bss *bss = t->skel->bss;
	struct tree_state *tree = TREE_OF(t);
	__s64 charges = LOAD(tree->bound_sum_pages);
	__s64 running = LOAD(bss->pre62_trees[t->tree].running), excess = 0, upper;
	long ncpu = t->features.possible_cpus;

	for (long cpu = 0; cpu < ncpu && cpu < MAX_CPUS; cpu++)
		excess += __atomic_exchange_n(&bss->pre62_excess[cpu][t->tree], 0, __ATOMIC_SEQ_CST);
	upper = __atomic_exchange_n(&tree->upper_pages, sum + charges, __ATOMIC_SEQ_CST);
	for (long cpu = 0; cpu < ncpu && cpu < MAX_CPUS; cpu++) {
		__s64 u = __atomic_exchange_n(&bss->pre62_upper[cpu][t->tree], 0, __ATOMIC_SEQ_CST);

		upper = u > upper ? u : upper;
	}
	raise_to(&tree->upper_pages, sum_of_word(LOAD(tree->sum_word)) + LOAD(tree->bound_sum_pages));
	return pre62_window_upper(upper, sum + charges, excess, running,
				  cache_cap_pages(t->features.fault_pages));
}

/* A tree's slot is cleared (its threads have gone from the map). */
void tracker_pre62_clear(struct tracker *t)
{
	struct tracker_bpf__bss *bss = t->skel->bss;

	memset(&bss->pre62_trees[t->tree], 0, sizeof(bss->pre62_trees[t->tree]));
	for (long cpu = 0; cpu < MAX_CPUS; cpu++) {
		STORE(bss->pre62_excess[cpu][t->tree], 0);
		STORE(bss->pre62_upper[cpu][t->tree], 0);
	}
}
