/* SPDX-License-Identifier: MIT */
/*
 * Who held each cgroup's memory at its window's peak (cgsum_holders.c),
 * for the per-cgroup sums (cgsum.c): every tracked mm's marks (struct
 * cg_mm, bpf/cgsum.h) and the departed ring's, read after the cut.
 * Below cgsum.c, which hands it the skeleton and the windows it cut.
 */
#ifndef PEAKBPF_CGSUM_HOLDERS_H
#define PEAKBPF_CGSUM_HOLDERS_H

#include "cgsum_api.h"

/* A slot's window just cut: its number and peak (id 0: no slot). */
struct cgsum_closed {
	__u64 id, window;
	__s64 peak;
};

/* departed_since: the departed ring's count when the windows began (those
 * that left before held nothing at their peaks). */
int cgsum_holders_read(struct tracker_bpf *skel, const struct cgsum_closed closed[CG_SLOTS], __u64 departed_since,
		       void (*fn)(void *ctx, const struct cgsum_holder *h), void *ctx);

#endif
