/* SPDX-License-Identifier: MIT */
/* --fit over the harness's sweep: one fit per command, from the figure
 * --max-of and --budget-stat name; its formula, each point's residual, the
 * largest step and, with --headroom, a claim. */
#ifndef PEAKBPF_FIT_REPORT_H
#define PEAKBPF_FIT_REPORT_H

#include <stdio.h>
#include "fit.h"
#include "bench.h"

struct json_writer;

struct fit_report {
	const struct bench *b;          /* the command's points, grid order */
	size_t n;
	bool ok;
	char err[256];                  /* when !ok */
	struct fit_terms t;
	struct fit_result f;
	double *x, *y, *fitted;         /* per point */
	struct fit_step step;
	bool has_claim;
	double claim[FIT_MAX_COLS];
};

/* Fit command c's n points b[0..n). -1 (with fr->err) when it cannot. */
int fit_report_compute(const struct runs_opts *r, const struct bench *b, size_t n,
		       struct fit_report *fr);
void fit_report_human(const struct runs_opts *r, const struct fit_report *fr, size_t c, FILE *out);
void fit_report_json(const struct runs_opts *r, const struct fit_report *fr, struct json_writer *w);
void fit_report_free(struct fit_report *fr);

#endif
