/* SPDX-License-Identifier: MIT */
/*
 * --stacks (docs/stacks.md): what bpf/stacks.bpf.c puts in its ring for
 * userspace's page shadow (src/lib/kernel/stacks_shadow.h). Shared with
 * userspace: never include vmlinux.h here; the includer provides the
 * __u64 types, as for tracker.h.
 */
#ifndef PEAKBPF_STACKS_H
#define PEAKBPF_STACKS_H

#define STACK_MAX_FRAMES 32             /* the frame-pointer walk's bound */
#define STACK_SPAN_BYTES (8ULL << 20)   /* a frame pointer must lie below sp + this */
#define STACKS_RING_BYTES (32U << 20)   /* ~100 k faults between two drains */

enum stack_ev_kind {
	STK_FAULT = 1,          /* a user page fault of a tracked process */
	STK_MUNMAP,             /* a = start, b = length; ret 0 on success */
	STK_MADVISE,            /* a = start, b = length, c = advice */
	STK_BRK,                /* ret = the break after it */
	STK_MREMAP,             /* a = old, b = old length, c = new length, ret = new address */
	STK_MMAP_FIXED,         /* a = address, b = length: MAP_FIXED replaced what was there */
	STK_FORK,               /* a = the parent's mm; mm = the child's (not CLONE_VM) */
	STK_EXEC,               /* mm = the new image's */
	STK_MM_GONE,            /* mm torn down (exit_mmap) */
	STK_THP,                /* a user write fault mapped a huge page: a = its PMD-aligned
				 * address, b = its length, c = the fault's address (tid its thread) */
	STK_ANON_BULK,          /* no STK_THP here: a user fault's one change of 2 or more anon
				 * pages, b = its bytes, c = the user ip (tid its thread) */
};

#define STK_THP_BYTES (2ULL << 20)      /* x86-64's PMD: HPAGE_PMD_SIZE */

/* What the fault program saw of the faulting address's VMA (bpf_find_vma). */
#define STK_VMA_FOUND   1u
#define STK_VMA_FILE    2u      /* vm_file set: a file, shmem, or shared anon */
#define STK_VMA_SHARED  4u      /* VM_SHARED */
#define STK_VMA_WRITE   8u      /* VM_WRITE */
#define STK_VMA_HUGE    16u     /* VM_HUGEPAGE: a fault may map 2 MiB (THP) */

struct stack_ev {
	__u32 kind;             /* enum stack_ev_kind */
	__u32 tgid;
	__u64 ns;               /* bpf_ktime_get_ns: CLOCK_MONOTONIC */
	__u64 mm;               /* the address space (its struct mm_struct *) */
	__u32 tree;             /* the process's tree in the tracker's load */
	__u32 tid;              /* the thread, for STK_FAULT and STK_THP; else 0 */
	__u64 a, b, c;
	__s64 ret;
};

/* A fault: the event above, then the address, what kind of VMA, the
 * word at sp (a frameless leaf's return address, often) and the frames,
 * innermost first (frames[0] is the faulting ip). */
struct stack_fault {
	struct stack_ev h;
	__u64 addr;
	__u32 error_code;       /* x86 page fault error code: bit 1 is a write */
	__u32 vma;              /* STK_VMA_* */
	__u64 sp_word;          /* 0 if unreadable */
	__u32 nframes;
	__u32 pad;
	__u64 frames[STACK_MAX_FRAMES];
};

#endif
