// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fit.h"
#include "sweep.h"

static int parse_number(const char *s, double *v)
{
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	*v = strtod(s, &end);
	if (errno || *end || !isfinite(*v))
		return errno == ERANGE ? -ERANGE : -EINVAL;
	return 0;
}

static int add_value(struct sweep_param *p, const char *text, size_t len)
{
	char buf[RUNS_VALUE_LEN];
	double v;

	if (p->n_values >= RUNS_MAX_VALUES || len == 0 || len >= RUNS_VALUE_LEN)
		return -EINVAL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	for (size_t i = 0; i < p->n_values; i++)
		if (!strcmp(p->text[i], buf))
			return -EEXIST;
	strcpy(p->text[p->n_values], buf);
	if (parse_number(buf, &v))
		p->numeric = false;
	else
		p->num[p->n_values] = v;
	p->n_values++;
	return 0;
}

static int check_name(const char *opt, const char *name, char *err, size_t errlen)
{
	size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

	if (*name && !name[n] && n < 32)
		return 0;
	snprintf(err, errlen, "%s: '%s' is not a parameter name (letters, digits, _; up to 31)", opt, name);
	return -EINVAL;
}

int sweep_parse_list(const char *name, const char *list, struct sweep_param *p,
		     char *err, size_t errlen)
{
	const char *s = list;

	memset(p, 0, sizeof(*p));
	if (check_name("-L", name, err, errlen))
		return -EINVAL;
	p->name = name;
	p->numeric = true;
	for (;;) {
		size_t len = strcspn(s, ",");
		int e = add_value(p, s, len);

		if (e) {
			snprintf(err, errlen, "-L %s: '%s': %s", name, list,
				 e == -EEXIST ? "a value is given twice" :
				 "give 1 to 128 non-empty values, each under 48 characters, separated by commas");
			return e;
		}
		if (!s[len])
			return 0;
		s += len + 1;
	}
}

int sweep_parse_range(const char *name, const char *min, const char *max, const char *step,
		      struct sweep_param *p, char *err, size_t errlen)
{
	double lo, hi, st = 1, count;

	memset(p, 0, sizeof(*p));
	if (check_name("-P", name, err, errlen))
		return -EINVAL;
	p->name = name;
	p->numeric = true;
	if (parse_number(min, &lo) || parse_number(max, &hi) || (step && parse_number(step, &st)) ||
	    lo > hi || !(st > 0)) {
		snprintf(err, errlen, "-P %s: give MIN MAX [STEP], numbers with MIN <= MAX and STEP > 0 "
			 "(e.g. -P n 1 8 or -P size 64 512 64)", name);
		return -EINVAL;
	}
	count = (hi - lo) / st;
	if (count < RUNS_MAX_VALUES)
		count = (double)(uint64_t)(count * (1 + 1e-12)) + 1;
	if (count > RUNS_MAX_VALUES) {
		snprintf(err, errlen, "-P %s: %.0f values, at most %d: raise STEP", name, count,
			 RUNS_MAX_VALUES);
		return -E2BIG;
	}
	for (size_t i = 0; i < (size_t)count; i++) {
		double v = lo + st * (double)i;
		char buf[RUNS_VALUE_LEN];
		int len = snprintf(buf, sizeof(buf), "%.15g", v);

		add_value(p, buf, (size_t)len);
	}
	return 0;
}

size_t sweep_points(const struct runs_opts *r)
{
	size_t n = 1;

	for (size_t i = 0; i < r->n_params; i++)
		n *= r->params[i].n_values;
	return n;
}

void sweep_point(const struct runs_opts *r, size_t i, size_t *vi)
{
	for (size_t k = r->n_params; k-- > 0;) {
		vi[k] = i % r->params[k].n_values;
		i /= r->params[k].n_values;
	}
}

/* The parameter whose {NAME} starts at s, or -1. */
static int param_at(const char *s, const struct runs_opts *r)
{
	for (size_t k = 0; k < r->n_params; k++) {
		size_t len = strlen(r->params[k].name);

		if (s[0] == '{' && !strncmp(s + 1, r->params[k].name, len) && s[len + 1] == '}')
			return (int)k;
	}
	return -1;
}

char *sweep_substitute(const char *tmpl, const struct runs_opts *r, const size_t *vi)
{
	size_t cap = strlen(tmpl) + 1, n = 0;
	char *out;

	for (const char *s = tmpl; *s; s++)
		if (param_at(s, r) >= 0)
			cap += RUNS_VALUE_LEN;
	out = malloc(cap);
	if (!out)
		return NULL;
	for (const char *s = tmpl; *s;) {
		int k = param_at(s, r);

		if (k < 0) {
			out[n++] = *s++;
			continue;
		}
		n += (size_t)sprintf(out + n, "%s", r->params[k].text[vi[k]]);
		s += strlen(r->params[k].name) + 2;
	}
	out[n] = '\0';
	return out;
}

int sweep_uses(const char *s, const char *name)
{
	size_t len = strlen(name);

	for (; (s = strchr(s, '{')); s++)
		if (!strncmp(s + 1, name, len) && s[len + 1] == '}')
			return 1;
	return 0;
}

int sweep_fit_terms(const struct runs_opts *r, struct fit_terms *t, char *err, size_t errlen)
{
	const char *vars[RUNS_MAX_PARAMS];

	for (size_t k = 0; k < r->n_params; k++) {
		vars[k] = r->params[k].name;
		if (!r->params[k].numeric) {
			snprintf(err, errlen, "--fit: parameter %s has values that are not numbers: "
				 "give numbers to fit over", vars[k]);
			return -EINVAL;
		}
	}
	return fit_parse_terms(r->fit, vars, r->n_params, t, err, errlen);
}

double *sweep_grid(const struct runs_opts *r)
{
	size_t n = sweep_points(r), vi[RUNS_MAX_PARAMS];
	double *x = calloc(n * (r->n_params ? r->n_params : 1), sizeof(*x));

	for (size_t i = 0; x && i < n; i++) {
		sweep_point(r, i, vi);
		for (size_t k = 0; k < r->n_params; k++)
			x[i * r->n_params + k] = r->params[k].num[vi[k]];
	}
	return x;
}
