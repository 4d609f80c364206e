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

/* The holders' lines a file has: who each is (the trace's pid of holder k
 * is HOLDER_TRACE_PID + k, as timeline_export.c writes it). */
#define HOLDER_TRACE_PID 2
struct holders {
	uint32_t pid[TL_TOP];
	char comm[TL_TOP][TL_COMM_LEN];
	size_t n;
};

/* Holder k's value v at ns, onto its line (started on its first value). */
static int holder_value(struct timeline *t, const struct holders *h, size_t k, uint64_t ns, double v)
{
	struct tl_track *tr;
	int err;

	if (k >= h->n || !bytes_ok(v))
		return -EINVAL;
	err = timeline_track_add(t, ns, k + 1, h->pid[k], (int64_t)v, &tr);
	if (tr) {
		tr->pid = h->pid[k];
		snprintf(tr->comm, sizeof(tr->comm), "%s", h->comm[k]);
	}
	return err;
}

/* A holder's counter event: its max (and min) at ts onto its line. */
static int json_holder(struct timeline *t, const struct holders *h, const char *ev, const char *end, double ts)
{
	double pid, a, b;
	int err;

	if (!num_in(ev, end, "pid", &pid) || !num_in(ev, end, "max", &b) || !num_in(ev, end, "min", &a) ||
	    pid < HOLDER_TRACE_PID || pid >= HOLDER_TRACE_PID + TL_TOP)
		return -EINVAL;
	err = holder_value(t, h, (size_t)pid - HOLDER_TRACE_PID, round_u(ts * 1e3), a);
	return err ? err : holder_value(t, h, (size_t)pid - HOLDER_TRACE_PID, round_u(ts * 1e3), b);
}

/* The holders of the facts (pid, comm, in the order of their trace pids). */
static int json_holders(const char *facts, const char *end, struct holders *h)
{
	const char *at = find_in(facts, end, "\"holders\":[");

	memset(h, 0, sizeof(*h));
	while (at && (at = find_in(at + 1, end, "{\"trace_pid\":")) && h->n < TL_TOP) {
		const char *close = find_in(at, end, "}"), *c;
		double tp, pid;

		if (!close || !num_in(at, close, "trace_pid", &tp) || !num_in(at, close, "pid", &pid) ||
		    tp != HOLDER_TRACE_PID + (double)h->n || pid < 0 || pid > UINT32_MAX)
			return -EINVAL;
		h->pid[h->n] = (uint32_t)pid;
		c = find_in(at, close, "\"comm\":\"");
		if (c)
			copy_string(h->comm[h->n], TL_COMM_LEN, c + strlen("\"comm\":\""), close);
		h->n++;
	}
	return 0;
}

/* One trace event in [ev, end): a counter (a bucket, or a holder's
 * value) or an instant. */
static int json_event(struct timeline *t, const struct holders *h, const char *ev, const char *end)
{
	double ts, a, b;
	char name[TIMELINE_LABEL_LEN];

	if (!num_in(ev, end, "ts", &ts))
		return 0;       /* metadata */
	if (ts < 0 || ts > MAX_TS_US)
		return -EINVAL;
	if (find_in(ev, end, "\"ph\":\"C\"") && strncmp(ev, TREE_COUNTER, strlen(TREE_COUNTER)))
		return json_holder(t, h, ev, end, ts);
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
	struct holders h;
	int err;

	if (!facts || !num_in(facts, facts + strlen(facts), "bucket_ns", &width) ||
	    !num_in(facts, facts + strlen(facts), "buckets", &n))
		return -EINVAL;
	err = prepare(t, width, n);
	if (!err)
		err = json_holders(facts, facts + strlen(facts), &h);
	if (!err && h.n)
		err = timeline_tracks_init(t, TL_TOP, 0);
	if (err)
		return err;
	ev = find_in(facts, facts + strlen(facts), "\"title\":\"");
	if (ev)
		copy_string(title, title_len, ev + strlen("\"title\":\""), facts + strlen(facts));
	for (ev = find_in(text, facts, "{\"name\":\""); ev; ev = next) {
		next = find_in(ev + 1, facts, "{\"name\":\"");
		err = json_event(t, &h, ev, next && next < facts ? next : facts);
		if (err)
			return err;
	}
	err = finish(t, (size_t)n);
	if (!err && num_in(facts, facts + strlen(facts), "end_s", &end_s) &&
	    end_s * 1e9 >= (double)(t->end_ns - t->width_ns) && end_s * 1e9 <= (double)t->end_ns)
		t->end_ns = round_u(end_s * 1e9);       /* the run's end, in the last bucket */
	return err;
}

/* The header's holder columns, "max_bytes PID COMM" after label. */
static int csv_holders(const char *header, struct holders *h)
{
	const char *c = header;

	memset(h, 0, sizeof(*h));
	while ((c = strstr(c, ",max_bytes ")) && h->n < TL_TOP) {
		char *stop;
		unsigned long pid;

		c += strlen(",max_bytes ");
		errno = 0;
		pid = strtoul(c, &stop, 10);
		if (errno || stop == c || *stop != ' ' || pid > UINT32_MAX)
			return -EINVAL;
		h->pid[h->n] = (uint32_t)pid;
		snprintf(h->comm[h->n], TL_COMM_LEN, "%.*s", (int)strcspn(stop + 1, ",\n"), stop + 1);
		h->n++;
	}
	return 0;
}

/* A bucket row's holder cells (after label): each value onto its line. */
static int csv_holder_cells(struct timeline *t, const struct holders *h, const char *cells, uint64_t ns)
{
	for (size_t k = 0; k < h->n && cells; k++) {
		char *stop;
		double v;

		cells++;        /* the comma */
		if (*cells && *cells != ',') {
			errno = 0;
			v = strtod(cells, &stop);
			if (errno || stop == cells || (*stop && *stop != ',') || holder_value(t, h, k, ns, v))
				return -EINVAL;
		}
		cells = strchr(cells, ',');
	}
	return 0;
}

/* One CSV row: kind,t_s,width_s,min_bytes,max_bytes,label[,holder...]; a
 * title row's label is the run's name. */
static int csv_row(struct timeline *t, const struct holders *h, char *line, char *title, size_t title_len)
{
	char *f[6], *stop;
	double v[5] = { 0 };

	char *cells;

	f[0] = line;
	for (int i = 1; i < 6; i++) {
		f[i] = strchr(f[i - 1], ',');
		if (!f[i])
			return -EINVAL;
		*f[i]++ = '\0';
	}
	cells = strchr(f[5], ',');      /* the holders' cells, if any */
	for (int i = 1; i < 5; i++) {
		if (!*f[i])
			continue;
		errno = 0;
		v[i] = strtod(f[i], &stop);
		if (*stop || stop == f[i] || errno || !bytes_ok(v[i]) || (i < 3 && v[i] > MAX_TS_US / 1e6))
			return -EINVAL;
	}
	if (!strcmp(f[0], "bucket")) {
		if (!t->b && (prepare(t, v[2] * 1e9 + 0.5, TIMELINE_MAX_BUCKETS) ||
			      (h->n && timeline_tracks_init(t, TL_TOP, 0))))
			return -EINVAL;
		if (fill_to(t, (size_t)round_u(v[1] * 1e9 / (double)t->width_ns), (int64_t)v[3], (int64_t)v[4]))
			return -EINVAL;
		return csv_holder_cells(t, h, cells, round_u(v[1] * 1e9));
	}
	/* The writer puts every bucket first: a mark before one is not its. */
	if ((strcmp(f[0], "mark") && strcmp(f[0], "peak") && strcmp(f[0], "title")) || !t->b)
		return -EINVAL;
	f[5][strcspn(f[5], ",")] = '\0';       /* the holders' columns follow */
	if (*f[0] == 't') {
		snprintf(title, title_len, "%s", f[5]);
		return 0;
	}
	timeline_mark(t, round_u(v[1] * 1e9), *f[0] == 'm' ? TL_MARK_WINDOW : TL_MARK_PEAK,
		      (int64_t)v[4], f[5]);
	return 0;
}

static int load_csv(char *text, struct timeline *t, char *title, size_t title_len)
{
	static const char header[] = "kind,t_s,width_s,min_bytes,max_bytes,label";
	char *line, *save = NULL;
	struct holders h;
	int err;

	/* The holders' columns, if any, follow label. */
	if (strncmp(text, header, strlen(header)) || !strchr(",\n", text[strlen(header)]) ||
	    !strchr(text, '\n'))
		return -EINVAL;
	*strchr(text, '\n') = '\0';
	err = csv_holders(text, &h);
	if (err)
		return err;
	for (line = strtok_r(text + strlen(text) + 1, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		err = csv_row(t, &h, line, title, title_len);
		if (err)
			return err;
	}
	return t->n ? finish(t, t->n) : -EINVAL;
}

int timeline_parse(enum tl_format f, char *text, struct timeline *t, char *title, size_t title_len)
{
	int rc;

	memset(t, 0, sizeof(*t));
	rc = f == TL_FORMAT_JSON ? load_json(text, t, title, title_len) : load_csv(text, t, title, title_len);
	if (rc)
		timeline_free(t);
	return rc;
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
	rc = timeline_parse(f, text, t, title, title_len);     /* frees t on error */
	free(text);
	if (rc) {
		snprintf(err, errlen, "%s: not a timeline written by peakbpf --timeline (%s)", path,
			 rc == -ENOMEM ? "out of memory" : "malformed");
	}
	return rc;
}
