/* SPDX-License-Identifier: MIT */
/* Reports of a run (one per window, and one for the whole run) and their
 * renderings: a human summary and one JSON line (its "record" member says
 * which kind). */
#ifndef PEAKBPF_REPORT_H
#define PEAKBPF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
/* A report carries figures, bpf counters and host facts: their headers
 * come with this one. The CLI's own part (the command, the PIDs,
 * --compare-sampler) is its extra (run_report.h). */
#include "figure.h"
#include "host.h"
#include "source.h"

/* What a report covers; each kind's name is its JSON "record" member. */
#define REPORT_KINDS(X) \
	X(WINDOW, "window")     /* one closed window */ \
	X(RUN, "run")           /* every window so far, folded */

enum report_kind {
#define REPORT_KIND_ID(id, name) REPORT_##id,
	REPORT_KINDS(REPORT_KIND_ID)
#undef REPORT_KIND_ID
};

const char *report_kind_name(enum report_kind k);

struct report {
	enum report_kind kind;
	unsigned window;                /* 1-based window number; 0 for the run */
	unsigned windows;               /* run: how many windows it had */
	double start_s, end_s;          /* since the run began */
	uint64_t t0_ns;                 /* CLOCK_MONOTONIC when the run began */
	struct figure primary;
	const struct figure *others;    /* every other source read at the same time */
	const struct figure *unique;    /* the tree's unique memory (measured or why not);
					   NULL: not asked (JSON null) */
	size_t n_others;
	const char *const *skipped;     /* why better sources were not used */
	size_t n_skipped;
	const struct bpf_counters *counters;    /* NULL without the bpf source */
	const struct host_facts *host;
	unsigned top;                   /* holders to list (-t) */
};

/* With the caller's own members (json_raw_members), before the counters
 * and the host; NULL: none (peakbpf_figure_format). */
void report_json_extra(const struct report *r, const char *extra, FILE *out);
/* s with control and non-ASCII bytes as \xNN, for a terminal; out holds
 * up to len - 1 characters (4 per byte of s is always enough). */
const char *printable(const char *s, char *out, size_t len);
/* The run's summary, several lines, with the caller's own lines before the
 * counters' (peakbpf_figure_format). */
void report_human_extra(const struct report *r, const char *extra, FILE *out);
/* One line for a closed window. */
void report_human_window(const struct report *r, FILE *out);

#endif
