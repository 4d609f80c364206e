// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "export.h"
#include "json.h"

static void json_stat(struct json_writer *w, const struct stat5 *s, int digits)
{
	if (!s->n) {
		json_kv_string(w, "mean", NULL);        /* null: not measured */
		json_kv_string(w, "stddev", NULL);
		json_kv_string(w, "median", NULL);
		json_kv_string(w, "min", NULL);
		json_kv_string(w, "max", NULL);
		return;
	}
	json_kv_double(w, "mean", s->mean, digits);
	json_key(w, "stddev");
	if (s->has_stddev)
		json_double(w, s->stddev, digits);
	else
		json_null(w);
	json_kv_double(w, "median", s->median, digits);
	json_kv_double(w, "min", s->min, digits);
	json_kv_double(w, "max", s->max, digits);
}

/* peak_bytes or growth_bytes: the statistics, every run's value, and what
 * the figures are worth. */
static void json_memory(struct json_writer *w, const char *key, const struct bench *b,
			const struct stat5 *s, const struct bench_summary *sum, bool growth)
{
	json_key(w, key);
	json_begin_object(w);
	json_stat(w, s, 15);
	json_key(w, "values");
	json_begin_array(w);
	for (size_t i = 0; i < b->n_runs; i++) {
		const struct run_result *x = &b->runs[i];

		if (!x->measured || (growth && !x->growth_known))
			json_null(w);
		else if (growth)
			json_int(w, x->growth_bytes);
		else
			json_uint(w, x->peak_bytes);
	}
	json_end_array(w);
	json_kv_string(w, "source", sum->source);
	json_kv_bool(w, "exact", sum->exact);
	json_key(w, "error_bound_bytes");
	if (sum->bound_known)
		json_uint(w, sum->error_bound_bytes);
	else
		json_null(w);
	json_kv_string(w, "inexact_reason", sum->exact ? NULL : sum->inexact_reason);
	json_end_object(w);
}

static void json_parameters(struct json_writer *w, const struct runs_opts *r, const struct bench *b)
{
	json_key(w, "parameters");
	json_begin_object(w);
	for (size_t k = 0; k < r->n_params; k++)
		json_kv_string(w, r->params[k].name, r->params[k].text[b->vi[k]]);
	json_end_object(w);
}

/* The mean CPU time (user or system) over the runs that have it; false
 * when none has. */
static bool cpu_mean(const struct bench *b, bool system, double *mean)
{
	size_t n = 0;

	*mean = 0;
	for (size_t i = 0; i < b->n_runs; i++) {
		if (!b->runs[i].has_cpu_times)
			continue;
		*mean += system ? b->runs[i].system_s : b->runs[i].user_s;
		n++;
	}
	if (n)
		*mean /= (double)n;
	return n > 0;
}

/* hyperfine's user and system (means, seconds), each run's, and its
 * memory_usage_byte: here each run's exact peak (null: not measured). */
static void json_hyperfine(struct json_writer *w, const struct bench *b)
{
	double mean;

	for (int sys = 0; sys < 2; sys++) {
		json_key(w, sys ? "system" : "user");
		if (cpu_mean(b, sys, &mean))
			json_double(w, mean, 6);
		else
			json_null(w);
	}
	for (int sys = 0; sys < 2; sys++) {
		json_key(w, sys ? "system_times" : "user_times");
		json_begin_array(w);
		for (size_t i = 0; i < b->n_runs; i++) {
			if (b->runs[i].has_cpu_times)
				json_double(w, sys ? b->runs[i].system_s : b->runs[i].user_s, 6);
			else
				json_null(w);
		}
		json_end_array(w);
	}
	json_key(w, "memory_usage_byte");
	json_begin_array(w);
	for (size_t i = 0; i < b->n_runs; i++) {
		if (b->runs[i].measured)
			json_uint(w, b->runs[i].peak_bytes);
		else
			json_null(w);
	}
	json_end_array(w);
}

static double ratio(const struct stat5 *a, const struct stat5 *b)
{
	return a->n && b->n && b->mean > 0 ? a->mean / b->mean : 0;
}

static void json_ratio(struct json_writer *w, const char *key, const struct stat5 *a, const struct stat5 *b)
{
	double q = ratio(a, b);

	json_key(w, key);
	if (q > 0)
		json_double(w, q, 6);
	else
		json_null(w);
}

static void json_bench(struct json_writer *w, const struct runs_opts *r, const struct bench *b,
		       const struct bench_summary *first)
{
	struct bench_summary s;

	bench_summarize(b, &s);
	json_begin_object(w);
	json_kv_string(w, "command", b->label);
	json_stat(w, &s.wall, 9);
	json_key(w, "times");
	json_begin_array(w);
	for (size_t i = 0; i < b->n_runs; i++)
		json_double(w, b->runs[i].wall_s, 9);
	json_end_array(w);
	json_key(w, "exit_codes");
	json_begin_array(w);
	for (size_t i = 0; i < b->n_runs; i++)
		json_int(w, b->runs[i].exit_status);
	json_end_array(w);
	json_parameters(w, r, b);
	json_hyperfine(w, b);
	json_kv_uint(w, "runs", b->n_runs);
	json_kv_uint(w, "warmup", r->warmup);
	json_memory(w, "peak_bytes", b, &s.peak, &s, false);
	json_memory(w, "growth_bytes", b, &s.growth, &s, true);
	json_key(w, "ratio_to_first");
	json_begin_object(w);
	json_ratio(w, "peak", &s.peak, &first->peak);
	json_ratio(w, "growth", &s.growth, &first->growth);
	json_ratio(w, "time", &s.wall, &first->wall);
	json_end_object(w);
	json_end_object(w);
}

void export_json(const struct runs_opts *r, const struct bench *b, size_t n,
		 const struct fit_report *fits, size_t n_fits, FILE *out)
{
	struct json_writer w;
	struct bench_summary first;

	bench_summarize(&b[0], &first);
	json_init(&w, out);
	json_begin_object(&w);
	json_kv_string(&w, "record", "results");
	json_kv_string(&w, "measure", "summed RSS of the tree; mean/stddev/median/min/max/times: "
		       "wall time in seconds");
	json_key(&w, "results");
	json_begin_array(&w);
	for (size_t k = 0; k < n; k++)
		json_bench(&w, r, &b[k], &first);
	json_end_array(&w);
	if (n_fits) {
		json_key(&w, "fits");
		json_begin_array(&w);
		for (size_t c = 0; c < n_fits; c++)
			fit_report_json(r, &fits[c], &w);
		json_end_array(&w);
	}
	json_end_object(&w);
	json_finish(&w);
}

/* A CSV field, quoted when it needs to be (RFC 4180). */
static void csv_string(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* ",mean,stddev,median,min,max"; empty fields when not measured. With b,
 * hyperfine's user and system go between median and min. */
static void csv_stat(FILE *out, const struct stat5 *s, const char *fmt, const struct bench *b)
{
	const double v[] = { s->mean, s->stddev, s->median, s->min, s->max };
	double cpu;

	for (size_t i = 0; i < 5; i++) {
		for (int sys = 0; b && i == 3 && sys < 2; sys++) {
			fputc(',', out);
			if (cpu_mean(b, sys, &cpu))
				fprintf(out, "%.6g", cpu);
		}
		fputc(',', out);
		if (s->n && (i != 1 || s->has_stddev))
			fprintf(out, fmt, v[i]);
	}
}

void export_csv(const struct runs_opts *r, const struct bench *b, size_t n, FILE *out)
{
	static const char *const stat[] = { "mean", "stddev", "median", "min", "max" };

	fputs("command,mean,stddev,median,user,system,min,max", out);
	for (size_t i = 0; i < 5; i++)
		fprintf(out, ",peak_%s_bytes", stat[i]);
	for (size_t i = 0; i < 5; i++)
		fprintf(out, ",growth_%s_bytes", stat[i]);
	fputs(",source,exact,error_bound_bytes,runs,exit_codes", out);
	for (size_t k = 0; k < r->n_params; k++)
		fprintf(out, ",parameter_%s", r->params[k].name);
	fputc('\n', out);
	for (size_t k = 0; k < n; k++) {
		struct bench_summary s;

		bench_summarize(&b[k], &s);
		csv_string(out, b[k].label);
		csv_stat(out, &s.wall, "%.9g", &b[k]);
		csv_stat(out, &s.peak, "%.0f", NULL);
		csv_stat(out, &s.growth, "%.0f", NULL);
		fprintf(out, ",%s,%s,", s.source, s.exact ? "true" : "false");
		if (s.bound_known)
			fprintf(out, "%llu", (unsigned long long)s.error_bound_bytes);
		fprintf(out, ",%zu,", b[k].n_runs);
		for (size_t i = 0; i < b[k].n_runs; i++)
			fprintf(out, "%s%d", i ? " " : "", b[k].runs[i].exit_status);
		for (size_t p = 0; p < r->n_params; p++) {
			fputc(',', out);
			csv_string(out, r->params[p].text[b[k].vi[p]]);
		}
		fputc('\n', out);
	}
}
