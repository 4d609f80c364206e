// SPDX-License-Identifier: MIT
/* `peakbpf merge`: reading --record files and checking they are one job
 * (merge.h); the bounds are merge.c's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "merge.h"

/* ---- one line of a record ------------------------------------------------
 * The records are written by record.c: flat objects whose keys are unique
 * in a line, the header's command array last. A key is found by its quoted
 * name and a colon, which cannot occur inside a JSON string (a quote there
 * is escaped). */

static const char *find_key(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	return p ? p + strlen(pat) : NULL;
}

/* 0: a number; 1: null; -1: missing or not an integer. */
static int get_int(const char *line, const char *key, int64_t *v)
{
	const char *p = find_key(line, key);
	char *end;
	long long n;

	if (!p)
		return -1;
	if (!strncmp(p, "null", 4))
		return 1;
	if (*p != '-' && (*p < '0' || *p > '9'))
		return -1;
	errno = 0;
	n = strtoll(p, &end, 10);
	if (errno || (*end != ',' && *end != '}'))
		return -1;
	*v = n;
	return 0;
}

static int get_uint(const char *line, const char *key, uint64_t *v)
{
	int64_t n = 0;
	int rc = get_int(line, key, &n);

	if (rc == 0 && n < 0)
		return -1;
	*v = (uint64_t)n;
	return rc;
}

static int get_bool(const char *line, const char *key, bool *v)
{
	const char *p = find_key(line, key);

	if (!p)
		return -1;
	if (!strncmp(p, "true", 4))
		*v = true;
	else if (!strncmp(p, "false", 5))
		*v = false;
	else
		return -1;
	return 0;
}

/* A string value, unescaped (\uXXXX becomes '?'). 0, 1 (null), -1. */
static int get_str(const char *line, const char *key, char *out, size_t len)
{
	const char *p = find_key(line, key);
	size_t n = 0;

	if (!p)
		return -1;
	if (!strncmp(p, "null", 4))
		return 1;
	if (*p++ != '"')
		return -1;
	while (*p && *p != '"') {
		char c = *p++;

		if (c == '\\') {
			c = *p++;
			if (c == 'u') {
				for (int i = 0; i < 4; i++)
					if (!*p++)
						return -1;
				c = '?';
			} else if (c == 'n' || c == 't' || c == 'r' || c == 'b' || c == 'f') {
				c = ' ';
			} else if (c != '"' && c != '\\' && c != '/') {
				return -1;
			}
		}
		if (n + 1 < len)
			out[n++] = c;
	}
	if (*p != '"')
		return -1;
	out[n] = '\0';
	return 0;
}

static int add_window(struct merge_rec *r, const struct merge_window *w)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		struct merge_window *nw = realloc(r->w, cap * sizeof(*nw));

		if (!nw)
			return -ENOMEM;
		r->w = nw;
		r->cap = cap;
	}
	r->w[r->n++] = *w;
	if (r->n == 1 || w->peak > r->peak) {
		r->peak = w->peak;
		r->peak_start = w->start;
		r->peak_end = w->end;
	}
	if (!w->exact)
		r->exact = false;
	return 0;
}

static int parse_header(struct merge_rec *r, const char *line, char *err, size_t errlen)
{
	int64_t format = 0, pid = 0, maxerr = 0, rank = -1, size = -1;

	if (get_int(line, "format", &format) || format != 1) {
		snprintf(err, errlen, "rank file format %lld is not 1: merge it with the peakbpf that wrote it",
			 (long long)format);
		return -EINVAL;
	}
	if (get_str(line, "host", r->host, sizeof(r->host)) || get_int(line, "pid", &pid) || pid <= 0) {
		snprintf(err, errlen, "the header has no host or PID");
		return -EINVAL;
	}
	r->pid = (long)pid;
	if (get_str(line, "job_id", r->job, sizeof(r->job)) < 0)
		r->job[0] = '\0';
	r->rank = get_int(line, "rank", &rank) == 0 && rank >= 0 ? (long)rank : -1;
	r->size = get_int(line, "size", &size) == 0 && size > 0 ? (long)size : -1;
	if (get_bool(line, "clock_known", &r->clock_known) || get_bool(line, "synced", &r->synced) ||
	    get_int(line, "maxerror_us", &maxerr) || maxerr < 0 || maxerr > MERGE_MAX_LEN_NS / 1000) {
		snprintf(err, errlen, "the header has no clock facts");
		return -EINVAL;
	}
	/* No clock facts: as far off as an unsynchronised clock may claim
	 * to be (the kernel caps maxerror at 16 s). */
	r->err_ns = r->clock_known ? maxerr * 1000 : 16000000000LL;
	r->exact = true;
	return 0;
}

static int parse_window(struct merge_rec *r, const char *line, char *err, size_t errlen)
{
	struct merge_window w = { 0 };
	int64_t len = 0, idx = 0;
	int min_rc, end_rc;

	if (get_int(line, "w", &idx) || get_int(line, "start_ns", &w.start) || get_int(line, "len_ns", &len) ||
	    get_uint(line, "peak", &w.peak) || get_bool(line, "exact", &w.exact)) {
		snprintf(err, errlen, "a window line lacks w, start_ns, len_ns, peak or exact");
		return -EINVAL;
	}
	/* Wall-clock instants until 2100 and windows shorter than a year:
	 * the sums and shifts below cannot overflow. */
	if (w.start < 0 || w.start > MERGE_MAX_NS || len < 0 || len > MERGE_MAX_LEN_NS) {
		snprintf(err, errlen, "window %lld: start_ns or len_ns out of range", (long long)idx);
		return -EINVAL;
	}
	min_rc = get_uint(line, "min", &w.min);
	end_rc = get_uint(line, "end", &w.end_sum);
	if (min_rc < 0 || end_rc < 0) {
		snprintf(err, errlen, "a window line's min or end is not a number or null");
		return -EINVAL;
	}
	if (get_int(line, "peak_ns", &w.peak_at) < 0 && find_key(line, "peak_ns")) {
		snprintf(err, errlen, "a window line's peak_ns is not a number or null");
		return -EINVAL;
	}
	w.min_known = min_rc == 0;
	w.end_known = end_rc == 0;
	w.end = w.start + len;
	if (r->n && w.start < r->w[r->n - 1].start) {
		snprintf(err, errlen, "window %lld starts before the one before it", (long long)idx);
		return -EINVAL;
	}
	return add_window(r, &w);
}

int merge_parse_line(struct merge_rec *r, const char *line, bool first, char *err, size_t errlen)
{
	int64_t maxerr = 0;
	bool synced;

	if (first) {
		if (!strstr(line, "\"kind\":\"peakbpf-record\"")) {
			snprintf(err, errlen, "not a peakbpf rank file (peakbpf --record DIR writes them)");
			return -EINVAL;
		}
		return parse_header(r, line, err, errlen);
	}
	if (strstr(line, "\"kind\":\"end\"")) {
		r->complete = true;
		if (get_int(line, "end_maxerror_us", &maxerr) == 0 && maxerr >= 0 &&
		    maxerr <= MERGE_MAX_LEN_NS / 1000 && maxerr * 1000 > r->err_ns)
			r->err_ns = maxerr * 1000;
		if (get_bool(line, "end_synced", &synced) == 0 && !synced)
			r->synced = false;
		return 0;
	}
	return parse_window(r, line, err, errlen);
}

int merge_load(const char *path, struct merge_rec *r, char *err, size_t errlen)
{
	char *line = NULL, why[256];
	size_t cap = 0, lineno = 0;
	ssize_t len;
	int rc = MERGE_OK;
	FILE *f;

	memset(r, 0, sizeof(*r));
	r->rank = r->size = -1;
	snprintf(r->path, sizeof(r->path), "%s", path);
	f = fopen(path, "re");
	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return MERGE_BAD_FILE;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		int e;

		lineno++;
		if (line[len - 1] != '\n') {
			/* The last write of a killed rank: its closed windows
			 * before it are whole. */
			r->truncated = true;
			break;
		}
		line[len - 1] = '\0';
		e = merge_parse_line(r, line, lineno == 1, why, sizeof(why));
		if (e == -ENOMEM) {
			snprintf(err, errlen, "out of memory reading %s", path);
			rc = MERGE_FAILED;
			goto cleanup;
		}
		if (e) {
			snprintf(err, errlen, "%s:%zu: %s", path, lineno, why);
			rc = MERGE_BAD_FILE;
			goto cleanup;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		rc = MERGE_BAD_FILE;
	} else if (lineno == 0 || (lineno == 1 && r->truncated)) {
		snprintf(err, errlen, "%s: empty or cut before its header: not a peakbpf rank file", path);
		rc = MERGE_BAD_FILE;
	}
cleanup:
	free(line);
	fclose(f);
	return rc;
}

void merge_rec_free(struct merge_rec *r)
{
	free(r->w);
	r->w = NULL;
	r->n = r->cap = 0;
}

/* ---- the checks ---------------------------------------------------------- */

static const struct merge_rec *sort_base;

static int by_host_pid(const void *a, const void *b)
{
	const struct merge_rec *x = &sort_base[*(const size_t *)a], *y = &sort_base[*(const size_t *)b];
	int c = strcmp(x->host, y->host);

	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

static int check_ranks(const struct merge_rec *recs, size_t n, char *err, size_t errlen)
{
	long size = -1, max_rank = -1;
	size_t *seen = NULL;
	int rc = MERGE_OK;

	for (size_t i = 0; i < n; i++) {
		if (recs[i].size > size)
			size = recs[i].size;
		if (recs[i].rank > max_rank)
			max_rank = recs[i].rank;
	}
	if (max_rank < 0)
		return MERGE_OK;        /* no rank known: nothing to check */
	if (size < max_rank + 1)
		size = max_rank + 1;
	seen = calloc((size_t)size, sizeof(*seen));
	if (!seen) {
		snprintf(err, errlen, "out of memory");
		return MERGE_FAILED;
	}
	for (size_t i = 0; i < n; i++) {
		long k = recs[i].rank;

		if (k < 0)
			continue;
		if (seen[k]) {
			snprintf(err, errlen, "rank %ld twice: %s and %s: merge one run's rank files at a time", k,
				 recs[seen[k] - 1].path, recs[i].path);
			rc = MERGE_DUPLICATE;
			goto cleanup;
		}
		seen[k] = i + 1;
	}
	for (long k = 0; k < size; k++) {
		if (!seen[k]) {
			snprintf(err, errlen, "rank %ld of %ld has no rank file: give every rank's file (or the "
				 "directory), or a rank's peakbpf did not start", k, size);
			rc = MERGE_MISSING_RANK;
			goto cleanup;
		}
	}
cleanup:
	free(seen);
	return rc;
}

int merge_check(const struct merge_rec *recs, size_t n, char *err, size_t errlen)
{
	size_t *idx;
	int rc = MERGE_OK;

	for (size_t i = 1; i < n; i++) {
		if (strcmp(recs[i].job, recs[0].job)) {
			snprintf(err, errlen, "rank files of different jobs: %s is job '%s', %s is job '%s': "
				 "merge one job's rank files at a time", recs[0].path, recs[0].job, recs[i].path,
				 recs[i].job);
			return MERGE_OTHER_JOB;
		}
	}
	idx = malloc((n ? n : 1) * sizeof(*idx));
	if (!idx) {
		snprintf(err, errlen, "out of memory");
		return MERGE_FAILED;
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	sort_base = recs;
	qsort(idx, n, sizeof(*idx), by_host_pid);
	for (size_t i = 1; i < n; i++) {
		const struct merge_rec *a = &recs[idx[i - 1]], *b = &recs[idx[i]];

		if (!strcmp(a->host, b->host) && a->pid == b->pid) {
			snprintf(err, errlen, "host %s PID %ld twice: %s and %s: a file given twice, or "
				 "rank files of two runs", a->host, a->pid, a->path, b->path);
			rc = MERGE_DUPLICATE;
			goto cleanup;
		}
	}
	rc = check_ranks(recs, n, err, errlen);
cleanup:
	free(idx);
	return rc;
}

