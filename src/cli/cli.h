/* SPDX-License-Identifier: MIT */
/* Command-line options. */
#ifndef PEAKBPF_CLI_H
#define PEAKBPF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "runs_opts.h"
#include <peakbpf/peakbpf.h>

#define CLI_MAX_PIDS 64
#define CLI_MAX_SAMPLERS 8

enum target_kind {
	TARGET_NONE = 0,
	TARGET_CGROUP,          /* --cgroup PATH */
	TARGET_CONTAINER,       /* --container NAME|ID */
	TARGET_UNIT,            /* --unit NAME */
};

struct options {
	bool json;              /* JSON record on stdout */
	const char *output;     /* JSON record to this file */
	bool quiet;             /* no human summary */
	bool verbose;           /* libbpf's debug log on stderr */
	uint32_t max_tracked;   /* map entries; 0: default */
	char **command;         /* NULL-terminated, points into argv; NULL with -p */
	pid_t pids[CLI_MAX_PIDS];       /* -p */
	size_t n_pids;
	uint64_t interval_ns;   /* -i: window length; 0: one window */
	uint64_t duration_ns;   /* -d: stop after this long; 0: no limit */
	enum peakbpf_source source;
	uint64_t sample_interval_ns;    /* proc sampler period; 0: default */
	const char *cgroup_root;
	unsigned top;           /* -t: processes listed at the peak */
	uint64_t samplers_ns[CLI_MAX_SAMPLERS]; /* --compare-sampler intervals */
	size_t n_samplers;
	const char *user;       /* -u: run the command as USER[:GROUP] */
	struct runs_opts runs;   /* -r, -c, --max, -L, ... (runs_cli.c) */
	const char *timeline;   /* --timeline FILE: .json, .csv, .svg or .html */
	/* Which of -r's runs this is (set by the harness for each; 0 out of
	 * it): a timeline each run rewrites says which it draws. */
	unsigned run_index, run_count;
	bool run_warmup;
	bool use_helper;        /* --helper[=PATH]: through peakbpf serve */
	bool no_helper;         /* --no-helper: load here even when a helper runs */
	const char *helper_path;        /* NULL: $PEAKBPF_HELPER or the default */
	bool measure_unique;    /* --measure unique: the tree's unique memory is the headline */
	const char *record_dir; /* --record DIR: DIR/HOST.PID.jsonl (rank_file.h) */
	uint64_t record_interval_ns;    /* --record-interval */
	bool hide_command_output;       /* the harness's runs: the command's stdout, stderr to /dev/null */
	/* --cgroup, --container, --unit: what the user named, and the cgroup
	 * it resolves to (target.c), measured instead of a command or -p */
	const char *target;
	enum target_kind target_kind;
	const char *target_cgroup;      /* the cgroup's directory */
	const char *target_label;       /* "container NAME (ID)", "unit NAME", for the report */
	const char *stacks;     /* --stacks FILE: folded stacks at the peak (stacks_cli.c) */
};

enum cli_action {
	CLI_RUN,
	CLI_HELP,
	CLI_VERSION,
	CLI_ERROR,              /* err holds a one-line message */
};

enum cli_action cli_parse(int argc, char **argv, struct options *o,
			  char *err, size_t errlen);
void cli_usage(FILE *out);

#endif
