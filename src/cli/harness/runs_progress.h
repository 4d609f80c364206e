/* SPDX-License-Identifier: MIT */
/*
 * The harness's progress on stderr (not with -q): on a terminal one line
 * redrawn in place (a bar over every run and warm-up, the run under way,
 * the time left), as hyperfine's; otherwise a line per run and per warm-up.
 * The bar is off with --show-output, whose lines it would cut.
 */
#ifndef PEAKBPF_RUNS_PROGRESS_H
#define PEAKBPF_RUNS_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "runs_result.h"

struct options;

struct runs_progress {
	bool quiet, bar, drawn;
	size_t n_benches, bench;
	unsigned runs, warmup, index;
	bool in_warmup;
	size_t done, total;             /* runs and warm-ups, over every bench */
	uint64_t t0_ns;
};

void runs_progress_init(struct runs_progress *p, const struct options *o, size_t n_benches, bool tty);
/* Run index (a warm-up's if warmup) of bench is starting. */
void runs_progress_start(struct runs_progress *p, size_t bench, unsigned index, bool warmup);
/* It ended with x. */
void runs_progress_done(struct runs_progress *p, const struct run_result *x);
/* Take the bar off the line before anything else is written. */
void runs_progress_clear(struct runs_progress *p);
/* The bar's line for p at elapsed_s: "peakbpf: [1/2] run 3/10 [####    ] 40 %, 6 s left". */
void runs_progress_format(const struct runs_progress *p, double elapsed_s, char *buf, size_t len);

#endif
