// SPDX-License-Identifier: MIT
/*
 * peakbpf: report the exact peak of a process tree's summed RSS.
 *
 * The first word picks a subcommand from the table (as bpftool's);
 * anything else is a measurement: options, then a command or -p PIDs.
 * "peakbpf -- plot" runs a program named plot.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "budget.h"
#include "cli.h"
#include "target.h"
#include "merge.h"
#include "run.h"
#include "runs.h"
#include "runs_cli.h"
#include "serve.h"
#include "agent.h"
#include "status.h"
#include "timeline_export.h"

static int help_main(int argc, char **argv);

static const struct subcommand {
	const char *name;
	int (*main)(int argc, char **argv);     /* argv[0] is the name */
} subcommands[] = {
	{ "plot", plot_main },
	{ "merge", merge_main },
	{ "serve", serve_main },
	{ "agent", agent_main },
	{ "oom", oom_main },
	{ "help", help_main },
};
#define N_SUBCOMMANDS (sizeof(subcommands) / sizeof(subcommands[0]))

static const struct subcommand *find_subcommand(const char *name)
{
	for (size_t i = 0; i < N_SUBCOMMANDS; i++)
		if (!strcmp(name, subcommands[i].name))
			return &subcommands[i];
	return NULL;
}

/* peakbpf help [CMD]: peakbpf's help, or CMD's own (CMD --help). */
static int help_main(int argc, char **argv)
{
	const struct subcommand *sub;
	char *help_argv[] = { NULL, "--help", NULL };

	if (argc < 2 || !strcmp(argv[1], "help")) {
		cli_usage(stdout);
		return 0;
	}
	sub = find_subcommand(argv[1]);
	if (!sub || argc > 2) {
		fprintf(stderr, "peakbpf help: '%s' is not a subcommand: peakbpf help [plot|merge|serve|agent|oom]\n",
			argc > 2 ? argv[2] : argv[1]);
		return EXIT_PEAKBPF_FAILED;
	}
	help_argv[0] = argv[1];
	return sub->main(2, help_argv);
}

static int measure(int argc, char **argv)
{
	struct options o;
	struct run_result res = { 0 };
	char err[512];

	switch (cli_parse(argc, argv, &o, err, sizeof(err))) {
	case CLI_HELP:
		cli_usage(stdout);
		return 0;
	case CLI_VERSION:
		printf("peakbpf %s\n", PEAKBPF_VERSION);
		return 0;
	case CLI_ERROR:
		fprintf(stderr, "peakbpf: %s\n", err);
		return EXIT_PEAKBPF_FAILED;
	case CLI_RUN:
		break;
	}
	/* A closed stderr or stdout pipe must not kill peakbpf before it has
	 * cleaned up (cgroups, the command); writes fail with EPIPE instead. */
	signal(SIGPIPE, SIG_IGN);
	if (o.target) {
		int status = target_resolve(&o);

		if (status)
			return status;
	}
	if (runs_wanted(&o.runs))
		return runs_main(&o, run_measure);
	return budget_check_single(&o, &res, run_measure(&o, &res));
}

int main(int argc, char **argv)
{
	const struct subcommand *sub = argc > 1 ? find_subcommand(argv[1]) : NULL;

	if (sub)
		return sub->main(argc - 1, argv + 1);
	return measure(argc, argv);
}
