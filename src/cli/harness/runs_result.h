/* SPDX-License-Identifier: MIT */
/* What one measured run leaves for the harness: its primary figure, its
 * wall time and its exit status. */
#ifndef PEAKBPF_RUNS_RESULT_H
#define PEAKBPF_RUNS_RESULT_H

#include <stdbool.h>
#include <stdint.h>

struct run_result {
	bool done;                      /* the run reached its report */
	bool measured;                  /* false: no figure (never read as 0) */
	const char *source;             /* static */
	bool exact, bound_known;
	uint64_t error_bound_bytes;
	const char *inexact_reason;     /* static, NULL when exact */
	uint64_t peak_bytes;
	bool growth_known;
	int64_t growth_bytes;
	double wall_s;
	int exit_status;                /* as the shell reports it */
};

#endif
