// SPDX-License-Identifier: MIT
/* `peakbpf merge DIR|FILE...`: the command around merge.c. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "json.h"
#include "merge.h"
#include "timeline.h"
#include "timeline_export.h"
#include "units.h"

static const char usage[] =
"Usage: peakbpf merge [--json] [--timeline FILE] DIR|FILE...\n"
"\n"
"A job's peak of the summed memory of its ranks, from the files that\n"
"`peakbpf --record DIR -- APP` wrote for each rank (every *.jsonl in DIR),\n"
"aligned in wall-clock time:\n"
"  peak of the sum  [lower, upper]: the truth is in it. upper adds each\n"
"                   rank's window peaks at each instant, widened by each\n"
"                   host's clock error (adjtimex maxerror; ranks on one host\n"
"                   share a clock); lower is the largest sum of values known\n"
"                   to be held at one instant\n"
"  sum of peaks     every rank's own peak, added (what IPM reports)\n"
"  largest rank     the largest single rank (Slurm's MaxRSS, at best)\n"
"and a table by rank.\n"
"\n"
"Options:\n"
"  -j, --json            one JSON object on stdout instead of the summary\n"
"      --timeline FILE   the job's summed window peaks over time: .json,\n"
"                        .csv, .svg or .html (as peakbpf --timeline)\n"
"  -h, --help            this help\n"
"\n"
"Exit status: 0; 1 merge failed (memory, writing); 125 bad usage; 3 a file\n"
"unreadable or not a rank file; 4 rank files of different jobs; 5 a rank missing\n"
"(ranks 0..N-1 with a gap); 6 the same host and PID twice (or a rank twice).\n"
"A rank's file cut by a kill is used up to its last whole line, with a\n"
"warning.\n";

struct inputs {
	char **paths;
	size_t n, cap;
};

static int add_path(struct inputs *in, const char *path)
{
	if (in->n == in->cap) {
		size_t cap = in->cap ? in->cap * 2 : 64;
		char **p = realloc(in->paths, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		in->paths = p;
		in->cap = cap;
	}
	in->paths[in->n] = strdup(path);
	if (!in->paths[in->n])
		return -ENOMEM;
	in->n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory's *.jsonl, by name; a file as it is. */
static int collect(struct inputs *in, const char *arg, char *err, size_t errlen)
{
	struct stat st;
	struct dirent *de;
	size_t before = in->n;
	DIR *d;
	int rc = 0;

	if (stat(arg, &st)) {
		snprintf(err, errlen, "%s: %s", arg, strerror(errno));
		return MERGE_BAD_FILE;
	}
	if (!S_ISDIR(st.st_mode))
		return add_path(in, arg) ? MERGE_FAILED : 0;
	d = opendir(arg);
	if (!d) {
		snprintf(err, errlen, "%s: %s", arg, strerror(errno));
		return MERGE_BAD_FILE;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char path[4096];

		if (len < 6 || strcmp(de->d_name + len - 6, ".jsonl"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", arg, de->d_name);
		if (add_path(in, path)) {
			rc = MERGE_FAILED;
			break;
		}
	}
	closedir(d);
	if (!rc && in->n == before) {
		snprintf(err, errlen, "%s has no *.jsonl rank file: was peakbpf run with --record %s?", arg, arg);
		rc = MERGE_BAD_FILE;
	}
	if (!rc)
		qsort(in->paths + before, in->n - before, sizeof(*in->paths), cmp_str);
	return rc;
}

/* "2026-11-30 18:40:01.230 UTC" */
static const char *format_rt(int64_t ns, char *buf, size_t len)
{
	time_t s = (time_t)(ns / 1000000000LL);
	struct tm tm;
	char day[32];

	gmtime_r(&s, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03lld UTC", day, (long long)(ns % 1000000000LL / 1000000));
	return buf;
}

static int64_t job_start(const struct merge_rec *recs, size_t n)
{
	int64_t t0 = 0;

	for (size_t i = 0; i < n; i++)
		if (recs[i].n && (!t0 || recs[i].w[0].start < t0))
			t0 = recs[i].w[0].start;
	return t0;
}

/* Seconds since the job's first window; the upper bound's interval may
 * begin up to MERGE_EDGE_NS before it. */
static double since(int64_t ns, int64_t t0)
{
	return ns > t0 ? (double)(ns - t0) / 1e9 : 0;
}

static void human(const struct merge_rec *recs, size_t n, const struct merge_result *m, FILE *out)
{
	char a[32], b[32], c[32], t1[48], t2[48];
	int64_t t0 = job_start(recs, n);

	fprintf(out, "peakbpf merge: %zu rank file%s from %zu host%s%s%s\n", n, n == 1 ? "" : "s", m->hosts,
		m->hosts == 1 ? "" : "s", recs[0].job[0] ? ", job " : "", recs[0].job);
	fprintf(out, "  peak of the sum   [%s, %s]  at %s (+%.3f s)%s%s, summed RSS%s\n",
		format_bytes(m->lower, a, sizeof(a)), format_bytes(m->upper, b, sizeof(b)),
		format_rt(m->upper_start, t1, sizeof(t1)), since(m->upper_start, t0),
		m->upper_end - m->upper_start > 1000000 ? " to " : "",
		m->upper_end - m->upper_start > 1000000 ? format_rt(m->upper_end, t2, sizeof(t2)) : "",
		m->exact ? "" : " (a window was not exact)");
	fprintf(out, "  sum of peaks      %s  (each rank's own peak, added: IPM's figure)\n",
		format_bytes(m->sum_of_peaks, c, sizeof(c)));
	snprintf(t1, sizeof(t1), "rank %ld, ", recs[m->largest_rec].rank);
	fprintf(out, "  largest rank      %s  (%s%s pid %ld: Slurm's MaxRSS at best)\n",
		format_bytes(m->largest, a, sizeof(a)), recs[m->largest_rec].rank >= 0 ? t1 : "",
		recs[m->largest_rec].host, recs[m->largest_rec].pid);
	if (m->hosts > 1)
		fprintf(out, "  clocks            up to %.3f ms off (adjtimex maxerror)%s\n",
			(double)m->max_err_ns / 1e6, m->all_synced ? "" : "; a clock is not synchronised");
	else
		fprintf(out, "  clocks            one host: one clock, no offset between its ranks\n");
	fprintf(out, "  %-5s %-20s %8s %12s %9s %8s  %s\n", "rank", "host", "pid", "peak", "at", "windows",
		"notes");
	for (size_t i = 0; i < n; i++) {
		const struct merge_rec *r = &recs[i];
		char rank[24] = "-";

		if (r->rank >= 0)
			snprintf(rank, sizeof(rank), "%ld", r->rank);
		fprintf(out, "  %-5s %-20.20s %8ld %12s %8.3fs %8zu  %s%s%s\n", rank, r->host, r->pid,
			format_bytes(r->peak, a, sizeof(a)), since(r->peak_start, t0), r->n,
			r->exact ? "exact" : "not exact", r->complete ? "" : ", no end line (killed?)",
			r->truncated ? ", last line cut" : "");
	}
}

static void json_out(const struct merge_rec *recs, size_t n, const struct merge_result *m, FILE *out)
{
	struct json_writer w;

	json_init(&w, out);
	json_begin_object(&w);
	json_kv_string(&w, "kind", "merge");
	json_kv_string(&w, "job", recs[0].job[0] ? recs[0].job : NULL);
	json_kv_uint(&w, "records", n);
	json_kv_uint(&w, "hosts", m->hosts);
	json_key(&w, "peak_of_sum");
	json_begin_object(&w);
	json_kv_uint(&w, "lower_bytes", m->lower);
	json_kv_uint(&w, "upper_bytes", m->upper);
	json_kv_int(&w, "upper_from_ns", m->upper_start);
	json_kv_int(&w, "upper_to_ns", m->upper_end);
	json_kv_int(&w, "lower_from_ns", m->lower_start);
	json_kv_int(&w, "lower_to_ns", m->lower_end);
	json_kv_bool(&w, "exact_windows", m->exact);
	json_kv_string(&w, "scope", "summed RSS of every rank's tree");
	json_end_object(&w);
	json_kv_uint(&w, "sum_of_peaks_bytes", m->sum_of_peaks);
	json_kv_uint(&w, "largest_rank_bytes", m->largest);
	json_kv_int(&w, "max_clock_error_ns", m->max_err_ns);
	json_kv_bool(&w, "clocks_synced", m->all_synced);
	json_key(&w, "ranks");
	json_begin_array(&w);
	for (size_t i = 0; i < n; i++) {
		const struct merge_rec *r = &recs[i];

		json_begin_object(&w);
		json_kv_string(&w, "file", r->path);
		json_kv_string(&w, "host", r->host);
		json_kv_int(&w, "pid", r->pid);
		json_key(&w, "rank");
		r->rank >= 0 ? json_int(&w, r->rank) : json_null(&w);
		json_kv_uint(&w, "peak_bytes", r->peak);
		json_kv_int(&w, "peak_from_ns", r->peak_start);
		json_kv_int(&w, "peak_to_ns", r->peak_end);
		json_kv_uint(&w, "windows", r->n);
		json_kv_bool(&w, "exact", r->exact);
		json_kv_bool(&w, "complete", r->complete);
		json_kv_bool(&w, "truncated", r->truncated);
		json_kv_int(&w, "clock_error_ns", r->err_ns);
		json_kv_bool(&w, "clock_synced", r->synced);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_end_object(&w);
	json_finish(&w);
}

/* The job's summed window peaks as a timeline, times since the first
 * window: the same files as peakbpf --timeline. */
static int write_timeline(const struct merge_rec *recs, size_t n, const struct merge_result *m,
			  const char *path)
{
	static struct timeline tl;      /* its marks make it large */
	int64_t *t = NULL, t0 = job_start(recs, n);
	uint64_t *v = NULL;
	size_t count = 0;
	char err[512] = "";
	int rc = MERGE_FAILED;

	if (merge_sum_steps(recs, n, &t, &v, &count) || timeline_init(&tl, 0, 1, 0))
		goto cleanup;
	for (size_t i = 0; i + 1 < count; i++)
		if (timeline_add(&tl, (uint64_t)(t[i] - t0 + MERGE_EDGE_NS), (int64_t)v[i]))
			goto cleanup;
	if (count)
		timeline_end(&tl, (uint64_t)(t[count - 1] - t0 + MERGE_EDGE_NS));
	timeline_mark(&tl, (uint64_t)(m->upper_start - t0 + MERGE_EDGE_NS), TL_MARK_PEAK, (int64_t)m->upper,
		      "peak of the sum (upper)");
	if (timeline_write(&tl, "peakbpf merge: the job's summed window peaks", path, err, sizeof(err))) {
		fprintf(stderr, "peakbpf merge: --timeline: %s\n", err);
		goto cleanup;
	}
	rc = MERGE_OK;
cleanup:
	if (rc && !err[0])
		fprintf(stderr, "peakbpf merge: --timeline: out of memory\n");
	timeline_free(&tl);
	free(t);
	free(v);
	return rc;
}

struct merge_args {
	const char *timeline;
	bool json;
	int first;              /* argv index of the first record */
};

/* Options; -1 to go on, else the exit status (--help, a usage error). */
static int parse_args(int argc, char **argv, struct merge_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "timeline", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			a->json = true;
			break;
		case 'T':
			a->timeline = optarg;
			if (timeline_format_of(optarg) == TL_FORMAT_NONE) {
				fprintf(stderr, "peakbpf merge: --timeline: '%s': the extension names the "
					"format: .json, .csv, .svg or .html\n", optarg);
				return MERGE_USAGE;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return MERGE_OK;
		default:
			fprintf(stderr, "peakbpf merge: unknown option or missing value '%s' (see peakbpf merge "
				"--help)\n", argv[optind - 1]);
			return MERGE_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "peakbpf merge: no rank file given: peakbpf merge DIR|FILE... (the DIR of "
			"peakbpf --record DIR)\n");
		return MERGE_USAGE;
	}
	a->first = optind;
	return -1;
}

/* Read every record of in into recs (calloc'ed, in->n of them), counting
 * those read in *loaded (the caller frees them); then check they are one
 * job and that some record has a window. */
static int load_all(const struct inputs *in, struct merge_rec **recs, size_t *loaded,
		    char *err, size_t errlen)
{
	size_t with_windows = 0;
	int rc = MERGE_OK;

	*recs = calloc(in->n, sizeof(**recs));
	if (!*recs) {
		snprintf(err, errlen, "out of memory");
		return MERGE_FAILED;
	}
	for (; *loaded < in->n && !rc; (*loaded)++) {
		struct merge_rec *r = &(*recs)[*loaded];

		rc = merge_load(in->paths[*loaded], r, err, errlen);
		if (!rc && r->truncated)
			fprintf(stderr, "peakbpf merge: warning: %s: its last line is cut (a killed rank?): "
				"using its %zu whole windows\n", in->paths[*loaded], r->n);
	}
	if (rc)
		return rc;
	rc = merge_check(*recs, in->n, err, errlen);
	if (rc)
		return rc;
	while (with_windows < in->n && !(*recs)[with_windows].n)
		with_windows++;
	if (with_windows == in->n) {
		snprintf(err, errlen, "no rank file has a window: every rank ended (or was killed) before its "
			 "first window closed");
		return MERGE_BAD_FILE;
	}
	return MERGE_OK;
}

int merge_main(int argc, char **argv)
{
	struct merge_args a = { 0 };
	struct inputs in = { 0 };
	struct merge_rec *recs = NULL;
	struct merge_result m;
	char err[1024] = "";
	size_t loaded = 0;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	rc = MERGE_OK;
	for (int i = a.first; i < argc && !rc; i++)
		rc = collect(&in, argv[i], err, sizeof(err));
	if (rc)
		goto cleanup;
	rc = load_all(&in, &recs, &loaded, err, sizeof(err));
	if (rc)
		goto cleanup;
	if (merge_compute(recs, in.n, &m)) {
		rc = MERGE_FAILED;
		snprintf(err, sizeof(err), "out of memory");
		goto cleanup;
	}
	if (a.json)
		json_out(recs, in.n, &m, stdout);
	else
		human(recs, in.n, &m, stdout);
	if (fflush(stdout) || ferror(stdout)) {
		rc = MERGE_FAILED;
		snprintf(err, sizeof(err), "writing the result: %s", strerror(errno));
		goto cleanup;
	}
	if (a.timeline)
		rc = write_timeline(recs, in.n, &m, a.timeline);
cleanup:
	if (rc && err[0])
		fprintf(stderr, "peakbpf merge: %s\n", err);
	for (size_t i = 0; i < loaded; i++)
		merge_rec_free(&recs[i]);
	free(recs);
	for (size_t i = 0; i < in.n; i++)
		free(in.paths[i]);
	free(in.paths);
	return rc;
}
