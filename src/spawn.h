/* SPDX-License-Identifier: MIT */
/* Command mode's child: forked stopped at a gate, so that every source
 * has entered it before it execs and none of its memory can be missed. */
#ifndef PEAKBPF_SPAWN_H
#define PEAKBPF_SPAWN_H

#include <signal.h>
#include <sys/types.h>

/*
 * Fork argv stopped at a gate. Writing a byte to *gate_fd lets it exec
 * with oldmask as its signal mask; closing *gate_fd unwritten makes it exit
 * 125 without exec. *exec_err_fd then reads EOF once exec succeeded, or
 * the int errno of a failed exec (the child exits 126 or 127). Both fds
 * are the caller's to close. Returns the pid, or -1 with errno set.
 */
pid_t spawn_gated(char **argv, const sigset_t *oldmask, int *gate_fd, int *exec_err_fd);

#endif
