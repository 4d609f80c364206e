// SPDX-License-Identifier: MIT
/*
 * rusage source: ru_maxrss of the command as wait4() reports it when the
 * command is reaped. That is the largest resident size of any single
 * process among the command and the descendants it waited for, not the
 * tree's sum. It also covers the time between fork and exec, when the
 * command was still a copy of peakbpf. It cannot be reset, so only the
 * window that ends after the command was reaped has a figure.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "fileutil.h"
#include "sources.h"

static const char SCOPE[] = "largest single process (not a sum)";
static const char WHY[] =
	"ru_maxrss: the largest single process among the command and its waited-for "
	"descendants, not the tree's sum";
static const char WHY_NOT_YET[] = "rusage covers the whole run only";

struct rusage_source {
	struct source base;
	pid_t command;          /* the first root: the command peakbpf runs */
	bool exited;
	bool have_maxrss;
	uint64_t maxrss_bytes;
};


static int rusage_add_root(struct source *s, pid_t pid)
{
	struct rusage_source *r = (struct rusage_source *)s;

	if (pid <= 0)
		return -EINVAL;
	if (!r->command)
		r->command = pid;
	return 0;
}

static int rusage_start(struct source *s)
{
	(void)s;
	return 0;
}

static void rusage_command_exited(struct source *s, pid_t pid, const void *rusage)
{
	struct rusage_source *r = (struct rusage_source *)s;
	const struct rusage *ru = rusage;

	if (r->command && pid != r->command)
		return;
	r->exited = true;
	/* ru_maxrss is in KiB; a negative one would be a kernel bug. */
	if (!ru || ru->ru_maxrss < 0 || (unsigned long)ru->ru_maxrss > UINT64_MAX / 1024)
		return;
	r->maxrss_bytes = (uint64_t)ru->ru_maxrss * 1024;
	r->have_maxrss = true;
}

static int rusage_close_window(struct source *s, struct figure *out)
{
	struct rusage_source *r = (struct rusage_source *)s;

	memset(out, 0, sizeof(*out));
	out->source = "rusage";
	out->scope = SCOPE;
	/* Every window that closes after the command was reaped gets the
	 * figure: normally that is only the last one. */
	if (!r->exited) {
		out->inexact_reason = WHY_NOT_YET;
		return 0;
	}
	if (!r->have_maxrss) {
		out->inexact_reason = "wait4 reported no resource usage for the command";
		return 0;
	}
	out->measured = true;
	out->covers_run = true;         /* the maximum since the command began */
	out->peak_bytes = r->maxrss_bytes;
	out->inexact_reason = WHY;
	return 0;
}

static void rusage_destroy(struct source *s)
{
	free(s);
}

static const struct source_ops rusage_ops = {
	.add_root = rusage_add_root,
	.start = rusage_start,
	.close_window = rusage_close_window,
	.command_exited = rusage_command_exited,
	.destroy = rusage_destroy,
};

int rusage_source_open(const struct source_opts *o, struct source **out, char *why, size_t whylen)
{
	struct rusage_source *r;

	*out = NULL;
	if (!o || !o->command_mode) {
		set_why(why, whylen, "rusage needs peakbpf to run the command (peakbpf -- COMMAND): choose another source");
		return -EOPNOTSUPP;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		set_why(why, whylen, "out of memory");
		return -ENOMEM;
	}
	r->base.ops = &rusage_ops;
	r->base.name = "rusage";
	*out = &r->base;
	return 0;
}
