/* SPDX-License-Identifier: MIT */
/*
 * A bench: one command at one sweep point and its runs, and their summary.
 * The data of the harness: runs.c fills benches, and the budget, the
 * exports and the fit read them.
 */
#ifndef PEAKBPF_BENCH_H
#define PEAKBPF_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "runs_opts.h"
#include "runs_result.h"
#include "stats.h"

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

#endif
