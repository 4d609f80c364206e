/* SPDX-License-Identifier: MIT */
/*
 * Kernel differences, in one place. Each cites the kernel change that made
 * it. Two mechanisms, no third:
 *  - struct layout: CO-RE (flavour types, bpf_core_type_exists), chosen
 *    by libbpf at load time;
 *  - what the kernel can load: a feature flag named has_<feature>, the same
 *    name in userspace (src/lib/kernel/kfeatures.h) and here, as const volatile rodata
 *    or as a program name suffix "__<feature>" (tracker.c, load_variants).
 * The features and their kernels are listed in docs/design.md.
 */
#ifndef PEAKBPF_COMPAT_BPF_H
#define PEAKBPF_COMPAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

/*
 * Before 6.2 the rss counters were atomics in struct mm_rss_stat (plus
 * per-task caches, SPLIT_RSS_COUNTING). Commit f1a7941243c1 ("mm: convert
 * mm's rss stats into percpu_counter", 6.2) made them percpu_counters: a
 * shared .count plus one s32 slot per CPU, folded into .count when a slot
 * would reach the batch (lib/percpu_counter.c, percpu_counter_add_batch).
 */
struct mm_rss_stat___pre62 {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___pre62 {
	struct mm_rss_stat___pre62 rss_stat;
} __attribute__((preserve_access_index));

/* has_percpu_rss, decided by CO-RE: a constant once loaded. */
static __always_inline bool has_percpu_rss(void)
{
	return !bpf_core_type_exists(struct mm_rss_stat___pre62);
}

/*
 * Counters are read at constant indices (enum MM_* of vmlinux.h, the same
 * on every kernel since 4.5): sizeof(struct percpu_counter) depends on
 * lock debugging options, so an index computed with the local size would
 * be wrong. Each layout is read in a function of its own, never inlined:
 * clang hoists relocated offsets out of branches, and the offsets of the
 * layout this kernel lacks are poisoned by libbpf; a call is not hoisted,
 * and the verifier never walks a call in a branch it knows is dead.
 */
#define SLOT_READ(slot, read)                                                 \
	({                                                                     \
		long __r;                                                      \
		switch (slot) {                                                \
		case RSS_FILE:                                                 \
			__r = read(MM_FILEPAGES);                              \
			break;                                                 \
		case RSS_ANON:                                                 \
			__r = read(MM_ANONPAGES);                              \
			break;                                                 \
		default:                                                       \
			__r = read(MM_SHMEMPAGES);                             \
			break;                                                 \
		}                                                              \
		__r;                                                           \
	})

/* A counter that could not be read: no real counter has this value. */
#define COUNTER_UNREADABLE (-0x7fffffffffffffffL - 1)

/* bpf_core_read, or COUNTER_UNREADABLE: BPF_CORE_READ would give 0. */
#define CORE_READ_OR_UNREADABLE(src)                                          \
	({                                                                     \
		long __v = 0;                                                  \
		bpf_core_read(&__v, sizeof(__v), &(src)) ? COUNTER_UNREADABLE : __v; \
	})

static __noinline long pre62_counter(struct mm_struct *mm, int slot)
{
	struct mm_struct___pre62 *o = (void *)mm;

#define __PRE62(idx) CORE_READ_OR_UNREADABLE(o->rss_stat.count[idx].counter)
	return SLOT_READ(slot, __PRE62);
#undef __PRE62
}

static __noinline long percpu_counter_count(struct mm_struct *mm, int slot)
{
#define __COUNT(idx) CORE_READ_OR_UNREADABLE(mm->rss_stat[idx].count)
	return SLOT_READ(slot, __COUNT);
#undef __COUNT
}

/*
 * Before 6.2 each thread also cached its own changes (SPLIT_RSS_COUNTING):
 * struct task_rss_stat { int events; int count[NR_MM_COUNTERS]; } in
 * task_struct, filled by add_mm_counter_fast() and synced by
 * check_sync_rss_stat() (mm/memory.c). The same commit f1a7941243c1
 * removed it. NR_MM_COUNTERS is 4 on every kernel that has it.
 */
struct task_rss_stat___pre62 {
	int events;
	int count[4];
} __attribute__((preserve_access_index));

struct task_struct___pre62 {
	struct task_rss_stat___pre62 rss_stat;
} __attribute__((preserve_access_index));

/* Before 6.2: cache_charge_pages() of a thread's cache, read in one copy;
 * -1 if the read failed. Not inlined, as the counters above. */
static __noinline __attribute__((unused)) long pre62_cache_charge(struct task_struct *task, int at_event)
{
	struct task_struct___pre62 *t = (void *)task;
	struct task_rss_stat___pre62 rs = {};

	if (bpf_core_read(&rs, sizeof(rs), &t->rss_stat))
		return -1;
	return cache_charge_pages(rs.count, rs.events, at_event);
}

/* 6.2+: the address of a counter's per-CPU slots (an s32 __percpu *). */
static __noinline long percpu_counter_slots(struct mm_struct *mm, int slot)
{
#define __SLOTS(idx) (long)BPF_CORE_READ(mm, rss_stat[idx].counters)
	return SLOT_READ(slot, __SLOTS);
#undef __SLOTS
}

/* The shared value of one counter: before 6.2 the whole atomic, from 6.2
 * .count (lagging the per-CPU slots); COUNTER_UNREADABLE if the read failed. */
static __always_inline long mm_slot_count(struct mm_struct *mm, int slot)
{
	return has_percpu_rss() ? percpu_counter_count(mm, slot) : pre62_counter(mm, slot);
}

static __always_inline __u64 mm_slot_counters(struct mm_struct *mm, int slot)
{
	return has_percpu_rss() ? (__u64)percpu_counter_slots(mm, slot) : 0;
}

/* rss slot of a kernel counter index, or -1 for MM_SWAPENTS. */
static __always_inline int rss_slot_of_member(int member)
{
	switch (member) {
	case MM_FILEPAGES:
		return RSS_FILE;
	case MM_ANONPAGES:
		return RSS_ANON;
	case MM_SHMEMPAGES:
		return RSS_SHMEM;
	default:
		return -1;
	}
}

/*
 * Atomics. Fetching forms (fetch-add, xchg, cmpxchg) came in 5.12 (commit
 * 5ca419f2864a, "bpf: Add BPF_FETCH field / create atomic_fetch_add
 * instruction", and the xchg/cmpxchg commits after it); before, only XADD,
 * which returns nothing. has_fetch_atomics is set before load; the verifier
 * then never walks the other branch. A pre-5.12 verifier still checks every
 * instruction's encoding, dead or not ("BPF_STX uses reserved fields"), so
 * there userspace also replaces each fetching form with a poisoned call
 * before load (tracker.c, poison_fetch_atomics). The fallbacks are not
 * atomic across CPUs; such a kernel is before 6.2, never claimed exact.
 */
extern const volatile bool has_fetch_atomics;

/*
 * A map update's error. Before 6.4 (commit "bpf: return long from
 * bpf_map_*_elem() helpers") a map's update op returned int, and the
 * verifier calls that op directly: the upper half of the result is not
 * sign-extended (5.10 and 6.1 give -EEXIST as 0xffffffef). Its low half is
 * the error on every kernel.
 */
#define MAP_UPDATE_ERR(call) ((int)(call))

/*
 * Loops. Until 6.7, check_cfg() accepted a loop's back-edge only where it
 * is a jump; commit 10e14e9652bf ("bpf: fix control-flow graph checking in
 * privileged mode") accepts any. clang may lay a loop out so that its latch
 * falls through into its header, which 5.10 and 6.1 then reject
 * ("back-edge from insn N to N+1"). Short loops are unrolled instead.
 */
#define CFG_SAFE_LOOP _Pragma("unroll")

/*
 * An mm's dumpability (get_dumpable(), include/linux/sched/coredump.h): the
 * low two bits of mm->flags, SUID_DUMP_USER (1) when its owner may ptrace
 * it. Linux 6.18 made mm->flags a bitmap (mm_flags_t, "mm: convert
 * mm->flags to a bitmap", Lorenzo Stoakes) whose first word keeps those
 * bits; before, it was an unsigned long. Each read in a function of its
 * own, as the counters above.
 */
#define MMF_DUMPABLE_MASK 3
#define SUID_DUMP_USER 1

struct mm_struct___flags_word {
	unsigned long flags;
} __attribute__((preserve_access_index));

static __noinline long mm_flags_word(struct mm_struct *mm)
{
	struct mm_struct___flags_word *o = (void *)mm;

	return CORE_READ_OR_UNREADABLE(o->flags);
}

static __noinline long mm_flags_bitmap(struct mm_struct *mm)
{
	return CORE_READ_OR_UNREADABLE(mm->flags.__mm_flags[0]);
}

static __always_inline bool mm_dumpable_by_owner(struct mm_struct *mm)
{
	long w = bpf_core_field_exists(struct mm_struct___flags_word, flags) ? mm_flags_word(mm)
									      : mm_flags_bitmap(mm);

	return w != COUNTER_UNREADABLE && (w & MMF_DUMPABLE_MASK) == SUID_DUMP_USER;
}

/*
 * The oom:mark_victim tracepoint passed the victim's PID alone
 * (TP_PROTO(int pid)) until commit 72ba14deb40a ("mm: update mark_victim
 * tracepoints fields", 6.9) made it TP_PROTO(struct task_struct *task,
 * uid_t uid) and added the rss fields to its record: where the record has
 * anon_rss, the first argument is the task (bpf/oom.bpf.c).
 */
struct trace_event_raw_mark_victim___v69 {
	unsigned long anon_rss;
} __attribute__((preserve_access_index));

static __always_inline bool mark_victim_has_task(void)
{
	return bpf_core_field_exists(struct trace_event_raw_mark_victim___v69, anon_rss);
}

#define READ_ONCE(x) (*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

static __always_inline __s64 atomic_add_return(__s64 *p, __s64 v)
{
	if (has_fetch_atomics)
		return __sync_fetch_and_add(p, v) + v;
	/* XADD, no result, spelled in asm: the same builtin on both branches
	 * is merged by clang into one fetch-add before the branch. */
	asm volatile("lock *(u64 *)(%0 + 0) += %1" : : "r"(p), "r"(v) : "memory");
	return READ_ONCE(*p);
}

static __always_inline void atomic_add(__s64 *p, __s64 v)
{
	__sync_fetch_and_add(p, v);             /* result unused: XADD everywhere */
}

static __always_inline __s64 atomic_xchg(__s64 *p, __s64 v)
{
	__s64 old;

	if (has_fetch_atomics)
		return __sync_lock_test_and_set(p, v);
	old = READ_ONCE(*p);
	WRITE_ONCE(*p, v);
	return old;
}

static __always_inline bool atomic_cas(__s64 *p, __s64 old, __s64 new)
{
	if (has_fetch_atomics)
		return __sync_val_compare_and_swap(p, old, new) == old;
	if (READ_ONCE(*p) != old)
		return false;
	WRITE_ONCE(*p, new);
	return true;
}

/*
 * A cgroup's ancestors, itself included, by level. Before 6.1 it kept their
 * kernfs ids (u64 ancestor_ids[]); "cgroup: Replace cgroup->ancestor_ids[]
 * with ->ancestors[]" (Tejun Heo, 6.1) keeps pointers instead. Each layout
 * is read in a function of its own, never inlined (as above: a missing
 * layout's offsets are poisoned, and a call is not hoisted).
 */
struct cgroup___pre61 {
	int level;
	__u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

static __noinline __u64 cgroup_ancestor_id_pre61(struct cgroup *cg, __u32 level)
{
	__u64 id = 0;

	bpf_probe_read_kernel(&id, sizeof(id),
			      (void *)cg + bpf_core_field_offset(struct cgroup___pre61, ancestor_ids) +
			      (__u64)(level & 0xff) * sizeof(id));
	return id;
}

static __noinline __u64 cgroup_ancestor_id_61(struct cgroup *cg, __u32 level)
{
	struct cgroup *anc = NULL;

	if (bpf_probe_read_kernel(&anc, sizeof(anc),
				  (void *)cg + bpf_core_field_offset(struct cgroup, ancestors) +
				  (__u64)(level & 0xff) * sizeof(anc)))
		return 0;
	return anc ? BPF_CORE_READ(anc, kn, id) : 0;
}

static __always_inline __u64 cgroup_ancestor_at(struct cgroup *cg, __u32 level)
{
	if (bpf_core_field_exists(struct cgroup___pre61, ancestor_ids))
		return cgroup_ancestor_id_pre61(cg, level);
	return cgroup_ancestor_id_61(cg, level);
}

#endif
