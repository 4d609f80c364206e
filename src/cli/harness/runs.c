// SPDX-License-Identifier: MIT
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "budget.h"
#include "cli.h"
#include "export.h"
#include "fit_report.h"
#include "runs.h"
#include "status.h"
#include "sweep.h"
#include "units.h"

/* Run a shell command, not measured: --prepare. */
static int run_prepare_cmd(const char *cmd)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return exit_status_from_wait(st);
}

/* Signals a measured run leaves pending (it blocks them): a SIGINT, SIGTERM,
 * SIGHUP or SIGQUIT among them stops the series. */
static bool drain_signals(void)
{
	static const struct timespec zero;
	bool stop = false;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGUSR1);
	while ((sig = sigtimedwait(&set, NULL, &zero)) > 0)
		if (sig != SIGCHLD && sig != SIGUSR1)
			stop = true;
	return stop;
}

struct harness {
	const struct options *opts;
	measure_fn measure;
	struct bench *benches;
	size_t n_benches;
	bool stopped;                   /* interrupted, or --prepare failed */
	int failed;                     /* peakbpf's own failure: its status */
};

/* One run of bench b (a warm-up when res is NULL). */
static void measure_one(struct harness *h, struct bench *b, struct run_result *res)
{
	struct options ro = *h->opts;
	struct run_result scratch;
	sigset_t saved;
	int st;

	if (h->opts->runs.prepare) {
		st = run_prepare_cmd(h->opts->runs.prepare);
		if (st) {
			fprintf(stderr, "peakbpf: --prepare '%s' exited %d: fix it, or drop --prepare\n",
				h->opts->runs.prepare, st);
			h->stopped = true;
			h->failed = EXIT_PEAKBPF_FAILED;
			return;
		}
	}
	ro.quiet = true;
	ro.json = false;
	ro.output = NULL;
	ro.command = b->argv;
	memset(&scratch, 0, sizeof(scratch));
	sigprocmask(SIG_SETMASK, NULL, &saved);
	st = h->measure(&ro, res ? res : &scratch);
	if (drain_signals() || st == 128 + SIGINT)
		h->stopped = true;
	sigprocmask(SIG_SETMASK, &saved, NULL);
	if (!(res ? res : &scratch)->done) {
		h->stopped = true;      /* peakbpf failed: it said why */
		h->failed = st;
	}
}

static void progress(const struct harness *h, const struct bench *b, size_t i)
{
	const struct run_result *x = &b->runs[i];
	char buf[32];

	if (h->opts->quiet)
		return;
	fprintf(stderr, "peakbpf: [%zu/%zu] run %zu/%u: peak %s, %.3f s, exit %d\n",
		(size_t)(b - h->benches) + 1, h->n_benches, i + 1,
		h->opts->runs.runs ? h->opts->runs.runs : 1,
		x->measured ? format_bytes(x->peak_bytes, buf, sizeof(buf)) : "not measured",
		x->wall_s, x->exit_status);
}

static void run_all(struct harness *h)
{
	const struct runs_opts *r = &h->opts->runs;
	unsigned runs = r->runs ? r->runs : 1;

	for (size_t k = 0; k < h->n_benches && !h->stopped; k++) {
		struct bench *b = &h->benches[k];

		for (unsigned w = 0; w < r->warmup && !h->stopped; w++)
			measure_one(h, b, NULL);
		for (unsigned i = 0; i < runs && !h->stopped; i++) {
			measure_one(h, b, &b->runs[i]);
			if (b->runs[i].done) {
				b->n_runs++;
				progress(h, b, i);
			}
		}
	}
}

static char *join_argv(char **argv)
{
	size_t len = 1;
	char *s;

	for (char **a = argv; *a; a++)
		len += strlen(*a) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (char **a = argv; *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

/* Bench b: command c at the sweep point b->vi. */
static int build_bench(const struct options *o, struct bench *b)
{
	const struct runs_opts *r = &o->runs;
	size_t argc = 0;

	if (r->n_commands) {
		b->argv = calloc(4, sizeof(char *));
		if (!b->argv)
			return -ENOMEM;
		b->argv[0] = strdup("sh");
		b->argv[1] = strdup("-c");
		b->argv[2] = sweep_substitute(r->commands[b->command], r, b->vi);
		if (!b->argv[0] || !b->argv[1] || !b->argv[2])
			return -ENOMEM;
		b->label = strdup(b->argv[2]);
		return b->label ? 0 : -ENOMEM;
	}
	while (o->command[argc])
		argc++;
	b->argv = calloc(argc + 1, sizeof(char *));
	if (!b->argv)
		return -ENOMEM;
	for (size_t i = 0; i < argc; i++)
		if (!(b->argv[i] = sweep_substitute(o->command[i], r, b->vi)))
			return -ENOMEM;
	b->label = join_argv(b->argv);
	return b->label ? 0 : -ENOMEM;
}

static int build_benches(struct harness *h)
{
	const struct runs_opts *r = &h->opts->runs;
	size_t n_cmd = r->n_commands ? r->n_commands : 1, n_pts = sweep_points(r);
	unsigned runs = r->runs ? r->runs : 1;

	h->n_benches = n_cmd * n_pts;
	h->benches = calloc(h->n_benches, sizeof(*h->benches));
	if (!h->benches)
		return -ENOMEM;
	for (size_t k = 0; k < h->n_benches; k++) {
		struct bench *b = &h->benches[k];

		b->command = k / n_pts;
		sweep_point(r, k % n_pts, b->vi);
		b->runs = calloc(runs, sizeof(*b->runs));
		if (!b->runs || build_bench(h->opts, b))
			return -ENOMEM;
	}
	return 0;
}

static void free_benches(struct harness *h)
{
	for (size_t k = 0; h->benches && k < h->n_benches; k++) {
		struct bench *b = &h->benches[k];

		for (char **a = b->argv; a && *a; a++)
			free(*a);
		free(b->argv);
		free(b->label);
		free(b->runs);
	}
	free(h->benches);
}

/* The status of the whole series: a command's own failure first, then the
 * budget's verdict. */
static int series_status(const struct harness *h, int budget)
{
	for (size_t k = 0; k < h->n_benches; k++) {
		struct bench_summary s;

		bench_summarize(&h->benches[k], &s);
		if (s.status)
			return s.status;
	}
	return budget;
}

/* --fit: one per command, over its points. Returns how many failed. */
static size_t fit_all(const struct harness *h, struct fit_report *fits, size_t n_fits)
{
	size_t n_pts = h->n_benches / n_fits, failed = 0;

	for (size_t c = 0; c < n_fits; c++)
		if (fit_report_compute(&h->opts->runs, &h->benches[c * n_pts], n_pts, &fits[c]))
			failed++;
	return failed;
}

int runs_main(const struct options *o, measure_fn measure)
{
	struct harness h = { .opts = o, .measure = measure };
	struct fit_report fits[RUNS_MAX_COMMANDS] = { 0 };
	size_t n_fits = o->runs.fit ? (o->runs.n_commands ? o->runs.n_commands : 1) : 0;
	struct export_files files;
	int status = EXIT_PEAKBPF_FAILED, budget;
	bool fit_failed;

	if (export_open(o, &files))
		return EXIT_PEAKBPF_FAILED;
	if (build_benches(&h)) {
		fprintf(stderr, "peakbpf: out of memory\n");
		goto out;
	}
	run_all(&h);
	if (h.failed) {
		status = h.failed;      /* peakbpf's 125, or 126/127 when a command could not run */
		goto out;
	}
	fit_failed = n_fits && fit_all(&h, fits, n_fits);
	if (export_write(o, &files, h.benches, h.n_benches, fits, n_fits))
		goto out;
	budget = budget_check_benches(o, h.benches, h.n_benches);
	status = budget == EXIT_PEAKBPF_FAILED ? budget : series_status(&h, budget);
	if (fit_failed && !status)
		status = EXIT_PEAKBPF_FAILED;
	if (h.stopped && !status)
		status = 128 + SIGINT;
out:
	if (export_close(o, &files) && status != EXIT_PEAKBPF_FAILED)
		status = EXIT_PEAKBPF_FAILED;
	for (size_t c = 0; c < n_fits; c++)
		fit_report_free(&fits[c]);
	free_benches(&h);
	return status;
}
