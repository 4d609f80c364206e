/* SPDX-License-Identifier: MIT */
/*
 * The harness's results: a human summary (stderr), results[] in JSON
 * (--json, -o, --export-json), --export-csv, --export-markdown, and the
 * CI dashboards' --export-bmf, --export-gab, --export-openmetrics. Field names follow
 * hyperfine's where they mean the same (command, mean, stddev, median, min,
 * max, times, exit_codes, parameters: wall time in seconds); memory is in
 * bytes, with its source and exactness.
 */
#ifndef PEAKBPF_EXPORT_H
#define PEAKBPF_EXPORT_H

#include <stddef.h>
#include <stdio.h>
#include "fit_report.h"
#include "bench.h"

struct options;

struct export_files {
	FILE *out, *csv, *markdown, *json, *bmf, *gab, *openmetrics;
};

/* Open -o and every --export-* before anything runs. */
int export_open(const struct options *o, struct export_files *f);
/* Write the summary and every requested export. */
int export_write(const struct options *o, struct export_files *f,
		 const struct bench *b, size_t n, const struct fit_report *fits, size_t n_fits);
/* Close them; -EIO (said on stderr) if one was not fully written. */
int export_close(const struct options *o, struct export_files *f);

/* fits: --fit's, one per command (n_fits 0 without). */
void export_json(const struct runs_opts *r, const struct bench *b, size_t n,
		 const struct fit_report *fits, size_t n_fits, FILE *out);
void export_csv(const struct runs_opts *r, const struct bench *b, size_t n, FILE *out);
void export_markdown(const struct runs_opts *r, const struct bench *b, size_t n, FILE *out);
/* For CI dashboards (export_ci.c): Bencher's BMF JSON, github-action-
 * benchmark's customSmallerIsBetter JSON, and an OpenMetrics text file
 * for node_exporter's textfile collector. */
void export_bmf(const struct runs_opts *r, const struct bench *b, size_t n, FILE *out);
void export_gab(const struct runs_opts *r, const struct bench *b, size_t n, FILE *out);
void export_openmetrics(const struct runs_opts *r, const struct bench *b, size_t n, FILE *out);
/* The human summary: each command's statistics, then the comparison. */
void export_human(const struct runs_opts *r, const struct bench *b, size_t n, FILE *out);

#endif
