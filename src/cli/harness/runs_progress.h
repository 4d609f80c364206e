/* SPDX-License-Identifier: MIT */
/*
 * The harness's progress on stderr (not with -q): on a terminal one line
 * redrawn in place (a bar over every run and warm-up, the run under way,
 * the time left; redrawn every second during a long run, with its time so
 * far), as hyperfine's; otherwise a line per run and per warm-up. The bar is
 * off with --show-output, whose lines it would cut.
 */
#ifndef PEAKBPF_RUNS_PROGRESS_H
#define PEAKBPF_RUNS_PROGRESS_H

#include <pthread.h>
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
	uint64_t t0_ns, run_t0_ns;      /* the series' start; the run's (0: none under way) */
	/* The bar's ticker: a thread redrawing it every second (bar only). */
	pthread_t ticker;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool ticking, stop;
};

void runs_progress_init(struct runs_progress *p, const struct options *o, size_t n_benches, bool tty);
/* Run index (a warm-up's if warmup) of bench is starting. */
void runs_progress_start(struct runs_progress *p, size_t bench, unsigned index, bool warmup);
/* It ended with x. */
void runs_progress_done(struct runs_progress *p, const struct run_result *x);
/* Take the bar off the line before anything else is written. */
void runs_progress_clear(struct runs_progress *p);
/* The series is over: the bar off the line, its ticker stopped. */
void runs_progress_end(struct runs_progress *p);
/* The bar's line for p at elapsed_s, run_s into the run under way:
 * "peakbpf: [1/2] run 3/10 [####    ] 40 %, 6 s left; this run 12 s". */
void runs_progress_format(const struct runs_progress *p, double elapsed_s, double run_s, char *buf,
			  size_t len);

#endif
