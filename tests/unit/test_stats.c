// SPDX-License-Identifier: MIT
/* Statistics of repeated runs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include "stats.h"

static void test_odd_count(void **state)
{
	const double v[] = { 5, 1, 3, 2, 4 };
	struct stat5 s;

	(void)state;
	stats_compute(v, 5, &s);
	assert_int_equal(s.n, 5);
	assert_true(s.min == 1 && s.max == 5 && s.median == 3 && s.mean == 3);
	assert_true(s.has_stddev);
	assert_true(s.stddev > 1.58113 && s.stddev < 1.58114);      /* sqrt(2.5) */
	assert_true(v[0] == 5);                                     /* input untouched */
}

static void test_even_count_median_is_the_middle_pair(void **state)
{
	const double v[] = { 10, 40, 20, 30 };
	struct stat5 s;

	(void)state;
	stats_compute(v, 4, &s);
	assert_true(s.median == 25);
}

static void test_one_value_has_no_stddev(void **state)
{
	const double v[] = { 7 };
	struct stat5 s;

	(void)state;
	stats_compute(v, 1, &s);
	assert_int_equal(s.n, 1);
	assert_false(s.has_stddev);
	assert_true(s.min == 7 && s.max == 7 && s.median == 7);
}

static void test_nothing_measured(void **state)
{
	struct stat5 s;

	(void)state;
	stats_compute(NULL, 0, &s);
	assert_int_equal(s.n, 0);
	assert_false(s.has_stddev);
}

static void test_sqrt(void **state)
{
	(void)state;
	assert_true(stats_sqrt(0) == 0);
	assert_true(stats_sqrt(-4) == 0);
	assert_true(stats_sqrt(1) == 1);
	assert_true(stats_sqrt(4) == 2);
	assert_true(stats_sqrt(0.25) == 0.5);
	assert_true(stats_sqrt(1e18) > 999999999.999 && stats_sqrt(1e18) < 1000000000.001);
	assert_true(stats_sqrt(2) * stats_sqrt(2) > 1.9999999999 && stats_sqrt(2) * stats_sqrt(2) < 2.0000000001);
	assert_true(stats_sqrt(1.0 / 0.0) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_odd_count),
		cmocka_unit_test(test_even_count_median_is_the_middle_pair),
		cmocka_unit_test(test_one_value_has_no_stddev),
		cmocka_unit_test(test_nothing_measured),
		cmocka_unit_test(test_sqrt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
