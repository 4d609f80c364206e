/* SPDX-License-Identifier: MIT */
/* --container NAME|ID: a podman or docker container's cgroup, found by the
 * runtime's own inspect (docs/containers.md). */
#ifndef PEAKBPF_TARGET_CONTAINER_H
#define PEAKBPF_TARGET_CONTAINER_H

#include <stddef.h>

/* The runtime's command line: $PEAKBPF_PODMAN or $PEAKBPF_DOCKER split on
 * spaces (a private store: "podman --root DIR --runroot DIR"), else the
 * runtime's name. argv gets at most max - 1 words and a NULL. */
size_t container_runtime_argv(const char *runtime, char *buf, size_t len, char **argv, size_t max);

/*
 * NAME, podman:NAME or docker:NAME to the container's cgroup directory
 * (its main process's, in the hierarchy memory is charged in) and a label
 * ("container NAME (ID, podman)"). 0, or the exit status after a one-line
 * error: 117 no runtime installed, 118 several containers match, 120 none
 * does, or it is not running.
 */
int container_resolve(const char *spec, char *path, size_t len, char *label, size_t llen);

#endif
