// SPDX-License-Identifier: MIT
/* The exact record of the tree sum during a run (sum_log.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fileutil.h"
#include "sum_log.h"
#include "timeline_export.h"

#define SAMPLER_RESOLUTION_NS 10000ULL  /* 10 us: the sampler model's slots */

/* "COMMAND ARG..." or "pid 7069 (python3), pid 7070 (...)": what ran, as
 * a person names it; cut to fit. */
static void name_run(char *buf, size_t len, char *const *argv, const pid_t *pids, size_t n_pids)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; argv && argv[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
	for (size_t i = 0; !argv && i < n_pids && used < len; i++) {
		char path[64], *comm = NULL;

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pids[i]);
		if (!read_text_file(path, &comm, NULL))
			comm[strcspn(comm, "\n")] = '\0';
		used += (size_t)snprintf(buf + used, len - used, "%spid %d%s%s%s", i ? ", " : "", (int)pids[i],
					 comm ? " (" : "", comm ? comm : "", comm ? ")" : "");
		free(comm);
	}
}

int sum_log_open(struct sum_log *r, const char *path, bool sampling,
		    char *const *argv, const pid_t *pids, size_t n_pids)
{
	int err;

	memset(r, 0, sizeof(*r));
	trace_init(&r->sampler, SAMPLER_RESOLUTION_NS);
	r->sampling = sampling;
	r->path = path;
	r->keep_timeline = path != NULL;
	name_run(r->title, sizeof(r->title), argv, pids, n_pids);
	if (!path)
		return 0;
	r->out = safe_fopen_shared(path, &r->created);
	if (!r->out) {
		err = -errno;
		fprintf(stderr, "peakbpf: --timeline: cannot write %s: %s\n", path, strerror(-err));
		return err;
	}
	return 0;
}

void sum_log_keep_timeline(struct sum_log *r)
{
	r->keep_timeline = true;
}

void sum_log_begin(struct sum_log *r, uint64_t t0_ns, int64_t start_pages, long page_size)
{
	if (r->sampling)
		trace_add(&r->sampler, t0_ns, start_pages);
	if (!r->keep_timeline)
		return;
	timeline_init(&r->timeline, t0_ns, page_size > 0 ? (uint64_t)page_size : 1, 0);
	timeline_tracks_init(&r->timeline, 0, 0);       /* no lines if it fails: -ENOMEM */
	timeline_add(&r->timeline, t0_ns, start_pages);
}

void sum_log_set_identify(struct sum_log *r, sum_log_identify_fn fn, void *ctx)
{
	r->identify = fn;
	r->identify_ctx = ctx;
}

/* A line just started: label it while its process is likely still known
 * (a drain comes within 20 ms of the change). */
static void label_track(struct sum_log *r, struct tl_track *tr)
{
	char comm[16] = "";
	uint32_t pid = 0;

	if (!r->identify || r->identify(r->identify_ctx, tr->key, tr->tgid, &pid, comm))
		return;                 /* unknown: labelled by tgid */
	tr->pid = pid;
	memcpy(tr->comm, comm, sizeof(tr->comm) < sizeof(comm) ? sizeof(tr->comm) : sizeof(comm));
	tr->comm[sizeof(tr->comm) - 1] = '\0';
}

int sum_log_change(struct sum_log *r, uint64_t mono_ns, int64_t sum_pages, uint64_t mm,
		      int64_t mm_pages, uint32_t tgid)
{
	struct tl_track *started;
	int err = 0;

	if (r->keep_timeline) {
		if (timeline_add(&r->timeline, mono_ns, sum_pages))
			err = -ENOMEM;
		if (timeline_track_add(&r->timeline, mono_ns, mm, tgid, mm_pages, &started))
			err = -ENOMEM;
		else if (started)
			label_track(r, started);
	}
	if (r->sampling && trace_add(&r->sampler, mono_ns, sum_pages))
		err = -ENOMEM;
	if (r->on_change)
		r->on_change(r->on_change_ctx, sum_pages);
	return err;
}

void sum_log_window(struct sum_log *r, uint64_t ns, unsigned window)
{
	char label[TIMELINE_LABEL_LEN];

	snprintf(label, sizeof(label), "window %u", window);
	sum_log_mark(r, ns, label);
}

void sum_log_mark(struct sum_log *r, uint64_t ns, const char *label)
{
	if (r->keep_timeline)
		timeline_mark(&r->timeline, ns, TL_MARK_WINDOW, 0, label);
}

int sum_log_write(struct sum_log *r, const char *path, uint64_t end_ns, uint64_t peak_bytes,
		     uint64_t peak_ns, char *err, size_t errlen)
{
	struct timeline *t = &r->timeline;

	if (!r->keep_timeline) {
		snprintf(err, errlen, "no timeline was recorded");
		return -ENODATA;
	}
	timeline_end(t, end_ns);
	/* One peak mark: a later write moves it. */
	if (t->n_marks && t->marks[t->n_marks - 1].kind == TL_MARK_PEAK)
		t->n_marks--;
	if (peak_bytes)
		timeline_mark(t, peak_ns, TL_MARK_PEAK, (int64_t)(peak_bytes / t->unit_bytes), "peak");
	return timeline_write(t, r->title, path, err, errlen);
}

int sum_log_finish(struct sum_log *r, uint64_t end_ns, uint64_t peak_bytes, uint64_t peak_ns)
{
	char err[512];
	int rc;

	if (!r->out)
		return 0;
	/* Written through the path, as `peakbpf plot` writes: the stream
	 * opened at the start only proved it can be, and names the file
	 * this run made, to remove if it could not be written (a full disk
	 * leaves no empty file). */
	rc = sum_log_write(r, r->path, end_ns, peak_bytes, peak_ns, err, sizeof(err));
	if (rc) {
		safe_discard(r->out, r->path, r->created);
		fprintf(stderr, "peakbpf: --timeline: %s\n", err);
	} else {
		fclose(r->out);
	}
	r->out = NULL;
	return rc;
}

void sum_log_name_run(struct sum_log *r, bool warmup, unsigned index, unsigned count)
{
	size_t used = strlen(r->title);

	snprintf(r->title + used, sizeof(r->title) - used, " (%s %u of %u: each run rewrites this "
		 "timeline)", warmup ? "warm-up" : "run", index, count);
}

void sum_log_free(struct sum_log *r)
{
	if (r->out) {
		/* The run failed before its end: no empty file is left, and
		 * one that was there is as it was. */
		fclose(r->out);
		if (r->created)
			unlink(r->path);
	}
	r->out = NULL;
	trace_free(&r->sampler);
	timeline_free(&r->timeline);
}
