// SPDX-License-Identifier: MIT
/* Attach mode's roots: the -p processes, checked, entered and watched. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <peakbpf/peakbpf.h>
#include "attach.h"
#include "host.h"

static int pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

int attach_roots(struct peakbpf_session *s, const pid_t *pids, size_t n, int *pidfds, size_t *alive)
{
	int err, watch_err;

	for (size_t i = 0; i < n; i++) {
		pid_t pid = pids[i];

		if (pid == getpid()) {
			fprintf(stderr, "peakbpf: -p %d is peakbpf itself: give the PID of the process to measure\n", pid);
			return -EINVAL;
		}
		if (kill(pid, 0) && errno == ESRCH) {
			fprintf(stderr, "peakbpf: -p %d: no such process (check the PID, in this PID namespace)\n", pid);
			return -ESRCH;
		}
		if (host_pid_no_mm(pid)) {
			fprintf(stderr, "peakbpf: -p %d is %s: it has no address space, no memory to "
				"measure (give the PID of a user process)\n", pid, host_pid_no_mm(pid));
			return -EINVAL;
		}
		/* Through the helper, the helper decides (serve.c), with the
		 * same rules, and says why. */
		if (!peakbpf_helper_why(s) && peakbpf_may_measure(pid) == -EPERM) {
			fprintf(stderr, "peakbpf: -p %d: not your process: without root, peakbpf measures "
				"only processes you could trace (your own; or grant CAP_SYS_PTRACE)\n", pid);
			return -EPERM;
		}
		pidfds[i] = pidfd_open(pid);
		watch_err = pidfds[i] < 0 ? errno : 0;      /* before adding it changes errno */
		err = peakbpf_add_pid(s, pid);
		if (err && peakbpf_helper_why(s) && *peakbpf_helper_why(s)) {
			fprintf(stderr, "peakbpf: -p %d: %s\n", pid, peakbpf_helper_why(s));
			return err;
		}
		if (err == -ESRCH || watch_err == ESRCH) {
			fprintf(stderr, "peakbpf: -p %d: the process exited while peakbpf attached\n", pid);
			return -ESRCH;
		}
		if (err) {
			fprintf(stderr, "peakbpf: -p %d: cannot attach: %s\n", pid, strerror(-err));
			return err;
		}
		if (watch_err) {
			fprintf(stderr, "peakbpf: -p %d: cannot watch it for exit: %s\n", pid, strerror(watch_err));
			return -watch_err;
		}
		(*alive)++;
	}
	return 0;
}
