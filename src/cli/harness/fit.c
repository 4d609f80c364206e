// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fit.h"
#include "stats.h"

#define RANK_TOL 1e-9           /* a column this small against its norm, after projection, adds nothing */

static int find_var(const char *name, size_t len, const char *const *vars, size_t n_vars)
{
	for (size_t v = 0; v < n_vars; v++)
		if (strlen(vars[v]) == len && !strncmp(vars[v], name, len))
			return (int)v;
	return -1;
}

/* One factor of a term: NAME or NAME^K. */
static int parse_factor(const char *s, size_t len, const char *const *vars, size_t n_vars,
			struct fit_term *t)
{
	const char *caret = memchr(s, '^', len);
	size_t name_len = caret ? (size_t)(caret - s) : len;
	unsigned long k = 1;
	int v = find_var(s, name_len, vars, n_vars);

	if (v < 0)
		return -EINVAL;
	if (caret) {
		char buf[8], *end;
		size_t klen = len - name_len - 1;

		if (!klen || klen >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, caret + 1, klen);
		buf[klen] = '\0';
		errno = 0;
		k = strtoul(buf, &end, 10);
		if (errno || *end || buf[0] == '-' || buf[0] == '+' || k < 1 || k > FIT_MAX_POWER)
			return -EINVAL;
	}
	t->power[v] += (unsigned)k;
	return t->power[v] > FIT_MAX_POWER ? -EINVAL : 0;
}

static int parse_term(const char *s, size_t len, const char *const *vars, size_t n_vars,
		      struct fit_term *t)
{
	memset(t, 0, sizeof(*t));
	if (!len || len >= sizeof(t->text))
		return -EINVAL;
	memcpy(t->text, s, len);
	while (len) {
		const char *star = memchr(s, '*', len);
		size_t flen = star ? (size_t)(star - s) : len;

		if (parse_factor(s, flen, vars, n_vars, t))
			return -EINVAL;
		if (!star)
			break;
		len -= flen + 1;
		s = star + 1;
		if (!len)
			return -EINVAL;
	}
	return 0;
}

static bool same_term(const struct fit_term *a, const struct fit_term *b)
{
	return !memcmp(a->power, b->power, sizeof(a->power));
}

int fit_parse_terms(const char *s, const char *const *vars, size_t n_vars,
		    struct fit_terms *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->n_vars = n_vars;
	for (;;) {
		size_t len = strcspn(s, ",");
		struct fit_term *t = &out->t[out->n];

		if (out->n >= FIT_MAX_TERMS) {
			snprintf(err, errlen, "--fit: at most %d terms", FIT_MAX_TERMS);
			return -E2BIG;
		}
		if (parse_term(s, len, vars, n_vars, t)) {
			snprintf(err, errlen, "--fit: '%.*s' is not a term: a parameter, or a product of "
				 "parameters (n*m), each to a power up to %d (n^2)", (int)len, s, FIT_MAX_POWER);
			return -EINVAL;
		}
		for (size_t i = 0; i < out->n; i++) {
			if (same_term(&out->t[i], t)) {
				snprintf(err, errlen, "--fit: '%s' and '%s' are the same term", out->t[i].text, t->text);
				return -EINVAL;
			}
		}
		out->n++;
		if (!s[len])
			return 0;
		s += len + 1;
	}
}

double fit_term_value(const struct fit_terms *t, size_t i, const double *x)
{
	double v = 1;

	for (size_t k = 0; k < t->n_vars; k++)
		for (unsigned p = 0; p < t->t[i].power[k]; p++)
			v *= x[k];
	return v;
}

double fit_eval(const struct fit_terms *t, const double *coef, const double *x)
{
	double v = coef[0];

	for (size_t i = 0; i < t->n; i++)
		v += coef[1 + i] * fit_term_value(t, i, x);
	return v;
}

/* Column c (0: the base) at every point. */
static void column(const struct fit_terms *t, size_t c, const double *x, size_t n, double *out)
{
	for (size_t p = 0; p < n; p++)
		out[p] = c ? fit_term_value(t, c - 1, x + p * t->n_vars) : 1.0;
}

static double dot(const double *a, const double *b, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

/*
 * Least squares on the columns in mask by modified Gram-Schmidt: coef (all
 * FIT_MAX_COLS, 0 outside mask) and the residual sum of squares. Returns
 * the first column that depends on the earlier ones (1 + its index), or 0.
 */
static size_t lsq(const struct fit_terms *t, unsigned mask, const double *x, const double *y,
		  size_t n, double *coef, double *sse, double *work)
{
	double r[FIT_MAX_COLS][FIT_MAX_COLS] = { { 0 } }, b[FIT_MAX_COLS] = { 0 };
	size_t cols[FIT_MAX_COLS], k = 0;
	double *q = work, *res = work + FIT_MAX_COLS * n;

	for (size_t c = 0; c <= t->n; c++)
		if (mask & (1U << c))
			cols[k++] = c;
	for (size_t j = 0; j < k; j++) {
		double *v = q + j * n, norm0, norm;

		column(t, cols[j], x, n, v);
		norm0 = stats_sqrt(dot(v, v, n));
		for (size_t i = 0; i < j; i++) {
			r[i][j] = dot(q + i * n, v, n);
			for (size_t p = 0; p < n; p++)
				v[p] -= r[i][j] * q[i * n + p];
		}
		norm = stats_sqrt(dot(v, v, n));
		if (!(norm0 > 0) || norm <= RANK_TOL * norm0)
			return cols[j] + 1;
		r[j][j] = norm;
		for (size_t p = 0; p < n; p++)
			v[p] /= norm;
	}
	memcpy(res, y, n * sizeof(*res));
	for (size_t i = 0; i < k; i++) {
		b[i] = dot(q + i * n, res, n);
		for (size_t p = 0; p < n; p++)
			res[p] -= b[i] * q[i * n + p];
	}
	memset(coef, 0, FIT_MAX_COLS * sizeof(*coef));
	for (size_t i = k; i-- > 0;) {
		double s = b[i];

		for (size_t j = i + 1; j < k; j++)
			s -= r[i][j] * coef[cols[j]];
		coef[cols[i]] = s / r[i][i];
	}
	*sse = dot(res, res, n);
	return 0;
}

static size_t distinct_points(const double *x, size_t n_vars, size_t n)
{
	size_t d = 0;

	for (size_t p = 0; p < n; p++) {
		size_t q;

		for (q = 0; q < p; q++)
			if (!memcmp(x + q * n_vars, x + p * n_vars, n_vars * sizeof(*x)))
				break;
		d += q == p;
	}
	return d;
}

/* A grid that cannot carry the terms: too few points, or a term that
 * depends on the others there. */
static int check_grid(const struct fit_terms *t, const double *x, const double *y, size_t n,
		      double *work, char *err, size_t errlen)
{
	size_t d = distinct_points(x, t->n_vars, n), bad;
	double coef[FIT_MAX_COLS], sse;

	if (t->n + 1 > FIT_MAX_COLS || !t->n_vars || t->n_vars > FIT_MAX_VARS) {
		snprintf(err, errlen, "--fit: up to %d terms over 1 to %d parameters", FIT_MAX_TERMS,
			 FIT_MAX_VARS);
		return -EINVAL;
	}

	if (d < t->n + 1) {
		snprintf(err, errlen, "--fit: the grid has %zu distinct point%s, too few for a base and %zu "
			 "term%s: give at least %zu values", d, d == 1 ? "" : "s", t->n, t->n == 1 ? "" : "s",
			 t->n + 1);
		return -EDOM;
	}
	bad = lsq(t, (1U << (t->n + 1)) - 1, x, y, n, coef, &sse, work);
	if (bad) {
		snprintf(err, errlen, "--fit: on this grid %s cannot be told from the %s: vary each "
			 "parameter over more values, or drop the term", bad == 1 ? "the base" :
			 t->t[bad - 2].text, bad == 1 ? "terms" : "base and the other terms");
		return -EDOM;
	}
	return 0;
}

int fit_check_grid(const struct fit_terms *t, const double *x, size_t n, char *err, size_t errlen)
{
	double *y = calloc(n ? n : 1, sizeof(*y));
	double *work = calloc((FIT_MAX_COLS + 1) * (n ? n : 1), sizeof(*work));
	int ret = -ENOMEM;

	if (y && work)
		ret = check_grid(t, x, y, n, work, err, errlen);
	free(y);
	free(work);
	return ret;
}

static unsigned popcount(unsigned m)
{
	return (unsigned)__builtin_popcount(m);
}

int fit_nnls(const struct fit_terms *t, const double *x, const double *y, size_t n,
	     struct fit_result *out, char *err, size_t errlen)
{
	unsigned n_masks = 1U << (t->n + 1), best = 0;
	double *sse = calloc(n_masks, sizeof(*sse)), (*coef)[FIT_MAX_COLS];
	double *work = calloc((FIT_MAX_COLS + 1) * (n ? n : 1), sizeof(*work)), min = INFINITY, tol;
	int ret = -ENOMEM;

	coef = calloc(n_masks, sizeof(*coef));
	memset(out, 0, sizeof(*out));
	if (!sse || !work || !coef)
		goto out;
	ret = check_grid(t, x, y, n, work, err, errlen);
	if (ret)
		goto out;
	for (unsigned m = 1; m < n_masks; m++) {
		sse[m] = INFINITY;
		if (lsq(t, m, x, y, n, coef[m], &sse[m], work))
			continue;       /* cannot happen on a full-rank grid; skip anyway */
		for (size_t c = 0; c <= t->n; c++)
			if (coef[m][c] < 0)
				sse[m] = INFINITY;
		if (sse[m] < min)
			min = sse[m];
	}
	tol = FIT_TIE_REL * dot(y, y, n);
	for (unsigned m = 1; m < n_masks; m++)
		if (sse[m] <= min + tol && (!best || popcount(m) < popcount(best) ||
					    (popcount(m) == popcount(best) && sse[m] < sse[best])))
			best = m;
	if (!best) {
		snprintf(err, errlen, "--fit: no non-negative fit: the figure falls as the parameters grow");
		ret = -EDOM;
		goto out;
	}
	memcpy(out->coef, coef[best], sizeof(out->coef));
	for (size_t c = 0; c <= t->n; c++)
		out->used[c] = best & (1U << c);
	out->n_used = popcount(best);
	out->sse = sse[best];
	out->rms = stats_sqrt(sse[best] / (double)n);
	ret = 0;
out:
	free(sse);
	free(work);
	free(coef);
	return ret;
}

void fit_claim(const struct fit_terms *t, const struct fit_result *f, const double *x,
	       const double *y, size_t n, double headroom, double *claim)
{
	double short_by = 0;

	for (size_t c = 0; c < FIT_MAX_COLS; c++)
		claim[c] = c <= t->n ? f->coef[c] * (1 + headroom) : 0;
	for (size_t p = 0; p < n; p++) {
		double need = y[p] * (1 + headroom) - fit_eval(t, claim, x + p * t->n_vars);

		if (need > short_by)
			short_by = need;
	}
	claim[0] += short_by;
}

/* Whether points a and b differ in variable v alone, b above a. */
static bool along(const double *x, size_t n_vars, size_t a, size_t b, size_t v)
{
	for (size_t k = 0; k < n_vars; k++)
		if (k != v && x[a * n_vars + k] != x[b * n_vars + k])
			return false;
	return x[b * n_vars + v] > x[a * n_vars + v];
}

void fit_largest_step(const double *x, size_t n_vars, const double *y, size_t n,
		      struct fit_step *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t v = 0; v < n_vars; v++) {
		for (size_t a = 0; a < n; a++) {
			size_t next = n;

			for (size_t b = 0; b < n; b++)
				if (along(x, n_vars, a, b, v) &&
				    (next == n || x[b * n_vars + v] < x[next * n_vars + v]))
					next = b;
			if (next == n || (out->found && y[next] - y[a] <= out->rise))
				continue;
			*out = (struct fit_step){ .found = true, .from = a, .to = next, .var = v,
						  .rise = y[next] - y[a] };
		}
	}
}
