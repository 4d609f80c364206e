// SPDX-License-Identifier: MIT
/* The sampler model: a step function of the tree sum, what a periodic
 * sampler would have reported at every phase, and the report in bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <cmocka.h>
#include "sampler_model.h"

#define US 1000ULL
#define MS 1000000ULL
#define MiB (1024ULL * 1024)

/* 0 until 500 ms, 100 for 5 ms, then 0 until 1 s. */
static void spike_trace(struct sum_trace *t)
{
	trace_init(t, 1 * US);
	assert_int_equal(trace_add(t, 0, 0), 0);
	assert_int_equal(trace_add(t, 500 * MS, 100), 0);
	assert_int_equal(trace_add(t, 505 * MS, 0), 0);
}

static void test_value_at(void **state)
{
	struct sum_trace t;

	(void)state;
	spike_trace(&t);
	assert_int_equal(trace_value_at(&t, 0), 0);
	assert_int_equal(trace_value_at(&t, 499 * MS), 0);
	assert_int_equal(trace_value_at(&t, 500 * MS), 100);
	assert_int_equal(trace_value_at(&t, 504 * MS + 999), 100);
	assert_int_equal(trace_value_at(&t, 505 * MS), 0);
	assert_int_equal(trace_value_at(&t, 10000 * MS), 0);
	trace_free(&t);
}

/* Points closer than the resolution: the last one stands for the slot. */
static void test_coalesce_and_order(void **state)
{
	struct sum_trace t;

	(void)state;
	trace_init(&t, 100 * US);
	trace_add(&t, 1 * MS, 1);
	trace_add(&t, 1 * MS + 50 * US, 2);
	trace_add(&t, 1 * MS + 99 * US, 3);
	assert_int_equal(t.n, 1);
	assert_int_equal(trace_value_at(&t, 1 * MS), 3);
	trace_add(&t, 2 * MS, 4);
	trace_add(&t, 1 * MS, 5);      /* late: applied at the last point's time */
	assert_int_equal(t.n, 2);
	assert_int_equal(trace_value_at(&t, 2 * MS), 5);
	trace_free(&t);
}

static void test_many_points_grow(void **state)
{
	struct sum_trace t;

	(void)state;
	trace_init(&t, 1);
	for (int64_t i = 0; i < 100000; i++)
		assert_int_equal(trace_add(&t, (uint64_t)i * 10, i), 0);
	assert_int_equal(t.n, 100000);
	assert_int_equal(trace_value_at(&t, 123455), 12345);
	trace_free(&t);
}

/* At the cap the resolution doubles and points merge by the same rule (the
 * last value of each slot stands): never more points than the cap. */
static void test_cap_coarsens(void **state)
{
	struct sum_trace t;

	(void)state;
	trace_init(&t, 1 * US);
	assert_int_equal(t.max_points, TRACE_MAX_POINTS);
	t.max_points = 8;
	for (int64_t i = 0; i < 8; i++)
		assert_int_equal(trace_add(&t, (uint64_t)i * US, i), 0);
	assert_int_equal(t.n, 8);
	assert_int_equal(t.res_ns, 1 * US);
	assert_int_equal(trace_add(&t, 8 * US, 8), 0);
	assert_int_equal(t.res_ns, 2 * US);
	assert_int_equal(t.n, 5);
	assert_int_equal(trace_value_at(&t, 0), 1);     /* slot [0, 2 us): its last */
	assert_int_equal(trace_value_at(&t, 6 * US), 7);
	assert_int_equal(trace_value_at(&t, 8 * US), 8);
	for (int64_t i = 9; i < 100000; i++)
		assert_int_equal(trace_add(&t, (uint64_t)i * US, i % 7), 0);
	assert_true(t.n < 8);
	assert_true(t.res_ns >= 100000 * US / 8);
	trace_free(&t);
}

/* A run below the cap: the resolution asked for, every point kept (what
 * --compare-sampler's results have always been). */
static void test_below_cap_unchanged(void **state)
{
	struct sum_trace t;

	(void)state;
	trace_init(&t, 10 * US);
	for (int64_t i = 0; i < 200000; i++)
		assert_int_equal(trace_add(&t, (uint64_t)i * 10 * US, i), 0);
	assert_int_equal(t.n, 200000);
	assert_int_equal(t.res_ns, 10 * US);
	trace_free(&t);
}

/* A 5 ms spike and a 100 ms sampler: 5 % of the phases see it. */
static void test_sampler_100ms_misses_5ms_spike(void **state)
{
	struct sum_trace t;
	struct sampler_stats s;

	(void)state;
	spike_trace(&t);
	assert_int_equal(sampler_distribution(&t, 0, 1000 * MS, 100 * MS, 100, &s), 0);
	assert_int_equal(s.phases, 1000);
	assert_int_equal(s.phase_step_ns, 100 * US);
	assert_int_equal(s.worst, 0);
	assert_int_equal(s.median, 0);
	assert_int_equal(s.best, 100);
	assert_true(s.p_within_5pct > 0.049 && s.p_within_5pct < 0.051);
	trace_free(&t);
}

/* A 1 ms sampler never misses it. */
static void test_sampler_1ms_catches_it(void **state)
{
	struct sum_trace t;
	struct sampler_stats s;

	(void)state;
	spike_trace(&t);
	assert_int_equal(sampler_distribution(&t, 0, 1000 * MS, 1 * MS, 100, &s), 0);
	assert_int_equal(s.worst, 100);
	assert_int_equal(s.best, 100);
	assert_true(s.p_within_5pct == 1.0);
	trace_free(&t);
}

/* 95 % is the line: 96 counts, 94 does not. */
static void test_within_5pct_threshold(void **state)
{
	struct sum_trace t;
	struct sampler_stats s;

	(void)state;
	trace_init(&t, 1 * US);
	trace_add(&t, 0, 96);
	assert_int_equal(sampler_distribution(&t, 0, 10 * MS, 1 * MS, 100, &s), 0);
	assert_true(s.p_within_5pct == 1.0);
	t.value[0] = 94;
	assert_int_equal(sampler_distribution(&t, 0, 10 * MS, 1 * MS, 100, &s), 0);
	assert_true(s.p_within_5pct == 0.0);
	trace_free(&t);
}

/* A run shorter than the interval: each phase reads once (or at the end). */
static void test_run_shorter_than_interval(void **state)
{
	struct sum_trace t;
	struct sampler_stats s;

	(void)state;
	trace_init(&t, 1 * US);
	trace_add(&t, 0, 10);
	trace_add(&t, 50 * MS, 30);
	assert_int_equal(sampler_distribution(&t, 0, 100 * MS, 1000 * MS, 30, &s), 0);
	assert_int_equal(s.worst, 10);         /* phases before 50 ms */
	assert_int_equal(s.best, 30);          /* phases after: read at the end */
	trace_free(&t);
}

static void test_bad_input(void **state)
{
	struct sum_trace t;
	struct sampler_stats s;

	(void)state;
	trace_init(&t, 1);
	assert_int_equal(sampler_distribution(&t, 0, 10, 1, 0, &s), -EINVAL);
	trace_add(&t, 0, 1);
	assert_int_equal(sampler_distribution(&t, 0, 10, 0, 0, &s), -EINVAL);
	assert_int_equal(sampler_distribution(&t, 10, 5, 1, 0, &s), -EINVAL);
	trace_free(&t);
}

/* The report: each interval in bytes, one the model cannot compute left out. */
static void test_report_in_bytes(void **state)
{
	static const uint64_t intervals[] = { 100 * MS, 0, 1 * MS };
	struct sum_trace t;
	struct sampler_report r;
	struct sampler_report_input in = {
		.trace = &t, .start_ns = 0, .end_ns = 1000 * MS, .page_size = 4096,
		.true_peak_bytes = 100 * 4096, .record_drops = 3,
		.intervals_ns = intervals, .n_intervals = 3,
	};

	(void)state;
	spike_trace(&t);
	sampler_report_compute(&in, &r);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.true_peak_bytes, 100 * 4096);
	assert_int_equal(r.resolution_ns, 1 * US);
	assert_int_equal(r.record_drops, 3);
	assert_int_equal(r.at[0].interval_ns, 100 * MS);
	assert_int_equal(r.at[0].phases, 1000);
	assert_int_equal(r.at[0].phase_step_ns, 100 * US);
	assert_int_equal(r.at[0].worst_bytes, 0);
	assert_int_equal(r.at[0].median_bytes, 0);
	assert_int_equal(r.at[0].best_bytes, 100 * 4096);
	assert_true(r.at[0].p_within_5pct > 0.049 && r.at[0].p_within_5pct < 0.051);
	assert_int_equal(r.at[1].interval_ns, 1 * MS);
	assert_int_equal(r.at[1].worst_bytes, 100 * 4096);
	assert_int_equal(r.at[1].best_bytes, 100 * 4096);
	assert_false(r.real_measured);
	trace_free(&t);
}

/* More intervals than the report holds: the first SAMPLER_MAX_INTERVALS. */
static void test_report_caps_intervals(void **state)
{
	uint64_t intervals[SAMPLER_MAX_INTERVALS + 2];
	struct sum_trace t;
	struct sampler_report r;
	struct sampler_report_input in = {
		.trace = &t, .end_ns = 1000 * MS, .page_size = 4096, .true_peak_bytes = 100 * 4096,
		.intervals_ns = intervals, .n_intervals = SAMPLER_MAX_INTERVALS + 2,
	};

	(void)state;
	for (size_t i = 0; i < SAMPLER_MAX_INTERVALS + 2; i++)
		intervals[i] = (i + 1) * MS;
	spike_trace(&t);
	sampler_report_compute(&in, &r);
	assert_int_equal(r.n, SAMPLER_MAX_INTERVALS);
	assert_int_equal(r.at[SAMPLER_MAX_INTERVALS - 1].interval_ns, SAMPLER_MAX_INTERVALS * MS);
	trace_free(&t);
}

/* A real sampler checks the first interval: within [worst, best] give or
 * take 2 MiB + 2 % of the true peak (100 MiB here: 4 MiB). */
static void test_real_sampler_check(void **state)
{
	static const uint64_t one_ms = 1 * MS, bad = 0;
	struct sum_trace t;
	struct sampler_report r;
	struct sampler_report_input in = {
		.trace = &t, .end_ns = 1000 * MS, .page_size = MiB, .true_peak_bytes = 100 * MiB,
		.intervals_ns = &one_ms, .n_intervals = 1,
	};

	(void)state;
	spike_trace(&t);
	sampler_report_compute(&in, &r);
	assert_int_equal(r.at[0].worst_bytes, 100 * MiB);
	sampler_report_check_real(&r, 1 * MS, 96 * MiB, 1000);
	assert_true(r.real_measured);
	assert_true(r.real_within);
	assert_int_equal(r.real_interval_ns, 1 * MS);
	assert_int_equal(r.real_peak_bytes, 96 * MiB);
	assert_int_equal(r.real_samples, 1000);
	sampler_report_check_real(&r, 1 * MS, 96 * MiB - 1, 1000);
	assert_false(r.real_within);
	sampler_report_check_real(&r, 1 * MS, 104 * MiB, 1000);
	assert_true(r.real_within);
	sampler_report_check_real(&r, 1 * MS, 104 * MiB + 1, 1000);
	assert_false(r.real_within);

	/* Nothing modelled: nothing to check against. */
	in.intervals_ns = &bad;
	sampler_report_compute(&in, &r);
	sampler_report_check_real(&r, 1 * MS, 96 * MiB, 1000);
	assert_false(r.real_measured);
	trace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_value_at),
		cmocka_unit_test(test_coalesce_and_order),
		cmocka_unit_test(test_many_points_grow),
		cmocka_unit_test(test_cap_coarsens),
		cmocka_unit_test(test_below_cap_unchanged),
		cmocka_unit_test(test_sampler_100ms_misses_5ms_spike),
		cmocka_unit_test(test_sampler_1ms_catches_it),
		cmocka_unit_test(test_within_5pct_threshold),
		cmocka_unit_test(test_run_shorter_than_interval),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_report_in_bytes),
		cmocka_unit_test(test_report_caps_intervals),
		cmocka_unit_test(test_real_sampler_check),
	};

	return cmocka_run_group_tests_name("sampler_model", tests, NULL, NULL);
}
