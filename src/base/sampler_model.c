// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sampler_model.h"

void trace_init(struct sum_trace *t, uint64_t res_ns)
{
	memset(t, 0, sizeof(*t));
	t->res_ns = res_ns ? res_ns : 1;
	t->max_points = TRACE_MAX_POINTS;
}

/* At the cap: twice the resolution, each new slot's last value kept. */
static void coarsen(struct sum_trace *t)
{
	size_t k = 0;

	t->res_ns *= 2;
	for (size_t i = 1; i < t->n; i++) {
		if (t->ns[i] - t->ns[k] >= t->res_ns)
			t->ns[++k] = t->ns[i];
		t->value[k] = t->value[i];
	}
	t->n = k + 1;
}

int trace_add(struct sum_trace *t, uint64_t ns, int64_t value)
{
	if (t->n) {
		uint64_t last = t->ns[t->n - 1];

		if (ns < last)
			ns = last;      /* events from two CPUs can arrive swapped */
		while (t->max_points >= 2 && t->n >= t->max_points)
			coarsen(t);
		last = t->ns[t->n - 1];
		if (ns - last < t->res_ns) {
			t->value[t->n - 1] = value;
			return 0;
		}
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		uint64_t *ns_new = realloc(t->ns, cap * sizeof(*ns_new));
		int64_t *v_new;

		if (!ns_new)
			return -ENOMEM;
		t->ns = ns_new;
		v_new = realloc(t->value, cap * sizeof(*v_new));
		if (!v_new)
			return -ENOMEM;
		t->value = v_new;
		t->cap = cap;
	}
	t->ns[t->n] = ns;
	t->value[t->n] = value;
	t->n++;
	return 0;
}

/* Index of the last point at or before ns, or 0 before the first. */
static size_t point_at(const struct sum_trace *t, uint64_t ns)
{
	size_t lo = 0, hi = t->n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->ns[mid] <= ns)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int64_t trace_value_at(const struct sum_trace *t, uint64_t ns)
{
	return t->n ? t->value[point_at(t, ns)] : 0;
}

void trace_free(struct sum_trace *t)
{
	free(t->ns);
	free(t->value);
	memset(t, 0, sizeof(*t));
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int sampler_distribution(const struct sum_trace *t, uint64_t start, uint64_t end,
			 uint64_t interval_ns, int64_t true_peak, struct sampler_stats *out)
{
	uint64_t step;
	size_t phases, i, within = 0;
	int64_t *seen;

	memset(out, 0, sizeof(*out));
	if (!t->n || !interval_ns || end < start)
		return -EINVAL;
	step = interval_ns / 1000 > t->res_ns ? interval_ns / 1000 : t->res_ns;
	if (step > interval_ns)
		step = interval_ns;
	phases = (size_t)((interval_ns + step - 1) / step);
	seen = calloc(phases, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	for (i = 0; i < phases; i++) {
		uint64_t at = start + i * step;
		int64_t best = INT64_MIN;

		/* A sampler whose first reading comes after the run still reads
		 * once, at the end: it reports what it saw then. */
		if (at > end)
			at = end;
		for (; at <= end; at += interval_ns) {
			int64_t v = trace_value_at(t, at);

			if (v > best)
				best = v;
		}
		seen[i] = best;
		/* v >= 95 % of the peak, in integers: 20 v >= 19 peak */
		if (true_peak <= 0 || 20 * (__int128)best >= 19 * (__int128)true_peak)
			within++;
	}
	qsort(seen, phases, sizeof(*seen), cmp_i64);
	out->interval_ns = interval_ns;
	out->phase_step_ns = step;
	out->phases = phases;
	out->worst = seen[0];
	out->best = seen[phases - 1];
	out->median = seen[phases / 2];
	out->p_within_5pct = (double)within / (double)phases;
	free(seen);
	return 0;
}

static uint64_t pages_to_bytes(int64_t pages, uint64_t page_size)
{
	return pages > 0 ? (uint64_t)pages * page_size : 0;
}

void sampler_report_compute(const struct sampler_report_input *in, struct sampler_report *s)
{
	uint64_t page = in->page_size ? in->page_size : 1;

	memset(s, 0, sizeof(*s));
	s->true_peak_bytes = in->true_peak_bytes;
	s->resolution_ns = in->trace->res_ns;
	s->record_drops = in->record_drops;
	for (size_t i = 0; i < in->n_intervals && i < SAMPLER_MAX_INTERVALS; i++) {
		struct sampler_stats st;

		if (sampler_distribution(in->trace, in->start_ns, in->end_ns, in->intervals_ns[i],
					 (int64_t)(in->true_peak_bytes / page), &st))
			continue;
		s->at[s->n].interval_ns = st.interval_ns;
		s->at[s->n].phase_step_ns = st.phase_step_ns;
		s->at[s->n].phases = st.phases;
		s->at[s->n].worst_bytes = pages_to_bytes(st.worst, page);
		s->at[s->n].median_bytes = pages_to_bytes(st.median, page);
		s->at[s->n].best_bytes = pages_to_bytes(st.best, page);
		s->at[s->n].p_within_5pct = st.p_within_5pct;
		s->n++;
	}
}

void sampler_report_check_real(struct sampler_report *s, uint64_t interval_ns,
			       uint64_t peak_bytes, uint64_t samples)
{
	uint64_t tol = 2 * 1024 * 1024 + s->true_peak_bytes / 50;

	if (!s->n)
		return;
	s->real_measured = true;
	s->real_interval_ns = interval_ns;
	s->real_peak_bytes = peak_bytes;
	s->real_samples = samples;
	s->real_within = peak_bytes + tol >= s->at[0].worst_bytes &&
			 peak_bytes <= s->at[0].best_bytes + tol;
}
