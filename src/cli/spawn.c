// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include "identity.h"
#include "spawn.h"
#include "status.h"

pid_t spawn_gated(char **argv, const sigset_t *oldmask, const struct identity *id,
		  spawn_fork_fn fork_fn, void *ctx, int *gate_fd, int *exec_err_fd)
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
	pid = fork_fn ? fork_fn(ctx) : fork();
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
		signal(SIGPIPE, SIG_DFL);      /* an ignored signal stays ignored across exec */
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		if (id && (e = -identity_apply(id)) != 0) {
			e |= SPAWN_IDENTITY_FAILED;
			if (write(report[1], &e, sizeof(e)) < 0)
				_exit(EXIT_PEAKBPF_FAILED);
			_exit(EXIT_PEAKBPF_FAILED);
		}
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
