// SPDX-License-Identifier: MIT
/* peakbpf: run a command, report the exact peak of its tree's summed RSS. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "host.h"
#include "peakbpf.h"
#include "report.h"
#include "status.h"

static bool verbose;

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static __u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static double timeval_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Signals peakbpf handles synchronously: the command's end, and the ones it
 * passes on to the command. */
static void handled_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
}

/*
 * Fork the command stopped at a gate: it execs only after the parent has
 * entered it into the tree, so none of its memory can be missed. Returns
 * the pid, or -1 with errno set. *exec_err_fd reports exec failure.
 */
static pid_t spawn_gated(char **argv, const sigset_t *oldmask, int *gate_fd, int *exec_err_fd)
{
	int gate[2], report[2];
	pid_t pid;

	if (pipe2(gate, O_CLOEXEC))
		return -1;
	if (pipe2(report, O_CLOEXEC)) {
		close(gate[0]);
		close(gate[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(gate[0]);
		close(gate[1]);
		close(report[0]);
		close(report[1]);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		char go;
		int e;

		close(gate[1]);
		close(report[0]);
		if (read(gate[0], &go, 1) != 1)
			_exit(EXIT_PEAKBPF_FAILED);     /* peakbpf gave up */
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		execvp(argv[0], argv);
		e = errno;
		if (write(report[1], &e, sizeof(e)) < 0)
			_exit(EXIT_PEAKBPF_FAILED);
		_exit(exit_status_from_exec_errno(e));
	}
	close(gate[0]);
	close(report[1]);
	*gate_fd = gate[1];
	*exec_err_fd = report[0];
	return pid;
}

static int wait_command(pid_t pid, const sigset_t *set, int *status, struct rusage *ru)
{
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(set, &si);

		if (sig < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (sig == SIGCHLD) {
			pid_t r = wait4(pid, status, WNOHANG, ru);

			if (r == pid)
				return 0;
			if (r < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		/* A terminal's ^C already reached the command (same process
		 * group, si_code SI_KERNEL); pass on only signals sent to us. */
		if (si.si_code != SI_KERNEL)
			kill(pid, sig);
	}
}

static void fill_from_reading(struct run_record *r, const struct tree_reading *rd, __u64 t0_ns)
{
	const struct tree_state *t = &rd->tree;
	uint64_t page = (uint64_t)r->host.page_size;

	r->measured = true;
	r->peak_bytes = (uint64_t)(t->peak_pages > 0 ? t->peak_pages : 0) * page;
	r->baseline_bytes = 0;  /* command mode: the tree starts empty */
	r->peak_at_s = t->peak_ns > t0_ns ? (double)(t->peak_ns - t0_ns) / 1e9 : 0;
	r->peak_file_bytes = (uint64_t)(t->peak_breakdown[RSS_FILE] > 0 ? t->peak_breakdown[RSS_FILE] : 0) * page;
	r->peak_anon_bytes = (uint64_t)(t->peak_breakdown[RSS_ANON] > 0 ? t->peak_breakdown[RSS_ANON] : 0) * page;
	r->peak_shmem_bytes = (uint64_t)(t->peak_breakdown[RSS_SHMEM] > 0 ? t->peak_breakdown[RSS_SHMEM] : 0) * page;
	r->procs_at_peak = t->peak_procs;
	r->mms_at_peak = t->peak_mms;
	r->events = t->events;
	r->missed_events = rd->missed_events;
	r->drop_mm_full = t->drop_mm_full;
	r->drop_task_full = t->drop_task_full;
	r->peak_races = t->peak_races;
	r->mms_entered = t->mms_entered;
	r->procs_entered = t->procs_entered;
	r->mms_left = rd->mm_entries;
	r->procs_left = rd->task_entries;
	r->descendants_alive = t->procs_live;
	r->exact_reads = t->exact_reads;
	r->cheap_reads = t->cheap_reads;
	record_judge_exactness(r, t->bound_pages);
}

static int emit(const struct options *o, const struct run_record *r)
{
	FILE *f;

	if (!o->quiet)
		report_human(r, stderr);
	if (o->json)
		report_json(r, stdout);
	if (!o->output)
		return 0;
	f = fopen(o->output, "we");
	if (!f) {
		fprintf(stderr, "peakbpf: cannot write %s: %s\n", o->output, strerror(errno));
		return -errno;
	}
	report_json(r, f);
	if (fclose(f)) {
		fprintf(stderr, "peakbpf: cannot write %s: %s\n", o->output, strerror(errno));
		return -EIO;
	}
	return 0;
}

static int open_error(int err)
{
	if (err == -EPERM || err == -EACCES)
		fprintf(stderr, "peakbpf: the kernel refused to load the BPF programs (%s): "
			"run as root, or grant CAP_BPF and CAP_PERFMON\n", strerror(-err));
	else
		fprintf(stderr, "peakbpf: cannot load the BPF programs: %s (run with -v for the kernel's log)\n",
			strerror(-err));
	return EXIT_PEAKBPF_FAILED;
}

static int run_command(const struct options *o)
{
	struct tracker_opts topts = { .max_tracked = o->max_tracked };
	struct run_record rec = { .source = "bpf", .argv = o->command };
	struct tracker *tracker = NULL;
	struct tree_reading reading;
	struct rusage ru = {};
	sigset_t set, oldmask;
	int gate_fd = -1, exec_err_fd = -1, status = 0, exec_errno = 0;
	int err, ret = EXIT_PEAKBPF_FAILED;
	uint64_t capeff = host_effective_caps();
	__u64 t0, t1;
	pid_t pid = -1;
	ssize_t n;

	host_facts_fill(&rec.host, capeff);
	if (!rec.host.btf) {
		fprintf(stderr, "peakbpf: this kernel has no BTF (/sys/kernel/btf/vmlinux): "
			"use a kernel built with CONFIG_DEBUG_INFO_BTF=y\n");
		return EXIT_PEAKBPF_FAILED;
	}
	if (!bpf_privileges(capeff)) {
		fprintf(stderr, "peakbpf: missing privileges: run as root, or grant CAP_BPF and "
			"CAP_PERFMON (setcap cap_bpf,cap_perfmon+ep peakbpf, or a container's --cap-add)\n");
		return EXIT_PEAKBPF_FAILED;
	}
	if (o->output) {        /* fail before running anything */
		int fd = open(o->output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (fd < 0) {
			fprintf(stderr, "peakbpf: cannot write %s: %s\n", o->output, strerror(errno));
			return EXIT_PEAKBPF_FAILED;
		}
		close(fd);
	}
	libbpf_set_print(libbpf_log);
	err = tracker_open(&topts, &tracker);
	if (err)
		return open_error(err);
	rec.host.teardown_hook = tracker_teardown_hook(tracker);
	rec.host.rss_percpu = tracker_rss_is_percpu(tracker);
	rec.host.exact_path_err = tracker_exact_path(tracker);

	handled_signals(&set);
	sigprocmask(SIG_BLOCK, &set, &oldmask);
	pid = spawn_gated(o->command, &oldmask, &gate_fd, &exec_err_fd);
	if (pid < 0) {
		fprintf(stderr, "peakbpf: cannot start %s: %s\n", o->command[0], strerror(errno));
		goto cleanup;
	}
	rec.pid = pid;
	err = tracker_add_process(tracker, pid);
	if (err) {
		fprintf(stderr, "peakbpf: cannot track %s: %s\n", o->command[0], strerror(-err));
		close(gate_fd);         /* the child exits without exec */
		gate_fd = -1;
		waitpid(pid, NULL, 0);
		goto cleanup;
	}
	t0 = monotonic_ns();
	if (write(gate_fd, "g", 1) != 1) {
		fprintf(stderr, "peakbpf: cannot start %s: %s\n", o->command[0], strerror(errno));
		close(gate_fd);
		gate_fd = -1;
		waitpid(pid, NULL, 0);
		goto cleanup;
	}
	close(gate_fd);
	gate_fd = -1;
	n = read(exec_err_fd, &exec_errno, sizeof(exec_errno));
	if (n == sizeof(exec_errno)) {
		waitpid(pid, NULL, 0);
		ret = exit_status_from_exec_errno(exec_errno);
		if (ret == EXIT_NOT_FOUND)
			fprintf(stderr, "peakbpf: %s: command not found\n", o->command[0]);
		else
			fprintf(stderr, "peakbpf: %s: cannot execute: %s\n", o->command[0], strerror(exec_errno));
		goto cleanup;
	}

	err = wait_command(pid, &set, &status, &ru);
	t1 = monotonic_ns();
	if (err) {
		fprintf(stderr, "peakbpf: waiting for %s: %s\n", o->command[0], strerror(-err));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		goto cleanup;
	}
	rec.wait_status = status;
	rec.wall_s = (double)(t1 - t0) / 1e9;
	rec.user_s = timeval_s(ru.ru_utime);
	rec.sys_s = timeval_s(ru.ru_stime);
	tracker_read(tracker, &reading);
	fill_from_reading(&rec, &reading, t0);
	ret = exit_status_from_wait(status);
	if (emit(o, &rec))
		ret = EXIT_PEAKBPF_FAILED;
cleanup:
	if (gate_fd >= 0)
		close(gate_fd);
	if (exec_err_fd >= 0)
		close(exec_err_fd);
	tracker_close(tracker);
	return ret;
}

int main(int argc, char **argv)
{
	struct options o;
	char err[256];

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
	return run_command(&o);
}
