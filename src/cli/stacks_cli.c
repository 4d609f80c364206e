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

void stacks_cli_write(struct run *r, const struct peakbpf_figure *f)
{
	char *summary = r->stacks_summary;
	int err;

	if (!r->stacks || r->stacks_written)
		return;
	r->stacks_written = true;
	*summary = '\0';
	err = ftruncate(fileno(r->stacks), 0) ? -errno : 0;
	if (!err)
		err = peakbpf_stacks_write(r->session, f, (enum peakbpf_stacks_format)stacks_cli_format(r->opts->stacks),
					   r->stacks, STACKS_TOP, summary, sizeof(r->stacks_summary));
	if (err) {
		fprintf(stderr, "peakbpf: --stacks: %s\n", *summary ? summary : strerror(-err));
		r->exit_status = EXIT_PEAKBPF_FAILED;
		r->stacks_err = err;
		return;
	}
	timeline_names_stacks(r);
}

void stacks_cli_report(struct run *r, const struct peakbpf_figure *f)
{
	stacks_cli_write(r, f);
	if (r->stacks && !r->stacks_err && !r->opts->quiet)
		fprintf(stderr, "peakbpf: %s  (%s in %s)\n", r->stacks_summary, format_name(r->opts->stacks),
			r->opts->stacks);
}

void stacks_cli_close(struct run *r)
{
	if (!r->stacks)
		return;
	if (r->stacks_err || !r->session)       /* failed, or no run: a session without stacks is not opened */
		safe_discard(r->stacks, r->opts->stacks, r->stacks_created);
	else
		fclose(r->stacks);
	r->stacks = NULL;
}
