// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>
#include "budget.h"
#include "cli.h"
#include "status.h"
#include "units.h"

int budget_value(const struct runs_opts *r, const struct bench_summary *s, double *v)
{
	const struct stat5 *st = r->max_of == BUDGET_OF_GROWTH ? &s->growth : &s->peak;

	if (!st->n)
		return -1;
	*v = r->budget_stat == BUDGET_STAT_MEDIAN ? st->median : st->max;
	if (*v < 0)
		*v = 0;
	return 0;
}

const char *budget_figure_name(const struct runs_opts *r)
{
	return r->max_of == BUDGET_OF_GROWTH ? "peak growth" : "peak";
}

static void exactness_note(const struct bench_summary *s, char *buf, size_t len)
{
	char b[32];

	if (s->exact)
		buf[0] = '\0';
	else if (s->bound_known)
		snprintf(buf, len, "; not exact (%s): it may be off by up to %s", s->source,
			 format_bytes(s->error_bound_bytes, b, sizeof(b)));
	else
		snprintf(buf, len, "; not exact (%s): how far it may be off is unknown%s%s", s->source,
			 s->inexact_reason ? ", " : "", s->inexact_reason ? s->inexact_reason : "");
}

int budget_judge(const struct runs_opts *r, const struct bench_summary *s, size_t n_runs,
		 char *msg, size_t len)
{
	const char *what = budget_figure_name(r);
	char v[32], lim[32], runs[48] = "", exact[256];
	double value, pct;

	format_bytes(r->max_bytes, lim, sizeof(lim));
	if (budget_value(r, s, &value)) {
		snprintf(msg, len, "%s was not measured: the budget %s cannot be checked", what, lim);
		return -1;
	}
	/* A run missing a window (or a run not measured among several) may
	 * have missed the peak: it can fail the budget, never pass it; a
	 * median cannot be judged at all. */
	if (s->lost_runs && (value <= (double)r->max_bytes || r->budget_stat == BUDGET_STAT_MEDIAN)) {
		snprintf(msg, len, "%s was not measured in all of %s: the budget %s cannot be checked (%s)",
			 what, n_runs > 1 ? "the runs' windows" : "the run's windows", lim, s->lost_why);
		return -1;
	}
	format_bytes((uint64_t)(value + 0.5), v, sizeof(v));
	if (n_runs > 1)
		snprintf(runs, sizeof(runs), "; the %s of %zu runs",
			 r->budget_stat == BUDGET_STAT_MEDIAN ? "median" : "max", n_runs);
	exactness_note(s, exact, sizeof(exact));
	pct = r->max_bytes ? (value - (double)r->max_bytes) / (double)r->max_bytes * 100 : 0;
	if (value > (double)r->max_bytes) {
		if (r->max_bytes)
			snprintf(msg, len, "%s %s exceeded the budget %s (+%.1f %%)%s%s", what, v, lim, pct,
				 runs, exact);
		else
			snprintf(msg, len, "%s %s exceeded the budget 0 B%s%s", what, v, runs, exact);
		return 1;
	}
	snprintf(msg, len, "%s %s is within the budget %s (%.1f %% of it)%s%s", what, v, lim,
		 r->max_bytes ? value / (double)r->max_bytes * 100 : 100.0, runs, exact);
	return 0;
}

int budget_check_benches(const struct options *o, const struct bench *b, size_t n)
{
	int status = 0;

	if (!o->runs.has_max)
		return 0;
	for (size_t k = 0; k < n; k++) {
		struct bench_summary s;
		char msg[512], who[64] = "";
		int v;

		bench_summarize(&b[k], &s);
		v = budget_judge(&o->runs, &s, b[k].n_runs, msg, sizeof(msg));
		if (n > 1)
			snprintf(who, sizeof(who), "command %zu: ", k + 1);
		if (v || !o->quiet)
			fprintf(stderr, "peakbpf: %s%s\n", who, msg);
		if (v < 0)
			status = EXIT_PEAKBPF_FAILED;
		else if (v > 0 && !status)
			status = EXIT_BUDGET_EXCEEDED;
	}
	return status;
}

int budget_check_single(const struct options *o, const struct run_result *res, int status)
{
	struct bench b = { .runs = (struct run_result *)res, .n_runs = 1 };

	if (status || !o->runs.has_max || !res->done)
		return status;
	return budget_check_benches(o, &b, 1);
}
