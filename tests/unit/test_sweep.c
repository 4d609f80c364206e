// SPDX-License-Identifier: MIT
/* Parameter sweeps: values, grids, substitution. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "fit.h"
#include "sweep.h"

static struct runs_opts r;

static void test_list(void **state)
{
	char err[256] = "";
	struct sweep_param *p = &r.params[0];

	(void)state;
	assert_int_equal(sweep_parse_list("n", "1,2,64", p, err, sizeof(err)), 0);
	assert_int_equal(p->n_values, 3);
	assert_true(p->numeric);
	assert_string_equal(p->text[2], "64");
	assert_true(p->num[2] == 64);
	assert_int_equal(sweep_parse_list("mode", "fast,small", p, err, sizeof(err)), 0);
	assert_false(p->numeric);
	assert_int_equal(sweep_parse_list("n", "1,,2", p, err, sizeof(err)), -EINVAL);
	assert_int_equal(sweep_parse_list("n", "1,2,", p, err, sizeof(err)), -EINVAL);
	assert_int_equal(sweep_parse_list("n", "1,1", p, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "twice"));
	assert_int_equal(sweep_parse_list("a-b", "1", p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a parameter name"));
}

static void test_range(void **state)
{
	char err[256] = "";
	struct sweep_param *p = &r.params[0];

	(void)state;
	assert_int_equal(sweep_parse_range("n", "64", "512", "64", p, err, sizeof(err)), 0);
	assert_int_equal(p->n_values, 8);
	assert_string_equal(p->text[7], "512");
	assert_int_equal(sweep_parse_range("n", "0.1", "0.3", "0.1", p, err, sizeof(err)), 0);
	assert_int_equal(p->n_values, 3);       /* 0.1 steps: the end is not lost to rounding */
	assert_int_equal(sweep_parse_range("n", "1", "4", NULL, p, err, sizeof(err)), 0);
	assert_int_equal(p->n_values, 4);
	assert_int_equal(sweep_parse_range("n", "4", "1", NULL, p, err, sizeof(err)), -EINVAL);
	assert_int_equal(sweep_parse_range("n", "1", "4", "0", p, err, sizeof(err)), -EINVAL);
	assert_int_equal(sweep_parse_range("n", "1", "x", NULL, p, err, sizeof(err)), -EINVAL);
	assert_int_equal(sweep_parse_range("n", "1", "1e9", NULL, p, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "raise STEP"));
}

static void test_grid_and_substitution(void **state)
{
	char err[256] = "";
	size_t vi[RUNS_MAX_PARAMS];
	double *x;
	char *s;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(sweep_parse_list("n", "1,2,3", &r.params[0], err, sizeof(err)), 0);
	assert_int_equal(sweep_parse_list("m", "10,20", &r.params[1], err, sizeof(err)), 0);
	r.n_params = 2;
	assert_int_equal(sweep_points(&r), 6);
	sweep_point(&r, 3, vi);                 /* the last parameter varies fastest */
	assert_int_equal(vi[0], 1);
	assert_int_equal(vi[1], 1);
	s = sweep_substitute("job -n {n} -m {m}{m} {x} {n", &r, vi);
	assert_string_equal(s, "job -n 2 -m 2020 {x} {n");
	free(s);
	assert_true(sweep_uses("a{m}b", "m"));
	assert_false(sweep_uses("a{mm}b", "m"));
	x = sweep_grid(&r);
	assert_true(x[3 * 2] == 2 && x[3 * 2 + 1] == 20);
	free(x);
}

static void test_fit_terms_need_numbers(void **state)
{
	char err[256] = "";
	struct fit_terms t;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_int_equal(sweep_parse_list("mode", "a,b", &r.params[0], err, sizeof(err)), 0);
	r.n_params = 1;
	r.fit = "mode";
	assert_int_equal(sweep_fit_terms(&r, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not numbers"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_grid_and_substitution),
		cmocka_unit_test(test_fit_terms_need_numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
