/* SPDX-License-Identifier: MIT */
/* The harness's options, parsed beside cli.c's: -r, -w, --prepare, -c,
 * --max, --max-of, --budget-stat, --export-*, --wait-descendants, -L, -P,
 * --fit, --headroom. */
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
};

#define RUNS_SHORT_OPTIONS "r:w:c:L:P:"
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
	{ "headroom", required_argument, NULL, OPT_RUNS_HEADROOM },

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

#endif
