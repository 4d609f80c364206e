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

static void test_users(void **state)
{
	struct fair_conn c[SERVE_MAX_CLIENTS];
	size_t n = four_holders(c);

	(void)state;
	assert_int_equal(fair_users(c, n), 4);
	c[n++] = (struct fair_conn){ .uid = 0 };
	assert_int_equal(fair_users(c, n), 4);          /* root is not a user here */
	assert_int_equal(fair_users(c, 0), 0);
}

/* A fifth user gets in: an idle connection of a holder ends. The holder's
 * connection back then ends none (it holds no more than the others). */
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
	(void)state;
	assert_int_equal(fair_tree_share(16, 1), 4);
	assert_int_equal(fair_tree_share(16, 2), 4);
	assert_int_equal(fair_tree_share(16, 3), 3);
	assert_int_equal(fair_tree_share(16, 4), 2);
	assert_int_equal(fair_tree_share(16, 6), 2);
	assert_int_equal(fair_tree_share(16, 7), 1);
	assert_int_equal(fair_tree_share(16, 100), 1);
	assert_int_equal(fair_tree_share(2, 1), 1);
	/* four users at their share leave room for a fifth's tree, and root's */
	assert_true(4 * fair_tree_share(16, 4) + 1 + SERVE_ROOT_TREES <= 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_users),
		cmocka_unit_test(test_victim),
		cmocka_unit_test(test_tree_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
