/* SPDX-License-Identifier: MIT */
/*
 * What the tracker's own parts share, and nothing outside src/lib/kernel
 * uses: tracker.c loads the object and closes windows, holders.c reads who
 * held the peak from its maps, unique.c reads the unique program's state.
 */
#ifndef PEAKBPF_TRACKER_INTERNAL_H
#define PEAKBPF_TRACKER_INTERNAL_H

#include "tracker_api.h"

/* Who held memory at peak `peak` of window w (holders.c). */
int tracker_holders_at_peak(struct tracker *t, __u64 w, __s64 peak, __u64 departed_since,
			    struct holder *out, size_t max, struct holders_info *info);
/* The loaded object, the departed ring and its count (holders.c). */
struct bpf_object *tracker_object(struct tracker *t);
const struct departed_mm *tracker_departed(struct tracker *t);
__u64 tracker_departed_seq(struct tracker *t);
/* The loaded skeleton (unique.c reads its unique program's state). */
struct tracker_bpf *tracker_skeleton(struct tracker *t);
/* The unique program: 0 loaded and attached; -ENODATA not asked for;
 * -EOPNOTSUPP no memcg statistic tracepoint; else its load error. */
int tracker_unique_err(const struct tracker *t);

#endif
