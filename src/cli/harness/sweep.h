/* SPDX-License-Identifier: MIT */
/* Parameter sweeps: -L NAME v1,v2 and -P NAME MIN MAX [STEP] give values;
 * several parameters make a grid; {NAME} in the command is substituted. */
#ifndef PEAKBPF_SWEEP_H
#define PEAKBPF_SWEEP_H

#include <stddef.h>
#include "runs_opts.h"

struct fit_terms;

/* -L: "v1,v2,...": non-empty values, each shorter than RUNS_VALUE_LEN. */
int sweep_parse_list(const char *name, const char *list, struct sweep_param *p,
		     char *err, size_t errlen);
/* -P: MIN MAX [STEP] (STEP NULL: 1); MIN <= MAX, STEP > 0, at most
 * RUNS_MAX_VALUES values. */
int sweep_parse_range(const char *name, const char *min, const char *max, const char *step,
		      struct sweep_param *p, char *err, size_t errlen);
/* Points of the grid: the product of every parameter's count (1 without). */
size_t sweep_points(const struct runs_opts *r);
/* Point i's value index of each parameter; the last parameter varies fastest. */
void sweep_point(const struct runs_opts *r, size_t i, size_t *vi);
/* tmpl with each {NAME} replaced by its value at vi; malloc'd, NULL on ENOMEM. */
char *sweep_substitute(const char *tmpl, const struct runs_opts *r, const size_t *vi);
/* Whether {NAME} occurs in s. */
int sweep_uses(const char *s, const char *name);
/* The grid's numeric values: x[i * n_params + k] is parameter k at point i
 * (sweep_points(r) rows). malloc'd; NULL on ENOMEM. */
double *sweep_grid(const struct runs_opts *r);
/* --fit's terms over the parameters, which must all be numbers. */
int sweep_fit_terms(const struct runs_opts *r, struct fit_terms *t, char *err, size_t errlen);

#endif
