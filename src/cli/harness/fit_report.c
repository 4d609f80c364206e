// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "budget.h"
#include "fit_report.h"
#include "json.h"
#include "sweep.h"
#include "units.h"

int fit_report_compute(const struct runs_opts *r, const struct bench *b, size_t n,
		       struct fit_report *fr)
{
	memset(fr, 0, sizeof(*fr));
	fr->b = b;
	fr->n = n;
	fr->x = calloc(n * r->n_params + 1, sizeof(double));
	fr->y = calloc(n + 1, sizeof(double));
	fr->fitted = calloc(n + 1, sizeof(double));
	if (!fr->x || !fr->y || !fr->fitted) {
		snprintf(fr->err, sizeof(fr->err), "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct bench_summary s;

		bench_summarize(&b[i], &s);
		if (budget_value(r, &s, &fr->y[i])) {
			snprintf(fr->err, sizeof(fr->err), "--fit: %s was not measured at '%s'",
				 budget_figure_name(r), b[i].label);
			return -1;
		}
		for (size_t k = 0; k < r->n_params; k++)
			fr->x[i * r->n_params + k] = r->params[k].num[b[i].vi[k]];
	}
	if (sweep_fit_terms(r, &fr->t, fr->err, sizeof(fr->err)) ||
	    fit_nnls(&fr->t, fr->x, fr->y, n, &fr->f, fr->err, sizeof(fr->err)))
		return -1;
	for (size_t i = 0; i < n; i++)
		fr->fitted[i] = fit_eval(&fr->t, fr->f.coef, fr->x + i * r->n_params);
	fit_largest_step(fr->x, r->n_params, fr->y, n, &fr->step);
	if (r->has_headroom) {
		fit_claim(&fr->t, &fr->f, fr->x, fr->y, n, r->headroom, fr->claim);
		fr->has_claim = true;
	}
	fr->ok = true;
	return 0;
}

void fit_report_free(struct fit_report *fr)
{
	free(fr->x);
	free(fr->y);
	free(fr->fitted);
	memset(fr, 0, sizeof(*fr));
}

/* A coefficient in bytes per unit, to four significant digits in binary
 * units (a slope of 1.0 MiB would hide 2 %). */
static const char *coef_text(double c, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	/* 1023.95 KiB prints as 1 MiB, not 1024 KiB */
	while (u + 1 < sizeof(unit) / sizeof(unit[0]) && (c >= 1023.95 || c <= -1023.95)) {
		c /= 1024;
		u++;
	}
	snprintf(buf, len, "%.4g %s", c, unit[u]);
	return buf;
}

static void human_formula(const struct fit_report *fr, const double *coef, bool all, FILE *out)
{
	char buf[32];
	bool any = false;

	for (size_t c = 0; c <= fr->t.n; c++) {
		if (!(all ? coef[c] > 0 : fr->f.used[c]))
			continue;
		fprintf(out, "%s%s", any ? " + " : "", coef_text(coef[c], buf, sizeof(buf)));
		if (c)
			fprintf(out, " × %s", fr->t.t[c - 1].text);
		any = true;
	}
	if (!any)
		fputs("0 B", out);
}

static void human_point(const struct runs_opts *r, const struct bench *b, FILE *out)
{
	for (size_t k = 0; k < r->n_params; k++)
		fprintf(out, "%s%s=%s", k ? "," : "", r->params[k].name, r->params[k].text[b->vi[k]]);
}

static void human_residuals(const struct runs_opts *r, const struct fit_report *fr, FILE *out)
{
	char m[32], f[32], d[32];

	for (size_t i = 0; i < fr->n; i++) {
		double res = fr->y[i] - fr->fitted[i];

		fputs("    ", out);
		human_point(r, &fr->b[i], out);
		fprintf(out, ": measured %s, fitted %s, residual %s%s (%+.2f %%)\n",
			format_bytes((uint64_t)(fr->y[i] + 0.5), m, sizeof(m)),
			format_bytes(fr->fitted[i] > 0 ? (uint64_t)(fr->fitted[i] + 0.5) : 0, f, sizeof(f)),
			res <= -0.5 ? "-" : "+", format_bytes((uint64_t)((res < 0 ? -res : res) + 0.5), d, sizeof(d)),
			fr->y[i] > 0 ? res / fr->y[i] * 100 : 0);
	}
}

static void human_step(const struct runs_opts *r, const struct fit_report *fr, FILE *out)
{
	const struct fit_step *s = &fr->step;
	char rise[32], pred[32];
	double fitted_rise;

	if (!s->found)
		return;
	fitted_rise = fr->fitted[s->to] - fr->fitted[s->from];
	fprintf(out, "  largest step: %s %s → %s: %s%s", r->params[s->var].name,
		r->params[s->var].text[fr->b[s->from].vi[s->var]],
		r->params[s->var].text[fr->b[s->to].vi[s->var]], s->rise < 0 ? "-" : "+",
		format_bytes((uint64_t)(s->rise < 0 ? -s->rise : s->rise), rise, sizeof(rise)));
	if (fr->y[s->from] > 0)
		fprintf(out, " (× %.2f)", fr->y[s->to] / fr->y[s->from]);
	fprintf(out, "; the fit predicts %s%s\n", fitted_rise < 0 ? "-" : "+",
		format_bytes((uint64_t)(fitted_rise < 0 ? -fitted_rise : fitted_rise), pred, sizeof(pred)));
}

void fit_report_human(const struct runs_opts *r, const struct fit_report *fr, size_t c, FILE *out)
{
	const char *what = budget_figure_name(r);
	const char *stat = r->budget_stat == BUDGET_STAT_MEDIAN ? "median" : "max";
	char buf[32];

	if (!fr->ok) {
		fprintf(out, "peakbpf: command %zu: %s\n", c + 1, fr->err);
		return;
	}
	fprintf(out, "Fit of the %s (%s over runs) over %zu points, command %zu:\n  %s ≈ ", what, stat,
		fr->n, c + 1, what);
	human_formula(fr, fr->f.coef, false, out);
	fprintf(out, "   (rms residual %s; terms tried: %s)\n", coef_text(fr->f.rms, buf, sizeof(buf)),
		r->fit);
	human_residuals(r, fr, out);
	human_step(r, fr, out);
	if (fr->has_claim) {
		fprintf(out, "  claim (+%.0f %% headroom over every point): %s ≤ ", r->headroom * 100, what);
		human_formula(fr, fr->claim, true, out);
		fputc('\n', out);
	}
}

static void json_coefs(const struct fit_report *fr, const double *coef, bool all, struct json_writer *w)
{
	json_begin_object(w);
	for (size_t c = 0; c <= fr->t.n; c++) {
		json_key(w, c ? fr->t.t[c - 1].text : "base");
		if (all || fr->f.used[c])
			json_double(w, coef[c], 10);
		else
			json_double(w, 0, 10);
	}
	json_end_object(w);
}

static void json_params(const struct runs_opts *r, const struct bench *b, struct json_writer *w)
{
	json_begin_object(w);
	for (size_t k = 0; k < r->n_params; k++)
		json_kv_string(w, r->params[k].name, r->params[k].text[b->vi[k]]);
	json_end_object(w);
}

static void json_points(const struct runs_opts *r, const struct fit_report *fr, struct json_writer *w)
{
	json_key(w, "points");
	json_begin_array(w);
	for (size_t i = 0; i < fr->n; i++) {
		json_begin_object(w);
		json_key(w, "parameters");
		json_params(r, &fr->b[i], w);
		json_kv_double(w, "measured_bytes", fr->y[i], 15);
		json_kv_double(w, "fitted_bytes", fr->fitted[i], 15);
		json_kv_double(w, "residual_bytes", fr->y[i] - fr->fitted[i], 15);
		json_end_object(w);
	}
	json_end_array(w);
}

static void json_step(const struct runs_opts *r, const struct fit_report *fr, struct json_writer *w)
{
	json_key(w, "largest_step");
	if (!fr->step.found) {
		json_null(w);
		return;
	}
	json_begin_object(w);
	json_kv_string(w, "parameter", r->params[fr->step.var].name);
	json_key(w, "from");
	json_params(r, &fr->b[fr->step.from], w);
	json_key(w, "to");
	json_params(r, &fr->b[fr->step.to], w);
	json_kv_double(w, "rise_bytes", fr->step.rise, 15);
	json_kv_double(w, "fitted_rise_bytes", fr->fitted[fr->step.to] - fr->fitted[fr->step.from], 15);
	json_end_object(w);
}

void fit_report_json(const struct runs_opts *r, const struct fit_report *fr, struct json_writer *w)
{
	json_begin_object(w);
	json_kv_string(w, "figure", r->max_of == BUDGET_OF_GROWTH ? "growth_bytes" : "peak_bytes");
	json_kv_string(w, "stat", r->budget_stat == BUDGET_STAT_MEDIAN ? "median" : "max");
	json_kv_string(w, "terms", r->fit);
	json_kv_string(w, "error", fr->ok ? NULL : fr->err);
	if (fr->ok) {
		json_key(w, "coefficients");
		json_coefs(fr, fr->f.coef, false, w);
		json_kv_double(w, "rms_residual_bytes", fr->f.rms, 10);
		json_points(r, fr, w);
		json_step(r, fr, w);
		json_key(w, "claim");
		if (fr->has_claim) {
			json_begin_object(w);
			json_kv_double(w, "headroom", r->headroom, 6);
			json_key(w, "coefficients");
			json_coefs(fr, fr->claim, true, w);
			json_end_object(w);
		} else {
			json_null(w);
		}
	}
	json_end_object(w);
}
