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
	assert_int_equal(PARSE(&o, err, "--max", "512MB", "job"), CLI_ERROR);
	assert_string_equal(err, "--max: '512MB' is not a size (e.g. 512MiB, 1.5GiB)");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_warmup_prepare),
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_sweeps),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_exports_and_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
