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

/* How the child is forked: fork(), or peakbpf_command_fork (its child
 * starts in the tree's cgroup) with its session as ctx. */
typedef pid_t (*spawn_fork_fn)(void *ctx);

/*
 * Fork argv, by fork_fn(ctx) (NULL: fork()), stopped at a gate. Writing a byte to *gate_fd lets it exec
 * with oldmask as its signal mask, as identity id if not NULL; closing
 * *gate_fd unwritten makes it exit 125 without exec. *exec_err_fd then
 * reads EOF once exec succeeded, or the int errno of a failed exec (the
 * child exits 126 or 127), or SPAWN_IDENTITY_FAILED | errno. Both fds are
 * the caller's to close. Returns the pid, or -1 with errno set.
 */
pid_t spawn_gated(char **argv, const sigset_t *oldmask, const struct identity *id,
		  spawn_fork_fn fork_fn, void *ctx, int *gate_fd, int *exec_err_fd);

#endif
