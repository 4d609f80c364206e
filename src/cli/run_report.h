/* SPDX-License-Identifier: MIT */
/*
 * The CLI's own part of a record: the command it ran or the PIDs it
 * attached to, and --compare-sampler's check. libpeakbpf renders the
 * measurement (peakbpf_figure_format); this part goes in as its extra.
 */
#ifndef PEAKBPF_RUN_REPORT_H
#define PEAKBPF_RUN_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <peakbpf/peakbpf.h>
#include "sampler_model.h"

struct command_facts {
	char *const *argv;
	pid_t pid;
	int wait_status;                /* raw waitpid status */
	double user_s, sys_s;
	double exited_s;                /* when it was reaped, since the run began; 0 unknown */
	int64_t descendants_alive;      /* tree processes alive when it exited, -1 unknown */
};

struct run_context {
	const struct command_facts *command;    /* NULL when attached */
	const pid_t *attached;          /* -p PIDs, NULL in command mode */
	size_t n_attached;
	/* --cgroup, --container, --unit: "cgroup PATH", "container NAME (ID,
	 * RUNTIME)", "unit NAME", and the cgroup's directory; NULL otherwise */
	const char *target_label, *target_cgroup;
	/* -- docker|podman run: the record's figure is the container's; the
	 * runtime's processes' (the command's tree without the container)
	 * apart */
	const char *container_label, *container_cgroup;
	bool runtime_measured, runtime_exact;
	uint64_t runtime_peak_bytes;
	const char *runtime_source;
	const struct sampler_report *sampler;   /* run record with --compare-sampler */
	double start_s, end_s;          /* the record's, since the run began */
	unsigned windows;               /* run record: how many windows it had */
	/* Run record: the tree's OOM victims (peakbpf_oom_victims), n_oom of
	 * them (more than given when oom_more); oom_why: why not recorded
	 * (NULL: recorded). oom_t0_ns: the run's start, CLOCK_MONOTONIC. */
	const struct peakbpf_oom_victim *oom;
	size_t n_oom, oom_total;
	const char *oom_why;
	uint64_t oom_t0_ns;
	bool run_record;
};

/* "command", "attached", "sampler_check", "oom_kills": JSON members without braces.
 * NULL when out of memory; free it. */
char *run_report_json(const struct run_context *c);
/* Their lines of the run's summary ("" when none). NULL when out of
 * memory; free it. */
char *run_report_human(const struct run_context *c);

#endif
