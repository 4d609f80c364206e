/* SPDX-License-Identifier: MIT */
/*
 * The harness: every command (-c, or the one after --) at every sweep
 * point, warmed up (-w) and measured -r times, each run exactly as a single
 * peakbpf run; then the summary, the budget, the exports and the fit.
 */
#ifndef PEAKBPF_RUNS_H
#define PEAKBPF_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include "bench.h"
#include "runs_opts.h"

struct options;

/* Measure o with its command (o->command); fills res. Returns the exit status. */
typedef int (*measure_fn)(const struct options *o, struct run_result *res);

/* Run the harness; returns peakbpf's exit status. */
int runs_main(const struct options *o, measure_fn measure);

#endif
