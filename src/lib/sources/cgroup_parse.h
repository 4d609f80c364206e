/* SPDX-License-Identifier: MIT */
/*
 * The parsers of the cgroup source (pure: no I/O): /proc/PID/mountinfo,
 * /proc/PID/cgroup and single-number cgroup files.
 */
#ifndef PEAKBPF_CGROUP_PARSE_H
#define PEAKBPF_CGROUP_PARSE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The fields of one /proc/PID/mountinfo line that the cgroup source needs;
 * octal escapes (\040 for a space) in root and mount_point are decoded. */
struct mountinfo_entry {
	char root[PATH_MAX];            /* the mount's root inside its file system */
	char mount_point[PATH_MAX];
	char fstype[64];
	char super_options[1024];       /* cgroup v1: the controllers, "rw,memory" */
};

/* Returns 0, -EINVAL (malformed) or -ENAMETOOLONG (a field does not fit). */
int parse_mountinfo_line(const char *line, struct mountinfo_entry *e);

/* One line of /proc/PID/cgroup: "4:memory:/a/b" (v1), "0::/a/b" (v2). */
struct proc_cgroup_line {
	unsigned long hierarchy;
	char controllers[256];          /* "cpu,cpuacct"; empty on the v2 line */
	char path[PATH_MAX];
};

/* Returns 0, -EINVAL (malformed) or -ENAMETOOLONG. */
int parse_proc_cgroup_line(const char *line, struct proc_cgroup_line *out);

/*
 * From the whole text of /proc/PID/cgroup, the path in the memory hierarchy:
 * v2, the "0::" line; v1, the line whose controllers include "memory".
 * Returns 0, -ENOENT (no such line), -EINVAL or -ENAMETOOLONG.
 */
int cgroup_path_from_proc(const char *text, bool v2, char *path, size_t len);

/*
 * A /proc/PID/cgroup path made relative to a mount whose root (mountinfo's
 * 4th field) is mount_root: "/" + the part below mount_root, "/" for
 * mount_root itself. -ENOENT when the path is not below mount_root (the
 * process is in a cgroup this mount does not show), -ENAMETOOLONG.
 */
int cgroup_rel_path(const char *mount_root, const char *path, char *out, size_t len);

/* Whether word is one of the items of list, items separated by any of seps
 * ("rw,memory" with ","; "cpu memory\n" with " \n"). */
bool list_has(const char *list, const char *seps, const char *word);

/* A single-number cgroup file ("123\n"). 0, -EINVAL or -ERANGE. */
int parse_counter(const char *text, uint64_t *value);

/*
 * Who made a peakbpf cgroup, carried in its name
 * "peakbpf-<pid>-<start time>-<pid namespace inode>": the creator's pid,
 * its start time (/proc/PID/stat field 22, clock ticks since boot) and the
 * inode of its PID namespace (/proc/PID/ns/pid), so that the cgroup of a
 * creator that is gone can be told from a live one's, whatever namespace
 * it was made in.
 */
struct cg_marker {
	int pid;
	unsigned long long start;
	unsigned long long pidns;
};

#define CG_MARKER_PREFIX "peakbpf-"
#define CG_MARKER_MAX 80        /* the longest name, with its NUL */

/* The name of m into name[len]: 0 or -ENAMETOOLONG. */
int cg_marker_format(const struct cg_marker *m, char *name, size_t len);

/* A marker name back into m: 0, or -EINVAL for any other name (an old
 * "peakbpf-<pid>", leading zeros, signs, trailing bytes, pid 0). */
int cg_marker_parse(const char *name, struct cg_marker *m);

/* The start time (field 22) in the text of /proc/PID/stat, whose command
 * name (field 2) may hold spaces and parentheses. 0, -EINVAL or -ERANGE. */
int parse_stat_start_time(const char *text, unsigned long long *start);

#endif
