/* SPDX-License-Identifier: MIT */
/*
 * --cgroup, --container, --unit: the cgroup a target names, found before
 * anything is loaded (docs/containers.md says how each is found).
 */
#ifndef PEAKBPF_TARGET_H
#define PEAKBPF_TARGET_H

#include <stddef.h>
#include "cli.h"

/* Resolve o->target into o->target_cgroup and o->target_label (static
 * storage: one target a process). 0, or the exit status after a one-line
 * error on stderr (status.h: 117-120, 123). */
int target_resolve(struct options *o);

#endif
