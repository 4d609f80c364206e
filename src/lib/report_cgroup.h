/* SPDX-License-Identifier: MIT */
/* The record's cgroup parts, for report.c: a cgroup figure's members, its
 * headroom line, a cgroup target's membership counts. */
#ifndef PEAKBPF_REPORT_CGROUP_H
#define PEAKBPF_REPORT_CGROUP_H

#include <stdio.h>
#include "figure.h"
#include "source.h"

struct json_writer;

/* "cgroup", "exclusive", "cgroup_entry", "limit_bytes", "headroom_bytes". */
void json_cgroup(struct json_writer *w, const struct figure *f);
/* "; limit L, headroom H at its peak" (or "over it"). */
void human_headroom(const struct figure *f, FILE *out);
/* counters.cgroup_target. */
void json_cgroup_target(struct json_writer *w, const struct bpf_counters *c);

#endif
