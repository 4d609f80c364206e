// SPDX-License-Identifier: MIT
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "budget.h"
#include "fileutil.h"
#include "cli.h"
#include "export.h"
#include "fit_report.h"
#include "runs.h"
#include "runs_progress.h"
#include "shell_words.h"
#include "status.h"
#include "sweep.h"
#include "units.h"

/* A command string, not measured (--prepare, --setup, --conclude,
 * --cleanup): its exit status, or -1 if it could not be started. Its
 * output shows only with --show-output, as the measured commands'. */
static int run_hook(const struct runs_opts *r, const char *cmd)
{
	char **argv = shell_command_argv(cmd, &r->shell);
	pid_t pid;
	int st;

	if (!argv)
		return -1;
	pid = fork();
	if (pid == 0) {
		int saved[2];

		if (!r->show_output)
			stdio_to_null(saved);     /* the child's own: nothing to restore */
		execvp(argv[0], argv);
		_exit(errno == ENOENT ? 127 : 126);
	}
	shell_argv_free(argv);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
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
	struct runs_progress progress;
	bool stopped;                   /* interrupted, or a hook failed */
	int failed;                     /* peakbpf's own failure: its status */
	/* Interrupted (Ctrl-C, SIGTERM...): the run it cut, left out of the
	 * statistics, and its bench. */
	bool interrupted, cut_warmup;
	unsigned cut_run;
	size_t cut_bench;
};

/* A hook (--prepare, ...) of b's, with its sweep values: false (the series
 * stops, said why) when it failed. */
static bool hook(struct harness *h, const struct bench *b, const char *opt, const char *cmd)
{
	const struct runs_opts *r = &h->opts->runs;
	char *text;
	int st;

	if (!cmd)
		return true;
	text = sweep_substitute(cmd, r, b->vi);
	st = text ? run_hook(r, text) : -1;
	if (st) {
		runs_progress_clear(&h->progress);
		fprintf(stderr, "peakbpf: %s '%s' %s %d: fix it, or drop %s%s\n", opt, text ? text : cmd,
			st < 0 ? "could not run, errno" : "exited", st < 0 ? errno : st, opt,
			r->show_output ? "" : " (--show-output shows its output)");
		h->stopped = true;
		h->failed = EXIT_PEAKBPF_FAILED;
	}
	free(text);
	return st == 0;
}

/* One run of bench b (a warm-up when res is NULL), with its hooks:
 * whether it counts. A run a signal cut short does not: its figures are
 * of part of a run (issue 36: it was counted in min and mean). */
static bool measure_one(struct harness *h, struct bench *b, struct run_result *res)
{
	struct options ro = *h->opts;
	struct run_result scratch, *x = res ? res : &scratch;
	sigset_t saved;
	bool cut;
	int st;

	if (!hook(h, b, "--prepare", h->opts->runs.prepare))
		return false;
	ro.quiet = true;
	ro.json = false;
	ro.output = NULL;
	ro.command = b->argv;
	ro.hide_command_output = !h->opts->runs.show_output;
	ro.run_index = h->progress.index + 1;
	ro.run_warmup = h->progress.in_warmup;
	ro.run_count = ro.run_warmup ? h->opts->runs.warmup : h->progress.runs;
	memset(&scratch, 0, sizeof(scratch));
	sigprocmask(SIG_SETMASK, NULL, &saved);
	st = h->measure(&ro, x);
	cut = drain_signals() || st == 128 + SIGINT;
	if (cut)
		h->stopped = h->interrupted = true;
	sigprocmask(SIG_SETMASK, &saved, NULL);
	if (!x->done) {
		if (!cut) {
			h->stopped = true;      /* peakbpf failed: it said why */
			h->failed = st;
		}
		return false;
	}
	if (cut) {
		x->done = false;
		return false;
	}
	runs_progress_done(&h->progress, x);
	hook(h, b, "--conclude", h->opts->runs.conclude);
	return true;
}

static void run_all(struct harness *h)
{
	const struct runs_opts *r = &h->opts->runs;
	unsigned runs = r->runs ? r->runs : 1;

	for (size_t k = 0; k < h->n_benches && !h->stopped; k++) {
		struct bench *b = &h->benches[k];

		if (!hook(h, b, "--setup", r->setup))
			break;
		for (unsigned w = 0; w < r->warmup && !h->stopped; w++) {
			runs_progress_start(&h->progress, k, w, true);
			measure_one(h, b, NULL);
			h->cut_warmup = h->interrupted;
			h->cut_bench = k;
			h->cut_run = w;
		}
		for (unsigned i = 0; i < runs && !h->stopped; i++) {
			runs_progress_start(&h->progress, k, i, false);
			if (measure_one(h, b, &b->runs[i]))
				b->n_runs++;
			else if (h->interrupted) {
				h->cut_bench = k;
				h->cut_run = i;
			}
		}
		if (!h->failed)
			hook(h, b, "--cleanup", r->cleanup);
	}
	runs_progress_end(&h->progress);
}

/* Bench b: command c at the sweep point b->vi. Its label is the command
 * string as given, or the argv quoted as a shell reads it back. */
static int build_bench(const struct options *o, struct bench *b)
{
	const struct runs_opts *r = &o->runs;
	size_t argc = 0;

	if (r->n_commands) {
		b->label = sweep_substitute(r->commands[b->command], r, b->vi);
		if (!b->label)
			return -ENOMEM;
		b->argv = shell_command_argv(b->label, &r->shell);
		if (!b->argv && errno == EINVAL)
			fprintf(stderr, "peakbpf: '%s': no command, or a quote not closed\n", b->label);
		return b->argv ? 0 : -errno;
	}
	while (o->command[argc])
		argc++;
	b->argv = calloc(argc + 1, sizeof(char *));
	if (!b->argv)
		return -ENOMEM;
	for (size_t i = 0; i < argc; i++)
		if (!(b->argv[i] = sweep_substitute(o->command[i], r, b->vi)))
			return -ENOMEM;
	b->label = shell_quote_argv(b->argv);
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
		int err;

		b->command = k / n_pts;
		sweep_point(r, k % n_pts, b->vi);
		b->runs = calloc(runs, sizeof(*b->runs));
		if (!b->runs)
			return -ENOMEM;
		err = build_bench(h->opts, b);
		if (err)
			return err;
	}
	return 0;
}

static void free_benches(struct harness *h)
{
	for (size_t k = 0; h->benches && k < h->n_benches; k++) {
		struct bench *b = &h->benches[k];

		shell_argv_free(b->argv);
		free(b->label);
		free(b->runs);
	}
	free(h->benches);
}

/* The status of the whole series: a command's own failure first (unless
 * --ignore-failure), then the budget's verdict. */
static int series_status(const struct harness *h, int budget)
{
	for (size_t k = 0; !h->opts->runs.ignore_failure && k < h->n_benches; k++) {
		struct bench_summary s;

		bench_summarize(&h->benches[k], &s);
		if (!s.status)
			continue;
		if (!h->opts->quiet)
			fprintf(stderr, "peakbpf: %s exited %d%s; -i (--ignore-failure) exits 0 anyway\n",
				h->benches[k].label, s.status,
				h->opts->runs.show_output ? "" : " (--show-output shows its output)");
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
	switch (build_benches(&h)) {
	case 0:
		break;
	case -EINVAL:
		goto out;       /* said which */
	default:
		fprintf(stderr, "peakbpf: out of memory\n");
		goto out;
	}
	runs_progress_init(&h.progress, o, h.n_benches, isatty(STDERR_FILENO));
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
	if (h.interrupted) {
		fprintf(stderr, "peakbpf: interrupted during %s %u of %s: that run is left out; the "
			"statistics are of the %zu run%s before it\n", h.cut_warmup ? "warm-up" : "run",
			h.cut_run + 1,
			h.benches[h.cut_bench].label, h.benches[h.cut_bench].n_runs,
			h.benches[h.cut_bench].n_runs == 1 ? "" : "s");
		status = 128 + SIGINT;
	}
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
