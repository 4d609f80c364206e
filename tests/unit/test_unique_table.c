// SPDX-License-Identifier: MIT
/*
 * The table that finds a memory cgroup's tree on the unique program's
 * event path (bpf/unique.h: unique_group_of, unique_group_tree) and
 * userspace's side of it (src/lib/kernel/unique_table.h): what is entered
 * is found, what is removed is not, a full group refuses, and cgroup ids
 * as the kernel hands them out (a step apart) spread over the groups.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>
#include <linux/types.h>
#include "unique_table.h"

static struct unique_group groups[UNIQUE_GROUPS];

/* What the event path finds for id: its tree, or MAX_TREES. */
static __u32 lookup(__u64 id)
{
	return unique_group_tree(&groups[unique_group_of(id)], id);
}

/* n ids of one group (g), from start up. */
static void same_group_ids(__u64 start, __u32 g, __u64 *ids, int n)
{
	for (__u64 id = start; n > 0; id++) {
		if (unique_group_of(id) == g) {
			*ids++ = id;
			n--;
		}
	}
}

static struct unique_fast fast;

static int reset(void **state)
{
	(void)state;
	memset(groups, 0, sizeof(groups));
	memset(&fast, 0, sizeof(fast));
	return 0;
}

/* What unique_stat does when it counts tree's update by the id
 * (bpf/unique.bpf.c, tree_by_id_learn). */
static void event_learns(__u32 tree, __u64 cg)
{
	__u64 want = UNIQUE_UNLEARNED;

	if (__atomic_compare_exchange_n(&fast.cgroup[tree], &want, cg, false, __ATOMIC_SEQ_CST,
					__ATOMIC_SEQ_CST))
		__atomic_fetch_sub(&fast.pending, 1, __ATOMIC_SEQ_CST);
}

/* The fast reject: a tree enters unlearned (every event walks while one
 * is), its first counted update learns its address, and it leaves with
 * pending right whichever side took it out. */
static void test_fast_reject(void **state)
{
	const __u64 a = 0xffff888100001000ULL, b = 0xffff888100002000ULL;

	(void)state;
	assert_int_equal(sizeof(struct unique_fast), 256);
	assert_int_equal(unique_fast_tree(&fast, a), MAX_TREES);
	unique_fast_enter(&fast, 3);
	unique_fast_enter(&fast, 9);
	assert_int_equal(fast.pending, 2);
	assert_int_equal(unique_fast_tree(&fast, a), MAX_TREES);
	event_learns(3, a);
	event_learns(3, a);             /* learned once */
	assert_int_equal(fast.pending, 1);
	assert_int_equal(unique_fast_tree(&fast, a), 3);
	/* Unlearned, it leaves: userspace takes it out of pending, and an
	 * event that counted it just before cannot learn it after. */
	unique_fast_leave(&fast, 9);
	assert_int_equal(fast.pending, 0);
	event_learns(9, b);
	assert_int_equal(fast.pending, 0);
	assert_int_equal(unique_fast_tree(&fast, b), MAX_TREES);
	/* Learned, it leaves: pending stays, the address finds nothing. */
	unique_fast_leave(&fast, 3);
	assert_int_equal(fast.pending, 0);
	assert_int_equal(unique_fast_tree(&fast, a), MAX_TREES);
	/* A word never entered leaves without touching pending. */
	unique_fast_leave(&fast, 5);
	assert_int_equal(fast.pending, 0);
	/* Every tree at once: each found by its own address. */
	for (__u32 t = 0; t < MAX_TREES; t++) {
		unique_fast_enter(&fast, t);
		event_learns(t, a + 64 * t);
	}
	assert_int_equal(fast.pending, 0);
	for (__u32 t = 0; t < MAX_TREES; t++)
		assert_int_equal(unique_fast_tree(&fast, a + 64 * t), t);
}

static void test_layout(void **state)
{
	(void)state;
	/* One cache line a group, one a tree's state: the event path reads one. */
	assert_int_equal(sizeof(struct unique_group), 64);
	assert_int_equal(sizeof(struct unique_state), 64);
	assert_int_equal(UNIQUE_GROUPS, 1 << UNIQUE_GROUP_BITS);
	for (__u64 id = 1; id < 100000; id += 7)
		assert_true(unique_group_of(id) < UNIQUE_GROUPS);
	assert_true(unique_group_of(~0ULL) < UNIQUE_GROUPS);
}

static void test_insert_find_remove(void **state)
{
	(void)state;
	assert_int_equal(lookup(4242), MAX_TREES);
	assert_int_equal(unique_table_insert(groups, 4242, 3), 0);
	assert_int_equal(lookup(4242), 3);
	assert_int_equal(lookup(4243), MAX_TREES);
	/* A cgroup is one tree's. */
	assert_int_equal(unique_table_insert(groups, 4242, 5), -EEXIST);
	assert_int_equal(lookup(4242), 3);
	/* Another tree's way of the id is not this tree's to remove. */
	assert_int_equal(unique_table_remove(groups, 4242, 5), -ENOENT);
	assert_int_equal(lookup(4242), 3);
	assert_int_equal(unique_table_remove(groups, 4242, 3), 0);
	assert_int_equal(lookup(4242), MAX_TREES);
	assert_int_equal(unique_table_remove(groups, 4242, 3), -ENOENT);
}

static void test_refusals(void **state)
{
	(void)state;
	/* Id 0 is a free way's: never entered, and never found. */
	assert_int_equal(unique_table_insert(groups, 0, 1), -EINVAL);
	assert_int_equal(unique_table_insert(groups, 77, MAX_TREES), -EINVAL);
	assert_int_equal(unique_table_remove(groups, 0, 0), -ENOENT);
	for (int g = 0; g < UNIQUE_GROUPS; g++)
		for (int w = 0; w < UNIQUE_WAYS; w++)
			assert_int_equal(groups[g].id[w], 0);
}

/* A group takes UNIQUE_WAYS trees; the next is refused, a freed way is reused,
 * and every tree in the group is found as its own. */
static void test_full_group(void **state)
{
	__u64 ids[UNIQUE_WAYS + 1];

	(void)state;
	same_group_ids(1000, 9, ids, UNIQUE_WAYS + 1);
	for (int i = 0; i < UNIQUE_WAYS; i++)
		assert_int_equal(unique_table_insert(groups, ids[i], (__u32)i + 10), 0);
	assert_int_equal(unique_table_insert(groups, ids[UNIQUE_WAYS], 2), -ENOSPC);
	assert_int_equal(lookup(ids[UNIQUE_WAYS]), MAX_TREES);
	for (int i = 0; i < UNIQUE_WAYS; i++)
		assert_int_equal(lookup(ids[i]), (__u32)i + 10);
	/* Free the second way: the refused id now goes in, the others stay. */
	assert_int_equal(unique_table_remove(groups, ids[1], 11), 0);
	assert_int_equal(unique_table_insert(groups, ids[UNIQUE_WAYS], 2), 0);
	assert_int_equal(lookup(ids[UNIQUE_WAYS]), 2);
	assert_int_equal(lookup(ids[1]), MAX_TREES);
	assert_int_equal(lookup(ids[0]), 10);
	assert_int_equal(lookup(ids[2]), 12);
	assert_int_equal(lookup(ids[3]), 13);
	/* Other groups are untouched. */
	for (int g = 0; g < UNIQUE_GROUPS; g++)
		if (g != 9)
			for (int w = 0; w < UNIQUE_WAYS; w++)
				assert_int_equal(groups[g].id[w], 0);
}

/*
 * Cgroup ids are kernfs inode numbers: a new cgroup's comes after its
 * siblings' files, so one made after another is a step of (files + 1)
 * apart (33 on a cgroup v1 memory hierarchy, some 60 to 100 with v2's
 * controllers). MAX_TREES cgroups made one after another at any step up to
 * 300 fit the table: no group is asked for more than its ways, where the
 * low bits alone put every cgroup of a step of 256 into one group. (A few
 * larger steps can fill one, 305 the first: that tree is then refused,
 * with its reason, never given a wrong figure.)
 */
static void test_steps_spread(void **state)
{
	(void)state;
	for (__u64 step = 1; step <= 300; step++) {
		for (__u64 start = 1000; start < 1000 + 200 * 997; start += 997) {
			int load[UNIQUE_GROUPS] = { 0 }, most = 0;

			for (int t = 0; t < MAX_TREES; t++) {
				int n = ++load[unique_group_of(start + (__u64)t * step)];

				most = n > most ? n : most;
			}
			if (most > UNIQUE_WAYS)
				fail_msg("step %llu from %llu: %d cgroups in one group",
					 (unsigned long long)step, (unsigned long long)start, most);
		}
	}
}

/* MAX_TREES trees at once, on ids a step of 33 apart: each finds its own. */
static void test_all_trees(void **state)
{
	(void)state;
	for (__u32 t = 0; t < MAX_TREES; t++)
		assert_int_equal(unique_table_insert(groups, 53561 + 33 * (__u64)t, t), 0);
	for (__u32 t = 0; t < MAX_TREES; t++)
		assert_int_equal(lookup(53561 + 33 * (__u64)t), t);
	for (__u32 t = 0; t < MAX_TREES; t += 2)
		assert_int_equal(unique_table_remove(groups, 53561 + 33 * (__u64)t, t), 0);
	for (__u32 t = 0; t < MAX_TREES; t++)
		assert_int_equal(lookup(53561 + 33 * (__u64)t), t % 2 ? t : MAX_TREES);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_layout, reset),
		cmocka_unit_test_setup(test_insert_find_remove, reset),
		cmocka_unit_test_setup(test_refusals, reset),
		cmocka_unit_test_setup(test_full_group, reset),
		cmocka_unit_test_setup(test_steps_spread, reset),
		cmocka_unit_test_setup(test_all_trees, reset),
		cmocka_unit_test_setup(test_fast_reject, reset),
	};

	return cmocka_run_group_tests_name("unique_table", tests, NULL, NULL);
}
