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

/*
 * The exact value of one 6.2+ counter: .count plus every CPU's slot, as
 * percpu_counter_sum() computes it, without its lock. .counters is an
 * s32 __percpu pointer; on a BTF without percpu type tags the verifier
 * rejects bpf_per_cpu_ptr() on it, so each CPU's slot is read at
 * counters + cpu_offset[cpu] (the kernel's __per_cpu_offset, learned once).
 */
#define PERCPU_COUNTER_SUM(mm, idx, offsets, ncpus)                           \
	({                                                                     \
		struct percpu_counter *__pc =                                  \
			__builtin_preserve_access_index(&(mm)->rss_stat[idx]); \
		long __s = BPF_CORE_READ(__pc, count);                         \
		__u64 __slots = (__u64)BPF_CORE_READ(__pc, counters);          \
		for (__u32 __c = 0; __c < MAX_CPUS && __c < (ncpus); __c++) {  \
			__s32 __v = 0;                                         \
			bpf_probe_read_kernel(&__v, sizeof(__v),               \
					      (void *)(__slots + (offsets)[__c])); \
			__s += __v;                                            \
		}                                                              \
		__s;                                                           \
	})

static __always_inline long mm_slot_pages_exact(struct mm_struct *mm, int slot,
						const __u64 *offsets, __u32 ncpus)
{
	switch (slot) {
	case RSS_FILE:
		return PERCPU_COUNTER_SUM(mm, 0, offsets, ncpus);
	case RSS_ANON:
		return PERCPU_COUNTER_SUM(mm, 1, offsets, ncpus);
	default:
		return PERCPU_COUNTER_SUM(mm, 3, offsets, ncpus);
	}
}

/*
 * Atomics. Fetching forms (fetch-add, xchg, cmpxchg) came in 5.12 (commit
 * 5ca419f2864a, "bpf: Add BPF_FETCH field / create atomic_fetch_add
 * instruction", and the xchg/cmpxchg commits after it); before, only XADD,
 * which returns nothing. Userspace probes the kernel and sets
 * have_fetch_atomics; the verifier then never walks the other branch. But
 * a pre-5.12 verifier checks every instruction's encoding before it walks
 * any ("BPF_STX uses reserved fields"), dead or not: there, userspace also
 * replaces each fetching form with a poisoned call before load (tracker.c,
 * poison_fetch_atomics). The fallbacks are not atomic across CPUs, so a
 * pre-5.12 result is never claimed exact (its kernel is before 6.2 anyway).
 */
extern const volatile bool have_fetch_atomics;

#define READ_ONCE(x) (*(const volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

static __always_inline __s64 atomic_add_return(__s64 *p, __s64 v)
{
	if (have_fetch_atomics)
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

	if (have_fetch_atomics)
		return __sync_lock_test_and_set(p, v);
	old = READ_ONCE(*p);
	WRITE_ONCE(*p, v);
	return old;
}

static __always_inline bool atomic_cas(__s64 *p, __s64 old, __s64 new)
{
	if (have_fetch_atomics)
		return __sync_val_compare_and_swap(p, old, new) == old;
	if (READ_ONCE(*p) != old)
		return false;
	WRITE_ONCE(*p, new);
	return true;
}

/*
 * Callbacks. bpf_for_each_map_elem() came in 5.13 (commit 69c087ba6225,
 * "bpf: Add bpf_for_each_map_elem() helper"), with the ld_imm64 form
 * (src_reg BPF_PSEUDO_FUNC) that hands it its callback. An older verifier
 * rejects a program that merely contains that instruction, even on a
 * branch a rodata flag makes dead: the callback is a subprog it cannot see
 * ("number of funcs in func_info doesn't match number of subprogs"). So
 * each program that can reach a callback (the holder snapshot, the tree
 * refresh) has a twin compiled without any, in a NOSNAP_SEC section ("?":
 * not autoloaded by default); userspace autoloads one of each pair, from
 * the helper probe that also sets have_for_each (tracker.c).
 */
#define NOSNAP_SEC(name) SEC("?" name)

/*
 * Loops. Until 6.7, check_cfg() accepted a loop's back-edge only where it
 * is a jump; commit 10e14e9652bf ("bpf: fix control-flow graph checking in
 * privileged mode") accepts any. clang may lay a loop out so that its
 * latch falls through into the header, which 5.10 and 6.1 then reject
 * ("back-edge from insn N to N+1"): the iterator's ancestry walk came out
 * that way. A loop short enough to unroll is unrolled with CFG_SAFE_LOOP.
 */
#define CFG_SAFE_LOOP _Pragma("unroll")

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
