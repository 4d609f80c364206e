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
#include "runs_opts.h"
#include "runs_result.h"
#include "stats.h"

struct options;

/* One command at one sweep point, and its runs. */
struct bench {
	char *label;                    /* the command as shown, parameters substituted */
	char **argv;                    /* what runs */
	size_t command;                 /* which command (from 0) */
	size_t vi[RUNS_MAX_PARAMS];     /* each parameter's value index */
	struct run_result *runs;
	size_t n_runs;                  /* done so far */
};

/* A bench summarised: statistics over its measured runs. */
struct bench_summary {
	struct stat5 peak, growth, wall;        /* bytes, bytes, seconds */
	const char *source;             /* of every run, or "mixed" */
	bool exact, bound_known;        /* every run exact; every bound known */
	uint64_t error_bound_bytes;     /* the largest */
	const char *inexact_reason;
	/* runs not measured, or measured in only some of their windows: no
	 * budget passes them; lost_why: the first one's reason */
	size_t lost_runs;
	const char *lost_why;
	int status;                     /* the first non-zero exit status, else 0 */
};

void bench_summarize(const struct bench *b, struct bench_summary *s);

/* Whether the options ask for the harness rather than one plain run. */
bool runs_wanted(const struct runs_opts *r);

/* Measure o with its command (o->command); fills res. Returns the exit status. */
typedef int (*measure_fn)(const struct options *o, struct run_result *res);

/* Run the harness; returns peakbpf's exit status. */
int runs_main(const struct options *o, measure_fn measure);

#endif
