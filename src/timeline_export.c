// SPDX-License-Identifier: MIT
/* A timeline as Chrome/Perfetto trace JSON or CSV, and the choice of
 * format by extension (timeline_export.h). The plots are in
 * timeline_plot.c, the readers in timeline_load.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "json.h"
#include "timeline_export.h"

#define PID 1           /* one process in the trace: the tree */
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

static void name_event(struct json_writer *w, const char *what, int tid, const char *name)
{
	begin_event(w, what, "M", tid);
	json_key(w, "args");
	json_begin_object(w);
	json_kv_string(w, "name", name);
	json_end_object(w);
	json_end_object(w);
}

/* The counter: one event where a bucket differs from the one before, and
 * the last bucket, so each track's ts only grows. */
static void counter_events(struct json_writer *w, const struct timeline *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (i && i + 1 < t->n && t->b[i].min == t->b[i - 1].min && t->b[i].max == t->b[i - 1].max)
			continue;
		begin_event(w, "tree rss", "C", TID_SUM);
		json_kv_double(w, "ts", (double)(i * t->width_ns) / 1e3, 15);
		json_key(w, "args");
		json_begin_object(w);
		json_kv_uint(w, "max", timeline_bytes(t, t->b[i].max));
		json_kv_uint(w, "min", timeline_bytes(t, t->b[i].min));
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
	json_end_object(w);
	json_end_object(w);
}

int timeline_write_json(const struct timeline *t, const char *title, FILE *out)
{
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
	counter_events(&w, t);
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

int timeline_write_csv(const struct timeline *t, FILE *out)
{
	uint64_t peak_ns;
	int64_t peak;

	fputs("kind,t_s,width_s,min_bytes,max_bytes,label\n", out);
	for (size_t i = 0; i < t->n; i++)
		fprintf(out, "bucket,%.9f,%.9f,%" PRIu64 ",%" PRIu64 ",\n",
			(double)(i * t->width_ns) / 1e9, (double)t->width_ns / 1e9,
			timeline_bytes(t, t->b[i].min), timeline_bytes(t, t->b[i].max));
	for (size_t i = 0; i < t->n_marks; i++)
		if (t->marks[i].kind == TL_MARK_WINDOW)
			fprintf(out, "mark,%.9f,,,,%s\n", since_us(t, t->marks[i].ns) / 1e6,
				t->marks[i].label);
	if (timeline_peak(t, &peak_ns, &peak))
		fprintf(out, "peak,%.9f,,%" PRIu64 ",%" PRIu64 ",peak\n", since_us(t, peak_ns) / 1e6,
			timeline_bytes(t, peak), timeline_bytes(t, peak));
	return ferror(out) ? -EIO : 0;
}

int timeline_write(const struct timeline *t, const char *title, const char *path,
		   char *err, size_t errlen)
{
	enum tl_format f = timeline_format_of(path);
	FILE *out;
	int rc;

	if (f == TL_FORMAT_NONE) {
		snprintf(err, errlen, "%s: the extension names the format: .json, .csv, .svg or .html", path);
		return -EINVAL;
	}
	out = fopen(path, "we");
	if (!out) {
		rc = -errno;
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
		return rc;
	}
	rc = f == TL_FORMAT_JSON ? timeline_write_json(t, title, out) :
	     f == TL_FORMAT_CSV ? timeline_write_csv(t, out) :
	     f == TL_FORMAT_SVG ? timeline_write_svg(t, title, out) :
	     timeline_write_html(t, title, out);
	if (fclose(out) && !rc)
		rc = -EIO;
	if (rc)
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
	return rc;
}
