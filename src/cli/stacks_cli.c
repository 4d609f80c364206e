// SPDX-License-Identifier: MIT
/* stacks_cli.h: --stacks FILE in a run. */
#include <errno.h>
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

#define STACKS_TOP 10           /* stacks the summary lists */

enum cli_action stacks_cli_parse(const char *arg, char *err, size_t errlen)
{
	if (*arg)
		return CLI_RUN;
	snprintf(err, errlen, "--stacks: empty file name: give the file for the folded stacks");
	return CLI_ERROR;
}

bool stacks_cli_check(const struct options *o, int args_left, char *err, size_t errlen)
{
	const char *what = o->n_pids ? "-p" : o->target ? "a cgroup target" : o->interval_ns ? "-i" :
			   runs_wanted(&o->runs) ? "-r, -c or a sweep" : o->record_dir ? "--record" :
			   o->use_helper ? "--helper" :
			   o->source != PEAKBPF_SOURCE_AUTO && o->source != PEAKBPF_SOURCE_BPF ? "--source" : NULL;

	if (!o->stacks || (!what && args_left > 0))
		return false;
	if (!what)
		return false;   /* no command: said next */
	snprintf(err, errlen, "--stacks: in this version, the one window of a command peakbpf runs, with the "
		 "bpf source loaded here: not with %s", what);
	return true;
}

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

	if (!r->stacks || r->stacks_err)
		return;
	err = peakbpf_stacks_poll(r->session);
	if (err && err != -EOPNOTSUPP)
		fprintf(stderr, "peakbpf: --stacks: reading the kernel's ring failed: %s\n", strerror(-err));
	if (err)
		r->stacks_err = err;    /* said once; the write at the end says why */
}

void stacks_cli_report(struct run *r, const struct peakbpf_figure *f)
{
	char summary[4096] = "";
	int err;

	if (!r->stacks)
		return;
	err = ftruncate(fileno(r->stacks), 0) ? -errno : 0;
	if (!err)
		err = peakbpf_stacks_write(r->session, f, r->stacks, STACKS_TOP, summary, sizeof(summary));
	if (err) {
		fprintf(stderr, "peakbpf: --stacks: %s\n", *summary ? summary : strerror(-err));
		r->exit_status = EXIT_PEAKBPF_FAILED;
		r->stacks_err = err;
		return;
	}
	if (!r->opts->quiet)
		fprintf(stderr, "peakbpf: %s  (folded stacks in %s)\n", summary, r->opts->stacks);
}

void stacks_cli_close(struct run *r)
{
	if (!r->stacks)
		return;
	if (r->stacks_err)
		safe_discard(r->stacks, r->opts->stacks, r->stacks_created);
	else
		fclose(r->stacks);
	r->stacks = NULL;
}
