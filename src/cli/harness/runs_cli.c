// SPDX-License-Identifier: MIT
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fit.h"
#include "runs.h"
#include "runs_cli.h"
#include "sweep.h"
#include "units.h"

const char runs_cli_usage[] =
"\n"
"Repeated runs, comparisons, budgets and sweeps (each run measured exactly;\n"
"flags and JSON as hyperfine's where they mean the same):\n"
"  -r, --runs N          measure N runs (1..10000); report min, median, mean,\n"
"                        max and stddev of peak, growth and wall time\n"
"  -w, --warmup N        N runs first, left out of the summary (0..10000)\n"
"  -c, --command CMD     a command string to compare (repeat, up to 16);\n"
"                        the markdown's ratios are against the first, the\n"
"                        Summary's against the lowest; not with -- COMMAND.\n"
"                        Without --, 'CMD ARGS' words with a blank are the same.\n"
"                        A string of plain words naming a program is exec'd\n"
"                        (no shell's memory in the figure); shell syntax or a\n"
"                        builtin runs through sh -c\n"
"  -N, --shell=none      split every command string into words and exec it\n"
"  -S, --shell SHELL     run command strings with SHELL -c (default /bin/sh)\n"
"      --setup CMD       run CMD before each command's series, not measured\n"
"      --prepare CMD     run CMD before every run, not measured\n"
"      --conclude CMD    run CMD after every run, not measured\n"
"      --cleanup CMD     run CMD after each command's series, not measured\n"
"      --show-output     show the commands' stdout and stderr (hidden otherwise)\n"
"  -i, --ignore-failure  exit 0 though a command exited non-zero\n"
"      --max SIZE        memory budget (e.g. 512MiB): exit 122 when the command\n"
"                        succeeded but exceeded it, with actual against allowed\n"
"      --max-of peak|growth   what --max limits (default peak)\n"
"      --budget-stat max|median  over runs (default max: the worst run)\n"
"      --export-json FILE      results as JSON (as -o): hyperfine's keys, with\n"
"                        memory_usage_byte each run's exact peak\n"
"      --export-csv FILE       results as CSV\n"
"      --export-markdown FILE  results as a Markdown table\n"
"      --export-bmf FILE       Bencher Metric Format (peak-memory in bytes,\n"
"                        latency in ns: value, lower_value, upper_value)\n"
"      --export-gab FILE       github-action-benchmark customSmallerIsBetter\n"
"      --export-openmetrics FILE  gauges for node_exporter's textfile collector\n"
"      --wait-descendants      keep measuring until every descendant exited\n"
"  -L, --parameter-list NAME V1,V2,...  run with {NAME} = each value\n"
"  -P, --parameter-scan NAME MIN MAX [STEP]  {NAME} = MIN, MIN+STEP, ... MAX\n"
"                        several -L/-P make a grid (up to 4, 1024 points)\n"
"      --fit TERMS       fit the budget's figure (--max-of, --budget-stat) to\n"
"                        base + TERMS, e.g. n,m,n*m,n^2: non-negative least\n"
"                        squares over every subset, fewer terms on a tie;\n"
"                        residuals and the largest step between neighbours\n"
"      --headroom F      with --fit: a claim F (e.g. 0.2) above every point\n"
"  On a terminal a progress bar shows the runs and warm-ups.\n"
"  e.g. peakbpf -r 5 -w 1 -- ./job        peakbpf --max 512MiB -r 3 -- ./job\n"
"       peakbpf -r 10 'sort big.txt' 'sort -S 1G big.txt'\n"
"       peakbpf -P n 1 8 --fit n -- ./job {n}\n";

static int parse_count(const char *s, unsigned long min, unsigned long max, unsigned *v)
{
	char *end;
	unsigned long n;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || n < min || n > max)
		return -ERANGE;
	*v = (unsigned)n;
	return 0;
}

static bool is_number(const char *s)
{
	char *end;

	if (!s || !*s)
		return false;
	errno = 0;
	(void)strtod(s, &end);
	return !errno && !*end;
}

/* -L NAME VALUES / -P NAME MIN MAX [STEP]: optarg is NAME, the rest follow. */
static enum cli_action parse_param(int c, char **argv, struct options *o, char *err, size_t errlen)
{
	struct runs_opts *r = &o->runs;
	struct sweep_param *p;
	int e;

	if (r->n_params >= RUNS_MAX_PARAMS) {
		snprintf(err, errlen, "-%c: at most %d parameters (-L, -P)", c, RUNS_MAX_PARAMS);
		return CLI_ERROR;
	}
	p = &r->params[r->n_params];
	if (c == 'L') {
		if (!argv[optind]) {
			snprintf(err, errlen, "-L %s: give the values too: -L NAME V1,V2,...", optarg);
			return CLI_ERROR;
		}
		e = sweep_parse_list(optarg, argv[optind++], p, err, errlen);
	} else {
		const char *step = NULL;

		if (!argv[optind] || !argv[optind + 1]) {
			snprintf(err, errlen, "-P %s: give MIN and MAX too: -P NAME MIN MAX [STEP]", optarg);
			return CLI_ERROR;
		}
		if (is_number(argv[optind + 2]))
			step = argv[optind + 2];
		e = sweep_parse_range(optarg, argv[optind], argv[optind + 1], step, p, err, errlen);
		optind += step ? 3 : 2;
	}
	if (e)
		return CLI_ERROR;
	for (size_t k = 0; k < r->n_params; k++) {
		if (!strcmp(r->params[k].name, p->name)) {
			snprintf(err, errlen, "-%c %s: the parameter is given twice", c, p->name);
			return CLI_ERROR;
		}
	}
	r->n_params++;
	return CLI_RUN;
}

static enum cli_action parse_choice(const char *opt, const char *arg, const char *a, const char *b,
				    int *v, char *err, size_t errlen)
{
	if (!strcmp(arg, a) || !strcmp(arg, b)) {
		*v = strcmp(arg, a) ? 1 : 0;
		return CLI_RUN;
	}
	snprintf(err, errlen, "%s: '%s' is not %s or %s", opt, arg, a, b);
	return CLI_ERROR;
}

static enum cli_action parse_budget(int c, struct runs_opts *r, char *err, size_t errlen)
{
	int v;

	switch (c) {
	case OPT_RUNS_MAX:
		r->has_max = true;
		if (!parse_size(optarg, &r->max_bytes))
			return CLI_RUN;
		snprintf(err, errlen, "--max: '%s' is not a size (e.g. 512MiB or 512M: powers of 1024; 500MB: powers of 1000)", optarg);
		return CLI_ERROR;
	case OPT_RUNS_MAX_OF:
		if (parse_choice("--max-of", optarg, "peak", "growth", &v, err, errlen) != CLI_RUN)
			return CLI_ERROR;
		r->max_of = v ? BUDGET_OF_GROWTH : BUDGET_OF_PEAK;
		return CLI_RUN;
	default:        /* OPT_RUNS_BUDGET_STAT */
		if (parse_choice("--budget-stat", optarg, "max", "median", &v, err, errlen) != CLI_RUN)
			return CLI_ERROR;
		r->budget_stat = v ? BUDGET_STAT_MEDIAN : BUDGET_STAT_MAX;
		return CLI_RUN;
	}
}

static enum cli_action parse_headroom(struct runs_opts *r, char *err, size_t errlen)
{
	char *end;

	errno = 0;
	r->headroom = strtod(optarg, &end);
	r->has_headroom = true;
	if (!*optarg || errno || *end || !(r->headroom >= 0 && r->headroom <= 10)) {
		snprintf(err, errlen, "--headroom: '%s' is not a fraction from 0 to 10 (e.g. 0.2)", optarg);
		return CLI_ERROR;
	}
	return CLI_RUN;
}

/* Options that only keep their value: where it goes, or NULL. */
static const char **string_option(int c, struct runs_opts *r)
{
	switch (c) {
	case OPT_RUNS_PREPARE: return &r->prepare;
	case OPT_RUNS_SETUP: return &r->setup;
	case OPT_RUNS_CONCLUDE: return &r->conclude;
	case OPT_RUNS_CLEANUP: return &r->cleanup;
	case OPT_RUNS_EXPORT_CSV: return &r->export_csv;
	case OPT_RUNS_EXPORT_MARKDOWN: return &r->export_markdown;
	case OPT_RUNS_EXPORT_JSON: return &r->export_json;
	case OPT_RUNS_EXPORT_BMF: return &r->export_bmf;
	case OPT_RUNS_EXPORT_GAB: return &r->export_gab;
	case OPT_RUNS_EXPORT_OPENMETRICS: return &r->export_openmetrics;
	case OPT_RUNS_FIT: return &r->fit;
	default: return NULL;
	}
}

/* Flags: true if c is one. */
static bool flag_option(int c, struct runs_opts *r)
{
	switch (c) {
	case OPT_RUNS_WAIT_DESCENDANTS:
		r->wait_descendants = true;
		return true;
	case OPT_RUNS_SHOW_OUTPUT:
		r->show_output = true;
		return true;
	case OPT_RUNS_IGNORE_FAILURE:
		r->ignore_failure = true;
		return true;
	case 'N':
		r->shell.none = true;
		return true;
	default:
		return false;
	}
}

/* -S, --shell SHELL|none: what runs command strings (hyperfine's). */
static enum cli_action parse_shell(struct runs_opts *r, char *err, size_t errlen)
{
	if (!strcmp(optarg, "none")) {
		r->shell.none = true;
		return CLI_RUN;
	}
	if (*optarg) {
		r->shell.shell = optarg;
		return CLI_RUN;
	}
	snprintf(err, errlen, "--shell: empty: give a shell (e.g. /bin/bash) or none");
	return CLI_ERROR;
}

bool runs_cli_option(int c, char **argv, struct options *o, char *err, size_t errlen,
		     enum cli_action *action)
{
	struct runs_opts *r = &o->runs;
	const char **value = string_option(c, r);

	*action = CLI_RUN;
	if (value) {
		*value = optarg;
		return true;
	}
	if (flag_option(c, r))
		return true;
	switch (c) {
	case 'r':
	case 'w':
		if (!parse_count(optarg, c == 'r', RUNS_MAX_RUNS, c == 'r' ? &r->runs : &r->warmup))
			return true;
		snprintf(err, errlen, "--%s: '%s' is not a number from %d to %d",
			 c == 'r' ? "runs" : "warmup", optarg, c == 'r', RUNS_MAX_RUNS);
		break;
	case 'c':
		if (r->n_commands < RUNS_MAX_COMMANDS && *optarg) {
			r->commands[r->n_commands++] = optarg;
			return true;
		}
		snprintf(err, errlen, "--command: %s", *optarg ? "at most 16 commands" : "empty command");
		break;
	case 'L':
	case 'P':
		*action = parse_param(c, argv, o, err, errlen);
		return true;
	case 'S':
		*action = parse_shell(r, err, errlen);
		return true;
	case OPT_RUNS_MAX:
	case OPT_RUNS_MAX_OF:
	case OPT_RUNS_BUDGET_STAT:
		*action = parse_budget(c, r, err, errlen);
		return true;
	case OPT_RUNS_HEADROOM:
		*action = parse_headroom(r, err, errlen);
		return true;
	default:
		return false;
	}
	*action = CLI_ERROR;
	return true;
}

/* Every parameter must appear as {NAME} in every command. */
static enum cli_action check_params_used(int argc, char **argv, const struct options *o,
					 char *err, size_t errlen)
{
	const struct runs_opts *r = &o->runs;

	for (size_t k = 0; k < r->n_params; k++) {
		const char *name = r->params[k].name;
		bool used = false;

		for (size_t c = 0; c < r->n_commands; c++)
			used |= sweep_uses(r->commands[c], name);
		for (int i = optind; i < argc; i++)
			used |= sweep_uses(argv[i], name);
		if (!used) {
			snprintf(err, errlen, "parameter %s is not in the command: write {%s} where its value goes",
				 name, name);
			return CLI_ERROR;
		}
	}
	if (sweep_points(r) > RUNS_MAX_POINTS) {
		snprintf(err, errlen, "the grid has %zu points, at most %d: fewer values", sweep_points(r),
			 RUNS_MAX_POINTS);
		return CLI_ERROR;
	}
	return CLI_RUN;
}

static enum cli_action check_fit(const struct runs_opts *r, char *err, size_t errlen)
{
	struct fit_terms t;
	double *x;
	bool bad;

	if (r->has_headroom && !r->fit) {
		snprintf(err, errlen, "--headroom needs --fit: the claim is the fitted formula plus headroom");
		return CLI_ERROR;
	}
	if (!r->fit)
		return CLI_RUN;
	if (!r->n_params) {
		snprintf(err, errlen, "--fit needs a sweep: -L NAME V1,V2,... or -P NAME MIN MAX [STEP]");
		return CLI_ERROR;
	}
	if (sweep_fit_terms(r, &t, err, errlen))
		return CLI_ERROR;
	x = sweep_grid(r);
	bad = !x || fit_check_grid(&t, x, sweep_points(r), err, errlen);
	if (!x)
		snprintf(err, errlen, "out of memory");
	free(x);
	return bad ? CLI_ERROR : CLI_RUN;
}

static bool harness_only(const struct runs_opts *r)
{
	return runs_wanted(r) || r->fit || r->wait_descendants;
}

/*
 * hyperfine's form: without "--", a first word with a blank in it is a
 * command string, and so is every word after it (each one a command, as
 * with -c). "peakbpf ls -l" and "peakbpf -- CMD ARGS" stay an argv.
 */
static enum cli_action positional_strings(int argc, char **argv, struct options *o, char *err,
					  size_t errlen)
{
	struct runs_opts *r = &o->runs;
	bool dashdash = optind > 1 && !strcmp(argv[optind - 1], "--");

	if (dashdash || optind >= argc || !argv[optind][strcspn(argv[optind], " \t\n")])
		return CLI_RUN;
	for (; optind < argc; optind++) {
		if (r->n_commands >= RUNS_MAX_COMMANDS || !*argv[optind]) {
			snprintf(err, errlen, "%s", *argv[optind] ? "at most 16 commands" : "empty command");
			return CLI_ERROR;
		}
		r->commands[r->n_commands++] = argv[optind];
	}
	return CLI_RUN;
}

/*
 * hyperfine's form takes options anywhere (issue 36): from the first
 * command string on (a word with a blank, not after "--"), a word that
 * starts with '-' is an option again, and the command strings are gathered
 * in their order at argv's end, where runs_cli_check reads them.
 */
enum cli_action runs_cli_options_among_strings(int argc, char **argv, struct options *o, char *err,
					       size_t errlen, runs_cli_parse_fn parse)
{
	enum cli_action action = CLI_RUN;
	char **strings;
	int n = 0;

	if (optind >= argc || (optind > 1 && !strcmp(argv[optind - 1], "--")) ||
	    !argv[optind][strcspn(argv[optind], " \t\n")])
		return CLI_RUN;
	strings = calloc((size_t)argc, sizeof(*strings));
	if (!strings) {
		snprintf(err, errlen, "out of memory");
		return CLI_ERROR;
	}
	while (optind < argc && action == CLI_RUN && n < argc) {
		int at = optind;

		if (argv[optind][0] == '-' && argv[optind][1])
			action = parse(argc, argv, o, err, errlen);
		/* A word getopt took nothing of (or gave back: -i's) is a
		 * command string, so that every turn moves on. */
		if (action == CLI_RUN && optind <= at) {
			optind = at;
			strings[n++] = argv[optind++];
		}
	}
	for (int i = 0; i < n; i++)
		argv[argc - n + i] = strings[i];
	optind = argc - n;
	free(strings);
	return action;
}

enum cli_action runs_cli_check(int argc, char **argv, struct options *o, char *err, size_t errlen,
			       bool *done)
{
	const struct runs_opts *r = &o->runs;

	*done = false;
	if (positional_strings(argc, argv, o, err, errlen) != CLI_RUN)
		return CLI_ERROR;
	if (o->n_pids && harness_only(r)) {
		snprintf(err, errlen, "-p attaches to one tree: -r, -w, --prepare, --setup, --conclude, "
			 "-c, -L, -P, --fit, --export-* and --wait-descendants are for commands");
		return CLI_ERROR;
	}
	if (r->wait_descendants && o->source != PEAKBPF_SOURCE_AUTO && o->source != PEAKBPF_SOURCE_BPF) {
		snprintf(err, errlen, "--wait-descendants needs the bpf source: it counts the tree's processes "
			 "in the kernel");
		return CLI_ERROR;
	}
	if (runs_wanted(r) && (o->interval_ns || o->n_samplers)) {
		snprintf(err, errlen, "-i and --compare-sampler report one run: not with -r, -w, -c, -L, -P "
			 "or --export-*");
		return CLI_ERROR;
	}
	if (r->n_commands && optind < argc) {
		snprintf(err, errlen, "-c and a command after the options do not go together: give every "
			 "command with -c, or one after --");
		return CLI_ERROR;
	}
	if (check_params_used(argc, argv, o, err, errlen) != CLI_RUN ||
	    check_fit(r, err, errlen) != CLI_RUN)
		return CLI_ERROR;
	if (r->n_commands && o->duration_ns) {
		snprintf(err, errlen, "--duration is for attach mode (-p); a command's run ends when it exits");
		return CLI_ERROR;
	}
	*done = r->n_commands > 0;
	return CLI_RUN;
}

bool runs_wanted(const struct runs_opts *r)
{
	return r->runs > 1 || r->warmup || r->prepare || r->setup || r->conclude || r->cleanup ||
	       r->n_commands || r->n_params || r->ignore_failure || r->export_csv ||
	       r->export_markdown || r->export_json || r->export_bmf || r->export_gab ||
	       r->export_openmetrics;
}
