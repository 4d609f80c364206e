/* SPDX-License-Identifier: MIT */
/* What one measured run leaves for the harness: its primary figure, its
 * wall and CPU times and its exit status. */
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
	unsigned windows_unmeasured;    /* windows without a figure: no budget passes it */
	char lost_why[256];             /* then why, naming them */
	uint64_t peak_bytes;
	bool growth_known;
	int64_t growth_bytes;
	double wall_s;
	bool has_cpu_times;             /* the command was reaped: its rusage */
	double user_s, system_s;        /* its CPU time, with its reaped descendants' */
	int exit_status;                /* as the shell reports it */
};

#endif
