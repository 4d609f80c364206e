// SPDX-License-Identifier: MIT
/*
 * Command mode's cgroup (see cgroup_fs.h): peakbpf makes a cgroup of its own
 * for the command, marked with its creator (start time and PID namespace),
 * empties and removes it at the end, and removes those a killed peakbpf
 * left. Every operation is relative to directory fds held open from the
 * checked cgroup root (cgroup_fs.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include "cgroup_fs.h"
#include "cgroup_fs_ops.h"
#include "cgroup_parse.h"
#include "fileutil.h"
#include "sources.h"

/* The inode of the initial PID namespace (PROC_PID_INIT_INO in the
 * kernel's include/linux/proc_ns.h, fixed since 3.8). */
#define INIT_PIDNS_INO 0xEFFFFFFCULL
/* Passes over cgroup.procs when emptying a cgroup whose processes fork. */
#define EVACUATE_PASSES 50
/* rmdir can see EBUSY briefly while an exiting task leaves the cgroup. */
#define RMDIR_TRIES 100
#define RMDIR_WAIT_NS 10000000L

/*
 * v2 creates a child's memory files only when the parent has memory in
 * cgroup.subtree_control, and refuses that in a cgroup that has processes
 * of its own (the no-internal-process rule; the root cgroup is exempt).
 * peakbpf itself is in its own cgroup, so outside the root cgroup this
 * usually fails; we say why rather than move peakbpf or the command
 * elsewhere, which would change the limits they run under.
 */
static int v2_enable_memory(const struct cg_hierarchy *h, const char *home, int home_fd,
			    char *why, size_t whylen)
{
	bool is_root = !strcmp(home, h->root);
	char *text = NULL;
	int ret;

	ret = cg_v2_has_memory_at(home_fd);
	if (ret == -EOPNOTSUPP)
		set_why(why, whylen, "the memory controller is not available in %s", home);
	else if (ret)
		set_why(why, whylen, "cannot read %s/cgroup.controllers: %s", home, strerror(-ret));
	if (ret)
		return ret;
	ret = read_text_at(home_fd, "cgroup.subtree_control", &text, NULL);
	if (ret) {
		set_why(why, whylen, "cannot read %s/cgroup.subtree_control: %s", home, strerror(-ret));
		goto cleanup;
	}
	if (list_has(text, " \n", "memory") || list_has(text, " \n", "+memory"))
		goto cleanup;
	/* Check the rule ourselves first: a test fixture cannot refuse.
	 * O_APPEND keeps a fixture's other entries; the kernel ignores it. */
	if (!is_root && cg_has_procs_at(home_fd))
		ret = -EBUSY;
	else
		ret = cg_write_text_at(home_fd, "cgroup.subtree_control", "+memory\n", O_APPEND);
	if (ret == -EBUSY)
		set_why(why, whylen,
			"cannot enable the memory controller below %s: it has processes of its own "
			"(cgroup v2 no-internal-process rule)", home);
	else if (ret == -EACCES || ret == -EPERM || ret == -EROFS)
		set_why(why, whylen, "cgroup not writable: %s/cgroup.subtree_control: %s", home, strerror(-ret));
	else if (ret)
		set_why(why, whylen, "cannot enable the memory controller in %s: %s", home, strerror(-ret));
cleanup:
	free(text);
	return ret;
}

/* The start time of /proc/<pid> ("self" for pid 0): 0, -ENOENT when there
 * is no such process, or another error. */
static int start_time(const char *proc, int pid, unsigned long long *start)
{
	char path[64], *text = NULL;
	int ret;

	if (pid)
		snprintf(path, sizeof(path), "%s/%d/stat", proc, pid);
	else
		snprintf(path, sizeof(path), "%s/self/stat", proc);
	ret = read_text_file(path, &text, NULL);
	if (!ret)
		ret = parse_stat_start_time(text, start);
	free(text);
	return ret;
}

/* The inode of the PID namespace of /proc/<name>/ns/pid. */
static int pidns_of(const char *name, unsigned long long *ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/ns/pid", name);
	if (stat(path, &st))
		return -errno;
	*ino = (unsigned long long)st.st_ino;
	return 0;
}

int cg_marker_self(struct cg_marker *m)
{
	int ret;

	m->pid = (int)getpid();
	ret = start_time("/proc", 0, &m->start);
	if (!ret)
		ret = pidns_of("self", &m->pidns);
	return ret;
}

/* Whether /proc shows our PID namespace: /proc/self is our pid there. A
 * /proc mounted for another namespace (unshare -p without --mount-proc)
 * numbers processes differently, and a lookup in it proves nothing. */
static bool proc_is_ours(void)
{
	char buf[32], want[32];
	ssize_t n = readlink("/proc/self", buf, sizeof(buf) - 1);

	if (n <= 0)
		return false;
	buf[n] = '\0';
	snprintf(want, sizeof(want), "%d", (int)getpid());
	return !strcmp(buf, want);
}

/* From the initial PID namespace, which sees every process: whether any
 * process is in the namespace ino. Unreadable (/proc, or a process's
 * namespace without the right to see it): taken to be. */
static bool pidns_has_processes(unsigned long long ino)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool found = false;

	if (!d)
		return true;
	while (!found && (de = readdir(d))) {
		unsigned long long other;
		int err;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		err = pidns_of(de->d_name, &other);
		/* A process that exits meanwhile has nothing more to say. */
		found = err ? err != -ENOENT && err != -ESRCH : other == ino;
	}
	closedir(d);
	return found;
}

bool cg_marker_creator_gone(const struct cg_marker *m)
{
	struct cg_marker self;
	unsigned long long start;
	int err;

	if (cg_marker_self(&self) || !proc_is_ours())
		return false;
	if (m->pidns != self.pidns) {
		/* Another namespace's pids mean nothing here. Only the initial
		 * namespace sees all processes: one that finds none in that
		 * namespace knows its processes, the creator too, are gone. */
		return self.pidns == INIT_PIDNS_INO && !pidns_has_processes(m->pidns);
	}
	err = start_time("/proc", m->pid, &start);
	if (err == -ENOENT || err == -ESRCH)
		return true;
	/* The pid is taken: by the creator, or by a process started later. */
	return err == 0 && start != m->start;
}

/* Whether name in home_fd is the directory dir_fd is open on: a cgroup
 * renamed since is not removed under its old name. */
static bool same_dir(int home_fd, const char *name, int dir_fd)
{
	struct stat a, b;

	return fstatat(home_fd, name, &a, AT_SYMLINK_NOFOLLOW) == 0 && fstat(dir_fd, &b) == 0 &&
	       S_ISDIR(a.st_mode) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Leftovers of a peakbpf killed by SIGKILL: cgroups whose marker names a
 * creator that is gone, and empty (a still-running leftover tree is kept). */
void cg_remove_stale(const struct cg_hierarchy *h, int home_fd)
{
	int fd = openat(home_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct cg_marker m;
		int child;

		if (cg_marker_parse(de->d_name, &m) || !cg_marker_creator_gone(&m))
			continue;
		child = openat(home_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (child < 0)
			continue;
		if (!cg_has_procs_at(child) && same_dir(home_fd, de->d_name, child))
			h->ops->remove_cgroup(home_fd, de->d_name);
		close(child);
	}
	closedir(d);
}

int cg_make_own(const struct cg_hierarchy *h, const char *home, struct cg_own *own, char *dir,
		size_t len, char *why, size_t whylen)
{
	struct cg_marker self;
	int ret;

	own->dir_fd = -1;
	if (h->version == CG_V2) {
		ret = v2_enable_memory(h, home, own->home_fd, why, whylen);
		if (ret)
			return ret;
	}
	cg_remove_stale(h, own->home_fd);
	ret = cg_marker_self(&self);
	if (ret) {
		set_why(why, whylen, "cannot read this process's start time and PID namespace in /proc: %s",
			strerror(-ret));
		return ret;
	}
	if (cg_marker_format(&self, own->name, sizeof(own->name)) ||
	    cg_path_join(dir, len, home, own->name))
		return -ENAMETOOLONG;
	ret = h->ops->make_cgroup(own->home_fd, own->name);
	/* Ours already (an earlier open in this process): reuse it if empty. */
	if (ret == -EEXIST) {
		int old = openat(own->home_fd, own->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (old >= 0 && !cg_has_procs_at(old) && h->ops->remove_cgroup(own->home_fd, own->name) == 0)
			ret = h->ops->make_cgroup(own->home_fd, own->name);
		if (old >= 0)
			close(old);
	}
	if (ret == -EACCES || ret == -EPERM || ret == -EROFS) {
		set_why(why, whylen, "cgroup not writable: %s: %s", home, strerror(-ret));
		return ret;
	}
	if (ret) {
		set_why(why, whylen, "cannot create cgroup %s: %s", dir, strerror(-ret));
		return ret;
	}
	own->dir_fd = openat(own->home_fd, own->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (own->dir_fd < 0) {
		ret = -errno;
		set_why(why, whylen, "cannot open cgroup %s: %s", dir, strerror(-ret));
		h->ops->remove_cgroup(own->home_fd, own->name);
		return ret;
	}
	if (!cg_is_file_at(own->dir_fd, cg_peak_file(h))) {
		set_why(why, whylen, h->version == CG_V2 ? "no memory.peak in %s (kernel before 5.19)"
			: "no memory.max_usage_in_bytes in %s", dir);
		ret = -EOPNOTSUPP;
		cg_remove_own(h, own, dir);     /* made, but of no use: nothing is left behind */
	}
	return ret;
}

/* Move every process of the cgroup back home; they may fork meanwhile, so
 * read cgroup.procs again until it is empty. */
static void evacuate(const struct cg_hierarchy *h, const struct cg_own *own)
{
	for (int pass = 0; pass < EVACUATE_PASSES; pass++) {
		char *text = NULL;
		pid_t *pids = NULL;
		size_t n = 0, max;
		bool moved = false;

		if (read_text_at(own->dir_fd, "cgroup.procs", &text, NULL))
			return;
		max = strlen(text) / 2 + 1;
		pids = calloc(max, sizeof(*pids));
		if (pids && parse_pid_words(text, pids, max, &n) == 0) {
			for (size_t i = 0; i < n; i++) {
				char line[32];

				snprintf(line, sizeof(line), "%d\n", (int)pids[i]);
				/* ESRCH: it exited meanwhile, which is as good. */
				if (cg_write_text_at(own->home_fd, "cgroup.procs", line, O_APPEND) == 0)
					moved = true;
			}
		}
		free(pids);
		free(text);
		if (h->ops->procs_moved)
			h->ops->procs_moved(own->dir_fd);
		if (!n || !moved)
			return;
	}
}

void cg_remove_own(const struct cg_hierarchy *h, struct cg_own *own, const char *dir)
{
	struct timespec wait = { 0, RMDIR_WAIT_NS };
	int err = 0;

	if (own->dir_fd < 0)
		return;
	for (int i = 0; i < RMDIR_TRIES; i++) {
		evacuate(h, own);
		/* Removed by name: only while the name is still the cgroup
		 * we made (a delegated owner of home could rename it). */
		err = same_dir(own->home_fd, own->name, own->dir_fd) ?
		      h->ops->remove_cgroup(own->home_fd, own->name) : -ENOENT;
		if (err != -EBUSY)
			break;
		nanosleep(&wait, NULL);
	}
	close(own->dir_fd);
	own->dir_fd = -1;
	/* A cgroup left behind would outlive us: say so, once. */
	if (err && err != -ENOENT)
		fprintf(stderr, "peakbpf: warning: cannot remove cgroup %s: %s\n", dir, strerror(-err));
}
