// SPDX-License-Identifier: MIT
/* stacks_cli.h: --stacks FILE's option and what it does not go with: apart
 * from the run's side (stacks_cli.c), so that the option parser and its
 * fuzzer link without the library. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <peakbpf/peakbpf.h>
#include <peakbpf/peakbpf_stacks.h>
#include "runs_cli.h"
#include "stacks_cli.h"

/* Names that promise a format peakbpf does not write: not a folded file. */
static const char *const not_written[] = { ".svg", ".html", ".htm", ".pb", ".pb.gz", ".pprof" };

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcasecmp(s + n - m, end);
}

int stacks_cli_format(const char *path)
{
	if (ends_with(path, ".json"))
		return PEAKBPF_STACKS_SPEEDSCOPE;
	for (size_t i = 0; i < sizeof(not_written) / sizeof(not_written[0]); i++)
		if (ends_with(path, not_written[i]))
			return -1;
	return PEAKBPF_STACKS_FOLDED;
}

enum cli_action stacks_cli_parse(const char *arg, char *err, size_t errlen)
{
	if (!*arg) {
		snprintf(err, errlen, "--stacks: empty file name: give the file for the folded stacks");
		return CLI_ERROR;
	}
	if (stacks_cli_format(arg) >= 0)
		return CLI_RUN;
	snprintf(err, errlen, "--stacks: '%s': the name says the format: .json for speedscope JSON, any other "
		 "(e.g. .folded) for folded stacks; an SVG is flamegraph.pl's, from the folded file", arg);
	return CLI_ERROR;
}

bool stacks_cli_check(const struct options *o, int args_left, char *err, size_t errlen)
{
	const char *what = o->target ? "a cgroup target" : runs_wanted(&o->runs) ? "-r, -c or a sweep" : o->record_dir ? "--record" :
			   o->use_helper ? "--helper" :
			   o->source != PEAKBPF_SOURCE_AUTO && o->source != PEAKBPF_SOURCE_BPF ? "--source" : NULL;

	if (!o->stacks || (!what && args_left > 0))
		return false;
	if (!what)
		return false;   /* no command: said next */
	snprintf(err, errlen, "--stacks: in this version, the windows of a command peakbpf runs or of "
		 "processes it attaches to (-p), with the bpf source loaded here: not with %s", what);
	return true;
}
