// SPDX-License-Identifier: MIT
/*
 * libpeakbpf's contract at its edges, built against the installed header
 * and library: options (sz, unknown fields), misuse (-EINVAL, -EBUSY,
 * -ESRCH), a figure's "not there" (-ENODATA, never 0), every accessor of
 * a bpf figure, two sessions in two threads at once, and a session's
 * timeline written to a file (marks, the peak, the holders); the 0.2
 * calls the CLI is built on (a command stopped before exec, the stream of
 * sum changes, the renderings). Prints "ok N" per check; exit 1 on the first
 * failure. As root with BTF it uses the bpf source; else it checks the
 * refusal.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <peakbpf/peakbpf.h>

static int checks;

#define CHECK(cond) do { \
	if (!(cond)) { fprintf(stderr, "api.c:%d: %s\n", __LINE__, #cond); exit(1); } \
	printf("ok %d %s\n", ++checks, #cond); \
} while (0)

struct bigger_opts {
	struct peakbpf_opts o;
	long future;
};

static void opts_and_misuse(void)
{
	struct bigger_opts big = { .o.sz = sizeof(big), .future = 1 };
	PEAKBPF_OPTS(bad_source, .source = (enum peakbpf_source)99);
	struct peakbpf_opts no_sz = { 0 };
	struct peakbpf_session *s = (void *)1;
	struct peakbpf_figure *f = (void *)1;
	char why[256] = "";

	CHECK(peakbpf_open(&big.o, &s, why, sizeof(why)) == -E2BIG && s == NULL && strstr(why, ".sz"));
	big.future = 0;
	CHECK(peakbpf_open(&no_sz, &s, NULL, 0) == -EINVAL);
	CHECK(peakbpf_open(&bad_source, &s, why, sizeof(why)) == -EINVAL && strstr(why, "PEAKBPF_SOURCE_AUTO"));
	CHECK(peakbpf_open(&big.o, &s, why, sizeof(why)) == 0);   /* zero future fields are fine */
	CHECK(peakbpf_close_window(s, &f) == -EINVAL && f == NULL);       /* not started */
	CHECK(peakbpf_add_pid(s, 0) == -EINVAL);
	CHECK(peakbpf_add_pid(s, 0x3ffffff0) == -ESRCH);
	CHECK(peakbpf_add_self(s) == 0);
	CHECK(peakbpf_start(s) == 0);
	CHECK(peakbpf_start(s) == -EBUSY);
	CHECK(peakbpf_add_self(s) == -EBUSY);
	peakbpf_close(s);
	peakbpf_close(NULL);
	peakbpf_figure_free(NULL);
}

static void figure_edges(void)
{
	PEAKBPF_OPTS(o, .source = PEAKBPF_SOURCE_RUSAGE);
	struct peakbpf_session *s = (void *)1;
	struct peakbpf_holder h;
	uint64_t v = 12345;
	char why[256] = "";

	/* rusage reads a command the CLI runs: a library session refuses it. */
	CHECK(peakbpf_open(&o, &s, why, sizeof(why)) == -EOPNOTSUPP && s == NULL && why[0]);
	/* Unique memory needs the CLI's own cgroup: refused, saying so; an
	 * unknown measure too. */
	{
		PEAKBPF_OPTS(u, .measure = PEAKBPF_MEASURE_UNIQUE);
		PEAKBPF_OPTS(bad, .measure = (enum peakbpf_measure)7);

		CHECK(peakbpf_open(&u, &s, why, sizeof(why)) == -EOPNOTSUPP && s == NULL &&
		      strstr(why, "--measure unique"));
		CHECK(peakbpf_open(&bad, &s, why, sizeof(why)) == -EINVAL && strstr(why, "PEAKBPF_MEASURE_RSS"));
	}
	/* No figure: nothing, never 0. */
	CHECK(peakbpf_figure_peak(NULL, &v) == -ENODATA && v == 12345);
	CHECK(peakbpf_figure_growth(NULL, &v) == -ENODATA && peakbpf_figure_error_bound(NULL, &v) == -ENODATA);
	CHECK(!peakbpf_figure_exact(NULL) && peakbpf_figure_reason(NULL) != NULL);
	CHECK(peakbpf_figure_holder_count(NULL) == 0 && peakbpf_figure_holder(NULL, 0, &h) == -ENODATA);
	CHECK(peakbpf_figure_json(NULL, NULL, 0) == -EINVAL);
}

/* The two threads' sessions, in step: both started before either touches
 * its block, both blocks resident when the windows close, so that each
 * window holds both (one process, one address space), whatever the order
 * the threads run in (before, one thread's munmap during the other's
 * touches could hide that one's block under its baseline). */
static pthread_barrier_t in_step;

static void *one_session(void *arg)
{
	PEAKBPF_OPTS(o, .source = PEAKBPF_SOURCE_BPF);
	struct peakbpf_session *s;
	struct peakbpf_figure *f = NULL;
	size_t mib = (size_t)(long)arg;
	uint64_t growth = 0;
	bool ok;
	char *p;

	ok = !peakbpf_open(&o, &s, NULL, 0) && !peakbpf_add_self(s) && !peakbpf_start(s);
	pthread_barrier_wait(&in_step);         /* both started */
	/* mmap, not malloc: ASan's quarantine would keep freed memory. */
	p = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED)
		for (size_t i = 0; i < mib << 20; i += 4096)
			p[i] = 1;
	pthread_barrier_wait(&in_step);         /* both blocks resident */
	if (ok && (peakbpf_close_window(s, &f) || peakbpf_figure_growth(f, &growth)))
		growth = 0;
	pthread_barrier_wait(&in_step);         /* both windows closed */
	if (p != MAP_FAILED)
		munmap(p, mib << 20);
	if (!ok)
		return (void *)-1L;
	peakbpf_figure_free(f);
	peakbpf_close(s);
	return (void *)(long)(growth >> 20);
}

/* Touch mib MiB, then let it go (mmap: ASan's quarantine keeps malloc's). */
static void hold(size_t mib)
{
	char *p = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		exit(1);
	for (size_t i = 0; i < mib << 20; i += 4096)
		p[i] = 1;
	munmap(p, mib << 20);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 64 << 20);
	size_t n = f && buf ? fread(buf, 1, (64 << 20) - 1, f) : 0;

	if (f)
		fclose(f);
	if (!n) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* A session's timeline: windows and a phase marked, the run's peak
 * marked and equal to the figure's, a line for this process. */
static void timeline_checks(void)
{
	PEAKBPF_OPTS(o, .source = PEAKBPF_SOURCE_BPF, .timeline = true);
	PEAKBPF_OPTS(plain, .source = PEAKBPF_SOURCE_BPF);
	char path[] = "/tmp/peakbpf-api-XXXXXX.json", html[64], want[64], *doc;
	struct peakbpf_session *s;
	struct peakbpf_figure *f;
	uint64_t peak = 0, drops = 1;

	CHECK(peakbpf_open(&plain, &s, NULL, 0) == 0 && peakbpf_add_self(s) == 0 && peakbpf_start(s) == 0);
	CHECK(peakbpf_timeline_poll(s) == -ENODATA && peakbpf_timeline_write(s, "/tmp/x.json") == -ENODATA);
	peakbpf_close(s);
	CHECK(peakbpf_open(&o, &s, NULL, 0) == 0 && peakbpf_add_self(s) == 0);
	CHECK(peakbpf_timeline_poll(s) == -ENODATA);            /* not started */
	CHECK(peakbpf_start(s) == 0);
	hold(48);
	CHECK(peakbpf_close_window(s, &f) == 0);
	peakbpf_figure_free(f);
	CHECK(peakbpf_timeline_mark(s, "phase 2") == 0);
	hold(16);
	CHECK(peakbpf_timeline_poll(s) == 0);
	CHECK(peakbpf_close_window(s, &f) == 0);
	peakbpf_figure_free(f);
	CHECK(peakbpf_run_figure(s, &f) == 0 && peakbpf_figure_peak(f, &peak) == 0 && peak > 48 << 20);
	peakbpf_figure_free(f);
	close(mkstemps(path, 5));
	CHECK(peakbpf_timeline_write(s, "/tmp/peakbpf-api.txt") == -EINVAL);
	CHECK(peakbpf_timeline_write(s, path) == 0);
	snprintf(html, sizeof(html), "%.*s.html", (int)strlen(path) - 5, path);
	CHECK(peakbpf_timeline_write(s, html) == 0);            /* again, another format */
	CHECK(peakbpf_timeline_drops(s, &drops) == 0 && drops == 0);
	peakbpf_close(s);
	doc = slurp(path);
	snprintf(want, sizeof(want), "\"peak_bytes\":%llu,", (unsigned long long)peak);
	CHECK(doc && strstr(doc, want));
	CHECK(strstr(doc, "\"name\":\"window 1\"") && strstr(doc, "\"name\":\"window 2\"") &&
	      strstr(doc, "\"name\":\"phase 2\""));
	snprintf(want, sizeof(want), "\"pid\":%d,", (int)getpid());
	CHECK(strstr(doc, "\"holders\":[{\"trace_pid\":2,") && strstr(strstr(doc, "\"holders\":["), want));
	free(doc);
	doc = slurp(html);
	CHECK(doc && strstr(doc, "id=\"peak-marker\"") && strstr(doc, "id=\"holder-1\""));
	free(doc);
	unlink(path);
	unlink(html);
}

static void bpf_checks(void)
{
	PEAKBPF_OPTS(o, .source = PEAKBPF_SOURCE_BPF);
	struct peakbpf_session *s;
	struct peakbpf_figure *f, *run;
	const struct peakbpf_figure *other;
	struct peakbpf_holder h;
	uint64_t peak, base, growth, t, bound, anon, file, shmem;
	int64_t procs;
	pthread_t a, b;
	void *ra, *rb;
	char json[64];

	CHECK(peakbpf_open(&o, &s, NULL, 0) == 0 && !strcmp(peakbpf_session_source(s), "bpf"));
	CHECK(peakbpf_add_self(s) == 0 && peakbpf_start(s) == 0);
	CHECK(peakbpf_close_window(s, &f) == 0 && peakbpf_figure_window(f) == 1);
	CHECK(peakbpf_figure_peak(f, &peak) == 0 && peakbpf_figure_baseline(f, &base) == 0 && peak >= base);
	CHECK(peakbpf_figure_growth(f, &growth) == 0 && growth == peak - base);
	CHECK(peakbpf_figure_peak_time(f, &t) == 0 && t > 0);
	CHECK(peakbpf_figure_breakdown(f, &anon, &file, &shmem, &procs) == 0 && procs == 1);
	CHECK(peakbpf_figure_exact(f) && peakbpf_figure_error_bound(f, &bound) == 0 && bound == 0);
	CHECK(peakbpf_figure_reason(f) == NULL && !strcmp(peakbpf_figure_source(f), "bpf"));
	CHECK(peakbpf_figure_holder(f, 0, &h) == 0 && h.pid == getpid());
	for (size_t i = 0; i < peakbpf_figure_other_count(f); i++) {
		other = peakbpf_figure_other(f, i);
		CHECK(other && peakbpf_figure_other_count(other) == 0 && strcmp(peakbpf_figure_source(other), "bpf"));
	}
	/* snprintf-like: truncated, NUL-terminated, the length it needs. */
	CHECK(peakbpf_figure_json(f, json, sizeof(json)) > (int)sizeof(json) && strlen(json) == sizeof(json) - 1);
	peakbpf_figure_free(f);
	CHECK(peakbpf_run_figure(s, &run) == 0 && peakbpf_figure_window(run) == 0);
	peakbpf_figure_free(run);
	peakbpf_close(s);
	/* One session per thread, both measuring this process: each window
	 * holds both blocks, 96 MiB, and what the process allocated
	 * meanwhile: the other session's load if it came in this one's window
	 * (libbpf's parse of the kernel's BTF, ASan's own: 12-30 MiB here). */
	CHECK(pthread_barrier_init(&in_step, NULL, 2) == 0);
	CHECK(pthread_create(&a, NULL, one_session, (void *)64L) == 0);
	CHECK(pthread_create(&b, NULL, one_session, (void *)32L) == 0);
	pthread_join(a, &ra);
	pthread_join(b, &rb);
	pthread_barrier_destroy(&in_step);
	printf("threads: %ld MiB and %ld MiB\n", (long)ra, (long)rb);
	CHECK((long)ra >= 96 && (long)ra <= 160 && (long)rb >= 96 && (long)rb <= 160);
}

struct changes {
	size_t n;
	int64_t max_sum, start;
	uint64_t last_ns, mm_of_self;
	uint32_t tgid_of_self;
	int out_of_order;
};

static int on_change(void *ctx, const struct peakbpf_change *c)
{
	struct changes *x = ctx;

	x->n++;
	if (c->sum_pages > x->max_sum)
		x->max_sum = c->sum_pages;
	if (c->mono_ns < x->last_ns)
		x->out_of_order++;
	x->last_ns = c->mono_ns;
	if (c->tgid == (uint32_t)getpid()) {
		x->mm_of_self = c->mm;
		x->tgid_of_self = c->tgid;
	}
	return 0;
}

/* What the CLI is built on (0.2): the stream of sum changes, the tree's
 * processes, the renderings, and a command held before exec. */
static void cli_calls(void)
{
	PEAKBPF_OPTS(both, .timeline = true, .changes_ring_bytes = 1 << 20);
	PEAKBPF_OPTS(o, .source = PEAKBPF_SOURCE_BPF, .changes_ring_bytes = 1 << 20);
	struct peakbpf_format_opts fo = { .sz = sizeof(fo), .format = PEAKBPF_FORMAT_JSON, .holders = 1,
					  .extra = "\"mine\":[1,2]" };
	struct { struct peakbpf_format_opts o; long future; } big = { .o = fo, .future = 1 };
	long page = sysconf(_SC_PAGESIZE);
	struct changes x = { .max_sum = -1 };
	struct peakbpf_session *s;
	struct peakbpf_figure *f;
	uint64_t drops = 1, t0, start, end;
	int64_t live = -1;
	char why[256] = "", comm[16] = "", text[8192];
	pid_t pid = 0;
	int n;

	CHECK(peakbpf_may_measure(getpid()) == 0 && peakbpf_may_measure(0) == -EINVAL);
	CHECK(peakbpf_open(&both, &s, why, sizeof(why)) == -EINVAL && strstr(why, ".changes_ring_bytes"));
	CHECK(peakbpf_open(&o, &s, NULL, 0) == 0 && peakbpf_has_bpf(s) && peakbpf_helper_why(s) == NULL);
	CHECK(peakbpf_add_self(s) == 0 && peakbpf_start(s) == 0);
	CHECK(peakbpf_window_start_pages(s, &x.start) == 0 && x.start > 0);
	CHECK(peakbpf_procs_live(s, &live) == 0 && live == 1);
	hold(32);
	CHECK(peakbpf_changes_drain(s, on_change, &x, &drops) == 0 && drops == 0 && x.n > 0 && !x.out_of_order);
	/* 32 MiB went through the sum, and a change names this process. */
	CHECK((x.max_sum - x.start) * page >= 32 << 20 && x.tgid_of_self == (uint32_t)getpid());
	CHECK(peakbpf_mm_identity(s, x.mm_of_self, x.tgid_of_self, &pid, comm) == 0 && pid == getpid() && comm[0]);
	CHECK(peakbpf_close_window(s, &f) == 0);
	CHECK(peakbpf_figure_times(f, &t0, &start, &end) == 0 && t0 == start && start < end);
	CHECK(peakbpf_figure_windows(f) == 0 && peakbpf_figure_samples(f, NULL, NULL) == -ENODATA);
	/* The CLI's renderings: snprintf-like, the caller's part before the counters. */
	n = peakbpf_figure_format(f, &fo, NULL, 0);
	CHECK(n > 0 && peakbpf_figure_format(f, &fo, text, sizeof(text)) == n && text[n - 1] == '\n');
	CHECK(strstr(text, "{\"record\":\"window\",\"window\":1,") && strstr(text, ",\"mine\":[1,2],\"counters\":{"));
	CHECK(strstr(text, "\"unique\":{") && strstr(text, "\"processes\":[{\"pid\":") &&
	      !strstr(text, "},{\"pid\":"));         /* one holder listed */
	fo.format = PEAKBPF_FORMAT_TEXT_WINDOW;
	CHECK(peakbpf_figure_format(f, &fo, text, sizeof(text)) > 0 && !strncmp(text, "peakbpf: window 1 [", 19));
	fo.format = PEAKBPF_FORMAT_TEXT;
	fo.extra = "  my line\n";
	CHECK(peakbpf_figure_format(f, &fo, text, sizeof(text)) > 0 && strstr(text, "(bpf, exact)") &&
	      strstr(text, "\n  my line\n  summed RSS: shared"));
	fo.format = (enum peakbpf_format)9;
	CHECK(peakbpf_figure_format(f, &fo, text, sizeof(text)) == -EINVAL);
	big.o.sz = sizeof(big);         /* a newer caller's field we do not know */
	CHECK(peakbpf_figure_format(f, &big.o, text, sizeof(text)) == -E2BIG);
	peakbpf_figure_free(f);
	CHECK(peakbpf_run_figure(s, &f) == 0 && peakbpf_figure_windows(f) == 1);
	peakbpf_figure_free(f);
	peakbpf_close(s);
}

/* Command mode: a child held before exec, as the CLI holds a command
 * (its mm is entered at exec: the one before is a copy of ours); rusage
 * from peakbpf_command_exited. The child is this program: api --hold 48. */
static void command_mode(void)
{
	PEAKBPF_OPTS(o, .command = true, .measure = PEAKBPF_MEASURE_UNIQUE);
	struct peakbpf_session *s;
	struct peakbpf_figure *f;
	struct rusage ru;
	int gate[2], status = 0;
	uint64_t peak = 0;
	int64_t live = -1;
	bool rusage_seen = false, summed_seen = false;
	char text[16384];
	pid_t child;

	CHECK(pipe(gate) == 0);
	child = fork();
	if (child == 0) {
		char c;

		close(gate[1]);
		if (read(gate[0], &c, 1) != 1)
			_exit(1);
		execl("/proc/self/exe", "api", "--hold", "48", (char *)NULL);
		_exit(127);
	}
	close(gate[0]);
	CHECK(child > 0 && peakbpf_open(&o, &s, NULL, 0) == 0);
	CHECK(peakbpf_add_pid(s, child) == 0 && peakbpf_start(s) == 0);
	CHECK(write(gate[1], "g", 1) == 1);
	close(gate[1]);
	CHECK(wait4(child, &status, 0, &ru) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(peakbpf_procs_live(s, &live) == 0 && live == 0);
	CHECK(peakbpf_command_exited(s, child, &ru) == 0);
	CHECK(peakbpf_close_window(s, &f) == 0);
	peakbpf_figure_free(f);
	CHECK(peakbpf_run_figure(s, &f) == 0);
	/* Unique memory leads (its own cgroup), summed RSS first beside it. */
	CHECK(peakbpf_figure_peak(f, &peak) == 0 && peak >= 48 << 20);
	for (size_t i = 0; i < peakbpf_figure_other_count(f); i++) {
		const struct peakbpf_figure *other = peakbpf_figure_other(f, i);

		if (!strcmp(peakbpf_figure_source(other), "rusage"))
			rusage_seen = peakbpf_figure_peak(other, NULL) == 0;
		if (!strcmp(peakbpf_figure_source(other), "bpf"))
			summed_seen = peakbpf_figure_peak(other, &peak) == 0 && peak >= 48 << 20;
	}
	CHECK(rusage_seen && summed_seen);
	{
		struct peakbpf_format_opts fo = { .sz = sizeof(fo), .format = PEAKBPF_FORMAT_TEXT };

		CHECK(peakbpf_figure_format(f, &fo, text, sizeof(text)) > 0 && strstr(text, "also: "));
		printf("command mode:\n%s", text);
	}
	peakbpf_figure_free(f);
	peakbpf_close(s);
}

/* One load per process (0.3): a session kept loaded lends its load to the
 * next, which measures its own tree exactly; a session opened while the
 * load is in use loads apart; peakbpf_unload lets it go. no_helper: a
 * helper running on this machine is not what these check. */
static void one_load(void)
{
	PEAKBPF_OPTS(keep, .source = PEAKBPF_SOURCE_BPF, .keep_loaded = true, .no_helper = true);
	PEAKBPF_OPTS(plain, .source = PEAKBPF_SOURCE_BPF, .no_helper = true);
	PEAKBPF_OPTS(both, .use_helper = true, .no_helper = true);
	struct peakbpf_session *a, *b;
	struct peakbpf_figure *f;
	uint64_t growth = 0;
	char why[256] = "";

	CHECK(peakbpf_open(&both, &a, why, sizeof(why)) == -EINVAL && strstr(why, ".no_helper"));
	CHECK(peakbpf_open(&keep, &a, NULL, 0) == 0 && !strcmp(peakbpf_bpf_load(a), "loaded"));
	peakbpf_close(a);
	CHECK(peakbpf_open(&keep, &a, NULL, 0) == 0 && !strcmp(peakbpf_bpf_load(a), "reused"));
	CHECK(peakbpf_open(&plain, &b, NULL, 0) == 0 && !strcmp(peakbpf_bpf_load(b), "loaded"));
	peakbpf_close(b);
	CHECK(peakbpf_add_self(a) == 0 && peakbpf_start(a) == 0);
	hold(48);
	CHECK(peakbpf_close_window(a, &f) == 0 && peakbpf_figure_growth(f, &growth) == 0 &&
	      growth >= 48u << 20 && growth < 64u << 20 && peakbpf_figure_exact(f));
	peakbpf_figure_free(f);
	peakbpf_close(a);
	peakbpf_unload();
	CHECK(peakbpf_open(&plain, &a, NULL, 0) == 0 && !strcmp(peakbpf_bpf_load(a), "loaded"));
	peakbpf_close(a);
}

/* A session that takes no cgroup target (0.4) loads without their
 * programs: peakbpf_add_cgroup says -EOPNOTSUPP, a later session that may
 * take one does not reuse that load, and one that takes none reuses a
 * fuller one. */
static void no_cgroup_targets(void)
{
	PEAKBPF_OPTS(lean, .source = PEAKBPF_SOURCE_BPF, .no_helper = true, .keep_loaded = true,
		     .no_cgroup_targets = true);
	PEAKBPF_OPTS(full, .source = PEAKBPF_SOURCE_BPF, .no_helper = true, .keep_loaded = true);
	const char *roots[] = { "/sys/fs/cgroup/memory", "/sys/fs/cgroup" };
	struct peakbpf_session *s;
	char cg[128] = "";

	for (size_t i = 0; i < 2 && !cg[0]; i++) {
		snprintf(cg, sizeof(cg), "%s/peakbpf-api-load-%d", roots[i], (int)getpid());
		if (mkdir(cg, 0755))
			cg[0] = '\0';
	}
	if (!cg[0]) {
		printf("skip no_cgroup_targets: cannot make a cgroup under /sys/fs/cgroup\n");
		return;
	}
	CHECK(peakbpf_open(&lean, &s, NULL, 0) == 0 && peakbpf_add_cgroup(s, cg) == -EOPNOTSUPP);
	peakbpf_close(s);
	CHECK(peakbpf_open(&full, &s, NULL, 0) == 0 && !strcmp(peakbpf_bpf_load(s), "loaded") &&
	      peakbpf_add_cgroup(s, cg) == 0);
	peakbpf_close(s);
	CHECK(peakbpf_open(&lean, &s, NULL, 0) == 0 && !strcmp(peakbpf_bpf_load(s), "reused"));
	peakbpf_close(s);
	peakbpf_unload();
	rmdir(cg);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--hold")) {
		hold((size_t)atoi(argv[2]));    /* command_mode's child */
		return 0;
	}
	opts_and_misuse();
	figure_edges();
	if (geteuid() == 0 && access("/sys/kernel/btf/vmlinux", R_OK) == 0) {
		bpf_checks();
		timeline_checks();
		cli_calls();
		command_mode();
		one_load();
		no_cgroup_targets();
	}
	printf("api: %d checks passed, libpeakbpf %s\n", checks, peakbpf_version());
	return 0;
}
