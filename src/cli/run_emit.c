// SPDX-License-Identifier: MIT
/* A run's report half (run.h): windows as they close, the run's record on
 * stderr, stdout and -o, --record's windows, and the harness's result. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <peakbpf/peakbpf.h>
#include "clock.h"
#include "output.h"
#include "status.h"
#include "run.h"
#include "stacks_cli.h"

bool run_keeps_sum_log(const struct run *r)
{
	return (r->opts->n_samplers || r->opts->timeline || r->opts->record_dir) && peakbpf_has_bpf(r->session);
}

/* The record of the sum is a sink: the run feeds it each change it drains. */
static int feed_sum_log(void *ctx, const struct peakbpf_change *c)
{
	return sum_log_change(ctx, c->mono_ns, c->sum_pages, c->mm, c->mm_pages, c->tgid);
}

int run_identify_mm(void *ctx, uint64_t mm, uint32_t tgid, uint32_t *pid, char comm[16])
{
	const struct run *r = ctx;
	pid_t vpid = 0;
	int err = peakbpf_mm_identity(r->session, mm, tgid, &vpid, comm);

	*pid = (uint32_t)vpid;
	return err;
}

void run_drain_trace(struct run *r)
{
	if (run_keeps_sum_log(r) && peakbpf_changes_drain(r->session, feed_sum_log, &r->log, &r->record_drops))
		fprintf(stderr, "peakbpf: reading the sum log failed\n");
	stacks_cli_poll(r);
}

/* --compare-sampler: model each interval over the whole run, and check a
 * real /proc sampler at the first interval against the model. */
static void compare_sampler(struct run *r, const struct peakbpf_figure *run, uint64_t end_ns)
{
	uint64_t peak = 0;
	struct sampler_report_input in = {
		.trace = &r->log.sampler,
		.start_ns = r->t0_ns,
		.end_ns = end_ns,
		.page_size = (uint64_t)r->page_size,
		.record_drops = r->record_drops,
		.intervals_ns = r->opts->samplers_ns,
		.n_intervals = r->opts->n_samplers,
	};

	peakbpf_figure_peak(run, &peak);
	in.true_peak_bytes = peak;
	sampler_report_compute(&in, &r->sampler);
	for (size_t i = 0; i < peakbpf_figure_other_count(run); i++) {
		const struct peakbpf_figure *f = peakbpf_figure_other(run, i);
		uint64_t interval_ns, samples;

		if (!strcmp(peakbpf_figure_source(f), "proc") && !peakbpf_figure_peak(f, &peak) &&
		    !peakbpf_figure_samples(f, &interval_ns, &samples))
			sampler_report_check_real(&r->sampler, interval_ns, peak, samples);
	}
}


/* A figure as libpeakbpf renders it, with the CLI's own part; NULL when
 * out of memory. Free it. */
static char *render(const struct peakbpf_figure *f, enum peakbpf_format format, unsigned top,
		    const char *extra)
{
	struct peakbpf_format_opts fo = { .sz = sizeof(fo), .format = format, .holders = top, .extra = extra };
	size_t len = 16384;             /* a record with 32 holders fits: rendered once */
	char *text = malloc(len), *more;
	int n;

	if (!text)
		return NULL;
	n = peakbpf_figure_format(f, &fo, text, len);
	if (n >= 0 && (size_t)n >= len) {
		more = realloc(text, (size_t)n + 1);
		if (more)
			text = more;
		n = more ? peakbpf_figure_format(f, &fo, text, (size_t)n + 1) : -ENOMEM;
	}
	if (n < 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The command or the PIDs, and the figure's times. */
static struct run_context run_context(const struct run *r, const struct peakbpf_figure *f)
{
	const struct options *o = r->opts;
	struct run_context c = { .windows = peakbpf_figure_windows(f) };
	uint64_t t0 = 0, start = 0, end = 0;

	peakbpf_figure_times(f, &t0, &start, &end);
	c.start_s = start > t0 ? (double)(start - t0) / 1e9 : 0;
	c.end_s = end > t0 ? (double)(end - t0) / 1e9 : 0;
	c.oom = r->oom;
	c.oom_total = r->n_oom;
	c.n_oom = r->n_oom < RUN_MAX_OOM ? r->n_oom : RUN_MAX_OOM;
	c.oom_why = r->oom_recorded ? NULL : r->oom_why;
	c.oom_t0_ns = r->t0_ns;
	if (o->command) {
		c.command = &r->command;
	} else {
		c.attached = o->pids;
		c.n_attached = o->n_pids;
		c.target_label = o->target_label;
		c.target_cgroup = o->target_cgroup;
	}
	return c;
}

/* -- docker|podman run: the container's figure is the record's; the
 * command's (the runtime's processes) goes beside it. */
static void container_context(struct run *r, const struct peakbpf_figure *runtime, struct run_context *c)
{
	uint64_t peak = 0;

	container_run_name(&r->ctr);
	c->container_label = r->ctr.label;
	c->container_cgroup = r->ctr.parent;
	c->runtime_measured = peakbpf_figure_peak(runtime, &peak) == 0;
	c->runtime_peak_bytes = peak;
	c->runtime_exact = peakbpf_figure_exact(runtime);
	c->runtime_source = peakbpf_figure_source(runtime);
}

/* The record on stderr (unless -q), then as JSON (--json, -o). */
static void write_record(struct run *r, const struct peakbpf_figure *f, const struct run_context *c)
{
	enum peakbpf_format human = peakbpf_figure_window(f) ? PEAKBPF_FORMAT_TEXT_WINDOW : PEAKBPF_FORMAT_TEXT;
	char *extra = NULL, *text;

	if (!r->opts->quiet) {
		extra = human == PEAKBPF_FORMAT_TEXT ? run_report_human(c) : NULL;
		text = render(f, human, r->opts->top, extra);
		if (text)
			fputs(text, stderr);
		else
			fprintf(stderr, "peakbpf: rendering the report failed\n");
		free(text);
		free(extra);
	}
	if (!r->opts->json && !r->out)
		return;
	extra = run_report_json(c);
	text = extra ? render(f, PEAKBPF_FORMAT_JSON, r->opts->top, extra) : NULL;
	if (!text) {
		/* Said where the record should have gone, with the command's status. */
		if (r->opts->json && !r->stdout_errno)
			r->stdout_errno = ENOMEM;
		if (r->out && !r->out_errno)
			r->out_errno = ENOMEM;
	} else {
		if (r->opts->json)
			output_write(stdout, text, &r->stdout_errno);
		if (r->out)
			output_write(r->out, text, &r->out_errno);
	}
	free(text);
	free(extra);
}

void run_on_sum_change(void *ctx, int64_t pages)
{
	rank_file_change(ctx, pages);
}

/* --record: the window just cut, with its lowest sum from the changes
 * drained now (rank_file.h), and when the next one closes. */
static void record_window(struct run *r, const struct peakbpf_figure *f)
{
	uint64_t peak = 0, peak_ns = 0;
	int64_t start_pages = 0;

	rank_file_mark(&r->rank);
	run_drain_trace(r);
	peakbpf_figure_peak(f, &peak);
	peakbpf_figure_peak_time(f, &peak_ns);
	peakbpf_window_start_pages(r->session, &start_pages);
	rank_file_window(&r->rank, peak, peak_ns, peakbpf_figure_exact(f), peakbpf_figure_source(f),
			   start_pages, r->record_drops);
	r->next_window_ns = rank_file_next_close(&r->rank, monotonic_ns());
}

/* Close the open window (the session folds it into the run's figures). */
int run_close_window(struct run *r)
{
	struct peakbpf_figure *f = NULL, *fc = NULL;
	bool windowed_done = false;
	struct run_context c;
	uint64_t now = 0;
	int err;

	if (r->opts->record_dir)
		rank_file_before_cut(&r->rank);
	err = peakbpf_close_window(r->session, &f);
	if (err)
		return err;
	stacks_cli_window(r, f);
	if (r->ctr.session && peakbpf_close_window(r->ctr.session, &fc) == 0) {
		c = run_context(r, fc);
		container_context(r, f, &c);
		if (r->windowed)
			write_record(r, fc, &c);
		peakbpf_figure_free(fc);
		fc = NULL;
		windowed_done = true;
	}
	if (r->opts->record_dir)
		record_window(r, f);
	peakbpf_figure_times(f, NULL, NULL, &now);
	r->window_start_ns = now;
	if (r->windowed)
		sum_log_window(&r->log, now, peakbpf_figure_window(f));
	if (r->opts->interval_ns)
		r->next_window_ns = now + r->opts->interval_ns;
	if (r->windowed && !windowed_done) {    /* a single window: the run record says it all */
		c = run_context(r, f);
		write_record(r, f, &c);
	}
	peakbpf_figure_free(f);
	return 0;
}

/* What the harness (runs.c) keeps of a run: its figure and exit status.
 * source and inexact_reason are the library's static strings. */
static void run_result_set(struct run_result *res, const struct peakbpf_figure *f, int exit_status)
{
	uint64_t bound = 0, peak = 0, base = 0, t0 = 0, end = 0;

	memset(res, 0, sizeof(*res));
	res->done = true;
	res->measured = peakbpf_figure_peak(f, &peak) == 0;
	res->source = peakbpf_figure_source(f);
	res->exact = peakbpf_figure_exact(f);
	res->bound_known = peakbpf_figure_error_bound(f, &bound) == 0;
	res->error_bound_bytes = bound;
	res->windows_unmeasured = peakbpf_figure_windows_unmeasured(f);
	/* Naming the windows, the reason is the figure's own (freed after):
	 * copied. Otherwise a static string. */
	if (res->windows_unmeasured)
		snprintf(res->lost_why, sizeof(res->lost_why), "%s", peakbpf_figure_reason(f));
	res->inexact_reason = res->windows_unmeasured ? "some windows were not measured" :
			      peakbpf_figure_reason(f);
	res->peak_bytes = peak;
	res->growth_known = peakbpf_figure_baseline(f, &base) == 0;
	res->growth_bytes = (int64_t)(peak - base);
	peakbpf_figure_times(f, &t0, NULL, &end);
	res->wall_s = end > t0 ? (double)(end - t0) / 1e9 : 0;
	res->exit_status = exit_status;
}

void run_report(struct run *r)
{
	struct peakbpf_figure *f = NULL, *fc = NULL, *shown;
	uint64_t peak = 0, peak_ns = 0;
	struct run_context c;

	if (peakbpf_run_figure(r->session, &f) ||
	    (r->ctr.session && peakbpf_run_figure(r->ctr.session, &fc))) {
		fprintf(stderr, "peakbpf: reading the run's figure failed\n");
		r->exit_status = EXIT_PEAKBPF_FAILED;
		peakbpf_figure_free(f);
		return;
	}
	shown = fc ? fc : f;
	c = run_context(r, shown);
	c.run_record = true;
	if (fc)
		container_context(r, f, &c);
	peakbpf_figure_peak(f, &peak);
	peakbpf_figure_peak_time(f, &peak_ns);
	/* The stacks' end first: the timeline's page names them. */
	stacks_cli_finish(r);
	if (run_keeps_sum_log(r) && !strcmp(peakbpf_figure_source(f), "bpf")) {
		run_drain_trace(r);
		if (r->opts->n_samplers) {
			compare_sampler(r, f, r->window_start_ns);
			c.sampler = &r->sampler;
		}
		if (sum_log_finish(&r->log, r->window_start_ns, peak, peak_ns))
			r->exit_status = EXIT_PEAKBPF_FAILED;
	}
	if (r->opts->record_dir && rank_file_finish(&r->rank, peak, peakbpf_figure_exact(f),
						      peakbpf_figure_source(f), r->exit_status))
		r->exit_status = EXIT_PEAKBPF_FAILED;
	if (r->result) {
		run_result_set(r->result, shown, r->exit_status);
		r->result->has_cpu_times = r->opts->command != NULL;
		r->result->user_s = r->command.user_s;
		r->result->system_s = r->command.sys_s;
	}
	write_record(r, shown, &c);
	stacks_cli_report(r);
	peakbpf_figure_free(fc);
	peakbpf_figure_free(f);
}

