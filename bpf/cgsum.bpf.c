// SPDX-License-Identifier: GPL-2.0
/*
 * Every cgroup's summed RSS (docs/design.md, "Per-cgroup sums"), for
 * `peakbpf agent`: the tracker keeps each tracked mm's exact pages
 * (mm_states); this adds each change of them to the slots of the mm's
 * cgroup chain (its own cgroup and up to CG_DEPTH - 1 ancestors, never the
 * root) and keeps each slot's running maximum.
 *
 * O(1) per event, whatever the number of cgroups: the tracker's filter,
 * one lookup of the mm's state, one of its chain (struct cg_mm: slot
 * indexes), then CG_DEPTH array slots, each an atomic add and, when the
 * sum rises above the peak, a compare-and-swap. A cgroup's slot is taken
 * at its mkdir (userspace gives the ones that exist at the start), an
 * mm's chain is read at its first event and again when its owner moves
 * (cgroup_attach_task): never a walk on the event path.
 *
 * The programs load with the tracker's object, off unless the agent asks
 * (src/lib/kernel/cgsum.c), and are attached after the tracker's, so that
 * on rss_stat this runs after handle_rss_stat has applied the change.
 * Concurrent events of one mm telescope through the exchange of applied:
 * the slots end at the last value read, as the tracker's sum does.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cgsum.h"
#include "compat.bpf.h"

#define PEAK_TRIES 16

char LICENSE[] SEC("license") = "GPL";

/* Set by userspace before load. */
const volatile __u32 cg_hier_id = 0;    /* the memory hierarchy's id (v2: 0) */
const volatile bool cg_v1 = false;      /* v1: the memory controller's cgroup; v2: the task's */

/* The departed ring's size less one (a power of two): set by userspace. */
const volatile __u32 cg_departed_mask = 0;

struct cg_slot cg_slots[CG_SLOTS];
__u64 cg_departed_seq;                  /* departures so far */
struct cg_free cg_free;
struct cg_counters cg_counters;

/* The tracker's (tracker_maps.bpf.h): the filter and the mms' states. */
extern __u32 mm_filter[MM_FILTER_SLOTS];

#define SHARED_MAP __weak
#include "tracker_shared_maps.bpf.h"

/* A cgroup's slot, by its kernfs id: written at mkdir and by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CG_SLOTS);
	__type(key, __u64);
	__type(value, __u32);
} cg_index SEC(".maps");

/* Departed mms (struct cg_departed; sized by userspace). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cg_departed);
} cg_departed SEC(".maps");

/* Each tracked mm's chain (sized by userspace as the tracker's maps). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DEFAULT_MAX_TRACKED);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct cg_mm);
} cg_mms SEC(".maps");

static __always_inline struct cg_slot *slot_at(__u32 i)
{
	return i < CG_SLOTS ? &cg_slots[i & (CG_SLOTS - 1)] : NULL;
}

static __always_inline void raise_slot(struct cg_slot *s, __s64 now)
{
	for (int i = 0; i < PEAK_TRIES; i++) {
		__s64 seen = READ_ONCE(s->peak);

		if (now <= seen)
			return;
		if (__sync_val_compare_and_swap(&s->peak, seen, now) == seen) {
			s->peak_ns = bpf_ktime_get_ns();
			return;
		}
	}
	__sync_fetch_and_add(&s->peak_races, 1);
}

/* Add d pages (and mm count dm) to every slot of a chain. */
static __always_inline void chain_add(const __u32 slot[CG_DEPTH], __s64 d, __s64 dm)
{
	CFG_SAFE_LOOP
	for (int i = 0; i < CG_DEPTH; i++) {
		struct cg_slot *s = slot_at(slot[i]);

		if (!s)
			continue;
		if (dm)
			__sync_fetch_and_add(&s->mms, dm);
		if (d)
			raise_slot(s, __sync_fetch_and_add(&s->pages, d) + d);
	}
}

/*
 * An mm's change of d pages (split: what it held before, by counter) into
 * its chain: at each level, first its mark (what it held at the slot's
 * latest peak, struct peak_mark), then the add and the raise. A peak
 * raised by another CPU between the two is counted (mark_races): the
 * slot's holders of that window may be blurred, never its peak.
 */
static __always_inline void chain_change(struct cg_mm *cm, const __s64 split[RSS_SLOTS], __s64 d)
{
	CFG_SAFE_LOOP
	for (int i = 0; i < CG_DEPTH; i++) {
		struct cg_slot *s = slot_at(cm->slot[i]);
		__s64 gen;

		if (!s)
			continue;
		gen = READ_ONCE(s->peak);
		peak_mark_note(cm->mark[i], READ_ONCE(s->window), gen, split);
		if (!d)
			continue;
		if (READ_ONCE(s->peak) != gen)
			__sync_fetch_and_add(&s->mark_races, 1);
		raise_slot(s, __sync_fetch_and_add(&s->pages, d) + d);
	}
}

/* The cgroup whose chain an mm's pages count in: its owner's (mm->owner,
 * CONFIG_MEMCG), in the memory hierarchy. */
static __always_inline struct cgroup *mm_cgroup(struct mm_struct *mm)
{
	struct task_struct *owner = BPF_CORE_READ(mm, owner);
	struct css_set *cset = owner ? BPF_CORE_READ(owner, cgroups) : NULL;
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	struct cgroup_subsys_state *css = NULL;

	if (!cset)
		return NULL;
	if (!cg_v1)
		return BPF_CORE_READ(cset, dfl_cgrp);
	if (id < 0 || id >= CGROUP_SUBSYS_COUNT)
		return NULL;
	bpf_core_read(&css, sizeof(css), &cset->subsys[id]);
	return css ? BPF_CORE_READ(css, cgroup) : NULL;
}

/* The slots of cg and its ancestors, CG_DEPTH levels at most, the root
 * left out; a level without a slot is counted and left CG_NO_SLOT. */
static __always_inline void read_chain(struct cgroup *cg, __u32 slot[CG_DEPTH])
{
	CFG_SAFE_LOOP
	for (int i = 0; i < CG_DEPTH; i++) {
		__u64 id = 0;
		__u32 *sp;

		slot[i] = CG_NO_SLOT;
		if (!cg || BPF_CORE_READ(cg, level) < 1) {
			cg = NULL;
			continue;
		}
		id = BPF_CORE_READ(cg, kn, id);
		sp = bpf_map_lookup_elem(&cg_index, &id);
		if (sp)
			slot[i] = *sp;
		else
			__sync_fetch_and_add(&cg_counters.chain_missing, 1);
		cg = BPF_CORE_READ(cg, self.parent, cgroup);
	}
}

/* An entry's template: no slot until the chain is read into it. */
#define NO_MARK { { .window = ~0ULL }, { .window = ~0ULL } }
static const struct cg_mm cg_mm_empty = {
	.slot = { CG_NO_SLOT, CG_NO_SLOT, CG_NO_SLOT, CG_NO_SLOT },
	.mark = { NO_MARK, NO_MARK, NO_MARK, NO_MARK },
};

/* An mm's chain at its first event: an entry made (too big for the
 * stack: from the template), its chain read into it, nothing applied. An
 * event of the same mm on another CPU meanwhile finds it not ready and
 * adds nothing; the next one adds what it missed. */
static __always_inline struct cg_mm *enter_mm(struct mm_struct *mm, __u64 key, struct mm_state *ms)
{
	struct cgroup *cg = mm_cgroup(mm);
	struct cg_mm *cm;

	if (!cg)
		return NULL;
	if (bpf_map_update_elem(&cg_mms, &key, &cg_mm_empty, BPF_NOEXIST) != 0) {
		cm = bpf_map_lookup_elem(&cg_mms, &key);
		if (!cm)
			__sync_fetch_and_add(&cg_counters.mm_full, 1);
		return cm;
	}
	cm = bpf_map_lookup_elem(&cg_mms, &key);
	if (!cm)
		return NULL;
	read_chain(cg, cm->slot);
	cm->tgid = ms->tgid;
	__builtin_memcpy(cm->comm, ms->comm, COMM_LEN);
	chain_add(cm->slot, 0, 1);
	WRITE_ONCE(cm->ready, 1);
	return cm;
}

/* The tracker's filter slot of an mm (tracker_tree.bpf.h, mm_filter_slot:
 * a 32-bit copy is the one operation the verifier allows on the pointer). */
static __always_inline __u32 filter_slot(const void *mm)
{
	__u32 low;

	asm volatile("%0 = %1" : "=w"(low) : "w"((__u32)(__u64)mm));
	return mm_filter_hash(low);
}

/* Bring mm's chain to its pages now (the tracker's, in ms). */
static __always_inline void apply_mm(struct mm_struct *mm, __u64 key, struct mm_state *ms)
{
	struct cg_mm *cm = bpf_map_lookup_elem(&cg_mms, &key);
	__s64 split[RSS_SLOTS], now;

	if (!cm)
		cm = enter_mm(mm, key, ms);
	if (!cm || !READ_ONCE(cm->ready))
		return;
	split[RSS_FILE] = READ_ONCE(ms->pages[RSS_FILE]);
	split[RSS_ANON] = READ_ONCE(ms->pages[RSS_ANON]);
	split[RSS_SHMEM] = READ_ONCE(ms->pages[RSS_SHMEM]);
	now = split[RSS_FILE] + split[RSS_ANON] + split[RSS_SHMEM];
	/* The marks take what it held before: the split applied so far. */
	chain_change(cm, cm->split, now - __sync_lock_test_and_set(&cm->applied, now));
	cm->split[RSS_FILE] = split[RSS_FILE];
	cm->split[RSS_ANON] = split[RSS_ANON];
	cm->split[RSS_SHMEM] = split[RSS_SHMEM];
}

SEC("?tp_btf/rss_stat")
int BPF_PROG(cgsum_rss, struct mm_struct *mm, int member)
{
	__u64 key = (__u64)mm;
	struct mm_state *ms;

	if (!READ_ONCE(mm_filter[filter_slot(mm)]))
		return 0;
	ms = bpf_map_lookup_elem(&mm_states, &key);
	if (ms)
		apply_mm(mm, key, ms);
	return 0;
}

/*
 * Run by userspace once the tracker has entered every process: each mm
 * the tracker has, read once by the task that owns it, enters its chain
 * with its pages now (an idle process has no event to do it).
 */
SEC("?iter/task")
int cgsum_enter_existing(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct mm_struct *mm;
	struct mm_state *ms;
	__u64 key;

	if (!task)
		return 0;
	mm = task->mm;
	if (!mm || BPF_CORE_READ(mm, owner) != task)
		return 0;
	key = (__u64)mm;
	ms = bpf_map_lookup_elem(&mm_states, &key);
	if (ms)
		apply_mm(mm, key, ms);
	return 0;
}

/* Keep what a leaving mm held at its chain's peaks: its marks. */
static __always_inline void note_departure(const struct cg_mm *cm)
{
	__u64 seq = __sync_fetch_and_add(&cg_departed_seq, 1) + 1;
	__u32 i = (__u32)(seq - 1) & cg_departed_mask;
	struct cg_departed *e = bpf_map_lookup_elem(&cg_departed, &i);

	if (!e)
		return;
	WRITE_ONCE(e->seq, 0);          /* userspace skips it while written */
	e->tgid = cm->tgid;
	__builtin_memcpy(e->slot, cm->slot, sizeof(e->slot));
	__builtin_memcpy(e->comm, cm->comm, COMM_LEN);
	__builtin_memcpy(e->mark, cm->mark, sizeof(e->mark));
	WRITE_ONCE(e->seq_end, seq);
	WRITE_ONCE(e->seq, seq);
}

/* The mm's teardown: what it still adds leaves its chain, and so does
 * the mm, its marks kept in the departed ring. */
static __always_inline void teardown(struct mm_struct *mm)
{
	__u64 key = (__u64)mm;
	struct cg_mm *cm = bpf_map_lookup_elem(&cg_mms, &key);

	if (!cm)
		return;
	chain_add(cm->slot, -__sync_lock_test_and_set(&cm->applied, 0), -1);
	note_departure(cm);
	bpf_map_delete_elem(&cg_mms, &key);
}

/*
 * 6.1+: the mmap:exit_mmap tracepoint, after the pages are unmapped (the
 * tracker's handle_exit_mmap__exit_mmap_tp, bpf/tracker.bpf.c, cites the
 * commit). Before it, fentry at exit_mmap's entry, as the tracker's own
 * teardown: the mm leaves with the pages it still holds (its unmapping's
 * events find no tracker state after the tracker's fentry, which runs
 * first). has_exit_mmap_tp picks one (load_variants, tracker_load.c).
 */
SEC("?tp_btf/exit_mmap")
int BPF_PROG(cgsum_teardown__exit_mmap_tp, struct mm_struct *mm)
{
	teardown(mm);
	return 0;
}

SEC("?fentry/exit_mmap")
int BPF_PROG(cgsum_teardown, struct mm_struct *mm)
{
	teardown(mm);
	return 0;
}

/* A cgroup made in the memory hierarchy takes a free slot: one event per
 * cgroup, before any process can be in it. */
SEC("?tp_btf/cgroup_mkdir")
int BPF_PROG(cgsum_mkdir, struct cgroup *cgrp, const char *path)
{
	__u64 id = BPF_CORE_READ(cgrp, kn, id);
	struct cg_slot *s;
	__u64 head;
	__u32 i;

	if ((__u32)BPF_CORE_READ(cgrp, root, hierarchy_id) != cg_hier_id)
		return 0;
	for (int t = 0; t < PEAK_TRIES; t++) {
		head = READ_ONCE(cg_free.head);
		if (head >= READ_ONCE(cg_free.tail)) {
			__sync_fetch_and_add(&cg_counters.no_slot, 1);
			return 0;
		}
		if (__sync_val_compare_and_swap(&cg_free.head, head, head + 1) != head)
			continue;
		i = cg_free.ring[head & (CG_SLOTS - 1)];
		s = slot_at(i);
		if (!s)
			return 0;
		s->level = (__u32)BPF_CORE_READ(cgrp, level);
		s->gone = 0;
		WRITE_ONCE(s->id, id);
		bpf_map_update_elem(&cg_index, &id, &i, BPF_ANY);
		return 0;
	}
	__sync_fetch_and_add(&cg_counters.no_slot, 1);
	return 0;
}

/* Removed: userspace frees the slot once no mm counts in it. */
SEC("?tp_btf/cgroup_rmdir")
int BPF_PROG(cgsum_rmdir, struct cgroup *cgrp, const char *path)
{
	__u64 id = BPF_CORE_READ(cgrp, kn, id);
	__u32 *sp;
	struct cg_slot *s;

	if ((__u32)BPF_CORE_READ(cgrp, root, hierarchy_id) != cg_hier_id)
		return 0;
	sp = bpf_map_lookup_elem(&cg_index, &id);
	s = sp ? slot_at(*sp) : NULL;
	if (s && s->id == id)
		WRITE_ONCE(s->gone, 1);
	return 0;
}

/* A process moved: its mm (if it owns it) takes its pages to the new
 * chain. Entry path: a chain read, no walk of anything else. */
SEC("?tp_btf/cgroup_attach_task")
int BPF_PROG(cgsum_move, struct cgroup *dst, const char *path, struct task_struct *task, bool threadgroup)
{
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	__u64 key = (__u64)mm;
	struct cg_mm *cm;
	__u32 slot[CG_DEPTH];
	__s64 moved;

	if (!mm || (__u32)BPF_CORE_READ(dst, root, hierarchy_id) != cg_hier_id ||
	    BPF_CORE_READ(mm, owner) != task)
		return 0;
	cm = bpf_map_lookup_elem(&cg_mms, &key);
	if (!cm)
		return 0;
	read_chain(mm_cgroup(mm), slot);
	if (slot[0] == cm->slot[0] && slot[1] == cm->slot[1] && slot[2] == cm->slot[2] &&
	    slot[3] == cm->slot[3])
		return 0;
	moved = __sync_lock_test_and_set(&cm->applied, 0);
	chain_add(cm->slot, -moved, -1);
	CFG_SAFE_LOOP
	for (int i = 0; i < CG_DEPTH; i++) {
		cm->slot[i] = slot[i];
		/* its marks were the old slots' windows: none in the new ones */
		cm->mark[i][0].window = cm->mark[i][1].window = ~0ULL;
	}
	cm->split[RSS_FILE] = cm->split[RSS_ANON] = cm->split[RSS_SHMEM] = 0;
	chain_add(cm->slot, 0, 1);
	__sync_fetch_and_add(&cg_counters.moves, 1);
	/* The next event adds its pages as they are then; until it, none. */
	return 0;
}
