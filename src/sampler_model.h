/* SPDX-License-Identifier: MIT */
/*
 * What a periodic sampler would have reported. From an exact record of the
 * tree sum over time (a step function), compute, for every phase offset of
 * a sampler with a given interval, the largest value it would have seen,
 * and summarise the distribution over phases.
 */
#ifndef PEAKBPF_SAMPLER_MODEL_H
#define PEAKBPF_SAMPLER_MODEL_H

#include <stddef.h>
#include <stdint.h>

/* The tree sum as a step function: value[i] holds from ns[i] until ns[i+1].
 * Changes closer than res_ns to the previous point replace it (the last
 * value in a slot of res_ns is what an instant in it would see). */
struct sum_trace {
	uint64_t *ns;
	int64_t *value;
	size_t n, cap;
	uint64_t res_ns;
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

#endif
