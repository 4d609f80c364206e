/* SPDX-License-Identifier: MIT */
/*
 * One measured run of the CLI: a command (command mode) or -p's PIDs
 * (attach mode). run.c drives it (signals, the event loop, start and
 * end); run_emit.c reports it (windows, the record, the harness's result).
 */
#ifndef PEAKBPF_RUN_H
#define PEAKBPF_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <peakbpf/peakbpf.h>
#include "cli.h"
#include "rank_file.h"
#include "run_report.h"
#include "runs_result.h"
#include "sampler_model.h"
#include "sum_log.h"
#include "container_run.h"

/* Everything one run needs between its events. */
#define RUN_MAX_OOM 16          /* victims a run record lists; it counts them all */

struct run {
	const struct options *opts;
	struct peakbpf_session *session;
	long page_size;
	FILE *out;                      /* -o FILE, or NULL */
	bool out_created;               /* by this run: removed if nothing could be written */
	int out_errno, stdout_errno;    /* why a record could not be written, first */
	int sigfd;
	sigset_t oldmask;               /* before blocking handled_signals(): the command execs with it */
	int exit_status;                /* peakbpf's: EXIT_PEAKBPF_FAILED until known */
	uint64_t t0_ns, window_start_ns, next_window_ns, deadline_ns;
	bool windowed;                  /* -i given or SIGUSR1 seen: window records */
	/* command mode */
	pid_t child;                    /* negated once reaped */
	struct command_facts command;
	struct rusage ru;               /* the command's, once reaped */
	/* attach mode */
	int pidfds[CLI_MAX_PIDS];
	size_t roots_alive;
	int target_fd;                  /* --cgroup & co.: the cgroup's directory; -1 */
	/* --compare-sampler, --timeline */
	struct sum_log log;
	uint64_t record_drops;
	struct sampler_report sampler;
	struct run_result *result;      /* the harness's copy of the run's figure */
	struct rank_file rank;          /* --record DIR */
	struct container_run ctr;       /* -- docker|podman run: the container's session */
	/* The tree's OOM victims, read when it ended (peakbpf_oom_victims) */
	struct peakbpf_oom_victim oom[RUN_MAX_OOM];
	size_t n_oom;
	bool oom_recorded;
	char oom_why[192];
	FILE *stacks;                   /* --stacks FILE (stacks_cli.c), or NULL */
	bool stacks_created;
	int stacks_err;                 /* its first failure: the file is removed */
	struct peakbpf_stacks_file *stacks_file;        /* begun at the first window's close */
	unsigned stacks_windows;        /* windows written in it */
	unsigned stacks_best;           /* which, from 0, had the run's peak */
	bool stacks_written;            /* stacks_cli_finish ran */
	char stacks_summary[4096];      /* the run's peak window's: printed at the end */
};

#define SUM_LOG_RING_BYTES (32U << 20)   /* ~700 k changes (48 bytes each) between drains */
#define SUM_LOG_DRAIN_MS 20

/* Measure o (its command, or its PIDs) into res (NULL: not kept); returns
 * peakbpf's exit status (the command's own, or 12x). */
int run_measure(const struct options *o, struct run_result *res);

/* run_emit.c */
/* Whether the record of the sum is kept (--compare-sampler, --timeline,
 * --record, with bpf here). */
bool run_keeps_sum_log(const struct run *r);
void run_drain_trace(struct run *r);
/* Who an mm of the record of the sum is (sum_log_set_identify). */
int run_identify_mm(void *ctx, uint64_t mm, uint32_t tgid, uint32_t *pid, char comm[16]);
/* --record's callback on each change of the sum. */
void run_on_sum_change(void *ctx, int64_t pages);
/* Close the open window (the session folds it into the run's figures). */
int run_close_window(struct run *r);
/* The run's record, and the harness's copy of its figure. */
void run_report(struct run *r);

#endif
