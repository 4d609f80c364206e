// SPDX-License-Identifier: MIT
/* libpeakbpf's figures (include/peakbpf/peakbpf.h): made from a session's
 * record, read field by field, rendered as the CLI renders them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <peakbpf/peakbpf.h>
#include "figure.h"
#include "host.h"
#include "lib_opts.h"
#include "libpeakbpf_figure.h"
#include "report.h"

#define NOTES_MAX 8
#define NOTE_LEN 320 /* as SESSION_NOTE_LEN (session_internal.h): a note is the cause and its fix */
#define OTHERS_MAX 4

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

struct peakbpf_figure *lib_figure_from(const struct report *rec, uint64_t t0_ns, uint64_t start_ns,
				       uint64_t end_ns)
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
	figure_reason(&f->fig, f->reason, sizeof(f->reason));
	f->kind = rec->kind;
	f->window = rec->window;
	f->windows = rec->windows;
	f->t0_ns = t0_ns;
	f->start_ns = start_ns;
	f->end_ns = end_ns;
	for (size_t i = 0; i < n; i++) {
		f->others[i].fig = rec->others[i];
		figure_reason(&f->others[i].fig, f->others[i].reason, sizeof(f->others[i].reason));
		f->others[i].kind = rec->kind;
		f->others[i].window = rec->window;
		f->others[i].t0_ns = t0_ns;
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
	if (f->fig.exact)
		return NULL;
	return f->fig.windows_unmeasured ? f->reason : f->fig.inexact_reason;
}

PEAKBPF_API unsigned peakbpf_figure_windows_unmeasured(const struct peakbpf_figure *f)
{
	return f && f->fig.measured ? f->fig.windows_unmeasured : 0;
}

PEAKBPF_API const char *peakbpf_figure_not_comparable(const struct peakbpf_figure *f)
{
	return f ? f->fig.not_tree : NULL;
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
static void record_of(const struct peakbpf_figure *f, struct report *rec, struct figure *others)
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
static int render(const struct report *rec, enum peakbpf_format format, const char *extra,
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
	struct report rec;

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
	struct report rec;
	int err;

	if (!f || !opts || (!buf && len))
		return -EINVAL;
	err = lib_copy_sized(opts, opts->sz, &o, sizeof(o));
	if (err)
		return err;
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
