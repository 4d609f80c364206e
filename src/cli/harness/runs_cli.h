/* SPDX-License-Identifier: MIT */
/* The harness's options, parsed beside cli.c's: -r, -w, --prepare, -c,
 * --max, --max-of, --budget-stat, --export-*, --wait-descendants, -L, -P,
 * --fit, --headroom, and hyperfine's --setup, --conclude, --cleanup,
 * --show-output, --ignore-failure, -N, --shell. */
#ifndef PEAKBPF_RUNS_CLI_H
#define PEAKBPF_RUNS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include "cli.h"

enum {
	OPT_RUNS_PREPARE = 512,
	OPT_RUNS_MAX,
	OPT_RUNS_MAX_OF,
	OPT_RUNS_BUDGET_STAT,
	OPT_RUNS_EXPORT_CSV,
	OPT_RUNS_EXPORT_MARKDOWN,
	OPT_RUNS_WAIT_DESCENDANTS,
	OPT_RUNS_FIT,
	OPT_RUNS_HEADROOM,
	OPT_RUNS_SETUP,
	OPT_RUNS_CONCLUDE,
	OPT_RUNS_CLEANUP,
	OPT_RUNS_SHOW_OUTPUT,
	OPT_RUNS_IGNORE_FAILURE,
	OPT_RUNS_EXPORT_JSON,
	OPT_RUNS_EXPORT_BMF,
	OPT_RUNS_EXPORT_GAB,
	OPT_RUNS_EXPORT_OPENMETRICS,
};

#define RUNS_SHORT_OPTIONS "r:w:c:L:P:NS:"
#define RUNS_LONG_OPTIONS \
	{ "runs", required_argument, NULL, 'r' }, \
	{ "warmup", required_argument, NULL, 'w' }, \
	{ "command", required_argument, NULL, 'c' }, \
	{ "parameter-list", required_argument, NULL, 'L' }, \
	{ "parameter-scan", required_argument, NULL, 'P' }, \
	{ "prepare", required_argument, NULL, OPT_RUNS_PREPARE }, \
	{ "max", required_argument, NULL, OPT_RUNS_MAX }, \
	{ "max-of", required_argument, NULL, OPT_RUNS_MAX_OF }, \
	{ "budget-stat", required_argument, NULL, OPT_RUNS_BUDGET_STAT }, \
	{ "export-csv", required_argument, NULL, OPT_RUNS_EXPORT_CSV }, \
	{ "export-markdown", required_argument, NULL, OPT_RUNS_EXPORT_MARKDOWN }, \
	{ "wait-descendants", no_argument, NULL, OPT_RUNS_WAIT_DESCENDANTS }, \
	{ "fit", required_argument, NULL, OPT_RUNS_FIT }, \
	{ "headroom", required_argument, NULL, OPT_RUNS_HEADROOM }, \
	{ "setup", required_argument, NULL, OPT_RUNS_SETUP }, \
	{ "conclude", required_argument, NULL, OPT_RUNS_CONCLUDE }, \
	{ "cleanup", required_argument, NULL, OPT_RUNS_CLEANUP }, \
	{ "show-output", no_argument, NULL, OPT_RUNS_SHOW_OUTPUT }, \
	{ "ignore-failure", no_argument, NULL, OPT_RUNS_IGNORE_FAILURE }, \
	{ "export-json", required_argument, NULL, OPT_RUNS_EXPORT_JSON }, \
	{ "export-bmf", required_argument, NULL, OPT_RUNS_EXPORT_BMF }, \
	{ "export-gab", required_argument, NULL, OPT_RUNS_EXPORT_GAB }, \
	{ "export-openmetrics", required_argument, NULL, OPT_RUNS_EXPORT_OPENMETRICS }, \
	{ "shell", required_argument, NULL, 'S' },

/* The help text's section for these options. */
extern const char runs_cli_usage[];

/* Option c if it is one of these: true, with *action CLI_RUN or CLI_ERROR
 * (err says why). -L and -P take their further values from argv[optind]. */
bool runs_cli_option(int c, char **argv, struct options *o, char *err, size_t errlen,
		     enum cli_action *action);
/* After the options: what does not go together. *done when the commands
 * came with -c (no command follows the options). */
enum cli_action runs_cli_check(int argc, char **argv, struct options *o, char *err, size_t errlen,
			       bool *done);

/* Whether the options ask for the harness rather than one plain run. */
bool runs_wanted(const struct runs_opts *r);

/* hyperfine's form takes options anywhere (issue 36): from the first
 * command string on, a word that starts with '-' is parsed by parse (the
 * CLI's getopt loop) as options, and the command strings are gathered in
 * their order at argv's end, where runs_cli_check reads them. */
typedef enum cli_action (*runs_cli_parse_fn)(int argc, char **argv, struct options *o, char *err,
					     size_t errlen);
enum cli_action runs_cli_options_among_strings(int argc, char **argv, struct options *o, char *err,
					       size_t errlen, runs_cli_parse_fn parse);

#endif
