/* SPDX-License-Identifier: MIT */
/* Command mode's child: forked stopped at a gate, so that every source
 * has entered it before it execs and none of its memory can be missed. */
#ifndef PEAKBPF_SPAWN_H
#define PEAKBPF_SPAWN_H

#include <signal.h>
#include <sys/types.h>

struct identity;

/* In what *exec_err_fd reads: the errno was of switching to the identity,
 * not of exec (the child exits 125). */
#define SPAWN_IDENTITY_FAILED 0x40000000

/* Run in the child before it waits at the gate, when join_fd >= 0:
 * peakbpf_command_join (it joins the tree's cgroup itself). */
typedef int (*spawn_join_fn)(int fd);

/*
 * Fork argv stopped at a gate. With join_fd >= 0 the child first calls
 * join(join_fd), and spawn_gated returns once it has (whatever join
 * returned: the caller's next step moves it if it did not join). Writing a byte to *gate_fd lets it exec
 * with oldmask as its signal mask, as identity id if not NULL; closing
 * *gate_fd unwritten makes it exit 125 without exec. *exec_err_fd then
 * reads EOF once exec succeeded, or the int errno of a failed exec (the
 * child exits 126 or 127), or SPAWN_IDENTITY_FAILED | errno. Both fds are
 * the caller's to close. Returns the pid, or -1 with errno set.
 */
pid_t spawn_gated(char **argv, const sigset_t *oldmask, const struct identity *id,
		  spawn_join_fn join, int join_fd, int *gate_fd, int *exec_err_fd);

#endif
