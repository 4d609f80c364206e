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
		  spawn_join_fn join, int join_fd, int *gate_fd, int *exec_err_fd)
{
	int gate[2], report[2], joined;
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
		if (join_fd >= 0) {
			/* Before the gate: the parent adds it once it is in. */
			e = join(join_fd);
			if (write(report[1], &e, sizeof(e)) != sizeof(e))
				_exit(EXIT_PEAKBPF_FAILED);
		}
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
	/* Wait until it is past its join (EOF if it died first). Its result
	 * does not matter here: the caller's add moves it if it did not join. */
	if (join_fd >= 0) {
		ssize_t n = read(report[0], &joined, sizeof(joined));

		(void)n;
	}
	*gate_fd = gate[1];
	*exec_err_fd = report[0];
	return pid;
}
