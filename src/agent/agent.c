// SPDX-License-Identifier: MIT
/*
 * `peakbpf agent` (docs/agent.md): one resident BPF load tracks every
 * process of the node (a tree rooted at PID 1), the per-cgroup sums add
 * each change to the cgroup's chain (bpf/cgsum.bpf.c), and the agent
 * serves each cgroup's peak since the previous scrape over HTTP
 * (agent_http.c) and records every OOM kill (agent_oom.c).
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "agent.h"
#include "agent_int.h"
#include "status.h"
#include "kfeatures.h"
#include "tracker_load.h"
#include "tracker_tree.h"
#include "clock.h"

#define AGENT_MAX_TRACKED 65536         /* mms of the whole node */
#define TICK_MS 1000

/* -v: libbpf's own warnings (a refused program, a missing attach target). */
static int libbpf_warn(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return level == LIBBPF_DEBUG ? 0 : vfprintf(stderr, fmt, args);
}

static int say(int status, const char *fmt, const char *a, const char *b)
{
	fprintf(stderr, "peakbpf agent: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return status;
}

/* Bind before anything loads: a bad or busy address fails at once. */
static int bind_listen(struct agent *a)
{
	int one = 1, fd = socket(a->o.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return say(EXIT_AGENT_PORT_IN_USE, "cannot make a socket for %s: %s", a->o.listen, strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a->o.addr, a->o.addr_len) || listen(fd, 64)) {
		int e = errno;

		close(fd);
		return say(EXIT_AGENT_PORT_IN_USE, "cannot listen on %s: %s (another process has the port, or "
			   "the address is not this machine's; choose one with --listen)", a->o.listen,
			   e == EADDRINUSE ? "address in use" : strerror(e));
	}
	a->lfd = fd;
	return 0;
}

/*
 * Every process alive now, by its PID (/proc), MAX_ROOTS at a time: those
 * forked from them later follow by lineage. PID 1 alone would do on a
 * node whose init can be entered; where it cannot (a sandbox's init), its
 * children still are, each a root of its own. Entries are NOEXIST: a
 * process met twice counts once. Kernel threads have no mm and are left.
 */
static int enter_all(struct agent *a, size_t *roots)
{
	pid_t batch[MAX_ROOTS];
	__u32 tgids[MAX_ROOTS];
	size_t n = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");
	int err = 0;

	*roots = 0;
	if (!d)
		return -errno;
	while (!err && (e = readdir(d))) {
		char *end = NULL;
		long pid = strtol(e->d_name, &end, 10);

		if (end == e->d_name || *end || pid < 1 || pid > 0x3fffffff)
			continue;
		batch[n++] = (pid_t)pid;
		if (n == MAX_ROOTS) {
			err = tracker_tree__add_roots(a->tree, batch, n, true, tgids);
			*roots += n;
			n = 0;
		}
	}
	closedir(d);
	if (!err && n)
		err = tracker_tree__add_roots(a->tree, batch, n, true, tgids);
	*roots += n;
	return err;
}

/* Why the load failed, in the words of what this kernel lacks
 * (docs/agent.md, "Kernels"): the per-cgroup sums exchange and compare
 * values in BPF (atomics with a result, 5.12), and leave an address space
 * at exit_mmap (its tracepoint, 6.1, or fentry on it). */
static int load_failed(int err)
{
	struct tracker_features f;

	features_probe(&f);
	if (!f.has_fetch_atomics)
		return say(EXIT_PEAKBPF_FAILED, "cannot load the BPF programs: %s%s", "this kernel's BPF has no "
			   "atomics that return a value (Linux 5.12+), which the per-cgroup sums need; the agent "
			   "runs on 5.12+ (tested on 6.1, 6.12 and 6.18; docs/agent.md, \"Kernels\")", "");
	if (err == -ESRCH || err == -ENOENT)
		return say(EXIT_PEAKBPF_FAILED, "cannot load the BPF programs: %s%s", "a kernel function or "
			   "tracepoint they attach to is missing (the agent needs the exit_mmap tracepoint, Linux "
			   "6.1+, or fentry on exit_mmap before it; docs/agent.md, \"Kernels\")", "");
	return say(EXIT_PEAKBPF_FAILED, "cannot load the BPF programs: %s%s", strerror(-err),
		   getuid() ? " (run as root, or with CAP_BPF, CAP_PERFMON, CAP_SYS_RESOURCE)" : "");
}

/* Load, give every cgroup its slot, enter every process. */
static int load(struct agent *a)
{
	struct tracker_opts to = { .max_tracked = AGENT_MAX_TRACKED, .cgsum = &a->hier, .oom_context = true };
	char why[256];
	size_t walked = 0, roots = 0;
	int err;

	libbpf_set_print(a->o.verbose ? libbpf_warn : NULL);
	err = tracker_load__open(&to, &a->l);
	if (!err)
		err = tracker_tree__add(a->l, 0, 0, &a->tree);
	if (err)
		return load_failed(err);
	err = cgsum_start(tracker_load__skel(a->l), &a->hier, &a->cs, &walked, why, sizeof(why));
	if (err)
		return say(EXIT_PEAKBPF_FAILED, "%s%s", why, "");
	err = enter_all(a, &roots);
	if (!err)
		err = cgsum_enter_existing(a->cs);
	if (err)
		return say(EXIT_PEAKBPF_FAILED, "cannot enter the node's processes: %s%s", strerror(-err), "");
	a->facts.exact = tracker_load__exact_path(a->l) == 0;
	a->facts.inexact_reason = a->facts.exact ? NULL : "the kernel keeps no exact per-CPU counters here";
	if (a->o.verbose) {
		struct tree_state ts;

		tracker_tree__read_state(a->tree, &ts);
		fprintf(stderr, "peakbpf agent: %zu cgroups under %s; %lld processes, %lld address spaces "
			"entered (%zu PIDs in /proc)\n", walked, a->hier.mount, (long long)ts.procs_live,
			(long long)ts.mms_live, roots);
	}
	return 0;
}

/* --select names a cgroup that exists (a directory below the mount). */
static int check_select(struct agent *a)
{
	char p[400];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", a->hier.mount, strcmp(a->o.select, "/") ? a->o.select : "");
	if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	fprintf(stderr, "peakbpf agent: --select %s matches no cgroup (no directory %s); list them with "
		"ls %s\n", a->o.select, p, a->hier.mount);
	return EXIT_AGENT_NO_MATCH;
}

static int signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC);
}

/* Until a signal: each second, cgroups that went lose their slots and
 * series, and OOM victims are recorded (also at once when the ring has
 * one: its fd is polled). */
static int run(struct agent *a, int sigfd)
{
	struct pollfd p[2] = { { .fd = sigfd, .events = POLLIN }, { .fd = agent_oom_fd(a), .events = POLLIN } };
	uint64_t next = monotonic_ns() + TICK_MS * 1000000ULL;

	for (;;) {
		uint64_t now = monotonic_ns();
		int n = poll(p, p[1].fd >= 0 ? 2 : 1, now < next ? (int)((next - now) / 1000000) + 1 : 0);

		if (n < 0 && errno != EINTR)
			return EXIT_PEAKBPF_FAILED;
		if (n > 0 && (p[0].revents & POLLIN))
			return 0;
		pthread_mutex_lock(&a->lock);
		agent_oom_poll(a);      /* at once when the ring has a victim */
		if (monotonic_ns() >= next) {
			/* each second: a window for every cgroup (their timelines, and
			 * finer windows for the scrapers), gone cgroups freed */
			agent_cut(a);
			agent_reclaim(a);
			next = monotonic_ns() + TICK_MS * 1000000ULL;
		}
		pthread_mutex_unlock(&a->lock);
	}
}

static int setup(struct agent *a, int argc, char **argv)
{
	char why[256];
	struct utsname u;
	int st = agent_opts_parse(argc, argv, &a->o, why, sizeof(why));

	if (st)
		return say(st, "%s%s", why, "");
	if (a->o.help) {
		fputs(AGENT_USAGE, stdout);
		return -1;
	}
	if (cgsum_find_hier(NULL, &a->hier, why, sizeof(why)))
		return say(EXIT_PEAKBPF_FAILED, "%s%s", why, "");
	if ((st = check_select(a)))
		return st;
	if (agent_oom_open(a, why, sizeof(why)))
		return say(EXIT_AGENT_SPOOL, "%s%s", why, "");
	if (agent_http_open(why, sizeof(why)))
		return say(EXIT_PEAKBPF_FAILED, "%s%s", why, "");
	if ((st = bind_listen(a)))
		return st;
	if (!a->o.loopback)
		fprintf(stderr, "peakbpf agent: listening on %s, not a loopback address: every host that can "
			"reach it can read the node's cgroups\n", a->o.listen);
	uname(&u);
	snprintf(a->kernel, sizeof(a->kernel), "%s", u.release);
	a->page_size = sysconf(_SC_PAGESIZE);
	a->facts.page_size = a->page_size;
	a->facts.charge_source = a->hier.v1 ? "cgroup-v1" : "cgroup-v2";
	a->facts.version = PEAKBPF_VERSION;
	a->facts.holders = a->o.holders;
	a->facts.kernel = a->kernel;
	if (agent_state_init(&a->st, a->o.max_series))
		return say(EXIT_PEAKBPF_FAILED, "out of memory%s%s", "", "");
	return load(a);
}

int agent_main(int argc, char **argv)
{
	struct agent a = { .lfd = -1 };
	int sigfd = -1, st;

	pthread_mutex_init(&a.lock, NULL);
	st = setup(&a, argc, argv);
	if (st)
		goto cleanup;
	sigfd = signals();
	pthread_mutex_lock(&a.lock);
	agent_cut(&a);          /* every slot's first window starts now */
	pthread_mutex_unlock(&a.lock);
	if (sigfd < 0 || agent_http_start(&a)) {
		st = say(EXIT_PEAKBPF_FAILED, "cannot start serving on %s%s", a.o.listen, "");
		goto cleanup;
	}
	a.lfd = -1;             /* the HTTP side's now: it closes it */
	fprintf(stderr, "peakbpf agent: serving http://%s/metrics\n", a.o.listen);
	st = run(&a, sigfd);
cleanup:
	agent_http_stop(&a);
	if (a.lfd >= 0)
		close(a.lfd);
	if (sigfd >= 0)
		close(sigfd);
	agent_oom_close(&a);
	cgsum_stop(a.cs);
	tracker_tree__free(a.tree);
	tracker_load__destroy(a.l);
	agent_state_free(&a.st);
	return st < 0 ? 0 : st;
}
