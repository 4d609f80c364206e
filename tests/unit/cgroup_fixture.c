// SPDX-License-Identifier: MIT
/*
 * A fixture "kernel" for the cgroup source's unit tests: a plain directory
 * tree laid out like a memory hierarchy, and the cgroup_fs_ops that play
 * the kernel's part in it. peakbpf itself never links this file.
 *
 * The hierarchy is v2 when the root has cgroup.controllers, v1 when it (or
 * its memory/ subdirectory) has memory.max_usage_in_bytes. No kernel fills
 * a fixture, so these ops do: a new cgroup gets its interface files (the
 * parent's names, "0" in each counter), cgroup.procs is emptied after its
 * processes were moved out, and the files go before rmdir. Every process
 * is taken to be in opts.self_cgroup, "/" by default.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cgroup_fixture.h"
#include "fileutil.h"

/* A child's cgroup.controllers: what the parent delegates in its
 * cgroup.subtree_control, "+memory" entries become "memory". */
static void delegated_controllers(const char *subtree_control, char *out, size_t len)
{
	const char *p = subtree_control ? subtree_control : "";

	out[0] = '\0';
	while (*p) {
		size_t n;

		p += strspn(p, " \n");
		n = strcspn(p, " \n");
		if (n && *p != '-' && strlen(out) + n + 2 < len) {
			if (out[0])
				strcat(out, " ");
			strncat(out, p + (*p == '+'), n - (*p == '+'));
		}
		p += n;
	}
	strcat(out, "\n");
}

/* Create in a new fixture cgroup the files a kernel would: the parent's
 * names, processes none, controllers as the parent delegates them, each
 * counter "0", each with the parent's file mode. All through the fds, as
 * the kernel would act on the directories themselves. */
static int fixture_populate(int parent_fd, int dir_fd)
{
	char controllers[256], *delegated = NULL;
	int fd = openat(parent_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	read_text_at(parent_fd, "cgroup.subtree_control", &delegated, NULL);
	delegated_controllers(delegated, controllers, sizeof(controllers));
	while ((de = readdir(d))) {
		struct stat st;
		const char *text = "0\n";

		if (fstatat(parent_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (!strcmp(de->d_name, "cgroup.procs") || !strcmp(de->d_name, "tasks") ||
		    !strcmp(de->d_name, "cgroup.subtree_control"))
			text = "";
		else if (!strcmp(de->d_name, "cgroup.controllers"))
			text = controllers;
		fd = openat(dir_fd, de->d_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
		if (fd < 0) {
			ret = -errno;
			goto cleanup;
		}
		if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
			ret = -EIO;
		close(fd);
		if (ret)
			goto cleanup;
	}
cleanup:
	free(delegated);
	closedir(d);
	return ret;
}

/* rmdir, after removing the regular files a fixture cgroup holds. */
static int fixture_remove_cgroup(int parent_fd, const char *name)
{
	int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (cg_is_file_at(fd, de->d_name))
			unlinkat(fd, de->d_name, 0);
	}
	closedir(d);
	return unlinkat(parent_fd, name, AT_REMOVEDIR) ? -errno : 0;
}

static int fixture_make_cgroup(int parent_fd, const char *name)
{
	int dir_fd, ret = mkdirat(parent_fd, name, 0755) ? -errno : 0;

	if (ret)
		return ret;
	dir_fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	ret = dir_fd < 0 ? -errno : fixture_populate(parent_fd, dir_fd);
	if (dir_fd >= 0)
		close(dir_fd);
	if (ret)
		fixture_remove_cgroup(parent_fd, name);
	return ret;
}

/* h->root_fd on h->root, below root_fd (root itself or memory/). */
static int fixture_open_root(struct cg_hierarchy *h, const char *root, int root_fd)
{
	const char *name = strcmp(h->root, root) ? "memory" : ".";

	h->root_fd = openat(root_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return h->root_fd < 0 ? -errno : 0;
}

static int fixture_find_hierarchy(struct cg_hierarchy *h, const char *root, int root_fd,
				  char *why, size_t whylen)
{
	char path[PATH_MAX];
	int ret;

	strcpy(h->mount_root, "/");
	if (cg_path_join(path, sizeof(path), root, "cgroup.controllers"))
		return -ENAMETOOLONG;
	if (cg_is_file(path)) {
		h->version = CG_V2;
		snprintf(h->root, sizeof(h->root), "%s", root);
		ret = cg_v2_has_memory(root);
		if (ret == -EOPNOTSUPP)
			set_why(why, whylen, "no memory controller in the cgroup2 hierarchy at %s", root);
		else if (ret)
			set_why(why, whylen, "cannot read %s: %s", path, strerror(-ret));
		return ret ? ret : fixture_open_root(h, root, root_fd);
	}
	h->version = CG_V1;
	if (cg_path_join(path, sizeof(path), root, "memory.max_usage_in_bytes"))
		return -ENAMETOOLONG;
	if (cg_is_file(path)) {
		snprintf(h->root, sizeof(h->root), "%s", root);
		return fixture_open_root(h, root, root_fd);
	}
	if (cg_path_join(h->root, sizeof(h->root), root, "memory") ||
	    cg_path_join(path, sizeof(path), h->root, "memory.max_usage_in_bytes"))
		return -ENAMETOOLONG;
	if (cg_is_file(path))
		return fixture_open_root(h, root, root_fd);
	set_why(why, whylen, "no memory controller mounted under %s", root);
	return -EOPNOTSUPP;
}

static int fixture_proc_cgroup(const struct cg_hierarchy *h, pid_t pid, char *rel, size_t len)
{
	const char *cg = h->self_rel[0] ? h->self_rel : "/";

	(void)pid;      /* every process is in the same one */
	if (strlen(cg) >= len)
		return -ENAMETOOLONG;
	strcpy(rel, cg);
	return 0;
}

/* The kernel takes moved processes off the list; a plain file keeps them. */
static void fixture_procs_moved(int dir_fd)
{
	cg_write_text_at(dir_fd, "cgroup.procs", "", O_TRUNC);
}

const struct cgroup_fs_ops cgroup_fixture_ops = {
	.find_hierarchy = fixture_find_hierarchy,
	.proc_cgroup = fixture_proc_cgroup,
	.make_cgroup = fixture_make_cgroup,
	.remove_cgroup = fixture_remove_cgroup,
	.procs_moved = fixture_procs_moved,
};
