// SPDX-License-Identifier: MIT
/* Option parsing: what runs, what is refused, and the one-line errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include <peakbpf/peakbpf_stacks.h>
#include "cli.h"
#include "stacks_cli.h"

#define ARGV(...) ((char *[]){ "peakbpf", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "peakbpf", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(o, err, ...) cli_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), o, err, sizeof(err))

static void test_command_after_double_dash(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "--", "ls", "-l"), CLI_RUN);
	assert_string_equal(o.command[0], "ls");
	assert_string_equal(o.command[1], "-l");
	assert_null(o.command[2]);
	assert_false(o.json);
	assert_null(o.output);
}

/* Options stop at the first non-option, so the command keeps its own. */
static void test_command_without_double_dash_keeps_its_options(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-q", "ls", "-j", "-o", "x"), CLI_RUN);
	assert_true(o.quiet);
	assert_false(o.json);
	assert_null(o.output);
	assert_string_equal(o.command[0], "ls");
	assert_string_equal(o.command[1], "-j");
}

static void test_all_options(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-j", "-o", "out.json", "-v", "--max-tracked", "4096", "--", "true"),
			 CLI_RUN);
	assert_true(o.json);
	assert_true(o.verbose);
	assert_string_equal(o.output, "out.json");
	assert_int_equal(o.max_tracked, 4096);
	assert_string_equal(o.command[0], "true");
}

static void test_long_forms(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "--json", "--output=r.json", "--quiet", "--verbose", "true"), CLI_RUN);
	assert_true(o.json && o.quiet && o.verbose);
	assert_string_equal(o.output, "r.json");
}

static void test_help_and_version(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "--help"), CLI_HELP);
	assert_int_equal(PARSE(&o, err, "-h", "--", "true"), CLI_HELP);
	assert_int_equal(PARSE(&o, err, "--version"), CLI_VERSION);
	assert_int_equal(PARSE(&o, err, "-V"), CLI_VERSION);
}

static void test_no_command(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(cli_parse(1, (char *[]){ "peakbpf", NULL }, &o, err, sizeof(err)), CLI_ERROR);
	assert_non_null(strstr(err, "no command"));
	assert_int_equal(PARSE(&o, err, "-j", "--"), CLI_ERROR);
	assert_non_null(strstr(err, "no command"));
}

static void test_unknown_options(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-Z", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "-Z"));
	assert_int_equal(PARSE(&o, err, "--frobnicate", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "--frobnicate"));
}

static void test_missing_values(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-o"), CLI_ERROR);
	assert_non_null(strstr(err, "needs a value"));
	assert_int_equal(PARSE(&o, err, "--max-tracked"), CLI_ERROR);
	assert_non_null(strstr(err, "needs a value"));
	assert_int_equal(PARSE(&o, err, "-o", "", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "empty"));
	/* issue 26: an empty cgroup root was taken as the default, silently */
	assert_int_equal(PARSE(&o, err, "--cgroup-root", "", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "--cgroup-root ''"));
	assert_int_equal(PARSE(&o, err, "--cgroup-root=", "true"), CLI_ERROR);
}

static void test_max_tracked_range(void **state)
{
	struct options o;
	char err[256] = "";
	const char *bad[] = { "0", "15", "-5", "12x", "", "4194305", "99999999999999999999", "+20" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(PARSE(&o, err, "--max-tracked", (char *)bad[i], "true"), CLI_ERROR);
		assert_non_null(strstr(err, "max-tracked"));
	}
	assert_int_equal(PARSE(&o, err, "--max-tracked", "16", "true"), CLI_RUN);
	assert_int_equal(o.max_tracked, 16);
	assert_int_equal(PARSE(&o, err, "--max-tracked", "4194304", "true"), CLI_RUN);
	assert_int_equal(o.max_tracked, 4194304);
}

/* Parsing twice in one process must not carry state over (getopt). */
static void test_reparse_is_clean(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-j", "-q", "a"), CLI_RUN);
	assert_int_equal(PARSE(&o, err, "b"), CLI_RUN);
	assert_false(o.json);
	assert_false(o.quiet);
	assert_string_equal(o.command[0], "b");
}

static void test_attach_pids(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-p", "12,345", "-d", "2s", "-i", "500ms"), CLI_RUN);
	assert_null(o.command);
	assert_int_equal(o.n_pids, 2);
	assert_int_equal(o.pids[0], 12);
	assert_int_equal(o.pids[1], 345);
	assert_int_equal(o.duration_ns, 2000000000ULL);
	assert_int_equal(o.interval_ns, 500000000ULL);
}

static void test_bad_pids(void **state)
{
	struct options o;
	char err[256] = "";
	const char *bad[] = { "0", "-3", "abc", "1,,2", "", "12x" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(PARSE(&o, err, "-p", (char *)bad[i]), CLI_ERROR);
		assert_non_null(strstr(err, "-p"));
	}
	assert_int_equal(PARSE(&o, err, "-p", "5,5"), CLI_ERROR);
	assert_non_null(strstr(err, "twice"));
	assert_int_equal(PARSE(&o, err, "-p", "99999999999"), CLI_ERROR);
}

static void test_pid_and_command_conflict(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-p", "1", "--", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "do not go together"));
	assert_int_equal(PARSE(&o, err, "-d", "1s", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "attach mode"));
}

static void test_durations_and_sources(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "-s", "proc", "--sample-interval", "10ms", "true"), CLI_RUN);
	assert_int_equal(o.source, PEAKBPF_SOURCE_PROC);
	assert_int_equal(o.sample_interval_ns, 10000000ULL);
	assert_int_equal(PARSE(&o, err, "--source=cgroup", "--cgroup-root", "/tmp/x", "true"), CLI_RUN);
	assert_int_equal(o.source, PEAKBPF_SOURCE_CGROUP);
	assert_string_equal(o.cgroup_root, "/tmp/x");
	assert_int_equal(PARSE(&o, err, "true"), CLI_RUN);
	assert_int_equal(o.source, PEAKBPF_SOURCE_AUTO);
	assert_int_equal(PARSE(&o, err, "-s", "magic", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "auto, bpf, cgroup, proc, rusage"));
	assert_int_equal(PARSE(&o, err, "-i", "0", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "--interval"));
	assert_int_equal(PARSE(&o, err, "-i", "5 parsecs", "true"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "--sample-interval", "-1s", "true"), CLI_ERROR);
	/* Ranges: -i 1us is a window shorter than its own reading; -d of
	 * 35792m once gave poll() a negative timeout. */
	assert_int_equal(PARSE(&o, err, "-i", "1us", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "out of range: from 10ms to 168h"));
	assert_int_equal(PARSE(&o, err, "-d", "35792m", "-p", "1"), CLI_RUN);
	assert_int_equal(o.duration_ns, 35792ULL * 60 * 1000000000ULL);
	assert_int_equal(PARSE(&o, err, "-d", "8761h", "-p", "1"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "--compare-sampler", "18428315758s", "true"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "--compare-sampler", "10us", "true"), CLI_ERROR);
}

static void test_compare_sampler_and_top(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "--compare-sampler", "100ms,1s,1ms", "-t", "12", "true"), CLI_RUN);
	assert_int_equal(o.n_samplers, 3);
	assert_int_equal(o.samplers_ns[0], 100000000ULL);
	assert_int_equal(o.samplers_ns[1], 1000000000ULL);
	assert_int_equal(o.samplers_ns[2], 1000000ULL);
	assert_int_equal(o.top, 12);
	assert_int_equal(PARSE(&o, err, "true"), CLI_RUN);
	assert_int_equal(o.top, 5);
	assert_int_equal(o.n_samplers, 0);
	const char *bad[] = { "", ",1s", "1s,", "1s,,2s", "0", "fast", "1,2,3,4,5,6,7,8,9" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(PARSE(&o, err, "--compare-sampler", (char *)bad[i], "true"), CLI_ERROR);
		assert_non_null(strstr(err, "--compare-sampler"));
	}
	assert_int_equal(PARSE(&o, err, "-s", "cgroup", "--compare-sampler", "1s", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "needs the bpf source"));
	assert_int_equal(PARSE(&o, err, "-t", "33", "true"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "-t", "x", "true"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "-t", "0", "true"), CLI_RUN);
	assert_int_equal(o.top, 0);
}

static void test_timeline(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "--timeline", "t.HTML", "true"), CLI_RUN);
	assert_string_equal(o.timeline, "t.HTML");
	assert_int_equal(PARSE(&o, err, "--timeline", "dir/t.json", "-p", "12"), CLI_RUN);
	assert_int_equal(PARSE(&o, err, "--timeline", "t.png", "true"), CLI_ERROR);
	assert_non_null(strstr(err, ".json, .csv, .svg or .html"));
	assert_int_equal(PARSE(&o, err, "--timeline", "a.svg", "--timeline", "a.json", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "--timeline: given twice ('a.svg', 'a.json')"));
	assert_int_equal(PARSE(&o, err, "--timeline", "csv", "true"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "-s", "proc", "--timeline", "t.svg", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "--timeline needs the bpf source"));
	assert_int_equal(PARSE(&o, err, "true"), CLI_RUN);
	assert_null(o.timeline);
}

/* --helper, with or without its socket; only where bpf may be the source. */
static void test_helper(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "--helper", "true"), CLI_RUN);
	assert_true(o.use_helper);
	assert_null(o.helper_path);
	assert_string_equal(o.command[0], "true");
	assert_int_equal(PARSE(&o, err, "--helper=/tmp/p.sock", "-p", "12"), CLI_RUN);
	assert_true(o.use_helper);
	assert_string_equal(o.helper_path, "/tmp/p.sock");
	assert_int_equal(PARSE(&o, err, "-s", "bpf", "--helper", "true"), CLI_RUN);
	assert_int_equal(PARSE(&o, err, "-s", "proc", "--helper", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "--helper gives the bpf source"));
	assert_int_equal(PARSE(&o, err, "true"), CLI_RUN);
	assert_false(o.use_helper);
	assert_null(o.helper_path);
}

/* --measure rss|unique: the headline; anything else names the choices. */
static void test_measure(void **state)
{
	struct options o;
	char err[256];

	(void)state;
	assert_int_equal(PARSE(&o, err, "true"), CLI_RUN);
	assert_false(o.measure_unique);
	assert_int_equal(PARSE(&o, err, "--measure", "unique", "true"), CLI_RUN);
	assert_true(o.measure_unique);
	assert_int_equal(PARSE(&o, err, "--measure=rss", "true"), CLI_RUN);
	assert_false(o.measure_unique);
	assert_int_equal(PARSE(&o, err, "--measure", "pss", "true"), CLI_ERROR);
	assert_string_equal(err, "--measure: 'pss' is not one of rss, unique");
	assert_int_equal(PARSE(&o, err, "--measure", "", "true"), CLI_ERROR);
}

static void test_record(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "--record", "rec", "--", "app"), CLI_RUN);
	assert_string_equal(o.record_dir, "rec");
	assert_int_equal(o.record_interval_ns, 10000000ULL);    /* the default */
	assert_int_equal(PARSE(&o, err, "--record", "rec", "--record-interval", "50ms", "app"), CLI_RUN);
	assert_int_equal(o.record_interval_ns, 50000000ULL);
	assert_int_equal(PARSE(&o, err, "--record-interval", "50ms", "app"), CLI_ERROR);
	assert_non_null(strstr(err, "needs --record DIR"));
	assert_int_equal(PARSE(&o, err, "--record", "rec", "--record-interval", "100us", "app"), CLI_ERROR);
	assert_non_null(strstr(err, "from 1ms to 1h"));
	assert_int_equal(PARSE(&o, err, "--record", "rec", "-i", "1s", "app"), CLI_ERROR);
	assert_non_null(strstr(err, "-i does not go with it"));
	assert_int_equal(PARSE(&o, err, "--record", "", "app"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "--record", "rec", "-r", "3", "app"), CLI_ERROR);
	assert_non_null(strstr(err, "one rank's run"));
	assert_int_equal(PARSE(&o, err, "app"), CLI_RUN);
	assert_null(o.record_dir);
	assert_int_equal(o.record_interval_ns, 0);
}

/* --stacks FILE: the windows of a command or of -p, the bpf source here; a name. */
static void test_stacks(void **state)
{
	struct options o;
	char err[256] = "";

	(void)state;
	assert_int_equal(PARSE(&o, err, "--stacks", "s.folded", "--", "true"), CLI_RUN);
	assert_string_equal(o.stacks, "s.folded");
	assert_int_equal(PARSE(&o, err, "--stacks", "", "--", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "empty file name"));
	assert_int_equal(PARSE(&o, err, "--stacks", "s", "-p", "1"), CLI_RUN);
	assert_int_equal(PARSE(&o, err, "--stacks", "s", "-p", "1", "-i", "1s"), CLI_RUN);
	assert_int_equal(PARSE(&o, err, "--stacks", "s", "-i", "1s", "--", "true"), CLI_RUN);
	assert_int_equal(o.interval_ns, 1000000000ULL);
	assert_int_equal(PARSE(&o, err, "--stacks", "s", "-s", "proc", "--", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "not with --source"));
	assert_int_equal(PARSE(&o, err, "--stacks", "s", "-r", "3", "--", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "not with -r"));
	assert_int_equal(PARSE(&o, err, "--stacks", "s"), CLI_ERROR);
	assert_non_null(strstr(err, "no command given"));
	/* The name says the format. */
	assert_int_equal(stacks_cli_format("s.folded"), PEAKBPF_STACKS_FOLDED);
	assert_int_equal(stacks_cli_format("stacks"), PEAKBPF_STACKS_FOLDED);
	assert_int_equal(stacks_cli_format("dir.json/s.txt"), PEAKBPF_STACKS_FOLDED);
	assert_int_equal(stacks_cli_format("s.speedscope.json"), PEAKBPF_STACKS_SPEEDSCOPE);
	assert_int_equal(stacks_cli_format("S.JSON"), PEAKBPF_STACKS_SPEEDSCOPE);
	assert_int_equal(PARSE(&o, err, "--stacks", "s.json", "--", "true"), CLI_RUN);
	assert_int_equal(PARSE(&o, err, "--stacks", "s.svg", "--", "true"), CLI_ERROR);
	assert_non_null(strstr(err, "--stacks: 's.svg': the name says the format: .json for speedscope JSON"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(PARSE(&o, err, "--stacks", "s.HTML", "--", "true"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "--stacks", "s.pb.gz", "--", "true"), CLI_ERROR);
	assert_int_equal(PARSE(&o, err, "--stacks", "s.pprof", "--", "true"), CLI_ERROR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_command_after_double_dash),
		cmocka_unit_test(test_stacks),
		cmocka_unit_test(test_command_without_double_dash_keeps_its_options),
		cmocka_unit_test(test_all_options),
		cmocka_unit_test(test_long_forms),
		cmocka_unit_test(test_help_and_version),
		cmocka_unit_test(test_no_command),
		cmocka_unit_test(test_unknown_options),
		cmocka_unit_test(test_missing_values),
		cmocka_unit_test(test_max_tracked_range),
		cmocka_unit_test(test_reparse_is_clean),
		cmocka_unit_test(test_attach_pids),
		cmocka_unit_test(test_bad_pids),
		cmocka_unit_test(test_pid_and_command_conflict),
		cmocka_unit_test(test_durations_and_sources),
		cmocka_unit_test(test_compare_sampler_and_top),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_helper),
		cmocka_unit_test(test_measure),
		cmocka_unit_test(test_record),
	};

	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
