/* SPDX-License-Identifier: MIT */
/*
 * What libpeakbpf's two halves share: libpeakbpf.c (sessions) makes
 * figures, libpeakbpf_figure.c reads and renders them.
 */
#ifndef PEAKBPF_LIBPEAKBPF_INTERNAL_H
#define PEAKBPF_LIBPEAKBPF_INTERNAL_H

#include <stdbool.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <peakbpf/peakbpf.h>
#include "host.h"
#include "report.h"
#include "sum_record.h"
#include <linux/types.h>
#include "oom.h"

#define NOTES_MAX 8
#define NOTE_LEN 192
#define OTHERS_MAX 4

#define LIB_RING_BYTES (8U << 20)      /* the timeline's kernel buffer: ~175 k changes */
#define LIB_ROOTS_NAMED 8               /* the timeline's title names these */
struct peakbpf_session {
	struct session *s;
	bool started;
	uint64_t t0_ns;                 /* when the first window opened */
	uint64_t window_start_ns;       /* when the open window opened */
	bool timeline;                  /* opts.timeline, and the bpf source is open */
	bool command;                   /* opts.command: roots are our children before exec */
	struct sum_record rec;
	uint64_t record_drops;
	pid_t roots[LIB_ROOTS_NAMED];
	size_t n_roots;
	/* peakbpf_changes_drain: the caller's callback */
	peakbpf_change_fn change_fn;
	void *change_ctx;
	/* peakbpf_oom_victims: the tree's victims drained so far */
	struct oom_event *oom;
	size_t n_oom, cap_oom;
};

struct peakbpf_figure {
	struct figure fig;
	enum report_kind kind;
	bool other;                     /* another source's, inside a figure */
	unsigned window;                /* 0: the run's */
	unsigned windows;
	uint64_t t0_ns, start_ns, end_ns;
	struct peakbpf_figure *others;  /* n_others of them */
	size_t n_others;
	bool has_counters;
	struct bpf_counters counters;
	struct host_facts host;
	char notes[NOTES_MAX][NOTE_LEN];
	const char *note_ptrs[NOTES_MAX];
	size_t n_notes;
	/* the tree's unique memory, or why not (peakbpf_figure_format) */
	bool has_unique;
	struct figure unique;
	char unique_reason[256];           /* as long as the session's */
	char reason[FIGURE_REASON_MAX];    /* with the windows not measured (figure_reason) */
};

/* A record copied into a figure that owns everything it points to; NULL:
 * out of memory. */
struct peakbpf_figure *lib_figure_from(const struct report *rec, const struct peakbpf_session *p);
/* A caller's options struct of in_sz bytes into ours of out_sz,
 * libbpf-style: fields past in_sz are zero, and fields past ours must be
 * zero (-E2BIG); in_sz below a size_t: -EINVAL. Both halves take one. */
static inline int lib_copy_sized(const void *in, size_t in_sz, void *out, size_t out_sz)
{
	memset(out, 0, out_sz);
	if (!in)
		return 0;
	if (in_sz < sizeof(size_t))
		return -EINVAL;
	for (size_t i = out_sz; i < in_sz; i++)
		if (((const char *)in)[i])
			return -E2BIG;
	memcpy(out, in, in_sz < out_sz ? in_sz : out_sz);
	return 0;
}

#endif
