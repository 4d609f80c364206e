/* SPDX-License-Identifier: MIT */
/* Parsing and printing of sizes, durations and PIDs given by the user. */
#ifndef PEAKBPF_UNITS_H
#define PEAKBPF_UNITS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Parse a size: a non-negative integer or decimal number, optional blanks,
 * and an optional unit in any case: B; K, M, G, T or KiB, MiB, GiB, TiB
 * (powers of 1024); KB, MB, GB, TB (powers of 1000). "100MB" is 10^8
 * bytes, "100M" and "100 MiB" 100 * 2^20; python/peakbpf/_units.py reads
 * the same (tests/unit/size_table.txt).
 * Returns 0 and sets *bytes, or -EINVAL (malformed) / -ERANGE (overflow).
 */
int parse_size(const char *s, uint64_t *bytes);

/*
 * Parse a duration: a positive number with a unit: us, ms, s, m (minutes);
 * a bare number means seconds. "1.5s", "250ms", "2m".
 * Returns 0 and sets *ns, or -EINVAL / -ERANGE.
 */
int parse_duration(const char *s, uint64_t *ns);

/*
 * Parse a comma-separated list of PIDs ("12,345"): each a decimal integer in
 * [1, INT32_MAX]; no empty items, no duplicates. Fills pids (up to max) and
 * *count. Returns 0, -EINVAL (malformed, zero, negative), -ERANGE (too big),
 * -E2BIG (more than max), -EEXIST (duplicate).
 */
int parse_pid_list(const char *s, pid_t *pids, size_t max, size_t *count);

/*
 * Print bytes in binary units with one decimal ("512.3 MiB", "4.0 KiB",
 * "812 B" below 1 KiB) into buf. Returns buf.
 */
const char *format_bytes(uint64_t bytes, char *buf, size_t len);

/* Print a duration in ns as "1.234 s", "12.3 ms", "850 us". Returns buf. */
const char *format_duration(uint64_t ns, char *buf, size_t len);

#endif
