/* SPDX-License-Identifier: MIT */
/*
 * Before 6.2, the userspace side of the bound of the per-thread rss caches
 * (tracker_pre62.c; docs/design.md, "The bound before 6.2"). Below the
 * tracker's two types: it is handed the skeleton. On 6.2+ nothing calls it.
 */
#ifndef PEAKBPF_TRACKER_PRE62_H
#define PEAKBPF_TRACKER_PRE62_H

#include <linux/types.h>

struct tracker_bpf;

/* The closing window's upper end of tree, the sum at the cut being sum;
 * the next window's opens at sum + the charges. ncpu: possible CPUs;
 * fault_pages: the most pages one fault caches. */
__s64 tracker_pre62_cut(struct tracker_bpf *s, unsigned tree, int ncpu, unsigned fault_pages,
			__s64 sum);
/* A tree's slot is cleared (its threads have gone from the map). */
void tracker_pre62_clear(struct tracker_bpf *s, unsigned tree);

#endif
