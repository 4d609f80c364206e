// SPDX-License-Identifier: MIT
/* The harness's exports: JSON results[], CSV, Markdown, the summary. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "export.h"

#define MIB 1048576ULL

static struct run_result ra[3], rb[3];
static struct bench benches[2];
static struct runs_opts opts;

static int setup(void **state)
{
	(void)state;
	memset(&opts, 0, sizeof(opts));
	for (size_t i = 0; i < 3; i++) {
		ra[i] = (struct run_result){ .done = true, .measured = true, .source = "bpf", .exact = true,
					     .bound_known = true, .peak_bytes = (64 + i) * MIB,
					     .growth_known = true, .growth_bytes = (int64_t)((64 + i) * MIB),
					     .wall_s = 0.5 + 0.1 * (double)i, .has_cpu_times = true,
					     .user_s = 0.25, .system_s = 0.05 };
		rb[i] = ra[i];
		rb[i].peak_bytes *= 2;
		rb[i].growth_bytes *= 2;
		rb[i].exit_status = i == 2 ? 3 : 0;
	}
	rb[1].measured = false;         /* one run without a figure */
	rb[1].has_cpu_times = false;
	benches[0] = (struct bench){ .label = "./job --size 64", .runs = ra, .n_runs = 3 };
	benches[1] = (struct bench){ .label = "sh -c 'a | b, \"c\"'", .runs = rb, .n_runs = 3 };
	return 0;
}

static char *capture(void (*fn)(const struct runs_opts *, const struct bench *, size_t, FILE *))
{
	static char *buf;       /* static: gcc 12 takes open_memstream's for dangling */
	static size_t len;
	FILE *f;

	buf = NULL;
	f = open_memstream(&buf, &len);

	fn(&opts, benches, 2, f);
	fclose(f);
	return buf;
}

static void json_no_fits(const struct runs_opts *r, const struct bench *b, size_t n, FILE *out)
{
	export_json(r, b, n, NULL, 0, out);
}

static void test_json_fields(void **state)
{
	char *s = capture(json_no_fits);

	(void)state;
	assert_non_null(strstr(s, "{\"record\":\"results\""));
	assert_non_null(strstr(s, "\"results\":[{\"command\":\"./job --size 64\",\"mean\":0.6,"));
	assert_non_null(strstr(s, "\"times\":[0.5,0.6,0.7],\"exit_codes\":[0,0,0],\"parameters\":{}"));
	assert_non_null(strstr(s, "\"peak_bytes\":{\"mean\":68157440,"));
	assert_non_null(strstr(s, "\"median\":68157440,\"min\":67108864,\"max\":69206016,"
			       "\"values\":[67108864,68157440,69206016],\"source\":\"bpf\",\"exact\":true,"
			       "\"error_bound_bytes\":0"));
	/* Not measured is null, never 0; the exit status of every run is kept. */
	assert_non_null(strstr(s, "\"values\":[134217728,null,138412032]"));
	assert_non_null(strstr(s, "\"exit_codes\":[0,0,3]"));
	assert_non_null(strstr(s, "\"ratio_to_first\":{\"peak\":2,"));
	assert_int_equal(s[strlen(s) - 1], '\n');
	free(s);
}

/* hyperfine's keys, as its JSON readers want them; not measured is null. */
static void test_json_hyperfine_keys(void **state)
{
	char *s = capture(json_no_fits);

	(void)state;
	assert_non_null(strstr(s, "\"user\":0.25,\"system\":0.05,\"user_times\":[0.25,0.25,0.25],"
			       "\"system_times\":[0.05,0.05,0.05],"
			       "\"memory_usage_byte\":[67108864,68157440,69206016]"));
	assert_non_null(strstr(s, "\"user_times\":[0.25,null,0.25]"));
	assert_non_null(strstr(s, "\"memory_usage_byte\":[134217728,null,138412032]"));
	free(s);
}

static size_t count_fields(const char *line)
{
	size_t n = 1;
	bool quoted = false;

	for (; *line && *line != '\n'; line++) {
		if (*line == '"')
			quoted = !quoted;
		else if (*line == ',' && !quoted)
			n++;
	}
	return n;
}

static void test_csv_parses(void **state)
{
	char *s = capture(export_csv), *l2, *l3;

	(void)state;
	assert_non_null(strstr(s, "command,mean,stddev,median,user,system,min,max,peak_mean_bytes,"));
	l2 = strchr(s, '\n') + 1;
	l3 = strchr(l2, '\n') + 1;
	assert_int_equal(count_fields(s), count_fields(l2));
	assert_int_equal(count_fields(s), count_fields(l3));
	assert_non_null(strstr(l2, "./job --size 64,0.6,0.1,0.6,0.25,0.05,0.5,0.7,68157440,"));
	assert_non_null(strstr(l3, "\"sh -c 'a | b, \"\"c\"\"'\","));   /* RFC 4180 quoting */
	assert_non_null(strstr(l3, ",bpf,true,0,3,0 0 3\n"));
	free(s);
}

static size_t pipes(const char *line)
{
	size_t n = 0;
	char prev = '\0';

	for (; *line && *line != '\n'; prev = *line++)
		if (*line == '|' && prev != '\\')
			n++;
	return n;
}

static void test_markdown_well_formed(void **state)
{
	char *s = capture(export_markdown), *line = s;
	size_t rows = 0, cols = pipes(s);

	(void)state;
	assert_int_equal(cols, 9);
	for (; *line; line = strchr(line, '\n') + 1, rows++) {
		assert_int_equal(pipes(line), cols);
		assert_int_equal(line[0], '|');
	}
	assert_int_equal(rows, 4);
	assert_non_null(strstr(s, "| sh -c 'a \\| b, \"c\"' |"));
	assert_non_null(strstr(s, "| 2.00 |"));
	free(s);
}

static void test_human(void **state)
{
	char *s = capture(export_human);

	(void)state;
	assert_non_null(strstr(s, "Command 1: ./job --size 64\n  peak    65.0 MiB ± 1.0 MiB"));
	assert_non_null(strstr(s, "runs    3: peak 128.0 MiB, not measured, 132.0 MiB; exit 0 0 3"));
	/* hyperfine's Summary (issue 36): the lowest, and the other as its ratio */
	assert_non_null(strstr(s, "Summary\n  './job --size 64' peaked lowest\n"));
	assert_non_null(strstr(s, " times lower than 'sh -c "));
	assert_non_null(strstr(s, " ran fastest\n"));
	free(s);
}

/* A command the series never reached: nothing is printed as 0. */
static void test_no_runs_is_not_zero(void **state)
{
	char *s;

	(void)state;
	benches[1].n_runs = 0;
	s = capture(export_markdown);
	assert_non_null(strstr(s, "| not measured ± n/a | not measured … not measured | not measured "
			       "| not measured | n/a |"));
	free(s);
	s = capture(export_human);
	assert_non_null(strstr(s, "runs    none: the series stopped before this command"));
	assert_non_null(strstr(s, "  time    not measured\n"));
	free(s);
	s = capture(json_no_fits);
	assert_non_null(strstr(s, "\"mean\":null,\"stddev\":null,\"median\":null,\"min\":null,\"max\":null,"
			       "\"times\":[]"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_json_fields, setup),
		cmocka_unit_test_setup(test_json_hyperfine_keys, setup),
		cmocka_unit_test_setup(test_csv_parses, setup),
		cmocka_unit_test_setup(test_markdown_well_formed, setup),
		cmocka_unit_test_setup(test_human, setup),
		cmocka_unit_test_setup(test_no_runs_is_not_zero, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
