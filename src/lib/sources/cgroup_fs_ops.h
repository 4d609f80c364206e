/* SPDX-License-Identifier: MIT */
/*
 * The seam between the cgroup source and the kernel, for unit tests only.
 *
 * Beyond reading and writing files, a cgroup file system acts: a new
 * directory comes with its interface files, a pid written to one
 * cgroup.procs leaves the other, and so on. These are the acts the source
 * relies on. peakbpf always uses cgroupfs's (cgroup_fs.c); the unit tests
 * install a fixture's (tests/unit/cgroup_fixture.c), which plays the kernel
 * in a plain directory tree. Only cgroup_fs.c and the unit tests include
 * this header.
 */
#ifndef PEAKBPF_CGROUP_FS_OPS_H
#define PEAKBPF_CGROUP_FS_OPS_H

#include "cgroup_fs.h"

struct cgroup_fs_ops {
	/* Fill h->version, h->root and h->mount_root from root (an absolute
	 * path, resolved, open as root_fd), and open h->root_fd below root_fd
	 * with O_NOFOLLOW; or say why not. */
	int (*find_hierarchy)(struct cg_hierarchy *h, const char *root, int root_fd,
			      char *why, size_t whylen);
	/* The cgroup of pid (0: this process) relative to h->root. */
	int (*proc_cgroup)(const struct cg_hierarchy *h, pid_t pid, char *rel, size_t len);
	/* Make the cgroup name in the directory parent_fd, with its interface
	 * files; on failure nothing is left. */
	int (*make_cgroup)(int parent_fd, const char *name);
	/* Remove the cgroup name of parent_fd, which has no processes. */
	int (*remove_cgroup)(int parent_fd, const char *name);
	/* Each pid in dir_fd's cgroup.procs has been written to another
	 * cgroup's: the kernel has taken them off dir's list. NULL: nothing
	 * to do. */
	void (*procs_moved)(int dir_fd);
};

/* Use ops from the next cg_find_hierarchy() on; NULL: cgroupfs
 * again. Sources opened before keep the ops they found their hierarchy
 * with. Not thread-safe: for unit tests, between tests. */
void cgroup_fs_set_ops_for_tests(const struct cgroup_fs_ops *ops);

#endif
