// SPDX-License-Identifier: MIT
/* A session driven through a run: roots, start, windows, the record's context (session.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "figure.h"
#include "host.h"
#include "session.h"
#include "sources.h"
#include "session_internal.h"

void session_note_add(struct session *s, const char *fmt, ...)
{
	va_list ap;

	if (s->n_notes >= SESSION_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(s->notes[s->n_notes], sizeof(s->notes[0]), fmt, ap);
	va_end(ap);
	s->note_ptrs[s->n_notes] = s->notes[s->n_notes];
	s->n_notes++;
}

void session_add_source(struct session *s, struct source *src)
{
	if (s->n_sources < SESSION_MAX_SOURCES)
		s->sources[s->n_sources++] = src;
	else
		src->ops->destroy(src);
}

/* Drop source i (a secondary that failed), noting why. */
static void drop_source(struct session *s, size_t i, const char *what, int err)
{
	struct source *src = s->sources[i];
	size_t tail;

	session_note_add(s, "%s: dropped: %s failed: %s", src->name, what, strerror(-err));
	if (src == s->kernel)
		s->kernel = NULL;
	src->ops->destroy(src);
	tail = s->n_sources - i - 1;
	memmove(&s->sources[i], &s->sources[i + 1], tail * sizeof(s->sources[0]));
	memmove(&s->figures[i], &s->figures[i + 1], tail * sizeof(s->figures[0]));
	memmove(&s->run_figures[i], &s->run_figures[i + 1], tail * sizeof(s->run_figures[0]));
	s->n_sources--;
}

int session_add_root(struct session *s, pid_t pid)
{
	size_t i = 0;

	while (i < s->n_sources) {
		int err = s->sources[i]->ops->add_root(s->sources[i], pid);

		if (err && i == 0)
			return err;
		if (err)
			drop_source(s, i, "adding the process", err);
		else
			i++;
	}
	return 0;
}

int session_exclude_cgroup(struct session *s, int cgroup_dir_fd, int except_dir_fd)
{
	const struct source_ops *ops = s->kernel ? s->kernel->ops : NULL;

	return ops && ops->exclude_cgroup ? ops->exclude_cgroup(s->kernel, cgroup_dir_fd, except_dir_fd) :
	       -EOPNOTSUPP;
}

int session_add_cgroup(struct session *s, int cgroup_dir_fd, int except_dir_fd)
{
	size_t i = 0;

	while (i < s->n_sources) {
		struct source *src = s->sources[i];
		int err = src->ops->add_cgroup ? src->ops->add_cgroup(src, cgroup_dir_fd, except_dir_fd) :
			  -EOPNOTSUPP;

		if (err && i == 0)
			return err;
		if (err)
			drop_source(s, i, "measuring a cgroup", err);
		else
			i++;
	}
	return 0;
}

int session_start(struct session *s)
{
	size_t i = 0;

	while (i < s->n_sources) {
		int err = s->sources[i]->ops->start(s->sources[i]);

		if (err && i == 0)
			return err;
		if (err)
			drop_source(s, i, "starting", err);
		else
			i++;
	}
	return 0;
}

/* Counters, host facts and notes. */
static void fill_context(struct session *s, struct report *rec)
{
	const struct source_ops *ops = s->kernel ? s->kernel->ops : NULL;

	rec->counters = NULL;
	if (ops && ops->counters) {
		ops->counters(s->kernel, rec->kind == REPORT_WINDOW, &s->counters);
		if (rec->kind == REPORT_RUN && ops->check_sums)
			ops->check_sums(s->kernel, &s->counters);
		rec->counters = &s->counters;
	}
	rec->host = &s->host;
	rec->skipped = s->note_ptrs;
	rec->n_skipped = s->n_notes;
}

/*
 * The primary figure is the best source's that was measured (sources are
 * best first), else the best source's; the others go beside it in order.
 * A figure that is not the tree's (a shared cgroup's) is never primary:
 * without another, the primary says the tree was not measured. Without
 * any source, rec->primary is left empty. The unique figure goes beside;
 * with --measure unique and it measured, it is the primary, and the
 * summed one goes first among the others.
 */
static void choose_primary(struct session *s, const struct figure *figs, const struct figure *u,
			   struct report *rec)
{
	bool unique_first = s->measure_unique && u->measured;
	size_t i, primary = s->n_sources;

	/* The first of the tree's measured, else the first of the tree's. */
	for (i = s->n_sources; i-- > 0;)
		if (!figs[i].not_tree && (figs[i].measured || primary == s->n_sources ||
					  !figs[primary].measured))
			primary = i;
	memset(&rec->primary, 0, sizeof(rec->primary));
	if (primary < s->n_sources) {
		rec->primary = figs[primary];
	} else if (s->n_sources) {
		rec->primary.source = "unavailable";
		rec->primary.inexact_reason = "no source could measure the tree itself; "
					      "the figures beside it are not the tree's";
	}
	rec->n_others = 0;
	for (i = 0; i < s->n_sources; i++)
		if (i != primary)
			s->others[rec->n_others++] = figs[i];
	rec->others = s->others;
	rec->unique = u;
	if (unique_first && rec->n_others < SESSION_MAX_SOURCES) {
		memmove(&s->others[1], &s->others[0], rec->n_others * sizeof(s->others[0]));
		s->others[0] = rec->primary;
		rec->n_others++;
		rec->primary = *u;
	}
}

/* One source's window; on failure, a figure that says why. */
static void close_source(struct session *s, size_t i)
{
	struct source *src = s->sources[i];
	struct figure *f = &s->figures[i];

	if (src->ops->close_window(src, f)) {
		/* Through the helper: its reason (it went away, say). */
		const char *why = src->ops->refusal ? src->ops->refusal(src) : NULL;

		memset(f, 0, sizeof(*f));
		f->source = src->name;
		f->inexact_reason = why && *why ? why : "reading failed";
	}
	figure_merge(&s->run_figures[i], f, s->windows == 0);
	/* The source that took the tree's cgroup closed its unique window
	 * with its own. */
	if (src->ops->unique_window && s->unique_taken) {
		src->ops->unique_window(src, &s->unique_fig);
		if (!s->unique_fig.measured && !s->unique_fig.inexact_reason)
			s->unique_fig.inexact_reason = s->unique_why;
	}
}

/*
 * Unique memory with part of the tree in another cgroup (other_cgroups):
 * the pages charged there are missing, so the truth lies between the
 * figure and summed RSS's peak (each page the tree maps counts there at
 * least once): the bound is their difference, from the tree's summed figure,
 * or from its upper end where that figure is bounded, not exact (before 6.2).
 */
static void bound_unique(struct figure *u, const struct figure *figs, size_t n)
{
	for (size_t i = 0; u->measured && u->other_cgroups && i < n; i++) {
		uint64_t upper;

		if (figs[i].not_tree || !figs[i].measured || !(figs[i].exact || figs[i].bound_known))
			continue;
		upper = figs[i].peak_bytes + (figs[i].exact ? 0 : figs[i].error_bound_bytes);
		u->bound_known = true;
		u->error_bound_bytes = upper > u->peak_bytes ? upper - u->peak_bytes : 0;
		return;
	}
}

int session_close_window(struct session *s, struct report *rec)
{
	/* Not measured unless a source says otherwise. */
	memset(&s->unique_fig, 0, sizeof(s->unique_fig));
	s->unique_fig.source = "unavailable";
	s->unique_fig.scope = UNIQUE_SCOPE;
	s->unique_fig.inexact_reason = s->unique_why;
	for (size_t i = 0; i < s->n_sources; i++)
		close_source(s, i);
	bound_unique(&s->unique_fig, s->figures, s->n_sources);
	figure_merge(&s->unique_run, &s->unique_fig, s->windows == 0);
	s->windows++;
	rec->window = s->windows;
	fill_context(s, rec);
	choose_primary(s, s->figures, &s->unique_fig, rec);
	if (!s->n_sources) {
		rec->primary.source = "unavailable";
		rec->primary.inexact_reason = "no source could be used";
	}
	return 0;
}

void session_fill_run(struct session *s, struct report *rec)
{
	fill_context(s, rec);
	choose_primary(s, s->run_figures, &s->unique_run, rec);
	rec->windows = s->windows;
}

void session_command_started(struct session *s, pid_t pid)
{
	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i]->ops->command_started)
			s->sources[i]->ops->command_started(s->sources[i], pid);
}

void session_command_exited(struct session *s, pid_t pid, const struct rusage *ru)
{
	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i]->ops->command_exited)
			s->sources[i]->ops->command_exited(s->sources[i], pid, ru);
}

pid_t session_command_fork(struct session *s)
{
	for (size_t i = 0; i < s->n_sources; i++)
		if (s->sources[i]->ops->command_fork)
			return s->sources[i]->ops->command_fork(s->sources[i]);
	return fork();
}

/* The kernel source's optional operation op, or NULL. */
#define KERNEL_OP(s, op) ((s)->kernel ? (s)->kernel->ops->op : NULL)

int64_t session_procs_live(struct session *s)
{
	return KERNEL_OP(s, procs_live) ? s->kernel->ops->procs_live(s->kernel) : -1;
}

const char *session_helper_why(const struct session *s)
{
	return KERNEL_OP(s, refusal) ? s->kernel->ops->refusal(s->kernel) : NULL;
}

const char *session_bpf_load(const struct session *s)
{
	return s->host.bpf_load;
}

/* The bpf source, here or through the helper: either has the record. */
bool session_has_bpf(const struct session *s)
{
	return s->kernel != NULL;
}

const char *session_note(const struct session *s, size_t i)
{
	return i < s->n_notes ? s->notes[i] : NULL;
}

const char *session_source_name(const struct session *s)
{
	return s->n_sources ? s->sources[0]->name : "unavailable";
}

int session_drain_sums(struct session *s, source_sum_fn fn, void *ctx, uint64_t *drops)
{
	return KERNEL_OP(s, drain_sums) ? s->kernel->ops->drain_sums(s->kernel, fn, ctx, drops)
					: -EOPNOTSUPP;
}

int session_mm_identity(struct session *s, uint64_t key, uint32_t tgid, uint32_t *vpid, char *comm)
{
	return KERNEL_OP(s, mm_identity) ? s->kernel->ops->mm_identity(s->kernel, key, tgid, vpid, comm)
					 : -EOPNOTSUPP;
}

int64_t session_window_start_pages(struct session *s)
{
	return KERNEL_OP(s, window_start_pages) ? s->kernel->ops->window_start_pages(s->kernel) : 0;
}

void session_close(struct session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_sources; i++)
		s->sources[i]->ops->destroy(s->sources[i]);
	free(s);
}
