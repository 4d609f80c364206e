// SPDX-License-Identifier: MIT
/* --fit's math: known formulas recovered, never a negative coefficient,
 * grids that cannot carry the terms refused, claims above every point. */
#include <stdarg.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "fit.h"

#define MIB 1048576.0

static const char *const NM[] = { "n", "m" };

static bool near(double a, double b, double tol)
{
	return a - b <= tol && b - a <= tol;
}

/* A 4 x 3 grid of (n, m). */
static size_t grid(double *x)
{
	size_t k = 0;

	for (int n = 1; n <= 4; n++)
		for (int m = 1; m <= 3; m++) {
			x[2 * k] = n * 64;
			x[2 * k + 1] = m;
			k++;
		}
	return k;
}

static void test_recovers_a_known_formula(void **state)
{
	double x[24], y[12];
	size_t n = grid(x);
	struct fit_terms t;
	struct fit_result f;
	char err[256] = "";

	(void)state;
	for (size_t i = 0; i < n; i++)  /* 5 MiB + 1 MiB*n + 0.25 MiB*n*m */
		y[i] = 5 * MIB + MIB * x[2 * i] + 0.25 * MIB * x[2 * i] * x[2 * i + 1];
	assert_int_equal(fit_parse_terms("n,m,n*m,n^2", NM, 2, &t, err, sizeof(err)), 0);
	assert_int_equal(fit_nnls(&t, x, y, n, &f, err, sizeof(err)), 0);
	assert_true(near(f.coef[0], 5 * MIB, 1));
	assert_true(near(f.coef[1], MIB, 1e-3));
	assert_true(f.coef[2] == 0 && !f.used[2]);      /* m: not in the formula */
	assert_true(near(f.coef[3], 0.25 * MIB, 1e-3));
	assert_true(f.coef[4] == 0 && !f.used[4]);      /* n^2 */
	assert_int_equal(f.n_used, 3);
	for (size_t i = 0; i < n; i++)
		assert_true(near(fit_eval(&t, f.coef, x + 2 * i), y[i], 1));
}

static void test_never_a_negative_coefficient(void **state)
{
	double x[24], y[12];
	size_t n = grid(x);
	struct fit_terms t;
	struct fit_result f;
	char err[256] = "";

	(void)state;
	/* Falls with m, rises with n: plain least squares gives m < 0. */
	for (size_t i = 0; i < n; i++)
		y[i] = 100 * MIB + MIB * x[2 * i] - 20 * MIB * x[2 * i + 1] + (double)(i % 3) * 1000;
	assert_int_equal(fit_parse_terms("n,m,n*m,n^2,m^2", NM, 2, &t, err, sizeof(err)), 0);
	assert_int_equal(fit_nnls(&t, x, y, n, &f, err, sizeof(err)), 0);
	for (size_t c = 0; c <= t.n; c++)
		assert_true(f.coef[c] >= 0);
	assert_true(f.coef[1] > 0);     /* n still carries the rise */
}

static void test_fewer_terms_on_a_tie(void **state)
{
	const double x[] = { 1, 2, 3, 4, 5 };
	double y[5];
	struct fit_terms t;
	struct fit_result f;
	char err[256] = "";

	(void)state;
	for (size_t i = 0; i < 5; i++)
		y[i] = 3 * MIB * x[i];          /* no base: n alone fits exactly */
	assert_int_equal(fit_parse_terms("n,n^2", NM, 1, &t, err, sizeof(err)), 0);
	assert_int_equal(fit_nnls(&t, x, y, 5, &f, err, sizeof(err)), 0);
	assert_int_equal(f.n_used, 1);
	assert_true(f.used[1] && !f.used[0] && !f.used[2]);
	assert_true(near(f.coef[1], 3 * MIB, 1e-3));
}

static void test_too_few_points_refused(void **state)
{
	const double x[] = { 1, 2, 2 };
	const double y[] = { 1, 2, 2 };
	struct fit_terms t;
	struct fit_result f;
	char err[256] = "";

	(void)state;
	assert_int_equal(fit_parse_terms("n,n^2", NM, 1, &t, err, sizeof(err)), 0);
	assert_int_equal(fit_nnls(&t, x, y, 3, &f, err, sizeof(err)), -EDOM);
	assert_non_null(strstr(err, "2 distinct points, too few for a base and 2 terms"));
	assert_int_equal(fit_check_grid(&t, x, 3, err, sizeof(err)), -EDOM);
}

static void test_degenerate_grid_refused(void **state)
{
	const double x[] = { 1, 5, 2, 5, 3, 5, 4, 5 };  /* m is always 5 */
	const double y[] = { 1, 2, 3, 4 };
	struct fit_terms t;
	struct fit_result f;
	char err[256] = "";

	(void)state;
	assert_int_equal(fit_parse_terms("n,n*m", NM, 2, &t, err, sizeof(err)), 0);
	assert_int_equal(fit_nnls(&t, x, y, 4, &f, err, sizeof(err)), -EDOM);
	assert_non_null(strstr(err, "n*m cannot be told from"));
	assert_int_equal(fit_parse_terms("m", NM, 2, &t, err, sizeof(err)), 0);
	assert_int_equal(fit_check_grid(&t, x, 4, err, sizeof(err)), -EDOM);
	assert_non_null(strstr(err, "m cannot be told from"));
}

static void test_claim_above_every_point(void **state)
{
	const double x[] = { 1, 2, 3, 4, 5, 6 };
	const double y[] = { 10, 30, 20, 45, 50, 80 };
	double claim[FIT_MAX_COLS];
	struct fit_terms t;
	struct fit_result f;
	char err[256] = "";

	(void)state;
	assert_int_equal(fit_parse_terms("n", NM, 1, &t, err, sizeof(err)), 0);
	assert_int_equal(fit_nnls(&t, x, y, 6, &f, err, sizeof(err)), 0);
	fit_claim(&t, &f, x, y, 6, 0.2, claim);
	for (size_t c = 0; c <= t.n; c++)
		assert_true(claim[c] >= f.coef[c] && claim[c] >= 0);
	for (size_t i = 0; i < 6; i++)
		assert_true(fit_eval(&t, claim, &x[i]) >= y[i] * 1.2 - 1e-9);
}

static void test_largest_step(void **state)
{
	const double x[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	const double y[] = { 10, 20, 30, 40, 90, 100, 110, 120 };   /* doubles past 4 */
	struct fit_step s;

	(void)state;
	fit_largest_step(x, 1, y, 8, &s);
	assert_true(s.found);
	assert_int_equal(s.from, 3);
	assert_int_equal(s.to, 4);
	assert_true(s.rise == 50);
}

static void test_bad_terms(void **state)
{
	struct fit_terms t;
	char err[256] = "";

	(void)state;
	assert_int_equal(fit_parse_terms("k", NM, 2, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'k' is not a term"));
	assert_int_equal(fit_parse_terms("n^5", NM, 2, &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(fit_parse_terms("n*", NM, 2, &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(fit_parse_terms("n,,m", NM, 2, &t, err, sizeof(err)), -EINVAL);
	assert_int_equal(fit_parse_terms("n*m,m*n", NM, 2, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "the same term"));
	assert_int_equal(fit_parse_terms("n,m,n*m,n^2,m^2,n*m^2,n^2*m", NM, 2, &t, err, sizeof(err)), -E2BIG);
	assert_int_equal(fit_parse_terms("n*n", NM, 2, &t, err, sizeof(err)), 0);
	assert_int_equal(t.t[0].power[0], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recovers_a_known_formula),
		cmocka_unit_test(test_never_a_negative_coefficient),
		cmocka_unit_test(test_fewer_terms_on_a_tie),
		cmocka_unit_test(test_too_few_points_refused),
		cmocka_unit_test(test_degenerate_grid_refused),
		cmocka_unit_test(test_claim_above_every_point),
		cmocka_unit_test(test_largest_step),
		cmocka_unit_test(test_bad_terms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
