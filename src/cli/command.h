/* SPDX-License-Identifier: MIT */
/* Command mode's edges: who the command runs as, and what is said when it
 * could not be started. */
#ifndef PEAKBPF_COMMAND_H
#define PEAKBPF_COMMAND_H

#include <stdbool.h>

struct identity;

/* --user's identity in *id (*set true), or, without it under sudo, one
 * notice that the command runs as root. 0 or -errno, said on stderr. */
int command_identity(const char *user, bool quiet, struct identity *id, bool *set);
/* A signal that stops the run (Ctrl-C) received while peakbpf was still
 * starting, waiting blocked in the signalfd: its number, or 0. */
int command_stop_pending(void);
/* The gated child reported code instead of exec (spawn.h): say why, and
 * return the exit status (125, 126 or 127). */
int command_exec_failed(const char *argv0, const char *user, int code);

#endif
