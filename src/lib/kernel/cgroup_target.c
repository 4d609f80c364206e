// SPDX-License-Identifier: MIT
/* A tree by cgroup (cgroup_target.h): resolving the directory, setting the
 * target in the tracker's mapped state, and the walk at the start. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "fileutil.h"
#include "mapped_internal.h"
#include "tracker_load.h"
#include "tracker_tree.h"
#include "tracker.skel.h"
#include "cgroup_target_api.h"
#include "task_iter.h"

/* Components between dir_fd and the root of its mount: ".." until the
 * parent is another file system (the mount's parent) or the same inode
 * (a file system's root). */
static int level_below_mount(int dir_fd, const struct stat *st, __u32 *level)
{
	struct stat cur = *st, up;
	int fd = dup(dir_fd), err = 0;
	__u32 n = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		int pfd = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (pfd < 0) {
			err = -errno;
			break;
		}
		if (fstat(pfd, &up)) {
			err = -errno;
			close(pfd);
			break;
		}
		close(fd);
		fd = pfd;
		if (up.st_dev != cur.st_dev || up.st_ino == cur.st_ino)
			break;
		if (++n > CG_MAX_LEVEL) {
			err = -ELOOP;
			break;
		}
		cur = up;
	}
	close(fd);
	*level = n;
	return err;
}

int cgroup_target_resolve(int dir_fd, struct cg_target *out)
{
	struct statfs sfs;
	struct stat st;
	int err;

	if (fstat(dir_fd, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (fstatfs(dir_fd, &sfs))
		return -errno;
	if (sfs.f_type == CGROUP2_SUPER_MAGIC)
		out->hier = CG_HIER_V2;
	else if (sfs.f_type == CGROUP_SUPER_MAGIC)
		out->hier = CG_HIER_V1_MEMORY;
	else
		return -EMEDIUMTYPE;
	/* v1: only the memory controller's hierarchy has this file. */
	if (out->hier == CG_HIER_V1_MEMORY && faccessat(dir_fd, "memory.usage_in_bytes", F_OK, 0))
		return errno == ENOENT ? -ENOMEDIUM : -errno;
	err = level_below_mount(dir_fd, &st, &out->level);
	if (err)
		return err;
	out->id = (__u64)st.st_ino;     /* kernfs: the inode number is the node's id */
	out->except_id = 0;
	return 0;
}

/* Every PID in dir_fd's cgroup.procs and its descendants', appended to
 * *pids (grown as needed). Depth-first, at most CG_MAX_LEVEL deep. */
static int collect_pids(int dir_fd, unsigned depth, pid_t **pids, size_t *n, size_t *cap)
{
	char *text = NULL, *p, *end;
	struct dirent *de;
	int err = read_text_at(dir_fd, "cgroup.procs", &text, NULL), fd;
	DIR *d;

	if (err)
		return err;
	for (p = text; *p; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (v <= 0 || v > INT_MAX)
			continue;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 256;
			pid_t *g = realloc(*pids, c * sizeof(**pids));

			if (!g) {
				free(text);
				return -ENOMEM;
			}
			*pids = g;
			*cap = c;
		}
		(*pids)[(*n)++] = (pid_t)v;
	}
	free(text);
	if (depth >= CG_MAX_LEVEL)
		return 0;
	fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (!err && (de = readdir(d))) {
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = openat(dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;       /* removed meanwhile */
		err = collect_pids(sub, depth + 1, pids, n, cap);
		if (err == -ENOENT || err == -ENODEV)
			err = 0;        /* removed meanwhile */
		close(sub);
	}
	closedir(d);
	return err;
}

/* Enter pids (MAX_ROOTS at a time, each batch one walk of the tasks);
 * *found: how many were found alive. */
static int enter_pids(struct tracker_tree *t, const pid_t *pids, size_t n, __u64 *found)
{
	__u32 tgids[MAX_ROOTS];
	int err = 0;

	for (size_t i = 0; i < n && !err; i += MAX_ROOTS) {
		size_t k = n - i < MAX_ROOTS ? n - i : MAX_ROOTS;

		err = tracker_tree__add_roots(t, pids + i, k, true, tgids);
		for (size_t j = 0; j < k && !err; j++)
			*found += tgids[j] != 0;
	}
	return err;
}

int tracker_set_cgroup(struct tracker_tree *t, const struct cg_target *target, int dir_fd)
{
	struct tracker_bpf *s = tracker_load__skel(tracker_tree__load(t));
	unsigned tree = tracker_tree__index(t) & (MAX_TREES - 1);
	struct cg_target *slot = &s->bss->cg_targets[tree];
	pid_t *pids = NULL;
	size_t n = 0, cap = 0;
	__u64 found = 0;
	int err;

	if (!target->id || target->level > CG_MAX_LEVEL)
		return -EINVAL;
	if (!s->links.check_cgroup_members__cgroup_targets)
		return -EOPNOTSUPP;     /* this kernel refused the programs (tracker_load.c) */
	if (LOAD(slot->id))
		return -EBUSY;
	memset(&s->bss->cg_stats[tree], 0, sizeof(struct cg_stats));
	STORE(slot->level, target->level);
	STORE(slot->hier, target->hier);
	STORE(slot->except_id, target->except_id);
	__atomic_fetch_add(&s->bss->cg_targets_n, 1, __ATOMIC_SEQ_CST);
	/* From here forks and moves decide by the target; the processes in
	 * it now are read after, so none falls between. */
	STORE(slot->id, target->id);
	err = collect_pids(dir_fd, 0, &pids, &n, &cap);
	if (!err)
		err = enter_pids(t, pids, n, &found);
	free(pids);
	STORE(s->bss->cg_stats[tree].walk_in, found);
	/* A process read inside that moved out before its entry was made. */
	STORE(s->bss->cg_walk_tree, tree);
	if (!err)
		err = task_iter_run(s->links.check_cgroup_members__cgroup_targets);
	if (err)
		tracker_clear_cgroup(t);
	return err;
}

int tracker_open_sink(struct tracker_tree *t, struct tracker_tree **out)
{
	if (tracker_tree__index(t) == MAX_TREES - 1)
		return -EBUSY;
	return tracker_tree__add(tracker_tree__load(t), MAX_TREES - 1, 0, out);
}

/* tracker_tree__clear does the same (a call from there would make a
 * circle of calls between the folder's files). */
void tracker_clear_cgroup(struct tracker_tree *t)
{
	struct tracker_bpf *s = tracker_load__skel(tracker_tree__load(t));
	struct cg_target *slot = &s->bss->cg_targets[tracker_tree__index(t) & (MAX_TREES - 1)];

	if (__atomic_exchange_n(&slot->id, 0, __ATOMIC_SEQ_CST))
		__atomic_fetch_sub(&s->bss->cg_targets_n, 1, __ATOMIC_SEQ_CST);
}

bool tracker_cgroup_stats(struct tracker_tree *t, struct cg_stats *out)
{
	struct tracker_bpf *s = tracker_load__skel(tracker_tree__load(t));
	unsigned tree = tracker_tree__index(t) & (MAX_TREES - 1);
	struct cg_stats *st = &s->bss->cg_stats[tree];

	if (!LOAD(s->bss->cg_targets[tree].id))
		return false;
	out->forked_in = LOAD(st->forked_in);
	out->moved_in = LOAD(st->moved_in);
	out->moved_out = LOAD(st->moved_out);
	out->walk_in = LOAD(st->walk_in);
	return true;
}
