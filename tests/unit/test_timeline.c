// SPDX-License-Identifier: MIT
/* The bounded timeline: min and max per bucket, pairs merged at the cap,
 * every peak kept, memory within the stated bound. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <errno.h>
#include <cmocka.h>
#include "timeline.h"

#define US 1000ULL
#define MS 1000000ULL
#define S 1000000000ULL
#define T0 (5 * S)      /* a monotonic clock does not start at 0 */

static void test_init_checks(void **state)
{
	struct timeline t;

	(void)state;
	assert_int_equal(timeline_init(&t, 0, 4096, 3), -EINVAL);
	assert_int_equal(timeline_init(&t, 0, 4096, 1), -EINVAL);
	assert_int_equal(timeline_init(&t, 0, 0, 0), -EINVAL);
	assert_int_equal(timeline_init(&t, 0, 4096, 0), 0);
	assert_int_equal(t.max_buckets, TIMELINE_MAX_BUCKETS);
	assert_false(timeline_range(&t, 0, 1, &(int64_t){ 0 }, &(int64_t){ 0 }));
	timeline_free(&t);
}

/* A step function: each bucket holds the carried value and every change. */
static void test_min_max_per_bucket(void **state)
{
	struct timeline t;
	int64_t min, max;

	(void)state;
	assert_int_equal(timeline_init(&t, T0, 1, 0), 0);
	timeline_add(&t, T0, 10);
	timeline_add(&t, T0 + 1500, 30);        /* bucket 1 (1 us wide) */
	timeline_add(&t, T0 + 1600, 20);
	timeline_add(&t, T0 + 5500, 5);         /* bucket 5; 2..4 carry 20 */
	assert_int_equal(t.n, 6);
	assert_int_equal(t.b[0].min, 10);
	assert_int_equal(t.b[0].max, 10);
	assert_int_equal(t.b[1].min, 10);       /* held 10 until the change */
	assert_int_equal(t.b[1].max, 30);
	assert_int_equal(t.b[3].min, 20);
	assert_int_equal(t.b[3].max, 20);
	assert_int_equal(t.b[5].min, 5);
	assert_int_equal(t.b[5].max, 20);
	assert_true(timeline_range(&t, T0 + 2000, T0 + 6000, &min, &max));
	assert_int_equal(min, 5);
	assert_int_equal(max, 20);
	assert_int_equal(t.peak, 30);
	assert_int_equal(t.peak_ns, T0 + 1500);
	/* Late or early instants are taken as the last one. */
	timeline_add(&t, T0, 40);
	assert_int_equal(t.n, 6);
	assert_int_equal(t.b[5].max, 40);
	timeline_free(&t);
}

/* At the cap, pairs merge and the width doubles; nothing is lost. */
static void test_cap_merges_pairs(void **state)
{
	struct timeline t;

	(void)state;
	assert_int_equal(timeline_init(&t, T0, 1, 4), 0);
	for (int64_t i = 0; i < 4; i++)
		timeline_add(&t, T0 + (uint64_t)i * US, i);
	assert_int_equal(t.n, 4);
	assert_int_equal(t.width_ns, 1 * US);
	timeline_add(&t, T0 + 4 * US, 100);     /* would be bucket 4: merge */
	assert_int_equal(t.width_ns, 2 * US);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.b[0].min, 0);
	assert_int_equal(t.b[0].max, 1);
	assert_int_equal(t.b[1].min, 1);       /* bucket 2 held 1 until 2 us */
	assert_int_equal(t.b[1].max, 3);
	assert_int_equal(t.b[2].min, 3);
	assert_int_equal(t.b[2].max, 100);
	timeline_add(&t, T0 + 1000 * US, 7);    /* far: several merges at once */
	assert_true(t.n <= 4);
	assert_true(t.width_ns >= 256 * US);
	assert_int_equal(t.b[0].max, 100);
	assert_int_equal(t.b[t.n - 1].min, 7);
	timeline_free(&t);
}

/* A 60 s run, the sum moving every ms between 100 and 110, and one 5 ms
 * spike to 5000 at 30 s: at the coarsest width the spike's bucket still
 * has max 5000, the plotted maximum is the peak, and the baseline's
 * buckets keep their own min and max. */
static void test_5ms_spike_in_60s_run(void **state)
{
	struct timeline t;
	int64_t max, min;
	uint64_t at;

	(void)state;
	assert_int_equal(timeline_init(&t, T0, 4096, 0), 0);
	for (uint64_t ms = 0; ms < 60000; ms++) {
		int64_t v = 100 + (int64_t)(ms % 11);

		if (ms >= 30000 && ms < 30005)
			v = 5000;
		assert_int_equal(timeline_add(&t, T0 + ms * MS + 123, v), 0);
	}
	assert_int_equal(timeline_end(&t, T0 + 60 * S), 0);
	assert_true(t.n <= TIMELINE_MAX_BUCKETS);
	assert_true(t.n > TIMELINE_MAX_BUCKETS / 2);
	assert_true(t.width_ns >= 60 * S / TIMELINE_MAX_BUCKETS);
	assert_true(timeline_max(&t, &max, &at));
	assert_int_equal(max, 5000);
	assert_int_equal(max, t.peak);
	assert_true(at <= T0 + 30 * S && at + t.width_ns > T0 + 30 * S);
	/* Coarser still (as a plot column of 1/800 of the run): still there. */
	assert_true(timeline_range(&t, T0 + 30 * S - 40 * MS, T0 + 30 * S + 35 * MS, &min, &max));
	assert_int_equal(max, 5000);
	assert_true(timeline_range(&t, T0 + 10 * S, T0 + 20 * S, &min, &max));
	assert_int_equal(min, 100);
	assert_int_equal(max, 110);
	timeline_free(&t);
}

/* 24 h of a sum changing every 10 ms (8.6 M changes): the timeline stays
 * within the stated bound, and the one 1 ms spike among them is kept. */
static void test_memory_bound_24h(void **state)
{
	struct timeline t;
	int64_t max;
	uint64_t at, end = 24ULL * 3600 * S;

	(void)state;
	assert_int_equal(timeline_init(&t, T0, 4096, 0), 0);
	for (uint64_t ns = 0; ns < end; ns += 10 * MS) {
		assert_int_equal(timeline_add(&t, T0 + ns, (int64_t)(ns / MS % 1000)), 0);
		if (ns == 17 * 3600 * S) {
			timeline_add(&t, T0 + ns + 1 * MS, 1 << 20);
			timeline_add(&t, T0 + ns + 2 * MS, 0);
		}
		if (ns % (60 * S) == 0)
			timeline_mark(&t, T0 + ns, TL_MARK_WINDOW, 0, "window");
	}
	assert_true(timeline_memory_bytes(&t) <= TIMELINE_MAX_BYTES);
	assert_true(t.cap <= TIMELINE_MAX_BUCKETS);
	assert_int_equal(t.n_marks, TIMELINE_MAX_MARKS);
	assert_int_equal(t.marks_dropped, 1440 - TIMELINE_MAX_MARKS);
	assert_true(timeline_max(&t, &max, &at));
	assert_int_equal(max, 1 << 20);
	timeline_free(&t);
}

static void test_marks(void **state)
{
	struct timeline t;

	(void)state;
	assert_int_equal(timeline_init(&t, T0, 1, 0), 0);
	timeline_mark(&t, T0 + 5, TL_MARK_PEAK, 42, "a label far longer than the thirty-one bytes kept");
	assert_int_equal(t.n_marks, 1);
	assert_int_equal(t.marks[0].value, 42);
	assert_int_equal(strlen(t.marks[0].label), TIMELINE_LABEL_LEN - 1);
	timeline_free(&t);
}

/* Lines for the mms with the largest own peaks: a small mm is dropped for
 * a larger newcomer, a smaller newcomer is not kept, and the kept lines
 * reach each mm's exact own peak. */
static void test_tracks_keep_largest(void **state)
{
	const struct tl_track *top[TL_TOP];
	struct tl_track *started;
	struct timeline t;

	(void)state;
	assert_int_equal(timeline_init(&t, T0, 4096, 0), 0);
	assert_int_equal(timeline_tracks_init(&t, 3, 64), 0);
	/* mm 1..3 take the three lines: own peaks 10, 20, 30. */
	for (uint64_t mm = 1; mm <= 3; mm++) {
		assert_int_equal(timeline_track_add(&t, T0 + mm * MS, mm, 100 + (uint32_t)mm,
						    (int64_t)mm * 10, &started), 0);
		assert_non_null(started);
		assert_int_equal(started->key, mm);
	}
	/* mm 4 at 5 pages: smaller than every kept peak, not kept. */
	assert_int_equal(timeline_track_add(&t, T0 + 4 * MS, 4, 104, 5, &started), 0);
	assert_null(started);
	/* mm 4 grows to 15: drops mm 1 (own peak 10), its line starts now. */
	assert_int_equal(timeline_track_add(&t, T0 + 5 * MS, 4, 104, 15, &started), 0);
	assert_non_null(started);
	assert_int_equal(t.tracks->evicted, 1);
	/* mm 4 goes on to 50, then leaves (0); mm 2 changes. */
	timeline_track_add(&t, T0 + 6 * MS, 4, 104, 50, NULL);
	timeline_track_add(&t, T0 + 7 * MS, 4, 104, 0, NULL);
	timeline_track_add(&t, T0 + 8 * MS, 2, 102, 25, NULL);
	/* Same key, another process (an address reused): a new mm, not kept
	 * at 1 page. */
	assert_int_equal(timeline_track_add(&t, T0 + 9 * MS, 4, 999, 1, &started), 0);
	assert_null(started);
	assert_int_equal(timeline_end(&t, T0 + 10 * MS), 0);
	assert_int_equal(timeline_top_tracks(&t, top, TL_TOP), 3);
	assert_int_equal(top[0]->key, 4);
	assert_int_equal(top[0]->line.peak, 50);
	assert_int_equal(top[0]->line.last, 0);
	assert_int_equal(top[1]->key, 3);
	assert_int_equal(top[2]->key, 2);
	assert_int_equal(top[2]->line.peak, 25);
	assert_int_equal(top[0]->line.start_ns, T0 + 5 * MS);
	assert_int_equal(timeline_top_tracks(&t, top, 2), 2);
	assert_int_equal(top[1]->key, 3);
	timeline_free(&t);
}

/* 24 h of 100 000 short-lived mms, each growing and leaving, among them 5
 * large ones at random times, and a churn of changes every 10 ms: the lines
 * stay within TL_TRACKS_MAX_BYTES, the whole timeline within
 * TIMELINE_MAX_BYTES, and the top five lines are the five large mms with
 * their exact own peaks. */
static void test_tracks_memory_bound_24h(void **state)
{
	const struct tl_track *top[TL_TOP];
	struct timeline t;
	uint64_t end = 24ULL * 3600 * S, next_mm = 1, rnd = 12345;
	size_t lines_bytes;

	(void)state;
	assert_int_equal(timeline_init(&t, T0, 4096, 0), 0);
	assert_int_equal(timeline_tracks_init(&t, 0, 0), 0);
	for (uint64_t ns = 0; ns < end; ns += 10 * MS) {
		uint64_t mm = next_mm;
		int64_t pages;

		rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
		pages = (int64_t)(rnd >> 54);                   /* 0..1023 */
		if (ns % (860 * MS) == 0)
			next_mm++;                              /* 100 465 mms over the day */
		if (mm % 20000 == 7 && mm < 100000 && ns % (860 * MS) == 430 * MS)
			pages = 100000 + (int64_t)mm;           /* five large ones */
		assert_int_equal(timeline_add(&t, T0 + ns, pages), 0);
		assert_int_equal(timeline_track_add(&t, T0 + ns, mm, (uint32_t)mm, pages, NULL), 0);
	}
	assert_int_equal(timeline_end(&t, T0 + end), 0);
	lines_bytes = sizeof(*t.tracks);
	for (size_t i = 0; i < t.tracks->n; i++)
		lines_bytes += t.tracks->v[i].line.cap * sizeof(struct tl_bucket);
	assert_true(lines_bytes <= TL_TRACKS_MAX_BYTES);
	assert_true(TL_TRACKS_MAX_BYTES <= (2U << 20) + sizeof(struct tl_tracks));
	assert_true(timeline_memory_bytes(&t) <= TIMELINE_MAX_BYTES);
	assert_true(t.tracks->admitted > TL_TRACKS_MAX);
	assert_int_equal(timeline_top_tracks(&t, top, TL_TOP), TL_TOP);
	for (size_t k = 0; k < TL_TOP; k++) {
		uint64_t mm = 80007 - 20000 * k;

		assert_int_equal(top[k]->key, mm);
		assert_int_equal(top[k]->line.peak, 100000 + (int64_t)mm);
	}
	timeline_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_checks),
		cmocka_unit_test(test_min_max_per_bucket),
		cmocka_unit_test(test_cap_merges_pairs),
		cmocka_unit_test(test_5ms_spike_in_60s_run),
		cmocka_unit_test(test_memory_bound_24h),
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_tracks_keep_largest),
		cmocka_unit_test(test_tracks_memory_bound_24h),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
