// SPDX-License-Identifier: MIT
/* The harness's text outputs: the human summary and the Markdown table;
 * and the export files' lifecycle. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include "fileutil.h"
#include "cli.h"
#include "export.h"
#include "stats.h"
#include "units.h"

static const char *bytes_or_dash(const struct stat5 *s, double v, char *buf, size_t len)
{
	if (!s->n)
		return "not measured";
	return format_bytes(v > 0 ? (uint64_t)(v + 0.5) : 0, buf, len);
}

static void human_stat(FILE *out, const char *what, const struct stat5 *s, bool bytes)
{
	char a[32], b[32], c[32], d[32], e[32];

	if (!s->n) {
		fprintf(out, "  %-7s not measured\n", what);
		return;
	}
	if (bytes)
		fprintf(out, "  %-7s %s ± %s  (median %s, min … max %s … %s)\n", what,
			bytes_or_dash(s, s->mean, a, sizeof(a)),
			s->has_stddev ? bytes_or_dash(s, s->stddev, b, sizeof(b)) : "n/a",
			bytes_or_dash(s, s->median, c, sizeof(c)), bytes_or_dash(s, s->min, d, sizeof(d)),
			bytes_or_dash(s, s->max, e, sizeof(e)));
	else if (s->has_stddev)
		fprintf(out, "  %-7s %.3f s ± %.3f s  (median %.3f s, min … max %.3f s … %.3f s)\n", what,
			s->mean, s->stddev, s->median, s->min, s->max);
	else
		fprintf(out, "  %-7s %.3f s ± n/a  (median %.3f s, min … max %.3f s … %.3f s)\n", what,
			s->mean, s->median, s->min, s->max);
}

static void human_exactness(FILE *out, const struct bench_summary *s)
{
	char buf[32];

	if (s->exact)
		fprintf(out, "  source  %s, exact\n", s->source);
	else if (s->bound_known)
		fprintf(out, "  source  %s, not exact: off by up to %s (%s)\n", s->source,
			format_bytes(s->error_bound_bytes, buf, sizeof(buf)),
			s->inexact_reason ? s->inexact_reason : "see the single-run report");
	else
		fprintf(out, "  source  %s, not exact, error unknown (%s)\n", s->source,
			s->inexact_reason ? s->inexact_reason : "see the single-run report");
}

static void human_runs(FILE *out, const struct bench *b)
{
	char buf[32];

	if (!b->n_runs) {
		fputs("  runs    none: the series stopped before this command\n", out);
		return;
	}
	fprintf(out, "  runs    %zu: peak", b->n_runs);
	for (size_t i = 0; i < b->n_runs; i++)
		fprintf(out, "%s %s", i ? "," : "", b->runs[i].measured ?
			format_bytes(b->runs[i].peak_bytes, buf, sizeof(buf)) : "not measured");
	fputs("; exit", out);
	for (size_t i = 0; i < b->n_runs; i++)
		fprintf(out, " %d", b->runs[i].exit_status);
	fputc('\n', out);
}

static const struct stat5 *stat_of(const struct bench_summary *s, int which)
{
	return which == 0 ? &s->peak : &s->wall;
}

/*
 * hyperfine's Summary, for the peak (which 0) and the time (1): the
 * command with the lowest mean, and each other's mean as a ratio of it,
 * its standard deviation the two relative ones propagated (as hyperfine
 * does) where both have one.
 */
static void summary_of(FILE *out, const struct bench *b, size_t n, int which)
{
	struct bench_summary s, best_s;
	size_t best = n;

	for (size_t k = 0; k < n; k++) {
		bench_summarize(&b[k], &s);
		if (stat_of(&s, which)->n && stat_of(&s, which)->mean > 0 &&
		    (best == n || stat_of(&s, which)->mean < stat_of(&best_s, which)->mean)) {
			best = k;
			best_s = s;
		}
	}
	if (best == n)
		return;
	fprintf(out, "  '%s' %s\n", b[best].label, which == 0 ? "peaked lowest" : "ran fastest");
	for (size_t k = 0; k < n; k++) {
		const struct stat5 *a = stat_of(&s, which), *r = stat_of(&best_s, which);
		double ratio;

		if (k == best)
			continue;
		bench_summarize(&b[k], &s);
		if (!a->n) {
			fprintf(out, "    (not measured) '%s'\n", b[k].label);
			continue;
		}
		ratio = a->mean / r->mean;
		fprintf(out, "    %6.2f", ratio);
		if (a->has_stddev && r->has_stddev && a->mean > 0) {
			double ra = a->stddev / a->mean, rr = r->stddev / r->mean;

			fprintf(out, " ± %.2f", ratio * stats_sqrt(ra * ra + rr * rr));
		}
		fprintf(out, " times %s '%s'\n", which == 0 ? "lower than" : "faster than", b[k].label);
	}
}

void export_human(const struct runs_opts *r, const struct bench *b, size_t n, FILE *out)
{
	struct bench_summary s;

	(void)r;
	for (size_t k = 0; k < n; k++) {
		bench_summarize(&b[k], &s);
		fprintf(out, "Command %zu: %s\n", k + 1, b[k].label);
		human_stat(out, "peak", &s.peak, true);
		human_stat(out, "growth", &s.growth, true);
		human_stat(out, "time", &s.wall, false);
		human_exactness(out, &s);
		human_runs(out, &b[k]);
	}
	if (n < 2)
		return;
	fputs("Summary\n", out);
	summary_of(out, b, n, 0);
	summary_of(out, b, n, 1);
}

/* A table cell: '|' escaped, line breaks as spaces. */
static void md_cell(FILE *out, const char *s)
{
	fputs("| ", out);
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", out);
		else
			fputc(*s == '\n' || *s == '\r' ? ' ' : *s, out);
	}
	fputc(' ', out);
}

static void md_time(FILE *out, const struct stat5 *t)
{
	if (!t->n)
		fputs("| not measured ", out);
	else if (t->has_stddev)
		fprintf(out, "| %.3f s ± %.3f s ", t->mean, t->stddev);
	else
		fprintf(out, "| %.3f s ± n/a ", t->mean);
}

void export_markdown(const struct runs_opts *r, const struct bench *b, size_t n, FILE *out)
{
	struct bench_summary first, s;
	char a[32], c[32], d[32], e[32], g[32];

	(void)r;
	bench_summarize(&b[0], &first);
	fputs("| Command | Peak mean ± σ | Peak min … max | Growth mean | Time mean ± σ | "
	      "Peak relative | Exit codes | Source |\n", out);
	fputs("|:---|---:|---:|---:|---:|---:|:---|:---|\n", out);
	for (size_t k = 0; k < n; k++) {
		bench_summarize(&b[k], &s);
		md_cell(out, b[k].label);
		fprintf(out, "| %s ± %s | %s … %s | %s ",
			bytes_or_dash(&s.peak, s.peak.mean, a, sizeof(a)),
			s.peak.has_stddev ? bytes_or_dash(&s.peak, s.peak.stddev, c, sizeof(c)) : "n/a",
			bytes_or_dash(&s.peak, s.peak.min, d, sizeof(d)),
			bytes_or_dash(&s.peak, s.peak.max, e, sizeof(e)),
			bytes_or_dash(&s.growth, s.growth.mean, g, sizeof(g)));
		md_time(out, &s.wall);
		if (s.peak.n && first.peak.n && first.peak.mean > 0)
			fprintf(out, "| %.2f ", s.peak.mean / first.peak.mean);
		else
			fputs("| n/a ", out);
		fputs("| ", out);
		for (size_t i = 0; i < b[k].n_runs; i++)
			fprintf(out, "%s%d", i ? " " : "", b[k].runs[i].exit_status);
		fprintf(out, " | %s%s |\n", s.source, s.exact ? ", exact" : ", not exact");
	}
}

static FILE *open_out(const char *opt, const char *path)
{
	bool created;
	FILE *f;

	if (!path)
		return NULL;
	/* Emptied when the figures are there (export_write), not before. */
	f = safe_fopen_shared(path, &created);
	if (!f)
		fprintf(stderr, "peakbpf: %s: cannot write %s: %s\n", opt, path, strerror(errno));
	return f;
}

/* Each export file: its option, its path, where its FILE goes, and what
 * writes it (the JSON results take their fits apart). */
struct export_kind {
	const char *opt;
	size_t path_off, file_off;
	void (*write)(const struct runs_opts *, const struct bench *, size_t, FILE *);
};

#define EXPORT_KIND(opt, field, fn) \
	{ opt, offsetof(struct runs_opts, export_##field), offsetof(struct export_files, field), fn }
static const struct export_kind kinds[] = {
	EXPORT_KIND("--export-json", json, NULL),
	EXPORT_KIND("--export-csv", csv, export_csv),
	EXPORT_KIND("--export-markdown", markdown, export_markdown),
	EXPORT_KIND("--export-bmf", bmf, export_bmf),
	EXPORT_KIND("--export-gab", gab, export_gab),
	EXPORT_KIND("--export-openmetrics", openmetrics, export_openmetrics),
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static const char *kind_path(const struct options *o, size_t k)
{
	return *(const char *const *)((const char *)&o->runs + kinds[k].path_off);
}

static FILE **kind_file(struct export_files *f, size_t k)
{
	return (FILE **)((char *)f + kinds[k].file_off);
}

int export_open(const struct options *o, struct export_files *f)
{
	memset(f, 0, sizeof(*f));
	if (o->output && !(f->out = open_out("-o", o->output)))
		goto fail;
	for (size_t k = 0; k < N_KINDS; k++)
		if (kind_path(o, k) && !(*kind_file(f, k) = open_out(kinds[k].opt, kind_path(o, k))))
			goto fail;
	return 0;
fail:
	export_close(o, f);
	return -EIO;
}

int export_write(const struct options *o, struct export_files *f,
		 const struct bench *b, size_t n, const struct fit_report *fits, size_t n_fits)
{
	if (!o->quiet)
		export_human(&o->runs, b, n, stderr);
	for (size_t c = 0; c < n_fits; c++)
		if (!o->quiet || !fits[c].ok)
			fit_report_human(&o->runs, &fits[c], c, stderr);
	if (o->json)
		export_json(&o->runs, b, n, fits, n_fits, stdout);
	if (f->out && !safe_begin(f->out))
		export_json(&o->runs, b, n, fits, n_fits, f->out);
	/* Each file emptied only now that its figures are there. */
	if (f->json && !safe_begin(f->json))
		export_json(&o->runs, b, n, fits, n_fits, f->json);
	for (size_t k = 0; k < N_KINDS; k++)
		if (kinds[k].write && *kind_file(f, k) && !safe_begin(*kind_file(f, k)))
			kinds[k].write(&o->runs, b, n, *kind_file(f, k));
	return 0;
}

static int close_one(FILE **f, const char *path)
{
	int bad;

	if (!*f)
		return 0;
	bad = ferror(*f) | fclose(*f);
	*f = NULL;
	if (bad)
		fprintf(stderr, "peakbpf: cannot write %s: %s\n", path, strerror(errno ? errno : EIO));
	return bad ? -EIO : 0;
}

int export_close(const struct options *o, struct export_files *f)
{
	int err = close_one(&f->out, o->output), e;

	for (size_t k = 0; k < N_KINDS; k++) {
		e = close_one(kind_file(f, k), kind_path(o, k));
		if (!err)
			err = e;
	}
	return err;
}
