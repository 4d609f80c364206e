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
 * Command mode: the command goes into a fresh cgroup below
 * peakbpf's own one (below, not beside, so that limits set on peakbpf's
 * cgroup still apply to the command), and the cgroup is removed at destroy.
 * When that cannot be made, the command stays in peakbpf's own cgroup and
 * the figure is that shared cgroup's (exclusive: false). Its name,
 * peakbpf-<pid>-<start time>-<PID namespace inode>, lets a later run tell
 * a killed peakbpf's leftover from a live one's (cgroup_fs.c).
 * Attach mode: the figure is that of the cgroup the first root is in,
 * shared with whatever else runs there.
 *
 * The hierarchy is found under the cgroup root (option, $PEAKBPF_CGROUP_ROOT
 * or /sys/fs/cgroup), and the command's cgroup made and removed, by
 * cgroup_fs.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/sched.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include "cgroup_fs.h"
#include "fileutil.h"
#include "sources.h"

static const char SCOPE_OWN[] = "cgroup: the tree's own cgroup, including page cache and kernel memory";
static const char SCOPE_SHARED[] = "cgroup shared with other processes, including page cache and kernel memory";
/* Why a shared cgroup's figure is never the headline (session.c). */
static const char NOT_TREE_SHARED[] = "not comparable: the cgroup holds other processes too";
static const char NOT_TREE_ALL_TIME[] =
	"not comparable: the cgroup holds other processes too, and its peak is all-time (from before the run)";
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

struct cgroup_source {
	struct source base;
	struct cg_hierarchy h;
	bool command_mode;
	bool own;               /* dir is a cgroup of the tree's own (exclusive),
				   made at open: remove it at destroy */
	struct cg_own fds;      /* home, and dir when own */
	int shared_fd;          /* not own: dir, open; -1 until known */
	char home[PATH_MAX];    /* peakbpf's own cgroup: leftovers go back here */
	char dir[PATH_MAX];     /* the cgroup whose figure is reported */
	bool have_dir;          /* not own: dir is the shared cgroup, known */
	int peak_fd;            /* v2: memory.peak, open for the whole run */
	bool fd_reset;          /* v2: a write to peak_fd resets it (6.12+) */
	bool started;
	unsigned long windows;  /* windows closed so far */
	bool baseline_known;
	uint64_t baseline;
	char reason[PATH_MAX + 128]; /* why there is no figure */
	const char *entry;      /* own: how the command came in (figure's cgroup_entry) */
};

/* The figure of a cgroup we do not own: dir (open as *fd, which becomes
 * the source's) is it, if it keeps a peak. */
static int shared_cgroup(struct cgroup_source *c, const char *dir, int *fd)
{
	if (cg_path_join(c->dir, sizeof(c->dir), dir, "/"))
		return -ENAMETOOLONG;
	if (!cg_is_file_at(*fd, cg_peak_file(&c->h)))
		return -EOPNOTSUPP;
	c->shared_fd = *fd;
	*fd = -1;
	c->have_dir = true;
	return 0;
}

/* The directory of the cgroup whose figure is reported. */
static int dir_fd(const struct cgroup_source *c)
{
	return c->own ? c->fds.dir_fd : c->shared_fd;
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

/* Whether pid is in the tree's own cgroup already (cgroup_command_fork
 * put it there). An unreadable list counts as not. */
static bool own_has_pid(const struct cgroup_source *c, pid_t pid)
{
	pid_t pids[64];
	char *text = NULL;
	size_t n = 0;
	bool found = false;

	if (read_text_at(c->fds.dir_fd, "cgroup.procs", &text, NULL))
		return false;
	if (parse_pid_words(text, pids, sizeof(pids) / sizeof(pids[0]), &n) == 0)
		for (size_t i = 0; i < n && !found; i++)
			found = pids[i] == pid;
	free(text);
	return found;
}

static int cgroup_add_root(struct source *s, pid_t pid)
{
	struct cgroup_source *c = (struct cgroup_source *)s;
	char line[32], path[PATH_MAX], rel[PATH_MAX];
	int err, fd;

	if (c->own) {
		if (c->command_mode && own_has_pid(c, pid))
			return 0;
		c->entry = "moved";
		snprintf(line, sizeof(line), "%d\n", (int)pid);
		/* O_APPEND: a fixture keeps every pid written; the kernel ignores it. */
		return cg_write_text_at(c->fds.dir_fd, "cgroup.procs", line, O_APPEND);
	}
	/* Attach mode: the first root's cgroup; later roots are taken to share
	 * it (the figure is of one cgroup). Command mode without a cgroup of
	 * its own: the command was forked in peakbpf's, dir already. */
	if (c->have_dir)
		return 0;
	err = cg_proc_cgroup_rel(&c->h, pid, rel, sizeof(rel));
	if (err == -ENOENT && kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	if (err) {
		snprintf(c->reason, sizeof(c->reason), "cannot find the cgroup of process %d: %s",
			 (int)pid, strerror(-err));
		return err;
	}
	if (cg_path_join(path, sizeof(path), c->h.root, rel))
		return -ENAMETOOLONG;
	fd = cg_open_dir(&c->h, rel);
	if (fd < 0) {
		snprintf(c->reason, sizeof(c->reason), "cannot open cgroup %s: %s", path, strerror(-fd));
		return fd;
	}
	err = shared_cgroup(c, path, &fd);
	if (fd >= 0)
		close(fd);
	if (err == -EOPNOTSUPP && !strcmp(rel, "/") && c->h.version == CG_V2)
		snprintf(c->reason, sizeof(c->reason),
			 "process %d is in the root cgroup, which keeps no memory.peak", (int)pid);
	else if (err)
		snprintf(c->reason, sizeof(c->reason), "no %s in %s", cg_peak_file(&c->h), path);
	return err;
}

/* The usage now: the next window's baseline. */
static void read_baseline(struct cgroup_source *c)
{
	c->baseline_known = cg_read_u64_at(dir_fd(c), cg_usage_file(&c->h), &c->baseline) == 0;
}

/* Open the next window: reset the peak where that disturbs nobody. */
static int reset_peak(struct cgroup_source *c)
{
	int err = 0;

	if (c->h.version == CG_V2 && c->fd_reset) {
		/* Any non-empty string; the seek is for a test fixture's
		 * plain file, cgroupfs ignores it. */
		ssize_t n = -1;

		if (lseek(c->peak_fd, 0, SEEK_SET) == 0)
			n = write(c->peak_fd, "reset\n", 6);
		if (n < 0)
			err = -errno;
		else if (n != 6)
			err = -EIO;
	} else if (c->h.version == CG_V1 && c->own) {
		err = cg_write_text_at(c->fds.dir_fd, "memory.max_usage_in_bytes", "0\n", O_TRUNC);
	}
	read_baseline(c);
	return err;
}

static int cgroup_start(struct source *s)
{
	struct cgroup_source *c = (struct cgroup_source *)s;
	int err;

	if (!c->own && !c->have_dir)
		return -ENOENT;         /* no root was entered */
	if (c->h.version == CG_V2) {
		/* Before 6.12 memory.peak has no write handler: opening it for
		 * writing fails (EACCES, even for root). No symlink followed,
		 * as in cg_write_text. */
		c->peak_fd = openat(dir_fd(c), "memory.peak", O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		if (c->peak_fd >= 0) {
			c->fd_reset = true;
			if (reset_peak(c)) {
				close(c->peak_fd);
				c->peak_fd = -1;
				c->fd_reset = false;
			}
		}
		if (c->peak_fd < 0) {
			c->peak_fd = openat(dir_fd(c), "memory.peak", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
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
		if (c->h.version == CG_V2 && !c->fd_reset && c->windows > 0)
			return WHY_OWN_SINCE_CREATED;
		return WHY_OWN;
	}
	if (c->h.version == CG_V1)
		return WHY_SHARED_V1_ALL_TIME;
	return c->fd_reset ? WHY_SHARED : WHY_SHARED_V2_ALL_TIME;
}

static int cgroup_close_window(struct source *s, struct figure *out)
{
	struct cgroup_source *c = (struct cgroup_source *)s;
	uint64_t peak;
	int err;

	memset(out, 0, sizeof(*out));
	out->source = c->h.version == CG_V2 ? "cgroup-v2" : "cgroup-v1";
	out->exclusive = c->own;
	out->scope = c->own ? SCOPE_OWN : SCOPE_SHARED;
	if (!c->own)
		out->not_tree = c->fd_reset && c->h.version == CG_V2 ? NOT_TREE_SHARED : NOT_TREE_ALL_TIME;
	copy_path_tail(out->cgroup_path, sizeof(out->cgroup_path), c->dir);
	out->cgroup_entry = c->own ? c->entry : NULL;
	if (!c->started) {
		out->inexact_reason = c->reason[0] ? c->reason : "the cgroup source was not started";
		return 0;
	}
	if (c->h.version == CG_V2)
		err = cg_read_u64_fd(c->peak_fd, &peak);
	else
		err = cg_read_u64_at(dir_fd(c), "memory.max_usage_in_bytes", &peak);
	if (err) {
		snprintf(c->reason, sizeof(c->reason), "cannot read %s of %s: %s", cg_peak_file(&c->h), c->dir,
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
	if (c->own)
		cg_remove_own(&c->h, &c->fds, c->dir);
	if (c->fds.home_fd >= 0)
		close(c->fds.home_fd);
	if (c->shared_fd >= 0)
		close(c->shared_fd);
	cg_hierarchy_close(&c->h);
	free(c);
}

/*
 * Moving a process into a cgroup from outside write-locks the kernel's
 * cgroup_threadgroup_rwsem, whose first write lock in a while waits for
 * an RCU grace period: 10-30 ms on this machine, most of a short run
 * through the helper (docs/performance.md, "Through a running helper").
 * Two ways take no such lock: on cgroup v2, clone3 with CLONE_INTO_CGROUP
 * (5.7) makes the child there; on v1, a single-threaded child moves its
 * one thread itself, writing 0 to the cgroup's tasks file (v2 moves a
 * lone thread only inside a threaded subtree).
 */

/* v2. glibc has no clone3 wrapper: its fork() resets what a child of a
 * process with threads needs, so the raw call is made only in a process
 * without threads, and the child knows nothing else is wrong but its
 * cached thread id (raise(3) would fail in it: peakbpf.h says so).
 * -1 with errno: ENOSYS, E2BIG or EINVAL before 5.7, and the caller forks. */
static pid_t clone_into(int dir_fd)
{
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.cgroup = (__u64)dir_fd,
	};

	if (!__libc_single_threaded) {
		errno = EDEADLK;
		return -1;
	}
	return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

/* v1: fork, and return once the child has written 0 to tasks (it closes
 * its end of done after: EOF here). Its write failing leaves it where it
 * was, and the add moves it then. */
static pid_t fork_and_join(int dir_fd)
{
	int tasks = openat(dir_fd, "tasks", O_WRONLY | O_CLOEXEC | O_NOFOLLOW), done[2], e;
	pid_t pid;
	char b;

	if (tasks < 0)
		return fork();
	if (pipe2(done, O_CLOEXEC)) {
		close(tasks);
		return fork();
	}
	pid = fork();
	if (pid == 0) {
		ssize_t n = write(tasks, "0", 1);

		(void)n;
		close(tasks);
		close(done[0]);
		close(done[1]);
		return 0;
	}
	e = errno;
	close(tasks);
	close(done[1]);
	if (pid > 0) {
		/* EOF: the child is past its write, or gone. */
		ssize_t n = read(done[0], &b, 1);

		(void)n;
	}
	close(done[0]);
	errno = e;
	return pid;
}

static pid_t cgroup_command_fork(struct source *s)
{
	struct cgroup_source *c = (struct cgroup_source *)s;
	pid_t pid;

	if (!c->own || !c->command_mode)
		return fork();
	if (c->h.version == CG_V1) {
		c->entry = "self";      /* unless the add finds it was not */
		return fork_and_join(c->fds.dir_fd);
	}
	pid = clone_into(c->fds.dir_fd);
	if (pid != 0)
		c->entry = pid > 0 ? "clone3" : NULL;
	return pid >= 0 ? pid : fork();
}

static const struct source_ops cgroup_ops;

bool cgroup_source_is_exclusive(const struct source *s)
{
	return s && s->ops == &cgroup_ops && ((const struct cgroup_source *)s)->own;
}

int cgroup_source_own_dir_fd(const struct source *s)
{
	return cgroup_source_is_exclusive(s) ? ((const struct cgroup_source *)s)->fds.dir_fd : -1;
}

static const struct source_ops cgroup_ops = {
	.add_root = cgroup_add_root,
	.start = cgroup_start,
	.close_window = cgroup_close_window,
	.command_exited = NULL,
	.destroy = cgroup_destroy,
	.command_fork = cgroup_command_fork,
	.tree_cgroup_fd = cgroup_source_own_dir_fd,
};

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
	c->fds.home_fd = c->fds.dir_fd = c->shared_fd = c->h.root_fd = -1;
	c->command_mode = o->command_mode;
	if (o->self_cgroup) {
		if (o->self_cgroup[0] != '/' || strlen(o->self_cgroup) >= sizeof(c->h.self_rel)) {
			set_why(why, whylen, "bad own cgroup path %s", o->self_cgroup);
			ret = -EINVAL;
			goto cleanup;
		}
		strcpy(c->h.self_rel, o->self_cgroup);
	}
	if (!root)
		/* NULL in glibc's secure mode (a binary given capabilities):
		 * the environment is then the caller's, not to be trusted. */
		root = secure_getenv(CGROUP_ROOT_ENV);
	if (!root || !*root)
		root = CGROUP_ROOT_DEFAULT;
	ret = cg_find_hierarchy(&c->h, root, why, whylen);
	if (ret)
		goto cleanup;
	if (!c->command_mode) {
		ret = 0;        /* the cgroup is the first root's: add_root finds it */
		goto cleanup;
	}
	ret = cg_proc_cgroup_rel(&c->h, 0, rel, sizeof(rel));
	if (ret) {
		set_why(why, whylen, "cannot find peakbpf's own cgroup in %s: %s", c->h.root, strerror(-ret));
		goto cleanup;
	}
	if (cg_path_join(c->home, sizeof(c->home), c->h.root, rel)) {
		ret = -ENAMETOOLONG;
		set_why(why, whylen, "cgroup path too long");
		goto cleanup;
	}
	c->fds.home_fd = cg_open_dir(&c->h, rel);
	if (c->fds.home_fd < 0) {
		ret = c->fds.home_fd;
		if (ret == -ENOENT || ret == -ENOTDIR || ret == -ELOOP)
			set_why(why, whylen, "peakbpf's own cgroup %s does not exist", c->home);
		else
			set_why(why, whylen, "cannot open peakbpf's own cgroup %s: %s", c->home, strerror(-ret));
		ret = -ENOENT;
		goto cleanup;
	}
	ret = cg_make_own(&c->h, c->home, &c->fds, c->dir, sizeof(c->dir), why, whylen);
	if (!ret) {
		c->own = true;
		goto cleanup;
	}
	/* No cgroup of its own: the command runs in peakbpf's, shared with
	 * peakbpf at least. why keeps the reason. */
	if (shared_cgroup(c, c->home, &c->fds.home_fd) == 0)
		ret = 0;
cleanup:
	if (ret) {
		cgroup_destroy(&c->base);
		return ret;
	}
	*out = &c->base;
	return 0;
}
