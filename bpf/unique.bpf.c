// SPDX-License-Identifier: GPL-2.0
/*
 * The tree's unique memory: its own cgroup's mapped pages, each counted
 * once, from the memcg statistics as they change (docs/design.md, "Unique
 * memory").
 *
 * The memcg tracepoints (6.13, "memcg: add tracing for memcg stat
 * updates") fire on every memcg statistic update on the machine, so the
 * program rejects first on the item (a register compare), then on the
 * cgroup (three loads), and only then works: an atomic add and, when the
 * sum rises above the peak, a compare-and-swap. O(1) per event.
 *
 * The items: rmap counts an anonymous page in NR_ANON_MAPPED when its
 * first mapping appears and uncounts it when its last one goes; a page
 * cache page (shmem, memfd and MAP_SHARED anonymous memory included) the
 * same way in NR_FILE_MAPPED. Their sum is the resident memory the
 * cgroup's pages give the tree, each page once, without unmapped page
 * cache. val is already in pages (memcg_state_val_in_pages).
 *
 * Why a run the kernel skipped (recursion_misses) loses nothing here: the
 * tracepoint runs with preemption off, so the program can only be re-entered
 * on its CPU from an interrupt, and rmap never updates these two items
 * from interrupt context (mm/memcontrol.c, __mod_memcg_lruvec_state: its
 * comment, and its in_task() check under CONFIG_DEBUG_VM). The skipped
 * runs are other items' (slab, page cache freed in softirq).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "unique.h"

#define PEAK_CAS_TRIES 16

char LICENSE[] SEC("license") = "GPL";

struct unique_state ustate;

static __always_inline void raise_peak(__s64 now)
{
	for (int i = 0; i < PEAK_CAS_TRIES; i++) {
		__s64 seen = ustate.peak;

		if (now <= seen)
			return;
		if (__sync_val_compare_and_swap(&ustate.peak, seen, now) == seen)
			return;
	}
	__sync_fetch_and_add(&ustate.peak_races, 1);
}

SEC("tp_btf/mod_memcg_lruvec_state")
int BPF_PROG(unique_stat, struct mem_cgroup *memcg, int item, int val)
{
	__s64 now;

	/* Filter first: this runs on every statistic update of every cgroup. */
	if (item != (int)bpf_core_enum_value(enum node_stat_item, NR_ANON_MAPPED) &&
	    item != (int)bpf_core_enum_value(enum node_stat_item, NR_FILE_MAPPED))
		return 0;
	if (memcg->css.cgroup->kn->id != ustate.cgroup_id)
		return 0;
	now = __sync_fetch_and_add(&ustate.pages, (__s64)val) + val;
	raise_peak(now);
	return 0;
}
