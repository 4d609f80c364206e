// SPDX-License-Identifier: MIT
/*
 * A step that spans nodes: each node's slurmstepd keeps a --record of its
 * tree's sum (rank_file.h: fine windows on the wall clock, each with its peak
 * and lowest sum) from a thread of its own, and the step's peak of the sum
 * across nodes is what `peakbpf merge` computes from those records
 * (merge.h), by the same code.
 */
#include "spank_record.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "merge.h"

#define DRAIN_EVERY_NS 20000000ULL      /* the ring holds far more than 20 ms of changes */

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static int on_change(void *ctx, const struct peakbpf_change *c)
{
	rank_file_change(ctx, c->sum_pages);
	return 0;
}

static void drain(struct pb_record *r)
{
	if (peakbpf_changes_drain(r->s, on_change, &r->rr, &r->drops) < 0)
		r->drain_failed = true;
}

/* Cut the open window and write its line (rank_file.h's order). */
static int cut(struct pb_record *r)
{
	struct peakbpf_figure *f = NULL;
	uint64_t peak = 0, peak_ns = 0;
	int64_t start_pages = 0;
	int err;

	rank_file_before_cut(&r->rr);
	err = peakbpf_close_window(r->s, &f);
	if (err)
		return err;
	rank_file_mark(&r->rr);
	drain(r);
	peakbpf_figure_peak(f, &peak);
	peakbpf_figure_peak_time(f, &peak_ns);
	peakbpf_window_start_pages(r->s, &start_pages);
	rank_file_window(&r->rr, peak, peak_ns, peakbpf_figure_exact(f), peakbpf_figure_source(f),
			   start_pages, r->drops);
	peakbpf_figure_free(f);
	r->next_ns = rank_file_next_close(&r->rr, mono_ns());
	return 0;
}

static void *run(void *arg)
{
	struct pb_record *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint64_t now = mono_ns(), wait;

		if (now >= r->next_ns) {
			if (cut(r)) {
				r->cut_failed = true;
				break;
			}
			continue;
		}
		drain(r);
		wait = r->next_ns - now < DRAIN_EVERY_NS ? r->next_ns - now : DRAIN_EVERY_NS;
		nanosleep(&(struct timespec){ .tv_sec = (time_t)(wait / 1000000000ULL),
					      .tv_nsec = (long)(wait % 1000000000ULL) }, NULL);
	}
	return NULL;
}

int pb_record_start(struct pb_record *r, struct peakbpf_session *s, const char *dir, const pid_t *pids,
		    size_t n)
{
	int64_t start_pages = 0;
	int err;

	memset(r, 0, sizeof(*r));
	r->s = s;
	err = rank_file_open(&r->rr, dir, RECORD_INTERVAL_DEFAULT_NS, NULL, pids, n);
	if (err) {
		rank_file_close(&r->rr);
		return err;
	}
	r->opened = true;
	peakbpf_window_start_pages(s, &start_pages);
	rank_file_begin(&r->rr, peakbpf_has_bpf(s), start_pages, sysconf(_SC_PAGESIZE));
	r->next_ns = rank_file_next_close(&r->rr, mono_ns());
	err = -pthread_create(&r->thread, NULL, run, r);
	if (err) {
		pb_record_abort(r);
		return err;
	}
	r->running = true;
	return 0;
}

int pb_record_stop(struct pb_record *r)
{
	if (!r->running)
		return -ENODATA;
	__atomic_store_n(&r->stop, true, __ATOMIC_RELEASE);
	pthread_join(r->thread, NULL);
	r->running = false;
	return r->cut_failed ? -EIO : cut(r);
}

int pb_record_finish(struct pb_record *r, uint64_t peak, bool exact, const char *source, int status)
{
	int err;

	if (!r->opened)
		return -ENODATA;
	err = rank_file_finish(&r->rr, peak, exact, source, status);
	rank_file_close(&r->rr);
	r->opened = false;
	return err;
}

void pb_record_abort(struct pb_record *r)
{
	if (!r->opened)
		return;
	r->opened = false;
	if (r->running) {
		__atomic_store_n(&r->stop, true, __ATOMIC_RELEASE);
		pthread_join(r->thread, NULL);
		r->running = false;
	}
	rank_file_close(&r->rr);
}

static int add_path(char ***paths, size_t *n, const char *dir, const char *name)
{
	char **p = realloc(*paths, (*n + 1) * sizeof(**paths));

	if (!p)
		return -ENOMEM;
	*paths = p;
	if (asprintf(&p[*n], "%s/%s", dir, name) < 0)
		return -ENOMEM;
	(*n)++;
	return 0;
}

int pb_record_merge(const char *dir, struct pb_merged *out, char *why, size_t why_len)
{
	struct merge_rec *recs = NULL;
	struct merge_result m;
	char **paths = NULL;
	size_t n = 0;
	struct dirent *e;
	DIR *d = opendir(dir);
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!d)
		return -errno;
	while (!err && (e = readdir(d)))
		if (strlen(e->d_name) > 6 && !strcmp(e->d_name + strlen(e->d_name) - 6, ".jsonl"))
			err = add_path(&paths, &n, dir, e->d_name);
	closedir(d);
	recs = calloc(n ? n : 1, sizeof(*recs));
	if (err || !recs) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++)
		if (merge_load(paths[i], &recs[i], why, why_len) != MERGE_OK) {
			err = -EINVAL;
			goto cleanup;
		}
	if (merge_check(recs, n, why, why_len) != MERGE_OK) {
		err = -EINVAL;
		goto cleanup;
	}
	err = merge_compute(recs, n, &m);
	if (err)
		goto cleanup;
	out->records = n;
	out->lower = m.lower;
	out->upper = m.upper;
	out->exact = m.exact;
	for (size_t i = 0; i < n; i++)
		out->complete += recs[i].complete;
cleanup:
	for (size_t i = 0; i < n; i++) {
		if (recs)
			merge_rec_free(&recs[i]);
		free(paths[i]);
	}
	free(recs);
	free(paths);
	return err;
}
