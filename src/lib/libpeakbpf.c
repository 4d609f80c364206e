// SPDX-License-Identifier: MIT
/* libpeakbpf's public API (include/peakbpf/peakbpf.h) over the session. */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <peakbpf/peakbpf.h>
#include "clock.h"
#include "fileutil.h"
#include "host.h"
#include "tracker.h"             /* bpf/: struct sum_event */
#include "report.h"
#include "session.h"
#include "sources.h"
#include "sum_log.h"
#include "lib_opts.h"
#include "libpeakbpf_figure.h"
#include "libpeakbpf_cgroup.h"
#include "libpeakbpf_oom.h"
#include "libpeakbpf_stacks.h"
#include <peakbpf/peakbpf_stacks.h>

#define LIB_RING_BYTES (8U << 20)      /* the timeline's kernel buffer: ~175 k changes */
#define LIB_ROOTS_NAMED 8               /* the timeline's title names these */

struct peakbpf_session {
	struct session *s;
	bool started;
	uint64_t t0_ns;                 /* when the first window opened */
	uint64_t window_start_ns;       /* when the open window opened */
	bool timeline;                  /* opts.timeline, and the bpf source is open */
	bool command;                   /* opts.command: roots are our children before exec */
	struct sum_log log;
	uint64_t record_drops;
	pid_t roots[LIB_ROOTS_NAMED];
	size_t n_roots;
	/* peakbpf_changes_drain: the caller's callback */
	peakbpf_change_fn change_fn;
	void *change_ctx;
	struct lib_oom *oom;            /* peakbpf_oom_victims: the tree's victims so far */
};

PEAKBPF_API const char *peakbpf_version(void)
{
	return PEAKBPF_VERSION;
}

static int copy_opts(const struct peakbpf_opts *in, struct peakbpf_opts *out)
{
	return lib_copy_sized(in, in ? in->sz : 0, out, sizeof(*out));
}

static int open_session(const struct peakbpf_opts *opts, bool stacks, struct peakbpf_session **out,
			char *why, size_t why_len)
{
	struct peakbpf_opts o;
	struct session_opts so = { 0 };
	char reason[256] = "";
	libbpf_print_fn_t old = NULL;
	struct peakbpf_session *p;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	err = copy_opts(opts, &o);
	if (err) {
		set_why(why, why_len, "struct peakbpf_opts: set .sz = sizeof(struct peakbpf_opts) "
			"(PEAKBPF_OPTS) and leave unknown fields zero");
		return err;
	}
	so.source = o.source;
	if (!session_source_known(o.source)) {
		set_why(why, why_len, "unknown source: use PEAKBPF_SOURCE_AUTO, _BPF, _CGROUP, _PROC or _RUSAGE");
		return -EINVAL;
	}
	if (o.measure == PEAKBPF_MEASURE_UNIQUE && !o.command && !o.measure_fallback) {
		set_why(why, why_len, "unique memory needs the tree in a cgroup of its own, which only "
			"the CLI's command mode makes: run the command under peakbpf --measure unique");
		return -EOPNOTSUPP;
	}
	if (o.timeline && o.changes_ring_bytes) {
		set_why(why, why_len, "opts: .timeline takes the changes of the sum itself: "
			"set .timeline or .changes_ring_bytes, not both");
		return -EINVAL;
	}
	if (o.use_helper && o.no_helper) {
		set_why(why, why_len, "opts: .use_helper and .no_helper: set one, not both");
		return -EINVAL;
	}
	if (o.measure != PEAKBPF_MEASURE_RSS && o.measure != PEAKBPF_MEASURE_UNIQUE) {
		set_why(why, why_len, "unknown measure: use PEAKBPF_MEASURE_RSS or _UNIQUE");
		return -EINVAL;
	}
	so.max_tracked = o.max_tracked;
	so.sample_interval_ns = o.sample_interval_ns;
	so.cgroup_root = o.cgroup_root;
	so.record_ring_bytes = o.timeline ? LIB_RING_BYTES : o.changes_ring_bytes;
	so.command_mode = o.command;
	so.with_proc = o.with_proc;
	so.helper_path = o.helper_path;
	so.use_helper = o.use_helper;
	so.no_helper = o.no_helper;
	so.keep_loaded = o.keep_loaded;
	so.stacks = stacks;
	so.no_helper |= stacks;         /* the ring is read here */
	so.no_cgroup_targets = o.no_cgroup_targets;
	so.measure_unique = o.measure == PEAKBPF_MEASURE_UNIQUE;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (!o.libbpf_log)
		old = libbpf_set_print(NULL);      /* NULL: libbpf prints nothing */
	err = session_open(&so, &p->s, reason, sizeof(reason));
	if (!o.libbpf_log)
		libbpf_set_print(old);
	if (err) {
		set_why(why, why_len, reason);
		free(p);
		/* The API promised errnos: to a caller older than 0.2, an
		 * unsafe cgroup root is not permitted. */
		if (err == -CGROUP_ROOT_UNSAFE)
			return opts && opts->sz > offsetof(struct peakbpf_opts, command) ?
			       -PEAKBPF_ERRNO_CGROUP_ROOT_UNSAFE : -EPERM;
		return err;
	}
	p->timeline = o.timeline && session_has_bpf(p->s);
	p->command = o.command;
	*out = p;
	return 0;
}

PEAKBPF_API int peakbpf_open(const struct peakbpf_opts *opts, struct peakbpf_session **out,
			     char *why, size_t why_len)
{
	return open_session(opts, false, out, why, why_len);
}

/* --stacks: hidden, the CLI's alone for now (peakbpf_stacks.h). */
int peakbpf_open_stacks(const struct peakbpf_opts *opts, struct peakbpf_session **out, char *why, size_t why_len)
{
	char reason[512];
	int err = open_session(opts, true, out, why, why_len);

	/* Asked for and not possible (what this kernel lacks, or refused):
	 * no session, so that nothing runs without them. */
	if (!err && (err = lib_stacks_why((*out)->s, reason, sizeof(reason)))) {
		peakbpf_close(*out);
		*out = NULL;
		if (why && why_len)
			snprintf(why, why_len, "--stacks: %s", reason);
	}
	return err;
}

int peakbpf_stacks_poll(struct peakbpf_session *p)
{
	return p ? lib_stacks_poll(p->s) : -EINVAL;
}

int peakbpf_stacks_write(struct peakbpf_session *p, const struct peakbpf_figure *f, enum peakbpf_stacks_format fmt,
			 FILE *out, unsigned top, char *summary, size_t len)
{
	return p && f && out ? lib_stacks_write(p->s, f, fmt, out, top, summary, len) : -EINVAL;
}

int peakbpf_stacks_file_open(FILE *out, enum peakbpf_stacks_format fmt, struct peakbpf_stacks_file **sf)
{
	if (!sf)
		return -EINVAL;
	*sf = NULL;
	return out ? lib_stacks_file_open(out, fmt, sf) : -EINVAL;
}

int peakbpf_stacks_file_window(struct peakbpf_session *p, struct peakbpf_stacks_file *sf,
			       const struct peakbpf_figure *f, const char *window, unsigned top, char *summary,
			       size_t len)
{
	return p && sf && f ? lib_stacks_file_window(p->s, sf, f, window, top, summary, len) : -EINVAL;
}

size_t peakbpf_stacks_file_best(const struct peakbpf_stacks_file *sf)
{
	return sf ? lib_stacks_file_best(sf) : 0;
}

int peakbpf_stacks_file_close(struct peakbpf_stacks_file *sf)
{
	return lib_stacks_file_close(sf);
}

/* The caller itself, and in command mode its own children (stopped
 * before exec: its credentials, not dumpable only if it is not), are its
 * own; any other process by the ptrace rule (host_may_trace), which the
 * helper applies itself to a session through it, and says why. */
static int may_add(const struct peakbpf_session *p, pid_t pid)
{
	if (pid == getpid() || (p->command && host_parent(pid) == getpid()) ||
	    session_helper_why(p->s))
		return 0;
	return host_may_measure(pid, host_effective_caps());
}

PEAKBPF_API int peakbpf_add_pid(struct peakbpf_session *p, pid_t pid)
{
	int pidfd, err;

	if (!p || pid <= 0)
		return -EINVAL;
	if (p->started)
		return -EBUSY;
	/* The pidfd first: if its process is alive after the entry, the
	 * PID checked and entered was that process all along, not a reuse. */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -errno;
	/* A kernel thread or a zombie: no memory to measure. */
	err = host_pid_no_mm(pid) ? -EINVAL : may_add(p, pid);
	if (!err)
		err = session_add_root(p->s, pid);
	if (!err && host_pidfd_exited(pidfd))
		err = -ESRCH;
	close(pidfd);
	if (!err && p->n_roots < LIB_ROOTS_NAMED)
		p->roots[p->n_roots++] = pid;
	return err;
}

PEAKBPF_API int peakbpf_add_cgroup_except(struct peakbpf_session *p, const char *path, const char *except)
{
	int fd, xfd, err;

	if (!p || p->command)
		return -EINVAL;
	if (p->started || p->n_roots)
		return -EBUSY;
	err = lib_cgroup_open(path, except, &fd, &xfd);
	if (err)
		return err;
	err = session_add_cgroup(p->s, fd, xfd);
	if (xfd >= 0)
		close(xfd);
	close(fd);
	return err;
}

PEAKBPF_API int peakbpf_add_cgroup(struct peakbpf_session *p, const char *path)
{
	return peakbpf_add_cgroup_except(p, path, NULL);
}

PEAKBPF_API int peakbpf_exclude_cgroup(struct peakbpf_session *p, const char *path, const char *except)
{
	int fd, xfd, err;

	if (!p)
		return -EINVAL;
	if (p->started)
		return -EBUSY;
	err = lib_cgroup_open(path, except, &fd, &xfd);
	if (err)
		return err;
	err = session_exclude_cgroup(p->s, fd, xfd);
	if (xfd >= 0)
		close(xfd);
	close(fd);
	return err;
}

/* The library's timeline (sum_log.h) is a sink it feeds as it drains. */
static int feed_sum_log(void *ctx, const struct sum_event *e)
{
	return sum_log_change(ctx, e->ns, e->sum_pages, e->mm, e->mm_pages, e->tgid);
}

static int identify_mm(void *ctx, uint64_t mm, uint32_t tgid, uint32_t *pid, char comm[16])
{
	return session_mm_identity(ctx, mm, tgid, pid, comm);
}

PEAKBPF_API int peakbpf_add_self(struct peakbpf_session *p)
{
	/* Attach mode: the tracker enters the caller's own mm as it is now. */
	return peakbpf_add_pid(p, getpid());
}

PEAKBPF_API int peakbpf_start(struct peakbpf_session *p)
{
	int err;

	if (!p)
		return -EINVAL;
	if (p->started)
		return -EBUSY;
	err = session_start(p->s);
	if (err)
		return err;
	p->started = true;
	p->t0_ns = p->window_start_ns = monotonic_ns();
	if (p->timeline) {
		/* No file yet: peakbpf_timeline_write names it. */
		err = sum_log_open(&p->log, NULL, false, NULL, p->roots, p->n_roots);
		if (err)
			return err;
		sum_log_keep_timeline(&p->log);
		sum_log_set_identify(&p->log, identify_mm, p->s);
		sum_log_begin(&p->log, p->t0_ns, session_window_start_pages(p->s), sysconf(_SC_PAGESIZE));
	}
	return 0;
}


PEAKBPF_API int peakbpf_close_window(struct peakbpf_session *p, struct peakbpf_figure **out)
{
	struct report rec = { .kind = REPORT_WINDOW };
	uint64_t now;
	int err;

	if (!p || !out)
		return -EINVAL;
	*out = NULL;
	if (!p->started)
		return -EINVAL;
	if (p->timeline)
		peakbpf_timeline_poll(p);       /* the changes before the cut */
	err = session_close_window(p->s, &rec);
	if (err)
		return err;
	now = monotonic_ns();
	if (p->timeline)
		sum_log_window(&p->log, now, rec.window);
	*out = lib_figure_from(&rec, p->t0_ns, p->window_start_ns, now);
	if (!*out)
		return -ENOMEM;
	p->window_start_ns = now;
	return 0;
}

PEAKBPF_API int peakbpf_run_figure(struct peakbpf_session *p, struct peakbpf_figure **out)
{
	struct report rec = { .kind = REPORT_RUN };

	if (!p || !out)
		return -EINVAL;
	*out = NULL;
	if (!p->started)
		return -EINVAL;
	session_fill_run(p->s, &rec);
	*out = lib_figure_from(&rec, p->t0_ns, p->t0_ns, p->window_start_ns);
	if (!*out)
		return -ENOMEM;
	return 0;
}

PEAKBPF_API const char *peakbpf_session_source(const struct peakbpf_session *p)
{
	return p ? session_source_name(p->s) : "unavailable";
}

PEAKBPF_API const char *peakbpf_note(const struct peakbpf_session *p, size_t i)
{
	return p ? session_note(p->s, i) : NULL;
}

PEAKBPF_API int peakbpf_timeline_poll(struct peakbpf_session *p)
{
	if (!p)
		return -EINVAL;
	if (!p->timeline || !p->started)
		return -ENODATA;
	return session_drain_sums(p->s, feed_sum_log, &p->log, &p->record_drops);
}

PEAKBPF_API int peakbpf_timeline_mark(struct peakbpf_session *p, const char *label)
{
	if (!p || !label)
		return -EINVAL;
	if (!p->timeline || !p->started)
		return -ENODATA;
	peakbpf_timeline_poll(p);       /* the mark after the changes before it */
	sum_log_mark(&p->log, monotonic_ns(), label);
	return 0;
}

PEAKBPF_API int peakbpf_timeline_write(struct peakbpf_session *p, const char *path)
{
	struct report rec = { .kind = REPORT_RUN };
	uint64_t peak_bytes = 0, peak_ns = 0;
	char err[512];
	int rc;

	if (!p || !path)
		return -EINVAL;
	if (!p->timeline || !p->started)
		return -ENODATA;
	rc = peakbpf_timeline_poll(p);
	if (rc)
		return rc;
	session_fill_run(p->s, &rec);
	/* The closed windows' peak, the one a figure reports, when it is
	 * the largest recorded (an open window may have gone higher). */
	if (rec.primary.measured && rec.primary.has_detail &&
	    rec.primary.peak_bytes >= timeline_bytes(&p->log.timeline, p->log.timeline.peak)) {
		peak_bytes = rec.primary.peak_bytes;
		peak_ns = rec.primary.peak_mono_ns;
	}
	return sum_log_write(&p->log, path, monotonic_ns(), peak_bytes, peak_ns, err, sizeof(err));
}

PEAKBPF_API int peakbpf_timeline_drops(const struct peakbpf_session *p, uint64_t *n)
{
	if (!p || !n)
		return -EINVAL;
	if (!p->timeline)
		return -ENODATA;
	*n = p->record_drops;
	return 0;
}

PEAKBPF_API void peakbpf_close(struct peakbpf_session *p)
{
	if (!p)
		return;
	if (p->timeline && p->started)
		sum_log_free(&p->log);
	session_close(p->s);
	lib_oom_free(p->oom);
	free(p);
}

PEAKBPF_API void peakbpf_unload(void)
{
	bpf_source_unload();
}

PEAKBPF_API const char *peakbpf_bpf_load(const struct peakbpf_session *p)
{
	return p ? session_bpf_load(p->s) : NULL;
}

/* ---- a command's run, the tree's processes, the helper ---- */

PEAKBPF_API int peakbpf_may_measure(pid_t pid)
{
	if (pid <= 0)
		return -EINVAL;
	return host_may_measure(pid, host_effective_caps());
}

PEAKBPF_API int peakbpf_command_started(struct peakbpf_session *p, pid_t pid)
{
	if (!p || pid <= 0)
		return -EINVAL;
	session_command_started(p->s, pid);
	return 0;
}

PEAKBPF_API pid_t peakbpf_command_fork(struct peakbpf_session *p)
{
	if (!p) {
		errno = EINVAL;
		return -1;
	}
	return session_command_fork(p->s);
}

PEAKBPF_API int peakbpf_command_exited(struct peakbpf_session *p, pid_t pid, const struct rusage *ru)
{
	if (!p || pid <= 0 || !ru)
		return -EINVAL;
	session_command_exited(p->s, pid, ru);
	return 0;
}

PEAKBPF_API int peakbpf_procs_live(const struct peakbpf_session *p, int64_t *n)
{
	int64_t live;

	if (!p || !n)
		return -EINVAL;
	live = session_procs_live(p->s);
	if (live < 0)
		return -ENODATA;
	*n = live;
	return 0;
}

PEAKBPF_API bool peakbpf_has_bpf(const struct peakbpf_session *p)
{
	return p && session_has_bpf(p->s);
}

PEAKBPF_API const char *peakbpf_helper_why(const struct peakbpf_session *p)
{
	return p ? session_helper_why(p->s) : NULL;
}

/* ---- the record of the sum ---- */

static int change_of(void *ctx, const struct sum_event *e)
{
	const struct peakbpf_session *p = ctx;
	struct peakbpf_change c = {
		.mono_ns = e->ns,
		.sum_pages = e->sum_pages,
		.mm = e->mm,
		.mm_pages = e->mm_pages,
		.tgid = e->tgid,
	};

	return p->change_fn(p->change_ctx, &c);
}

PEAKBPF_API int peakbpf_changes_drain(struct peakbpf_session *p, peakbpf_change_fn fn, void *ctx,
				      uint64_t *drops)
{
	uint64_t lost = 0;
	int err;

	if (!p || !fn)
		return -EINVAL;
	if (!session_has_bpf(p->s))
		return -EOPNOTSUPP;
	p->change_fn = fn;
	p->change_ctx = ctx;
	err = session_drain_sums(p->s, change_of, p, &lost);
	p->change_fn = NULL;
	if (drops)
		*drops = lost;
	return err;
}

PEAKBPF_API int peakbpf_mm_identity(struct peakbpf_session *p, uint64_t mm, uint32_t tgid,
				    pid_t *pid, char comm[16])
{
	uint32_t vpid = 0;
	int err;

	if (!p || !pid || !comm)
		return -EINVAL;
	err = session_mm_identity(p->s, mm, tgid, &vpid, comm);
	if (!err)
		*pid = (pid_t)vpid;
	return err;
}

PEAKBPF_API int peakbpf_window_start_pages(struct peakbpf_session *p, int64_t *pages)
{
	if (!p || !pages)
		return -EINVAL;
	if (!session_has_bpf(p->s))
		return -ENODATA;
	*pages = session_window_start_pages(p->s);
	return 0;
}

PEAKBPF_API int peakbpf_oom_victims(struct peakbpf_session *p, struct peakbpf_oom_victim *out, size_t max,
				    size_t *n, char *why, size_t why_len)
{
	if (!p || !n || (max && !out))
		return -EINVAL;
	return lib_oom_victims(p->s, p->t0_ns, &p->oom, out, max, n, why, why_len);
}
