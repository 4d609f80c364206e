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
#include <sys/resource.h>
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
	PEAKBPF_SOURCE_RUSAGE,          /* a command's (opts.command): else refused
					   (-EOPNOTSUPP) */
};

/*
 * What a figure counts. RSS: summed RSS, a page once per process that maps
 * it. UNIQUE: each page once, from the tree's own cgroup; only command
 * mode (opts.command) gives a tree a cgroup of its own, so a session that
 * attaches refuses it with -EOPNOTSUPP and says so (or, with
 * opts.measure_fallback, measures summed RSS and notes why).
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
	enum peakbpf_measure measure;   /* RSS (0); UNIQUE: see above */
	/* ---- since 0.2 (PEAKBPF_0.2): what the CLI, peakbpf(1), asks ---- */
	/* The roots are commands the caller forked and holds stopped before
	 * exec: the cgroup source moves them into a cgroup of their own (an
	 * exclusive figure), UNIQUE can be measured, and getrusage figures
	 * come from peakbpf_command_exited. */
	bool command;
	bool with_proc;                 /* also run the /proc sampler beside bpf */
	/* bpf: record every change of the tree sum in a kernel ring of this
	 * many bytes (a power of 2 of pages), for peakbpf_changes_drain; 0:
	 * none. Not with .timeline, which takes the changes itself. */
	uint32_t changes_ring_bytes;
	/* The bpf source through peakbpf serve's socket at helper_path (NULL:
	 * $PEAKBPF_HELPER or /run/peakbpf.sock): used when bpf cannot be
	 * loaded here and the socket exists, or always with use_helper. */
	const char *helper_path;
	bool use_helper;
	/* UNIQUE without .command: open anyway; the headline is summed RSS
	 * and a note says why the unique memory was not measured. */
	bool measure_fallback;
	/* ---- since 0.3 (PEAKBPF_0.3): one load, a helper by default ---- */
	/* A helper (peakbpf serve) is used whenever its socket answers, root
	 * included (it serves the record of the sum and unique memory, UNIQUE
	 * included, since protocol versions 3 and 4): true loads the BPF
	 * programs here instead. */
	bool no_helper;
	/* Keep this process's BPF load when the session closes: the next
	 * session whose options fit it takes a tree of it instead of loading
	 * again (each session is still its own tree). peakbpf_unload drops it. */
	bool keep_loaded;
	/* ---- since 0.4 (PEAKBPF_0.4) ---- */
	/* The session takes no cgroup target: bpf loads without the programs
	 * of peakbpf_add_cgroup, _add_cgroup_except and _exclude_cgroup
	 * (these then fail with -EOPNOTSUPP), and starts faster. */
	bool no_cgroup_targets;
};

/* peakbpf_open, for a caller whose opts.sz covers .command (0.2): the
 * cgroup root was refused as unsafe (a symbolic link; as root, not root's
 * alone). Older callers get -EPERM. */
#define PEAKBPF_ERRNO_CGROUP_ROOT_UNSAFE 4096
/* The most processes and address spaces a caller without root should
 * track (opts.max_tracked): the kernel memory of the maps is bounded for
 * other users; peakbpf(1) refuses more. */
#define PEAKBPF_UNPRIVILEGED_MAX_TRACKED 65536

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

/* "0.4.0" */
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
 * process, or it exited while it was entered; -EINVAL: a kernel thread or a
 * zombie (no address space); -EPERM: one the caller may not measure
 * (peakbpf_may_measure). Call before peakbpf_start. */
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
/* Unload everything (but a load kept with opts.keep_loaded); NULL is
 * fine. Figures stay valid. A session belongs to the process that opened
 * it: a forked child opens its own. */
PEAKBPF_API void peakbpf_close(struct peakbpf_session *s);

/* ---- since 0.2: a command's run, the tree's processes, the helper ---- */
/* May the caller measure process pid? Without root (a binary given
 * CAP_BPF+CAP_PERFMON), only processes it could ptrace: its uids and gids,
 * no capability it lacks, dumpable; unless it has CAP_SYS_PTRACE.
 * peakbpf_add_pid applies the same rule (the caller itself, and in command
 * mode its children, are its own). 0, -EPERM, or -errno reading /proc. */
PEAKBPF_API int peakbpf_may_measure(pid_t pid);
/* A command root (opts.command) was reaped with this rusage: the rusage
 * source reads its figure here. */
/* The command (a root) has exec'd: sources that sample read the tree now,
 * so a command shorter than the sampling interval has a figure (0.3). */
PEAKBPF_API int peakbpf_command_started(struct peakbpf_session *s, pid_t pid);
PEAKBPF_API int peakbpf_command_exited(struct peakbpf_session *s, pid_t pid, const struct rusage *ru);
/* Processes of the tree alive now; -ENODATA when unknown (bpf only). */
PEAKBPF_API int peakbpf_procs_live(const struct peakbpf_session *s, int64_t *n);
/* Whether the bpf source is used (loaded here or through the helper):
 * the exact figure, and the record of the sum. */
PEAKBPF_API bool peakbpf_has_bpf(const struct peakbpf_session *s);
/* The helper's reason for refusing the last request ("" if none), or
 * NULL when the session does not go through peakbpf serve. */
PEAKBPF_API const char *peakbpf_helper_why(const struct peakbpf_session *s);

/*
 * ---- since 0.2: the record of the sum (opts.changes_ring_bytes) ----
 * Every change of the tree sum, oldest first. Pages are of
 * sysconf(_SC_PAGESIZE).
 */
struct peakbpf_change {
	uint64_t mono_ns;               /* CLOCK_MONOTONIC */
	int64_t sum_pages;              /* the tree sum after the change */
	uint64_t mm;                    /* the address space that changed (an opaque key) */
	int64_t mm_pages;               /* its RSS after the change */
	uint32_t tgid;                  /* a process using it (global PID) */
};
/* A non-zero return stops nothing: the drain goes on and returns it. */
typedef int (*peakbpf_change_fn)(void *ctx, const struct peakbpf_change *c);
/* Hand every change recorded since the last call to fn, and the changes
 * lost so far to a full ring to *drops. -EOPNOTSUPP without bpf here. */
PEAKBPF_API int peakbpf_changes_drain(struct peakbpf_session *s, peakbpf_change_fn fn, void *ctx,
				      uint64_t *drops);
/* Who uses the address space a change names: its PID in the caller's
 * namespace (0: not visible) and comm. -ENOENT unknown, -EOPNOTSUPP
 * without bpf here. */
PEAKBPF_API int peakbpf_mm_identity(struct peakbpf_session *s, uint64_t mm, uint32_t tgid,
				    pid_t *pid, char comm[16]);
/* The tree sum when the open window began (where a record of the sum
 * starts), pages. -ENODATA without bpf here. */
PEAKBPF_API int peakbpf_window_start_pages(struct peakbpf_session *s, int64_t *pages);

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

/* ---- since 0.3 ---- */
/* Stop keeping this process's BPF load (opts.keep_loaded): it goes now if
 * no session uses it, else with the last that does. */
PEAKBPF_API void peakbpf_unload(void);
/* How the session's bpf source came: "loaded" (here, by this session),
 * "reused" (the load an earlier session of this process kept), "helper"
 * (through peakbpf serve); NULL: no bpf source. */
PEAKBPF_API const char *peakbpf_bpf_load(const struct peakbpf_session *s);

/* ---- since 0.4 ---- */
/* Command mode: fork() for the command, before peakbpf_add_pid. The child
 * starts in the tree's own cgroup (cgroup v2: clone3 with
 * CLONE_INTO_CGROUP; v1: it moves its one thread itself before this
 * returns), so peakbpf_add_pid moves nothing: moving a process from
 * outside waits for an RCU grace period, 10-30 ms. Where neither can be
 * (no cgroup of its own, a process with threads, an old kernel), plain
 * fork(), and peakbpf_add_pid moves it as before. Returns as fork() does;
 * the child may then call only async-signal-safe functions until exec, and
 * not raise(3): after clone3 glibc does not know the child's thread id. */
PEAKBPF_API pid_t peakbpf_command_fork(struct peakbpf_session *s);

/* ---- since 0.4 too: targets by where memory is charged ---- */
/*
 * Whether the directory at path is a cgroup this caller may measure, as a
 * cgroup target: 0, or -ENOENT (no such path), -ENOTDIR (not a directory),
 * -EMEDIUMTYPE (not a cgroup: not on a cgroup file system), -ENOMEDIUM (a
 * cgroup v1 hierarchy without the memory controller: v1 charges memory in
 * the memory hierarchy), -EPERM (not the caller's: without CAP_SYS_ADMIN
 * only a cgroup directory the caller owns, as delegation makes it), or
 * another -errno of opening it. Touches nothing.
 */
PEAKBPF_API int peakbpf_cgroup_check(const char *path);
/*
 * A cgroup target instead of processes: the session measures the
 * processes of the cgroup at path and of its descendants, those in it now
 * (with their RSS as it is) and those born or moved into it later; a
 * process that moves out takes its address space's pages out of the sum at
 * the move (docs/design.md, "Cgroup targets"). Not in command mode, once,
 * before peakbpf_start, instead of peakbpf_add_pid. The cgroup source's
 * figure beside it is the cgroup's own peak, with its limit
 * (peakbpf_figure_limit). The errors of peakbpf_cgroup_check, -EBUSY
 * (started, or a target already), -EINVAL (command mode), -EOPNOTSUPP (the
 * session's source cannot follow a cgroup: through peakbpf serve).
 */
PEAKBPF_API int peakbpf_add_cgroup(struct peakbpf_session *s, const char *path);
/* The same, but the processes of except, a child cgroup of path, are not
 * the target's (podman's conmon beside the container: PARENT/conmon).
 * -EINVAL: except is not a child of path. */
PEAKBPF_API int peakbpf_add_cgroup_except(struct peakbpf_session *s, const char *path, const char *except);
/* A process of the session's tree that enters the cgroup at path (or
 * below, but for except: NULL, or a child of path) leaves the tree with its
 * pages at the move, as from a cgroup target (`peakbpf -- podman run`: the
 * container's processes are not the runtime's, conmon's are). Before
 * peakbpf_start; the bpf source here only (-EOPNOTSUPP otherwise); the
 * errors of peakbpf_cgroup_check. */
PEAKBPF_API int peakbpf_exclude_cgroup(struct peakbpf_session *s, const char *path, const char *except);
/* A cgroup figure's limit (memory.max, memory.limit_in_bytes): 0, or
 * -ENODATA when none is set or the figure is not a cgroup's. The headroom
 * at the peak is *bytes minus the peak. */
PEAKBPF_API int peakbpf_figure_limit(const struct peakbpf_figure *f, uint64_t *bytes);
/*
 * ---- since 0.4: OOM kills of the tree ----
 * A process of the tree the kernel's OOM killer chose (oom:mark_victim),
 * recorded at that instant in the kernel. Its rss is read as the kernel's
 * own OOM report reads it (on 6.2+ without the per-CPU parts: within
 * nr_cpus x 64 pages a counter); not read before 6.9, which passes the
 * victim's PID alone (rss_read false).
 */
struct peakbpf_oom_victim {
	uint64_t mono_ns;               /* CLOCK_MONOTONIC of the kill */
	int32_t pid;                    /* global PID (thread group) */
	char comm[16];
	bool rss_read;
	uint64_t anon_bytes, file_bytes, shmem_bytes;
	uint64_t cgroup_id;             /* the victim's memory cgroup (its directory's inode) */
	char cgroup[256];               /* its path under the memory hierarchy, "" if unknown */
	/* What the kill was for (false: the kernel marked an exiting task, or
	 * oom_kill_process cannot be attached here). */
	bool has_context;
	/* Inferred (no hook before mark_victim here, bpf/oom.bpf.c): the
	 * victim's nearest memory cgroup at its limit, else a global OOM. */
	bool context_inferred;
	bool memcg_oom;                 /* a cgroup's limit (else the machine ran out) */
	uint64_t oom_cgroup_id;         /* the OOMing cgroup (the victim's or an ancestor) */
	char oom_cgroup[256];
	uint64_t limit_bytes, charge_bytes;     /* its limit and charge at the kill */
	int32_t trigger_pid;            /* whose allocation failed */
	char trigger_comm[16];
};
/* The tree's OOM victims so far (since peakbpf_start), oldest first: up to
 * max into out, their number in *n (which may exceed max). 0; -EOPNOTSUPP
 * when the session records none (not the bpf source loaded here, or the
 * kernel refused the recorder); why then says why (may be NULL). */
PEAKBPF_API int peakbpf_oom_victims(struct peakbpf_session *s, struct peakbpf_oom_victim *out, size_t max,
				    size_t *n, char *why, size_t why_len);
/*
 * A victim as one JSON object, the CLI's run record's and the agent's OOM
 * records' alike: pid, comm, at_s (seconds since t0_ns, CLOCK_MONOTONIC;
 * left out when t0_ns is 0), rss (null when not read), cgroup_id, cgroup,
 * kill (null without its context). NUL-terminated, like snprintf: returns
 * the length it needs (without the NUL) or a negative errno; truncates to
 * len.
 */
PEAKBPF_API int peakbpf_oom_victim_json(const struct peakbpf_oom_victim *v, uint64_t t0_ns, char *buf,
					size_t len);

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
/* A run's windows that had no figure (0.3): a figure measured in only some
 * of its windows is not exact, and no budget should pass it; 0 for a
 * window's figure or one not measured. */
PEAKBPF_API unsigned peakbpf_figure_windows_unmeasured(const struct peakbpf_figure *f);
/* Why the figure is not the tree's (a cgroup shared with other processes;
 * a peak from before the run): it is never the headline, only another
 * source's, not to be compared (0.3). NULL: it is the tree's. */
PEAKBPF_API const char *peakbpf_figure_not_comparable(const struct peakbpf_figure *f);
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

/* ---- since 0.2: more of a figure, and the CLI's renderings ---- */
/* The proc sampler's period and samples taken (proc only). */
PEAKBPF_API int peakbpf_figure_samples(const struct peakbpf_figure *f, uint64_t *interval_ns,
				       uint64_t *samples);
/* CLOCK_MONOTONIC ns: the session's start, the window's (the run's) start and end. */
PEAKBPF_API int peakbpf_figure_times(const struct peakbpf_figure *f, uint64_t *t0_ns,
				     uint64_t *start_ns, uint64_t *end_ns);
/* peakbpf_run_figure's: windows closed; a window's: 0. */
PEAKBPF_API unsigned peakbpf_figure_windows(const struct peakbpf_figure *f);

enum peakbpf_format {
	PEAKBPF_FORMAT_JSON = 0,        /* one line: the CLI's JSON record */
	PEAKBPF_FORMAT_TEXT,            /* the CLI's summary of a run: several lines */
	PEAKBPF_FORMAT_TEXT_WINDOW,     /* the CLI's line for a closed window */
};

struct peakbpf_format_opts {
	size_t sz;                      /* sizeof(struct peakbpf_format_opts) */
	enum peakbpf_format format;
	unsigned holders;               /* holders listed (at most 32); 0: none */
	/* The caller's own part of the record, put in as it is after the
	 * measurement's (the unique memory) and before the counters and
	 * host: JSON members without the braces ("\"a\":1,\"b\":2"), or
	 * whole lines of text. NULL: none. */
	const char *extra;
};

/* The figure rendered as the CLI renders it, NUL-terminated, ending in a
 * newline; like snprintf: returns the length it needs (without the NUL)
 * or a negative errno, and truncates to len. Unlike peakbpf_figure_json,
 * the JSON also holds the tree's unique memory (or why it was not
 * measured). */
PEAKBPF_API int peakbpf_figure_format(const struct peakbpf_figure *f, const struct peakbpf_format_opts *o,
				      char *buf, size_t len);
PEAKBPF_API void peakbpf_figure_free(struct peakbpf_figure *f);

#ifdef __cplusplus
}
#endif

#endif
