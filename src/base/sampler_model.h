/* SPDX-License-Identifier: MIT */
/*
 * What a periodic sampler would have reported. From an exact record of the
 * tree sum over time (a step function), compute, for every phase offset of
 * a sampler with a given interval, the largest value it would have seen,
 * and summarise the distribution over phases.
 */
#ifndef PEAKBPF_SAMPLER_MODEL_H
#define PEAKBPF_SAMPLER_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The tree sum as a step function: value[i] holds from ns[i] until ns[i+1].
 * Changes closer than res_ns to the previous point replace it (the last
 * value in a slot of res_ns is what an instant in it would see). The trace
 * is capped: when it holds max_points, res_ns doubles and the points are
 * merged by the same rule, as often as needed, so it never holds more than
 * TRACE_MAX_POINTS points (16 MiB) by default, for any run length; runs
 * below the cap keep the resolution they asked for. */
#define TRACE_MAX_POINTS (1U << 20)

struct sum_trace {
	uint64_t *ns;
	int64_t *value;
	size_t n, cap;
	uint64_t res_ns;
	size_t max_points;      /* the cap: TRACE_MAX_POINTS (tests lower it) */
};

void trace_init(struct sum_trace *t, uint64_t res_ns);
/* Append a point; points must come in time order (a point earlier than the
 * last is applied at the last's time). 0 or -ENOMEM. */
int trace_add(struct sum_trace *t, uint64_t ns, int64_t value);
/* The value at instant ns: the last point at or before it (the first
 * point's value before it). */
int64_t trace_value_at(const struct sum_trace *t, uint64_t ns);
void trace_free(struct sum_trace *t);

struct sampler_stats {
	uint64_t interval_ns;
	uint64_t phase_step_ns;
	size_t phases;
	int64_t worst, median, best;    /* the sampler's reported peak over phases */
	double p_within_5pct;           /* share of phases reporting >= 95 % of true_peak */
};

/*
 * A sampler reading at start + phase + k * interval, for every k with the
 * instant in [start, end], for phases 0, step, 2 step, ... < interval.
 * step is chosen as max(res_ns, interval / 1000). true_peak is the exact
 * peak to compare with. 0, or -EINVAL (empty trace, zero interval, end <
 * start), -ENOMEM.
 */
int sampler_distribution(const struct sum_trace *t, uint64_t start, uint64_t end,
			 uint64_t interval_ns, int64_t true_peak, struct sampler_stats *out);

#define SAMPLER_MAX_INTERVALS 8

/* --compare-sampler: what samplers at each interval would have reported. */
struct sampler_report {
	size_t n;
	struct {
		uint64_t interval_ns;
		uint64_t phase_step_ns;
		size_t phases;
		uint64_t worst_bytes, median_bytes, best_bytes;
		double p_within_5pct;
	} at[SAMPLER_MAX_INTERVALS];
	uint64_t true_peak_bytes;
	uint64_t resolution_ns;
	uint64_t record_drops;          /* changes not recorded: the model is then approximate */
	/* the real /proc sampler at the first interval, as a check */
	bool real_measured;
	uint64_t real_interval_ns;
	uint64_t real_peak_bytes;
	uint64_t real_samples;
	bool real_within;               /* inside [worst, best], with a small tolerance */
};

/* What a sampler report is computed from. */
struct sampler_report_input {
	const struct sum_trace *trace;  /* the exact tree sum, in pages */
	uint64_t start_ns, end_ns;      /* the run */
	uint64_t page_size;
	uint64_t true_peak_bytes;       /* the exact peak over the run */
	uint64_t record_drops;          /* changes missing from the trace */
	const uint64_t *intervals_ns;
	size_t n_intervals;             /* beyond SAMPLER_MAX_INTERVALS: ignored */
};

/* Model every interval over the run, in bytes. An interval the model
 * cannot compute (sampler_distribution fails) is left out. */
void sampler_report_compute(const struct sampler_report_input *in, struct sampler_report *out);
/*
 * Check a real sampler at the first interval against the model: it reads
 * within [worst, best], give or take 2 MiB + 2 % of the true peak. Does
 * nothing when no interval was modelled.
 */
void sampler_report_check_real(struct sampler_report *s, uint64_t interval_ns,
			       uint64_t peak_bytes, uint64_t samples);

#endif
