// SPDX-License-Identifier: MIT
/*
 * --stacks' page shadow (src/lib/kernel/stacks_shadow.h), its hash map
 * (u64map.h) and the split of the peak (stacks_fold.h): made-up events of
 * the kinds bpf/stacks.bpf.c sends, and what must be resident at the cut.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/types.h>
#include "stacks_shadow.h"
#include "stacks_fold.h"
#include "u64map.h"

#define MM1 0xffff888000001000ULL
#define MM2 0xffff888000002000ULL
#define PG 4096ULL
#define BASE 0x7f0000000000ULL
#define WRITE 2u
#define ANON_RW (STK_VMA_FOUND | STK_VMA_WRITE)

static __u64 now_ns = 100;

static void ev(struct stack_shadow *sh, __u32 kind, __u64 mm, __u64 a, __u64 b, __u64 c, __s64 ret)
{
	struct stack_ev e = { .kind = kind, .tgid = 42, .ns = now_ns++, .mm = mm, .a = a, .b = b, .c = c,
			      .ret = ret };

	assert_int_equal(shadow_event(sh, &e, sizeof(e)), 0);
}

/* A fault at addr, with a stack of two frames: ip and caller. */
static void fault(struct stack_shadow *sh, __u64 mm, __u64 addr, __u32 err, __u32 vma, __u64 caller)
{
	struct stack_fault f = { .h = { .kind = STK_FAULT, .tgid = 42, .ns = now_ns++, .mm = mm },
				 .addr = addr, .error_code = err, .vma = vma, .nframes = 2,
				 .frames = { 0x401000, caller } };

	assert_int_equal(shadow_event(sh, &f, sizeof(f)), 0);
}

static void touch(struct stack_shadow *sh, __u64 mm, __u64 start, __u64 pages, __u64 caller)
{
	for (__u64 i = 0; i < pages; i++)
		fault(sh, mm, start + i * PG + 17, WRITE, ANON_RW, caller);
}

/* Thread tid's write fault at addr (caller: its stack's second frame),
 * then its huge page's event, as bpf/stacks.bpf.c's stk_fault and stk_thp send them. */
static void fault_tid(struct stack_shadow *sh, __u64 mm, __u32 tid, __u64 addr, __u64 caller)
{
	struct stack_fault f = { .h = { .kind = STK_FAULT, .tgid = 42, .tid = tid, .ns = now_ns++, .mm = mm },
				 .addr = addr, .error_code = WRITE, .vma = ANON_RW | STK_VMA_HUGE, .nframes = 2,
				 .frames = { 0x401000, caller } };

	assert_int_equal(shadow_event(sh, &f, sizeof(f)), 0);
}

static void thp(struct stack_shadow *sh, __u64 mm, __u32 tid, __u64 addr)
{
	struct stack_ev e = { .kind = STK_THP, .tgid = 42, .tid = tid, .ns = now_ns++, .mm = mm,
			      .a = addr & ~(STK_THP_BYTES - 1), .b = STK_THP_BYTES, .c = addr };

	assert_int_equal(shadow_event(sh, &e, sizeof(e)), 0);
}

struct tally {
	__u64 pages_by_caller[8];
	__u64 pages_by_mm[2];
	const struct stack_shadow *sh;
};

static int count(void *ctx, __u64 mm, __u32 tgid, __u32 stack, __u64 pages)
{
	struct tally *t = ctx;
	const struct shadow_stack *s = shadow_stack_get(t->sh, stack);

	(void)tgid;
	assert_non_null(s);
	assert_true(s->frames[1] < 8);
	t->pages_by_caller[s->frames[1]] += pages;
	t->pages_by_mm[mm == MM2] += pages;
	return 0;
}

static struct tally tally_of(struct stack_shadow *sh)
{
	struct tally t = { .sh = sh };
	__s64 total = shadow_groups(sh, count, &t);

	assert_int_equal(total, (__s64)(t.pages_by_mm[0] + t.pages_by_mm[1]));
	return t;
}

static struct stack_shadow *fresh(void)
{
	struct stack_shadow *sh;

	assert_int_equal(shadow_new(&sh), 0);
	assert_int_equal(shadow_set_cut(sh, ~0ULL >> 1), 0);    /* everything applies at once */
	ev(sh, STK_EXEC, MM1, 0, 0, 0, 0);
	return sh;
}

static void test_writes_placed_reads_not(void **state)
{
	struct stack_shadow *sh = fresh();
	struct shadow_counts c;
	struct tally t;

	(void)state;
	touch(sh, MM1, BASE, 10, 1);
	touch(sh, MM1, BASE, 10, 2);            /* resident already: the first stack keeps them */
	fault(sh, MM1, BASE + 100 * PG, 0, ANON_RW, 3);                  /* a read: the zero page */
	fault(sh, MM1, BASE + 101 * PG, 0, ANON_RW | STK_VMA_FILE, 3);   /* a file's page */
	fault(sh, MM1, BASE + 102 * PG, WRITE, ANON_RW | STK_VMA_SHARED, 3);
	fault(sh, MM1, BASE + 103 * PG, WRITE, STK_VMA_FOUND, 3);       /* read-only VMA: SIGSEGV */
	fault(sh, MM1, BASE + 104 * PG, WRITE, 0, 3);                    /* VMA not read */
	fault(sh, MM2, BASE, WRITE, ANON_RW, 3);                         /* an mm nobody named */
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[1], 10);
	assert_int_equal(t.pages_by_caller[2], 0);
	assert_int_equal(t.pages_by_caller[3], 0);
	shadow_counts_get(sh, &c);
	assert_int_equal(c.exact_faults, 10);
	assert_int_equal(c.file_faults, 1);
	assert_int_equal(c.read_faults, 2);
	assert_int_equal(c.shared_faults, 1);
	assert_int_equal(c.vma_unknown, 1);
	assert_int_equal(c.untracked_mm, 1);
	assert_int_equal(shadow_stack_count(sh), 1);
	shadow_free(sh);
}

static void test_removals(void **state)
{
	struct stack_shadow *sh = fresh();
	struct tally t;

	(void)state;
	touch(sh, MM1, BASE, 8, 1);                     /* munmap'd whole */
	touch(sh, MM1, BASE + 16 * PG, 8, 2);           /* half madvised away */
	touch(sh, MM1, BASE + 32 * PG, 8, 3);           /* MADV_FREE: gone from the shadow */
	touch(sh, MM1, BASE + 48 * PG, 8, 4);           /* a failed munmap: stays */
	touch(sh, MM1, BASE + 64 * PG, 8, 5);           /* MAP_FIXED over 2 pages */
	ev(sh, STK_MUNMAP, MM1, BASE, 8 * PG, 0, 0);
	ev(sh, STK_MADVISE, MM1, BASE + 16 * PG, 4 * PG, 4, 0);
	ev(sh, STK_MADVISE, MM1, BASE + 32 * PG, 8 * PG, 8, -12);       /* ENOMEM: done where mapped */
	ev(sh, STK_MADVISE, MM1, BASE + 48 * PG, 8 * PG, 14, 0);        /* MADV_HUGEPAGE: nothing */
	ev(sh, STK_MUNMAP, MM1, BASE + 48 * PG, 8 * PG, 0, -22);
	ev(sh, STK_MMAP_FIXED, MM1, BASE + 64 * PG, 2 * PG, 0, (__s64)(BASE + 64 * PG));
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[1], 0);
	assert_int_equal(t.pages_by_caller[2], 4);
	assert_int_equal(t.pages_by_caller[3], 0);
	assert_int_equal(t.pages_by_caller[4], 8);
	assert_int_equal(t.pages_by_caller[5], 6);
	/* A range far larger than the table is walked by the table. */
	ev(sh, STK_MUNMAP, MM1, 0, 1ULL << 47, 0, 0);
	t = tally_of(sh);
	assert_int_equal(t.pages_by_mm[0], 0);
	shadow_free(sh);
}

static void test_brk_and_mremap(void **state)
{
	struct stack_shadow *sh = fresh();
	struct tally t;
	__u64 heap = 0x500000;

	(void)state;
	ev(sh, STK_BRK, MM1, 0, 0, 0, (__s64)heap);                     /* brk(0): where it is */
	ev(sh, STK_BRK, MM1, heap + 16 * PG, 0, 0, (__s64)(heap + 16 * PG));
	touch(sh, MM1, heap, 16, 1);
	ev(sh, STK_BRK, MM1, heap + 4 * PG, 0, 0, (__s64)(heap + 4 * PG));     /* shrinks by 12 */
	touch(sh, MM1, BASE, 8, 2);
	/* Moved and grown: 8 pages follow; then shrunk in place to 3. */
	ev(sh, STK_MREMAP, MM1, BASE, 8 * PG, 16 * PG, (__s64)(BASE + 100 * PG));
	ev(sh, STK_MREMAP, MM1, BASE + 100 * PG, 16 * PG, 3 * PG, (__s64)(BASE + 100 * PG));
	ev(sh, STK_MREMAP, MM1, BASE + 100 * PG, 3 * PG, 30 * PG, -12);        /* failed: nothing */
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[1], 4);
	assert_int_equal(t.pages_by_caller[2], 3);
	ev(sh, STK_MUNMAP, MM1, BASE, 8 * PG, 0, 0);                    /* the old place: empty */
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[2], 3);
	shadow_free(sh);
}

static void test_fork_exec_gone(void **state)
{
	struct stack_shadow *sh = fresh();
	struct tally t;

	(void)state;
	touch(sh, MM1, BASE, 5, 1);
	ev(sh, STK_FORK, MM2, MM1, 0, 0, 0);    /* the child's copy keeps the parent's stack */
	touch(sh, MM2, BASE + 5 * PG, 3, 2);
	touch(sh, MM2, BASE, 5, 3);             /* copy-on-write: the page stays the parent's */
	t = tally_of(sh);
	assert_int_equal(t.pages_by_mm[0], 5);
	assert_int_equal(t.pages_by_mm[1], 8);
	assert_int_equal(t.pages_by_caller[1], 10);
	assert_int_equal(t.pages_by_caller[2], 3);
	ev(sh, STK_MM_GONE, MM1, 0, 0, 0, 0);
	assert_false(shadow_mm_known(sh, MM1, NULL));
	t = tally_of(sh);
	assert_int_equal(t.pages_by_mm[0], 0);
	assert_int_equal(t.pages_by_mm[1], 8);
	ev(sh, STK_EXEC, MM2, 0, 0, 0, 0);      /* a reused address: a new image, empty */
	t = tally_of(sh);
	assert_int_equal(t.pages_by_mm[1], 0);
	shadow_free(sh);
}

/* A process attached live (-p): its mm, named by no exec or fork, is
 * taken up at its first fault; its faults from then on are placed, its
 * fork's child copies only those; a known mm is left as it is. */
static void test_adopt(void **state)
{
	struct stack_shadow *sh = fresh();
	struct shadow_counts c;
	struct tally t;

	(void)state;
	fault(sh, MM2, BASE, WRITE, ANON_RW, 1);        /* not adopted: counted, not placed */
	assert_int_equal(shadow_adopt(sh, MM2, 42), 0);
	assert_true(shadow_mm_known(sh, MM2, NULL));
	touch(sh, MM2, BASE + PG, 4, 2);
	touch(sh, MM1, BASE, 3, 3);
	assert_int_equal(shadow_adopt(sh, MM1, 42), 0); /* known: its pages stay */
	assert_int_equal(shadow_adopt(sh, MM2, 42), 0);
	t = tally_of(sh);
	assert_int_equal(t.pages_by_mm[1], 4);
	assert_int_equal(t.pages_by_mm[0], 3);
	assert_int_equal(t.pages_by_caller[1], 0);
	assert_int_equal(t.pages_by_caller[2], 4);
	shadow_counts_get(sh, &c);
	assert_int_equal(c.untracked_mm, 1);
	assert_int_equal(c.adopted_mms, 1);
	ev(sh, STK_MM_GONE, MM2, 0, 0, 0, 0);
	t = tally_of(sh);
	assert_int_equal(t.pages_by_mm[1], 0);
	shadow_free(sh);
}

/* Events after the cut wait; the cut moving on applies them in order. */
static void test_cut(void **state)
{
	struct stack_shadow *sh;
	struct tally t;
	__u64 t_peak;

	(void)state;
	assert_int_equal(shadow_new(&sh), 0);
	ev(sh, STK_EXEC, MM1, 0, 0, 0, 0);
	assert_int_equal(shadow_set_cut(sh, now_ns - 1), 0);    /* the exec, applied */
	touch(sh, MM1, BASE, 4, 1);
	t_peak = now_ns - 1;
	touch(sh, MM1, BASE + 4 * PG, 4, 2);                    /* after the peak */
	ev(sh, STK_MUNMAP, MM1, BASE, 4 * PG, 0, 0);            /* after it too */
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[1], 0);              /* nothing applied yet */
	assert_int_equal(shadow_set_cut(sh, t_peak), 0);
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[1], 4);
	assert_int_equal(t.pages_by_caller[2], 0);
	assert_int_equal(shadow_set_cut(sh, t_peak - 1), 0);    /* never back */
	assert_int_equal(shadow_cut(sh), t_peak);
	assert_int_equal(shadow_set_cut(sh, now_ns), 0);
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[1], 0);
	assert_int_equal(t.pages_by_caller[2], 4);
	shadow_free(sh);
}

#define HUGE (STK_THP_BYTES / PG)          /* 512 pages */

/* A huge page's event places the pages of its 2 MiB not yet placed with
 * the stack of its thread's fault; a munmap of half of it removes half. */
static void test_thp(void **state)
{
	struct stack_shadow *sh = fresh();
	__u64 huge = BASE + 64 * STK_THP_BYTES;
	struct shadow_counts c;
	struct tally t;

	(void)state;
	touch(sh, MM1, huge + 3 * PG, 1, 2);                    /* placed before: keeps its stack */
	fault_tid(sh, MM1, 7, huge + 5 * PG + 9, 1);
	fault_tid(sh, MM1, 8, BASE, 3);                         /* another thread's, between the two */
	thp(sh, MM1, 7, huge + 5 * PG + 9);
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[1], HUGE - 1);
	assert_int_equal(t.pages_by_caller[2], 1);
	assert_int_equal(t.pages_by_caller[3], 1);
	ev(sh, STK_MUNMAP, MM1, huge, STK_THP_BYTES / 2, 0, 0);
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[1], HUGE / 2);
	assert_int_equal(t.pages_by_caller[2], 0);
	/* No fault of that thread at that address seen (lost, or another
	 * thread's): nothing placed, counted. */
	thp(sh, MM1, 8, huge + 2 * STK_THP_BYTES);
	thp(sh, MM1, 9, huge + 5 * PG + 9);
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[3], 1);
	assert_int_equal(t.pages_by_caller[1], HUGE / 2);
	shadow_counts_get(sh, &c);
	assert_int_equal(c.thp_events, 3);
	assert_int_equal(c.thp_pages, HUGE - 2);
	assert_int_equal(c.thp_unpaired, 2);
	shadow_free(sh);
}

/* The huge page counts in RSS before its event's own time: the event goes
 * with its fault, so a cut between the two has the whole huge page. */
static void test_thp_cut(void **state)
{
	struct stack_shadow *sh;
	struct tally t;
	__u64 t_peak;

	(void)state;
	assert_int_equal(shadow_new(&sh), 0);
	ev(sh, STK_EXEC, MM1, 0, 0, 0, 0);
	fault_tid(sh, MM1, 7, BASE, 1);
	t_peak = now_ns;                                        /* the huge page's rss_stat */
	assert_int_equal(shadow_set_cut(sh, t_peak), 0);
	thp(sh, MM1, 7, BASE);                                  /* its event, after the peak */
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[1], HUGE);
	fault_tid(sh, MM1, 7, BASE + STK_THP_BYTES, 2);         /* both after the cut: kept */
	thp(sh, MM1, 7, BASE + STK_THP_BYTES);
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[2], 0);
	assert_int_equal(shadow_set_cut(sh, now_ns), 0);
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[2], HUGE);
	shadow_free(sh);
}

/* Where no fexit runs, stk_rss's change of N pages in a fault, with its
 * user ip: the thread's fault at that ip maps the N-aligned range around
 * its address; a change at another ip (a syscall's), of a size that is no
 * power of two or above 2 MiB, places nothing and is counted. */
static void test_anon_bulk(void **state)
{
	struct stack_shadow *sh = fresh();
	__u64 huge = BASE + 8 * STK_THP_BYTES;
	struct shadow_counts c;
	struct tally t;
	struct stack_ev e = { .kind = STK_ANON_BULK, .tgid = 42, .tid = 7, .mm = MM1, .c = 0x401000 };

	(void)state;
	fault_tid(sh, MM1, 7, huge + 100 * PG + 3, 1);          /* its ip: frames[0], 0x401000 */
	e.ns = now_ns++;
	e.b = STK_THP_BYTES;
	assert_int_equal(shadow_event(sh, &e, sizeof(e)), 0);
	fault_tid(sh, MM1, 7, BASE + 19 * PG, 2);               /* a 64 KiB folio: 16 pages */
	e.ns = now_ns++;
	e.b = 16 * PG;
	assert_int_equal(shadow_event(sh, &e, sizeof(e)), 0);
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[1], HUGE);
	assert_int_equal(t.pages_by_caller[2], 16);
	fault_tid(sh, MM1, 7, BASE + STK_THP_BYTES, 3);
	e.c = 0x402000;                                         /* another ip */
	assert_int_equal(shadow_event(sh, &e, sizeof(e)), 0);
	e.c = 0x401000;
	e.b = 24 * PG;                                          /* not a power of two */
	assert_int_equal(shadow_event(sh, &e, sizeof(e)), 0);
	e.b = 2 * STK_THP_BYTES;
	assert_int_equal(shadow_event(sh, &e, sizeof(e)), 0);
	t = tally_of(sh);
	assert_int_equal(t.pages_by_caller[3], 1);
	shadow_counts_get(sh, &c);
	assert_int_equal(c.thp_events, 5);
	assert_int_equal(c.thp_unpaired, 3);
	assert_int_equal(c.thp_pages, HUGE - 1 + 15);
	shadow_free(sh);
}

/* Past SHADOW_PENDING_MAX bytes of events after the cut, they are lost
 * and counted (the output then calls nothing exact). */
static void test_pending_overflow(void **state)
{
	struct stack_shadow *sh;
	struct shadow_counts c;
	size_t n = 0;

	(void)state;
	assert_int_equal(shadow_new(&sh), 0);
	do {
		fault(sh, MM1, BASE + (n++ % 1024) * PG, WRITE, ANON_RW, 1);
		shadow_counts_get(sh, &c);
	} while (!c.lost && n < 4 * (SHADOW_PENDING_MAX / 64));
	assert_int_not_equal(c.lost, 0);
	/* Each fault of 2 frames kept in fewer bytes than a whole event. */
	assert_true(n > SHADOW_PENDING_MAX / sizeof(struct stack_fault));
	shadow_free(sh);
}

static void test_bad_events(void **state)
{
	struct stack_shadow *sh = fresh();
	struct stack_ev e = { .kind = 99, .ns = 1 };
	struct stack_ev f = { .kind = STK_FAULT, .ns = 1 };

	(void)state;
	assert_int_equal(shadow_event(sh, &e, sizeof(e)), -EINVAL);
	assert_int_equal(shadow_event(sh, &f, sizeof(f)), -EINVAL);     /* a fault's head alone */
	assert_int_equal(shadow_event(sh, &e, 4), -EINVAL);
	shadow_free(sh);
}

/* The map against a plain array, through random puts and deletes. */
static void test_u64map(void **state)
{
	enum { N = 5000 };
	static uint32_t truth[N];
	struct u64map m = { 0 };
	uint32_t *slot;

	(void)state;
	srand(7);
	memset(truth, 0, sizeof(truth));
	for (int i = 0; i < 200000; i++) {
		uint64_t k = (uint64_t)(rand() % N);

		if (rand() % 3) {
			bool fresh = u64map_put(&m, k + 1, (uint32_t)i + 1, &slot);

			assert_non_null(slot);
			assert_int_equal(fresh, truth[k] == 0);
			if (fresh)
				truth[k] = (uint32_t)i + 1;
		} else {
			assert_int_equal(u64map_del(&m, k + 1), truth[k] != 0);
			truth[k] = 0;
		}
	}
	for (uint64_t k = 0; k < N; k++) {
		slot = u64map_get(&m, k + 1);
		assert_int_equal(slot ? *slot : 0, truth[k]);
	}
	assert_null(u64map_get(&m, 0));
	u64map_free(&m);
}

static void test_split(void **state)
{
	struct stacks_peak p = { .peak_bytes = 1000, .anon_bytes = 700, .file_bytes = 250, .shmem_bytes = 50 };
	struct stacks_split s;
	__u64 sum;

	(void)state;
	stacks_split_of(600, &p, 0, &s);
	sum = s.exact_bytes;
	for (int i = 0; i < STACKS_BUCKETS; i++)
		sum += s.bucket[i];
	assert_int_equal(sum, p.peak_bytes);
	assert_int_equal(s.exact_bytes, 600);
	assert_int_equal(s.bucket[STACKS_BUCKET_ANON], 100);
	assert_int_equal(s.over_bytes, 0);
	stacks_split_of(800, &p, 0, &s);        /* more placed than anon: not exact, said */
	assert_int_equal(s.over_bytes, 100);
	assert_int_equal(s.exact_bytes, 700);
	stacks_split_of(600, &p, 3, &s);        /* events lost: nothing is exact */
	assert_int_equal(s.exact_bytes, 0);
	assert_int_equal(s.bucket[STACKS_BUCKET_LOST], 700);     /* all the anon pages */
	assert_int_equal(s.bucket[STACKS_BUCKET_ANON], 0);
	assert_int_equal(s.bucket[STACKS_BUCKET_FILE], 250);
	assert_int_equal(s.lost_events, 3);
	assert_non_null(strstr(stacks_bucket_name(STACKS_BUCKET_FILE), "fault-around"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_writes_placed_reads_not),
		cmocka_unit_test(test_removals),
		cmocka_unit_test(test_brk_and_mremap),
		cmocka_unit_test(test_fork_exec_gone),
		cmocka_unit_test(test_adopt),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_thp),
		cmocka_unit_test(test_thp_cut),
		cmocka_unit_test(test_anon_bulk),
		cmocka_unit_test(test_pending_overflow),
		cmocka_unit_test(test_bad_events),
		cmocka_unit_test(test_u64map),
		cmocka_unit_test(test_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
