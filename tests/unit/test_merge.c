// SPDX-License-Identifier: MIT
/* peakbpf merge's math: records made from a known truth, on hosts whose
 * clocks are off by up to their declared error; the interval must hold the
 * truth, and widen with the errors. Also the record lines and the checks. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <errno.h>
#include <cmocka.h>
#include "merge.h"
#include "rank_file.h"

#define MS 1000000LL
#define MIB 1048576ULL
#define T0 (1700000000LL * 1000 * MS)  /* a wall clock does not start at 0 */
#define STEPS 400                       /* 1 ms steps of true time */
#define MAX_RANKS 6

/* A rank's true memory: value[i] over true [T0 + i ms, T0 + (i + 1) ms),
 * 0 outside its life [life0, life1) (in steps). */
struct truth {
	uint64_t value[STEPS];
	int life0, life1;
};

static uint64_t seed = 88172645463325252ULL;

static uint64_t rnd(uint64_t n)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return n ? seed % n : 0;
}

static uint64_t truth_at(const struct truth *t, int i)
{
	return i >= t->life0 && i < t->life1 ? t->value[i] : 0;
}

/* max (or min) of the truth over true ns [a, b], on the 1 ms steps it
 * touches. */
static uint64_t truth_over(const struct truth *t, int64_t a, int64_t b, bool want_max)
{
	int i0 = (int)((a - T0) / MS), i1 = (int)((b - T0) / MS);
	uint64_t v = want_max ? 0 : UINT64_MAX;

	for (int i = i0; i <= i1; i++) {
		uint64_t x = truth_at(t, i);

		if (want_max ? x > v : x < v)
			v = x;
	}
	return v;
}

/* The first true instant of [a, b] at which the truth is at its max there. */
static int64_t truth_peak_at(const struct truth *t, int64_t a, int64_t b)
{
	uint64_t top = truth_over(t, a, b, true);
	int i0 = (int)((a - T0) / MS), i1 = (int)((b - T0) / MS);

	for (int i = i0; i <= i1; i++)
		if (truth_at(t, i) == top)
			return T0 + i * MS > a ? T0 + i * MS : a;
	return a;
}

/*
 * The record of a rank whose host clock reads true + off: windows cut at
 * multiples of interval on that clock, each line spanning from a little
 * before its first cut to a little after its last (as record.c stamps
 * them), peak and min from the truth over the window's true span.
 */
static void make_record(struct merge_rec *r, const struct truth *t, const char *host, long pid, long rank,
			int64_t off, int64_t err, int64_t interval)
{
	int64_t first = T0 + t->life0 * MS + off, last = T0 + t->life1 * MS + off;
	int64_t cut = first, before = first + 20000;     /* the first cut, then begin */

	memset(r, 0, sizeof(*r));
	snprintf(r->host, sizeof(r->host), "%s", host);
	snprintf(r->path, sizeof(r->path), "%s.%ld.jsonl", host, pid);
	r->pid = pid;
	r->rank = rank;
	r->size = -1;
	r->err_ns = err;
	r->clock_known = r->synced = true;
	r->exact = true;
	r->complete = true;
	r->cap = 1024;
	r->w = calloc(r->cap, sizeof(*r->w));
	assert_non_null(r->w);
	while (cut < last) {
		int64_t next = record_next_boundary(cut, (uint64_t)interval);
		int64_t b, a;
		struct merge_window *w;

		if (next > last)
			next = last;
		b = next - (int64_t)rnd(300000);         /* the stamp before the cut */
		a = next + 1 + (int64_t)rnd(300000);     /* and after it */
		assert_true(r->n < r->cap);
		w = &r->w[r->n++];
		w->start = before;
		w->end = a;
		w->exact = true;
		w->peak = truth_over(t, cut - off, next - off - 1, true);
		if (rnd(4))             /* an instant not always known */
			w->peak_at = truth_peak_at(t, cut - off, next - off - 1) + off;
		w->min_known = rnd(20) != 0;            /* a window with changes lost */
		w->min = truth_over(t, cut - off, next - off - 1, false);
		w->end_known = true;
		w->end_sum = truth_at(t, (int)((next - off - T0) / MS));
		if (w->peak > r->peak) {
			r->peak = w->peak;
			r->peak_start = w->start;
			r->peak_end = w->end;
		}
		before = b;
		cut = next;
	}
}

static uint64_t true_peak(const struct truth *t, size_t n)
{
	uint64_t best = 0;

	for (int i = 0; i < STEPS; i++) {
		uint64_t s = 0;

		for (size_t r = 0; r < n; r++)
			s += truth_at(&t[r], i);
		if (s > best)
			best = s;
	}
	return best;
}

static void random_truth(struct truth *t)
{
	uint64_t v = rnd(64) * MIB;

	t->life0 = 20 + (int)rnd(30);
	t->life1 = STEPS - 20 - (int)rnd(30);
	for (int i = 0; i < STEPS; i++) {
		if (rnd(8) == 0)
			v = (1 + rnd(64)) * MIB;
		t->value[i] = v;
	}
}

static void free_recs(struct merge_rec *recs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		merge_rec_free(&recs[i]);
}

/* Many random jobs: 1-3 hosts, 1-6 ranks, clock errors from 0 to 20 ms,
 * each host off by anything within its error; the truth is always inside. */
static void test_random_jobs_hold_the_truth(void **state)
{
	static const int64_t errs[] = { 0, 1 * MS, 5 * MS, 20 * MS };
	static struct truth t[MAX_RANKS];
	struct merge_rec recs[MAX_RANKS];

	(void)state;
	for (int round = 0; round < 1500; round++) {
		size_t n = 1 + rnd(MAX_RANKS), hosts = 1 + rnd(3);
		int64_t host_err[3], host_off[3], interval = (int64_t)(5 + rnd(16)) * MS;
		struct merge_result m;
		uint64_t truth;

		for (size_t h = 0; h < hosts; h++) {
			host_err[h] = errs[rnd(4)];
			host_off[h] = host_err[h] ? (int64_t)rnd(2 * (uint64_t)host_err[h] + 1) - host_err[h] : 0;
		}
		for (size_t r = 0; r < n; r++) {
			size_t h = r % hosts;
			char host[24];

			snprintf(host, sizeof(host), "h%zu", h);
			random_truth(&t[r]);
			make_record(&recs[r], &t[r], host, 100 + (long)r, (long)r, host_off[h], host_err[h],
				    interval);
		}
		truth = true_peak(t, n);
		assert_int_equal(merge_compute(recs, n, &m), 0);
		if (m.lower > truth || truth > m.upper)
			fail_msg("round %d: %zu ranks on %zu hosts: [%llu, %llu] misses the truth %llu", round, n,
				 hosts, (unsigned long long)m.lower, (unsigned long long)m.upper,
				 (unsigned long long)truth);
		assert_true(m.upper <= m.sum_of_peaks);
		free_recs(recs, n);
	}
}

/* Two hosts, one rank each: rank A holds 100 MiB over true [100, 150) ms,
 * rank B over [120, 170): the truth is 200 MiB. B's clock is 7 ms ahead.
 * The interval holds the truth for every declared error that covers the
 * offset, and is wider when the errors are larger. */
static void two_hosts(int64_t err_a, int64_t err_b, int64_t off_b, int b_from, struct merge_result *m)
{
	static struct truth t[2];
	struct merge_rec recs[2];

	for (int r = 0; r < 2; r++) {
		t[r].life0 = 10;
		t[r].life1 = 390;
		for (int i = 0; i < STEPS; i++)
			t[r].value[i] = 10 * MIB;
	}
	for (int i = 100; i < 150; i++)
		t[0].value[i] = 100 * MIB;
	for (int i = b_from; i < b_from + 50; i++)
		t[1].value[i] = 100 * MIB;
	make_record(&recs[0], &t[0], "a", 1, 0, 0, err_a, 10 * MS);
	make_record(&recs[1], &t[1], "b", 1, 1, off_b, err_b, 10 * MS);
	assert_int_equal(merge_compute(recs, 2, m), 0);
	assert_int_equal(m->hosts, 2);
	assert_int_equal(m->sum_of_peaks, 200 * MIB);
	free_recs(recs, 2);
}

static void test_two_hosts_offsets(void **state)
{
	struct merge_result exact, small, large, apart, apart_wide;

	(void)state;
	two_hosts(0, 0, 0, 120, &exact);
	assert_int_equal(exact.lower, 200 * MIB);
	assert_int_equal(exact.upper, 200 * MIB);
	two_hosts(4 * MS, 4 * MS, 7 * MS, 120, &small);
	assert_int_equal(small.lower, 200 * MIB);     /* 8 ms of error, a 30 ms overlap */
	assert_int_equal(small.upper, 200 * MIB);
	two_hosts(40 * MS, 40 * MS, 7 * MS, 120, &large);
	assert_true(large.lower <= small.lower && large.upper >= small.upper);
	/* Apart by 50 ms: the truth is 110 MiB. Errors below the gap keep
	 * the interval tight; errors past it reach the sum of peaks. */
	two_hosts(5 * MS, 5 * MS, -3 * MS, 200, &apart);
	assert_int_equal(apart.upper, 110 * MIB);
	assert_true(apart.lower <= 110 * MIB && apart.lower >= 100 * MIB);
	two_hosts(60 * MS, 60 * MS, -3 * MS, 200, &apart_wide);
	assert_int_equal(apart_wide.upper, 200 * MIB);
	assert_true(apart_wide.lower <= 110 * MIB);
}

/* One host: its clock's error does not matter (one clock for its ranks). */
static void test_one_host_ignores_its_error(void **state)
{
	static struct truth t[2];
	struct merge_rec recs[2];
	struct merge_result m;

	(void)state;
	for (int r = 0; r < 2; r++) {
		t[r].life0 = 10;
		t[r].life1 = 390;
		for (int i = 0; i < STEPS; i++)
			t[r].value[i] = (r == 0 ? i >= 100 && i < 130 : i >= 200 && i < 230) ? 50 * MIB : MIB;
	}
	make_record(&recs[0], &t[0], "n", 1, 0, 0, 16000 * MS, 10 * MS);
	make_record(&recs[1], &t[1], "n", 2, 1, 0, 16000 * MS, 10 * MS);
	assert_int_equal(merge_compute(recs, 2, &m), 0);
	assert_int_equal(m.upper, 51 * MIB);
	assert_int_equal(m.lower, 51 * MIB);
	assert_int_equal(m.sum_of_peaks, 100 * MIB);
	assert_int_equal(m.largest, 50 * MIB);
	free_recs(recs, 2);
}

static void load_lines(struct merge_rec *r, const char *const *lines, int expect_last)
{
	char err[256];
	int rc = 0;

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; lines[i]; i++) {
		rc = merge_parse_line(r, lines[i], i == 0, err, sizeof(err));
		if (lines[i + 1])
			assert_int_equal(rc, 0);
	}
	assert_int_equal(rc, expect_last);
}

#define HDR(host, pid, job, rank, size)                                                               \
	"{\"kind\":\"peakbpf-record\",\"format\":1,\"version\":\"0\",\"host\":\"" host "\",\"pid\":" pid \
	",\"start_ns\":1,\"interval_ns\":10000000,\"clock\":{\"clock_known\":true,\"synced\":true,"     \
	"\"maxerror_us\":250,\"esterror_us\":10,\"clock_status\":0},\"job\":{\"job_id\":" job           \
	",\"rank\":" rank ",\"size\":" size "},\"command\":[\"a\\\"rank\\\":9\"]}"

static void test_parse_lines(void **state)
{
	static const char *const good[] = {
		HDR("n1", "42", "\"77\"", "1", "2"),
		"{\"w\":1,\"start_ns\":100,\"len_ns\":10,\"peak\":4096,\"min\":0,\"end\":4096,\"exact\":true,\"source\":\"bpf\"}",
		"{\"w\":2,\"start_ns\":105,\"len_ns\":10,\"peak\":8192,\"peak_ns\":107,\"min\":null,\"end\":null,\"exact\":false,\"source\":\"bpf\"}",
		"{\"kind\":\"end\",\"end_ns\":120,\"windows\":2,\"run_peak\":8192,\"end_maxerror_us\":900,\"end_synced\":true}",
		NULL,
	};
	static const char *const not_record[] = { "{\"kind\":\"window\"}", NULL };
	static const char *const bad_window[] = { HDR("n1", "42", "null", "null", "null"),
						  "{\"w\":1,\"start_ns\":100,\"peak\":1}", NULL };
	static const char *const backwards[] = {
		HDR("n1", "42", "null", "null", "null"),
		"{\"w\":1,\"start_ns\":100,\"len_ns\":10,\"peak\":1,\"min\":0,\"end\":0,\"exact\":true}",
		"{\"w\":2,\"start_ns\":90,\"len_ns\":10,\"peak\":1,\"min\":0,\"end\":0,\"exact\":true}", NULL,
	};
	struct merge_rec r;

	(void)state;
	load_lines(&r, good, 0);
	assert_string_equal(r.host, "n1");
	assert_int_equal(r.pid, 42);
	assert_string_equal(r.job, "77");
	assert_int_equal(r.rank, 1);   /* not the 9 inside the command */
	assert_int_equal(r.size, 2);
	assert_int_equal(r.err_ns, 900000);    /* the end's larger maxerror */
	assert_int_equal(r.n, 2);
	assert_int_equal(r.peak, 8192);
	assert_false(r.exact);
	assert_true(r.complete);
	assert_false(r.w[1].min_known);
	assert_int_equal(r.w[1].end, 115);
	assert_int_equal(r.w[1].peak_at, 107);
	assert_int_equal(r.w[0].peak_at, 0);    /* not given: unknown */
	merge_rec_free(&r);
	load_lines(&r, not_record, -EINVAL);
	load_lines(&r, bad_window, -EINVAL);
	assert_int_equal(r.rank, -1);
	assert_string_equal(r.job, "");
	merge_rec_free(&r);
	load_lines(&r, backwards, -EINVAL);
	merge_rec_free(&r);
}

static void set_rec(struct merge_rec *r, const char *host, long pid, const char *job, long rank, long size)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->host, sizeof(r->host), "%s", host);
	snprintf(r->job, sizeof(r->job), "%s", job);
	snprintf(r->path, sizeof(r->path), "%s.%ld", host, pid);
	r->pid = pid;
	r->rank = rank;
	r->size = size;
}

static void test_checks(void **state)
{
	struct merge_rec r[3];
	char err[512];

	(void)state;
	set_rec(&r[0], "a", 1, "j", 0, 3);
	set_rec(&r[1], "b", 1, "j", 1, 3);
	set_rec(&r[2], "a", 2, "j", 2, 3);
	assert_int_equal(merge_check(r, 3, err, sizeof(err)), MERGE_OK);
	set_rec(&r[2], "a", 2, "k", 2, 3);
	assert_int_equal(merge_check(r, 3, err, sizeof(err)), MERGE_OTHER_JOB);
	assert_non_null(strstr(err, "different jobs"));
	set_rec(&r[2], "a", 1, "j", 2, 3);
	assert_int_equal(merge_check(r, 3, err, sizeof(err)), MERGE_DUPLICATE);
	assert_non_null(strstr(err, "PID 1 twice"));
	set_rec(&r[2], "a", 2, "j", 3, 4);
	assert_int_equal(merge_check(r, 3, err, sizeof(err)), MERGE_MISSING_RANK);
	assert_non_null(strstr(err, "rank 2 of 4"));
	set_rec(&r[2], "a", 2, "j", 1, 3);
	assert_int_equal(merge_check(r, 3, err, sizeof(err)), MERGE_DUPLICATE);
	/* ranks unknown (no launcher): nothing to check */
	set_rec(&r[0], "a", 1, "", -1, -1);
	set_rec(&r[1], "a", 2, "", -1, -1);
	assert_int_equal(merge_check(r, 2, err, sizeof(err)), MERGE_OK);
}

static const char *fake_env(const char *name)
{
	if (!strcmp(name, "OMPI_COMM_WORLD_RANK"))
		return "3";
	if (!strcmp(name, "OMPI_COMM_WORLD_SIZE"))
		return "8";
	if (!strcmp(name, "PMIX_NAMESPACE"))
		return "ns1";
	if (!strcmp(name, "SLURM_PROCID"))
		return "x";     /* not a number: the next variable */
	return NULL;
}

static void test_record_pure(void **state)
{
	struct record_job j;

	(void)state;
	record_job_from(&j, fake_env);
	assert_string_equal(j.id, "ns1");
	assert_int_equal(j.rank, -1);   /* SLURM_PROCID came first and is no number */
	assert_int_equal(j.size, 8);
	assert_int_equal(record_interval(10 * MS, 0), 10 * MS);
	assert_int_equal(record_interval(10 * MS, RECORD_LINES_PER_LEVEL - 1), 10 * MS);
	assert_int_equal(record_interval(10 * MS, RECORD_LINES_PER_LEVEL), 20 * MS);
	assert_int_equal(record_interval(10 * MS, 3ULL * RECORD_LINES_PER_LEVEL), 80 * MS);
	assert_int_equal(record_interval(MS, 100ULL * RECORD_LINES_PER_LEVEL), MS << RECORD_MAX_LEVEL);
	assert_int_equal(record_next_boundary(T0 + 3 * MS, 10 * MS), T0 + 10 * MS);
	assert_int_equal(record_next_boundary(T0 + 10 * MS, 10 * MS), T0 + 20 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_jobs_hold_the_truth),
		cmocka_unit_test(test_two_hosts_offsets),
		cmocka_unit_test(test_one_host_ignores_its_error),
		cmocka_unit_test(test_parse_lines),
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_record_pure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
