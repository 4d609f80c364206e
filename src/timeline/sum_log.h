/* SPDX-License-Identifier: MIT */
/*
 * The exact record of the tree sum during a run, for --timeline, the
 * library's timeline and --compare-sampler: a sink its owner (the CLI, or
 * libpeakbpf) feeds with every change the kernel recorded, as it drains
 * them; each goes into the bounded timeline (timeline.h),
 * the mm that changed onto its per-process line, and the sum into the
 * sampler model's capped trace (sampler_model.h, TRACE_MAX_POINTS).
 *
 * Memory: the timeline with its lines (at most TIMELINE_MAX_BYTES) and the
 * sampler's trace (at most TRACE_MAX_POINTS points). Changes go straight
 * from the kernel's ring into them: nothing grows with the run.
 */
#ifndef PEAKBPF_SUM_LOG_H
#define PEAKBPF_SUM_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "sampler_model.h"
#include "timeline.h"

/* The owner's lookup of who uses mm (with tgid): its PID as the owner sees
 * it and comm, for a new line's label. 0, or non-zero when unknown. */
typedef int (*sum_log_identify_fn)(void *ctx, uint64_t mm, uint32_t tgid, uint32_t *pid,
				      char comm[16]);

struct sum_log {
	struct sum_trace sampler;       /* --compare-sampler's trace */
	bool sampling;
	bool keep_timeline;             /* --timeline, or the library's */
	struct timeline timeline;
	sum_log_identify_fn identify;        /* labels for new lines; NULL: by tgid */
	void *identify_ctx;
	const char *path;               /* --timeline FILE, or NULL */
	FILE *out;                      /* opened before the run, written at its end */
	bool created;                   /* out is new: a failed run removes it */
	char title[256];                /* the command, or the PIDs */
	/* --record: every change drained is also passed here */
	void (*on_change)(void *ctx, int64_t pages);
	void *on_change_ctx;
};

/*
 * Before the run: open path (NULL: no timeline) so that a bad one fails
 * first, and say what is recorded. argv (command mode) or pids name the
 * run. 0, or a negative errno and a one-line message on stderr.
 */
int sum_log_open(struct sum_log *r, const char *path, bool sampling,
		    char *const *argv, const pid_t *pids, size_t n_pids);
/* Keep a timeline without a file (the library): sum_log_write writes it
 * on demand. Call between sum_log_open and sum_log_begin. */
void sum_log_keep_timeline(struct sum_log *r);
/* The run begins: the sum is start_pages at t0_ns. */
void sum_log_begin(struct sum_log *r, uint64_t t0_ns, int64_t start_pages, long page_size);
/* Who labels the lines: fn(ctx, ...) as each one starts. */
void sum_log_set_identify(struct sum_log *r, sum_log_identify_fn fn, void *ctx);
/* One change of the sum, fed by the owner in the order of the kernel's
 * record: the sum after it, and the mm that changed (tgid uses it) with
 * its rss after it. 0, or -ENOMEM when a line or point was not kept. */
int sum_log_change(struct sum_log *r, uint64_t mono_ns, int64_t sum_pages, uint64_t mm,
		      int64_t mm_pages, uint32_t tgid);
/* A window closed at ns: a phase mark. */
void sum_log_window(struct sum_log *r, uint64_t ns, unsigned window);
/* The timeline so far, ended at end_ns, with this peak marked (0 bytes:
 * the largest value recorded), into path in its extension's format.
 * Callable again later. 0, or a negative errno and a reason in err. */
int sum_log_write(struct sum_log *r, const char *path, uint64_t end_ns, uint64_t peak_bytes,
		     uint64_t peak_ns, char *err, size_t errlen);
/* A phase mark with the caller's label. */
void sum_log_mark(struct sum_log *r, uint64_t ns, const char *label);
/* The run ended at end_ns with this peak: mark it, write --timeline's
 * file. 0, or a negative errno and a one-line message on stderr. */
int sum_log_finish(struct sum_log *r, uint64_t end_ns, uint64_t peak_bytes, uint64_t peak_ns);
/* Frees it all; a --timeline file opened but not written (the run failed
 * before its end) is removed. */
void sum_log_free(struct sum_log *r);

/* -r: each run rewrites the timeline; its title says which one it draws. */
void sum_log_name_run(struct sum_log *r, bool warmup, unsigned index, unsigned count);

#endif
