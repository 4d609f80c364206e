/* SPDX-License-Identifier: MIT */
/*
 * What the session's two files share: session_open.c chooses and opens the
 * sources, session.c drives them through a run.
 */
#ifndef PEAKBPF_SESSION_INTERNAL_H
#define PEAKBPF_SESSION_INTERNAL_H

#include <stdint.h>
#include "host.h"
#include "session.h"

#define SESSION_MAX_SOURCES 4
#define SESSION_MAX_NOTES 8
#define SESSION_NOTE_LEN 320 /* a note is one line: the cause and its fix */

struct session {
	struct source *sources[SESSION_MAX_SOURCES];    /* best first */
	size_t n_sources;
	/* The source that tracks the tree in the kernel, also in sources[]:
	 * bpf here, or through peakbpf serve; NULL: neither is open. */
	struct source *kernel;
	char notes[SESSION_MAX_NOTES][SESSION_NOTE_LEN];
	const char *note_ptrs[SESSION_MAX_NOTES];       /* notes[], as a record lists them */
	size_t n_notes;
	/* In source order, as sources[]. */
	struct figure figures[SESSION_MAX_SOURCES];     /* the last window */
	struct figure run_figures[SESSION_MAX_SOURCES]; /* every window so far, folded */
	unsigned windows;               /* closed so far */
	struct figure others[SESSION_MAX_SOURCES];      /* a record's others */
	struct host_facts host;
	struct bpf_counters counters;
	/* The tree's unique memory: a source's (source_ops.unique_window),
	 * else not measured because of unique_why. */
	char unique_why[256];
	bool unique_wanted;             /* the tree has a cgroup of its own (open_auto) */
	bool unique_taken;              /* a source took the tree's cgroup (unique_open) */
	bool measure_unique;
	struct figure unique_fig, unique_run;
};

/* A note of why a source was not used, or was dropped (printf-like). */
void session_note_add(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Add src after the others (best first); destroyed when there is no room. */
void session_add_source(struct session *s, struct source *src);

#endif
