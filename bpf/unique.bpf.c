// SPDX-License-Identifier: GPL-2.0
/*
 * The tree's unique memory: its own cgroup's mapped pages, each counted
 * once, from the memcg statistics as they change (docs/design.md, "Unique
 * memory").
 *
 * The memcg tracepoints (6.13, "memcg: add tracing for memcg stat
 * updates") fire on every memcg statistic update on the machine, so the
 * program rejects first on the item (a register compare), then on the
 * cgroup: by its struct cgroup's address, read from the memcg (a line the
 * kernel has just used) and compared with the load's trees' (one line of
 * struct unique_fast, unique.h), once every tree's address is learned;
 * until then by its id (two loads further, then its group's one line of
 * the table of the load's trees). Only then it works on that tree's
 * state: an atomic add and, when the sum rises above the peak, a
 * compare-and-swap. O(1) per event, whatever the number of trees.
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
#define READ_ONCE_U64(x) (*(const volatile __u64 *)&(x))

char LICENSE[] SEC("license") = "GPL";

/* One state per tree of the load (tracker_open_tree's index), and the
 * table that finds a cgroup's tree (unique.h); both written by userspace
 * (src/lib/kernel/unique.c). */
struct unique_state ustates[MAX_TREES];
struct unique_group ugroups[UNIQUE_GROUPS];
struct unique_fast ufast;       /* unique_stat's reject by address (unique.h) */

static __always_inline void raise_peak(struct unique_state *st, __s64 now)
{
	for (int i = 0; i < PEAK_CAS_TRIES; i++) {
		__s64 seen = st->peak;

		if (now <= seen)
			return;
		if (__sync_val_compare_and_swap(&st->peak, seen, now) == seen) {
			st->peak_anon = st->anon;
			return;
		}
	}
	__sync_fetch_and_add(&st->peak_races, 1);
}

/* Count one update of a tree cgroup's mapped pages. */
static __always_inline void count(struct unique_state *st, bool anon, int val)
{
	__s64 now;

	if (anon)
		__sync_fetch_and_add(&st->anon, (__s64)val);
	now = __sync_fetch_and_add(&st->pages, (__s64)val) + val;
	raise_peak(st, now);
}

/*
 * The state of the tree whose cgroup is id, or NULL: the one line of id's
 * group, its ways compared without a loop or an early exit (id is never 0,
 * a free way's). A match is checked against the state's own id, which
 * userspace sets after the way and clears before it: a way being reused
 * for another tree, or read half-written, counts nowhere.
 */
static __always_inline __u32 tree_index_of_cgroup(__u64 id)
{
	const struct unique_group *g = &ugroups[unique_group_of(id)];
	struct unique_state *st;
	__u32 tree;

	/* One register for the line: else clang rebuilds its address (the
	 * global's, shifted, added) before each way's load. */
	barrier_var(g);
	tree = unique_group_tree(g, id);
	if (tree >= MAX_TREES)
		return MAX_TREES;
	st = &ustates[tree & (MAX_TREES - 1)];
	barrier_var(st);
	return st->cgroup_id == id ? tree : MAX_TREES;
}

static __always_inline struct unique_state *tree_of_cgroup(__u64 id)
{
	__u32 tree = tree_index_of_cgroup(id);

	return tree < MAX_TREES ? &ustates[tree & (MAX_TREES - 1)] : NULL;
}

/* NR_ANON_MAPPED: 1, NR_FILE_MAPPED: 0, another item: -1. */
static __always_inline int mapped_item(int item)
{
	if (item == (int)bpf_core_enum_value(enum node_stat_item, NR_ANON_MAPPED))
		return 1;
	if (item == (int)bpf_core_enum_value(enum node_stat_item, NR_FILE_MAPPED))
		return 0;
	return -1;
}


/*
 * The tree of a memcg's update, by the id, and the address learned
 * (unique.h, struct unique_fast): the first update a tree counts this way
 * gives its cgroup's address, and the tree leaves pending.
 */
static __always_inline struct unique_state *tree_by_id_learn(struct cgroup *cg)
{
	__u32 tree = tree_index_of_cgroup(cg->kn->id);

	if (tree >= MAX_TREES)
		return NULL;
	tree &= MAX_TREES - 1;
	if (__sync_val_compare_and_swap(&ufast.cgroup[tree], UNIQUE_UNLEARNED, (__u64)cg) ==
	    UNIQUE_UNLEARNED)
		__sync_fetch_and_add(&ufast.pending, -1);
	return &ustates[tree];
}

SEC("?tp_btf/mod_memcg_lruvec_state")
int BPF_PROG(unique_stat, struct mem_cgroup *memcg, int item, int val)
{
	int anon = mapped_item(item);
	struct unique_state *st;
	struct cgroup *cg;
	__u32 tree;

	/* Filter first: this runs on every statistic update of every cgroup. */
	if (anon < 0)
		return 0;
	cg = memcg->css.cgroup;
	if (READ_ONCE_U64(ufast.pending)) {
		st = tree_by_id_learn(cg);
	} else {
		/* Every tree's address known: no walk for another cgroup's. */
		tree = unique_fast_tree(&ufast, (__u64)cg);
		if (tree >= MAX_TREES)
			return 0;
		st = &ustates[tree & (MAX_TREES - 1)];
		if (st->cgroup_id != cg->kn->id)
			return 0;
	}
	if (st)
		count(st, anon, val);
	return 0;
}

/*
 * Before 6.13 there is no tracepoint: the same updates are caught at the
 * entry of the function rmap calls them through, in mm/memcontrol.c,
 * called from mm/rmap.c (another file: never inlined there). It is the
 * one the running kernel has out of line (unique.c, unique_prepare):
 *  - 6.12: __lruvec_stat_mod_folio(folio, idx, val) (its memcg from
 *    folio->memcg_data, whose low bits are flags, MEMCG_DATA_FLAGS_MASK);
 *  - 6.1: __mod_lruvec_page_state(page, idx, val) (rmap may pass a tail
 *    page: the memcg is the head's, as compound_head() finds it);
 *  - 5.10: __mod_lruvec_state(lruvec, idx, val) (the memcg's per-node
 *    part holds the lruvec).
 * Each is entered with preemption or interrupts off, like the tracepoint:
 * the skipped-runs argument above holds for them too. O(1): a compare, a
 * few reads, the same one line of the table, an atomic add.
 */
#define MEMCG_DATA_FLAGS 3UL    /* MEMCG_DATA_OBJCGS/OBJEXTS | MEMCG_DATA_KMEM */

static __always_inline struct mem_cgroup *memcg_of_data(unsigned long data)
{
	return (struct mem_cgroup *)(data & ~MEMCG_DATA_FLAGS);
}

/* The update counts when the page's memcg is one of the load's trees'. */
static __always_inline int count_if_tree(struct mem_cgroup *memcg, int anon, int val)
{
	struct unique_state *st;

	if (!memcg)
		return 0;
	st = tree_of_cgroup(BPF_CORE_READ(memcg, css.cgroup, kn, id));
	if (st)
		count(st, anon, val);
	return 0;
}

SEC("?fentry/__lruvec_stat_mod_folio")
int BPF_PROG(unique_folio, struct folio *folio, enum node_stat_item idx, int val)
{
	int anon = mapped_item((int)idx);

	if (anon < 0)
		return 0;
	return count_if_tree(memcg_of_data(BPF_CORE_READ(folio, memcg_data)), anon, val);
}

SEC("?fentry/__mod_lruvec_page_state")
int BPF_PROG(unique_page, struct page *page, enum node_stat_item idx, int val)
{
	int anon = mapped_item((int)idx);
	unsigned long head;

	if (anon < 0)
		return 0;
	head = BPF_CORE_READ(page, compound_head);
	if (head & 1)
		page = (struct page *)(head - 1);
	return count_if_tree(memcg_of_data(BPF_CORE_READ(page, memcg_data)), anon, val);
}

SEC("?fentry/__mod_lruvec_state")
int BPF_PROG(unique_lruvec, struct lruvec *lruvec, enum node_stat_item idx, int val)
{
	int anon = mapped_item((int)idx);
	struct mem_cgroup *memcg = NULL;
	unsigned long pn;

	if (anon < 0)
		return 0;
	/* container_of(lruvec, struct mem_cgroup_per_node, lruvec)->memcg */
	pn = (unsigned long)lruvec - bpf_core_field_offset(struct mem_cgroup_per_node, lruvec);
	bpf_probe_read_kernel(&memcg, sizeof(memcg),
			      (void *)(pn + bpf_core_field_offset(struct mem_cgroup_per_node, memcg)));
	return count_if_tree(memcg, anon, val);
}
