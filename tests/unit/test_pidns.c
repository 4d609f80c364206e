// SPDX-License-Identifier: MIT
/* A client's PID namespace as the helper sees it (src/helper/pidns.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <unistd.h>
#include <cmocka.h>
#include "pidns.h"

/* The line among the others, outermost first; tabs as the kernel writes. */
static void test_nspid_nested(void **state)
{
	const char *status = "Name:\tsh\nTgid:\t4242\nPid:\t4242\nNSpid:\t4242\t17\t1\nNSsid:\t1\n";
	pid_t p[4];
	size_t n = 9;

	(void)state;
	assert_int_equal(parse_nspid(status, p, 4, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(p[0], 4242);
	assert_int_equal(p[1], 17);
	assert_int_equal(p[2], 1);
}

static void test_nspid_one_level_last_line(void **state)
{
	pid_t p[2];
	size_t n;

	(void)state;
	assert_int_equal(parse_nspid("Pid:\t9\nNSpid:\t9", p, 2, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(p[0], 9);
}

static void test_nspid_bad(void **state)
{
	pid_t p[2];
	size_t n;

	(void)state;
	assert_int_equal(parse_nspid("Pid:\t9\n", p, 2, &n), -ENOENT);         /* before 4.1 */
	assert_int_equal(parse_nspid("NSpid:\t\n", p, 2, &n), -EINVAL);
	assert_int_equal(parse_nspid("NSpid:\t9x\n", p, 2, &n), -EINVAL);
	assert_int_equal(parse_nspid("NSpid:\t0\n", p, 2, &n), -EINVAL);
	assert_int_equal(parse_nspid("NSpid:\t99999999999\n", p, 2, &n), -EINVAL);
	assert_int_equal(parse_nspid("NSpid:\t1\t2\t3\n", p, 2, &n), -E2BIG);
	/* "NSpid" must start its line. */
	assert_int_equal(parse_nspid("XNSpid:\t5\n", p, 2, &n), -ENOENT);
}

/* The test's own process is in the helper's namespace: depth 0. */
static void test_depth_self(void **state)
{
	unsigned depth = 7;

	(void)state;
	assert_int_equal(pidns_depth_of(getpid(), &depth), 0);
	assert_int_equal(depth, 0);
	assert_int_equal(pidns_depth_of(0x3ffffff0, &depth), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nspid_nested),
		cmocka_unit_test(test_nspid_one_level_last_line),
		cmocka_unit_test(test_nspid_bad),
		cmocka_unit_test(test_depth_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
