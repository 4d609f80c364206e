// SPDX-License-Identifier: MIT
/* The helper's fair limits (serve_fair.h): issue 36's lock-out, in numbers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "serve_fair.h"

/* Four users holding 16 idle connections each: the 64 users' connections. */
static size_t four_holders(struct fair_conn *c)
{
	size_t n = 0;

	for (uid_t u = 1001; u <= 1004; u++)
		for (int i = 0; i < SERVE_CLIENTS_PER_UID; i++)
			c[n++] = (struct fair_conn){ .uid = u, .idle = true };
	return n;
}

static void test_victim(void **state)
{
	struct fair_conn c[SERVE_MAX_CLIENTS];
	size_t n = four_holders(c);
	long v = fair_victim(c, n, 1005);

	(void)state;
	assert_true(v >= 0);
	assert_int_not_equal(c[v].uid, 1005);
	c[v] = (struct fair_conn){ .uid = 1005, .idle = true };
	assert_int_equal(fair_victim(c, n, 1001), c[v].uid == 1001 ? -1 : fair_victim(c, n, 1001));
	/* the holder that lost one (15) cannot end another holder's (16) */
	for (size_t i = 0; i < n; i++)
		if (c[i].uid != 1005) {
			uid_t lost = 0;

			for (uid_t u = 1001; u <= 1004; u++) {
				size_t k = 0;

				for (size_t j = 0; j < n; j++)
					k += c[j].uid == u;
				if (k == SERVE_CLIENTS_PER_UID - 1)
					lost = u;
			}
			assert_int_equal(fair_victim(c, n, lost), -1);
			break;
		}
	/* connections with a tree are never ended */
	for (size_t i = 0; i < n; i++)
		c[i].idle = false;
	assert_int_equal(fair_victim(c, n, 1006), -1);
	/* root's are never ended */
	for (size_t i = 0; i < n; i++)
		c[i] = (struct fair_conn){ .uid = 0, .idle = true };
	assert_int_equal(fair_victim(c, n, 1006), -1);
}

/* 16 slots, 2 root's: one user 4, then shares that leave room for one more. */
static void test_tree_share(void **state)
{
	unsigned free = 14, held[6] = { 0 }, got = 0;

	(void)state;
	/* a user's first tree while one is free; more only above the reserve */
	assert_true(fair_tree_allowed(0, 1));
	assert_false(fair_tree_allowed(0, 0));
	assert_true(fair_tree_allowed(3, SERVE_TREES_RESERVE + 1));
	assert_false(fair_tree_allowed(1, SERVE_TREES_RESERVE));
	assert_false(fair_tree_allowed(SERVE_TREES_PER_UID, 14));
	/* a user alone uses its 4 */
	for (unsigned h = 0; fair_tree_allowed(h, 14 - h); h++)
		got++;
	assert_int_equal(got, SERVE_TREES_PER_UID);
	/* four greedy users, in turn, take what they may: a fifth user's
	 * first tree still finds a slot */
	for (int round = 0; round < 8; round++)
		for (int u = 0; u < 4; u++)
			if (fair_tree_allowed(held[u], free)) {
				held[u]++;
				free--;
			}
	assert_true(fair_tree_allowed(held[4], free));
	for (int u = 0; u < 4; u++)
		assert_true(held[u] >= 1 && held[u] <= SERVE_TREES_PER_UID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_victim),
		cmocka_unit_test(test_tree_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
