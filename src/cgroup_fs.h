/* SPDX-License-Identifier: MIT */
/*
 * The cgroup source's file system side: where the memory hierarchy is, the
 * cgroup of a process in it, and the cgroup peakbpf makes for its command
 * (made, emptied, removed). Each returns 0 or a negative errno unless said
 * otherwise; paths are absolute.
 */
#ifndef PEAKBPF_CGROUP_FS_H
#define PEAKBPF_CGROUP_FS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum cg_version { CG_V1 = 1, CG_V2 = 2 };

struct cgroup_fs_ops;

/* The memory hierarchy a cgroup source measures in. */
struct cg_hierarchy {
	const struct cgroup_fs_ops *ops; /* cgroupfs; a fixture in unit tests */
	enum cg_version version;
	char root[PATH_MAX];            /* the hierarchy's root directory */
	char mount_root[PATH_MAX];      /* the mount's root (mountinfo field 4) */
	char self_rel[PATH_MAX];        /* opts.self_cgroup, "" if none */
};

/*
 * Fill h (but self_rel) from the directory root_opt: a cgroup2 mount with
 * the memory controller at it or directly below it, else a cgroup v1 one
 * with the memory option. Anything else is an error ("... is not a cgroup
 * filesystem ..."), and so is a root_opt that is a symlink (-ELOOP); why
 * says which.
 */
int cg_find_hierarchy(struct cg_hierarchy *h, const char *root_opt, char *why, size_t whylen);

/* The path of pid's cgroup (0: peakbpf's) relative to the hierarchy's root. */
int cg_proc_cgroup_rel(const struct cg_hierarchy *h, pid_t pid, char *rel, size_t len);

/* cgroup v2: 0 when the cgroup dir's cgroup.controllers lists memory,
 * -EOPNOTSUPP when it does not, or the error reading it. */
int cg_v2_has_memory(const char *dir);

/* The file that keeps a cgroup's peak, and its current usage. */
const char *cg_peak_file(const struct cg_hierarchy *h);
const char *cg_usage_file(const struct cg_hierarchy *h);

/*
 * Command mode: make dir[len] = home/peakbpf-<pid>, a cgroup whose peak can
 * be read, below home (peakbpf's own cgroup). Stale ones left by a killed
 * peakbpf are removed first. On failure why says why and no cgroup is left.
 */
int cg_make_own(const struct cg_hierarchy *h, const char *home, char *dir, size_t len,
		char *why, size_t whylen);

/* Move dir's processes back to home and remove dir; warn on stderr when
 * it stays. */
void cg_remove_own(const struct cg_hierarchy *h, const char *home, const char *dir);

/* dir + "/" + name into out[len]; name "/" or "" is dir itself. */
int cg_path_join(char *out, size_t len, const char *dir, const char *name);

/* Write text with one write() (cgroup files act on each write), never
 * through a symlink (-ELOOP); flags are added to O_WRONLY: O_APPEND,
 * O_TRUNC. */
int cg_write_text(const char *path, const char *text, int flags);

/* A counter file ("123\n"), by path or through an open fd (from its start). */
int cg_read_u64(const char *path, uint64_t *v);
int cg_read_u64_fd(int fd, uint64_t *v);

/* Whether path is a directory, a regular file; a symlink is neither. */
bool cg_is_dir(const char *path);
bool cg_is_file(const char *path);

#endif
