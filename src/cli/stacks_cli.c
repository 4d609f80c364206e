// SPDX-License-Identifier: MIT
/* stacks_cli.h: --stacks FILE in a run, and its place in --timeline's page. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <peakbpf/peakbpf.h>
#include <peakbpf/peakbpf_stacks.h>
#include "fileutil.h"
#include "output.h"
#include "run.h"
#include "runs_cli.h"
#include "stacks_cli.h"
#include "status.h"
#include "timeline.h"
#include "units.h"

#define STACKS_TOP 10           /* stacks the summary lists */

int stacks_cli_open(struct run *r)
{
	int err;

	if (!r->opts->stacks)
		return 0;
	r->stacks = output_open(r->opts->stacks, &r->stacks_created);
	if (r->stacks)
		return 0;
	err = -errno;
	fprintf(stderr, "peakbpf: --stacks: cannot write %s: %s%s\n", r->opts->stacks, strerror(-err),
		err == -ELOOP ? " (it is a symbolic link: name the file itself)" :
		" (name a file in a directory you may write)");
	r->exit_status = EXIT_STACKS_UNWRITABLE;
	return err;
}

void stacks_cli_poll(struct run *r)
{
	int err;

	if (!r->stacks || r->stacks_err || r->stacks_written)
		return;         /* written: the cut is made */
	err = peakbpf_stacks_poll(r->session);
	if (err && err != -EOPNOTSUPP)
		fprintf(stderr, "peakbpf: --stacks: reading the kernel's ring failed: %s\n", strerror(-err));
	if (err)
		r->stacks_err = err;    /* said once; the write at the end says why */
}

static const char *format_name(const char *path)
{
	return stacks_cli_format(path) == PEAKBPF_STACKS_SPEEDSCOPE ? "speedscope JSON" : "folded stacks";
}

/* The --timeline page names the stacks at its peak marker: the file by
 * its absolute path (the page's link), and the summary. */
static void timeline_names_stacks(struct run *r)
{
	char abs[PATH_MAX];
	const char *path = realpath(r->opts->stacks, abs) ? abs : r->opts->stacks;

	if (!r->opts->timeline || !r->log.keep_timeline)
		return;
	if (timeline_set_stacks(&r->log.timeline, path, format_name(r->opts->stacks), r->stacks_summary))
		fprintf(stderr, "peakbpf: --timeline: the page does not name the stacks: %s\n", strerror(ENOMEM));
}

/* The file is emptied at the first window's close, not at the start: a
 * run that fails before leaves it as it was. */
static int file_begin(struct run *r)
{
	int err;

	if (r->stacks_file)
		return 0;
	err = ftruncate(fileno(r->stacks), 0) ? -errno : 0;
	if (!err)
		err = peakbpf_stacks_file_open(r->stacks, (enum peakbpf_stacks_format)stacks_cli_format(r->opts->stacks),
					       &r->stacks_file);
	return err;
}

static void stacks_failed(struct run *r, int err, const char *why)
{
	fprintf(stderr, "peakbpf: --stacks: %s\n", why && *why ? why : strerror(-err));
	r->exit_status = EXIT_PEAKBPF_FAILED;
	r->stacks_err = err;
}

void stacks_cli_window(struct run *r, const struct peakbpf_figure *f)
{
	char summary[sizeof(r->stacks_summary)], name[96], a[32];
	uint64_t peak = 0, ns = 0;
	int err;

	if (!r->stacks || r->stacks_err || r->stacks_written)
		return;
	*summary = '\0';
	err = file_begin(r);
	if (err) {
		stacks_failed(r, err, NULL);
		return;
	}
	/* Windows (-i, or SIGUSR1 before this close): each under its own name. */
	if (r->windowed) {
		peakbpf_figure_peak(f, &peak);
		peakbpf_figure_peak_time(f, &ns);
		snprintf(name, sizeof(name), "[window %u: peak %s at %.3f s]", r->stacks_windows + 1,
			 format_bytes(peak, a, sizeof(a)), ns > r->t0_ns ? (double)(ns - r->t0_ns) / 1e9 : 0.0);
	}
	err = peakbpf_stacks_file_window(r->session, r->stacks_file, f, r->windowed ? name : NULL, STACKS_TOP,
					 summary, sizeof(summary));
	if (err) {
		stacks_failed(r, err, summary);
		return;
	}
	r->stacks_best = (unsigned)peakbpf_stacks_file_best(r->stacks_file);
	if (r->stacks_best == r->stacks_windows)
		snprintf(r->stacks_summary, sizeof(r->stacks_summary), "%s", summary);
	r->stacks_windows++;
}

void stacks_cli_finish(struct run *r)
{
	size_t pos = strlen(r->stacks_summary);
	int err;

	if (!r->stacks || r->stacks_written)
		return;
	r->stacks_written = true;
	err = peakbpf_stacks_file_close(r->stacks_file);
	r->stacks_file = NULL;
	if (r->stacks_err)
		return;
	if (err) {
		stacks_failed(r, err, NULL);
		return;
	}
	if (r->stacks_windows > 1)
		snprintf(r->stacks_summary + pos, sizeof(r->stacks_summary) - pos,
			 "  window %u of %u, the run's peak; each window's stacks, at its own peak, are in the file%s\n",
			 r->stacks_best + 1, r->stacks_windows,
			 stacks_cli_format(r->opts->stacks) == PEAKBPF_STACKS_SPEEDSCOPE ? " (a profile each)" :
			 " (under a frame each)");
	timeline_names_stacks(r);
}

void stacks_cli_report(struct run *r)
{
	stacks_cli_finish(r);
	if (r->stacks && !r->stacks_err && !r->opts->quiet)
		fprintf(stderr, "peakbpf: %s  (%s in %s)\n", r->stacks_summary, format_name(r->opts->stacks),
			r->opts->stacks);
}

void stacks_cli_close(struct run *r)
{
	if (!r->stacks)
		return;
	peakbpf_stacks_file_close(r->stacks_file);      /* a run that ended early */
	r->stacks_file = NULL;
	if (r->stacks_err || !r->session)       /* failed, or no run: a session without stacks is not opened */
		safe_discard(r->stacks, r->opts->stacks, r->stacks_created);
	else
		fclose(r->stacks);
	r->stacks = NULL;
}
