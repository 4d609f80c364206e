// SPDX-License-Identifier: MIT
/* The budget gate: its verdicts, their one-line messages, exit statuses. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "budget.h"
#include "cli.h"
#include "status.h"

#define MIB 1048576ULL

static struct run_result runs[5];

static struct bench make_bench(const uint64_t *peak_mib10, size_t n)
{
	memset(runs, 0, sizeof(runs));
	for (size_t i = 0; i < n; i++) {
		runs[i] = (struct run_result){ .done = true, .measured = true, .source = "bpf",
					       .exact = true, .bound_known = true,
					       .peak_bytes = peak_mib10[i] * MIB / 10,
					       .growth_known = true,
					       .growth_bytes = (int64_t)(peak_mib10[i] * MIB / 10) };
	}
	return (struct bench){ .label = "job", .runs = runs, .n_runs = n };
}

static void test_exceeded_message_is_the_issues(void **state)
{
	const uint64_t v[] = { 6120 };
	struct bench b = make_bench(v, 1);
	struct runs_opts r = { .has_max = true, .max_bytes = 512 * MIB, .max_of = BUDGET_OF_GROWTH };
	struct bench_summary s;
	char msg[512];

	(void)state;
	bench_summarize(&b, &s);
	assert_int_equal(budget_judge(&r, &s, 1, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "peak growth 612.0 MiB exceeded the budget 512.0 MiB (+19.5 %)");
	r.max_of = BUDGET_OF_PEAK;
	assert_int_equal(budget_judge(&r, &s, 1, msg, sizeof(msg)), 1);
	assert_string_equal(msg, "peak 612.0 MiB exceeded the budget 512.0 MiB (+19.5 %)");
}

static void test_max_of_runs_unless_median(void **state)
{
	const uint64_t v[] = { 1000, 1000, 6000, 1000, 1000 };
	struct bench b = make_bench(v, 5);
	struct runs_opts r = { .has_max = true, .max_bytes = 512 * MIB };
	struct bench_summary s;
	char msg[512];

	(void)state;
	bench_summarize(&b, &s);
	assert_int_equal(budget_judge(&r, &s, 5, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "peak 600.0 MiB exceeded the budget 512.0 MiB (+17.2 %); the max of 5 runs"));
	r.budget_stat = BUDGET_STAT_MEDIAN;
	assert_int_equal(budget_judge(&r, &s, 5, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "peak 100.0 MiB is within the budget 512.0 MiB (19.5 % of it); the median of 5 runs");
}

static void test_inexact_says_how_far_off(void **state)
{
	const uint64_t v[] = { 6000 };
	struct bench b = make_bench(v, 1);
	struct runs_opts r = { .has_max = true, .max_bytes = 512 * MIB };
	struct bench_summary s;
	char msg[512];

	(void)state;
	runs[0].exact = false;
	runs[0].error_bound_bytes = 2 * MIB;
	runs[0].source = "bpf";
	bench_summarize(&b, &s);
	assert_int_equal(budget_judge(&r, &s, 1, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "; not exact (bpf): it may be off by up to 2.0 MiB"));
	runs[0].bound_known = false;
	runs[0].inexact_reason = "drops";
	bench_summarize(&b, &s);
	budget_judge(&r, &s, 1, msg, sizeof(msg));
	assert_non_null(strstr(msg, "how far it may be off is unknown, drops"));
}

static void test_not_measured_is_no_verdict(void **state)
{
	const uint64_t v[] = { 6000 };
	struct bench b = make_bench(v, 1);
	struct runs_opts r = { .has_max = true, .max_bytes = 512 * MIB };
	struct bench_summary s;
	char msg[512];

	(void)state;
	runs[0].measured = false;
	bench_summarize(&b, &s);
	assert_int_equal(budget_judge(&r, &s, 1, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "was not measured"));
}

/* issue 26: a run with a window not measured (the helper killed at
 * 0.7 s) passed --max on window 1's 3.3 MiB. It may fail the budget but
 * never pass it; with --budget-stat median it is not judged at all. */
static void test_lost_window_never_passes(void **state)
{
	const uint64_t v[] = { 33, 33 };
	struct bench b = make_bench(v, 2);
	struct runs_opts r = { .has_max = true, .max_bytes = 32 * MIB };
	struct bench_summary s;
	char msg[512];

	(void)state;
	runs[1].windows_unmeasured = 4;
	runs[1].exact = false;
	snprintf(runs[1].lost_why, sizeof(runs[1].lost_why), "windows 2-5 of 5 not measured (helper gone)");
	bench_summarize(&b, &s);
	assert_int_equal(s.lost_runs, 1);
	assert_int_equal(budget_judge(&r, &s, 2, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "cannot be checked (windows 2-5 of 5 not measured (helper gone))"));
	/* Over the budget already on what was measured: it failed. */
	r.max_bytes = 2 * MIB;
	assert_int_equal(budget_judge(&r, &s, 2, msg, sizeof(msg)), 1);
	r.budget_stat = BUDGET_STAT_MEDIAN;
	assert_int_equal(budget_judge(&r, &s, 2, msg, sizeof(msg)), -1);
	/* A run not measured at all among measured ones: the same. */
	runs[1].windows_unmeasured = 0;
	runs[1].measured = false;
	r = (struct runs_opts){ .has_max = true, .max_bytes = 32 * MIB };
	bench_summarize(&b, &s);
	assert_int_equal(budget_judge(&r, &s, 2, msg, sizeof(msg)), -1);
	assert_int_equal(budget_check_benches(&(struct options){ .runs = r }, &b, 1), EXIT_PEAKBPF_FAILED);
}

static void test_statuses(void **state)
{
	const uint64_t v[] = { 6000 };
	struct bench b = make_bench(v, 1);
	struct options o;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.quiet = true;
	o.runs.has_max = true;
	o.runs.max_bytes = 512 * MIB;
	assert_int_equal(budget_check_single(&o, &runs[0], 0), EXIT_BUDGET_EXCEEDED);
	assert_int_equal(budget_check_single(&o, &runs[0], 3), 3);      /* the command's own */
	o.runs.max_bytes = 1024 * MIB;
	assert_int_equal(budget_check_single(&o, &runs[0], 0), 0);
	assert_int_equal(budget_check_benches(&o, &b, 1), 0);
	o.runs.has_max = false;
	o.runs.max_bytes = 1;
	assert_int_equal(budget_check_single(&o, &runs[0], 0), 0);
	runs[0].measured = false;
	o.runs.has_max = true;
	assert_int_equal(budget_check_single(&o, &runs[0], 0), 125);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exceeded_message_is_the_issues),
		cmocka_unit_test(test_max_of_runs_unless_median),
		cmocka_unit_test(test_inexact_says_how_far_off),
		cmocka_unit_test(test_not_measured_is_no_verdict),
		cmocka_unit_test(test_lost_window_never_passes),
		cmocka_unit_test(test_statuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
