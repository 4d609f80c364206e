/* SPDX-License-Identifier: MIT */
/*
 * Pure math for --fit: memory as base + c1*term1 + ... with every
 * coefficient >= 0, by least squares over every subset of the terms (the
 * best feasible subset is the non-negative least-squares solution); on a
 * tie the fewer terms win. A claim with headroom above every point, and the
 * largest rise between neighbouring points of a grid.
 */
#ifndef PEAKBPF_FIT_H
#define PEAKBPF_FIT_H

#include <stdbool.h>
#include <stddef.h>

#define FIT_MAX_TERMS 6
#define FIT_MAX_VARS 4
#define FIT_MAX_COLS (FIT_MAX_TERMS + 1)        /* the base, then each term */
#define FIT_MAX_POWER 4
/* Two fits tie when their squared residuals differ by at most this
 * fraction of the sum of the squared values (RMS within ~0.1 %). */
#define FIT_TIE_REL 1e-6

struct fit_term {
	char text[40];                  /* as given: "n", "n*m", "n^2" */
	unsigned power[FIT_MAX_VARS];   /* the exponent of each variable */
};

struct fit_terms {
	size_t n_vars;
	size_t n;
	struct fit_term t[FIT_MAX_TERMS];
};

struct fit_result {
	double coef[FIT_MAX_COLS];      /* [0] the base, [1 + i] term i; 0 when unused */
	bool used[FIT_MAX_COLS];
	size_t n_used;
	double sse;                     /* sum of squared residuals */
	double rms;                     /* root mean square residual */
};

struct fit_step {
	bool found;
	size_t from, to;                /* point indices */
	size_t var;                     /* the variable that differs */
	double rise;                    /* y[to] - y[from] */
};

/* "n,m,n*m,n^2": terms over vars (names). -EINVAL with err on a bad term. */
int fit_parse_terms(const char *s, const char *const *vars, size_t n_vars,
		    struct fit_terms *out, char *err, size_t errlen);
/* Term i's value at one point (x: one value per variable). */
double fit_term_value(const struct fit_terms *t, size_t i, const double *x);
/* The formula coef at x. */
double fit_eval(const struct fit_terms *t, const double *coef, const double *x);
/*
 * Fit y (n points; x is n rows of n_vars values). Refuses, with a one-line
 * err, a grid with fewer distinct points than base + terms, or one on which
 * a term cannot be told from the others.
 */
int fit_nnls(const struct fit_terms *t, const double *x, const double *y, size_t n,
	     struct fit_result *out, char *err, size_t errlen);
/* Whether a grid can carry the terms (the values y do not matter): 0, or
 * -EDOM with err. fit_nnls checks it first. */
int fit_check_grid(const struct fit_terms *t, const double *x, size_t n, char *err, size_t errlen);
/* A claim: every coefficient scaled by 1 + headroom, the base raised until
 * it exceeds every point by headroom. Never below the fit's coefficients. */
void fit_claim(const struct fit_terms *t, const struct fit_result *f, const double *x,
	       const double *y, size_t n, double headroom, double *claim);
/* The largest rise between neighbouring points: equal in every variable
 * but one, with no point between them in that one. */
void fit_largest_step(const double *x, size_t n_vars, const double *y, size_t n,
		      struct fit_step *out);

#endif
