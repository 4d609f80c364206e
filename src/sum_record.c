// SPDX-License-Identifier: MIT
/* The exact record of the tree sum during a run (sum_record.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "session.h"
#include "sum_record.h"
#include "timeline_export.h"

#define SAMPLER_RESOLUTION_NS 10000ULL  /* 10 us: the sampler model's slots */

/* "COMMAND ARG..." or "-p PID,PID", cut to fit. */
static void name_run(char *buf, size_t len, char *const *argv, const pid_t *pids, size_t n_pids)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; argv && argv[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
	for (size_t i = 0; !argv && i < n_pids && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? "," : "-p ", (int)pids[i]);
}

int sum_record_open(struct sum_record *r, const char *path, bool sampling,
		    char *const *argv, const pid_t *pids, size_t n_pids)
{
	int err;

	memset(r, 0, sizeof(*r));
	trace_init(&r->drain, 1);       /* every change: the timeline keeps min and max */
	trace_init(&r->sampler, SAMPLER_RESOLUTION_NS);
	r->sampling = sampling;
	r->path = path;
	name_run(r->title, sizeof(r->title), argv, pids, n_pids);
	if (!path)
		return 0;
	r->out = fopen(path, "we");
	if (!r->out) {
		err = -errno;
		fprintf(stderr, "peakbpf: --timeline: cannot write %s: %s\n", path, strerror(-err));
		return err;
	}
	return 0;
}

void sum_record_begin(struct sum_record *r, uint64_t t0_ns, int64_t start_pages, long page_size)
{
	if (r->sampling)
		trace_add(&r->sampler, t0_ns, start_pages);
	if (!r->path)
		return;
	timeline_init(&r->timeline, t0_ns, page_size > 0 ? (uint64_t)page_size : 1, 0);
	timeline_add(&r->timeline, t0_ns, start_pages);
}

int sum_record_drain(struct sum_record *r, struct session *s, uint64_t *drops)
{
	int err = session_drain_sums(s, &r->drain, drops);

	for (size_t i = 0; i < r->drain.n; i++) {
		if (r->path && timeline_add(&r->timeline, r->drain.ns[i], r->drain.value[i]) && !err)
			err = -ENOMEM;
		if (r->sampling && trace_add(&r->sampler, r->drain.ns[i], r->drain.value[i]) && !err)
			err = -ENOMEM;
	}
	r->drain.n = 0;         /* keeps its allocation for the next drain */
	return err;
}

void sum_record_window(struct sum_record *r, uint64_t ns, unsigned window)
{
	char label[TIMELINE_LABEL_LEN];

	if (!r->path)
		return;
	snprintf(label, sizeof(label), "window %u", window);
	timeline_mark(&r->timeline, ns, TL_MARK_WINDOW, 0, label);
}

int sum_record_finish(struct sum_record *r, uint64_t end_ns, uint64_t peak_bytes, uint64_t peak_ns)
{
	char err[512];
	int rc;

	if (!r->out)
		return 0;
	timeline_end(&r->timeline, end_ns);
	timeline_mark(&r->timeline, peak_ns, TL_MARK_PEAK,
		      (int64_t)(peak_bytes / r->timeline.unit_bytes), "peak");
	/* Written through the path, as `peakbpf plot` writes: the stream
	 * opened at the start only proved it can be. */
	fclose(r->out);
	r->out = NULL;
	rc = timeline_write(&r->timeline, r->title, r->path, err, sizeof(err));
	if (rc)
		fprintf(stderr, "peakbpf: --timeline: %s\n", err);
	return rc;
}

void sum_record_free(struct sum_record *r)
{
	if (r->out) {
		/* The run failed before its end: no empty file is left. */
		fclose(r->out);
		unlink(r->path);
	}
	r->out = NULL;
	trace_free(&r->drain);
	trace_free(&r->sampler);
	timeline_free(&r->timeline);
}
