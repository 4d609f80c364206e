// SPDX-License-Identifier: MIT
/*
 * The cgroup source's file system side (see cgroup_fs.h): finding the
 * memory hierarchy and a process's cgroup in it, and the cgroup peakbpf
 * makes for its command.
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
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include "cgroup_fs.h"
#include "cgroup_fs_ops.h"
#include "cgroup_parse.h"
#include "fileutil.h"
#include "sources.h"

#define CHILD_PREFIX "peakbpf-"
/* Passes over cgroup.procs when emptying a cgroup whose processes fork. */
#define EVACUATE_PASSES 50
/* rmdir can see EBUSY briefly while an exiting task leaves the cgroup. */
#define RMDIR_TRIES 100
#define RMDIR_WAIT_NS 10000000L

/* ---- file helpers -------------------------------------------------------- */

/* Write text with one write(): cgroup files act on each write. Never
 * through a symlink: cgroupfs has none, and one planted in a cgroup
 * directory must not get peakbpf to write to the file it names. */
int cg_write_text(const char *path, const char *text, int flags)
{
	size_t len = strlen(text);
	int fd, ret = 0;
	ssize_t n;

	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | flags);
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

int cg_read_u64(const char *path, uint64_t *v)
{
	char *text = NULL;
	int err = read_text_file(path, &text, NULL);

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

/* lstat: a symlink is neither (cgroupfs has none). */
bool cg_is_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool cg_is_file(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whether a cgroup has processes; an unreadable cgroup.procs counts as
 * having them, so that nothing is removed on a guess. */
static bool has_procs(const char *cg)
{
	char path[PATH_MAX], *text = NULL;
	pid_t pid;
	size_t n = 0;
	int err;

	if (cg_path_join(path, sizeof(path), cg, "cgroup.procs") || read_text_file(path, &text, NULL))
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

static bool on_cgroupfs(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 &&
	       (sf.f_type == CGROUP_SUPER_MAGIC || sf.f_type == CGROUP2_SUPER_MAGIC);
}

static int cgroupfs_find_hierarchy(struct cg_hierarchy *h, const char *root, char *why, size_t whylen)
{
	int ret = find_mount(h, root);

	if (ret == -EOPNOTSUPP) {
		set_why(why, whylen, "no memory controller mounted under %s", root);
	} else if (ret == -ENOENT && on_cgroupfs(root)) {
		set_why(why, whylen, "%s is inside a cgroup hierarchy, not where hierarchies are mounted", root);
		ret = -EINVAL;
	} else if (ret == -ENOENT) {
		set_why(why, whylen, "cgroup root %s is not a cgroup filesystem (cgroup2 or cgroup v1 memory): "
			"none is mounted at it or directly below it", root);
		ret = -EOPNOTSUPP;
	} else if (ret) {
		set_why(why, whylen, "cannot read /proc/self/mountinfo: %s", strerror(-ret));
	}
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

static int cgroupfs_make_cgroup(const char *parent, const char *dir)
{
	(void)parent;   /* the kernel fills dir in itself */
	return mkdir(dir, 0755) ? -errno : 0;
}

static int cgroupfs_remove_cgroup(const char *dir)
{
	return rmdir(dir) ? -errno : 0;
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

int cg_find_hierarchy(struct cg_hierarchy *h, const char *root_opt, char *why, size_t whylen)
{
	char *root;
	int ret;

	/* Whoever can change a symlink could point peakbpf's writes elsewhere. */
	if (is_symlink(root_opt)) {
		set_why(why, whylen, "cgroup root %s is a symbolic link: name the directory itself", root_opt);
		return -ELOOP;
	}
	root = realpath(root_opt, NULL);
	if (!root) {
		ret = -errno;
		set_why(why, whylen, "cgroup root %s: %s", root_opt, strerror(errno));
		return ret;
	}
	h->ops = fs_ops;
	ret = h->ops->find_hierarchy(h, root, why, whylen);
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

/* ---- command mode: a cgroup of our own ----------------------------------- */

/*
 * v2 creates a child's memory files only when the parent has memory in
 * cgroup.subtree_control, and refuses that in a cgroup that has processes
 * of its own (the no-internal-process rule; the root cgroup is exempt).
 * peakbpf itself is in its own cgroup, so outside the root cgroup this
 * usually fails; we say why rather than move peakbpf or the command
 * elsewhere, which would change the limits they run under.
 */
static int v2_enable_memory(const struct cg_hierarchy *h, const char *home, char *why, size_t whylen)
{
	char path[PATH_MAX], *text = NULL;
	bool is_root = !strcmp(home, h->root);
	int ret;

	ret = cg_v2_has_memory(home);
	if (ret == -EOPNOTSUPP)
		set_why(why, whylen, "the memory controller is not available in %s", home);
	else if (ret)
		set_why(why, whylen, "cannot read %s/cgroup.controllers: %s", home, strerror(-ret));
	if (ret)
		return ret;
	ret = cg_path_join(path, sizeof(path), home, "cgroup.subtree_control");
	if (!ret)
		ret = read_text_file(path, &text, NULL);
	if (ret) {
		set_why(why, whylen, "cannot read %s: %s", path, strerror(-ret));
		goto cleanup;
	}
	if (list_has(text, " \n", "memory") || list_has(text, " \n", "+memory"))
		goto cleanup;
	/* Check the rule ourselves first: a test fixture cannot refuse.
	 * O_APPEND keeps a fixture's other entries; the kernel ignores it. */
	if (!is_root && has_procs(home))
		ret = -EBUSY;
	else
		ret = cg_write_text(path, "+memory\n", O_APPEND);
	if (ret == -EBUSY)
		set_why(why, whylen,
			"cannot enable the memory controller below %s: it has processes of its own "
			"(cgroup v2 no-internal-process rule)", home);
	else if (ret == -EACCES || ret == -EPERM || ret == -EROFS)
		set_why(why, whylen, "cgroup not writable: %s: %s", path, strerror(-ret));
	else if (ret)
		set_why(why, whylen, "cannot enable the memory controller in %s: %s", home, strerror(-ret));
cleanup:
	free(text);
	return ret;
}

/* A "peakbpf-<pid>" name: the pid, else 0. */
static pid_t child_name_pid(const char *name)
{
	unsigned long long v;
	const char *digits;
	char *end;

	if (strncmp(name, CHILD_PREFIX, strlen(CHILD_PREFIX)))
		return 0;
	digits = name + strlen(CHILD_PREFIX);
	if (*digits < '1' || *digits > '9')
		return 0;
	errno = 0;
	v = strtoull(digits, &end, 10);
	if (errno || *end || v > INT_MAX)
		return 0;
	return (pid_t)v;
}

static bool pid_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* Leftovers of a peakbpf killed by SIGKILL: cgroups named after a pid that
 * no longer exists, and empty (a still-running leftover tree is kept).
 * The pid is looked up in our pid namespace; a peakbpf in another one that
 * shares this cgroup could lose an empty cgroup it has just made, and then
 * fails to add its command, which is loud, not wrong. */
static void remove_stale(const struct cg_hierarchy *h, const char *home)
{
	char path[PATH_MAX];
	DIR *d = opendir(home);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		pid_t pid = child_name_pid(de->d_name);

		if (!pid || pid_alive(pid))
			continue;
		if (cg_path_join(path, sizeof(path), home, de->d_name) || !cg_is_dir(path) || has_procs(path))
			continue;
		h->ops->remove_cgroup(path);
	}
	closedir(d);
}

int cg_make_own(const struct cg_hierarchy *h, const char *home, char *dir, size_t len,
		char *why, size_t whylen)
{
	char name[32], path[PATH_MAX];
	int ret;

	if (h->version == CG_V2) {
		ret = v2_enable_memory(h, home, why, whylen);
		if (ret)
			return ret;
	}
	remove_stale(h, home);
	snprintf(name, sizeof(name), CHILD_PREFIX "%d", (int)getpid());
	if (cg_path_join(dir, len, home, name))
		return -ENAMETOOLONG;
	ret = h->ops->make_cgroup(home, dir);
	/* Left by an earlier process that had our pid: reuse the name if empty. */
	if (ret == -EEXIST && !has_procs(dir) && h->ops->remove_cgroup(dir) == 0)
		ret = h->ops->make_cgroup(home, dir);
	if (ret == -EACCES || ret == -EPERM || ret == -EROFS) {
		set_why(why, whylen, "cgroup not writable: %s: %s", home, strerror(-ret));
		return ret;
	}
	if (ret) {
		set_why(why, whylen, "cannot create cgroup %s: %s", dir, strerror(-ret));
		return ret;
	}
	ret = cg_path_join(path, sizeof(path), dir, cg_peak_file(h));
	if (!ret && !cg_is_file(path)) {
		set_why(why, whylen, h->version == CG_V2 ? "no memory.peak in %s (kernel before 5.19)"
			: "no memory.max_usage_in_bytes in %s", dir);
		ret = -EOPNOTSUPP;
	}
	if (ret)        /* made, but of no use: nothing is left behind */
		cg_remove_own(h, home, dir);
	return ret;
}

/* Move every process of dir back home; they may fork meanwhile, so
 * read cgroup.procs again until it is empty. */
static void evacuate(const struct cg_hierarchy *h, const char *home, const char *dir)
{
	char procs[PATH_MAX], home_procs[PATH_MAX];

	if (cg_path_join(procs, sizeof(procs), dir, "cgroup.procs") ||
	    cg_path_join(home_procs, sizeof(home_procs), home, "cgroup.procs"))
		return;
	for (int pass = 0; pass < EVACUATE_PASSES; pass++) {
		char *text = NULL;
		pid_t *pids = NULL;
		size_t n = 0, max;
		bool moved = false;

		if (read_text_file(procs, &text, NULL))
			return;
		max = strlen(text) / 2 + 1;
		pids = calloc(max, sizeof(*pids));
		if (pids && parse_pid_words(text, pids, max, &n) == 0) {
			for (size_t i = 0; i < n; i++) {
				char line[32];

				snprintf(line, sizeof(line), "%d\n", (int)pids[i]);
				/* ESRCH: it exited meanwhile, which is as good. */
				if (cg_write_text(home_procs, line, O_APPEND) == 0)
					moved = true;
			}
		}
		free(pids);
		free(text);
		if (h->ops->procs_moved)
			h->ops->procs_moved(dir);
		if (!n || !moved)
			return;
	}
}

void cg_remove_own(const struct cg_hierarchy *h, const char *home, const char *dir)
{
	struct timespec wait = { 0, RMDIR_WAIT_NS };
	int err = 0;

	for (int i = 0; i < RMDIR_TRIES; i++) {
		evacuate(h, home, dir);
		err = h->ops->remove_cgroup(dir);
		if (err != -EBUSY)
			break;
		nanosleep(&wait, NULL);
	}
	/* A cgroup left behind would outlive us: say so, once. */
	if (err && err != -ENOENT)
		fprintf(stderr, "peakbpf: warning: cannot remove cgroup %s: %s\n", dir, strerror(-err));
}
