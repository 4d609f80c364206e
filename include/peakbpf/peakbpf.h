/* SPDX-License-Identifier: MIT */
/*
 * libpeakbpf: the exact peak memory (summed RSS) of a process tree,
 * measured in the kernel. See libpeakbpf(3).
 *
 *	struct peakbpf_session *s;
 *	struct peakbpf_figure *f;
 *	uint64_t growth;
 *
 *	peakbpf_open(NULL, &s, NULL, 0);        // auto: bpf, else a labelled fallback
 *	peakbpf_add_self(s);                    // this process and its descendants
 *	peakbpf_start(s);                       // the first window opens
 *	work();
 *	peakbpf_close_window(s, &f);            // its figure; the next window opens
 *	if (peakbpf_figure_growth(f, &growth) == 0) ...
 *	peakbpf_figure_free(f);
 *	peakbpf_close(s);
 *
 * Every function that can fail returns 0 or a negative errno; none prints
 * or exits. A figure that was not measured answers -ENODATA, never 0.
 *
 * Threads: a session is not locked. One session per thread is safe; a
 * session shared between threads needs the caller's lock. Figures are
 * independent of their session and of each other.
 *
 * Privileges: the bpf source needs root, or CAP_BPF and CAP_PERFMON, and a
 * kernel with BTF. With PEAKBPF_SOURCE_AUTO a session falls back to a
 * cgroup's peak, a /proc sampler or getrusage, and every figure names its
 * source and says whether it is exact.
 */
#ifndef PEAKBPF_PEAKBPF_H
#define PEAKBPF_PEAKBPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PEAKBPF_API __attribute__((visibility("default")))

enum peakbpf_source {
	PEAKBPF_SOURCE_AUTO = 0,        /* bpf (here, else through peakbpf serve) > cgroup (own)
					   > proc > cgroup (shared) */
	PEAKBPF_SOURCE_BPF,
	PEAKBPF_SOURCE_CGROUP,
	PEAKBPF_SOURCE_PROC,
	PEAKBPF_SOURCE_RUSAGE,          /* the CLI's, for a command it runs: a library
					   session refuses it (-EOPNOTSUPP) */
};

/*
 * What a figure counts. RSS: summed RSS, a page once per process that maps
 * it. UNIQUE: each page once, from the tree's own cgroup; only the CLI's
 * command mode gives a tree a cgroup of its own, so a library session
 * (which attaches) refuses it with -EOPNOTSUPP and says so.
 */
enum peakbpf_measure {
	PEAKBPF_MEASURE_RSS = 0,
	PEAKBPF_MEASURE_UNIQUE,
};

/*
 * Options, libbpf-style: set sz to sizeof(struct peakbpf_opts) (the
 * PEAKBPF_OPTS macro does), zero what you do not set. Fields are only ever
 * added at the end; a library older than the caller refuses non-zero
 * fields it does not know with -E2BIG.
 */
struct peakbpf_opts {
	size_t sz;
	enum peakbpf_source source;
	uint32_t max_tracked;           /* bpf: processes and mms tracked; 0: default */
	uint64_t sample_interval_ns;    /* proc sampler; 0: 100 ms */
	const char *cgroup_root;        /* NULL: $PEAKBPF_CGROUP_ROOT or /sys/fs/cgroup */
	bool libbpf_log;                /* true: leave libbpf's messages on (stderr by default) */
	bool timeline;                  /* bpf: record the tree's timeline (peakbpf_timeline_write) */
	enum peakbpf_measure measure;   /* RSS (0); UNIQUE: -EOPNOTSUPP, see above */
};

#define PEAKBPF_OPTS(name, ...) \
	struct peakbpf_opts name = { .sz = sizeof(struct peakbpf_opts), __VA_ARGS__ }

struct peakbpf_session;                 /* opaque */
struct peakbpf_figure;                  /* opaque: a closed window's figure */

/* A process that held memory at the peak (bpf only). */
struct peakbpf_holder {
	int32_t pid;                    /* in the caller's PID namespace; 0: not visible there */
	char comm[16];
	uint64_t bytes;                 /* its RSS at the peak */
	uint64_t own_peak_bytes;        /* its own largest RSS so far */
};

/* "0.1.0" */
PEAKBPF_API const char *peakbpf_version(void);

/*
 * Open a session; opts may be NULL (auto). A named source that cannot be
 * used fails with a negative errno and a one-line reason naming the fix in
 * why (may be NULL). With auto the session always opens; peakbpf_note says
 * why better sources were not used.
 */
PEAKBPF_API int peakbpf_open(const struct peakbpf_opts *opts, struct peakbpf_session **out,
			     char *why, size_t why_len);
/* Measure process pid (in the caller's PID namespace), its threads and every
 * descendant, those alive now and those forked later. -ESRCH: no such
 * process. Call before peakbpf_start. */
PEAKBPF_API int peakbpf_add_pid(struct peakbpf_session *s, pid_t pid);
/* The same for the calling process itself and its descendants. */
PEAKBPF_API int peakbpf_add_self(struct peakbpf_session *s);
/* Open the first window: its baseline is the tree's memory now. */
PEAKBPF_API int peakbpf_start(struct peakbpf_session *s);
/* Close the open window, give its figure (free it with
 * peakbpf_figure_free), and open the next: nothing between is lost. */
PEAKBPF_API int peakbpf_close_window(struct peakbpf_session *s, struct peakbpf_figure **out);
/* Every window closed so far, folded: the largest peak, the first baseline. */
PEAKBPF_API int peakbpf_run_figure(struct peakbpf_session *s, struct peakbpf_figure **out);
/* The session's best source: "bpf", "cgroup", "proc", "rusage", or
 * "unavailable" (none could be used). Valid until peakbpf_close. */
PEAKBPF_API const char *peakbpf_session_source(const struct peakbpf_session *s);
/* Note i (from 0): why a better source was not used, or one was dropped;
 * NULL past the last. Valid until peakbpf_close. */
PEAKBPF_API const char *peakbpf_note(const struct peakbpf_session *s, size_t i);
/* Unload everything; NULL is fine. Figures stay valid. A session belongs
 * to the process that opened it: a forked child opens its own. */
PEAKBPF_API void peakbpf_close(struct peakbpf_session *s);

/*
 * ---- the timeline (a session opened with opts.timeline, bpf only) ----
 * Every change of the tree sum goes into a bounded min/max timeline (at most
 * 4 MiB for any run length) with lines for the top holders, windows marked
 * where they close. The kernel keeps the changes in a buffer of about 175 k
 * until they are taken: a busy tree needs peakbpf_timeline_poll every few
 * tens of ms (the Python binding polls from a thread); changes lost to a
 * full buffer are counted (peakbpf_timeline_drops). Each returns 0 or a
 * negative errno; -ENODATA: the session records no timeline.
 */
/* Take the changes recorded since the last call. */
PEAKBPF_API int peakbpf_timeline_poll(struct peakbpf_session *s);
/* A phase mark now, with a label (cut to 31 bytes). */
PEAKBPF_API int peakbpf_timeline_mark(struct peakbpf_session *s, const char *label);
/* Write the timeline so far to path, in the format its extension names:
 * .json (Chrome/Perfetto trace events), .csv, .svg or .html (self-contained
 * page). The peak marked is the run's (the closed windows'), else the
 * largest value recorded. -EINVAL: another extension. */
PEAKBPF_API int peakbpf_timeline_write(struct peakbpf_session *s, const char *path);
/* Changes lost so far because the buffer was full (0: the timeline has
 * every change). */
PEAKBPF_API int peakbpf_timeline_drops(const struct peakbpf_session *s, uint64_t *n);

/* ---- a figure ---- */
/* Each of these returns 0, or -ENODATA when the figure does not have it. */
PEAKBPF_API int peakbpf_figure_peak(const struct peakbpf_figure *f, uint64_t *bytes);
PEAKBPF_API int peakbpf_figure_baseline(const struct peakbpf_figure *f, uint64_t *bytes);
/* peak - baseline: what the window added (0 when the peak is the baseline). */
PEAKBPF_API int peakbpf_figure_growth(const struct peakbpf_figure *f, uint64_t *bytes);
/* When the peak was reached, CLOCK_MONOTONIC ns (bpf only). */
PEAKBPF_API int peakbpf_figure_peak_time(const struct peakbpf_figure *f, uint64_t *mono_ns);
/* What was resident at the peak, by kind, and in how many processes (bpf only). */
PEAKBPF_API int peakbpf_figure_breakdown(const struct peakbpf_figure *f, uint64_t *anon,
					 uint64_t *file, uint64_t *shmem, int64_t *processes);
/* How far the peak may be off: 0 when exact; -ENODATA when unknown. */
PEAKBPF_API int peakbpf_figure_error_bound(const struct peakbpf_figure *f, uint64_t *bytes);
PEAKBPF_API bool peakbpf_figure_exact(const struct peakbpf_figure *f);
/* Why the figure is not exact (or not measured); NULL when exact. */
PEAKBPF_API const char *peakbpf_figure_reason(const struct peakbpf_figure *f);
/* "bpf", "cgroup-v2", "cgroup-v1", "proc", "rusage" or "unavailable". */
PEAKBPF_API const char *peakbpf_figure_source(const struct peakbpf_figure *f);
/* What the figure covers, e.g. "summed RSS of the tree, ...". */
PEAKBPF_API const char *peakbpf_figure_scope(const struct peakbpf_figure *f);
/* The window's number (from 1), or 0 for peakbpf_run_figure's. */
PEAKBPF_API unsigned peakbpf_figure_window(const struct peakbpf_figure *f);
/* Holders at the peak, largest first (bpf only; at most 32 listed). */
PEAKBPF_API size_t peakbpf_figure_holder_count(const struct peakbpf_figure *f);
PEAKBPF_API int peakbpf_figure_holder(const struct peakbpf_figure *f, size_t i,
				      struct peakbpf_holder *out);
/* The figures of the other sources read in the same window; each is a
 * figure owned by f (do not free it), without others of its own. */
PEAKBPF_API size_t peakbpf_figure_other_count(const struct peakbpf_figure *f);
PEAKBPF_API const struct peakbpf_figure *peakbpf_figure_other(const struct peakbpf_figure *f, size_t i);
/*
 * The figure as one JSON object (the CLI's record: source, exact,
 * error_bound_bytes, peak/baseline/growth_bytes, other_sources, ...; null
 * where not measured), NUL-terminated, like snprintf: returns the length it
 * needs (without the NUL) or a negative errno; truncates to len.
 */
PEAKBPF_API int peakbpf_figure_json(const struct peakbpf_figure *f, char *buf, size_t len);
PEAKBPF_API void peakbpf_figure_free(struct peakbpf_figure *f);

#ifdef __cplusplus
}
#endif

#endif
