/* SPDX-License-Identifier: MIT */
/*
 * `peakbpf merge`: a job's peak of the summed memory of its ranks, from
 * their --record files (rank_file.h), aligned in wall-clock time.
 *
 * The truth is the largest value of S(t) = sum over records of x_r(t),
 * x_r being record r's tree sum, at a true instant t. A record's clock reads
 * true time + d_h, |d_h| <= e_h, the same d_h for every record of host h
 * (one clock), e_h its adjtimex maxerror. Per window of a record: the peak
 * of x_r over the window, the lowest value (min), the value at its end.
 *
 * upper: for each host, the sum of its records' window peaks at each
 * instant of its clock (a window covers its whole line span, so that the
 * cut's timing is on the safe side), then the largest of that over every
 * instant within e_h (any offset the host's clock may have); the largest
 * sum of those over the hosts at one instant. Every x_r(t) is below its own
 * term for the t of the true peak, so upper >= truth.
 *
 * lower: for a window w of record r on host h, x_r reached peak(w) at
 * some instant of w (at its recorded instant, within MERGE_PEAK_SLACK_NS,
 * when that is known). At that instant every other record q of h held at
 * least the min of every q window that overlaps w (same clock), and a
 * record q of another host g at least the min of every q window overlapping
 * w widened by e_h + e_g. A value not known (no record there, a min not
 * measured) counts 0. Each such sum is a value S reached, so lower <= truth;
 * merge takes the largest over every window.
 */
#ifndef PEAKBPF_MERGE_H
#define PEAKBPF_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* merge's exit statuses: each bad input has its own. */
enum merge_exit {
	MERGE_OK = 0,
	MERGE_FAILED = 1,       /* out of memory, a write failed */
	MERGE_USAGE = 125,      /* bad usage: peakbpf's own failure, as everywhere */
	MERGE_BAD_FILE = 3,     /* unreadable, not a record, a corrupt line */
	MERGE_OTHER_JOB = 4,    /* records of different jobs */
	MERGE_MISSING_RANK = 5, /* ranks 0..N-1 with a gap */
	MERGE_DUPLICATE = 6,    /* the same host and PID twice */
};

/* Edges of a record's coverage are this uncertain (its first window starts
 * just after the tracker's first cut). */
#define MERGE_EDGE_NS 1000000LL
/* What a record may hold: instants up to 2100, windows and clock errors up
 * to a year. */
#define MERGE_MAX_NS 4102444800000000000LL
#define MERGE_MAX_LEN_NS (366LL * 86400 * 1000000000)

/* A peak's instant, as recorded, is this close to the truth: converted from
 * CLOCK_MONOTONIC at the window's cut, and blurred by concurrent raisers
 * (docs/design.md, "The peak"). */
#define MERGE_PEAK_SLACK_NS 200000LL

struct merge_window {
	int64_t start, end;     /* CLOCK_REALTIME ns, on its host's clock */
	int64_t peak_at;        /* when peak was reached; 0: unknown */
	uint64_t peak;
	bool min_known, end_known, exact;
	uint64_t min, end_sum;
};

struct merge_rec {
	char path[512];
	char host[256];
	long pid;
	char job[64];           /* "" when unknown */
	long rank, size;        /* -1 when unknown */
	bool clock_known, synced;
	int64_t err_ns;         /* the clock's maxerror, the larger of start and end */
	struct merge_window *w;
	size_t n, cap;
	bool complete;          /* its end line was read */
	bool truncated;         /* a cut last line was left out */
	uint64_t peak;          /* its largest window peak */
	int64_t peak_start, peak_end;   /* that window */
	bool exact;             /* every window exact */
	size_t host_id;         /* records of one host share it (merge_compute) */
};

struct merge_result {
	uint64_t lower, upper;
	int64_t lower_start, lower_end;         /* the window whose instant gave lower */
	int64_t upper_start, upper_end;         /* where the upper bound is reached */
	uint64_t sum_of_peaks;                  /* what IPM reports */
	uint64_t largest;                       /* what Slurm's MaxRSS would be at best */
	size_t largest_rec;
	size_t hosts;
	int64_t max_err_ns;
	bool exact;                             /* every window of every record */
	bool all_synced;
};

/* Parse one line of a record into r (a header fills the facts, a window is
 * appended, the end line marks it complete). 0, -ENOMEM, or -EINVAL with
 * err saying what is wrong. */
int merge_parse_line(struct merge_rec *r, const char *line, bool first, char *err, size_t errlen);
/* Read path. A cut last line (no newline: a killed rank) is left out and
 * noted in r->truncated. MERGE_OK, or an exit status with err. */
int merge_load(const char *path, struct merge_rec *r, char *err, size_t errlen);
/* Records of different jobs, a duplicate host+PID, a gap in the ranks
 * 0..N-1 (N from the size or the largest rank). MERGE_OK or a status. */
int merge_check(const struct merge_rec *recs, size_t n, char *err, size_t errlen);
/* The bounds (the comment at the top). 0 or -ENOMEM. Sets host_id. */
int merge_compute(struct merge_rec *recs, size_t n, struct merge_result *out);
void merge_rec_free(struct merge_rec *r);

/* The job's summed window peaks on the records' own clocks (no widening):
 * breakpoints t[0..count) and v[i] from t[i] to t[i+1]; the caller frees
 * both. 0 or -ENOMEM. */
int merge_sum_steps(const struct merge_rec *recs, size_t n, int64_t **t, uint64_t **v, size_t *count);

/* `peakbpf merge`: argv[0] is "merge". Returns the exit status. */
int merge_main(int argc, char **argv);

#endif
