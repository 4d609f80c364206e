// SPDX-License-Identifier: MIT
/* peakbpf: report the exact peak of a process tree's summed RSS. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>
#include <bpf/libbpf.h>
#include <peakbpf/peakbpf.h>
#include "clock.h"
#include "cli.h"
#include "attach.h"
#include "command.h"
#include "identity.h"
#include "output.h"
#include "merge.h"
#include "rank_file.h"
#include "budget.h"
#include "run_report.h"
#include "runs.h"
#include "runs_cli.h"
#include "sampler_model.h"
#include "serve.h"
#include "spawn.h"
#include "status.h"
#include "sum_record.h"
#include "timeline_export.h"

static bool verbose;

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* CLOCK_MONOTONIC, libpeakbpf's clock (peakbpf_figure_times). */
static double timeval_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Everything one run needs between its events. */
struct run {
	const struct options *opts;
	struct peakbpf_session *session;
	long page_size;
	FILE *out;                      /* -o FILE, or NULL */
	int out_errno, stdout_errno;    /* why a record could not be written, first */
	int sigfd;
	sigset_t oldmask;               /* before blocking handled_signals(): the command execs with it */
	int exit_status;                /* peakbpf's: EXIT_PEAKBPF_FAILED until known */
	uint64_t t0_ns, window_start_ns, next_window_ns, deadline_ns;
	bool windowed;                  /* -i given or SIGUSR1 seen: window records */
	/* command mode */
	pid_t child;                    /* negated once reaped */
	struct command_facts command;
	struct rusage ru;               /* the command's, once reaped */
	/* attach mode */
	int pidfds[CLI_MAX_PIDS];
	size_t roots_alive;
	/* --compare-sampler, --timeline */
	struct sum_record rec;
	uint64_t record_drops;
	struct sampler_report sampler;
	struct run_result *result;      /* the harness's copy of the run's figure */
	struct rank_record rank;        /* --record DIR */
};

#define RECORD_RING_BYTES (32U << 20)   /* ~700 k changes (48 bytes each) between drains */
#define RECORD_DRAIN_MS 20

static bool recording(const struct run *r)
{
	return (r->opts->n_samplers || r->opts->timeline || r->opts->record_dir) && peakbpf_has_bpf(r->session);
}

/* The record of the sum is a sink: the run feeds it each change it drains. */
static int feed_record(void *ctx, const struct peakbpf_change *c)
{
	return sum_record_change(ctx, c->mono_ns, c->sum_pages, c->mm, c->mm_pages, c->tgid);
}

static int identify_mm(void *ctx, uint64_t mm, uint32_t tgid, uint32_t *pid, char comm[16])
{
	const struct run *r = ctx;
	pid_t vpid = 0;
	int err = peakbpf_mm_identity(r->session, mm, tgid, &vpid, comm);

	*pid = (uint32_t)vpid;
	return err;
}

static void drain_trace(struct run *r)
{
	if (recording(r) && peakbpf_changes_drain(r->session, feed_record, &r->rec, &r->record_drops))
		fprintf(stderr, "peakbpf: reading the record of the sum failed\n");
}

/* --compare-sampler: model each interval over the whole run, and check a
 * real /proc sampler at the first interval against the model. */
static void compare_sampler(struct run *r, const struct peakbpf_figure *run, uint64_t end_ns)
{
	uint64_t peak = 0;
	struct sampler_report_input in = {
		.trace = &r->rec.sampler,
		.start_ns = r->t0_ns,
		.end_ns = end_ns,
		.page_size = (uint64_t)r->page_size,
		.record_drops = r->record_drops,
		.intervals_ns = r->opts->samplers_ns,
		.n_intervals = r->opts->n_samplers,
	};

	peakbpf_figure_peak(run, &peak);
	in.true_peak_bytes = peak;
	sampler_report_compute(&in, &r->sampler);
	for (size_t i = 0; i < peakbpf_figure_other_count(run); i++) {
		const struct peakbpf_figure *f = peakbpf_figure_other(run, i);
		uint64_t interval_ns, samples;

		if (!strcmp(peakbpf_figure_source(f), "proc") && !peakbpf_figure_peak(f, &peak) &&
		    !peakbpf_figure_samples(f, &interval_ns, &samples))
			sampler_report_check_real(&r->sampler, interval_ns, peak, samples);
	}
}

/* Signals handled synchronously through a signalfd: the command's end,
 * SIGUSR1 (close a window), and every other signal whose default would end
 * peakbpf without a report: passed on to the command, or, attached, the
 * end of the run. */
static void handled_signals(sigset_t *set)
{
	static const int sigs[] = { SIGCHLD, SIGUSR1, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR2,
				    SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGPWR };

	sigemptyset(set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(set, sigs[i]);
}

/* A figure as libpeakbpf renders it, with the CLI's own part; NULL when
 * out of memory. Free it. */
static char *render(const struct peakbpf_figure *f, enum peakbpf_format format, unsigned top,
		    const char *extra)
{
	struct peakbpf_format_opts fo = { .sz = sizeof(fo), .format = format, .holders = top, .extra = extra };
	size_t len = 16384;             /* a record with 32 holders fits: rendered once */
	char *text = malloc(len), *more;
	int n;

	if (!text)
		return NULL;
	n = peakbpf_figure_format(f, &fo, text, len);
	if (n >= 0 && (size_t)n >= len) {
		more = realloc(text, (size_t)n + 1);
		if (more)
			text = more;
		n = more ? peakbpf_figure_format(f, &fo, text, (size_t)n + 1) : -ENOMEM;
	}
	if (n < 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The command or the PIDs, and the figure's times. */
static struct run_context run_context(const struct run *r, const struct peakbpf_figure *f)
{
	const struct options *o = r->opts;
	struct run_context c = { .windows = peakbpf_figure_windows(f) };
	uint64_t t0 = 0, start = 0, end = 0;

	peakbpf_figure_times(f, &t0, &start, &end);
	c.start_s = start > t0 ? (double)(start - t0) / 1e9 : 0;
	c.end_s = end > t0 ? (double)(end - t0) / 1e9 : 0;
	if (o->command) {
		c.command = &r->command;
	} else {
		c.attached = o->pids;
		c.n_attached = o->n_pids;
	}
	return c;
}

/* The record on stderr (unless -q), then as JSON (--json, -o). */
static void write_record(struct run *r, const struct peakbpf_figure *f, const struct run_context *c)
{
	enum peakbpf_format human = peakbpf_figure_window(f) ? PEAKBPF_FORMAT_TEXT_WINDOW : PEAKBPF_FORMAT_TEXT;
	char *extra = NULL, *text;

	if (!r->opts->quiet) {
		extra = human == PEAKBPF_FORMAT_TEXT ? run_report_human(c) : NULL;
		text = render(f, human, r->opts->top, extra);
		if (text)
			fputs(text, stderr);
		else
			fprintf(stderr, "peakbpf: rendering the record failed\n");
		free(text);
		free(extra);
	}
	if (!r->opts->json && !r->out)
		return;
	extra = run_report_json(c);
	text = extra ? render(f, PEAKBPF_FORMAT_JSON, r->opts->top, extra) : NULL;
	if (!text) {
		/* Said where the record should have gone, with the command's status. */
		if (r->opts->json && !r->stdout_errno)
			r->stdout_errno = ENOMEM;
		if (r->out && !r->out_errno)
			r->out_errno = ENOMEM;
	} else {
		if (r->opts->json)
			output_write(stdout, text, &r->stdout_errno);
		if (r->out)
			output_write(r->out, text, &r->out_errno);
	}
	free(text);
	free(extra);
}

static void on_sum_change(void *ctx, int64_t pages)
{
	rank_record_change(ctx, pages);
}

/* --record: the window just cut, with its lowest sum from the changes
 * drained now (rank_file.h), and when the next one closes. */
static void record_window(struct run *r, const struct peakbpf_figure *f)
{
	uint64_t peak = 0, peak_ns = 0;
	int64_t start_pages = 0;

	rank_record_mark(&r->rank);
	drain_trace(r);
	peakbpf_figure_peak(f, &peak);
	peakbpf_figure_peak_time(f, &peak_ns);
	peakbpf_window_start_pages(r->session, &start_pages);
	rank_record_window(&r->rank, peak, peak_ns, peakbpf_figure_exact(f), peakbpf_figure_source(f),
			   start_pages, r->record_drops);
	r->next_window_ns = rank_record_next_close(&r->rank, monotonic_ns());
}

/* Close the open window (the session folds it into the run's figures). */
static int close_window(struct run *r)
{
	struct peakbpf_figure *f = NULL;
	struct run_context c;
	uint64_t now = 0;
	int err;

	if (r->opts->record_dir)
		rank_record_before_cut(&r->rank);
	err = peakbpf_close_window(r->session, &f);
	if (err)
		return err;
	if (r->opts->record_dir)
		record_window(r, f);
	peakbpf_figure_times(f, NULL, NULL, &now);
	r->window_start_ns = now;
	if (r->windowed)
		sum_record_window(&r->rec, now, peakbpf_figure_window(f));
	if (r->opts->interval_ns)
		r->next_window_ns = now + r->opts->interval_ns;
	if (r->windowed) {      /* a single window: the run record says it all */
		c = run_context(r, f);
		write_record(r, f, &c);
	}
	peakbpf_figure_free(f);
	return 0;
}

/* What the harness (runs.c) keeps of a run: its figure and exit status.
 * source and inexact_reason are the library's static strings. */
static void run_result_set(struct run_result *res, const struct peakbpf_figure *f, int exit_status)
{
	uint64_t bound = 0, peak = 0, base = 0, t0 = 0, end = 0;

	memset(res, 0, sizeof(*res));
	res->done = true;
	res->measured = peakbpf_figure_peak(f, &peak) == 0;
	res->source = peakbpf_figure_source(f);
	res->exact = peakbpf_figure_exact(f);
	res->bound_known = peakbpf_figure_error_bound(f, &bound) == 0;
	res->error_bound_bytes = bound;
	res->inexact_reason = peakbpf_figure_reason(f);
	res->peak_bytes = peak;
	res->growth_known = peakbpf_figure_baseline(f, &base) == 0;
	res->growth_bytes = (int64_t)(peak - base);
	peakbpf_figure_times(f, &t0, NULL, &end);
	res->wall_s = end > t0 ? (double)(end - t0) / 1e9 : 0;
	res->exit_status = exit_status;
}

static void report_run(struct run *r)
{
	struct peakbpf_figure *f = NULL;
	uint64_t peak = 0, peak_ns = 0;
	struct run_context c;

	if (peakbpf_run_figure(r->session, &f)) {
		fprintf(stderr, "peakbpf: reading the run's figure failed\n");
		r->exit_status = EXIT_PEAKBPF_FAILED;
		return;
	}
	c = run_context(r, f);
	peakbpf_figure_peak(f, &peak);
	peakbpf_figure_peak_time(f, &peak_ns);
	if (recording(r) && !strcmp(peakbpf_figure_source(f), "bpf")) {
		drain_trace(r);
		if (r->opts->n_samplers) {
			compare_sampler(r, f, r->window_start_ns);
			c.sampler = &r->sampler;
		}
		if (sum_record_finish(&r->rec, r->window_start_ns, peak, peak_ns))
			r->exit_status = EXIT_PEAKBPF_FAILED;
	}
	if (r->opts->record_dir && rank_record_finish(&r->rank, peak, peakbpf_figure_exact(f),
						      peakbpf_figure_source(f), r->exit_status))
		r->exit_status = EXIT_PEAKBPF_FAILED;
	if (r->result)
		run_result_set(r->result, f, r->exit_status);
	write_record(r, f, &c);
	peakbpf_figure_free(f);
}

/* What a signal to peakbpf does. Returns true when the run should end. */
static bool on_signal(struct run *r, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;

	switch (sig) {
	case SIGCHLD:
		if (r->child > 0 && wait4(r->child, &r->command.wait_status, WNOHANG, &r->ru) == r->child) {
			r->child = -r->child;   /* reaped */
			return true;
		}
		return false;
	case SIGUSR1:
		r->windowed = !r->opts->record_dir;     /* --record: one more record window */
		if (close_window(r))
			fprintf(stderr, "peakbpf: closing the window failed\n");
		return false;
	default:
		if (r->child > 0) {
			/* A terminal's ^C already reached the command (same
			 * process group, SI_KERNEL); pass on only signals sent
			 * to peakbpf itself. */
			if (si->ssi_code != SI_KERNEL)
				kill(r->child, sig);
			return false;
		}
		return true;    /* attached: stop measuring, never signal them */
	}
}

/* Wait for the run's end, closing windows on time and on SIGUSR1. */
static int event_loop(struct run *r)
{
	for (;;) {
		struct pollfd fds[1 + CLI_MAX_PIDS];
		size_t nfds = 0, i;
		uint64_t now = monotonic_ns(), wake = UINT64_MAX;
		int timeout = -1, n;

		if (r->next_window_ns && r->next_window_ns < wake)
			wake = r->next_window_ns;
		if (r->deadline_ns && r->deadline_ns < wake)
			wake = r->deadline_ns;
		if (recording(r)) {
			drain_trace(r);
			if (now + RECORD_DRAIN_MS * 1000000ULL < wake)
				wake = now + RECORD_DRAIN_MS * 1000000ULL;
		}
		if (wake != UINT64_MAX) {
			uint64_t ms = wake > now ? (wake - now + 999999) / 1000000 : 0;

			/* poll() takes an int: a far wake-up is a wake-up to look again */
			timeout = ms > INT_MAX ? INT_MAX : (int)ms;
		}
		fds[nfds++] = (struct pollfd){ .fd = r->sigfd, .events = POLLIN };
		for (i = 0; i < r->opts->n_pids; i++)
			fds[nfds++] = (struct pollfd){ .fd = r->pidfds[i], .events = POLLIN };
		n = poll(fds, nfds, timeout);
		if (n < 0 && errno != EINTR)
			return -errno;
		now = monotonic_ns();
		if (r->deadline_ns && now >= r->deadline_ns)
			return 0;
		if (r->next_window_ns && now >= r->next_window_ns) {
			int err = close_window(r);

			if (err)
				return err;
		}
		if (n <= 0)
			continue;
		if (fds[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(r->sigfd, &si, sizeof(si)) == sizeof(si) && on_signal(r, &si))
				return 0;
		}
		for (i = 1; i < nfds; i++) {
			if (!(fds[i].revents & (POLLIN | POLLHUP)))
				continue;
			/* A root exited: stop watching it. */
			close(r->pidfds[i - 1]);
			r->pidfds[i - 1] = -1;
			if (--r->roots_alive == 0)
				return 0;
		}
	}
}

#define WAIT_DESCENDANTS_POLL_MS 10

/* --wait-descendants: the command has exited; measure on until every
 * process of the tree has (counted in the kernel), or a signal ends it. */
static int wait_descendants(struct run *r)
{
	int64_t live = 0;
	int unknown;

	while (!(unknown = peakbpf_procs_live(r->session, &live)) && live > 0) {
		struct pollfd pfd = { .fd = r->sigfd, .events = POLLIN };
		struct signalfd_siginfo si;
		int n = poll(&pfd, 1, WAIT_DESCENDANTS_POLL_MS);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (r->next_window_ns && monotonic_ns() >= r->next_window_ns && close_window(r))
			return -EIO;
		if (n > 0 && read(r->sigfd, &si, sizeof(si)) == sizeof(si) && on_signal(r, &si))
			return 0;
	}
	if (unknown && !r->opts->quiet)
		fprintf(stderr, "peakbpf: notice: --wait-descendants needs the bpf source to count the "
			"tree; the run ended when the command exited\n");
	return 0;
}

/*
 * What both modes need before anything runs: the -o file (so a bad path
 * fails first), the session's sources, and the signals peakbpf handles.
 */
static int run_prepare(struct run *r)
{
	const struct options *o = r->opts;
	PEAKBPF_OPTS(po,
		.source = o->source,
		.max_tracked = o->max_tracked,
		.sample_interval_ns = o->sample_interval_ns,
		.cgroup_root = o->cgroup_root,
		.libbpf_log = true,     /* libbpf_log() above decides */
		.measure = o->measure_unique ? PEAKBPF_MEASURE_UNIQUE : PEAKBPF_MEASURE_RSS,
		.command = o->command != NULL,
		.with_proc = o->n_samplers > 0,
		.changes_ring_bytes = o->n_samplers || o->timeline ? RECORD_RING_BYTES :
				      o->record_dir ? RANK_RECORD_RING_BYTES : 0,
		.helper_path = o->helper_path,
		.use_helper = o->use_helper,
		.measure_fallback = true,
		.no_helper = o->no_helper,
		/* -r, -c, sweeps, --fit: every run takes a tree of one load. */
		.keep_loaded = true,
	);
	char why[256] = "";
	const char *note;
	sigset_t set;
	int err;

	/* Before anything is created (a cgroup, a file, BPF programs): a
	 * signal from now on waits for the event loop, which cleans up. */
	handled_signals(&set);
	sigprocmask(SIG_BLOCK, &set, &r->oldmask);
	r->sigfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (r->sigfd < 0) {
		err = -errno;
		fprintf(stderr, "peakbpf: signalfd: %s\n", strerror(-err));
		return err;
	}
	if (getuid() != 0 && o->max_tracked > PEAKBPF_UNPRIVILEGED_MAX_TRACKED) {
		fprintf(stderr, "peakbpf: --max-tracked: at most %d without root (the kernel memory "
			"of its maps is bounded for other users)\n", PEAKBPF_UNPRIVILEGED_MAX_TRACKED);
		return -EPERM;
	}
	if (o->n_samplers && !o->sample_interval_ns)
		po.sample_interval_ns = o->samplers_ns[0];      /* the real sampler checks the model */
	if (o->output) {
		r->out = output_open(o->output);
		if (!r->out) {
			err = -errno;
			fprintf(stderr, "peakbpf: cannot write %s: %s%s\n", o->output, strerror(-err),
				err == -ELOOP ? " (it is a symbolic link: name the file itself)" : "");
			return err;
		}
	}
	err = sum_record_open(&r->rec, o->timeline, o->n_samplers > 0, o->command, o->pids, o->n_pids);
	if (err)
		return err;
	sum_record_set_identify(&r->rec, identify_mm, r);
	if (o->record_dir) {
		err = rank_record_open(&r->rank, o->record_dir, o->record_interval_ns, o->command, o->pids,
				       o->n_pids);
		if (err)
			return err;
		r->rec.on_change = on_sum_change;
		r->rec.on_change_ctx = &r->rank;
	}
	libbpf_set_print(libbpf_log);
	/* --record closes 100 windows a second: the bpf source alone, if it
	 * can be used, as a cgroup read beside it doubles each close's cost
	 * (docs/multi-node.md). */
	if (o->record_dir && o->source == PEAKBPF_SOURCE_AUTO) {
		po.source = PEAKBPF_SOURCE_BPF;
		if (peakbpf_open(&po, &r->session, why, sizeof(why)))
			po.source = PEAKBPF_SOURCE_AUTO;
	}
	err = r->session ? 0 : peakbpf_open(&po, &r->session, why, sizeof(why));
	if (err) {
		fprintf(stderr, "peakbpf: %s\n", why);
		if (err == -PEAKBPF_ERRNO_CGROUP_ROOT_UNSAFE)
			r->exit_status = EXIT_CGROUP_ROOT_UNSAFE;
		return err;
	}
	/* Why a better source was not used matters when peakbpf fell back;
	 * beside bpf, a missing secondary source is only in not_used. */
	if (!o->quiet && !peakbpf_has_bpf(r->session) && !peakbpf_helper_why(r->session))
		for (size_t i = 0; (note = peakbpf_note(r->session, i)); i++)
			fprintf(stderr, "peakbpf: notice: %s\n", note);
	if ((o->n_samplers || o->timeline) && !peakbpf_has_bpf(r->session)) {
		fprintf(stderr, "peakbpf: %s needs the bpf source loaded here%s\n",
			o->n_samplers ? "--compare-sampler" : "--timeline",
			peakbpf_helper_why(r->session) ? " (the helper does not send the record of the sum)" :
			", which cannot be used here");
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Every root is entered and the sources started: the run, and its first
 * window, begin now. */
static void begin_run(struct run *r)
{
	int64_t start_pages = 0;        /* without bpf here: no record of the sum */

	r->t0_ns = r->window_start_ns = monotonic_ns();
	peakbpf_window_start_pages(r->session, &start_pages);
	if (recording(r))
		sum_record_begin(&r->rec, r->t0_ns, start_pages, r->page_size);
	if (r->opts->interval_ns)
		r->next_window_ns = r->t0_ns + r->opts->interval_ns;
	if (r->opts->record_dir) {
		rank_record_begin(&r->rank, peakbpf_has_bpf(r->session), start_pages, r->page_size);
		r->next_window_ns = rank_record_next_close(&r->rank, r->t0_ns);
	}
}

/* Command mode: fork COMMAND behind the gate, enter it, open the gate. On
 * exec failure r->exit_status says why (126, 127). */
static int start_command(struct run *r)
{
	char **argv = r->opts->command;
	int gate_fd = -1, exec_err_fd = -1, exec_errno = 0, err;
	struct identity id;
	bool as_user;

	err = command_identity(r->opts->user, r->opts->quiet, &id, &as_user);
	if (err)
		return err;
	r->child = spawn_gated(argv, &r->oldmask, as_user ? &id : NULL, &gate_fd, &exec_err_fd);
	if (r->child < 0) {
		err = -errno;
		fprintf(stderr, "peakbpf: cannot start %s: %s\n", argv[0], strerror(-err));
		goto cleanup;
	}
	r->command.argv = argv;
	r->command.pid = r->child;
	err = peakbpf_add_pid(r->session, r->child);
	if (!err)
		err = peakbpf_start(r->session);
	if (err) {
		fprintf(stderr, "peakbpf: cannot track %s: %s\n", argv[0],
			peakbpf_helper_why(r->session) && *peakbpf_helper_why(r->session) ?
			peakbpf_helper_why(r->session) : strerror(-err));
		goto cleanup;   /* closing the gate makes the child exit */
	}
	begin_run(r);
	err = command_stop_pending();
	if (err) {
		fprintf(stderr, "peakbpf: %s before %s started: it was not started\n", strsignal(err), argv[0]);
		r->exit_status = 128 + err;
		err = -EINTR;
		goto cleanup;   /* the closed gate makes the child exit */
	}
	if (write(gate_fd, "g", 1) != 1) {
		err = -errno;
		fprintf(stderr, "peakbpf: cannot start %s: %s\n", argv[0], strerror(-err));
		goto cleanup;
	}
	/* EOF once exec succeeded (the pipe is close-on-exec), else its errno. */
	if (read(exec_err_fd, &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno)) {
		waitpid(r->child, NULL, 0);
		r->child = 0;
		r->exit_status = command_exec_failed(argv[0], r->opts->user, exec_errno);
		err = -ENOEXEC;
		goto cleanup;
	}
	err = 0;
cleanup:
	if (gate_fd >= 0)
		close(gate_fd);
	if (exec_err_fd >= 0)
		close(exec_err_fd);
	return err;
}

/* Attach mode: enter -p's processes, start, and set the -d deadline. */
static int start_attached(struct run *r)
{
	int err;

	err = attach_roots(r->session, r->opts->pids, r->opts->n_pids, r->pidfds, &r->roots_alive);
	if (err)
		return err;
	err = peakbpf_start(r->session);
	if (err)
		return err;
	begin_run(r);
	if (r->opts->duration_ns)
		r->deadline_ns = r->t0_ns + r->opts->duration_ns;
	return 0;
}

/* The run has ended: the command's facts and exit status, the last
 * window, the run's record, and a check that -o's file was written. */
static int collect_exit(struct run *r)
{
	const struct options *o = r->opts;
	int err;

	if (o->command) {
		r->command.user_s = timeval_s(r->ru.ru_utime);
		r->command.sys_s = timeval_s(r->ru.ru_stime);
		if (peakbpf_procs_live(r->session, &r->command.descendants_alive))
			r->command.descendants_alive = -1;
		peakbpf_command_exited(r->session, -r->child, &r->ru);
		r->child = 0;
		r->exit_status = exit_status_from_wait(r->command.wait_status);
	} else {
		r->exit_status = 0;
	}
	err = close_window(r);
	if (err) {
		fprintf(stderr, "peakbpf: reading the last window failed\n");
		r->exit_status = EXIT_PEAKBPF_FAILED;
		return err;
	}
	report_run(r);
	err = output_check(r->out_errno, o->output, r->exit_status);
	if (!err)
		err = output_check(r->stdout_errno, "the JSON record to stdout", r->exit_status);
	if (err)
		r->exit_status = EXIT_PEAKBPF_FAILED;
	return err;
}

static void run_cleanup(struct run *r)
{
	if (r->child > 0) {
		/* peakbpf failed while the command is not yet reaped: behind the
		 * closed gate it exits without exec, else SIGKILL ends it. */
		kill(r->child, SIGKILL);
		waitpid(r->child, NULL, 0);
	}
	for (size_t i = 0; i < CLI_MAX_PIDS; i++)
		if (r->pidfds[i] >= 0)
			close(r->pidfds[i]);
	if (r->sigfd >= 0)
		close(r->sigfd);
	peakbpf_close(r->session);
	sum_record_free(&r->rec);
	rank_record_close(&r->rank);
	if (r->out)
		fclose(r->out);
}

static int run(const struct options *o, struct run_result *res)
{
	struct run r = {
		.opts = o,
		.result = res,
		.sigfd = -1,
		.exit_status = EXIT_PEAKBPF_FAILED,
		.windowed = o->interval_ns != 0,
		.rank = { .fd = -1 },
		.page_size = sysconf(_SC_PAGESIZE),
	};
	int err;

	for (size_t i = 0; i < CLI_MAX_PIDS; i++)
		r.pidfds[i] = -1;
	err = run_prepare(&r);
	if (err)
		goto cleanup;
	err = o->command ? start_command(&r) : start_attached(&r);
	if (err == -EPERM && !o->command)
		r.exit_status = EXIT_NOT_PERMITTED;
	if (err)
		goto cleanup;
	err = event_loop(&r);
	if (!err && o->command && o->runs.wait_descendants)
		err = wait_descendants(&r);
	if (err) {
		fprintf(stderr, "peakbpf: waiting: %s\n", strerror(-err));
		goto cleanup;
	}
	collect_exit(&r);       /* sets r.exit_status, on failure too */
cleanup:
	run_cleanup(&r);
	return r.exit_status;
}

int main(int argc, char **argv)
{
	struct options o;
	struct run_result res = { 0 };
	char err[256];

	if (argc > 1 && !strcmp(argv[1], "plot"))
		return plot_main(argc - 1, argv + 1);   /* peakbpf -- plot ...: a command named plot */
	if (argc > 1 && !strcmp(argv[1], "merge"))
		return merge_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "serve"))
		return serve_main(argc - 1, argv + 1);
	switch (cli_parse(argc, argv, &o, err, sizeof(err))) {
	case CLI_HELP:
		cli_usage(stdout);
		return 0;
	case CLI_VERSION:
		printf("peakbpf %s\n", PEAKBPF_VERSION);
		return 0;
	case CLI_ERROR:
		fprintf(stderr, "peakbpf: %s\n", err);
		return EXIT_PEAKBPF_FAILED;
	case CLI_RUN:
		break;
	}
	verbose = o.verbose;
	/* A closed stderr or stdout pipe must not kill peakbpf before it has
	 * cleaned up (cgroups, the command); writes fail with EPIPE instead. */
	signal(SIGPIPE, SIG_IGN);
	if (runs_wanted(&o.runs))
		return runs_main(&o, run);
	return budget_check_single(&o, &res, run(&o, &res));
}
