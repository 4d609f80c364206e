/* SPDX-License-Identifier: MIT */
/* A fixture "kernel" for the cgroup source's unit tests: see cgroup_fixture.c. */
#ifndef PEAKBPF_TEST_CGROUP_FIXTURE_H
#define PEAKBPF_TEST_CGROUP_FIXTURE_H

#include "cgroup_fs_ops.h"

/* Install with cgroup_fs_set_ops_for_tests(&cgroup_fixture_ops). */
extern const struct cgroup_fs_ops cgroup_fixture_ops;

#endif
