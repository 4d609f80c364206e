/* SPDX-License-Identifier: MIT */
/* Records of a run (one per window, and one for the whole run) and their
 * renderings: a human summary and one JSON line. */
#ifndef PEAKBPF_REPORT_H
#define PEAKBPF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
/* A record carries figures, bpf counters, host facts and a sampler report:
 * their headers come with this one. */
#include "figure.h"
#include "host.h"
#include "sampler_model.h"
#include "source.h"

struct command_facts {
	char *const *argv;
	pid_t pid;
	int wait_status;                /* raw waitpid status */
	double user_s, sys_s;
	int64_t descendants_alive;      /* tree processes alive when it exited, -1 unknown */
};

struct record {
	const char *kind;               /* "window" or "run" */
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
	const struct command_facts *command;    /* NULL when attached */
	const pid_t *attached;          /* -p PIDs, NULL in command mode */
	size_t n_attached;
	const struct bpf_counters *counters;    /* NULL without the bpf source */
	const struct host_facts *host;
	unsigned top;                   /* holders to list (-t) */
	const struct sampler_report *sampler;   /* run record with --compare-sampler */
};

void report_json(const struct record *r, FILE *out);
/* s with control and non-ASCII bytes as \xNN, for a terminal; out holds
 * up to len - 1 characters (4 per byte of s is always enough). */
const char *printable(const char *s, char *out, size_t len);
/* The run's summary: several lines. */
void report_human(const struct record *r, FILE *out);
/* One line for a closed window. */
void report_human_window(const struct record *r, FILE *out);

#endif
