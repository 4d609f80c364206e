// SPDX-License-Identifier: MIT
/* libpeakbpf's public API (include/peakbpf/peakbpf.h) over the session. */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <peakbpf/peakbpf.h>
#include "host.h"
#include "tracker_api.h"
#include "report.h"
#include "session.h"
#include "sources.h"
#include "sum_record.h"

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
	struct sum_record rec;
	uint64_t record_drops;
	pid_t roots[LIB_ROOTS_NAMED];
	size_t n_roots;
	/* peakbpf_changes_drain: the caller's callback */
	peakbpf_change_fn change_fn;
	void *change_ctx;
};

struct peakbpf_figure {
	struct figure fig;
	const char *kind;               /* "window" or "run" */
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
};

PEAKBPF_API const char *peakbpf_version(void)
{
	return PEAKBPF_VERSION;
}

/* The caller's options, libbpf-style: fields past its sz are zero, and
 * fields past ours must be zero. */
static int copy_opts(const struct peakbpf_opts *in, struct peakbpf_opts *out)
{
	size_t n;

	memset(out, 0, sizeof(*out));
	if (!in)
		return 0;
	if (in->sz < sizeof(in->sz))
		return -EINVAL;
	n = in->sz < sizeof(*out) ? in->sz : sizeof(*out);
	for (size_t i = sizeof(*out); i < in->sz; i++)
		if (((const char *)in)[i])
			return -E2BIG;
	memcpy(out, in, n);
	return 0;
}

static int session_choice(enum peakbpf_source src, enum source_choice *out)
{
	switch (src) {
	case PEAKBPF_SOURCE_AUTO:
		*out = SOURCE_AUTO;
		return 0;
	case PEAKBPF_SOURCE_BPF:
		*out = SOURCE_BPF;
		return 0;
	case PEAKBPF_SOURCE_CGROUP:
		*out = SOURCE_CGROUP;
		return 0;
	case PEAKBPF_SOURCE_PROC:
		*out = SOURCE_PROC;
		return 0;
	case PEAKBPF_SOURCE_RUSAGE:
		*out = SOURCE_RUSAGE;
		return 0;
	}
	return -EINVAL;
}

static void set_why(char *why, size_t len, const char *msg)
{
	if (why && len)
		snprintf(why, len, "%s", msg);
}

PEAKBPF_API int peakbpf_open(const struct peakbpf_opts *opts, struct peakbpf_session **out,
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
	if (session_choice(o.source, &so.source)) {
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
	*out = p;
	return 0;
}

PEAKBPF_API int peakbpf_add_pid(struct peakbpf_session *p, pid_t pid)
{
	if (!p || pid <= 0)
		return -EINVAL;
	if (p->started)
		return -EBUSY;
	if (kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	if (p->n_roots < LIB_ROOTS_NAMED)
		p->roots[p->n_roots++] = pid;
	return session_add_root(p->s, pid);
}

/* The library's timeline (sum_record.h) is a sink it feeds as it drains. */
static int feed_record(void *ctx, const struct sum_event *e)
{
	return sum_record_change(ctx, e->ns, e->sum_pages, e->mm, e->mm_pages, e->tgid);
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
		err = sum_record_open(&p->rec, NULL, false, NULL, p->roots, p->n_roots);
		if (err)
			return err;
		sum_record_keep_timeline(&p->rec);
		sum_record_set_identify(&p->rec, identify_mm, p->s);
		sum_record_begin(&p->rec, p->t0_ns, session_window_start_pages(p->s), sysconf(_SC_PAGESIZE));
	}
	return 0;
}

/* Copy a record into a figure that owns everything it points to. */
static struct peakbpf_figure *figure_from(const struct record *rec, const struct peakbpf_session *p)
{
	struct peakbpf_figure *f = calloc(1, sizeof(*f));
	size_t n = rec->n_others < OTHERS_MAX ? rec->n_others : OTHERS_MAX;

	if (!f)
		return NULL;
	if (n) {
		f->others = calloc(n, sizeof(*f->others));
		if (!f->others) {
			free(f);
			return NULL;
		}
	}
	f->fig = rec->primary;
	f->kind = rec->kind;
	f->window = rec->window;
	f->windows = rec->windows;
	f->t0_ns = p->t0_ns;
	for (size_t i = 0; i < n; i++) {
		f->others[i].fig = rec->others[i];
		f->others[i].kind = rec->kind;
		f->others[i].window = rec->window;
		f->others[i].t0_ns = p->t0_ns;
		f->others[i].other = true;
	}
	f->n_others = n;
	f->has_counters = rec->counters != NULL;
	if (rec->counters)
		f->counters = *rec->counters;
	f->host = *rec->host;
	if (rec->unique) {
		f->has_unique = true;
		f->unique = *rec->unique;
		/* Its reason may be the session's (why it was not measured). */
		if (f->unique.inexact_reason) {
			snprintf(f->unique_reason, sizeof(f->unique_reason), "%s", f->unique.inexact_reason);
			f->unique.inexact_reason = f->unique_reason;
		}
	}
	for (size_t i = 0; i < rec->n_skipped && i < NOTES_MAX; i++) {
		snprintf(f->notes[i], NOTE_LEN, "%s", rec->skipped[i]);
		f->note_ptrs[i] = f->notes[i];
		f->n_notes = i + 1;
	}
	return f;
}

PEAKBPF_API int peakbpf_close_window(struct peakbpf_session *p, struct peakbpf_figure **out)
{
	struct record rec = { .kind = "window" };
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
		sum_record_window(&p->rec, now, rec.window);
	*out = figure_from(&rec, p);
	if (!*out)
		return -ENOMEM;
	(*out)->start_ns = p->window_start_ns;
	(*out)->end_ns = now;
	p->window_start_ns = now;
	return 0;
}

PEAKBPF_API int peakbpf_run_figure(struct peakbpf_session *p, struct peakbpf_figure **out)
{
	struct record rec = { .kind = "run" };

	if (!p || !out)
		return -EINVAL;
	*out = NULL;
	if (!p->started)
		return -EINVAL;
	session_fill_run(p->s, &rec);
	*out = figure_from(&rec, p);
	if (!*out)
		return -ENOMEM;
	(*out)->start_ns = p->t0_ns;
	(*out)->end_ns = p->window_start_ns;
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
	return session_drain_sums(p->s, feed_record, &p->rec, &p->record_drops);
}

PEAKBPF_API int peakbpf_timeline_mark(struct peakbpf_session *p, const char *label)
{
	if (!p || !label)
		return -EINVAL;
	if (!p->timeline || !p->started)
		return -ENODATA;
	peakbpf_timeline_poll(p);       /* the mark after the changes before it */
	sum_record_mark(&p->rec, monotonic_ns(), label);
	return 0;
}

PEAKBPF_API int peakbpf_timeline_write(struct peakbpf_session *p, const char *path)
{
	struct record rec = { .kind = "run" };
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
	    rec.primary.peak_bytes >= timeline_bytes(&p->rec.timeline, p->rec.timeline.peak)) {
		peak_bytes = rec.primary.peak_bytes;
		peak_ns = rec.primary.peak_mono_ns;
	}
	return sum_record_write(&p->rec, path, monotonic_ns(), peak_bytes, peak_ns, err, sizeof(err));
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
		sum_record_free(&p->rec);
	session_close(p->s);
	free(p);
}

PEAKBPF_API void peakbpf_unload(void)
{
	bpf_source_unload();
}

PEAKBPF_API const char *peakbpf_bpf_load(const struct peakbpf_session *p)
{
	return p ? session_host(p->s)->bpf_load : NULL;
}

/* ---- a command's run, the tree's processes, the helper ---- */

PEAKBPF_API int peakbpf_may_measure(pid_t pid)
{
	if (pid <= 0)
		return -EINVAL;
	return host_may_measure(pid, host_effective_caps());
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

/* ---- a figure ---- */

static int give(bool have, uint64_t value, uint64_t *out)
{
	if (!have)
		return -ENODATA;
	if (out)
		*out = value;
	return 0;
}

PEAKBPF_API int peakbpf_figure_peak(const struct peakbpf_figure *f, uint64_t *bytes)
{
	return give(f && f->fig.measured, f ? f->fig.peak_bytes : 0, bytes);
}

PEAKBPF_API int peakbpf_figure_baseline(const struct peakbpf_figure *f, uint64_t *bytes)
{
	return give(f && f->fig.measured && f->fig.baseline_known, f ? f->fig.baseline_bytes : 0, bytes);
}

PEAKBPF_API int peakbpf_figure_growth(const struct peakbpf_figure *f, uint64_t *bytes)
{
	uint64_t g = 0;

	if (f && f->fig.peak_bytes > f->fig.baseline_bytes)
		g = f->fig.peak_bytes - f->fig.baseline_bytes;
	return give(f && f->fig.measured && f->fig.baseline_known, g, bytes);
}

PEAKBPF_API int peakbpf_figure_peak_time(const struct peakbpf_figure *f, uint64_t *mono_ns)
{
	return give(f && f->fig.measured && f->fig.has_detail, f ? f->fig.peak_mono_ns : 0, mono_ns);
}

PEAKBPF_API int peakbpf_figure_breakdown(const struct peakbpf_figure *f, uint64_t *anon,
					 uint64_t *file, uint64_t *shmem, int64_t *processes)
{
	if (!f || !f->fig.measured || !f->fig.has_detail)
		return -ENODATA;
	if (anon)
		*anon = f->fig.anon_bytes;
	if (file)
		*file = f->fig.file_bytes;
	if (shmem)
		*shmem = f->fig.shmem_bytes;
	if (processes)
		*processes = f->fig.procs_at_peak;
	return 0;
}

PEAKBPF_API int peakbpf_figure_error_bound(const struct peakbpf_figure *f, uint64_t *bytes)
{
	if (f && f->fig.measured && f->fig.exact)
		return give(true, 0, bytes);
	return give(f && f->fig.measured && f->fig.bound_known, f ? f->fig.error_bound_bytes : 0, bytes);
}

PEAKBPF_API bool peakbpf_figure_exact(const struct peakbpf_figure *f)
{
	return f && f->fig.measured && f->fig.exact;
}

PEAKBPF_API const char *peakbpf_figure_reason(const struct peakbpf_figure *f)
{
	if (!f)
		return "no figure";
	if (!f->fig.measured)
		return f->fig.inexact_reason ? f->fig.inexact_reason : "not measured";
	return f->fig.exact ? NULL : f->fig.inexact_reason;
}

PEAKBPF_API const char *peakbpf_figure_source(const struct peakbpf_figure *f)
{
	return f && f->fig.source ? f->fig.source : "unavailable";
}

PEAKBPF_API const char *peakbpf_figure_scope(const struct peakbpf_figure *f)
{
	return f ? f->fig.scope : NULL;
}

PEAKBPF_API unsigned peakbpf_figure_window(const struct peakbpf_figure *f)
{
	return f ? f->window : 0;
}

PEAKBPF_API size_t peakbpf_figure_holder_count(const struct peakbpf_figure *f)
{
	return f && f->fig.measured && f->fig.has_holders ? f->fig.n_holders : 0;
}

PEAKBPF_API int peakbpf_figure_holder(const struct peakbpf_figure *f, size_t i,
				      struct peakbpf_holder *out)
{
	const struct figure_holder *h;

	if (!out || i >= peakbpf_figure_holder_count(f))
		return -ENODATA;
	h = &f->fig.holders[i];
	out->pid = h->pid;
	memcpy(out->comm, h->comm, sizeof(out->comm));
	out->comm[sizeof(out->comm) - 1] = '\0';
	out->bytes = h->bytes;
	out->own_peak_bytes = h->own_peak_bytes;
	return 0;
}

PEAKBPF_API size_t peakbpf_figure_other_count(const struct peakbpf_figure *f)
{
	return f ? f->n_others : 0;
}

PEAKBPF_API const struct peakbpf_figure *peakbpf_figure_other(const struct peakbpf_figure *f, size_t i)
{
	return f && i < f->n_others ? &f->others[i] : NULL;
}

static double since_s(uint64_t t0, uint64_t t)
{
	return t > t0 ? (double)(t - t0) / 1e9 : 0;
}

/* The record a figure renders; others must hold OTHERS_MAX. */
static void record_of(const struct peakbpf_figure *f, struct record *rec, struct figure *others)
{
	memset(rec, 0, sizeof(*rec));
	rec->kind = f->kind;
	rec->window = f->window;
	rec->windows = f->windows;
	rec->t0_ns = f->t0_ns;
	rec->start_s = since_s(f->t0_ns, f->start_ns);
	rec->end_s = since_s(f->t0_ns, f->end_ns);
	rec->primary = f->fig;
	for (size_t i = 0; i < f->n_others; i++)
		others[i] = f->others[i].fig;
	rec->others = others;
	rec->n_others = f->n_others;
	rec->skipped = f->note_ptrs;
	rec->n_skipped = f->n_notes;
	rec->counters = f->has_counters ? &f->counters : NULL;
	rec->host = f->other ? NULL : &f->host;  /* another source's figure: no context */
	rec->top = FIGURE_MAX_HOLDERS;
}

/* Render into a memory stream, then into buf, like snprintf. */
static int render(const struct record *rec, enum peakbpf_format format, const char *extra,
		  bool strip_newline, char *buf, size_t len)
{
	char *text = NULL;
	size_t size = 0;
	FILE *mem;

	mem = open_memstream(&text, &size);
	if (!mem)
		return -errno;
	switch (format) {
	case PEAKBPF_FORMAT_JSON:
		report_json_extra(rec, extra, mem);
		break;
	case PEAKBPF_FORMAT_TEXT:
		report_human_extra(rec, extra, mem);
		break;
	case PEAKBPF_FORMAT_TEXT_WINDOW:
		report_human_window(rec, mem);
		break;
	}
	if (fclose(mem)) {
		free(text);
		return -ENOMEM;
	}
	if (strip_newline && size && text[size - 1] == '\n')
		text[--size] = '\0';
	if (len)
		snprintf(buf, len, "%s", text ? text : "");
	free(text);
	return size > (size_t)0x7fffffff ? -E2BIG : (int)size;
}

PEAKBPF_API int peakbpf_figure_json(const struct peakbpf_figure *f, char *buf, size_t len)
{
	struct figure others[OTHERS_MAX];
	struct record rec;

	if (!f || (!buf && len))
		return -EINVAL;
	record_of(f, &rec, others);
	return render(&rec, PEAKBPF_FORMAT_JSON, NULL, true, buf, len);
}

PEAKBPF_API int peakbpf_figure_format(const struct peakbpf_figure *f, const struct peakbpf_format_opts *opts,
				      char *buf, size_t len)
{
	struct peakbpf_format_opts o = { 0 };
	struct figure others[OTHERS_MAX];
	struct record rec;
	size_t n;

	if (!f || !opts || (!buf && len) || opts->sz < sizeof(opts->sz))
		return -EINVAL;
	n = opts->sz < sizeof(o) ? opts->sz : sizeof(o);
	for (size_t i = sizeof(o); i < opts->sz; i++)
		if (((const char *)opts)[i])
			return -E2BIG;
	memcpy(&o, opts, n);
	if (o.format != PEAKBPF_FORMAT_JSON && o.format != PEAKBPF_FORMAT_TEXT &&
	    o.format != PEAKBPF_FORMAT_TEXT_WINDOW)
		return -EINVAL;
	record_of(f, &rec, others);
	rec.unique = f->has_unique ? &f->unique : NULL;
	rec.top = o.holders < FIGURE_MAX_HOLDERS ? o.holders : FIGURE_MAX_HOLDERS;
	return render(&rec, o.format, o.extra, false, buf, len);
}

PEAKBPF_API int peakbpf_figure_samples(const struct peakbpf_figure *f, uint64_t *interval_ns,
				       uint64_t *samples)
{
	if (!f || !f->fig.measured || !f->fig.interval_ns)
		return -ENODATA;
	if (interval_ns)
		*interval_ns = f->fig.interval_ns;
	if (samples)
		*samples = f->fig.samples;
	return 0;
}

PEAKBPF_API int peakbpf_figure_times(const struct peakbpf_figure *f, uint64_t *t0_ns,
				     uint64_t *start_ns, uint64_t *end_ns)
{
	if (!f)
		return -EINVAL;
	if (t0_ns)
		*t0_ns = f->t0_ns;
	if (start_ns)
		*start_ns = f->start_ns;
	if (end_ns)
		*end_ns = f->end_ns;
	return 0;
}

PEAKBPF_API unsigned peakbpf_figure_windows(const struct peakbpf_figure *f)
{
	return f ? f->windows : 0;
}

PEAKBPF_API void peakbpf_figure_free(struct peakbpf_figure *f)
{
	if (!f)
		return;
	free(f->others);
	free(f);
}
