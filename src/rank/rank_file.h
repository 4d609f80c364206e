/* SPDX-License-Identifier: MIT */
/*
 * --record DIR: one rank's (or node's) series of fine windows, for
 * `peakbpf merge` (merge.h) to align with the other ranks' in time.
 *
 * DIR/HOST.PID.jsonl holds a header line (host, version, the clock's error
 * and sync state from adjtimex, job and rank from the launcher's
 * environment, the command), one line per closed window, and an end line
 * for the run. Windows end on CLOCK_REALTIME multiples of the interval, so
 * that the windows of different ranks line up. Each line goes out in one
 * write(2) as its window closes: a rank killed mid-run leaves every closed
 * window readable, at worst a truncated last line.
 *
 * Bounded: after RECORD_LINES_PER_LEVEL window lines the interval doubles,
 * and again after each further RECORD_LINES_PER_LEVEL (docs/design.md has
 * the bytes per hour).
 */
#ifndef PEAKBPF_RANK_FILE_H
#define PEAKBPF_RANK_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RECORD_FORMAT 1
#define RECORD_INTERVAL_DEFAULT_NS 10000000ULL  /* 10 ms */
#define RECORD_LINES_PER_LEVEL 65536U           /* ~11 min at 10 ms */
#define RECORD_MAX_LEVEL 16                     /* the interval grows at most 65536x */
#define RANK_FILE_RING_BYTES (4U << 20)       /* the sum's changes between two drains */

/* The job and rank from the launcher's environment (Slurm, Open MPI, PMI,
 * PMIx), and where each came from. */
struct record_job {
	char id[64];            /* "" when unknown */
	const char *id_from;    /* the variable, or NULL */
	long rank, size;        /* -1 when unknown */
	const char *rank_from, *size_from;
};

/* The clock, from adjtimex(2). */
struct record_clock {
	bool known;             /* adjtimex answered */
	bool synced;            /* STA_UNSYNC clear */
	int64_t maxerror_us, esterror_us;
	int status;
};

struct rank_file {
	int fd;                 /* -1: not recording */
	char path[4096];
	uint64_t base_ns;       /* --record-interval */
	uint64_t lines;         /* window lines written */
	long page_size;
	bool bpf;               /* the sum and its changes are known */
	/* The sum's lowest value (pages) in the open window, from its changes
	 * (docs/design.md: a value drained late counts in both windows). */
	int64_t min_open, min_since_mark;
	bool min_ok;            /* no change lost since the window opened */
	uint64_t drops_at_open;
	/* CLOCK_REALTIME: the open window's start, and the last cut happened
	 * between these two: a window's line spans from the instant before
	 * its first cut to the instant after its last (merge.h). */
	int64_t start_rt_ns, cut_before_rt_ns, cut_after_rt_ns;
	int64_t rt_minus_mono_ns;       /* at the last cut: a peak's instant on the wall clock */
	int write_errno;        /* the first write error */
};

/* Pure: the job from getenv-like lookups (tests pass their own). */
void record_job_from(struct record_job *j, const char *(*get)(const char *name));
/* Pure: the interval after `lines` window lines. */
uint64_t record_interval(uint64_t base_ns, uint64_t lines);
/* Pure: the next multiple of interval strictly after rt_ns. */
int64_t record_next_boundary(int64_t rt_ns, uint64_t interval_ns);

/*
 * Create DIR/HOST.PID.jsonl (DIR is made if missing) and write its header.
 * 0, or a negative errno and a one-line message on stderr.
 */
int rank_file_open(struct rank_file *rr, const char *dir, uint64_t interval_ns,
		     char *const *argv, const pid_t *pids, size_t n_pids);
/* The run begins: its first window opens with the sum at start_pages. */
void rank_file_begin(struct rank_file *rr, bool bpf, int64_t start_pages, long page_size);
/* Every change of the sum drained from the kernel. */
void rank_file_change(struct rank_file *rr, int64_t pages);
/* A window is about to be cut in the kernel. */
void rank_file_before_cut(struct rank_file *rr);
/* It was cut; what is drained from now on may belong to either window. */
void rank_file_mark(struct rank_file *rr);
/* When (CLOCK_MONOTONIC) the next window should close. */
uint64_t rank_file_next_close(const struct rank_file *rr, uint64_t mono_now);
/*
 * The window just closed: peak (bytes) and its instant (CLOCK_MONOTONIC,
 * 0: unknown) from its figure, the sum at its end (pages), the changes
 * lost so far. One line, written at once.
 */
void rank_file_window(struct rank_file *rr, uint64_t peak_bytes, uint64_t peak_mono_ns, bool exact,
			const char *source, int64_t end_pages, uint64_t drops_total);
/* The run's end line; closes the file. 0 or -errno of the first failed write. */
int rank_file_finish(struct rank_file *rr, uint64_t peak_bytes, bool exact, const char *source,
		       int exit_status);
void rank_file_close(struct rank_file *rr);

#endif
