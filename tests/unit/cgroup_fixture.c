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
 * counter "0", each with the parent's file mode. */
static int fixture_populate(const char *parent, const char *dir)
{
	char src[PATH_MAX], dst[PATH_MAX], controllers[256], *delegated = NULL;
	DIR *d = opendir(parent);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return -errno;
	if (cg_path_join(src, sizeof(src), parent, "cgroup.subtree_control") == 0)
		read_text_file(src, &delegated, NULL);
	delegated_controllers(delegated, controllers, sizeof(controllers));
	while ((de = readdir(d))) {
		struct stat st;
		const char *text = "0\n";
		int fd;

		if (cg_path_join(src, sizeof(src), parent, de->d_name) ||
		    cg_path_join(dst, sizeof(dst), dir, de->d_name)) {
			ret = -ENAMETOOLONG;
			goto cleanup;
		}
		if (stat(src, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!strcmp(de->d_name, "cgroup.procs") || !strcmp(de->d_name, "tasks") ||
		    !strcmp(de->d_name, "cgroup.subtree_control"))
			text = "";
		else if (!strcmp(de->d_name, "cgroup.controllers"))
			text = controllers;
		fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
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
static int fixture_remove_cgroup(const char *dir)
{
	char path[PATH_MAX];
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (cg_path_join(path, sizeof(path), dir, de->d_name) == 0 && cg_is_file(path))
			unlink(path);
	}
	closedir(d);
	return rmdir(dir) ? -errno : 0;
}

static int fixture_make_cgroup(const char *parent, const char *dir)
{
	int ret = mkdir(dir, 0755) ? -errno : 0;

	if (ret)
		return ret;
	ret = fixture_populate(parent, dir);
	if (ret)
		fixture_remove_cgroup(dir);
	return ret;
}

static int fixture_find_hierarchy(struct cg_hierarchy *h, const char *root, char *why, size_t whylen)
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
		return ret;
	}
	h->version = CG_V1;
	if (cg_path_join(path, sizeof(path), root, "memory.max_usage_in_bytes"))
		return -ENAMETOOLONG;
	if (cg_is_file(path)) {
		snprintf(h->root, sizeof(h->root), "%s", root);
		return 0;
	}
	if (cg_path_join(h->root, sizeof(h->root), root, "memory") ||
	    cg_path_join(path, sizeof(path), h->root, "memory.max_usage_in_bytes"))
		return -ENAMETOOLONG;
	if (cg_is_file(path))
		return 0;
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
static void fixture_procs_moved(const char *dir)
{
	char path[PATH_MAX];

	if (cg_path_join(path, sizeof(path), dir, "cgroup.procs") == 0)
		cg_write_text(path, "", O_TRUNC);
}

const struct cgroup_fs_ops cgroup_fixture_ops = {
	.find_hierarchy = fixture_find_hierarchy,
	.proc_cgroup = fixture_proc_cgroup,
	.make_cgroup = fixture_make_cgroup,
	.remove_cgroup = fixture_remove_cgroup,
	.procs_moved = fixture_procs_moved,
};
