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
#include <peakbpf/peakbpf.h>
#include "report.h"
#include "source.h"


struct session_opts {
	enum peakbpf_source source;     /* the public API's: AUTO, or the one source to use */
	bool command_mode;
	uint32_t max_tracked;
	uint64_t sample_interval_ns;    /* proc sampler; 0: 100 ms */
	const char *cgroup_root;        /* NULL: $PEAKBPF_CGROUP_ROOT or /sys/fs/cgroup */
	uint32_t record_ring_bytes;     /* bpf: record every change of the sum (the record of the sum) */
	bool with_proc;                 /* also run the /proc sampler beside bpf */
	/* peakbpf serve: the bpf source through the helper at helper_path
	 * (NULL: $PEAKBPF_HELPER or /run/peakbpf.sock), used whenever its
	 * socket answers and the session asks nothing it does not serve
	 * (--measure unique), root included; always with
	 * use_helper; never with no_helper (loaded here instead). */
	const char *helper_path;
	bool use_helper;
	bool no_helper;
	bool measure_unique;            /* --measure unique: the unique figure is the primary */
	/* Keep this process's BPF load when the session closes, for the next
	 * session (bpf_source_open: one load per process). */
	bool keep_loaded;
	bool stacks;                    /* bpf here: --stacks' programs and ring */
	/* No cgroup target will be added (session_add_cgroup,
	 * session_exclude_cgroup): the bpf source loads without their programs. */
	bool no_cgroup_targets;
};

/* Whether source names one the session can open. */
bool session_source_known(enum peakbpf_source source);

/* Opaque: read it through the functions below. */
struct session;
struct sum_trace;

/*
 * Open the sources for opts->source. With a named source that cannot be
 * used, fails with -errno and a one-line reason in why; with auto, falls
 * back and records why each better source was not used.
 */
int session_open(const struct session_opts *o, struct session **out, char *why, size_t whylen);
/* Enter a root into every source. A secondary source that cannot take it
 * is dropped (and noted); the primary's failure is returned. */
int session_add_root(struct session *s, pid_t pid);
/* A cgroup target instead of roots: the processes of the cgroup open as
 * cgroup_dir_fd and of its descendants (the fd stays the caller's). A
 * secondary source without the operation, or that fails, is dropped (and
 * noted); the primary's failure is returned (-EOPNOTSUPP: it has none). */
int session_add_cgroup(struct session *s, int cgroup_dir_fd, int except_dir_fd);
/* Processes of the tree that enter the cgroup open as cgroup_dir_fd leave
 * it (the bpf source; -EOPNOTSUPP without one that can). */
int session_exclude_cgroup(struct session *s, int cgroup_dir_fd, int except_dir_fd);
/* Everything is entered: the first window opens in every source (the same
 * rule for a source that cannot start). */
int session_start(struct session *s);
/*
 * Close the window in every source, and fold each source's figure into its
 * whole-run figure. rec->window is the window's number (from 1),
 * rec->primary the best measured figure, rec->others the rest, beside the
 * context (counters, host facts, notes). rec's pointers stay valid until
 * the next session_close_window or session_fill_run.
 */
int session_close_window(struct session *s, struct report *rec);
/* The same for the whole run so far, from the windows closed until now;
 * rec->windows is how many. */
void session_fill_run(struct session *s, struct report *rec);
/* Command mode: the command has exec'd. */
void session_command_started(struct session *s, pid_t pid);
void session_command_exited(struct session *s, pid_t pid, const struct rusage *ru);
/* Command mode: the first source's command_fork, or fork(). */
pid_t session_command_fork(struct session *s);
/* Processes of the tree alive now (bpf only), or -1 when unknown. */
int64_t session_procs_live(struct session *s);
/* Whether the bpf source is open: the exact figure, and the record of the
 * sum (--timeline, --compare-sampler, --record, the library's timeline). */
bool session_has_bpf(const struct session *s);
/* How the bpf source came (host_facts.bpf_load): "loaded", "reused",
 * "helper"; NULL: none. */
const char *session_bpf_load(const struct session *s);
/* The helper's reason for refusing the last request ("" if none), or
 * NULL when the session does not use the helper. */
const char *session_helper_why(const struct session *s);
/* Note i (from 0): a source not used, dropped, or used only as a last
 * resort, and why; NULL past the last. */
const char *session_note(const struct session *s, size_t i);
/* The best source's name ("bpf", "cgroup", "proc", "rusage"), or
 * "unavailable" when none could be used. */
const char *session_source_name(const struct session *s);
/*
 * --timeline, --compare-sampler: hand every change of the tree sum recorded
 * since the last call to fn (struct sum_event, bpf/tracker.h), and the
 * changes lost so far to *drops. -EOPNOTSUPP without the bpf source.
 */
struct sum_event;
int session_drain_sums(struct session *s, source_sum_fn fn, void *ctx, uint64_t *drops);
/* Who uses the mm a sum_event names: PID in peakbpf's namespace (0 if not
 * visible) and comm (16 bytes). -ENOENT unknown, -EOPNOTSUPP without bpf. */
int session_mm_identity(struct session *s, uint64_t key, uint32_t tgid, uint32_t *vpid, char *comm);
/* The tree sum (pages) when the open window began: where a record of the
 * sum starts. 0 without the bpf source. */
int64_t session_window_start_pages(struct session *s);
void session_close(struct session *s);

#endif
