// SPDX-License-Identifier: MIT
/* A run (run.h): its signals, its event loop, how it starts (a command
 * behind its gate, or -p's PIDs) and how it ends. */
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
#include <peakbpf/peakbpf_stacks.h>
#include "clock.h"
#include "cli.h"
#include "run.h"
#include "attach.h"
#include "command.h"
#include "identity.h"
#include "fileutil.h"
#include "env_check.h"
#include "output.h"
#include "rank_file.h"
#include "run_report.h"
#include "sampler_model.h"
#include "spawn.h"
#include "status.h"
#include "sum_log.h"
#include "stacks_cli.h"

static bool verbose;

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static double timeval_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
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

/* What a signal to peakbpf does. Returns true when the run should end. */
static bool on_signal(struct run *r, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;

	switch (sig) {
	case SIGCHLD:
		if (r->child > 0 && wait4(r->child, &r->command.wait_status, WNOHANG, &r->ru) == r->child) {
			r->child = -r->child;   /* reaped */
			r->command.exited_s = (double)(monotonic_ns() - r->t0_ns) / 1e9;
			return true;
		}
		return false;
	case SIGUSR1:
		r->windowed = !r->opts->record_dir;     /* --record: one more record window */
		if (run_close_window(r))
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

/* How often a cgroup target's directory is looked for (its removal ends
 * the run). */
#define TARGET_POLL_MS 100

/* The target's cgroup was removed (its container stopped, its unit ended). */
static bool target_gone(const struct run *r)
{
	int fd;

	if (r->target_fd < 0)
		return false;
	fd = openat(r->target_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == ENOENT || errno == ENODEV;
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
		if (r->target_fd >= 0 && now + TARGET_POLL_MS * 1000000ULL < wake)
			wake = now + TARGET_POLL_MS * 1000000ULL;
		if (run_keeps_sum_log(r) || r->stacks) {
			run_drain_trace(r);
			if (now + SUM_LOG_DRAIN_MS * 1000000ULL < wake)
				wake = now + SUM_LOG_DRAIN_MS * 1000000ULL;
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
		if (target_gone(r))
			return 0;
		if (r->next_window_ns && now >= r->next_window_ns) {
			int err = run_close_window(r);

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
		if (run_keeps_sum_log(r) || r->stacks)
			run_drain_trace(r);     /* the kernel's rings fill while the tree runs on */
		if (r->next_window_ns && monotonic_ns() >= r->next_window_ns && run_close_window(r))
			return -EIO;
		if (n > 0 && read(r->sigfd, &si, sizeof(si)) == sizeof(si) && on_signal(r, &si))
			return 0;
	}
	if (unknown && !r->opts->quiet)
		fprintf(stderr, "peakbpf: notice: --wait-descendants needs the bpf source to count the "
			"tree; the run ended when the command exited\n");
	return 0;
}

/* -o's file (so that a bad path fails first), the record of the sum
 * (--timeline, --compare-sampler) and --record's file. */
static int open_outputs(struct run *r)
{
	const struct options *o = r->opts;
	int err;

	if (o->output) {
		r->out = output_open(o->output, &r->out_created);
		if (!r->out) {
			err = -errno;
			fprintf(stderr, "peakbpf: cannot write %s: %s%s\n", o->output, strerror(-err),
				err == -ELOOP ? " (it is a symbolic link: name the file itself)" : "");
			return err;
		}
	}
	if ((err = stacks_cli_open(r)))
		return err;
	err = sum_log_open(&r->log, o->timeline, o->n_samplers > 0, o->command, o->pids, o->n_pids);
	if (!err && o->timeline && o->run_count > 1)
		sum_log_name_run(&r->log, o->run_warmup, o->run_index, o->run_count);
	if (err)
		return err;
	sum_log_set_identify(&r->log, run_identify_mm, r);
	if (o->record_dir) {
		err = rank_file_open(&r->rank, o->record_dir, o->record_interval_ns, o->command, o->pids,
				       o->n_pids);
		if (err)
			return err;
		r->log.on_change = run_on_sum_change;
		r->log.on_change_ctx = &r->rank;
	}
	return 0;
}

/* peakbpf_open failed: 121 for an unsafe cgroup root, 123 when --helper
 * named a helper that cannot be reached or refused, else 125. */
static int open_failed_status(const struct options *o, int err)
{
	if (err == -PEAKBPF_ERRNO_CGROUP_ROOT_UNSAFE)
		return EXIT_CGROUP_ROOT_UNSAFE;
	if (o->use_helper && err != -ENOMEM)
		return EXIT_NOT_PERMITTED;
	return EXIT_PEAKBPF_FAILED;
}

/* -- docker|podman run: the container's own session, on the cgroup
 * peakbpf makes for it, from before the command starts (and first, the
 * helper's warning, env_check.h). */
static int prepare_container(struct run *r, const struct peakbpf_opts *po)
{
	const struct options *o = r->opts;
	int err;

	/* The session is open: a helper expected and not used is said now. */
	env_check_session(o->use_helper || o->helper_path, r->session);
	if (!o->command || !container_run_wanted(o->command, o->quiet))
		return 0;
	err = container_run_prepare(&r->ctr, o->command);
	if (!err)
		err = container_run_open(&r->ctr, po, r->session);
	if (err == -EOPNOTSUPP) {
		/* The container is then measured with its runtime, by lineage. */
		container_run_cleanup(&r->ctr);
		memset(&r->ctr, 0, sizeof(r->ctr));
		return 0;
	}
	return err;
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
		.changes_ring_bytes = o->n_samplers || o->timeline ? SUM_LOG_RING_BYTES :
				      o->record_dir ? RANK_FILE_RING_BYTES : 0,
		.helper_path = o->helper_path,
		.use_helper = o->use_helper,
		.measure_fallback = true,
		.no_helper = o->no_helper,
		.keep_loaded = true,    /* -r, -c, sweeps, --fit: every run takes a tree of one load */
		.no_cgroup_targets = !o->target_cgroup && !container_run_possible(o->command),
	);
	char why[256] = "";
	const char *note;
	sigset_t set;
	int err;

	verbose = o->verbose;
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
	err = open_outputs(r);
	if (err)
		return err;
	libbpf_set_print(libbpf_log);
	/* --record closes 100 windows a second: the bpf source alone, if it
	 * can be used, as a cgroup read beside it doubles each close's cost
	 * (docs/multi-node.md). */
	if (o->record_dir && o->source == PEAKBPF_SOURCE_AUTO) {
		po.source = PEAKBPF_SOURCE_BPF;
		if (peakbpf_open(&po, &r->session, why, sizeof(why)))
			po.source = PEAKBPF_SOURCE_AUTO;
	}
	err = r->session ? 0 : (o->stacks ? peakbpf_open_stacks : peakbpf_open)(&po, &r->session, why, sizeof(why));
	if (err) {
		fprintf(stderr, "peakbpf: %s\n", why);
		r->exit_status = open_failed_status(r->opts, err);
		return err;
	}
	err = prepare_container(r, &po);
	if (err)
		return err;
	/* Fallen back: said now, in one line (a run may be long); why each
	 * better source was not used is in the summary, once ("not used:"). */
	note = peakbpf_note(r->session, 0);
	if (!o->quiet && !peakbpf_has_bpf(r->session) && !peakbpf_helper_why(r->session) && note)
		fputs("peakbpf: notice: the exact bpf source cannot be used here: a fallback measures; the "
		      "summary says why (not used:)\n", stderr);
	if ((o->n_samplers || o->timeline) && !peakbpf_has_bpf(r->session)) {
		fprintf(stderr, "peakbpf: %s needs the sum log, which only the bpf source "
			"makes, and it could not be used (see the notices above): run as root, with CAP_BPF "
			"and CAP_PERFMON, or through a running peakbpf serve\n",
			o->n_samplers ? "--compare-sampler" : "--timeline");
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
	if (run_keeps_sum_log(r))
		sum_log_begin(&r->log, r->t0_ns, start_pages, r->page_size);
	if (r->opts->interval_ns)
		r->next_window_ns = r->t0_ns + r->opts->interval_ns;
	if (r->opts->record_dir) {
		rank_file_begin(&r->rank, peakbpf_has_bpf(r->session), start_pages, r->page_size);
		r->next_window_ns = rank_file_next_close(&r->rank, r->t0_ns);
	}
}

/* The child starts in the tree's cgroup: peakbpf_add_pid moves nothing. */
static pid_t command_fork(void *session)
{
	return peakbpf_command_fork(session);
}

/* Command mode: fork COMMAND behind the gate, enter it, open the gate. On
 * exec failure r->exit_status says why (126, 127). */
static int start_command(struct run *r)
{
	char **argv = r->ctr.argv ? r->ctr.argv : r->opts->command;
	int gate_fd = -1, exec_err_fd = -1, exec_errno = 0, err, saved[2] = { -1, -1 };
	struct identity id;
	bool as_user;

	err = command_identity(r->opts->user, r->opts->quiet, &id, &as_user);
	if (err)
		return err;
	if (r->opts->hide_command_output && stdio_to_null(saved)) {
		fprintf(stderr, "peakbpf: cannot open /dev/null: %s\n", strerror(errno));
		return -EIO;
	}
	r->child = spawn_gated(argv, &r->oldmask, as_user ? &id : NULL, command_fork, r->session,
			       &gate_fd, &exec_err_fd);
	stdio_restore(saved);
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
	peakbpf_command_started(r->session, r->child);
	err = 0;
cleanup:
	if (gate_fd >= 0)
		close(gate_fd);
	if (exec_err_fd >= 0)
		close(exec_err_fd);
	return err;
}

/* A cgroup target (--cgroup, --container, --unit): the session follows
 * the cgroup; the run ends when it is removed (target_gone). */
static int start_target(struct run *r)
{
	const struct options *o = r->opts;
	int err;

	r->target_fd = open(o->target_cgroup, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->target_fd < 0) {
		err = -errno;
		fprintf(stderr, "peakbpf: %s: %s\n", o->target_label, strerror(-err));
		r->exit_status = EXIT_TARGET_NOT_FOUND;
		return err;
	}
	err = peakbpf_add_cgroup(r->session, o->target_cgroup);
	if (err == -EOPNOTSUPP && !strcmp(peakbpf_session_source(r->session), "bpf"))
		fprintf(stderr, "peakbpf: %s: this kernel cannot run the BPF programs that follow a cgroup "
			"(Linux 5.12+; on a later one -v shows the verifier's refusal); measure its processes "
			"with -p instead\n", o->target_label);
	else if (err == -EOPNOTSUPP)
		fprintf(stderr, "peakbpf: %s: %s cannot follow a cgroup (the bpf source here can: run as root, "
			"or with CAP_BPF, CAP_PERFMON and --no-helper)\n", o->target_label,
			peakbpf_session_source(r->session));
	else if (err)
		fprintf(stderr, "peakbpf: %s: cannot measure it: %s\n", o->target_label, strerror(-err));
	if (err)
		r->exit_status = err == -EPERM ? EXIT_NOT_PERMITTED : EXIT_PEAKBPF_FAILED;
	return err;
}

/* Attach mode: enter -p's processes (or the cgroup target), start, and set
 * the -d deadline. */
static int start_attached(struct run *r)
{
	int err;

	err = r->opts->target ? start_target(r) :
	      attach_roots(r->session, r->opts->pids, r->opts->n_pids, r->pidfds, &r->roots_alive);
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
	r->oom_recorded = !peakbpf_oom_victims(r->session, r->oom, RUN_MAX_OOM, &r->n_oom, r->oom_why,
						sizeof(r->oom_why));
	err = run_close_window(r);
	if (err) {
		fprintf(stderr, "peakbpf: reading the last window failed\n");
		r->exit_status = EXIT_PEAKBPF_FAILED;
		return err;
	}
	run_report(r);
	err = output_check(r->out_errno, o->output, r->exit_status);
	if (!err)
		err = output_check(r->stdout_errno, "the JSON report to stdout", r->exit_status);
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
	if (r->target_fd >= 0)
		close(r->target_fd);
	peakbpf_close(r->session);
	container_run_cleanup(&r->ctr);
	sum_log_free(&r->log);
	stacks_cli_close(r);
	rank_file_close(&r->rank);
	if (r->out && r->out_errno)
		safe_discard(r->out, r->opts->output, r->out_created);  /* a full disk: no empty -o */
	else if (r->out)
		fclose(r->out);
}

int run_measure(const struct options *o, struct run_result *res)
{
	struct run r = {
		.opts = o,
		.result = res,
		.sigfd = -1,
		.target_fd = -1,
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

