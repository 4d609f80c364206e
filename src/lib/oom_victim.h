/* SPDX-License-Identifier: MIT */
/* An OOM recorder's kernel record (bpf/oom.h) as the public API gives it
 * (struct peakbpf_oom_victim), and a memory cgroup's path from its id. */
#ifndef PEAKBPF_OOM_VICTIM_H
#define PEAKBPF_OOM_VICTIM_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <peakbpf/peakbpf.h>
#include "oom.h"

/* e, with pages of page bytes, into out; the cgroups' paths resolved. */
void oom_victim_fill(const struct oom_event *e, long page, struct peakbpf_oom_victim *out);
/*
 * The path of the memory cgroup whose id (kernfs node id: its directory's
 * inode number) is id, under the memory hierarchy's mount (v1's
 * /sys/fs/cgroup/memory, else v2's /sys/fs/cgroup): opened by its file
 * handle (open_by_handle_at; needs CAP_DAC_READ_SEARCH), no walk of the
 * tree. 0, or -errno and "" (the cgroup is gone, or no privilege).
 */
int oom_cgroup_path(uint64_t id, char *buf, size_t len);

#endif
