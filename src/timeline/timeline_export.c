// SPDX-License-Identifier: MIT
/* A timeline as Chrome/Perfetto trace JSON or CSV, and the choice of
 * format by extension (timeline_export.h). The plots are in
 * timeline_plot.c, the readers in timeline_load.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "fileutil.h"
#include "json.h"
#include "timeline_export.h"

#define PID 1           /* the tree's process in the trace; holder k's is PID + 1 + k */
#define TID_SUM 1       /* its tracks: the sum's counter, windows, the peak */
#define TID_WINDOWS 2
#define TID_PEAK 3

static double since_us(const struct timeline *t, uint64_t ns)
{
	return (double)timeline_since(t, ns) / 1e3;
}

/* An event's common part; the caller adds args and closes it. */
static void begin_event(struct json_writer *w, const char *name, const char *ph, int tid)
{
	json_begin_object(w);
	json_kv_string(w, "name", name);
	json_kv_string(w, "ph", ph);
	json_kv_int(w, "pid", PID);
	json_kv_int(w, "tid", tid);
}

static void name_event_of(struct json_writer *w, int pid, const char *what, int tid, const char *name)
{
	json_begin_object(w);
	json_kv_string(w, "name", what);
	json_kv_string(w, "ph", "M");
	json_kv_int(w, "pid", pid);
	json_kv_int(w, "tid", tid);
	json_key(w, "args");
	json_begin_object(w);
	json_kv_string(w, "name", name);
	json_end_object(w);
	json_end_object(w);
}

static void name_event(struct json_writer *w, const char *what, int tid, const char *name)
{
	name_event_of(w, PID, what, tid, name);
}

/* A counter: one event where a bucket differs from the one before, and
 * the last bucket, so each track's ts only grows. line is the tree's
 * timeline (pid PID) or a holder's line (its own pid, from its start). */
static void counter_events(struct json_writer *w, const struct timeline *t, const struct timeline *line,
			   const char *name, int pid)
{
	double from_us = since_us(t, line->start_ns);

	for (size_t i = 0; i < line->n; i++) {
		const struct tl_bucket *b = line->b;

		if (i && i + 1 < line->n && b[i].min == b[i - 1].min && b[i].max == b[i - 1].max)
			continue;
		json_begin_object(w);
		json_kv_string(w, "name", name);
		json_kv_string(w, "ph", "C");
		json_kv_int(w, "pid", pid);
		json_kv_int(w, "tid", TID_SUM);
		json_kv_double(w, "ts", from_us + (double)(i * line->width_ns) / 1e3, 15);
		json_key(w, "args");
		json_begin_object(w);
		json_kv_uint(w, "max", timeline_bytes(t, b[i].max));
		json_kv_uint(w, "min", timeline_bytes(t, b[i].min));
		json_end_object(w);
		json_end_object(w);
	}
}

static void instant_event(struct json_writer *w, const struct timeline *t, const char *name,
			  uint64_t ns, int tid, int64_t value)
{
	begin_event(w, name, "i", tid);
	json_kv_double(w, "ts", since_us(t, ns), 15);
	json_kv_string(w, "s", "t");
	json_key(w, "args");
	json_begin_object(w);
	if (tid == TID_PEAK)
		json_kv_uint(w, "bytes", timeline_bytes(t, value));
	json_end_object(w);
	json_end_object(w);
}

/* The holders drawn (pid PID + 1 + k in the trace), and how the lines
 * were kept (timeline.h). */
static void holder_facts(struct json_writer *w, const struct timeline *t)
{
	const struct tl_track *top[TL_TOP];
	size_t n = timeline_top_tracks(t, top, TL_TOP);

	if (!t->tracks)
		return;
	json_key(w, "holders");
	json_begin_array(w);
	for (size_t k = 0; k < n; k++) {
		json_begin_object(w);
		json_kv_int(w, "trace_pid", PID + 1 + (int)k);
		json_kv_uint(w, "pid", top[k]->pid ? top[k]->pid : top[k]->tgid);
		json_kv_string(w, "comm", top[k]->comm);
		json_kv_uint(w, "own_peak_bytes", timeline_bytes(t, top[k]->line.peak));
		json_kv_double(w, "from_s", since_us(t, top[k]->line.start_ns) / 1e6, 12);
		json_end_object(w);
	}
	json_end_array(w);
	json_kv_uint(w, "lines_kept_max", t->tracks->max);
	json_kv_uint(w, "lines_started", t->tracks->admitted);
	json_kv_uint(w, "lines_dropped", t->tracks->evicted);
}

static void facts(struct json_writer *w, const struct timeline *t, const char *title)
{
	uint64_t peak_ns;
	int64_t peak;

	json_key(w, "otherData");
	json_begin_object(w);
	json_key(w, "peakbpf_timeline");
	json_begin_object(w);
	json_kv_int(w, "version", 1);
	json_kv_string(w, "title", title);
	json_kv_uint(w, "bucket_ns", t->width_ns);
	json_kv_uint(w, "buckets", t->n);
	json_kv_double(w, "end_s", (double)(t->end_ns - t->start_ns) / 1e9, 12);
	if (timeline_peak(t, &peak_ns, &peak)) {
		json_kv_uint(w, "peak_bytes", timeline_bytes(t, peak));
		json_kv_double(w, "peak_s", since_us(t, peak_ns) / 1e6, 12);
	}
	json_kv_uint(w, "marks_dropped", t->marks_dropped);
	holder_facts(w, t);
	json_end_object(w);
	json_end_object(w);
}

int timeline_write_json(const struct timeline *t, const char *title, FILE *out)
{
	const struct tl_track *top[TL_TOP];
	size_t n_top;
	struct json_writer w;
	uint64_t peak_ns;
	int64_t peak;

	json_init(&w, out);
	json_begin_object(&w);
	json_key(&w, "traceEvents");
	json_begin_array(&w);
	name_event(&w, "process_name", 0, title);
	name_event(&w, "thread_name", TID_SUM, "tree rss (bytes)");
	name_event(&w, "thread_name", TID_WINDOWS, "windows");
	name_event(&w, "thread_name", TID_PEAK, "peak");
	counter_events(&w, t, t, "tree rss", PID);
	n_top = timeline_top_tracks(t, top, TL_TOP);
	for (size_t k = 0; k < n_top; k++) {
		char label[64], name[96];

		timeline_track_label(top[k], label, sizeof(label));
		snprintf(name, sizeof(name), "holder %zu: %s", k + 1, label);
		name_event_of(&w, PID + 1 + (int)k, "process_name", 0, name);
		name_event_of(&w, PID + 1 + (int)k, "thread_name", TID_SUM, "rss (bytes)");
		counter_events(&w, t, &top[k]->line, "rss", PID + 1 + (int)k);
	}
	for (size_t i = 0; i < t->n_marks; i++)
		if (t->marks[i].kind == TL_MARK_WINDOW)
			instant_event(&w, t, t->marks[i].label, t->marks[i].ns, TID_WINDOWS, 0);
	if (timeline_peak(t, &peak_ns, &peak))
		instant_event(&w, t, "peak", peak_ns, TID_PEAK, peak);
	json_end_array(&w);
	json_kv_string(&w, "displayTimeUnit", "ms");
	facts(&w, t, title);
	json_end_object(&w);
	return json_finish(&w) ? -EIO : 0;
}

/* Text for a CSV field: no commas, quotes or line ends. */
static void csv_text(FILE *out, const char *s)
{
	for (; s && *s; s++)
		fputc(strchr(",\"\r\n", *s) ? '_' : *s, out);
}

/* Holder k's column in a bucket row: its line's largest value in the
 * row's time, empty where the line does not cover it. */
static void csv_holder_cell(FILE *out, const struct timeline *t, const struct tl_track *tr, size_t i)
{
	const struct timeline *l = &tr->line;
	uint64_t from = t->start_ns + i * t->width_ns, to = from + t->width_ns;
	int64_t lo, hi;

	if (to <= l->start_ns || from > l->end_ns || !timeline_range(l, from, to, &lo, &hi)) {
		fputc(',', out);
		return;
	}
	fprintf(out, ",%" PRIu64, timeline_bytes(t, hi));
}

int timeline_write_csv(const struct timeline *t, FILE *out)
{
	const struct tl_track *top[TL_TOP];
	size_t n_top = timeline_top_tracks(t, top, TL_TOP);
	uint64_t peak_ns;
	int64_t peak;
	char label[64];

	fputs("kind,t_s,width_s,min_bytes,max_bytes,label", out);
	for (size_t k = 0; k < n_top; k++) {
		timeline_track_label(top[k], label, sizeof(label));
		fputs(",max_bytes ", out);
		csv_text(out, label);
	}
	fputc('\n', out);
	for (size_t i = 0; i < t->n; i++) {
		fprintf(out, "bucket,%.9f,%.9f,%" PRIu64 ",%" PRIu64 ",",
			(double)(i * t->width_ns) / 1e9, (double)t->width_ns / 1e9,
			timeline_bytes(t, t->b[i].min), timeline_bytes(t, t->b[i].max));
		for (size_t k = 0; k < n_top; k++)
			csv_holder_cell(out, t, top[k], i);
		fputc('\n', out);
	}
	for (size_t i = 0; i < t->n_marks; i++) {
		if (t->marks[i].kind != TL_MARK_WINDOW)
			continue;
		fprintf(out, "mark,%.9f,,,,", since_us(t, t->marks[i].ns) / 1e6);
		csv_text(out, t->marks[i].label);
		fprintf(out, "%.*s\n", (int)n_top, ",,,,,");
	}
	if (timeline_peak(t, &peak_ns, &peak))
		fprintf(out, "peak,%.9f,,%" PRIu64 ",%" PRIu64 ",peak%.*s\n", since_us(t, peak_ns) / 1e6,
			timeline_bytes(t, peak), timeline_bytes(t, peak), (int)n_top, ",,,,,");
	return ferror(out) ? -EIO : 0;
}

/* The rows, then a title row (kind "title", the run's name as its label),
 * so that peakbpf plot titles a drawing of the .csv as the run's. */
static int write_csv(const struct timeline *t, const char *title, FILE *out)
{
	const struct tl_track *top[TL_TOP];
	int err = timeline_write_csv(t, out);

	fputs("title,,,,,", out);
	csv_text(out, title);
	fprintf(out, "%.*s\n", (int)timeline_top_tracks(t, top, TL_TOP), ",,,,,");
	return err ? err : ferror(out) ? -EIO : 0;
}

/* Each format's writer (timeline.h, TL_FORMATS, lists the formats). */
static int (*const writers[TL_FORMAT_COUNT])(const struct timeline *, const char *, FILE *) = {
	[TL_FORMAT_JSON] = timeline_write_json,
	[TL_FORMAT_CSV] = write_csv,
	[TL_FORMAT_SVG] = timeline_write_svg,
	[TL_FORMAT_HTML] = timeline_write_html,
};

int timeline_write(const struct timeline *t, const char *title, const char *path,
		   char *err, size_t errlen)
{
	enum tl_format f = timeline_format_of(path);
	bool created;
	FILE *out;
	int rc;

	if (f == TL_FORMAT_NONE) {
		snprintf(err, errlen, "%s: the extension names the format: .json, .csv, .svg or .html", path);
		return -EINVAL;
	}
	out = safe_fopen_shared(path, &created);
	rc = out ? safe_begin(out) : -errno;
	if (!rc)
		rc = writers[f](t, title, out);
	if (!rc && fflush(out))
		rc = -errno;
	if (rc) {
		safe_discard(out, path, created);       /* a full disk leaves no empty file */
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
		return rc;
	}
	if (fclose(out))
		rc = -EIO;
	if (rc)
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
	return rc;
}
