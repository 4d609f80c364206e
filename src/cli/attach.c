// SPDX-License-Identifier: MIT
/* Attach mode's roots: the -p processes, checked, entered and watched. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
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

/* Readable once the process has exited (pidfd_open(2)). */
static bool exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) != 0;
}

/* Process pid, named first by its pidfd: whatever is checked and entered
 * after is that process if the pidfd's is still alive after the entry. */
static int attach_one(struct peakbpf_session *s, pid_t pid, int *pidfd)
{
	int err;

	*pidfd = pidfd_open(pid);
	if (*pidfd < 0 && errno == ESRCH) {
		fprintf(stderr, "peakbpf: -p %d: no such process (check the PID, in this PID namespace)\n", pid);
		return -ESRCH;
	}
	if (*pidfd < 0) {
		err = -errno;
		fprintf(stderr, "peakbpf: -p %d: cannot watch it for exit: %s\n", pid, strerror(-err));
		return err;
	}
	if (host_pid_no_mm(pid)) {
		fprintf(stderr, "peakbpf: -p %d is %s: it has no address space, no memory to "
			"measure (give the PID of a user process)\n", pid, host_pid_no_mm(pid));
		return -EINVAL;
	}
	/* Through the helper, the helper decides (serve_tree.c), with the
	 * same rule (host_may_trace), and says why. */
	if (!peakbpf_helper_why(s) && peakbpf_may_measure(pid) == -EPERM) {
		fprintf(stderr, "peakbpf: -p %d: not your process: without root, peakbpf measures "
			"only processes you could trace (your uid and gid, no capabilities you lack, "
			"dumpable; or grant CAP_SYS_PTRACE)\n", pid);
		return -EPERM;
	}
	err = peakbpf_add_pid(s, pid);
	if (err && peakbpf_helper_why(s) && *peakbpf_helper_why(s)) {
		fprintf(stderr, "peakbpf: -p %d: %s\n", pid, peakbpf_helper_why(s));
		return err;
	}
	if (err == -ESRCH || (!err && exited(*pidfd))) {
		fprintf(stderr, "peakbpf: -p %d: the process exited while peakbpf attached\n", pid);
		return -ESRCH;
	}
	if (err == -EPERM)
		fprintf(stderr, "peakbpf: -p %d: not your process: without root, peakbpf measures "
			"only processes you could trace (or grant CAP_SYS_PTRACE)\n", pid);
	else if (err)
		fprintf(stderr, "peakbpf: -p %d: cannot attach: %s\n", pid, strerror(-err));
	return err;
}

int attach_roots(struct peakbpf_session *s, const pid_t *pids, size_t n, int *pidfds, size_t *alive)
{
	for (size_t i = 0; i < n; i++) {
		int err;

		if (pids[i] == getpid()) {
			fprintf(stderr, "peakbpf: -p %d is peakbpf itself: give the PID of the process to measure\n",
				pids[i]);
			return -EINVAL;
		}
		err = attach_one(s, pids[i], &pidfds[i]);
		if (err)
			return err;
		(*alive)++;
	}
	return 0;
}
