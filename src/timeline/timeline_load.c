// SPDX-License-Identifier: MIT
/*
 * Reading back a timeline that timeline_export.c wrote (.json or .csv), for
 * `peakbpf plot`. Only that writer's output is read: the JSON reader looks
 * for its keys in each event, not for JSON in general. Buckets are dense
 * again (a JSON counter event stands for every bucket up to the next one).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fileutil.h"
#include "timeline_export.h"

#define TREE_COUNTER "{\"name\":\"tree rss\","
#define MAX_BYTES 9e15    /* 2^53: a double holds every byte count below it */
#define MAX_TS_US 1e15    /* 31 years: its ns fit in 64 bits */

/* A non-negative number rounded (no libm: peakbpf does not link it);
 * callers check the range first. */
static uint64_t round_u(double v)
{
	return v > 0 ? (uint64_t)(v + 0.5) : 0;
}

static bool bytes_ok(double v)
{
	return v >= 0 && v <= MAX_BYTES;
}

/* Where pat is in [p, end), or NULL. A loop, not strstr: the events are
 * searched one after another, and each search must stop at its end. */
static const char *find_in(const char *p, const char *end, const char *pat)
{
	size_t n = strlen(pat);

	for (; p + n <= end; p++)
		if (*p == *pat && !memcmp(p, pat, n))
			return p;
	return NULL;
}

/* The number after "key": in [p, end). */
static bool num_in(const char *p, const char *end, const char *key, double *v)
{
	char pat[48], *stop;
	const char *at;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	at = find_in(p, end, pat);
	if (!at)
		return false;
	at += strlen(pat);
	errno = 0;
	*v = strtod(at, &stop);
	return stop != at && !errno && isfinite(*v) && stop <= end;
}

/* Buckets up to idx carry the last one's values (the first: its own). */
static int fill_to(struct timeline *t, size_t idx, int64_t min, int64_t max)
{
	if (idx >= t->cap || (t->n && idx < t->n - 1))
		return -EINVAL;
	for (; t->n < idx; t->n++)
		t->b[t->n] = t->n ? t->b[t->n - 1] : (struct tl_bucket){ min, max };
	t->b[idx] = (struct tl_bucket){ min, max };
	t->n = idx + 1;
	return 0;
}

/* An empty timeline of n buckets of width ns, its buckets allocated. */
static int prepare(struct timeline *t, double width_ns, double n)
{
	size_t cap = 2;

	if (!(width_ns >= 1 && width_ns < 1e18 && n >= 1 && n <= TIMELINE_MAX_BUCKETS))
		return -EINVAL;
	while (cap < (size_t)n)
		cap *= 2;
	timeline_init(t, 0, 1, cap);
	t->width_ns = (uint64_t)width_ns;
	t->b = calloc((size_t)n, sizeof(*t->b));
	if (!t->b)
		return -ENOMEM;
	t->cap = (size_t)n;
	return 0;
}

/* The buckets are in: the timeline's own facts from them. */
static int finish(struct timeline *t, size_t n)
{
	if (t->n != n)
		return -EINVAL;
	t->has_value = true;
	t->last = t->b[n - 1].min;
	t->peak = t->b[0].max;
	for (size_t i = 1; i < n; i++)
		if (t->b[i].max > t->peak) {
			t->peak = t->b[i].max;
			t->peak_ns = i * t->width_ns;
		}
	t->end_ns = n * t->width_ns;
	return 0;
}

/* The string that starts at s (after its quote), up to its closing quote
 * before end; escapes are kept as they are. */
static void copy_string(char *dst, size_t len, const char *s, const char *end)
{
	const char *q = s;
	size_t k;

	while (q < end && *q != '"')
		q += *q == '\\' && q + 1 < end ? 2 : 1;
	k = (size_t)(q - s);
	snprintf(dst, len, "%.*s", (int)(k < len ? k : len - 1), s);
}

/* One trace event in [ev, end): a counter (a bucket) or an instant. */
static int json_event(struct timeline *t, const char *ev, const char *end)
{
	double ts, a, b;
	char name[TIMELINE_LABEL_LEN];

	if (!num_in(ev, end, "ts", &ts))
		return 0;       /* metadata */
	if (ts < 0 || ts > MAX_TS_US)
		return -EINVAL;
	if (find_in(ev, end, "\"ph\":\"C\"") && strncmp(ev, TREE_COUNTER, strlen(TREE_COUNTER)))
		return 0;       /* a holder's line: not read back */
	if (find_in(ev, end, "\"ph\":\"C\"") && num_in(ev, end, "max", &b) && num_in(ev, end, "min", &a))
		return !bytes_ok(a) || !bytes_ok(b) ? -EINVAL : fill_to(t, (size_t)round_u(ts * 1e3 / (double)t->width_ns), (int64_t)a, (int64_t)b);
	copy_string(name, sizeof(name), ev + strlen("{\"name\":\""), end);
	if (num_in(ev, end, "bytes", &b)) {
		if (!bytes_ok(b))
			return -EINVAL;
		timeline_mark(t, round_u(ts * 1e3), TL_MARK_PEAK, (int64_t)b, "peak");
		return 0;
	}
	timeline_mark(t, round_u(ts * 1e3), TL_MARK_WINDOW, 0, name);
	return 0;
}

static int load_json(const char *text, struct timeline *t, char *title, size_t title_len)
{
	const char *facts = strstr(text, "\"peakbpf_timeline\":{"), *ev, *next;
	double width, n, end_s;
	int err;

	if (!facts || !num_in(facts, facts + strlen(facts), "bucket_ns", &width) ||
	    !num_in(facts, facts + strlen(facts), "buckets", &n))
		return -EINVAL;
	err = prepare(t, width, n);
	if (err)
		return err;
	ev = find_in(facts, facts + strlen(facts), "\"title\":\"");
	if (ev)
		copy_string(title, title_len, ev + strlen("\"title\":\""), facts + strlen(facts));
	for (ev = find_in(text, facts, "{\"name\":\""); ev; ev = next) {
		next = find_in(ev + 1, facts, "{\"name\":\"");
		err = json_event(t, ev, next && next < facts ? next : facts);
		if (err)
			return err;
	}
	err = finish(t, (size_t)n);
	if (!err && num_in(facts, facts + strlen(facts), "end_s", &end_s) &&
	    end_s * 1e9 >= (double)(t->end_ns - t->width_ns) && end_s * 1e9 <= (double)t->end_ns)
		t->end_ns = round_u(end_s * 1e9);       /* the run's end, in the last bucket */
	return err;
}

/* One CSV row: kind,t_s,width_s,min_bytes,max_bytes,label. */
static int csv_row(struct timeline *t, char *line)
{
	char *f[6], *stop;
	double v[5] = { 0 };

	f[0] = line;
	for (int i = 1; i < 6; i++) {
		f[i] = strchr(f[i - 1], ',');
		if (!f[i])
			return -EINVAL;
		*f[i]++ = '\0';
	}
	for (int i = 1; i < 5; i++) {
		if (!*f[i])
			continue;
		errno = 0;
		v[i] = strtod(f[i], &stop);
		if (*stop || stop == f[i] || errno || !bytes_ok(v[i]) || (i < 3 && v[i] > MAX_TS_US / 1e6))
			return -EINVAL;
	}
	if (!strcmp(f[0], "bucket")) {
		if (!t->b && prepare(t, v[2] * 1e9 + 0.5, TIMELINE_MAX_BUCKETS))
			return -EINVAL;
		return fill_to(t, (size_t)round_u(v[1] * 1e9 / (double)t->width_ns), (int64_t)v[3], (int64_t)v[4]);
	}
	if (strcmp(f[0], "mark") && strcmp(f[0], "peak"))
		return -EINVAL;
	f[5][strcspn(f[5], ",")] = '\0';       /* the holders' columns follow */
	timeline_mark(t, round_u(v[1] * 1e9), *f[0] == 'm' ? TL_MARK_WINDOW : TL_MARK_PEAK,
		      (int64_t)v[4], f[5]);
	return 0;
}

static int load_csv(char *text, struct timeline *t)
{
	static const char header[] = "kind,t_s,width_s,min_bytes,max_bytes,label";
	char *line, *save = NULL;
	int err;

	/* The holders' columns, if any, follow label: not read back. */
	if (strncmp(text, header, strlen(header)) || !strchr(",\n", text[strlen(header)]) ||
	    !strchr(text, '\n'))
		return -EINVAL;
	for (line = strtok_r(strchr(text, '\n'), "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		err = csv_row(t, line);
		if (err)
			return err;
	}
	return t->n ? finish(t, t->n) : -EINVAL;
}

int timeline_load(const char *path, struct timeline *t, char *title, size_t title_len,
		  char *err, size_t errlen)
{
	enum tl_format f = timeline_format_of(path);
	char *text = NULL;
	int rc;

	memset(t, 0, sizeof(*t));
	if (!timeline_format_loads(f)) {
		snprintf(err, errlen, "%s: a timeline to plot is a .json or .csv file that --timeline wrote", path);
		return -EINVAL;
	}
	rc = read_text_file(path, &text, NULL);
	if (rc) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-rc));
		return rc;
	}
	snprintf(title, title_len, "%s", path);
	rc = f == TL_FORMAT_JSON ? load_json(text, t, title, title_len) : load_csv(text, t);
	free(text);
	if (rc) {
		timeline_free(t);
		snprintf(err, errlen, "%s: not a timeline written by peakbpf --timeline (%s)", path,
			 rc == -ENOMEM ? "out of memory" : "malformed");
	}
	return rc;
}
