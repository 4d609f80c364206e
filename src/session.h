/* SPDX-License-Identifier: MIT */
/*
 * A measurement session: the sources chosen for this run, driven together
 * through their lifecycle (add roots, start, close windows, end).
 */
#ifndef PEAKBPF_SESSION_H
#define PEAKBPF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include "report.h"
#include "source.h"

enum source_choice {
	SOURCE_AUTO,
	SOURCE_BPF,
	SOURCE_CGROUP,
	SOURCE_PROC,
	SOURCE_RUSAGE,
};

struct session_opts {
	enum source_choice source;
	bool command_mode;
	uint32_t max_tracked;
	uint64_t sample_interval_ns;    /* proc sampler; 0: 100 ms */
	const char *cgroup_root;        /* NULL: $PEAKBPF_CGROUP_ROOT or /sys/fs/cgroup */
	uint32_t record_ring_bytes;     /* bpf: record every change of the sum (--compare-sampler) */
	bool with_proc;                 /* also run the /proc sampler beside bpf */
};

#define SESSION_MAX_SOURCES 4
#define SESSION_MAX_NOTES 8

struct session {
	struct source *sources[SESSION_MAX_SOURCES];    /* best first */
	size_t n_sources;
	struct source *bpf;             /* also in sources[], when open */
	char notes[SESSION_MAX_NOTES][192];
	const char *note_ptrs[SESSION_MAX_NOTES];       /* why better sources were not used */
	size_t n_notes;
	struct figure figures[SESSION_MAX_SOURCES];     /* last window, in source order */
	struct figure others[SESSION_MAX_SOURCES];
	struct host_facts host;
	struct bpf_counters counters;
};

/*
 * Open the sources for opts->source. With a named source that cannot be
 * used, fails with -errno and a one-line reason in why; with auto, falls
 * back and records why each better source was not used.
 */
int session_open(const struct session_opts *o, struct session **out, char *why, size_t whylen);
/* Enter a root into every source. A secondary source that cannot take it
 * is dropped (and noted); the primary's failure is returned. */
int session_add_root(struct session *s, pid_t pid);
int session_start(struct session *s);
/* Close the window in every source; rec->primary is the best measured
 * figure, rec->others the rest. rec's pointers stay valid until the next call. */
int session_close_window(struct session *s, struct record *rec);
/* Counters, host facts and notes, for a record built by the caller. */
void session_fill_context(struct session *s, struct record *rec);
void session_command_exited(struct session *s, pid_t pid, const struct rusage *ru);
/* Processes of the tree alive now (bpf only), or -1 when unknown. */
int64_t session_procs_live(struct session *s);
void session_close(struct session *s);

#endif
