/* SPDX-License-Identifier: MIT */
/*
 * --stacks' output (docs/stacks.md): the shadow cut at the peak, grouped
 * by (process, stack), named (stacks_sym.h) and written as folded stacks
 * ("comm;outer;...;inner BYTES", which flamegraph.pl and speedscope read),
 * with the rest of the peak in named buckets ("[not attributed];[why]
 * BYTES"), so that the lines add up to the peak; or the same lines as
 * speedscope JSON (stacks_speedscope.h); and a summary.
 */
#ifndef PEAKBPF_STACKS_FOLD_H
#define PEAKBPF_STACKS_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct stacks_reader;

/* The formats of the file (docs/stacks.md, "Speedscope JSON"). */
enum stacks_format {
	STACKS_FORMAT_FOLDED,
	STACKS_FORMAT_SPEEDSCOPE,
};

/* One line of the output: a (process, stack) of the cut, or a bucket. */
struct stacks_line {
	char *text;             /* "comm;outer;...;inner", ';' and ' ' in a name as '_' */
	char *names;            /* the same names as they are, outer first, each ending in '\0' */
	unsigned nnames;
	__u32 tgid;             /* 0 for a bucket */
	__u64 bytes;
};

/* The peak the stacks explain: the figure's, with its breakdown. */
struct stacks_peak {
	__u64 peak_ns;
	__u64 peak_bytes, anon_bytes, file_bytes, shmem_bytes;
	/* not_exact (before 6.2: docs/exactness.md): the true peak lies in
	 * [peak, peak + bound]; bound ~0: unknown; reason: the figure's. */
	bool not_exact;
	__u64 bound_bytes;
	const char *reason;
};

enum stacks_bucket {
	STACKS_BUCKET_ANON,     /* anon pages no decoded user fault placed */
	STACKS_BUCKET_FILE,
	STACKS_BUCKET_SHMEM,
	STACKS_BUCKET_LOST,     /* the exact part, when events were lost */
	STACKS_BUCKETS,
};

/* The split of the peak (every figure in bytes). exact + the buckets =
 * the peak, unless over_bytes > 0: the exact part then exceeds the anon
 * pages at the peak (removals it did not see), and is not exact. */
struct stacks_split {
	__u64 exact_bytes;
	__u64 bucket[STACKS_BUCKETS];
	__u64 over_bytes;
	__u64 lost_events;
	size_t groups;
};

/* Pure: the split from the exact part, the peak and the events lost. */
void stacks_split_of(__u64 exact_bytes, const struct stacks_peak *p, __u64 lost_events,
		     struct stacks_split *out);
const char *stacks_bucket_name(enum stacks_bucket b);

/* The file of the stacks: the windows' lines as they close (-i: each at
 * its own peak), in one format. */
struct stacks_file;

int stacks_file_open(FILE *out, enum stacks_format f, struct stacks_file **sf);
/* Cut r at p's instant, write the lines and the summary (up to top
 * stacks) to summary. window: NULL for a run of one window (the lines as
 * they are); else its name, a frame above each folded line or the
 * speedscope profile's name. 0 or -errno. */
int stacks_file_window(struct stacks_file *sf, struct stacks_reader *r, unsigned tree, const struct stacks_peak *p,
		       long page_size, const char *window, unsigned top, char *summary, size_t len,
		       struct stacks_split *split);
/* Which window, from 0, had the highest peak (the first of equals). */
size_t stacks_file_best(const struct stacks_file *sf);
/* The end of the file (speedscope: the frames, the best window's profile
 * the one shown first), and sf freed. 0 or -EIO; sf may be NULL. */
int stacks_file_close(struct stacks_file *sf);

/* One window's file: open, the window, close. */
int stacks_fold_write(struct stacks_reader *r, unsigned tree, const struct stacks_peak *p, long page_size,
		      enum stacks_format f, FILE *out, unsigned top, char *summary, size_t len,
		      struct stacks_split *split);

#endif
