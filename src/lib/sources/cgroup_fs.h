/* SPDX-License-Identifier: MIT */
/*
 * The cgroup source's file system side: where the memory hierarchy is, the
 * cgroup of a process in it, and the cgroup peakbpf makes for its command
 * (made, emptied, removed). Each returns 0 or a negative errno unless said
 * otherwise; paths are absolute.
 *
 * Paths are for messages and for finding things once. Everything peakbpf
 * writes, reads or removes below the cgroup root goes through directory fds
 * opened from the moment the root is validated (openat, mkdirat, unlinkat,
 * no symlink followed), so renaming a directory or planting a symlink
 * afterwards cannot point a write or a removal elsewhere.
 */
#ifndef PEAKBPF_CGROUP_FS_H
#define PEAKBPF_CGROUP_FS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "cgroup_parse.h"
#include "sources.h"

/* cg_find_hierarchy refused the cgroup root as unsafe to use (a symlink;
 * as root, not root's, or writable by others): returned negated. Not an
 * errno, so that callers can tell it from every failure to use a safe one. */
#define CG_ROOT_UNSAFE CGROUP_ROOT_UNSAFE

enum cg_version { CG_V1 = 1, CG_V2 = 2 };

struct cgroup_fs_ops;

/* The memory hierarchy a cgroup source measures in. */
struct cg_hierarchy {
	const struct cgroup_fs_ops *ops; /* cgroupfs; a fixture in unit tests */
	enum cg_version version;
	char root[PATH_MAX];            /* the hierarchy's root directory */
	char mount_root[PATH_MAX];      /* the mount's root (mountinfo field 4) */
	char self_rel[PATH_MAX];        /* opts.self_cgroup, "" if none */
	int root_fd;                    /* root, open since validated; -1: none */
};

/*
 * Fill h (but self_rel) from the directory root_opt: a cgroup2 mount with
 * the memory controller at it or directly below it, else a cgroup v1 one
 * with the memory option. Anything else is an error ("... is not a cgroup
 * filesystem ..."); why says which. -CG_ROOT_UNSAFE: root_opt is a symlink,
 * or cg_root_check refuses it or the hierarchy's root. On success h->root_fd
 * is open: cg_hierarchy_close closes it.
 */
int cg_find_hierarchy(struct cg_hierarchy *h, const char *root_opt, char *why, size_t whylen);
void cg_hierarchy_close(struct cg_hierarchy *h);

/*
 * Whether a cgroup root (st: fstat of its open fd) is safe for euid to use:
 * for root, a directory root owns, writable by nobody else unless it is the
 * real cgroupfs (on_cgroupfs: fstatfs of the same fd), where delegation may
 * open it to a group. Any other euid: 0, the kernel's permissions decide.
 * 0 or -CG_ROOT_UNSAFE with why naming path and the fix.
 */
int cg_root_check(const struct stat *st, bool on_cgroupfs, uid_t euid, const char *path,
		  char *why, size_t whylen);

/* The directory rel ("/a/b", "/" for the root) below h->root_fd, opened
 * one component at a time with O_NOFOLLOW | O_DIRECTORY: an fd or -errno. */
int cg_open_dir(const struct cg_hierarchy *h, const char *rel);

/* The path of pid's cgroup (0: peakbpf's) relative to the hierarchy's root. */
int cg_proc_cgroup_rel(const struct cg_hierarchy *h, pid_t pid, char *rel, size_t len);

/* cgroup v2: 0 when the cgroup dir's cgroup.controllers lists memory,
 * -EOPNOTSUPP when it does not, or the error reading it. */
int cg_v2_has_memory(const char *dir);
int cg_v2_has_memory_at(int dir_fd);

/* The file that keeps a cgroup's peak, and its current usage. */
const char *cg_peak_file(const struct cg_hierarchy *h);
const char *cg_usage_file(const struct cg_hierarchy *h);

/* The cgroup made for the command, and peakbpf's own one it is in. */
struct cg_own {
	int home_fd;                    /* peakbpf's own cgroup; -1: none */
	int dir_fd;                     /* the command's; -1: none */
	char name[CG_MARKER_MAX];       /* the command's, in home */
};

/*
 * Command mode: make a cgroup whose peak can be read below home (peakbpf's
 * own cgroup, own->home_fd, which stays the caller's), named with this
 * process's marker (cgroup_parse.h); dir[len] is its path. Stale ones a
 * killed peakbpf left are removed first (cg_remove_stale). On failure why
 * says why and no cgroup is left.
 */
int cg_make_own(const struct cg_hierarchy *h, const char *home, struct cg_own *own, char *dir,
		size_t len, char *why, size_t whylen);

/* Move dir's processes back home and remove dir; warn on stderr when it
 * stays. Closes own->dir_fd (home_fd stays the caller's). */
void cg_remove_own(const struct cg_hierarchy *h, struct cg_own *own, const char *dir);

/* This process's marker: 0 or the error reading /proc/self. */
int cg_marker_self(struct cg_marker *m);

/*
 * Whether the creator of m is provably gone: its PID namespace is ours and
 * the pid is free or has another start time there; or, seen from the
 * initial PID namespace, no process is left in its namespace. Anything not
 * provable (another namespace seen from a non-initial one, a /proc of
 * another namespace, an unreadable /proc) counts as alive.
 */
bool cg_marker_creator_gone(const struct cg_marker *m);

/* Remove the empty cgroups below home_fd whose marker names a creator that
 * is gone; a cgroup with processes, or without a marker, stays. */
void cg_remove_stale(const struct cg_hierarchy *h, int home_fd);

/* dir + "/" + name into out[len]; name "/" or "" is dir itself. */
int cg_path_join(char *out, size_t len, const char *dir, const char *name);

/*
 * File helpers, on held directory fds below the root (name is one
 * component); cg_is_file, by path, is the unit tests' fixture's.
 */

/* Write text with one write() (cgroup files act on each write), never
 * through a symlink (-ELOOP); flags are added to O_WRONLY: O_APPEND,
 * O_TRUNC. */
int cg_write_text_at(int dir_fd, const char *name, const char *text, int flags);

/* A counter file ("123\n") below a directory fd, or through an open fd
 * (from its start). */
int cg_read_u64_at(int dir_fd, const char *name, uint64_t *v);
int cg_read_u64_fd(int fd, uint64_t *v);

/* Whether path is a regular file; a symlink is not. */
bool cg_is_file(const char *path);
bool cg_is_file_at(int dir_fd, const char *name);
/* Whether the cgroup open at dir_fd has processes of its own. */
bool cg_has_procs_at(int dir_fd);

#endif
