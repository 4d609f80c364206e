// SPDX-License-Identifier: MIT
/*
 * Exports that CI dashboards read (export.h). Every figure is the mean
 * over the runs with its min and max (the exact figure itself when there
 * is one run); a figure not measured is left out, never written as 0.
 *   --export-bmf FILE   Bencher Metric Format: {"BENCHMARK": {"peak-memory":
 *                       {"value", "lower_value", "upper_value"} (bytes),
 *                       "latency": {...} (wall time, nanoseconds)}}
 *   --export-gab FILE   github-action-benchmark's customSmallerIsBetter:
 *                       [{"name", "unit", "value", "range", "extra"}]
 *   --export-openmetrics FILE  gauges peakbpf_peak_bytes,
 *                       peakbpf_growth_bytes, peakbpf_wall_seconds{stat=...},
 *                       for node_exporter's textfile collector
 */
#include <stdio.h>
#include "export.h"
#include "json.h"
#include "units.h"

static void bmf_measure(struct json_writer *w, const char *slug, const struct stat5 *s, double scale)
{
	if (!s->n)
		return;
	json_key(w, slug);
	json_begin_object(w);
	json_kv_double(w, "value", s->mean * scale, 15);
	json_kv_double(w, "lower_value", s->min * scale, 15);
	json_kv_double(w, "upper_value", s->max * scale, 15);
	json_end_object(w);
}

void export_bmf(const struct runs_opts *r, const struct bench *b, size_t n, FILE *out)
{
	struct json_writer w;
	struct bench_summary s;

	(void)r;
	json_init(&w, out);
	json_begin_object(&w);
	for (size_t k = 0; k < n; k++) {
		bench_summarize(&b[k], &s);
		json_key(&w, b[k].label);
		json_begin_object(&w);
		bmf_measure(&w, "peak-memory", &s.peak, 1);
		bmf_measure(&w, "latency", &s.wall, 1e9);
		json_end_object(&w);
	}
	json_end_object(&w);
	json_finish(&w);
}

/* One customSmallerIsBetter entry: NAME (WHAT), the mean in unit. */
static void gab_entry(struct json_writer *w, const char *label, const char *what, const char *unit,
		      const struct stat5 *st, const struct bench_summary *s, bool bytes)
{
	char name[512], range[64], extra[256], a[32], b[32];

	if (!st->n)
		return;
	snprintf(name, sizeof(name), "%s (%s)", label, what);
	json_begin_object(w);
	json_kv_string(w, "name", name);
	json_kv_string(w, "unit", unit);
	json_kv_double(w, "value", st->mean, bytes ? 15 : 9);
	if (st->has_stddev) {
		snprintf(range, sizeof(range), bytes ? "± %.0f" : "± %.6f", st->stddev);
		json_kv_string(w, "range", range);
	}
	if (bytes)
		snprintf(extra, sizeof(extra), "%zu runs, min %s, max %s; source %s, %s", st->n,
			 format_bytes((uint64_t)st->min, a, sizeof(a)), format_bytes((uint64_t)st->max, b, sizeof(b)),
			 s->source, s->exact ? "exact" : "not exact");
	else
		snprintf(extra, sizeof(extra), "%zu runs, min %.6f s, max %.6f s", st->n, st->min, st->max);
	json_kv_string(w, "extra", extra);
	json_end_object(w);
}

void export_gab(const struct runs_opts *r, const struct bench *b, size_t n, FILE *out)
{
	struct json_writer w;
	struct bench_summary s;

	(void)r;
	json_init(&w, out);
	json_begin_array(&w);
	for (size_t k = 0; k < n; k++) {
		bench_summarize(&b[k], &s);
		gab_entry(&w, b[k].label, "peak memory", "bytes", &s.peak, &s, true);
		gab_entry(&w, b[k].label, "wall time", "s", &s.wall, &s, false);
	}
	json_end_array(&w);
	json_finish(&w);
}

/* A label value, escaped as the text format wants (\\, \", \n). */
static void om_label(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', out);
		if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

/*
 * One family. Its TYPE, UNIT and HELP are the same in every file peakbpf
 * writes, whatever was measured (issue 36: a collector reading several
 * files of one directory, as node_exporter's textfile one does, drops a
 * file whose HELP for a name differs from another's); what differs goes
 * in labels: the command, the statistic, the measure (rss: summed RSS;
 * unique: each page once), the source and whether it is exact.
 */
static void om_family(FILE *out, const char *name, const char *unit, const char *help,
		      const struct runs_opts *r, const struct bench *b, size_t n, int which)
{
	static const char *const stat[] = { "mean", "median", "min", "max" };
	struct bench_summary s;

	fprintf(out, "# TYPE %s gauge\n# UNIT %s %s\n# HELP %s %s\n", name, name, unit, name, help);
	for (size_t k = 0; k < n; k++) {
		const struct stat5 *st;

		bench_summarize(&b[k], &s);
		st = which == 0 ? &s.peak : which == 1 ? &s.growth : &s.wall;
		for (size_t i = 0; st->n && i < 4; i++) {
			const double v[] = { st->mean, st->median, st->min, st->max };

			fprintf(out, "%s{command=\"", name);
			om_label(out, b[k].label);
			fprintf(out, "\",stat=\"%s\",measure=\"%s\",source=\"%s\",exact=\"%s\"} %.*g\n", stat[i],
				r->measure_unique ? "unique" : "rss", s.source, s.exact ? "true" : "false",
				which == 2 ? 9 : 17, v[i]);
		}
	}
}

void export_openmetrics(const struct runs_opts *r, const struct bench *b, size_t n, FILE *out)
{
	om_family(out, "peakbpf_peak_bytes", "bytes",
		  "Peak memory of the command's process tree over its runs (label measure: rss, the "
		  "summed RSS; unique, each page once).", r, b, n, 0);
	om_family(out, "peakbpf_growth_bytes", "bytes",
		  "The peak less the tree's memory at its start, over the runs.", r, b, n, 1);
	om_family(out, "peakbpf_wall_seconds", "seconds", "Wall time of a run, over the runs.", r, b, n, 2);
	fputs("# EOF\n", out);
}
