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
 * Memory: max_buckets x 16 bytes of buckets (allocated as they are reached),
 * the marks (allocated as they come, at most TIMELINE_MAX_MARKS) and the
 * per-process lines (below, at most TL_TRACKS_MAX_BYTES): at most
 * TIMELINE_MAX_BYTES for any run length; 24 h at the default cap ends with
 * buckets of about 2.1 s.
 *
 * Per-process lines: each change of the sum names the mm that changed and
 * its own new total (timeline_track_add). A line is a timeline of its own
 * (the same min/max buckets, TL_TRACK_BUCKETS of them), started when the mm
 * is admitted. At most TL_TRACKS_MAX mms have a line: when all are taken, an
 * mm is admitted only once its total exceeds the smallest own peak among
 * them, and that line is dropped. So every mm among the TL_TRACKS_MAX
 * largest own peaks has a line when it reaches its peak, and keeps it:
 * the top holders' lines (timeline_top_tracks) reach their exact own peaks.
 * What a line lacks is its mm's time before admission, when it held less
 * than every line kept then.
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
#define TL_TRACKS_MAX 16U               /* mms with a line kept */
#define TL_TRACK_BUCKETS 8192U          /* each line's bucket cap: ~10.5 s buckets at 24 h */
#define TL_TOP 5U                       /* the lines the files draw: the largest own peaks */
#define TL_COMM_LEN 16
/* The lines' bound: the set and every line's buckets (2 MiB + the set). */
#define TL_TRACKS_MAX_BYTES (sizeof(struct tl_tracks) + \
			     (size_t)TL_TRACKS_MAX * TL_TRACK_BUCKETS * sizeof(struct tl_bucket))

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

/* --stacks at the peak (docs/stacks.md), for the page to show by the peak
 * marker: the file, what it holds, and its summary (the top stacks with
 * their bytes, the buckets); NULLs: none. Each at most TL_STACKS_TEXT_MAX. */
struct tl_stacks {
	char *path, *what, *summary;
};

#define TL_STACKS_TEXT_MAX 4096U

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
	struct tl_mark *marks;  /* n_marks of them (allocated as they come) */
	size_t n_marks, cap_marks;
	uint64_t marks_dropped;
	struct tl_tracks *tracks;       /* per-process lines; NULL: none */
	struct tl_stacks stacks;        /* timeline_set_stacks */
};

/* One mm's line: its own rss, from its admission on. */
struct tl_track {
	uint64_t key;                   /* the mm (the kernel's key) */
	uint32_t tgid;                  /* with the key, names the mm (keys are reused) */
	uint32_t pid;                   /* the label's PID (peakbpf's namespace); 0: tgid */
	char comm[TL_COMM_LEN];
	struct timeline line;           /* no marks, no tracks of its own */
};

struct tl_tracks {
	struct tl_track v[TL_TRACKS_MAX];
	size_t n, max;                  /* in use; the cap (tests lower it) */
	size_t max_buckets;             /* each line's */
	uint64_t admitted, evicted;     /* lines started, lines dropped for a larger mm */
};

/*
 * Every format of a timeline file: its id, its extension, and whether
 * `peakbpf plot` reads it back (timeline_load). A new format is a row here
 * and its writer in timeline_export.c's table.
 */
#define TL_FORMATS(X) \
	X(JSON, ".json", true) \
	X(CSV, ".csv", true) \
	X(SVG, ".svg", false) \
	X(HTML, ".html", false)

enum tl_format {
	TL_FORMAT_NONE = -1,
#define TL_FORMAT_ID(id, ext, loads) TL_FORMAT_##id,
	TL_FORMATS(TL_FORMAT_ID)
#undef TL_FORMAT_ID
	TL_FORMAT_COUNT
};

/* The format a file name's extension names (case-insensitive), or NONE. */
enum tl_format timeline_format_of(const char *path);
/* Whether timeline_load reads f back. */
bool timeline_format_loads(enum tl_format f);

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
/* Keep per-process lines: at most max_tracks (0: TL_TRACKS_MAX) of at most
 * track_buckets (0: TL_TRACK_BUCKETS, else a power of two >= 2) each.
 * 0, -EINVAL or -ENOMEM. */
int timeline_tracks_init(struct timeline *t, size_t max_tracks, size_t track_buckets);
/* At ns mm (key, tgid) holds pages: onto its line, admitting it if it has
 * none and either a line is free or pages exceed the smallest own peak
 * kept (that line is dropped). *admitted (may be NULL) gets the line when
 * it starts now, for the caller to label. 0 (also when not kept) or
 * -ENOMEM. Without timeline_tracks_init: 0, nothing kept. */
int timeline_track_add(struct timeline *t, uint64_t ns, uint64_t key, uint32_t tgid,
		       int64_t pages, struct tl_track **admitted);
/* Up to max lines with the largest own peaks, largest first (ties: the
 * earlier admitted). Returns how many. */
size_t timeline_top_tracks(const struct timeline *t, const struct tl_track **out, size_t max);
/* "PID comm" for a line's labels. */
void timeline_track_label(const struct tl_track *tr, char *buf, size_t len);
/* What the timeline holds in memory: the struct, its buckets, its marks
 * and its lines. */
size_t timeline_memory_bytes(const struct timeline *t);
/* The stacks at the peak: copies of path (the file, absolute for the
 * page's link), what ("folded stacks") and summary, each cut to
 * TL_STACKS_TEXT_MAX. 0 or -ENOMEM (none kept). */
int timeline_set_stacks(struct timeline *t, const char *path, const char *what, const char *summary);
void timeline_free(struct timeline *t);

#endif
