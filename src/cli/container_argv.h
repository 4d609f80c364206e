/* SPDX-License-Identifier: MIT */
/* The command line of `peakbpf -- docker run` / `podman run`: where "run"
 * is, run's options, and the options peakbpf puts in (container_run.h). */
#ifndef PEAKBPF_CONTAINER_ARGV_H
#define PEAKBPF_CONTAINER_ARGV_H

#include <stdbool.h>

/* The index of "run" in argv (RUNTIME [GLOBAL OPTIONS] [container] run),
 * 0 if argv runs no container; *runtime "docker" or "podman". */
int container_argv_run_index(char **argv, const char **runtime);
/* Whether an option of run (after index run) is --NAME or --NAME=VALUE, up
 * to a "--"; its value in *value (if not NULL) when it has one. */
bool container_argv_option(char **argv, int run, const char *name, const char **value);
/* argv with opt1 and opt2 put in after index run: a new array of the same
 * strings (free the array only), or NULL when out of memory. */
char **container_argv_inject(char **argv, int run, const char *opt1, const char *opt2);

#endif
