// SPDX-License-Identifier: MIT
/* The timeline's files: Perfetto JSON (keys, monotonic ts per track), CSV,
 * the plots (the plotted maximum is the peak, the marker on it, a 5 ms
 * spike in 60 s visible), self-contained HTML, and reading them back. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <setjmp.h>
#include <errno.h>
#include <cmocka.h>
#include "timeline_export.h"

#define MS 1000000ULL
#define S 1000000000ULL
#define T0 (7 * S)
#define PAGE 4096
#define SPIKE 5000      /* pages */

/* 60 s: the sum moves every ms between 100 and 110 pages, a 5 ms spike to
 * SPIKE pages at 30 s, windows closed every 10 s, the peak marked. */
static struct timeline *spike_run(void)
{
	static struct timeline t;

	timeline_free(&t);
	assert_int_equal(timeline_init(&t, T0, PAGE, 0), 0);
	for (uint64_t ms = 0; ms < 60000; ms++) {
		int64_t v = ms >= 30000 && ms < 30005 ? SPIKE : 100 + (int64_t)(ms % 11);

		assert_int_equal(timeline_add(&t, T0 + ms * MS + 321, v), 0);
		if (ms && ms % 10000 == 0)
			timeline_mark(&t, T0 + ms * MS, TL_MARK_WINDOW, 0, ms == 10000 ? "window 1" : "window");
	}
	assert_int_equal(timeline_end(&t, T0 + 60 * S), 0);
	timeline_mark(&t, T0 + 30 * S + 321, TL_MARK_PEAK, SPIKE, "peak");
	return &t;
}

static char *render(int (*fn)(const struct timeline *, const char *, FILE *), const struct timeline *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fn(t, "workload <spike> & \"more\"", f), 0);
	fclose(f);
	return buf;
}

/* Where pat is in [p, end), or NULL (a loop: ASan's strstr reads all of
 * a 3 MB document at each call). */
static const char *within(const char *p, const char *end, const char *pat)
{
	size_t n = strlen(pat);

	for (; p + n <= end; p++)
		if (*p == *pat && !memcmp(p, pat, n))
			return p;
	return NULL;
}

static double num_after(const char *p, const char *key)
{
	const char *at = within(p, p + strlen(p), key);

	assert_non_null(at);
	return strtod(at + strlen(key), NULL);
}

/* Every event has name, ph, pid and tid, and ts unless metadata; ts never
 * goes back on a track (pid, tid). */
static int timeline_write_csv_titled(const struct timeline *t, const char *title, FILE *out)
{
	(void)title;
	return timeline_write_csv(t, out);
}

static void test_json_trace_events(void **state)
{
	char *doc = render(timeline_write_json, spike_run()), *ev, *next, *other;
	double last_ts[4] = { -1, -1, -1, -1 };
	size_t counters = 0, instants = 0;

	(void)state;
	assert_non_null(strstr(doc, "{\"traceEvents\":["));
	assert_non_null(strstr(doc, "\"displayTimeUnit\":\"ms\""));
	other = strstr(doc, "\"otherData\":{\"peakbpf_timeline\":{");
	assert_non_null(other);
	for (ev = strstr(doc, "{\"name\":"); ev && ev < other; ev = next) {
		const char *end, *ph;
		double ts;
		int tid;

		next = (char *)within(ev + 1, other, "{\"name\":");
		end = next ? next : other;
		ph = within(ev, end, "\"ph\":\"");
		if (!ph)
			continue;       /* a metadata event's args */
		assert_non_null(within(ev, end, "\"pid\":1,"));
		assert_non_null(within(ev, end, "\"tid\":"));
		if (ph[6] == 'M')
			continue;
		tid = (int)strtol(within(ev, end, "\"tid\":") + 6, NULL, 10);
		ts = strtod(within(ev, end, "\"ts\":") + 5, NULL);
		assert_true(tid >= 1 && tid <= 3);
		assert_true(ts >= last_ts[tid]);
		last_ts[tid] = ts;
		if (ph[6] == 'C') {
			counters++;
			assert_non_null(within(ev, end, "\"args\":{\"max\":"));
			assert_true(strtod(within(ev, end, "\"max\":") + 6, NULL) >=
				    strtod(within(ev, end, "\"min\":") + 6, NULL));
		} else {
			assert_int_equal(ph[6], 'i');
			assert_non_null(within(ev, end, "\"s\":\"t\""));
			instants++;
		}
	}
	assert_true(counters > 1000);
	assert_int_equal(instants, 5 + 1);      /* 5 windows, the peak */
	assert_true(num_after(other, "\"peak_bytes\":") == (double)SPIKE * PAGE);
	assert_non_null(strstr(doc, "\\\"more\\\""));    /* the title, escaped */
	free(doc);
}

static void write_and_load(const char *ext, struct timeline *back)
{
	char path[64], err[256], title[128];

	snprintf(path, sizeof(path), "/tmp/peakbpf-test-XXXXXX%s", ext);
	close(mkstemps(path, (int)strlen(ext)));
	assert_int_equal(timeline_write(spike_run(), "the run", path, err, sizeof(err)), 0);
	assert_int_equal(timeline_load(path, back, title, sizeof(title), err, sizeof(err)), 0);
	assert_string_equal(title, "the run");     /* .csv too: its title row */
	unlink(path);
}

/* A file read back draws what the run drew: the same buckets and marks. */
static void test_round_trip(void **state)
{
	static const char *const ext[] = { ".json", ".csv" };
	const struct timeline *t = spike_run();

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		static struct timeline back;
		uint64_t ns;
		int64_t v;

		write_and_load(ext[k], &back);
		assert_int_equal(back.n, t->n);
		assert_int_equal(back.width_ns, t->width_ns);
		for (size_t i = 0; i < t->n; i++) {
			assert_int_equal(back.b[i].min, t->b[i].min * PAGE);
			assert_int_equal(back.b[i].max, t->b[i].max * PAGE);
		}
		assert_int_equal(back.n_marks, t->n_marks);
		assert_string_equal(back.marks[0].label, "window 1");
		assert_true(timeline_peak(&back, &ns, &v));
		assert_int_equal(v, SPIKE * PAGE);
		assert_int_equal(ns, 30 * S + 321);
		timeline_free(&back);
	}
}

/* The plotted maximum is the peak, to the page; the marker sits on it; the
 * 5 ms spike, far narrower than a column (70 ms), reaches its height. */
static void test_svg_peak(void **state)
{
	char *svg = render(timeline_write_svg, spike_run()), *band, *p;
	double cx, cy, top = 1e9, top_x = -1;

	(void)state;
	assert_true(num_after(svg, "data-plotted-max-bytes=\"") == (double)SPIKE * PAGE);
	assert_true(num_after(svg, "data-peak-bytes=\"") == (double)SPIKE * PAGE);
	cx = num_after(svg, "id=\"peak-marker\" cx=\"");
	cy = num_after(strstr(svg, "peak-marker"), "cy=\"");
	band = strstr(svg, "id=\"band\"");
	assert_non_null(band);
	for (p = strchr(band, 'M'); p && p < strchr(band, '>'); p = strchr(p + 1, 'M')) {
		double x = strtod(p + 1, &p), y = strtod(p, NULL);

		if (y < top) {
			top = y;
			top_x = x;
		}
	}
	assert_true(cy == top);                 /* the marker's height: the plotted max */
	assert_true(cx > top_x - 1.5 && cx < top_x + 1.5);
	assert_true(cx > 80 + 860 / 2 - 2 && cx < 80 + 860 / 2 + 2);    /* 30 s of 60 */
	assert_non_null(strstr(svg, "workload &lt;spike&gt; &amp; &quot;more&quot;"));
	free(svg);
}

/* One page, nothing fetched: no external reference of any kind. */
static void test_html_self_contained(void **state)
{
	char *html = render(timeline_write_html, spike_run());

	(void)state;
	assert_non_null(strstr(html, "<!DOCTYPE html>"));
	assert_non_null(strstr(html, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"plot\""));
	assert_non_null(strstr(html, "<script>\nvar D={"));
	assert_non_null(strstr(html, "}\n;\n(function(){"));  /* D ends before the script */
	assert_non_null(strstr(html, "id=\"peak-marker\""));
	assert_null(strstr(html, "src="));
	assert_null(strstr(html, "href"));
	assert_null(strstr(html, "https:"));
	assert_null(strstr(strstr(html, "2000/svg\"") + 1, "http:"));
	assert_null(strstr(html, "@import"));
	assert_null(strstr(html, "fetch("));
	free(html);
}

/* --stacks at the peak: the page links the file (a file: URL, percent-
 * encoded) and shows the summary, escaped; the marker's hover names them;
 * a relative path is text, not a link; none set, none shown. */
static void test_html_stacks(void **state)
{
	struct timeline *t = spike_run();
	size_t before = timeline_memory_bytes(t);
	char *html, *marker;

	(void)state;
	html = render(timeline_write_html, t);
	assert_null(strstr(html, "stacks-summary"));
	free(html);
	assert_int_equal(timeline_set_stacks(t, "/tmp/a b/k&<\xc3\xa9.folded", "folded stacks",
					     "stacks at the peak: 1 MiB\n  128.0 MiB  p[1] f < g\n"), 0);
	assert_true(timeline_memory_bytes(t) > before);
	html = render(timeline_write_html, t);
	assert_non_null(strstr(html, "folded stacks in <a href=\"file:///tmp/a%20b/k%26%3C%C3%A9.folded\">"
				     "/tmp/a b/k&amp;&lt;\xc3\xa9.folded</a></p>"));
	assert_non_null(strstr(html, "<pre id=\"stacks-summary\">stacks at the peak: 1 MiB\n  128.0 MiB  p[1] "
				     "f &lt; g\n</pre>"));
	marker = strstr(html, "<circle id=\"peak-marker\"");
	assert_non_null(marker);
	assert_ptr_equal(strstr(marker, "<title>folded stacks in /tmp/a b/k&amp;&lt;\xc3\xa9.folded: stacks at "
				"the peak"), strchr(marker, '>') + 1);
	free(html);
	assert_int_equal(timeline_set_stacks(t, "k.json", "speedscope JSON", "s"), 0);
	html = render(timeline_write_html, t);
	assert_non_null(strstr(html, "speedscope JSON in k.json</p>"));
	assert_null(strstr(html, "href"));
	free(html);
	timeline_free(t);
	assert_null(t->stacks.path);
}

/* Load text as a file of extension ext: timeline_load's result. */
static int load_text(const char *ext, const char *text, char *err, size_t errlen)
{
	static struct timeline t;
	char path[64], title[128];
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "/tmp/peakbpf-test-bad-XXXXXX%s", ext);
	close(mkstemps(path, (int)strlen(ext)));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	rc = timeline_load(path, &t, title, sizeof(title), err, errlen);
	if (!rc)
		timeline_free(&t);
	unlink(path);
	return rc;
}

/* Files peakbpf plot refuses. */
static const struct { const char *ext, *text; } bad[] = {
	{ ".csv", "kind,t_s,width_s,min_bytes,max_bytes,label\nbucket,0,0.001,1,1e30,\n" },
	{ ".csv", "kind,t_s,width_s,min_bytes,max_bytes,label\nbucket,0,0.001,1,2,\nbucket,99,0.001,1,2,\n" },
	/* A mark before any bucket (found by fuzz_timeline: it leaked). */
	{ ".csv", "kind,t_s,width_s,min_bytes,max_bytes,label\nmark,0.5,,,,w\nbucket,0,0.001,1,2,\n" },
	/* A holder's cell that is no number. */
	{ ".csv", "kind,t_s,width_s,min_bytes,max_bytes,label,max_bytes 7 x\nbucket,0,0.001,1,2,,zz\n" },
	{ ".json", "{\"traceEvents\":[]}" },
};

static void test_errors(void **state)
{
	struct timeline t;
	char err[256], title[64];

	(void)state;
	assert_int_equal(timeline_format_of("a.JSON"), TL_FORMAT_JSON);
	assert_int_equal(timeline_format_of("a.html"), TL_FORMAT_HTML);
	assert_int_equal(timeline_format_of("a.png"), TL_FORMAT_NONE);
	assert_int_equal(timeline_format_of("json"), TL_FORMAT_NONE);
	assert_int_equal(timeline_write(spike_run(), "x", "/tmp/x.txt", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ".json, .csv, .svg or .html"));
	assert_true(timeline_write(spike_run(), "x", "/nonexistent/x.svg", err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "cannot write /nonexistent/x.svg"));
	assert_int_equal(timeline_load("/tmp/x.svg", &t, title, sizeof(title), err, sizeof(err)), -EINVAL);
	assert_int_equal(timeline_load("/nonexistent/x.json", &t, title, sizeof(title), err, sizeof(err)), -ENOENT);
	assert_int_equal(load_text(".csv", "kind,t_s,width_s,min_bytes,max_bytes,label\nbucket,0,0.001,1,x,\n",
				   err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a timeline written by peakbpf --timeline"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(load_text(bad[i].ext, bad[i].text, err, sizeof(err)), -EINVAL);
}

/* The ladder's shape: three mms holding 4000, 2000 and 1000 pages from
 * 1, 2 and 3 s to 8 s, the parent 10 pages throughout, the tree their sum;
 * with lines kept, and the same run without them. */
static void ladder_run(struct timeline *t, bool lines)
{
	static const int64_t own[4] = { 10, 4000, 2000, 1000 };
	int64_t held[4] = { 0 }, sum = 0;

	assert_int_equal(timeline_init(t, T0, PAGE, 0), 0);
	if (lines)
		assert_int_equal(timeline_tracks_init(t, 0, 0), 0);
	for (uint64_t ms = 0; ms <= 9000; ms += 10) {
		for (int k = 0; k < 4; k++) {
			int64_t want = ms >= (uint64_t)k * 1000 && ms < 8000 ? own[k] * (int64_t)(ms % 1000 + 1000) / 2000 : 0;
			struct tl_track *started;

			if (want == held[k] || (k == 0 && ms >= 8000))
				continue;
			sum += want - held[k];
			held[k] = want;
			assert_int_equal(timeline_add(t, T0 + ms * MS, sum), 0);
			assert_int_equal(timeline_track_add(t, T0 + ms * MS, 0x1000 + (uint64_t)k, 40 + (uint32_t)k,
							    want, &started), 0);
			if (started) {
				started->pid = 40 + (uint32_t)k;
				snprintf(started->comm, sizeof(started->comm), k == 1 ? "big,one" : "w%d", k);
			}
		}
	}
	assert_int_equal(timeline_end(t, T0 + 9 * S), 0);
}

/* The holders' lines in every format: labelled, each reaching its own
 * peak, ts monotonic per track; the tree's line unchanged by them. */
static void test_holder_lines(void **state)
{
	struct timeline t, bare;
	char *doc, *p;
	double last[8] = { -1, -1, -1, -1, -1, -1, -1, -1 }, top[8] = { 0 };

	(void)state;
	ladder_run(&t, true);
	ladder_run(&bare, false);
	assert_int_equal(t.n, bare.n);
	assert_memory_equal(t.b, bare.b, t.n * sizeof(*t.b));
	/* JSON: holder k is trace pid 1 + k, largest own peak first. */
	doc = render(timeline_write_json, &t);
	assert_non_null(strstr(doc, "\"args\":{\"name\":\"holder 1: 41 big,one\"}"));
	assert_non_null(strstr(doc, "\"args\":{\"name\":\"holder 2: 42 w2\"}"));
	assert_non_null(strstr(doc, "\"args\":{\"name\":\"holder 4: 40 w0\"}"));
	for (p = strstr(doc, "{\"name\":\"rss\",\"ph\":\"C\""); p; p = strstr(p + 1, "{\"name\":\"rss\",\"ph\":\"C\"")) {
		int pid = (int)num_after(p, "\"pid\":");
		double ts = num_after(p, "\"ts\":"), max = num_after(p, "\"max\":");

		assert_true(pid >= 2 && pid <= 5);
		assert_true(ts >= last[pid]);
		last[pid] = ts;
		if (max > top[pid])
			top[pid] = max;
	}
	assert_true(top[2] == 3980.0 * PAGE);           /* 4000 * 1990 / 2000 */
	assert_true(top[3] == 1990.0 * PAGE);
	assert_true(top[4] == 995.0 * PAGE);
	assert_true(num_after(strstr(doc, "\"holders\":["), "\"own_peak_bytes\":") == 3980.0 * PAGE);
	free(doc);
	/* CSV: a column per holder, labelled, its largest value the peak. */
	doc = render(timeline_write_csv_titled, &t);
	assert_non_null(strstr(doc, "label,max_bytes 41 big_one,max_bytes 42 w2,max_bytes 43 w3,max_bytes 40 w0\n"));
	assert_non_null(strstr(doc, ",16302080,"));     /* 3980 pages */
	free(doc);
	/* SVG: a line per holder with its own peak, and the legend. */
	doc = render(timeline_write_svg, &t);
	assert_non_null(strstr(doc, "<path id=\"holder-1\""));
	assert_true(num_after(strstr(doc, "id=\"holder-1\""), "data-own-peak-bytes=\"") == 3980.0 * PAGE);
	assert_non_null(strstr(doc, "<path id=\"holder-4\""));
	assert_null(strstr(doc, "<path id=\"holder-5\""));
	assert_non_null(strstr(doc, ">41 big,one (own peak 15.5 MiB)</text>"));
	free(doc);
	doc = render(timeline_write_html, &t);
	assert_non_null(strstr(doc, "\"h\":[{\"label\":\"41 big,one\",\"s\":1000000000,"));
	free(doc);
	timeline_free(&t);
	timeline_free(&bare);
}

/* peakbpf plot keeps the holders' lines: read back from .json and .csv,
 * each line is there with its label and its own peak. */
static void test_holder_lines_round_trip(void **state)
{
	static const char *const ext[] = { ".json", ".csv" };
	struct timeline t;

	(void)state;
	ladder_run(&t, true);
	for (size_t e = 0; e < 2; e++) {
		static struct timeline back;
		const struct tl_track *top[TL_TOP];
		char path[64], err[256], title[128], label[64];

		snprintf(path, sizeof(path), "/tmp/peakbpf-test-XXXXXX%s", ext[e]);
		close(mkstemps(path, (int)strlen(ext[e])));
		assert_int_equal(timeline_write(&t, "ladder", path, err, sizeof(err)), 0);
		assert_int_equal(timeline_load(path, &back, title, sizeof(title), err, sizeof(err)), 0);
		unlink(path);
		assert_int_equal(timeline_top_tracks(&back, top, TL_TOP), 4);
		timeline_track_label(top[0], label, sizeof(label));
		assert_string_equal(label, e ? "41 big_one" : "41 big,one");
		assert_int_equal(top[0]->line.peak, 3980 * PAGE);
		assert_int_equal(top[1]->line.peak, 1990 * PAGE);
		assert_int_equal(top[2]->line.peak, 995 * PAGE);
		timeline_track_label(top[3], label, sizeof(label));
		assert_string_equal(label, "40 w0");
		timeline_free(&back);
	}
	timeline_free(&t);
}

/* The y axis: round steps of one unit, at most 5, their top at or above
 * what is drawn. */
static void test_y_ticks(void **state)
{
	static const struct { uint64_t top, step; unsigned n; const char *unit; } cases[] = {
		{ 239600000, 50ULL << 20, 5, "MiB" },   /* 225.5 MiB and room: 0, 50 ... 250 MiB */
		{ 3000ULL << 20, 1ULL << 30, 3, "GiB" },
		{ 900, 200, 5, "B" },
		{ 64ULL << 20, 20ULL << 20, 4, "MiB" },
		{ 1, 1, 1, "B" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tl_ticks k;

		timeline_y_ticks(cases[i].top, &k);
		assert_int_equal(k.step_bytes, cases[i].step);
		assert_int_equal(k.n, cases[i].n);
		assert_string_equal(k.unit, cases[i].unit);
		assert_true(k.step_bytes * k.n >= cases[i].top && k.n <= TL_TICKS_MAX);
	}
}

/* The legend is below the data, and explains the fill, the band, the
 * peak marker and the dashed lines; a mark of the caller's is named
 * above the plot. */
static void test_legend_and_marks(void **state)
{
	struct timeline t;
	char *svg;
	double legend_top, data_bottom;

	(void)state;
	ladder_run(&t, true);
	timeline_mark(&t, T0 + 2 * S, TL_MARK_WINDOW, 0, "load");
	svg = render(timeline_write_svg, &t);
	data_bottom = num_after(strstr(svg, "<rect x=\"80\""), "y=\"") +
		      num_after(strstr(svg, "<rect x=\"80\""), "height=\"");
	legend_top = num_after(strstr(svg, "<g id=\"legend\""), "y=\"");
	assert_true(legend_top > data_bottom);
	assert_non_null(strstr(svg, "filled: the tree's largest summed RSS in each column"));
	assert_non_null(strstr(svg, "red dot: the peak"));
	assert_non_null(strstr(svg, "dashed lines: windows"));
	assert_non_null(strstr(svg, "text-anchor=\"middle\">load</text>"));
	assert_null(strstr(svg, ">0 B</text>"));       /* the axis starts at 0 */
	assert_non_null(strstr(svg, ">10 MiB</text>"));       /* 27.2 MiB: 0, 10, 20, 30 MiB */
	assert_non_null(strstr(svg, ">30 MiB</text>"));
	free(svg);
	timeline_free(&t);
}

static int teardown(void **state)
{
	(void)state;
	timeline_free(spike_run());
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_trace_events),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_svg_peak),
		cmocka_unit_test(test_html_self_contained),
		cmocka_unit_test(test_html_stacks),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_holder_lines),
		cmocka_unit_test(test_holder_lines_round_trip),
		cmocka_unit_test(test_y_ticks),
		cmocka_unit_test(test_legend_and_marks),
	};

	return cmocka_run_group_tests(tests, NULL, teardown);
}
