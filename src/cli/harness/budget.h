/* SPDX-License-Identifier: MIT */
/*
 * The memory budget gate: --max SIZE on the peak (default) or the growth
 * (--max-of), over the max of the runs (default) or their median
 * (--budget-stat). "peak 612.0 MiB exceeded the budget 512.0 MiB (+19.5 %)".
 */
#ifndef PEAKBPF_BUDGET_H
#define PEAKBPF_BUDGET_H

#include <stddef.h>
#include "bench.h"

/* The command succeeded but its memory exceeded --max. */
#define EXIT_BUDGET_EXCEEDED 122

struct options;

/* The figure --max and --fit use: --max-of's, by --budget-stat over the
 * runs. -1 when it was not measured. */
int budget_value(const struct runs_opts *r, const struct bench_summary *s, double *v);
/* "peak" or "peak growth". */
const char *budget_figure_name(const struct runs_opts *r);
/*
 * Judge one summary against the budget: 1 exceeded, 0 within, -1 the
 * figure was not measured. msg gets the one-line verdict (no "peakbpf: ").
 */
int budget_judge(const struct runs_opts *r, const struct bench_summary *s, size_t n_runs,
		 char *msg, size_t len);
/* Judge every bench and say so on stderr: 0, EXIT_BUDGET_EXCEEDED, or
 * EXIT_PEAKBPF_FAILED when a figure to judge was not measured. 0 without --max. */
int budget_check_benches(const struct options *o, const struct bench *b, size_t n);
/* One plain run: its status when the command failed, else the budget's. */
int budget_check_single(const struct options *o, const struct run_result *res, int status);

#endif
