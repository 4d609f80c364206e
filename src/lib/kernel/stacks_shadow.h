/* SPDX-License-Identifier: MIT */
/*
 * --stacks' page shadow (docs/stacks.md): the ring's events (bpf/stacks.h)
 * replayed into, per address space, page -> the stack of the fault that
 * brought the page in, cut at the peak instant. Pure (no BPF, no /proc):
 * the unit tests drive it with made-up events.
 *
 * Exact: a write fault in a private VMA maps one anon page at the fault's
 * page (a new page or a copy), so the page is resident from then until a
 * decoded removal (munmap, madvise DONTNEED/FREE, brk shrinking, mremap,
 * mmap MAP_FIXED, the mm's teardown); and a transparent huge page's fault
 * (STK_THP, after its thread's STK_FAULT) maps the 2 MiB around it: its
 * pages not yet placed get that fault's stack. Everything else is counted, not
 * placed: read faults (the zero page, file pages and their fault-around),
 * shared mappings, faults whose VMA could not be looked up; the cut's
 * remainder (the peak's breakdown less the exact part) goes into named
 * buckets (stacks_fold.h).
 */
#ifndef PEAKBPF_STACKS_SHADOW_H
#define PEAKBPF_STACKS_SHADOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "stacks.h"

#define SHADOW_PAGE_SHIFT 12
/* Events after the cut kept until the peak moves past them or the run
 * ends, in bytes (a fault's frames only as many as it has: ~170 B with
 * 10): beyond this, they are dropped and counted (shadow_counts.lost). */
#define SHADOW_PENDING_MAX (64u << 20)

struct stack_shadow;

/* A distinct stack (its frames innermost first). */
struct shadow_stack {
	__u64 frames[STACK_MAX_FRAMES];
	__u32 nframes;
	__u64 sp_word;
	__u64 mm;               /* the first mm whose fault had it (for its maps) */
};

/* What the replay saw that it could not place page by page. */
struct shadow_counts {
	__u64 faults;                   /* fault events applied */
	__u64 exact_faults;             /* ...that placed a page */
	__u64 file_faults;              /* in a VMA with a file (read: fault-around) */
	__u64 shared_faults;            /* in a shared VMA */
	__u64 read_faults;              /* private, read: the zero page, or a swap-in */
	__u64 vma_unknown;              /* the VMA could not be looked up */
	__u64 huge_faults;              /* in a VM_HUGEPAGE VMA: may have mapped 2 MiB */
	__u64 thp_events;               /* huge pages mapped by a user write fault (STK_THP) */
	__u64 thp_pages;                /* ...pages they placed (not placed before) */
	__u64 thp_unpaired;             /* ...whose thread's fault was not seen: not placed */
	__u64 untracked_mm;             /* in an mm no exec or fork named */
	__u64 adopted_mms;              /* ...taken up at its first fault (shadow_adopt) */
	__u64 removals;                 /* decoded removals applied */
	__u64 lost;                     /* events past SHADOW_PENDING_MAX, dropped */
};

int shadow_new(struct stack_shadow **out);
void shadow_free(struct stack_shadow *sh);
/* One event from the ring (size: its length). Applied now when at or before
 * the cut (shadow_set_cut), else kept until the cut passes it. A huge
 * page's event takes the time of its thread's fault (the fault's entry: the
 * pages count in RSS before the event's own time), so that the two are
 * applied together. 0, -EINVAL (too short, unknown kind) or -ENOMEM. */
int shadow_event(struct stack_shadow *sh, const void *ev, size_t size);
/* The cut instant (CLOCK_MONOTONIC ns): only ever moves on; events kept
 * with ns <= cut are applied, in the order they came. */
int shadow_set_cut(struct stack_shadow *sh, __u64 cut_ns);
/* An address space no exec or fork named, that was in the tree before the
 * shadow began (a process attached live, -p): an empty shadow from now on,
 * so that its later faults are placed; what it held before is not (the
 * buckets hold it). Nothing if mm is known. 0 or -ENOMEM. */
int shadow_adopt(struct stack_shadow *sh, __u64 mm, __u32 tgid);
__u64 shadow_cut(const struct stack_shadow *sh);

/* Resident exact pages by (mm, stack): fn once a group, in no order.
 * Returns the total of pages, or fn's non-zero result. */
typedef int (*shadow_group_fn)(void *ctx, __u64 mm, __u32 tgid, __u32 stack, __u64 pages);
__s64 shadow_groups(struct stack_shadow *sh, shadow_group_fn fn, void *ctx);
const struct shadow_stack *shadow_stack_get(const struct stack_shadow *sh, __u32 id);
size_t shadow_stack_count(const struct stack_shadow *sh);
void shadow_counts_get(const struct stack_shadow *sh, struct shadow_counts *out);
/* Whether the mm is one an exec or fork named (its faults are placed),
 * and the last tgid that used it. */
bool shadow_mm_known(const struct stack_shadow *sh, __u64 mm, __u32 *tgid);

#endif
