/* SPDX-License-Identifier: MIT */
/* Records of a run (one per window, and one for the whole run) and their
 * renderings: a human summary and one JSON line. */
#ifndef PEAKBPF_REPORT_H
#define PEAKBPF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "source.h"

struct host_facts {
	char kernel[65];        /* uname -r */
	int cpus;               /* online CPUs */
	long page_size;
	bool btf;               /* /sys/kernel/btf/vmlinux present */
	bool bpf_loaded;        /* the facts below come from a loaded tracker */
	bool rss_percpu;        /* rss kept in percpu_counters (6.2+) */
	const char *teardown_hook;
	const char *privileges; /* "root", "CAP_BPF+CAP_PERFMON", ... */
	int exact_path_err;     /* 0: per-CPU sums available, else -errno */
};

/* What fed the bpf source, over the whole run so far. */
struct bpf_counters {
	uint64_t events, missed_events;
	uint64_t drop_mm_full, drop_task_full, peak_races;
	uint64_t mms_entered, procs_entered;
	uint64_t mms_left, procs_left;  /* kernel map entries at the end */
	uint64_t count_takes, settles;  /* 6.2+ exact path: slot folds taken, mms settled */
	/* run record, exact path: every live mm's counters summed over every
	 * CPU against the tree's values (tracker_verify_sums) */
	bool sums_checked;
	uint64_t sums_mms, sums_off;
	int64_t sums_max_off_pages;
};

struct command_facts {
	char *const *argv;
	pid_t pid;
	int wait_status;                /* raw waitpid status */
	double user_s, sys_s;
	int64_t descendants_alive;      /* tree processes alive when it exited, -1 unknown */
};

#define REPORT_MAX_SAMPLERS 8

/* --compare-sampler: what samplers at each interval would have reported. */
struct sampler_report {
	size_t n;
	struct {
		uint64_t interval_ns;
		uint64_t phase_step_ns;
		size_t phases;
		uint64_t worst_bytes, median_bytes, best_bytes;
		double p_within_5pct;
	} at[REPORT_MAX_SAMPLERS];
	uint64_t true_peak_bytes;
	uint64_t resolution_ns;
	uint64_t record_drops;          /* changes not recorded: the model is then approximate */
	/* the real /proc sampler at the first interval, as a check */
	bool real_measured;
	uint64_t real_interval_ns;
	uint64_t real_peak_bytes;
	uint64_t real_samples;
	bool real_within;               /* inside [worst, best], with a small tolerance */
};

struct record {
	const char *kind;               /* "window" or "run" */
	unsigned window;                /* 1-based window number; 0 for the run */
	unsigned windows;               /* run: how many windows it had */
	double start_s, end_s;          /* since the run began */
	uint64_t t0_ns;                 /* CLOCK_MONOTONIC when the run began */
	struct figure primary;
	const struct figure *others;    /* every other source read at the same time */
	size_t n_others;
	const char *const *skipped;     /* why better sources were not used */
	size_t n_skipped;
	const struct command_facts *command;    /* NULL when attached */
	const pid_t *attached;          /* -p PIDs, NULL in command mode */
	size_t n_attached;
	const struct bpf_counters *counters;    /* NULL without the bpf source */
	const struct host_facts *host;
	unsigned top;                   /* holders to list (-t) */
	const struct sampler_report *sampler;   /* run record with --compare-sampler */
};

/*
 * Worst-case lag, in pages, of one mm's resident counters read without
 * their per-CPU parts on a 6.2+ kernel: each of the three counters can have
 * up to batch - 1 pages in each CPU's slot, batch = max(32, 2 * ncpus)
 * (lib/percpu_counter.c, compute_batch_value()).
 */
uint64_t percpu_rss_lag_pages(int ncpus);

/*
 * Judge a bpf figure: exact, bound, reason. bound_pages is how far the
 * kernel side says the peak may be off (the lag left in cheap counter reads
 * while the peak could move). Drops or missed events make the bound
 * unknown; so does a kernel before 6.2, whose per-thread rss caches BPF
 * cannot see.
 */
void figure_judge_bpf(struct figure *f, const struct bpf_counters *c,
		      const struct host_facts *h, int64_t bound_pages);

/*
 * Fold one window's figure of a source into that source's whole-run
 * figure: the larger peak (with its detail), the first baseline, exact only
 * if every window was, the largest error bound, samples added up.
 */
void figure_merge(struct figure *run, const struct figure *window, bool first);

struct holder;
/* Keep the largest holders of a snapshot in f, largest first. */
void figure_set_holders(struct figure *f, const struct holder *in, size_t n, long page_size);

void report_json(const struct record *r, FILE *out);
/* The run's summary: several lines. */
void report_human(const struct record *r, FILE *out);
/* One line for a closed window. */
void report_human_window(const struct record *r, FILE *out);

#endif
