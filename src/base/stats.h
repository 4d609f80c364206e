/* SPDX-License-Identifier: MIT */
/* Summary statistics of repeated runs: min, median, mean, max, stddev. */
#ifndef PEAKBPF_STATS_H
#define PEAKBPF_STATS_H

#include <stdbool.h>
#include <stddef.h>

struct stat5 {
	size_t n;                       /* values summarised; 0: nothing measured */
	double min, median, mean, max;
	bool has_stddev;                /* n >= 2: the sample standard deviation */
	double stddev;
};

/* Summarise n values (any order; v is not changed). n == 0 gives n == 0. */
void stats_compute(const double *v, size_t n, struct stat5 *out);
/* The square root of x >= 0 (0 for anything else), by Newton's method:
 * peakbpf links no libm. */
double stats_sqrt(double x);

#endif
