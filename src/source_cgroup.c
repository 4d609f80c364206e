// SPDX-License-Identifier: MIT
/*
 * cgroup source: the peak a memory cgroup keeps of its own usage.
 *
 * v2: memory.peak (5.19+). Since 6.12 a write to an open memory.peak fd
 * resets the peak seen through that fd only, so per-window resets disturb
 * nobody, even in a shared cgroup. Before 6.12 the file is read-only and
 * the peak is the one since the cgroup was created.
 * v1: memory.max_usage_in_bytes, reset for everyone by writing "0".
 * Both count page cache and kernel memory charged to the cgroup, so the
 * figure is never the tree's summed RSS: exact is always false.
 *
 * Command mode: the command goes into a fresh cgroup peakbpf-<pid> below
 * peakbpf's own one (below, not beside, so that limits set on peakbpf's
 * cgroup still apply to the command), and the cgroup is removed at destroy.
 * When that cannot be made, the command stays in peakbpf's own cgroup and
 * the figure is that shared cgroup's (exclusive: false).
 * Attach mode: the figure is that of the cgroup the first root is in,
 * shared with whatever else runs there.
 *
 * Finding the hierarchy under the cgroup root (option, $PEAKBPF_CGROUP_ROOT
 * or /sys/fs/cgroup):
 *  1. a mount in /proc/self/mountinfo at the root or directly below it:
 *     cgroup2 whose cgroup.controllers lists memory (preferred), or cgroup
 *     (v1) with the memory option. peakbpf's own cgroup comes from
 *     /proc/self/cgroup, made relative to the mount's root.
 *  2. only when no cgroup file system is mounted there and the root is not
 *     itself inside one: a fixture tree, a plain directory laid out like a
 *     hierarchy: v2 when the root has cgroup.controllers, v1 when it (or
 *     its memory/ subdirectory) has memory.max_usage_in_bytes. No kernel
 *     fills a fixture, so the source plays the kernel's part there: it
 *     creates a new cgroup's interface files (copied from the parent's
 *     names, "0" in each), empties cgroup.procs after moving processes out,
 *     and removes the files before rmdir. Every process is taken to be in
 *     opts.self_cgroup, "/" by default.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include "cgroup_parse.h"
#include "fileutil.h"
#include "sources.h"

#define CHILD_PREFIX "peakbpf-"
/* Passes over cgroup.procs when emptying a cgroup whose processes fork. */
#define EVACUATE_PASSES 50
/* rmdir can see EBUSY briefly while an exiting task leaves the cgroup. */
#define RMDIR_TRIES 100
#define RMDIR_WAIT_NS 10000000L

static const char SCOPE_OWN[] = "cgroup: the tree's own cgroup, including page cache and kernel memory";
static const char SCOPE_SHARED[] = "cgroup shared with other processes, including page cache and kernel memory";
static const char WHY_OWN[] = "a cgroup's usage includes page cache and kernel memory: not the tree's summed RSS";
static const char WHY_OWN_SINCE_CREATED[] =
	"includes page cache and kernel memory; the peak since the cgroup was created "
	"(this kernel cannot reset memory.peak per window: 6.12+ can)";
static const char WHY_SHARED[] =
	"includes page cache, kernel memory and the other processes in the cgroup";
static const char WHY_SHARED_V2_ALL_TIME[] =
	"includes page cache, kernel memory and the other processes in the cgroup; the peak since the cgroup "
	"was created (this kernel cannot reset memory.peak per window: 6.12+ can)";
static const char WHY_SHARED_V1_ALL_TIME[] =
	"includes page cache, kernel memory and the other processes in the cgroup; the all-time "
	"memory.max_usage_in_bytes (a shared cgroup's v1 peak is not reset: others may rely on it)";

enum cg_version { CG_V1 = 1, CG_V2 = 2 };

struct cgroup_source {
	struct source base;
	enum cg_version version;
	bool fixture;           /* a plain directory tree: we play the kernel */
	bool command_mode;
	bool own;               /* dir is a cgroup of the tree's own (exclusive) */
	char self_rel[PATH_MAX]; /* opts.self_cgroup; in a fixture, every process's */
	char root[PATH_MAX];    /* the memory hierarchy's root directory */
	char mount_root[PATH_MAX]; /* the mount's root (mountinfo field 4) */
	char home[PATH_MAX];    /* peakbpf's own cgroup: leftovers go back here */
	char dir[PATH_MAX];     /* the cgroup whose figure is reported */
	bool created;           /* dir is ours: remove it at destroy */
	bool have_dir;          /* not own: dir is the shared cgroup, known */
	int peak_fd;            /* v2: memory.peak, open for the whole run */
	bool fd_reset;          /* v2: a write to peak_fd resets it (6.12+) */
	bool started;
	unsigned long windows;  /* windows closed so far */
	bool baseline_known;
	uint64_t baseline;
	char reason[PATH_MAX + 128]; /* why there is no figure */
};


/* ---- file helpers -------------------------------------------------------- */

/* Write text with one write(): cgroup files act on each write. */
static int write_text(const char *path, const char *text, int flags)
{
	size_t len = strlen(text);
	int fd, ret = 0;
	ssize_t n;

	fd = open(path, O_WRONLY | O_CLOEXEC | flags);
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

static int read_u64(const char *path, uint64_t *v)
{
	char *text = NULL;
	int err = read_text_file(path, &text, NULL);

	if (!err)
		err = parse_counter(text, v);
	free(text);
	return err;
}

/* Read a counter through an open fd, from the start (seq files allow it). */
static int read_u64_fd(int fd, uint64_t *v)
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

static int path_join(char *out, size_t len, const char *dir, const char *name)
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

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Whether a cgroup has processes; an unreadable cgroup.procs counts as
 * having them, so that nothing is removed on a guess. */
static bool has_procs(const char *cg)
{
	char path[PATH_MAX], *text = NULL;
	pid_t pid;
	size_t n = 0;
	int err;

	if (path_join(path, sizeof(path), cg, "cgroup.procs") || read_text_file(path, &text, NULL))
		return true;
	err = parse_pid_words(text, &pid, 1, &n);
	free(text);
	return err != 0 || n > 0;
}

static const char *memory_file(const struct cgroup_source *c)
{
	return c->version == CG_V2 ? "memory.peak" : "memory.max_usage_in_bytes";
}

static const char *usage_file(const struct cgroup_source *c)
{
	return c->version == CG_V2 ? "memory.current" : "memory.usage_in_bytes";
}

/* ---- the fixture's kernel ------------------------------------------------ */

/* Create in a new fixture cgroup the files a kernel would: the parent's
 * names, processes none, controllers as the parent delegates them, each
 * counter "0", each with the parent's file mode. */
static int fixture_populate(const char *parent, const char *dir)
{
	char src[PATH_MAX], dst[PATH_MAX], *delegated = NULL;
	DIR *d = opendir(parent);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return -errno;
	if (path_join(src, sizeof(src), parent, "cgroup.subtree_control") == 0)
		read_text_file(src, &delegated, NULL);
	while ((de = readdir(d))) {
		struct stat st;
		const char *text = "0\n";
		char controllers[256] = "";
		int fd;

		if (path_join(src, sizeof(src), parent, de->d_name) ||
		    path_join(dst, sizeof(dst), dir, de->d_name)) {
			ret = -ENAMETOOLONG;
			goto cleanup;
		}
		if (stat(src, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!strcmp(de->d_name, "cgroup.procs") || !strcmp(de->d_name, "tasks") ||
		    !strcmp(de->d_name, "cgroup.subtree_control")) {
			text = "";
		} else if (!strcmp(de->d_name, "cgroup.controllers")) {
			/* What the parent enabled: "+memory" lines become "memory". */
			const char *p = delegated ? delegated : "";

			while (*p) {
				size_t n;

				p += strspn(p, " \n");
				n = strcspn(p, " \n");
				if (n && *p != '-' && strlen(controllers) + n + 2 < sizeof(controllers)) {
					if (controllers[0])
						strcat(controllers, " ");
					strncat(controllers, p + (*p == '+'), n - (*p == '+'));
				}
				p += n;
			}
			strcat(controllers, "\n");
			text = controllers;
		}
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
static int fixture_rmdir(const char *dir)
{
	char path[PATH_MAX];
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (path_join(path, sizeof(path), dir, de->d_name) == 0 && is_file(path))
			unlink(path);
	}
	closedir(d);
	return rmdir(dir) ? -errno : 0;
}

static int cg_rmdir(const struct cgroup_source *c, const char *dir)
{
	if (c->fixture)
		return fixture_rmdir(dir);
	return rmdir(dir) ? -errno : 0;
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
static int find_mount(struct cgroup_source *c, const char *root)
{
	struct mountinfo_entry *e = malloc(sizeof(*e));
	char *text = NULL, *line, *save = NULL, path[PATH_MAX], *ctl = NULL;
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
			free(ctl);
			ctl = NULL;
			if (path_join(path, sizeof(path), e->mount_point, "cgroup.controllers") ||
			    read_text_file(path, &ctl, NULL) || !list_has(ctl, " \n", "memory"))
				continue;
			c->version = CG_V2;     /* v2 wins over a v1 memory mount */
		} else if (!strcmp(e->fstype, "cgroup") && !found_v1 &&
			   list_has(e->super_options, ",", "memory")) {
			c->version = CG_V1;
			found_v1 = true;
		} else {
			continue;
		}
		snprintf(c->root, sizeof(c->root), "%s", e->mount_point);
		snprintf(c->mount_root, sizeof(c->mount_root), "%s", e->root);
		ret = 0;
		if (c->version == CG_V2)
			break;
	}
cleanup:
	free(ctl);
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

static int find_fixture(struct cgroup_source *c, const char *root, char *why, size_t whylen)
{
	char path[PATH_MAX], *ctl = NULL;
	int ret = 0;

	if (path_join(path, sizeof(path), root, "cgroup.controllers"))
		return -ENAMETOOLONG;
	if (is_file(path)) {
		ret = read_text_file(path, &ctl, NULL);
		if (ret) {
			set_why(why, whylen, "cannot read %s: %s", path, strerror(-ret));
			goto cleanup;
		}
		if (!list_has(ctl, " \n", "memory")) {
			set_why(why, whylen, "no memory controller in the cgroup2 hierarchy at %s", root);
			ret = -EOPNOTSUPP;
			goto cleanup;
		}
		c->version = CG_V2;
		snprintf(c->root, sizeof(c->root), "%s", root);
		goto cleanup;
	}
	c->version = CG_V1;
	if (path_join(path, sizeof(path), root, "memory.max_usage_in_bytes"))
		return -ENAMETOOLONG;
	if (is_file(path)) {
		snprintf(c->root, sizeof(c->root), "%s", root);
		goto cleanup;
	}
	if (path_join(c->root, sizeof(c->root), root, "memory") ||
	    path_join(path, sizeof(path), c->root, "memory.max_usage_in_bytes"))
		return -ENAMETOOLONG;
	if (is_file(path))
		goto cleanup;
	set_why(why, whylen, "no memory controller mounted under %s", root);
	ret = -EOPNOTSUPP;
cleanup:
	free(ctl);
	if (!ret) {
		c->fixture = true;
		strcpy(c->mount_root, "/");
	}
	return ret;
}

static int find_hierarchy(struct cgroup_source *c, const char *root_opt, char *why, size_t whylen)
{
	char *root = realpath(root_opt, NULL);
	int ret;

	if (!root) {
		ret = -errno;
		set_why(why, whylen, "cgroup root %s: %s", root_opt, strerror(errno));
		return ret;
	}
	ret = find_mount(c, root);
	if (ret == -EOPNOTSUPP) {
		set_why(why, whylen, "no memory controller mounted under %s", root);
	} else if (ret == -ENOENT && on_cgroupfs(root)) {
		set_why(why, whylen, "%s is inside a cgroup hierarchy, not where hierarchies are mounted", root);
		ret = -EINVAL;
	} else if (ret == -ENOENT) {
		ret = find_fixture(c, root, why, whylen);
	} else if (ret) {
		set_why(why, whylen, "cannot read /proc/self/mountinfo: %s", strerror(-ret));
	}
	free(root);
	return ret;
}

/* The path of pid's cgroup in the hierarchy, relative to its root. */
static int proc_cgroup_rel(const struct cgroup_source *c, pid_t pid, char *rel, size_t len)
{
	char path[64], *text = NULL, *cg = NULL;
	int ret;

	/* self_cgroup stands for peakbpf's own cgroup, and in a fixture for
	 * every process's. */
	if (c->fixture || (pid == 0 && c->self_rel[0])) {
		if (strlen(c->self_rel[0] ? c->self_rel : "/") >= len)
			return -ENAMETOOLONG;
		strcpy(rel, c->self_rel[0] ? c->self_rel : "/");
		return 0;
	}
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/cgroup");
	cg = malloc(PATH_MAX);
	if (!cg)
		return -ENOMEM;
	ret = read_text_file(path, &text, NULL);
	if (!ret)
		ret = cgroup_path_from_proc(text, c->version == CG_V2, cg, PATH_MAX);
	if (!ret)
		ret = cgroup_rel_path(c->mount_root, cg, rel, len);
	free(text);
	free(cg);
	return ret;
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
static int v2_enable_memory(struct cgroup_source *c, char *why, size_t whylen)
{
	char path[PATH_MAX], *text = NULL;
	bool is_root = !strcmp(c->home, c->root);
	int ret;

	if (path_join(path, sizeof(path), c->home, "cgroup.controllers"))
		return -ENAMETOOLONG;
	ret = read_text_file(path, &text, NULL);
	if (ret) {
		set_why(why, whylen, "cannot read %s: %s", path, strerror(-ret));
		goto cleanup;
	}
	if (!list_has(text, " \n", "memory")) {
		set_why(why, whylen, "the memory controller is not available in %s", c->home);
		ret = -EOPNOTSUPP;
		goto cleanup;
	}
	free(text);
	text = NULL;
	ret = path_join(path, sizeof(path), c->home, "cgroup.subtree_control");
	if (!ret)
		ret = read_text_file(path, &text, NULL);
	if (ret) {
		set_why(why, whylen, "cannot read %s: %s", path, strerror(-ret));
		goto cleanup;
	}
	if (list_has(text, " \n", "memory") || list_has(text, " \n", "+memory"))
		goto cleanup;
	/* A fixture cannot refuse, so check the rule ourselves first.
	 * Appending keeps a fixture's other entries; the kernel ignores it. */
	if (!is_root && has_procs(c->home))
		ret = -EBUSY;
	else
		ret = write_text(path, "+memory\n", O_APPEND);
	if (ret == -EBUSY)
		set_why(why, whylen,
			"cannot enable the memory controller below %s: it has processes of its own "
			"(cgroup v2 no-internal-process rule)", c->home);
	else if (ret == -EACCES || ret == -EPERM || ret == -EROFS)
		set_why(why, whylen, "cgroup not writable: %s: %s", path, strerror(-ret));
	else if (ret)
		set_why(why, whylen, "cannot enable the memory controller in %s: %s", c->home, strerror(-ret));
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
static void remove_stale(const struct cgroup_source *c)
{
	char path[PATH_MAX];
	DIR *d = opendir(c->home);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		pid_t pid = child_name_pid(de->d_name);

		if (!pid || pid_alive(pid))
			continue;
		if (path_join(path, sizeof(path), c->home, de->d_name) || !is_dir(path) || has_procs(path))
			continue;
		cg_rmdir(c, path);
	}
	closedir(d);
}

static int make_own_cgroup(struct cgroup_source *c, char *why, size_t whylen)
{
	char name[32], path[PATH_MAX];
	int ret;

	if (c->version == CG_V2) {
		ret = v2_enable_memory(c, why, whylen);
		if (ret)
			return ret;
	}
	remove_stale(c);
	snprintf(name, sizeof(name), CHILD_PREFIX "%d", (int)getpid());
	if (path_join(c->dir, sizeof(c->dir), c->home, name))
		return -ENAMETOOLONG;
	ret = mkdir(c->dir, 0755) ? -errno : 0;
	/* Left by an earlier process that had our pid: reuse the name if empty. */
	if (ret == -EEXIST && !has_procs(c->dir) && cg_rmdir(c, c->dir) == 0)
		ret = mkdir(c->dir, 0755) ? -errno : 0;
	if (ret == -EACCES || ret == -EPERM || ret == -EROFS) {
		set_why(why, whylen, "cgroup not writable: %s: %s", c->home, strerror(-ret));
		return ret;
	}
	if (ret) {
		set_why(why, whylen, "cannot create cgroup %s: %s", c->dir, strerror(-ret));
		return ret;
	}
	c->created = true;
	if (c->fixture) {
		ret = fixture_populate(c->home, c->dir);
		if (ret) {
			set_why(why, whylen, "cannot fill fixture cgroup %s: %s", c->dir, strerror(-ret));
			return ret;
		}
	}
	if (path_join(path, sizeof(path), c->dir, memory_file(c)))
		return -ENAMETOOLONG;
	if (!is_file(path)) {
		set_why(why, whylen, c->version == CG_V2 ? "no memory.peak in %s (kernel before 5.19)"
			: "no memory.max_usage_in_bytes in %s", c->dir);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Move every process of c->dir back home; they may fork meanwhile, so
 * read cgroup.procs again until it is empty. */
static void evacuate(const struct cgroup_source *c)
{
	char procs[PATH_MAX], home_procs[PATH_MAX];

	if (path_join(procs, sizeof(procs), c->dir, "cgroup.procs") ||
	    path_join(home_procs, sizeof(home_procs), c->home, "cgroup.procs"))
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
				if (write_text(home_procs, line, O_APPEND) == 0)
					moved = true;
			}
		}
		free(pids);
		free(text);
		if (c->fixture)         /* the kernel would have emptied it */
			write_text(procs, "", O_TRUNC);
		if (!n || !moved)
			return;
	}
}

static void remove_own_cgroup(struct cgroup_source *c)
{
	struct timespec wait = { 0, RMDIR_WAIT_NS };
	int err = 0;

	for (int i = 0; i < RMDIR_TRIES; i++) {
		evacuate(c);
		err = cg_rmdir(c, c->dir);
		if (err != -EBUSY)
			break;
		nanosleep(&wait, NULL);
	}
	/* A cgroup left behind would outlive us: say so, once. */
	if (err && err != -ENOENT)
		fprintf(stderr, "peakbpf: warning: cannot remove cgroup %s: %s\n", c->dir, strerror(-err));
	c->created = false;
}

/* The figure of a cgroup we do not own: dir is it, if it keeps a peak. */
static int shared_cgroup(struct cgroup_source *c, const char *dir)
{
	char path[PATH_MAX];

	if (path_join(c->dir, sizeof(c->dir), dir, "/") || path_join(path, sizeof(path), c->dir, memory_file(c)))
		return -ENAMETOOLONG;
	if (!is_file(path))
		return -EOPNOTSUPP;
	c->have_dir = true;
	return 0;
}

/* ---- the source's operations --------------------------------------------- */

/* The figure has room for 255 characters: keep a long path's end, which
 * names the cgroup, behind "...". */
static void copy_path_tail(char *out, size_t len, const char *path)
{
	size_t n = strlen(path);

	if (n < len) {
		memcpy(out, path, n + 1);
		return;
	}
	memcpy(out, "...", 3);
	memcpy(out + 3, path + n - (len - 4), len - 4);
	out[len - 1] = '\0';
}

static int cgroup_add_root(struct source *s, pid_t pid)
{
	struct cgroup_source *c = (struct cgroup_source *)s;
	char line[32], path[PATH_MAX], rel[PATH_MAX];
	int err;

	if (c->own) {
		if (path_join(path, sizeof(path), c->dir, "cgroup.procs"))
			return -ENAMETOOLONG;
		snprintf(line, sizeof(line), "%d\n", (int)pid);
		/* O_APPEND: a fixture keeps every pid written; the kernel ignores it. */
		return write_text(path, line, O_APPEND);
	}
	/* Attach mode: the first root's cgroup; later roots are taken to share
	 * it (the figure is of one cgroup). Command mode without a cgroup of
	 * its own: the command was forked in peakbpf's, dir already. */
	if (c->have_dir)
		return 0;
	err = proc_cgroup_rel(c, pid, rel, sizeof(rel));
	if (err == -ENOENT && kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	if (err) {
		snprintf(c->reason, sizeof(c->reason), "cannot find the cgroup of process %d: %s",
			 (int)pid, strerror(-err));
		return err;
	}
	if (path_join(path, sizeof(path), c->root, rel))
		return -ENAMETOOLONG;
	err = shared_cgroup(c, path);
	if (err == -EOPNOTSUPP && !strcmp(rel, "/") && c->version == CG_V2)
		snprintf(c->reason, sizeof(c->reason),
			 "process %d is in the root cgroup, which keeps no memory.peak", (int)pid);
	else if (err)
		snprintf(c->reason, sizeof(c->reason), "no %s in %s", memory_file(c), path);
	return err;
}

/* The usage now: the next window's baseline. */
static void read_baseline(struct cgroup_source *c)
{
	char path[PATH_MAX];

	c->baseline_known = path_join(path, sizeof(path), c->dir, usage_file(c)) == 0 &&
			    read_u64(path, &c->baseline) == 0;
}

/* Open the next window: reset the peak where that disturbs nobody. */
static int reset_peak(struct cgroup_source *c)
{
	char path[PATH_MAX];
	int err = 0;

	if (c->version == CG_V2 && c->fd_reset) {
		/* Any non-empty string; the seek is for a fixture's file. */
		ssize_t n = -1;

		if (lseek(c->peak_fd, 0, SEEK_SET) == 0)
			n = write(c->peak_fd, "reset\n", 6);
		if (n < 0)
			err = -errno;
		else if (n != 6)
			err = -EIO;
	} else if (c->version == CG_V1 && c->own) {
		if (path_join(path, sizeof(path), c->dir, "memory.max_usage_in_bytes"))
			return -ENAMETOOLONG;
		err = write_text(path, "0\n", O_TRUNC);
	}
	read_baseline(c);
	return err;
}

static int cgroup_start(struct source *s)
{
	struct cgroup_source *c = (struct cgroup_source *)s;
	char path[PATH_MAX];
	int err;

	if (!c->own && !c->have_dir)
		return -ENOENT;         /* no root was entered */
	if (c->version == CG_V2) {
		if (path_join(path, sizeof(path), c->dir, "memory.peak"))
			return -ENAMETOOLONG;
		/* Before 6.12 memory.peak has no write handler: opening it for
		 * writing fails (EACCES, even for root). */
		c->peak_fd = open(path, O_RDWR | O_CLOEXEC);
		if (c->peak_fd >= 0) {
			c->fd_reset = true;
			if (reset_peak(c)) {
				close(c->peak_fd);
				c->peak_fd = -1;
				c->fd_reset = false;
			}
		}
		if (c->peak_fd < 0) {
			c->peak_fd = open(path, O_RDONLY | O_CLOEXEC);
			if (c->peak_fd < 0)
				return -errno;
			read_baseline(c);
		}
	} else {
		err = reset_peak(c);
		if (err)
			return err;
	}
	c->started = true;
	return 0;
}

static const char *inexact_reason(const struct cgroup_source *c)
{
	if (c->own) {
		if (c->version == CG_V2 && !c->fd_reset && c->windows > 0)
			return WHY_OWN_SINCE_CREATED;
		return WHY_OWN;
	}
	if (c->version == CG_V1)
		return WHY_SHARED_V1_ALL_TIME;
	return c->fd_reset ? WHY_SHARED : WHY_SHARED_V2_ALL_TIME;
}

static int cgroup_close_window(struct source *s, struct figure *out)
{
	struct cgroup_source *c = (struct cgroup_source *)s;
	char path[PATH_MAX];
	uint64_t peak;
	int err;

	memset(out, 0, sizeof(*out));
	out->source = c->version == CG_V2 ? "cgroup-v2" : "cgroup-v1";
	out->exclusive = c->own;
	out->scope = c->own ? SCOPE_OWN : SCOPE_SHARED;
	copy_path_tail(out->cgroup_path, sizeof(out->cgroup_path), c->dir);
	if (!c->started) {
		out->inexact_reason = c->reason[0] ? c->reason : "the cgroup source was not started";
		return 0;
	}
	if (c->version == CG_V2)
		err = read_u64_fd(c->peak_fd, &peak);
	else if (path_join(path, sizeof(path), c->dir, "memory.max_usage_in_bytes"))
		err = -ENAMETOOLONG;
	else
		err = read_u64(path, &peak);
	if (err) {
		snprintf(c->reason, sizeof(c->reason), "cannot read %s of %s: %s", memory_file(c), c->dir,
			 strerror(-err));
		out->inexact_reason = c->reason;
	} else {
		out->measured = true;
		out->peak_bytes = peak;
		out->baseline_known = c->baseline_known;
		out->baseline_bytes = c->baseline;
		out->inexact_reason = inexact_reason(c);
	}
	c->windows++;
	/* Between the read above and this reset a new maximum could fall into
	 * neither window; the gap is a few syscalls. */
	reset_peak(c);
	return 0;
}

static void cgroup_destroy(struct source *s)
{
	struct cgroup_source *c = (struct cgroup_source *)s;

	if (!c)
		return;
	if (c->peak_fd >= 0)
		close(c->peak_fd);
	if (c->created)
		remove_own_cgroup(c);
	free(c);
}

static const struct source_ops cgroup_ops = {
	.add_root = cgroup_add_root,
	.start = cgroup_start,
	.close_window = cgroup_close_window,
	.command_exited = NULL,
	.destroy = cgroup_destroy,
};

bool cgroup_source_is_exclusive(const struct source *s)
{
	return s && s->ops == &cgroup_ops && ((const struct cgroup_source *)s)->own;
}

int cgroup_source_open(const struct source_opts *o, struct source **out, char *why, size_t whylen)
{
	static const struct source_opts defaults;
	struct cgroup_source *c = calloc(1, sizeof(*c));
	const char *root;
	char rel[PATH_MAX];
	int ret;

	*out = NULL;
	set_why(why, whylen, "%s", "");
	if (!c) {
		set_why(why, whylen, "out of memory");
		return -ENOMEM;
	}
	if (!o)
		o = &defaults;
	root = o->cgroup_root;
	c->base.ops = &cgroup_ops;
	c->base.name = "cgroup";
	c->peak_fd = -1;
	c->command_mode = o->command_mode;
	if (o->self_cgroup) {
		if (o->self_cgroup[0] != '/' || strlen(o->self_cgroup) >= sizeof(c->self_rel)) {
			set_why(why, whylen, "bad own cgroup path %s", o->self_cgroup);
			ret = -EINVAL;
			goto cleanup;
		}
		strcpy(c->self_rel, o->self_cgroup);
	}
	if (!root)
		root = getenv(CGROUP_ROOT_ENV);
	if (!root || !*root)
		root = CGROUP_ROOT_DEFAULT;
	ret = find_hierarchy(c, root, why, whylen);
	if (ret)
		goto cleanup;
	if (!c->command_mode) {
		ret = 0;        /* the cgroup is the first root's: add_root finds it */
		goto cleanup;
	}
	ret = proc_cgroup_rel(c, 0, rel, sizeof(rel));
	if (ret) {
		set_why(why, whylen, "cannot find peakbpf's own cgroup in %s: %s", c->root, strerror(-ret));
		goto cleanup;
	}
	if (path_join(c->home, sizeof(c->home), c->root, rel)) {
		ret = -ENAMETOOLONG;
		set_why(why, whylen, "cgroup path too long");
		goto cleanup;
	}
	if (!is_dir(c->home)) {
		set_why(why, whylen, "peakbpf's own cgroup %s does not exist", c->home);
		ret = -ENOENT;
		goto cleanup;
	}
	ret = make_own_cgroup(c, why, whylen);
	if (!ret) {
		c->own = true;
		goto cleanup;
	}
	if (c->created)
		remove_own_cgroup(c);
	/* No cgroup of its own: the command runs in peakbpf's, shared with
	 * peakbpf at least. why keeps the reason. */
	if (shared_cgroup(c, c->home) == 0)
		ret = 0;
cleanup:
	if (ret) {
		cgroup_destroy(&c->base);
		return ret;
	}
	*out = &c->base;
	return 0;
}
