/* SPDX-License-Identifier: MIT */
/* A run's record, and its two renderings: a human summary and JSON. */
#ifndef PEAKBPF_REPORT_H
#define PEAKBPF_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct host_facts {
	char kernel[65];        /* uname -r */
	int cpus;               /* online CPUs */
	long page_size;
	bool btf;               /* /sys/kernel/btf/vmlinux present */
	bool rss_percpu;        /* rss kept in percpu_counters (6.2+) */
	const char *teardown_hook;
	const char *privileges; /* "root", "CAP_BPF+CAP_PERFMON", ... */
	int exact_path_err;     /* 0: per-CPU sums available, else -errno */
};

struct run_record {
	/* The measurement. */
	const char *source;             /* "bpf", ... or "unavailable" */
	bool measured;                  /* false: no figure at all */
	bool exact;
	bool bound_known;               /* error_bound_bytes means something */
	uint64_t error_bound_bytes;
	const char *inexact_reason;     /* why exact is false; NULL when exact */
	uint64_t peak_bytes;
	uint64_t baseline_bytes;
	double peak_at_s;               /* since the window opened */
	uint64_t peak_anon_bytes, peak_file_bytes, peak_shmem_bytes;
	int64_t procs_at_peak, mms_at_peak;

	/* What fed it. */
	uint64_t events, missed_events;
	uint64_t drop_mm_full, drop_task_full, peak_races;
	uint64_t mms_entered, procs_entered;
	uint64_t mms_left, procs_left;  /* map entries at the end */
	uint64_t exact_reads, cheap_reads;
	int64_t descendants_alive;      /* tree processes alive when the command exited */

	/* The command. */
	char *const *argv;
	pid_t pid;
	int wait_status;                /* raw waitpid status */
	double wall_s, user_s, sys_s;

	struct host_facts host;
};

/*
 * Worst-case lag, in pages, of one mm's resident counters read without
 * their per-CPU parts on a 6.2+ kernel: each of the three counters can have
 * up to batch - 1 pages in each CPU's slot, batch = max(32, 2 * ncpus)
 * (lib/percpu_counter.c, compute_batch_value()).
 */
uint64_t percpu_rss_lag_pages(int ncpus);

/*
 * Fill exact/bound/reason. bound_pages is how far the kernel side says the
 * peak may be off (the lag left in cheap counter reads while the peak could
 * move). Drops or missed events make the bound unknown; so does a kernel
 * before 6.2, whose per-thread rss caches BPF cannot see.
 */
void record_judge_exactness(struct run_record *r, int64_t bound_pages);

void report_json(const struct run_record *r, FILE *out);
void report_human(const struct run_record *r, FILE *out);

#endif
