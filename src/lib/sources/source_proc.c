// SPDX-License-Identifier: MIT
/*
 * proc source: a sampler thread that sums the tree's resident memory from
 * /proc every interval, and once more at each window's end and when the
 * command has exec'd (so a command shorter than the interval still gets a
 * figure of its own). It is a sampler, so it misses whatever rises and
 * falls between two samples, and it says so.
 *
 * The tree is walked from the roots through /proc/PID/task/TID/children
 * (every thread's children: a child's parent is the thread that forked it),
 * so processes reparented away from the tree (daemonized, or orphaned by a
 * parent that exited) drop out unless a root is their subreaper. Each
 * process counts once, whatever its number of threads: resident pages are
 * per address space, and threads share their process's. Processes that
 * share one mm without being threads (vfork, CLONE_VM) are counted once
 * each, that is twice or more, since /proc cannot tell that they share it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "fileutil.h"
#include "hugetlb.h"
#include "sources.h"

static const char SCOPE[] = "summed RSS of the tree, sampled";

struct proc_source {
	struct source base;
	uint64_t interval_ns;
	uint64_t page_size;
	bool command_mode;      /* the root waits before exec when the run starts */
	bool hugetlb;           /* read HugetlbPages of each process too */
	char reason[96];        /* "sampled every 100 ms: ..." */

	/* Everything below is under lock. The sampler holds it for a whole
	 * sample, so a window is closed between two samples, never inside. */
	pthread_mutex_t lock;
	pthread_cond_t wake;    /* tells the sampler to stop */
	pthread_t thread;
	bool thread_running;
	bool stopping;
	bool started;
	pid_t *roots;
	size_t n_roots, roots_cap;
	pid_t *walk;            /* scratch: the processes of one sample */
	size_t walk_cap;
	/* the open window */
	bool measured;          /* a sample read at least one process */
	uint64_t peak;
	bool baseline_known;
	uint64_t baseline;
	uint64_t samples;
	uint64_t vanished;
	struct hugetlb_seen {   /* the window's hugetlb (hugetlb on) */
		bool measured;
		uint64_t tree, member;
		pid_t member_pid;
		char member_comm[16];
	} huge;
};


/* ---- parsers ------------------------------------------------------------- */

/* "size resident shared text lib data dt", in pages. */
int parse_statm(const char *text, uint64_t *resident_pages)
{
	const char *p = text;
	unsigned long long v;
	char *end;

	for (int field = 0; field < 2; field++) {
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno == ERANGE)
			return -ERANGE;
		if (*end != ' ' && *end != '\n' && *end != '\0')
			return -EINVAL;
		p = end;
	}
	*resident_pages = v;
	return 0;
}

int parse_pid_words(const char *text, pid_t *pids, size_t max, size_t *count)
{
	const char *p = text;
	size_t n = 0;

	for (;;) {
		unsigned long long v;
		char *end;

		p += strspn(p, " \t\n");
		if (!*p)
			break;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno == ERANGE || v > INT_MAX)
			return -ERANGE;
		if (v == 0 || (*end && !strchr(" \t\n", *end)))
			return -EINVAL;
		if (n == max)
			return -E2BIG;
		pids[n++] = (pid_t)v;
		p = end;
	}
	*count = n;
	return 0;
}

/* ---- one sample ---------------------------------------------------------- */

/* statm's resident field is file + anon + shmem pages: the rss of an mm as
 * docs/design.md defines it (swap not included). */
static int resident_bytes(const struct proc_source *p, pid_t pid, uint64_t *bytes)
{
	char path[64], *text = NULL;
	uint64_t pages;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	err = read_text_file(path, &text, NULL);
	if (!err)
		err = parse_statm(text, &pages);
	free(text);
	if (!err)
		*bytes = pages * p->page_size;
	return err;
}

/* Add pid to the walk unless it is there already (a root may also be a
 * descendant of another root). Linear: trees are small next to the cost
 * of reading /proc. */
static int walk_add(struct proc_source *p, size_t *n, pid_t pid)
{
	for (size_t i = 0; i < *n; i++)
		if (p->walk[i] == pid)
			return 0;
	if (*n == p->walk_cap) {
		size_t cap = p->walk_cap ? p->walk_cap * 2 : 64;
		pid_t *bigger = realloc(p->walk, cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		p->walk = bigger;
		p->walk_cap = cap;
	}
	p->walk[(*n)++] = pid;
	return 0;
}

/* Append the children of every thread of pid. A thread or the process
 * vanishing meanwhile only means fewer children. */
static int walk_children(struct proc_source *p, size_t *n, pid_t pid)
{
	char path[96];
	struct dirent *de;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)) && !ret) {
		char *text = NULL;
		pid_t *kids = NULL;
		size_t len = 0, k = 0;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children", (int)pid, de->d_name);
		if (read_text_file(path, &text, &len))
			continue;
		/* Each pid takes at least two characters with its separator. */
		kids = calloc(len / 2 + 1, sizeof(*kids));
		if (!kids)
			ret = -ENOMEM;
		else if (parse_pid_words(text, kids, len / 2 + 1, &k) == 0)
			for (size_t i = 0; i < k && !ret; i++)
				ret = walk_add(p, n, kids[i]);
		free(kids);
		free(text);
	}
	closedir(d);
	return ret;
}

struct sample {
	uint64_t sum;           /* bytes resident in the processes read */
	size_t n_read;          /* processes read; 0: the sum means nothing */
	uint64_t vanished;
	struct hugetlb_seen huge;       /* tree: the sum; member: the largest */
};

/* The hugetlb pages of pid, into the sample; a process gone or a kernel
 * without them leaves the sample's hugetlb unmeasured by it. */
static void hugetlb_add(struct sample *smp, pid_t pid)
{
	char path[64], *text = NULL;
	uint64_t bytes;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_text_file(path, &text, NULL) == 0 && hugetlb_parse_status(text, &bytes) == 0) {
		smp->huge.measured = true;
		smp->huge.tree += bytes;
		if (bytes > smp->huge.member) {
			smp->huge.member = bytes;
			smp->huge.member_pid = pid;
		}
	}
	free(text);
}

/* Walk the tree once and sum it. Under lock (the walk is shared scratch). */
static struct sample take_sample(struct proc_source *p)
{
	struct sample smp = { 0 };
	size_t n = 0;

	for (size_t i = 0; i < p->n_roots; i++)
		if (walk_add(p, &n, p->roots[i]))
			break;
	for (size_t i = 0; i < n; i++) {
		uint64_t bytes;
		bool is_root = i < p->n_roots;

		if (resident_bytes(p, p->walk[i], &bytes)) {
			/* Listed as a child a moment ago, gone now. A root
			 * that has gone is no news: it was not mid-read. */
			if (!is_root)
				smp.vanished++;
			continue;
		}
		smp.sum += bytes;
		smp.n_read++;
		if (p->hugetlb)
			hugetlb_add(&smp, p->walk[i]);
		/* Out of memory: this sample misses part of the tree, as a
		 * sampler may; the next one tries again. */
		walk_children(p, &n, p->walk[i]);
	}
	return smp;
}

/* The name of pid, just sampled (empty if it has gone since). */
static void read_comm(pid_t pid, char comm[16])
{
	char path[64], *text = NULL;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (read_text_file(path, &text, NULL) == 0) {
		text[strcspn(text, "\n")] = '\0';
		snprintf(comm, 16, "%s", text);
	}
	free(text);
}

/* Fold a sample into the open window. */
static void window_add(struct proc_source *p, const struct sample *smp)
{
	p->samples++;
	p->vanished += smp->vanished;
	if (smp->huge.measured) {
		p->huge.measured = true;
		if (smp->huge.tree > p->huge.tree)
			p->huge.tree = smp->huge.tree;
		if (smp->huge.member > p->huge.member) {
			p->huge.member = smp->huge.member;
			p->huge.member_pid = smp->huge.member_pid;
			read_comm(smp->huge.member_pid, p->huge.member_comm);
		}
	}
	if (!smp->n_read)
		return;         /* no process read: a sum of 0 would look measured */
	if (!p->measured || smp->sum > p->peak)
		p->peak = smp->sum;
	p->measured = true;
}

/* Open a window on a sample: its baseline and its first peak. */
static void window_open(struct proc_source *p, const struct sample *smp)
{
	p->samples = 0;
	p->vanished = 0;
	p->measured = false;
	p->peak = 0;
	p->huge = (struct hugetlb_seen){ 0 };
	p->baseline_known = smp->n_read > 0;
	p->baseline = smp->sum;
	window_add(p, smp);
	/* Its vanished processes were counted in the window it closed. */
	p->vanished = 0;
}

/* ---- the sampler thread -------------------------------------------------- */

static void timespec_add_ns(struct timespec *t, uint64_t ns)
{
	uint64_t nsec = (uint64_t)t->tv_nsec + ns % 1000000000u;

	t->tv_sec += (time_t)(ns / 1000000000u + nsec / 1000000000u);
	t->tv_nsec = (long)(nsec % 1000000000u);
}

static bool timespec_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *sampler_main(void *arg)
{
	struct proc_source *p = arg;
	struct timespec next, now;
	struct sample smp;

	pthread_mutex_lock(&p->lock);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!p->stopping) {
		/* On a fixed schedule, so samples do not drift by the time
		 * each takes; one that overran starts the next one at once. */
		timespec_add_ns(&next, p->interval_ns);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (timespec_before(&next, &now))
			next = now;
		while (!p->stopping && pthread_cond_timedwait(&p->wake, &p->lock, &next) != ETIMEDOUT)
			;
		if (p->stopping)
			break;
		smp = take_sample(p);
		window_add(p, &smp);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* ---- the source's operations --------------------------------------------- */

static int proc_add_root(struct source *s, pid_t pid)
{
	struct proc_source *p = (struct proc_source *)s;
	int ret = 0;

	if (pid <= 0)
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n_roots; i++)
		if (p->roots[i] == pid)
			goto cleanup;
	if (p->n_roots == p->roots_cap) {
		size_t cap = p->roots_cap ? p->roots_cap * 2 : 8;
		pid_t *bigger = realloc(p->roots, cap * sizeof(*bigger));

		if (!bigger) {
			ret = -ENOMEM;
			goto cleanup;
		}
		p->roots = bigger;
		p->roots_cap = cap;
	}
	p->roots[p->n_roots++] = pid;
cleanup:
	pthread_mutex_unlock(&p->lock);
	return ret;
}

static int proc_start(struct source *s)
{
	struct proc_source *p = (struct proc_source *)s;
	struct sample smp;
	sigset_t all, old;
	int err;

	pthread_mutex_lock(&p->lock);
	if (p->started) {
		pthread_mutex_unlock(&p->lock);
		return -EALREADY;
	}
	if (p->command_mode) {
		/* The command has not exec'd yet: its address space is still a
		 * copy of peakbpf's, which is not the tree's memory. The tree
		 * starts empty; the sampler's first reading comes later. */
		smp = (struct sample){ 0 };
		window_open(p, &smp);
		p->samples = 0;
		p->baseline_known = true;
		p->baseline = 0;
	} else {
		/* One sample now: even a run shorter than the interval gets two. */
		smp = take_sample(p);
		window_open(p, &smp);
	}
	p->started = true;
	pthread_mutex_unlock(&p->lock);
	/* The sampler must not take the signals the session waits for. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&p->thread, NULL, sampler_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	p->thread_running = true;
	return 0;
}

/* The command runs now, exec'd: its first sample, at once. */
static void proc_command_started(struct source *s, pid_t pid)
{
	struct proc_source *p = (struct proc_source *)s;
	struct sample smp;

	(void)pid;
	pthread_mutex_lock(&p->lock);
	if (p->started) {
		smp = take_sample(p);
		window_add(p, &smp);
	}
	pthread_mutex_unlock(&p->lock);
}

/* The window's hugetlb into its figure. */
static void hugetlb_out(const struct proc_source *p, struct figure *out)
{
	if (!p->huge.measured)
		return;
	out->hugetlb_measured = true;
	out->hugetlb_bytes = p->huge.tree;
	out->hugetlb_member_bytes = p->huge.member;
	out->hugetlb_member_pid = (int32_t)p->huge.member_pid;
	memcpy(out->hugetlb_member_comm, p->huge.member_comm, sizeof(out->hugetlb_member_comm));
}

static int proc_close_window(struct source *s, struct figure *out)
{
	struct proc_source *p = (struct proc_source *)s;
	struct sample smp;

	memset(out, 0, sizeof(*out));
	out->source = "proc";
	out->scope = SCOPE;
	out->inexact_reason = p->reason;
	out->interval_ns = p->interval_ns;
	pthread_mutex_lock(&p->lock);
	if (!p->started) {
		pthread_mutex_unlock(&p->lock);
		out->inexact_reason = "the proc sampler was not started";
		return 0;
	}
	/* The window's last sample, now; the next window opens on it. */
	smp = take_sample(p);
	window_add(p, &smp);
	out->measured = p->measured;
	out->peak_bytes = p->peak;
	out->baseline_known = p->baseline_known;
	out->baseline_bytes = p->baseline;
	out->samples = p->samples;
	out->vanished = p->vanished;
	hugetlb_out(p, out);
	if (!p->measured)
		out->inexact_reason = "no process of the tree could be read from /proc";
	window_open(p, &smp);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

static void proc_destroy(struct source *s)
{
	struct proc_source *p = (struct proc_source *)s;

	if (!p)
		return;
	if (p->thread_running) {
		pthread_mutex_lock(&p->lock);
		p->stopping = true;
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
	}
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p->walk);
	free(p->roots);
	free(p);
}

static const struct source_ops proc_ops = {
	.add_root = proc_add_root,
	.start = proc_start,
	.close_window = proc_close_window,
	.command_started = proc_command_started,
	.command_exited = NULL,
	.destroy = proc_destroy,
};

static void format_interval(char *buf, size_t len, uint64_t ns)
{
	if (ns % 1000000000u == 0)
		snprintf(buf, len, "%" PRIu64 " s", ns / 1000000000u);
	else if (ns % 1000000u == 0)
		snprintf(buf, len, "%" PRIu64 " ms", ns / 1000000u);
	else
		snprintf(buf, len, "%.3f ms", (double)ns / 1e6);
}

int proc_source_open(const struct source_opts *o, struct source **out, char *why, size_t whylen)
{
	static const struct source_opts defaults;
	struct proc_source *p = NULL;
	pthread_condattr_t ca;
	char path[64], every[32];
	long page = sysconf(_SC_PAGESIZE);
	int ret;

	*out = NULL;
	if (!o)
		o = &defaults;
	if (o->sample_interval_ns && o->sample_interval_ns < PROC_SAMPLE_INTERVAL_MIN_NS) {
		set_why(why, whylen, "sample interval below 1 ms");
		return -EINVAL;
	}
	/* Without CONFIG_PROC_CHILDREN the tree cannot be walked. */
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)gettid());
	if (access(path, R_OK)) {
		ret = -errno;
		set_why(why, whylen, "cannot read /proc/PID/task/TID/children: %s", strerror(errno));
		return ret;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		set_why(why, whylen, "out of memory");
		return -ENOMEM;
	}
	p->base.ops = &proc_ops;
	p->base.name = "proc";
	p->interval_ns = o->sample_interval_ns ? o->sample_interval_ns : PROC_SAMPLE_INTERVAL_DEFAULT_NS;
	p->command_mode = o->command_mode;
	p->hugetlb = o->hugetlb;
	p->page_size = page > 0 ? (uint64_t)page : 4096;
	format_interval(every, sizeof(every), p->interval_ns);
	snprintf(p->reason, sizeof(p->reason), "sampled every %s: misses spikes between samples", every);
	pthread_mutex_init(&p->lock, NULL);
	/* Deadlines on the monotonic clock: a clock change must not stall it. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	ret = -pthread_cond_init(&p->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (ret) {
		set_why(why, whylen, "cannot create the sampler's condition variable");
		pthread_mutex_destroy(&p->lock);
		free(p);
		return ret;
	}
	*out = &p->base;
	return 0;
}
