/* SPDX-License-Identifier: MIT */
/*
 * A bounded timeline of the tree sum: the smallest and largest value in
 * each time bucket, so that no spike disappears when time is coarsened.
 *
 * Buckets are dense: bucket i covers [start + i w, start + (i + 1) w). A
 * value holds until the next change (a step function), so a bucket with no
 * change in it holds the value carried from before. When a value would land
 * in bucket max_buckets, adjacent pairs are merged (min of mins, max of
 * maxes) and w doubles, as often as needed. Every bucket's max is the
 * largest value the sum had in it: the timeline's largest max is the peak of
 * every value fed, at any width.
 *
 * Memory: max_buckets x 16 bytes of buckets (allocated as they are reached)
 * plus the struct (its marks inline): at most TIMELINE_MAX_BYTES for any
 * run length; 24 h at the default cap ends with buckets of about 2.1 s.
 */
#ifndef PEAKBPF_TIMELINE_H
#define PEAKBPF_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TIMELINE_MAX_BUCKETS 65536U     /* the default cap, a power of two */
#define TIMELINE_FIRST_WIDTH_NS 1000U   /* 1 us: doubled as the run grows */
#define TIMELINE_MAX_MARKS 1024U        /* later marks are counted, not kept */
#define TIMELINE_LABEL_LEN 32
#define TIMELINE_MAX_BYTES (4U << 20)   /* the stated bound: 4 MiB */

struct tl_bucket {
	int64_t min, max;
};

enum tl_mark_kind {
	TL_MARK_WINDOW,         /* a window closed (-i, SIGUSR1): a phase boundary */
	TL_MARK_PEAK,           /* the reported peak */
};

struct tl_mark {
	uint64_t ns;
	enum tl_mark_kind kind;
	int64_t value;          /* TL_MARK_PEAK: the peak, in units */
	char label[TIMELINE_LABEL_LEN];
};

struct timeline {
	uint64_t start_ns;      /* bucket 0 begins here */
	uint64_t end_ns;        /* the last instant the timeline covers */
	uint64_t width_ns;      /* every bucket's width */
	uint64_t unit_bytes;    /* bytes per value unit: the page size (1 when loaded) */
	size_t max_buckets;     /* the cap, a power of two >= 2 */
	struct tl_bucket *b;
	size_t n, cap;          /* buckets in use, allocated (cap <= max_buckets) */
	bool has_value;
	int64_t last;           /* the value now */
	int64_t peak;           /* the largest value fed ... */
	uint64_t peak_ns;       /* ... first reached here */
	struct tl_mark marks[TIMELINE_MAX_MARKS];
	size_t n_marks;
	uint64_t marks_dropped;
};

enum tl_format {
	TL_FORMAT_NONE = -1,
	TL_FORMAT_JSON,
	TL_FORMAT_CSV,
	TL_FORMAT_SVG,
	TL_FORMAT_HTML,
};

/* The format a file name's extension names (case-insensitive), or NONE:
 * .json, .csv, .svg, .html (timeline_export.h writes them). */
enum tl_format timeline_format_of(const char *path);

/* Start empty at start_ns. max_buckets 0: TIMELINE_MAX_BUCKETS; else a
 * power of two >= 2 (tests use small ones). 0 or -EINVAL. */
int timeline_init(struct timeline *t, uint64_t start_ns, uint64_t unit_bytes, size_t max_buckets);
/* The sum is value from ns on. An instant before the start or before the
 * last change is taken as that time (two CPUs' events can arrive swapped).
 * 0 or -ENOMEM (the timeline is unchanged). */
int timeline_add(struct timeline *t, uint64_t ns, int64_t value);
/* The run ends at ns: the last value is carried up to it. 0 or -ENOMEM. */
int timeline_end(struct timeline *t, uint64_t ns);
/* A mark; label is cut to fit. Beyond TIMELINE_MAX_MARKS, counted only. */
void timeline_mark(struct timeline *t, uint64_t ns, enum tl_mark_kind kind, int64_t value,
		   const char *label);
/* The smallest min and largest max of the buckets that overlap [from, to)
 * (at least the bucket holding from). false when the timeline is empty. */
bool timeline_range(const struct timeline *t, uint64_t from, uint64_t to,
		    int64_t *min, int64_t *max);
/* The largest bucket max (the plotted peak) and its bucket's start. */
bool timeline_max(const struct timeline *t, int64_t *max, uint64_t *at_ns);
/* The peak to mark: the reported one (the last TL_MARK_PEAK), else the
 * largest value fed and its first instant. false when there is neither. */
bool timeline_peak(const struct timeline *t, uint64_t *ns, int64_t *value);
/* ns since the start (0 before it). */
uint64_t timeline_since(const struct timeline *t, uint64_t ns);
/* A value in bytes (0 for a negative one). */
uint64_t timeline_bytes(const struct timeline *t, int64_t value);
/* What the timeline holds in memory: the struct and its buckets. */
size_t timeline_memory_bytes(const struct timeline *t);
void timeline_free(struct timeline *t);

#endif
