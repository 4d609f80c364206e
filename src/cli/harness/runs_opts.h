/* SPDX-License-Identifier: MIT */
/*
 * Options of a harness invocation: repeated runs (-r, -w, --prepare),
 * several commands (-c), a memory budget (--max), exports, parameter
 * sweeps (-L, -P) and a fitted claim (--fit, --headroom).
 */
#ifndef PEAKBPF_RUNS_OPTS_H
#define PEAKBPF_RUNS_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "shell_words.h"

#define RUNS_MAX_COMMANDS 16
#define RUNS_MAX_PARAMS 4
#define RUNS_MAX_VALUES 128
#define RUNS_MAX_POINTS 1024
#define RUNS_MAX_RUNS 10000
#define RUNS_VALUE_LEN 48

enum budget_of {
	BUDGET_OF_PEAK,         /* the default: what a memory limit sees */
	BUDGET_OF_GROWTH,
};

enum budget_stat {
	BUDGET_STAT_MAX,        /* the default: the worst of the runs */
	BUDGET_STAT_MEDIAN,
};

/* -L NAME v1,v2 or -P NAME MIN MAX [STEP]: {NAME} in the command. */
struct sweep_param {
	const char *name;
	size_t n_values;
	bool numeric;                   /* every value is a number (for --fit) */
	double num[RUNS_MAX_VALUES];
	char text[RUNS_MAX_VALUES][RUNS_VALUE_LEN];
};

struct runs_opts {
	unsigned runs;                  /* -r; 0: not given (one run) */
	bool measure_unique;            /* --measure unique (the exports' measure label) */
	unsigned warmup;                /* -w */
	const char *prepare;            /* --prepare: a shell command before each run */
	const char *setup, *conclude, *cleanup; /* before a command's runs, after each, after all */
	const char *commands[RUNS_MAX_COMMANDS];        /* -c or positional: command strings */
	size_t n_commands;
	bool has_max;                   /* --max */
	uint64_t max_bytes;
	enum budget_of max_of;          /* --max-of */
	enum budget_stat budget_stat;   /* --budget-stat */
	const char *export_csv, *export_markdown, *export_json;
	const char *export_bmf, *export_gab, *export_openmetrics;      /* CI dashboards */
	struct shell_mode shell;        /* -N, --shell */
	bool show_output;               /* --show-output: the commands' own output */
	bool ignore_failure;            /* -i without a duration, --ignore-failure */
	bool wait_descendants;          /* --wait-descendants */
	struct sweep_param params[RUNS_MAX_PARAMS];
	size_t n_params;
	const char *fit;                /* --fit TERMS */
	bool has_headroom;
	double headroom;                /* --headroom */
};

#endif
