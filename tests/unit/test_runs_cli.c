// SPDX-License-Identifier: MIT
/* The harness's options: what runs, what is refused, and the errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "cli.h"
#include "runs.h"
#include "runs_cli.h"

#define ARGV(...) ((char *[]){ "peakbpf", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "peakbpf", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(o, err, ...) cli_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), o, err, sizeof(err))

static struct options o;        /* large: not on the stack */

static void test_runs_warmup_prepare(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-r", "5", "--warmup", "2", "--prepare", "sync", "--", "job", "-r"),
			 CLI_RUN);
	assert_int_equal(o.runs.runs, 5);
	assert_int_equal(o.runs.warmup, 2);
	assert_string_equal(o.runs.prepare, "sync");
	assert_string_equal(o.command[1], "-r");
	assert_true(runs_wanted(&o.runs));
	assert_int_equal(PARSE(&o, err, "--", "job"), CLI_RUN);
	assert_false(runs_wanted(&o.runs));
	assert_int_equal(PARSE(&o, err, "-r", "0", "job"), CLI_ERROR);
	assert_string_equal(err, "--runs: '0' is not a number from 1 to 10000");
	assert_int_equal(PARSE(&o, err, "-w", "x", "job"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "-r", "10001", "job"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "-r", "-3", "job"), CLI_ERROR);
}

static void test_commands(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-c", "./a 1", "--command", "./b"), CLI_RUN);
	assert_int_equal(o.runs.n_commands, 2);
	assert_null(o.command);
	assert_int_equal(PARSE(&o, err, "-c", "./a", "--", "./b"), CLI_ERROR);
	assert_non_null(strstr(err, "-c and a command after the options do not go together"));
	assert_int_equal(PARSE(&o, err, "-c", ""), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "-p", "1", "-r", "3"), CLI_ERROR);
	assert_non_null(strstr(err, "-p attaches to one tree"));
	assert_int_equal(PARSE(&o, err, "-r", "3", "-i", "1s", "job"), CLI_ERROR);
}

static void test_budget(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "--max", "512MiB", "job"), CLI_RUN);
	assert_true(o.runs.has_max);
	assert_int_equal(o.runs.max_bytes, 512ULL << 20);
	assert_int_equal(o.runs.max_of, BUDGET_OF_PEAK);        /* the default */
	assert_int_equal(o.runs.budget_stat, BUDGET_STAT_MAX);
	assert_false(runs_wanted(&o.runs));                     /* one plain run */
	assert_int_equal(PARSE(&o, err, "--max", "1G", "--max-of", "growth", "--budget-stat", "median",
			       "-p", "1"), CLI_RUN);
	assert_int_equal(o.runs.max_of, BUDGET_OF_GROWTH);
	assert_int_equal(o.runs.budget_stat, BUDGET_STAT_MEDIAN);
	assert_int_equal(PARSE(&o, err, "--max", "512MB", "job"), CLI_RUN);     /* powers of 1000 */
	assert_int_equal(o.runs.max_bytes, 512000000ULL);
	assert_int_equal(PARSE(&o, err, "--max", "100 mib", "job"), CLI_RUN);
	assert_int_equal(o.runs.max_bytes, 100ULL << 20);
	assert_int_equal(PARSE(&o, err, "--max", "512XB", "job"), CLI_ERROR);
	assert_string_equal(err, "--max: '512XB' is not a size (e.g. 512MiB or 512M: powers of 1024; "
			    "500MB: powers of 1000)");
	assert_int_equal(PARSE(&o, err, "--max-of", "rss", "job"), CLI_ERROR);
	assert_string_equal(err, "--max-of: 'rss' is not peak or growth");
	assert_int_equal(PARSE(&o, err, "--budget-stat", "mean", "job"), CLI_ERROR);
}

static void test_sweeps(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-L", "n", "1,2", "-P", "m", "64", "256", "64", "--", "job", "{n}", "{m}"),
			 CLI_RUN);
	assert_int_equal(o.runs.n_params, 2);
	assert_int_equal(o.runs.params[1].n_values, 4);
	assert_string_equal(o.command[0], "job");
	assert_int_equal(PARSE(&o, err, "-P", "m", "1", "3", "job", "{m}"), CLI_RUN);  /* no STEP */
	assert_int_equal(o.runs.params[0].n_values, 3);
	assert_string_equal(o.command[0], "job");
	assert_int_equal(PARSE(&o, err, "-L", "n", "1,2", "job"), CLI_ERROR);
	assert_string_equal(err, "parameter n is not in the command: write {n} where its value goes");
	assert_int_equal(PARSE(&o, err, "-L", "n"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "-P", "n", "1"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "-L", "n", "1", "-L", "n", "2", "job", "{n}"), CLI_ERROR);
	assert_non_null(strstr(err, "given twice"));
	assert_int_equal(PARSE(&o, err, "-c", "job {n}", "-L", "n", "1,2"), CLI_RUN);
}

static void test_fit(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-P", "n", "1", "4", "--fit", "n,n^2", "--headroom", "0.2",
			       "job", "{n}"), CLI_RUN);
	assert_true(o.runs.has_headroom);
	assert_int_equal(PARSE(&o, err, "--fit", "n", "job"), CLI_ERROR);
	assert_non_null(strstr(err, "--fit needs a sweep"));
	assert_int_equal(PARSE(&o, err, "--headroom", "0.2", "job"), CLI_ERROR);
	assert_non_null(strstr(err, "--headroom needs --fit"));
	/* Refused before anything runs: 2 points cannot carry a base and 2 terms. */
	assert_int_equal(PARSE(&o, err, "-P", "n", "1", "2", "--fit", "n,n^2", "job", "{n}"), CLI_ERROR);
	assert_non_null(strstr(err, "too few for a base and 2 terms"));
	assert_int_equal(PARSE(&o, err, "-P", "n", "1", "4", "--fit", "q", "job", "{n}"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "-P", "n", "1", "4", "--fit", "n", "--headroom", "-1", "job", "{n}"),
			 CLI_ERROR);
}

static void test_exports_and_wait(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "--export-csv", "r.csv", "--export-markdown", "r.md",
			       "--wait-descendants", "job"), CLI_RUN);
	assert_string_equal(o.runs.export_csv, "r.csv");
	assert_string_equal(o.runs.export_markdown, "r.md");
	assert_true(o.runs.wait_descendants);
	assert_true(runs_wanted(&o.runs));
	assert_int_equal(PARSE(&o, err, "--wait-descendants", "-p", "1"), CLI_ERROR);
}

/* hyperfine's habits: -i without a duration, -p/-s/-u with hyperfine's
 * values say what peakbpf's flag for that is. */
static void test_hyperfine_flags(void **state)
{
	char err[512] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-r", "2", "-i", "--", "false"), CLI_RUN);
	assert_true(o.runs.ignore_failure);
	assert_int_equal(o.interval_ns, 0);
	assert_string_equal(o.command[0], "false");
	assert_int_equal(PARSE(&o, err, "-i", "-r", "2", "false"), CLI_RUN);
	assert_true(o.runs.ignore_failure);
	assert_int_equal(o.runs.runs, 2);
	assert_int_equal(PARSE(&o, err, "-i", "false"), CLI_RUN);
	assert_true(o.runs.ignore_failure && runs_wanted(&o.runs));
	assert_string_equal(o.command[0], "false");
	assert_int_equal(PARSE(&o, err, "-i", "2s", "--", "job"), CLI_RUN);       /* still a window */
	assert_false(o.runs.ignore_failure);
	assert_int_equal(o.interval_ns, 2000000000ULL);
	assert_int_equal(PARSE(&o, err, "-i", "5x", "job"), CLI_ERROR);
	assert_non_null(strstr(err, "--interval: '5x' is not a duration"));
	assert_int_equal(PARSE(&o, err, "--ignore-failure", "-r", "2", "--", "false"), CLI_RUN);
	assert_true(o.runs.ignore_failure);
	assert_int_equal(PARSE(&o, err, "-r", "2", "-p", "sync", "job"), CLI_ERROR);
	assert_non_null(strstr(err, "write --prepare CMD"));
	assert_int_equal(PARSE(&o, err, "-p", "x1"), CLI_ERROR);
	assert_non_null(strstr(err, "--prepare"));
	assert_int_equal(PARSE(&o, err, "-p", "1x"), CLI_ERROR);
	assert_null(strstr(err, "--prepare"));
	assert_int_equal(PARSE(&o, err, "-s", "basic", "job"), CLI_ERROR);
	assert_non_null(strstr(err, "hyperfine's --style"));
	assert_int_equal(PARSE(&o, err, "-u", "millisecond", "job"), CLI_ERROR);
	assert_non_null(strstr(err, "hyperfine's --time-unit"));
}

/* A positional string with a blank is a command string, as in hyperfine;
 * "--" keeps the argv form. */
static void test_positional_strings(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "sleep 0.1"), CLI_RUN);
	assert_int_equal(o.runs.n_commands, 1);
	assert_string_equal(o.runs.commands[0], "sleep 0.1");
	assert_null(o.command);
	assert_int_equal(PARSE(&o, err, "-r", "3", "sleep 0.1", "sleep 0.2"), CLI_RUN);
	assert_int_equal(o.runs.n_commands, 2);
	assert_int_equal(PARSE(&o, err, "--", "sleep 0.1"), CLI_RUN);
	assert_int_equal(o.runs.n_commands, 0);
	assert_string_equal(o.command[0], "sleep 0.1");
	assert_int_equal(PARSE(&o, err, "ls", "-l", "a b"), CLI_RUN);
	assert_string_equal(o.command[2], "a b");
	assert_int_equal(PARSE(&o, err, "-c", "./a", "./b c"), CLI_RUN);
	assert_int_equal(o.runs.n_commands, 2);
	assert_int_equal(PARSE(&o, err, "-c", "./a", "--", "./b c"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "-p", "1", "sleep 1"), CLI_ERROR);
}

/* Options after the command strings, as hyperfine takes them (issue 36:
 * --export-json was run as a command); "--" keeps the argv form. */
static void test_options_after_strings(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-N", "-r", "10", "sort big.txt", "sort -S 1G big.txt",
			       "--export-json", "pb.json"), CLI_RUN);
	assert_int_equal(o.runs.n_commands, 2);
	assert_string_equal(o.runs.commands[0], "sort big.txt");
	assert_string_equal(o.runs.commands[1], "sort -S 1G big.txt");
	assert_string_equal(o.runs.export_json, "pb.json");
	assert_int_equal(o.runs.runs, 10);
	assert_int_equal(PARSE(&o, err, "sleep 0.1", "-r", "3", "sleep 0.2", "-w", "1"), CLI_RUN);
	assert_int_equal(o.runs.n_commands, 2);
	assert_string_equal(o.runs.commands[1], "sleep 0.2");
	assert_int_equal(o.runs.runs, 3);
	assert_int_equal(o.runs.warmup, 1);
	assert_int_equal(PARSE(&o, err, "sleep 0.1", "--bogus"), CLI_ERROR);
	assert_non_null(strstr(err, "--bogus"));
	assert_int_equal(PARSE(&o, err, "--", "sh -c", "--export-json", "x"), CLI_RUN);
	assert_string_equal(o.command[1], "--export-json");
	assert_null(o.runs.export_json);
}

static void test_hyperfine_options(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-N", "--setup", "s", "--conclude", "c", "--cleanup", "d",
			       "--show-output", "--export-json", "r.json", "--export-bmf", "b.json",
			       "--export-gab", "g.json", "--export-openmetrics", "m.prom", "job 1"), CLI_RUN);
	assert_true(o.runs.shell.none && o.runs.show_output);
	assert_string_equal(o.runs.setup, "s");
	assert_string_equal(o.runs.conclude, "c");
	assert_string_equal(o.runs.cleanup, "d");
	assert_string_equal(o.runs.export_json, "r.json");
	assert_string_equal(o.runs.export_bmf, "b.json");
	assert_string_equal(o.runs.export_gab, "g.json");
	assert_string_equal(o.runs.export_openmetrics, "m.prom");
	assert_int_equal(PARSE(&o, err, "--shell=none", "job 1"), CLI_RUN);
	assert_true(o.runs.shell.none);
	assert_int_equal(PARSE(&o, err, "-S", "/bin/bash", "job 1"), CLI_RUN);
	assert_string_equal(o.runs.shell.shell, "/bin/bash");
	assert_int_equal(PARSE(&o, err, "--shell=", "job 1"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "--export-json", "r.json", "--", "job"), CLI_RUN);
	assert_true(runs_wanted(&o.runs));
	assert_int_equal(PARSE(&o, err, "-p", "1", "--setup", "x"), CLI_ERROR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_warmup_prepare),
		cmocka_unit_test(test_hyperfine_flags),
		cmocka_unit_test(test_positional_strings),
		cmocka_unit_test(test_options_after_strings),
		cmocka_unit_test(test_hyperfine_options),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_sweeps),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_exports_and_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
