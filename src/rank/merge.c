// SPDX-License-Identifier: MIT
/* `peakbpf merge`: the job's peak as bounds from the records (merge.h);
 * reading them is merge_load.c's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "merge.h"

/* ---- step functions --------------------------------------------------------
 * b[0] < ... < b[n-1]; v[i] holds on the open interval (b[i], b[i+1]); 0
 * outside. Every true instant a record covers is inside some window's line
 * span (the span reaches past each cut), so open intervals suffice. */

struct step {
	int64_t *b;
	uint64_t *v;
	size_t n;
};

static void step_free(struct step *s)
{
	free(s->b);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Sort and dedupe b[0..n) in place; the new count. */
static size_t sort_unique(int64_t *b, size_t n)
{
	size_t m = 0;

	qsort(b, n, sizeof(*b), cmp_i64);
	for (size_t i = 0; i < n; i++)
		if (!m || b[i] != b[m - 1])
			b[m++] = b[i];
	return m;
}

static int step_alloc(struct step *s, size_t n)
{
	s->b = malloc((n ? n : 1) * sizeof(*s->b));
	s->v = calloc(n ? n : 1, sizeof(*s->v));
	s->n = 0;
	return s->b && s->v ? 0 : -ENOMEM;
}

/* The window span used for the upper bound: the record's first and last
 * edges widened by MERGE_EDGE_NS. */
static void span_of(const struct merge_rec *r, size_t k, int64_t *s, int64_t *e)
{
	*s = r->w[k].start - (k == 0 ? MERGE_EDGE_NS : 0);
	*e = r->w[k].end + (k + 1 == r->n ? MERGE_EDGE_NS : 0);
}

/* Add record r's window peaks onto s (whose breakpoints hold r's edges). */
static void add_peaks(struct step *s, const struct merge_rec *r)
{
	size_t first = 0;

	for (size_t i = 0; i + 1 < s->n; i++) {
		uint64_t best = 0;
		int64_t ws, we;

		/* Windows ending before this interval ends cover none after. */
		while (first < r->n) {
			span_of(r, first, &ws, &we);
			if (we >= s->b[i + 1])
				break;
			first++;
		}
		for (size_t k = first; k < r->n; k++) {
			span_of(r, k, &ws, &we);
			if (ws > s->b[i])
				break;
			if (we >= s->b[i + 1] && r->w[k].peak > best)
				best = r->w[k].peak;
		}
		s->v[i] += best;
	}
}

/* The sum of the window peaks of the records whose host_id is host (every
 * record when host is SIZE_MAX), on their own clock. */
static int host_step(const struct merge_rec *recs, size_t n, size_t host, struct step *s)
{
	size_t nb = 0;

	for (size_t i = 0; i < n; i++)
		if (host == SIZE_MAX || recs[i].host_id == host)
			nb += 2 * recs[i].n;
	if (step_alloc(s, nb))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (host != SIZE_MAX && recs[i].host_id != host)
			continue;
		for (size_t k = 0; k < recs[i].n; k++)
			span_of(&recs[i], k, &s->b[s->n], &s->b[s->n + 1]), s->n += 2;
	}
	s->n = sort_unique(s->b, s->n);
	for (size_t i = 0; i < n; i++)
		if (host == SIZE_MAX || recs[i].host_id == host)
			add_peaks(s, &recs[i]);
	return 0;
}

/*
 * out(T) = the largest value of in on any instant within eps of T: what
 * a host's sum may be at true time T when its clock is off by up to eps.
 * An output interval (c[j], c[j+1]) takes every input interval i with
 * b[i] <= c[j] + eps and b[i+1] >= c[j+1] - eps: a range of i whose ends
 * only move forward, so a monotonic deque gives each maximum.
 */
static int step_dilate(const struct step *in, int64_t eps, struct step *out)
{
	size_t *dq = NULL, head = 0, tail = 0, lo = 0, hi = 0;
	int err = -ENOMEM;

	if (step_alloc(out, 2 * in->n))
		goto cleanup;
	for (size_t i = 0; i < in->n; i++) {
		out->b[out->n++] = in->b[i] - eps;
		out->b[out->n++] = in->b[i] + eps;
	}
	out->n = sort_unique(out->b, out->n);
	dq = malloc((in->n ? in->n : 1) * sizeof(*dq));
	if (!dq)
		goto cleanup;
	for (size_t j = 0; j + 1 < out->n; j++) {
		/* Admit intervals starting by c[j] + eps ... */
		while (hi + 1 < in->n && in->b[hi] <= out->b[j] + eps) {
			while (tail > head && in->v[dq[tail - 1]] <= in->v[hi])
				tail--;
			dq[tail++] = hi++;
		}
		/* ... and drop those ending before c[j+1] - eps. */
		while (lo < hi && in->b[lo + 1] < out->b[j + 1] - eps)
			lo++;
		while (tail > head && dq[head] < lo)
			head++;
		out->v[j] = tail > head ? in->v[dq[head]] : 0;
	}
	err = 0;
cleanup:
	free(dq);
	return err;
}

/* sum = the pointwise sum of parts[0..k). */
static int step_sum(const struct step *parts, size_t k, struct step *sum)
{
	size_t nb = 0, *at;

	for (size_t h = 0; h < k; h++)
		nb += parts[h].n;
	if (step_alloc(sum, nb))
		return -ENOMEM;
	at = calloc(k ? k : 1, sizeof(*at));
	if (!at)
		return -ENOMEM;
	for (size_t h = 0; h < k; h++)
		for (size_t i = 0; i < parts[h].n; i++)
			sum->b[sum->n++] = parts[h].b[i];
	sum->n = sort_unique(sum->b, sum->n);
	for (size_t j = 0; j + 1 < sum->n; j++) {
		for (size_t h = 0; h < k; h++) {
			const struct step *p = &parts[h];

			while (at[h] + 1 < p->n && p->b[at[h] + 1] <= sum->b[j])
				at[h]++;
			if (p->n >= 2 && p->b[at[h]] <= sum->b[j] && at[h] + 1 < p->n &&
			    p->b[at[h] + 1] >= sum->b[j + 1])
				sum->v[j] += p->v[at[h]];
		}
	}
	free(at);
	return 0;
}

/* ---- the bounds ---------------------------------------------------------- */

static void assign_hosts(struct merge_rec *recs, size_t n, size_t *hosts)
{
	*hosts = 0;
	for (size_t i = 0; i < n; i++) {
		recs[i].host_id = SIZE_MAX;
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(recs[i].host, recs[j].host)) {
				recs[i].host_id = recs[j].host_id;
				break;
			}
		}
		if (recs[i].host_id == SIZE_MAX)
			recs[i].host_id = (*hosts)++;
	}
	/* One clock per host: its records take the largest error any of
	 * them saw. */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			if (recs[j].host_id == recs[i].host_id && recs[j].err_ns > recs[i].err_ns)
				recs[i].err_ns = recs[j].err_ns;
}

static int upper_bound(struct merge_rec *recs, size_t n, size_t hosts, struct merge_result *out)
{
	struct step *parts = calloc(hosts ? hosts : 1, sizeof(*parts)), sum = { 0 };
	int err = -ENOMEM;

	if (!parts)
		return -ENOMEM;
	for (size_t h = 0; h < hosts; h++) {
		struct step own = { 0 };
		int64_t eps = 0;

		/* One host: a shift common to every record moves the peak of
		 * the sum, never its value. */
		for (size_t i = 0; i < n && hosts > 1; i++)
			if (recs[i].host_id == h && recs[i].err_ns > eps)
				eps = recs[i].err_ns;
		err = host_step(recs, n, h, &own);
		if (!err)
			err = step_dilate(&own, eps, &parts[h]);
		step_free(&own);
		if (err)
			goto cleanup;
	}
	err = step_sum(parts, hosts, &sum);
	if (err)
		goto cleanup;
	for (size_t j = 0; j + 1 < sum.n; j++) {
		if (sum.v[j] > out->upper || !out->upper_end) {
			out->upper = sum.v[j];
			out->upper_start = sum.b[j];
			out->upper_end = sum.b[j + 1];
		}
	}
cleanup:
	for (size_t h = 0; h < hosts; h++)
		step_free(&parts[h]);
	free(parts);
	step_free(&sum);
	return err;
}

/* The least value record q is known to hold at every instant of [lo, hi]
 * of its own clock: the lowest min of the windows overlapping it, 0 where
 * it has no window or a min is not known. */
static uint64_t least_held(const struct merge_rec *q, int64_t lo, int64_t hi)
{
	size_t a = 0, b = q->n;
	uint64_t least = UINT64_MAX;

	if (!q->n || lo < q->w[0].start || hi > q->w[q->n - 1].end - MERGE_EDGE_NS)
		return 0;
	while (a < b) {         /* the first window ending at or after lo */
		size_t m = a + (b - a) / 2;

		if (q->w[m].end < lo)
			a = m + 1;
		else
			b = m;
	}
	for (size_t k = a; k < q->n && q->w[k].start <= hi; k++) {
		if (!q->w[k].min_known)
			return 0;
		if (q->w[k].min < least)
			least = q->w[k].min;
	}
	return least == UINT64_MAX ? 0 : least;
}

struct cand {
	uint64_t peak;
	size_t rec, win;
};

static int by_peak_desc(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return (x->peak < y->peak) - (x->peak > y->peak);
}

static int lower_bound(const struct merge_rec *recs, size_t n, struct merge_result *out)
{
	size_t total = 0, c = 0;
	uint64_t all_mins = 0;
	struct cand *cands;

	for (size_t i = 0; i < n; i++) {
		uint64_t most = 0;

		total += recs[i].n;
		for (size_t k = 0; k < recs[i].n; k++)
			if (recs[i].w[k].min_known && recs[i].w[k].min > most)
				most = recs[i].w[k].min;
		all_mins += most;
	}
	cands = malloc((total ? total : 1) * sizeof(*cands));
	if (!cands)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < recs[i].n; k++)
			cands[c++] = (struct cand){ recs[i].w[k].peak, i, k };
	qsort(cands, total, sizeof(*cands), by_peak_desc);
	for (c = 0; c < total; c++) {
		const struct merge_rec *r = &recs[cands[c].rec];
		const struct merge_window *w = &r->w[cands[c].win];
		uint64_t sum = w->peak;
		int64_t from = w->start, to = w->end;

		/* No later window can do better: their peaks are smaller. */
		if (w->peak + all_mins <= out->lower && out->lower_end)
			break;
		if (w->peak_at && w->peak_at >= w->start - MERGE_PEAK_SLACK_NS &&
		    w->peak_at <= w->end + MERGE_PEAK_SLACK_NS) {
			from = w->peak_at - MERGE_PEAK_SLACK_NS;
			to = w->peak_at + MERGE_PEAK_SLACK_NS;
		}
		for (size_t q = 0; q < n; q++) {
			int64_t widen = 0;

			if (q == cands[c].rec)
				continue;
			if (recs[q].host_id != r->host_id)
				widen = r->err_ns + recs[q].err_ns;
			sum += least_held(&recs[q], from - widen, to + widen);
		}
		if (sum > out->lower || !out->lower_end) {
			out->lower = sum;
			out->lower_start = from;
			out->lower_end = to;
		}
	}
	free(cands);
	return 0;
}

int merge_compute(struct merge_rec *recs, size_t n, struct merge_result *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	out->exact = true;
	out->all_synced = true;
	assign_hosts(recs, n, &out->hosts);
	for (size_t i = 0; i < n; i++) {
		out->sum_of_peaks += recs[i].peak;
		if (i == 0 || recs[i].peak > out->largest) {
			out->largest = recs[i].peak;
			out->largest_rec = i;
		}
		if (!recs[i].exact)
			out->exact = false;
		if (!recs[i].synced)
			out->all_synced = false;
		if (recs[i].err_ns > out->max_err_ns)
			out->max_err_ns = recs[i].err_ns;
	}
	err = upper_bound(recs, n, out->hosts, out);
	if (!err)
		err = lower_bound(recs, n, out);
	return err;
}

int merge_sum_steps(const struct merge_rec *recs, size_t n, int64_t **t, uint64_t **v, size_t *count)
{
	struct step s = { 0 };
	int err = host_step(recs, n, SIZE_MAX, &s);

	if (err) {
		step_free(&s);
		return err;
	}
	*t = s.b;
	*v = s.v;
	*count = s.n;
	return 0;
}
