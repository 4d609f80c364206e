/* SPDX-License-Identifier: MIT */
/*
 * libpeakbpf's figures (libpeakbpf_figure.c; the public side is
 * include/peakbpf/peakbpf.h): how the session half makes one from a
 * report. The figure knows nothing of the session.
 */
#ifndef PEAKBPF_LIBPEAKBPF_FIGURE_H
#define PEAKBPF_LIBPEAKBPF_FIGURE_H

#include <stdint.h>
#include <peakbpf/peakbpf.h>
#include "report.h"

/* A report copied into a figure that owns everything it points to, of the
 * window [start_ns, end_ns] of a run that began at t0_ns (CLOCK_MONOTONIC);
 * NULL: out of memory. */
struct peakbpf_figure *lib_figure_from(const struct report *rec, uint64_t t0_ns, uint64_t start_ns,
				       uint64_t end_ns);

#endif
