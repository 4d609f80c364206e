/* SPDX-License-Identifier: MIT */
/* CLOCK_MONOTONIC in ns: the clock of the BPF side's timestamps
 * (bpf_ktime_get_ns), so userspace and kernel times compare. */
#ifndef PEAKBPF_CLOCK_H
#define PEAKBPF_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
