// SPDX-License-Identifier: MIT
/*
 * The cgroup source's file system side (see cgroup_fs.h): finding the
 * memory hierarchy and a process's cgroup in it (the cgroup peakbpf makes
 * for its command: cgroup_own.c).
 *
 * The hierarchy under the cgroup root is a mount in /proc/self/mountinfo at
 * the root or directly below it: cgroup2 whose cgroup.controllers lists
 * memory (preferred), or cgroup (v1) with the memory option. peakbpf's own
 * cgroup comes from /proc/self/cgroup, made relative to the mount's root.
 * A root that is no cgroup file system is an error, not something to make
 * do with: peakbpf writes into the files below the root and removes
 * directories there, which is only safe where the kernel owns them.
 *
 * What the kernel does beyond file I/O goes through h->ops (see
 * cgroup_fs_ops.h): cgroupfs's below, a fixture's in unit tests.
 *
 * The root is opened once, component by component without following a
 * symlink, checked on that fd (cg_root_check, the file system type), and
 * every later operation is relative to it or to directories opened from it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include "cgroup_fs.h"
#include "cgroup_fs_ops.h"
#include "cgroup_parse.h"
#include "fileutil.h"
#include "sources.h"


/* ---- file helpers -------------------------------------------------------- */

/* Write text with one write(): cgroup files act on each write. Never
 * through a symlink: cgroupfs has none, and one planted in a cgroup
 * directory must not get peakbpf to write to the file it names. */
static int write_text(int dir_fd, const char *name, const char *text, int flags)
{
	size_t len = strlen(text);
	int fd, ret = 0;
	ssize_t n;

	fd = openat(dir_fd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | flags);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		ret = -errno;
	else if ((size_t)n != len)
		ret = -EIO;
	close(fd);
	return ret;
}

int cg_write_text_at(int dir_fd, const char *name, const char *text, int flags)
{
	return write_text(dir_fd, name, text, flags);
}

int cg_read_u64_at(int dir_fd, const char *name, uint64_t *v)
{
	char *text = NULL;
	int err = read_text_at(dir_fd, name, &text, NULL);

	if (!err)
		err = parse_counter(text, v);
	free(text);
	return err;
}

/* Read a counter through an open fd, from the start (seq files allow it). */
int cg_read_u64_fd(int fd, uint64_t *v)
{
	char buf[64];
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return parse_counter(buf, v);
}

int cg_path_join(char *out, size_t len, const char *dir, const char *name)
{
	int n;

	/* "/" + "/a" must not become "//a". */
	if (!strcmp(name, "/") || !name[0])
		n = snprintf(out, len, "%s", dir);
	else if (name[0] == '/')
		n = snprintf(out, len, "%s%s", dir, name);
	else
		n = snprintf(out, len, "%s/%s", dir, name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

bool cg_is_file(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool cg_is_file_at(int dir_fd, const char *name)
{
	struct stat st;

	return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* Whether a cgroup has processes; an unreadable cgroup.procs counts as
 * having them, so that nothing is removed on a guess. */
bool cg_has_procs_at(int dir_fd)
{
	char *text = NULL;
	pid_t pid;
	size_t n = 0;
	int err;

	if (read_text_at(dir_fd, "cgroup.procs", &text, NULL))
		return true;
	err = parse_pid_words(text, &pid, 1, &n);
	free(text);
	return err != 0 || n > 0;
}

int cg_v2_has_memory(const char *dir)
{
	char path[PATH_MAX], *text = NULL;
	int ret = cg_path_join(path, sizeof(path), dir, "cgroup.controllers");

	if (!ret)
		ret = read_text_file(path, &text, NULL);
	if (!ret && !list_has(text, " \n", "memory"))
		ret = -EOPNOTSUPP;
	free(text);
	return ret;
}

int cg_v2_has_memory_at(int dir_fd)
{
	char *text = NULL;
	int ret = read_text_at(dir_fd, "cgroup.controllers", &text, NULL);

	if (!ret && !list_has(text, " \n", "memory"))
		ret = -EOPNOTSUPP;
	free(text);
	return ret;
}

const char *cg_peak_file(const struct cg_hierarchy *h)
{
	return h->version == CG_V2 ? "memory.peak" : "memory.max_usage_in_bytes";
}

const char *cg_usage_file(const struct cg_hierarchy *h)
{
	return h->version == CG_V2 ? "memory.current" : "memory.usage_in_bytes";
}

/* ---- finding the hierarchy ----------------------------------------------- */

static bool parent_is(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	const char *slash = strrchr(path, '/');

	if (!strcmp(dir, "/"))
		return slash == path && path[1];
	return !strncmp(path, dir, n) && path[n] == '/' && slash == path + n && path[n + 1];
}

/* A cgroup mount at root or just below it, with memory. 0; -ENOENT: no
 * cgroup mount there at all; -EOPNOTSUPP: cgroup mounts, none with memory;
 * or an error reading mountinfo. */
static int find_mount(struct cg_hierarchy *h, const char *root)
{
	struct mountinfo_entry *e = malloc(sizeof(*e));
	char *text = NULL, *line, *save = NULL;
	bool found_v1 = false;
	int ret;

	if (!e)
		return -ENOMEM;
	ret = read_text_file("/proc/self/mountinfo", &text, NULL);
	if (ret)
		goto cleanup;
	ret = -ENOENT;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (parse_mountinfo_line(line, e))
			continue;
		if (strcmp(e->mount_point, root) && !parent_is(e->mount_point, root))
			continue;
		if (ret == -ENOENT && (!strcmp(e->fstype, "cgroup2") || !strcmp(e->fstype, "cgroup")))
			ret = -EOPNOTSUPP;
		if (!strcmp(e->fstype, "cgroup2")) {
			if (cg_v2_has_memory(e->mount_point))
				continue;
			h->version = CG_V2;     /* v2 wins over a v1 memory mount */
		} else if (!strcmp(e->fstype, "cgroup") && !found_v1 &&
			   list_has(e->super_options, ",", "memory")) {
			h->version = CG_V1;
			found_v1 = true;
		} else {
			continue;
		}
		snprintf(h->root, sizeof(h->root), "%s", e->mount_point);
		snprintf(h->mount_root, sizeof(h->mount_root), "%s", e->root);
		ret = 0;
		if (h->version == CG_V2)
			break;
	}
cleanup:
	free(text);
	free(e);
	return ret;
}

static bool on_cgroupfs(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 &&
	       (sf.f_type == CGROUP_SUPER_MAGIC || sf.f_type == CGROUP2_SUPER_MAGIC);
}

/* h->root below the directory root (open as root_fd), which is h->root
 * itself or its parent. */
static int open_below(struct cg_hierarchy *h, const char *root, int root_fd)
{
	const char *name = ".";
	int fd;

	if (strcmp(h->root, root)) {
		name = strrchr(h->root, '/') + 1;
		if (!*name)
			return -EINVAL;
	}
	fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	h->root_fd = fd;
	return 0;
}

static int cgroupfs_find_hierarchy(struct cg_hierarchy *h, const char *root, int root_fd,
				   char *why, size_t whylen)
{
	int ret = find_mount(h, root);

	if (ret == -EOPNOTSUPP) {
		set_why(why, whylen, "no memory controller mounted under %s", root);
	} else if (ret == -ENOENT && on_cgroupfs(root_fd)) {
		set_why(why, whylen, "%s is inside a cgroup hierarchy, not where hierarchies are mounted", root);
		ret = -EINVAL;
	} else if (ret == -ENOENT) {
		set_why(why, whylen, "cgroup root %s is not a cgroup filesystem (cgroup2 or cgroup v1 memory): "
			"none is mounted at it or directly below it", root);
		ret = -EOPNOTSUPP;
	} else if (ret) {
		set_why(why, whylen, "cannot read /proc/self/mountinfo: %s", strerror(-ret));
	}
	if (ret)
		return ret;
	/* mountinfo named the mount; the fd must be it, whatever moved since. */
	ret = open_below(h, root, root_fd);
	if (!ret && !on_cgroupfs(h->root_fd))
		ret = -EXDEV;
	if (ret)
		set_why(why, whylen, "cgroup root %s changed while peakbpf opened it (%s): try again",
			h->root, strerror(-ret));
	return ret;
}

static int cgroupfs_proc_cgroup(const struct cg_hierarchy *h, pid_t pid, char *rel, size_t len)
{
	char path[64], *text = NULL, *cg = NULL;
	int ret;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/cgroup");
	cg = malloc(PATH_MAX);
	if (!cg)
		return -ENOMEM;
	ret = read_text_file(path, &text, NULL);
	if (!ret)
		ret = cgroup_path_from_proc(text, h->version == CG_V2, cg, PATH_MAX);
	if (!ret)
		ret = cgroup_rel_path(h->mount_root, cg, rel, len);
	free(text);
	free(cg);
	return ret;
}

static int cgroupfs_make_cgroup(int parent_fd, const char *name)
{
	/* The kernel fills the directory in itself. */
	return mkdirat(parent_fd, name, 0755) ? -errno : 0;
}

static int cgroupfs_remove_cgroup(int parent_fd, const char *name)
{
	return unlinkat(parent_fd, name, AT_REMOVEDIR) ? -errno : 0;
}

static const struct cgroup_fs_ops cgroupfs_ops = {
	.find_hierarchy = cgroupfs_find_hierarchy,
	.proc_cgroup = cgroupfs_proc_cgroup,
	.make_cgroup = cgroupfs_make_cgroup,
	.remove_cgroup = cgroupfs_remove_cgroup,
	.procs_moved = NULL,    /* the kernel moved them */
};

static const struct cgroup_fs_ops *fs_ops = &cgroupfs_ops;

void cgroup_fs_set_ops_for_tests(const struct cgroup_fs_ops *ops)
{
	fs_ops = ops ? ops : &cgroupfs_ops;
}

/* Whether path itself, not a directory on the way, is a symlink. */
static bool is_symlink(const char *path)
{
	size_t n = strlen(path);
	char buf[PATH_MAX];
	struct stat st;

	/* lstat follows "link/": look at "link". */
	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n >= sizeof(buf))
		return false;   /* realpath will say it is too long */
	memcpy(buf, path, n);
	buf[n] = '\0';
	return lstat(buf, &st) == 0 && S_ISLNK(st.st_mode);
}

/* The directory rel below at, one component at a time, following no
 * symlink (O_NOFOLLOW alone guards only the last one). */
static int open_dir_at(int at, const char *rel)
{
	char buf[PATH_MAX], *part, *save = NULL;
	int fd, next;

	if (strlen(rel) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, rel);
	fd = openat(at, *rel == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (part = strtok_r(buf, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		next = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			next = -errno;
		close(fd);
		if (next < 0)
			return next;
		fd = next;
	}
	return fd;
}

int cg_open_dir(const struct cg_hierarchy *h, const char *rel)
{
	if (h->root_fd < 0)
		return -EBADF;
	/* rel is below the root, never absolute from "/". */
	while (*rel == '/')
		rel++;
	return open_dir_at(h->root_fd, rel);
}

int cg_root_check(const struct stat *st, bool cgroupfs, uid_t euid, const char *path,
		  char *why, size_t whylen)
{
	if (euid != 0)
		return 0;
	if (st->st_uid != 0) {
		set_why(why, whylen, "cgroup root %s is owned by uid %u, not root: as root, peakbpf uses "
			"only a root-owned cgroup root (chown it to root, or name another)",
			path, (unsigned)st->st_uid);
		return -CG_ROOT_UNSAFE;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !cgroupfs) {
		set_why(why, whylen, "cgroup root %s is writable by %s: as root, peakbpf uses only a "
			"cgroup root no one else can change (chmod go-w it, or name another)",
			path, st->st_mode & S_IWOTH ? "others" : "its group");
		return -CG_ROOT_UNSAFE;
	}
	return 0;
}

/* The check of cg_root_check, on an open fd. */
static int check_fd(int fd, const char *path, char *why, size_t whylen)
{
	struct stat st;

	if (fstat(fd, &st)) {
		int ret = -errno;

		set_why(why, whylen, "cgroup root %s: %s", path, strerror(errno));
		return ret;
	}
	return cg_root_check(&st, on_cgroupfs(fd), geteuid(), path, why, whylen);
}

void cg_hierarchy_close(struct cg_hierarchy *h)
{
	if (h->root_fd >= 0)
		close(h->root_fd);
	h->root_fd = -1;
}

int cg_find_hierarchy(struct cg_hierarchy *h, const char *root_opt, char *why, size_t whylen)
{
	char *root;
	int fd = -1, ret;

	h->root_fd = -1;
	/* Whoever can change a symlink could point peakbpf's writes elsewhere. */
	if (is_symlink(root_opt)) {
		set_why(why, whylen, "cgroup root %s is a symbolic link: name the directory itself", root_opt);
		return -CG_ROOT_UNSAFE;
	}
	root = realpath(root_opt, NULL);
	if (!root) {
		ret = -errno;
		set_why(why, whylen, "cgroup root %s: %s", root_opt, strerror(errno));
		return ret;
	}
	/* From here on, the directory realpath saw or nothing: a symlink
	 * swapped in since fails with ELOOP. */
	fd = open_dir_at(AT_FDCWD, root);
	if (fd == -ELOOP) {
		set_why(why, whylen, "cgroup root %s became a symbolic link: name the directory itself", root);
		ret = -CG_ROOT_UNSAFE;
		goto cleanup;
	}
	if (fd < 0) {
		ret = fd;
		fd = -1;
		set_why(why, whylen, "cgroup root %s: %s", root, strerror(-ret));
		goto cleanup;
	}
	ret = check_fd(fd, root, why, whylen);
	if (ret)
		goto cleanup;
	h->ops = fs_ops;
	ret = h->ops->find_hierarchy(h, root, fd, why, whylen);
	if (!ret)
		ret = check_fd(h->root_fd, h->root, why, whylen);
cleanup:
	if (ret)
		cg_hierarchy_close(h);
	if (fd >= 0)
		close(fd);
	free(root);
	return ret;
}

int cg_proc_cgroup_rel(const struct cg_hierarchy *h, pid_t pid, char *rel, size_t len)
{
	/* self_cgroup stands for peakbpf's own cgroup. */
	if (pid == 0 && h->self_rel[0]) {
		if (strlen(h->self_rel) >= len)
			return -ENAMETOOLONG;
		strcpy(rel, h->self_rel);
		return 0;
	}
	return h->ops->proc_cgroup(h, pid, rel, len);
}

