// SPDX-License-Identifier: MIT
/*
 * A libpeakbpf example, built with `pkg-config --cflags --libs libpeakbpf`:
 * one session measures this process and its descendants; each workload
 * runs in a window of its own.
 *
 *   example [-S SOURCE] [-j] WORKLOAD "SHAPE ARGS" ["SHAPE ARGS" ...]
 *
 * For each shape it prints "window N: growth G expected E (SOURCE, exact|
 * not exact: why)" and, with -j, the window's JSON. Exit 0 when every
 * exact figure is within the integration tests' tolerance (2 MiB + 1 MiB
 * per process at the peak, and 2 %), 1 otherwise, 2 when the session
 * cannot be opened (the reason on stderr).
 */
#include <errno.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <peakbpf/peakbpf.h>

#define MIB 1048576ULL

extern char **environ;

/* Run WORKLOAD with the shape's words; with -x, read what it prints. */
static int run_shape(const char *workload, const char *shape, bool expect, uint64_t *expected)
{
	char buf[512], *argv[16], *save = NULL, out[64] = "";
	int argc = 0, pipefd[2], status;
	posix_spawn_file_actions_t fa;
	pid_t pid;

	snprintf(buf, sizeof(buf), "%s", shape);
	argv[argc++] = (char *)workload;
	if (expect)
		argv[argc++] = "-x";
	for (char *w = strtok_r(buf, " ", &save); w && argc < 15; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	if (pipe(pipefd))
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], expect ? 1 : 2);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	/* posix_spawn is a vfork: no copy of this process's memory. */
	errno = posix_spawn(&pid, workload, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (errno) {
		close(pipefd[0]);
		return -errno;
	}
	if (read(pipefd[0], out, sizeof(out) - 1) < 0)
		out[0] = '\0';
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -ECHILD;
	if (expect)
		*expected = strtoull(out, NULL, 10);
	return 0;
}

/* One window's line; 0 when within tolerance (or not exact: said so). */
static int report(const struct peakbpf_figure *f, uint64_t expected, bool json)
{
	uint64_t growth, bound, tol;
	int64_t procs = 0;
	char text[8192];

	if (peakbpf_figure_growth(f, &growth)) {
		printf("window %u: not measured (%s: %s)\n", peakbpf_figure_window(f),
		       peakbpf_figure_source(f), peakbpf_figure_reason(f));
		return 0;
	}
	peakbpf_figure_breakdown(f, NULL, NULL, NULL, &procs);
	printf("window %u: growth %.1f MiB expected %.1f MiB (%s, ", peakbpf_figure_window(f),
	       (double)growth / MIB, (double)expected / MIB, peakbpf_figure_source(f));
	if (peakbpf_figure_exact(f))
		printf("exact)\n");
	else if (peakbpf_figure_error_bound(f, &bound) == 0)
		printf("not exact, within %.1f MiB: %s)\n", (double)bound / MIB, peakbpf_figure_reason(f));
	else
		printf("not exact, error unknown: %s)\n", peakbpf_figure_reason(f));
	if (json && peakbpf_figure_json(f, text, sizeof(text)) >= 0)
		printf("%s\n", text);
	if (!peakbpf_figure_exact(f))
		return 0;
	tol = 2 * MIB + (uint64_t)procs * MIB;
	if (expected / 50 < tol)
		tol = expected / 50;
	return (growth > expected ? growth - expected : expected - growth) <= tol ? 0 : 1;
}

static int parse_source(const char *name, enum peakbpf_source *out)
{
	static const char *const names[] = { "auto", "bpf", "cgroup", "proc", "rusage" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i])) {
			*out = (enum peakbpf_source)i;
			return 0;
		}
	return -EINVAL;
}

int main(int argc, char **argv)
{
	PEAKBPF_OPTS(opts, .source = PEAKBPF_SOURCE_AUTO);
	struct peakbpf_session *s;
	bool json = false;
	char why[256] = "";
	int c, err, bad = 0;

	while ((c = getopt(argc, argv, "+S:j")) != -1) {
		if (c == 'j')
			json = true;
		else if (c != 'S' || parse_source(optarg, &opts.source))
			return 2;
	}
	if (argc - optind < 2) {
		fprintf(stderr, "usage: example [-S SOURCE] [-j] WORKLOAD \"SHAPE ARGS\"...\n");
		return 2;
	}
	err = peakbpf_open(&opts, &s, why, sizeof(why));
	if (err) {
		fprintf(stderr, "example: %s (%s)\n", why, strerror(-err));
		return 2;
	}
	err = peakbpf_add_self(s);
	if (!err)
		err = peakbpf_start(s);
	if (err) {
		fprintf(stderr, "example: cannot measure this process: %s\n", strerror(-err));
		peakbpf_close(s);
		return 2;
	}
	printf("libpeakbpf %s, source %s\n", peakbpf_version(), peakbpf_session_source(s));
	for (size_t i = 0; peakbpf_note(s, i); i++)
		printf("note: %s\n", peakbpf_note(s, i));
	for (int i = optind + 1; i < argc; i++) {
		struct peakbpf_figure *f = NULL;
		uint64_t expected = 0;

		err = run_shape(argv[optind], argv[i], true, &expected);
		if (!err)
			err = peakbpf_close_window(s, &f);      /* the shape's window opens */
		peakbpf_figure_free(f);
		if (!err)
			err = run_shape(argv[optind], argv[i], false, NULL);
		if (!err)
			err = peakbpf_close_window(s, &f);
		if (err) {
			fprintf(stderr, "example: %s: %s\n", argv[i], strerror(-err));
			bad = 1;
			break;
		}
		bad |= report(f, expected, json);
		peakbpf_figure_free(f);
	}
	peakbpf_close(s);
	return bad;
}
